"""Many resolutions from one import: the probe is set up and the framework imported once, then a
child is forked per variant (its own arguments and environment) and runs the target exactly as a
single ``flagtrace explain`` would, writing its own trace.

Nothing from one variant reaches another: every child is a fork of a parent that never resolved
(an environment variable one resolution writes, an lru cache, a log-once set all stay in that
child). Each child runs in its own process group, is killed with everything it started at the
variant's timeout, and what it printed goes to its own file.

The request carries ``variants``: ``[{"args": [...], "env": {K: V or None}, "trace_path": P,
"output_path": O, "modules_path": M}]``, ``variant_timeout`` (seconds) and ``preimport`` (modules the parent imports
before forking; the adapter names them). The parent writes one summary at ``trace_path``:
``{"variants": [{"status": ..., "returncode": ..., "seconds": ...}]}``, and a line per finished
variant to ``progress_path`` if given.

With ``rounds_dir``, more variants may follow once those are done (a caller that chooses the next
variants from the last ones' traces, as ``flagtrace fix`` does): the parent waits for
``round-1.json``, ``round-2.json``, ... there (each a list of variants, written whole by rename)
until a file ``done`` appears or the process that started it is gone.

Standard library only, Python >= 3.9.
"""
import json
import os
import signal
import sys
import time

SUMMARY = "flagtrace/variants@1"


def run_all(probe):
    request = probe.request
    for name in request.get("preimport", []):
        try:
            __import__(name)
        except BaseException:  # noqa: BLE001 - each child meets the same failure and records it
            pass
    timeout = float(request.get("variant_timeout") or 600)
    results = []
    learned = False
    batch, number = request.get("variants") or [], 0
    while batch is not None:
        # What a resolution imports lazily, each later child would import again: the parent imports
        # what the first child did. Not where a variant sets environment variables (a module may
        # read them at import).
        learn = not learned and bool(batch) and not any(v.get("env") for v in batch)
        for variant in batch:
            result = _one(probe, variant, timeout)
            _progress(request.get("progress_path"), len(results), result)
            results.append(result)
            if learn and not learned:
                _import_all(_read_lines(variant.get("modules_path")))
                learned = True
        if batch:
            learned = True
        number += 1
        batch = _next_round(request.get("rounds_dir"), number)
    doc = {"schema": SUMMARY, "variants": results}
    with open(probe.trace_path, "w", encoding="utf-8") as fh:
        json.dump(doc, fh)
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:  # noqa: BLE001
            pass
    probe._real_exit(0)  # os._exit itself would write the parent's own (empty) trace over the summary


def _next_round(folder, number, poll=0.02):
    """The variants of round ``number`` (None: no more rounds)."""
    if not folder:
        return None
    path = os.path.join(folder, "round-%d.json" % number)
    parent = os.getppid()
    while not os.path.exists(path):
        if os.path.exists(os.path.join(folder, "done")) or os.getppid() != parent:
            return None
        time.sleep(poll)
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)


def _one(probe, variant, timeout):
    started = time.monotonic()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:  # the child never returns from here
        _child(probe, variant)
    deadline = started + timeout
    status = None
    while status is None:
        done, code = os.waitpid(pid, os.WNOHANG)
        if done:
            status = code
            break
        if time.monotonic() > deadline:
            _kill_group(pid)
            os.waitpid(pid, 0)
            return {"status": "timeout", "returncode": None, "seconds": round(time.monotonic() - started, 3)}
        time.sleep(0.02)
    _kill_group(pid)  # whatever the variant started and left running
    if os.WIFSIGNALED(status):
        returncode = -os.WTERMSIG(status)
    else:
        returncode = os.WEXITSTATUS(status)
    return {"status": "ran", "returncode": returncode, "seconds": round(time.monotonic() - started, 3)}


def _child(probe, variant):
    code = 70
    try:
        os.setpgid(0, 0)
        fd = os.open(variant["output_path"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        os.close(fd)
        changes = variant.get("env") or {}
        with probe.quiet():  # the variant's environment is its launch environment, not a write
            for key, value in changes.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value
        probe.trace.forget_env_reads(changes)
        probe.trace_path = variant["trace_path"]
        _note_imports(probe, set(sys.modules), variant.get("modules_path"))
        probe.request["args"] = list(variant["args"])
        probe.trace.started = time.time()
        probe.run()
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except BaseException:  # noqa: BLE001 - the probe's own failure in this child
        import traceback

        traceback.print_exc()
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:  # noqa: BLE001
                pass
        os._exit(code)


def _note_imports(probe, before, path):
    """When the child writes its trace, it also lists the modules it imported (for the parent)."""
    if not path:
        return
    write = probe.write

    def write_and_note():
        write()
        try:
            with open(path, "w", encoding="utf-8") as fh:
                fh.write("\n".join(sorted(n for n in sys.modules if n not in before)) + "\n")
        except OSError:
            pass

    probe.write = write_and_note


def _read_lines(path):
    try:
        with open(path, encoding="utf-8") as fh:
            return [line.strip() for line in fh if line.strip()]
    except (OSError, TypeError):
        return []


def _import_all(names):
    for name in names:  # sorted: a package before its modules
        if name in sys.modules or name == "__main__" or name.startswith("_flagtrace"):
            continue
        try:
            __import__(name)
        except BaseException:  # noqa: BLE001 - the next child imports it itself, as before
            pass


def _kill_group(pid):
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _progress(path, index, result):
    if not path:
        return
    try:
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(dict(result, index=index)) + "\n")
    except OSError:
        pass
