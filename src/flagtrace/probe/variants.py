"""Many resolutions from one import: the probe is set up and the framework imported once, then a
child is forked per variant (its own arguments and environment) and runs the target exactly as a
single ``flagtrace explain`` would, writing its own trace.

Nothing from one variant reaches another: every child is a fork of a parent that never resolved
(an environment variable one resolution writes, an lru cache, a log-once set all stay in that
child). Each child runs in its own process group, is killed with everything it started at the
variant's timeout, and what it printed goes to its own file.

The request carries ``variants``: ``[{"args": [...], "env": {K: V or None}, "trace_path": P,
"output_path": O, "modules_path": M, "gpu": PROFILE (optional), "inputs": [...], "model_folders":
[...] (optional: the configs standing for its models, where not the request's)}]``,
``variant_timeout`` (seconds) and ``preimport`` (modules the parent imports before forking; the adapter names them). The parent
writes one summary at ``trace_path``: ``{"variants": [{"status": ..., "returncode": ...,
"seconds": ...}]}``, and a line per finished variant (with its ``index``) to ``progress_path``.

Where forking would not give a faithful copy of the parent (no fork, another thread running, a
CUDA context made at import), a variant is not run: its status is ``unforkable`` with the reason,
for the caller to run in a process of its own.

A variant with ``gpu`` runs under that simulated GPU instead of the request's, if nothing the
simulation answered before the fork (at import) would differ there; else it is not run, its
status is ``unshared`` with the reason, for the caller to run in a process of its own.

With ``parallel`` > 1, that many children run at once (after the first, which runs alone so that
the parent can learn its imports). With ``imports_cache`` (a file), the modules a first child
imported lazily are remembered across runs and imported before the first fork of the next run of
the same command.

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
import threading
import time

from .base_fork import BaseFork, profile_key
from .files import write_whole

SUMMARY = "flagtrace/variants@1"


def run_all(probe):
    request = probe.request
    batch, number = request.get("variants") or [], 0
    shared = _shared_env(batch)
    if shared:  # every variant's launch environment is the same: the parent imports in it too
        _apply_env(probe, shared)
    for name in request.get("preimport", []):
        try:
            __import__(name)
        except BaseException:  # noqa: BLE001 - each child meets the same failure and records it
            pass
    timeout = float(request.get("variant_timeout") or 600)
    parallel = max(1, int(request.get("parallel") or 1))
    cache = request.get("imports_cache")
    results, conflicts = [], {}
    base = _base_fork(probe, batch)
    learned = False
    while batch is not None:
        # What a resolution imports lazily, each later child would import again: the parent imports
        # what the first child did (and, from the cache, what an earlier run's first child did,
        # before the first fork). Not where variants set different environment variables (a module
        # may read them at import); where they all set the same, the parent runs in it (above).
        first = len(results)
        results += [None] * len(batch)
        todo = list(enumerate(batch, first))
        if not learned and batch and (shared or not any(v.get("env") for v in batch)):
            _import_all(_read_lines(cache))
            index, variant = todo.pop(0)
            _run(probe, [(index, variant)], results, timeout, 1, conflicts, base)
            names = _read_lines(variant.get("modules_path"))
            _import_all(names)
            _remember(cache, names)
        learned = learned or bool(batch)
        _run(probe, todo, results, timeout, parallel, conflicts, base)
        number += 1
        batch = _next_round(request.get("rounds_dir"), number)
    if base is not None:
        base.close()
    doc = {"schema": SUMMARY, "variants": results}
    with open(probe.trace_path, "w", encoding="utf-8") as fh:
        json.dump(doc, fh)
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:  # noqa: BLE001
            pass
    probe._real_exit(0)  # os._exit itself would write the parent's own (empty) trace over the summary


def _run(probe, todo, results, timeout, parallel, conflicts, base=None):
    """Resolve ``todo`` ([(index, variant)]), up to ``parallel`` children at a time; each result
    goes to ``results[index]`` and to the progress file as it finishes. A variant of a GPU this
    process cannot stand for goes to ``base`` (a BaseFork), if there is one, once the rest are done."""
    path = probe.request.get("progress_path")
    running = {}  # pid -> (index, started)
    todo = list(todo)
    elsewhere = {}  # GPU profile key -> [(index, variant)] for the base fork
    while todo or running:
        while todo and len(running) < parallel:
            index, variant = todo.pop(0)
            unsafe = _cannot_fork()
            if unsafe:
                _finish(path, results, index, {"status": "unforkable", "why": unsafe, "returncode": None, "seconds": 0.0})
                continue
            why = _cannot_share(probe, variant, conflicts)
            if why and base is not None:
                elsewhere.setdefault(profile_key(variant["gpu"]), []).append((index, variant))
                continue
            if why:
                _finish(path, results, index, {"status": "unshared", "why": why, "returncode": None, "seconds": 0.0})
                continue
            running[_fork(probe, variant)] = (index, time.monotonic())
        for pid, (index, started) in list(running.items()):
            done, status = os.waitpid(pid, os.WNOHANG)
            seconds = round(time.monotonic() - started, 3)
            if done:
                _kill_group(pid)  # whatever the variant started and left running
                code = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
                result = {"status": "ran", "returncode": code, "seconds": seconds}
            elif seconds > timeout:
                _kill_group(pid)
                os.waitpid(pid, 0)
                result = {"status": "timeout", "returncode": None, "seconds": seconds}
            else:
                continue
            del running[pid]
            _finish(path, results, index, result)
        if running:
            time.sleep(0.01)
    for group in elsewhere.values():
        got = base.run(group[0][1]["gpu"], group, timeout, parallel)
        for index, _ in group:
            result = got.get(index)
            if result is None or result.get("status") == "unshared":  # not run there: said here
                _finish(path, results, index, result or {"status": "unshared", "returncode": None, "seconds": 0.0,
                                                         "why": "the process standing for this GPU ended early"})
            else:
                results[index] = result  # its progress line is written by the process that ran it


def _base_fork(probe, batch):
    """A BaseFork where variants may ask for another simulated GPU (this batch, or later rounds) and
    this process can be forked faithfully; else None."""
    if getattr(probe, "simulation", None) is None or _cannot_fork():
        return None
    if not probe.request.get("rounds_dir") and not any(v.get("gpu") for v in batch):
        return None
    global _BASE
    _BASE = BaseFork(probe, _run, _import_all)
    return _BASE


_BASE = None  # this process's BaseFork: a variant's child closes its pipes


def _finish(path, results, index, result):
    results[index] = result
    _progress(path, index, result)


def _remember(path, names):
    """Add ``names`` to the imports cache (best effort: a cache that cannot be written is skipped)."""
    if not path or not names:
        return
    known = set(_read_lines(path))
    if set(names) <= known:
        return
    write_whole(path, lambda fh: fh.write("\n".join(sorted(known | set(names))) + "\n"), quiet=True, make_folder=True)


def _cannot_fork():
    """Why forking this process would not give a faithful copy (None: it would): no fork on this
    platform, another thread running (a lock it holds stays held in the child), or a CUDA context
    already made (a real GPU: the child cannot use it)."""
    if not hasattr(os, "fork"):
        return "this platform has no fork()"
    others = [t.name for t in threading.enumerate() if t is not threading.main_thread() and t.is_alive()]
    if others:
        return "the importing process runs other threads (%s)" % ", ".join(sorted(others)[:3])
    torch = sys.modules.get("torch")
    try:
        if torch is not None and torch.cuda.is_initialized():
            return "the import made a CUDA context"
    except Exception:  # noqa: BLE001 - a stand-in or partial torch: nothing initialised
        pass
    return None


def _cannot_share(probe, variant, conflicts):
    """Why this process cannot resolve a variant of another simulated GPU (None: it can): the
    simulation answered something at import that would differ there."""
    profile = variant.get("gpu")
    simulation = getattr(probe, "simulation", None)
    if not profile or simulation is None or profile == simulation.profile:
        return None if profile is None or simulation is not None else "no simulation to switch"
    key = profile_key(profile)
    if key not in conflicts:
        conflicts[key] = simulation.conflict(profile)
    return conflicts[key]


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


def _fork(probe, variant):
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:  # the child never returns from here
        _child(probe, variant)
    return pid


def _child(probe, variant):
    code = 70
    try:
        os.setpgid(0, 0)
        if _BASE is not None:
            _BASE.close_in_child()
        fd = os.open(variant["output_path"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        os.close(fd)
        changes = variant.get("env") or {}
        _apply_env(probe, changes)
        probe.trace.forget_env_reads(changes)
        if variant.get("gpu"):  # another simulated GPU, checked by _cannot_share
            probe.simulation.switch(variant["gpu"])
        for key in ("inputs", "model_folders", "model_typed"):  # the configs standing for this variant's models
            if key in variant:
                probe.request[key] = list(variant[key])
        probe.trace_path = variant["trace_path"]
        _note_imports(probe, set(sys.modules), variant.get("modules_path"))
        # the trace names the command this variant is, not the one the parent was started with
        probe.request["command"] = variant_command(probe.request.get("command") or [],
                                                   probe.request.get("args") or [], variant["args"])
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


def variant_command(command, args, variant_args):
    """The launch command of a variant: the words of ``command`` before the target's ``args``, then the
    variant's own arguments."""
    return list(command[:len(command) - len(args)]) + list(variant_args)


def _shared_env(batch):
    """The environment changes every variant of ``batch`` makes, where they all make the same (else None)."""
    envs = [v.get("env") or {} for v in batch]
    return envs[0] if envs and envs[0] and all(e == envs[0] for e in envs) else None


def _apply_env(probe, changes):
    with probe.quiet():  # a variant's environment is its launch environment, not a write
        for key, value in changes.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


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
