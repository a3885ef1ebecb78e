"""The half of ``flagtrace run`` that runs on the host where the launch command runs.

It prepares a run directory (the bootstrap ``sitecustomize`` in ``site/``, the request, the
watched names), starts the command with that directory first on PYTHONPATH in a session of its
own, polls its process tree through /proc (proctable.py) until it exits, enforces the timeout,
kills whatever the command left running (naming it) and gathers every record and trace the
processes wrote, the launch script's text and the command's output into one run document, with
the secrets of that host scrubbed out.

Called in-process by launch/run_command.py for a local run, and by the ``--via`` agent
(launch/agent_program.py) on the remote host, where it arrives with the probe: standard library
only, Python >= 3.9, package-relative imports only.
"""
import ast
import importlib.util
import json
import os
import py_compile
import re
import shutil
import subprocess
import time

from .. import values
from ..common.recorded import env_matcher, relevant_env
from .proctable import ProcTable, is_alive, kill_tree, read_bytes, shebang

PROBE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SITECUSTOMIZE = os.path.join(PROBE_DIR, "bootstrap", "sitecustomize.py")
# What the bootstrap calls that flagtrace's own process runs too, written before it (probe/common/__init__.py).
BOOTSTRAP_PARTS = [os.path.join(PROBE_DIR, "common", name) for name in ("cmdline.py", "recorded.py")] + [SITECUSTOMIZE]
POLL_S = 0.01
_OUTPUT_LIMIT = 1 << 20  # of the command's own stdout/stderr kept in the run document


class RunError(Exception):
    """The command could not be started; the message is one line for the user."""


class Stopped(Exception):
    """``stop()`` said whoever asked for the run is gone; everything was killed."""


def resolve_command(command, env=None, cwd=None):
    """The program ``command[0]`` names, on this host's PATH (``env``'s, if given)."""
    first = command[0]
    if os.sep in first:
        path = os.path.join(cwd, first) if cwd else first
        if not os.path.exists(path):
            raise RunError("command not found: %s" % first)
        if not os.access(path, os.X_OK) or os.path.isdir(path):
            raise RunError("%s is not an executable file" % first)
        return os.path.abspath(path)
    found = shutil.which(first, path=(env if env is not None else os.environ).get("PATH"))
    if found is None:
        raise RunError("command not found: %s (not on PATH)" % first)
    return found


def bootstrap_text():
    """The bootstrap ``sitecustomize`` as one file: probe/common's modules, then bootstrap/sitecustomize.py."""
    parts = ["# flagtrace-bootstrap: written by flagtrace run from %s\n" % ", ".join(
        os.path.relpath(p, PROBE_DIR) for p in BOOTSTRAP_PARTS)]
    for path in BOOTSTRAP_PARTS:
        with open(path, encoding="utf-8") as fh:
            parts.append("# --- %s\n%s\n" % (os.path.relpath(path, PROBE_DIR), fh.read()))
    return "".join(parts)


def prepare(run_dir, request):
    """The run directory: the bootstrap in ``site/``, the request, the watched names, the variables
    each process records."""
    site_dir = os.path.join(run_dir, "site")
    os.mkdir(site_dir)
    target = os.path.join(site_dir, "sitecustomize.py")
    with open(target, "w", encoding="utf-8") as fh:
        fh.write(bootstrap_text())
    # its bytecode for this interpreter now (processes of other versions write theirs once)
    py_compile.compile(target, cfile=importlib.util.cache_from_source(target), doraise=False, quiet=2)
    with open(os.path.join(run_dir, "request.json"), "w", encoding="utf-8") as fh:
        json.dump(request, fh)
    with open(os.path.join(run_dir, "watch.txt"), "w", encoding="utf-8") as fh:
        fh.write(",".join(request["names"]))
    with open(os.path.join(run_dir, "env.txt"), "w", encoding="utf-8") as fh:
        fh.write(",".join(request.get("env") or ()))
    return site_dir


def environment(run_dir, site_dir, request, base=None):
    """The command's environment: the bootstrap first on PYTHONPATH, the run's settings (prepare)."""
    env = dict(os.environ if base is None else base)
    old = env.get("PYTHONPATH")
    env["PYTHONPATH"] = site_dir + (os.pathsep + old if old else "")
    env["FLAGTRACE_RUN_DIR"] = run_dir
    env["FLAGTRACE_RUN_WATCH"] = ",".join(request["names"])
    env["FLAGTRACE_RUN_ENV"] = ",".join(request.get("env") or ())
    return env


def supervise(command, request, timeout, run_dir, env=None, cwd=None, stdin=None, on_start=None,
              on_wait=None, stop=None):
    """Run ``command`` under the bootstrap in ``run_dir`` (an empty private folder, which the
    caller removes); return the run document without its schema stamp.

    ``env``: the command's environment (default: this process's). ``stdin``: as for Popen
    (default: inherited). ``on_start(proc)`` runs once it started; ``on_wait(seconds)`` between
    polls; ``stop()``, polled too, ends the run early: everything is killed and Stopped raised.
    A command that cannot start raises RunError. Ctrl-C (KeyboardInterrupt) ends the run with
    ``interrupted`` set; at ``timeout`` it ends with ``timed_out`` set."""
    env = dict(os.environ if env is None else env)
    resolve_command(command, env, cwd)
    request = dict(request, probe_dir=PROBE_DIR)
    site_dir = prepare(run_dir, request)
    child_env = environment(run_dir, site_dir, request, base=env)
    out_path = os.path.join(run_dir, "stdout")
    err_path = os.path.join(run_dir, "stderr")
    proc = table = None
    try:
        started = time.monotonic()
        created = time.time()
        with open(out_path, "wb") as out, open(err_path, "wb") as err:
            try:
                proc = subprocess.Popen(command, stdin=stdin, stdout=out, stderr=err, env=child_env, cwd=cwd,
                                        start_new_session=True)
            except OSError as exc:
                raise RunError("cannot start %s: %s" % (command[0], exc.strerror))
            matcher = env_matcher(request.get("env") or ())
            table = ProcTable(proc.pid, relevant_env=lambda environ: relevant_env(environ, matcher),
                              on_env=values.redact_env)
            if on_start is not None:
                on_start(proc)
            try:
                timed_out = watch(proc, table, timeout, started, on_wait, stop)
                interrupted = False
            except KeyboardInterrupt:  # Ctrl-C (a --live server runs until then): report what ran
                timed_out, interrupted = False, True
        seconds = time.monotonic() - started
        table.scan()
        leftovers = [dict(table.members[pid]) for pid in table.alive(exclude=(proc.pid,))]
        kill_all(proc, table)
        doc = collect(run_dir)
        doc.update({
            "command": list(command), "cwd": os.path.abspath(cwd) if cwd else os.getcwd(),
            "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(created)),
            "duration_s": round(seconds, 3), "live": bool(request.get("live")), "timeout": timeout,
            "timed_out": timed_out, "interrupted": interrupted,
            "exit_status": None if (timed_out or interrupted) else proc.returncode,
            "root_pid": proc.pid, "site_dir": site_dir, "run_dir": run_dir, "request": _public(request),
            "scanned": table.snapshot(), "leftovers": leftovers, "script": read_script(command, env, cwd),
            "stdout": read_bytes(out_path)[-_OUTPUT_LIMIT:].decode("utf-8", "replace"),
            "stderr": read_bytes(err_path)[-_OUTPUT_LIMIT:].decode("utf-8", "replace"),
        })
        return redact(doc, env)
    except BaseException:
        if proc is not None:
            kill_all(proc, table)
        raise


def watch(proc, table, timeout, started, on_wait=None, stop=None):
    """Poll the tree until the command exits; True if it ran past ``timeout`` (not killed
    here). Raises Stopped (nothing killed yet) when ``stop()`` is true."""
    while True:
        table.scan()
        if time.monotonic() - started > timeout:
            return True
        if stop is not None and stop():
            raise Stopped()
        try:
            proc.wait(timeout=POLL_S)
            return False
        except subprocess.TimeoutExpired:
            if on_wait is not None:
                on_wait(time.monotonic() - started)


def kill_all(proc, table):
    """Kill the command and everything still running in its tree; wait until they are gone."""
    pids = table.alive() if table is not None else []
    kill_tree(proc, pids)
    deadline = time.monotonic() + 5
    while any(is_alive(pid) for pid in pids if pid != proc.pid) and time.monotonic() < deadline:
        time.sleep(0.01)


def redact(doc, env=None):
    """Secrets out of the whole run document: argv values of secret options as /proc showed
    them, and every value seen under a secret name (the environment the command ran with and
    the processes' own, ``NAME=value`` lines of the script) wherever it appears (the script
    text, the command's output)."""
    values.redact_env(dict(os.environ if env is None else env))
    script = doc.get("script") or {}
    for line in (script.get("text") or "").splitlines():
        m = _ASSIGNMENT.match(line)
        if m and values.is_secret_name(m.group(1)):
            value = m.group(2).strip()
            if len(value) > 1 and value[0] == value[-1] and value[0] in "'\"":
                value = value[1:-1]
            values.remember_secret(value)
    for member in doc.get("scanned", []) + doc.get("leftovers", []):
        if member.get("argv"):
            member["argv"] = values.redact_argv(member["argv"])
        member["history"] = [values.redact_argv(h) for h in member.get("history") or []]
    doc["command"] = values.redact_argv(doc["command"])
    return json.loads(values.scrub(json.dumps(doc)))


_ASSIGNMENT = re.compile(r"^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)=(\S+)")


def _public(request):
    return {k: request.get(k) for k in ("watch", "stop_at", "names", "frameworks", "gpu", "live", "adapter",
                                        "probe_dir")}


def collect(run_dir):
    """Every record the processes wrote into ``run_dir``."""
    doc = {"records": [], "spawns": [], "missing": [], "errors": [], "traces": {}, "unreadable": []}
    kinds = {"proc": "records", "spawn": "spawns", "missing": "missing", "error": "errors"}
    for name in sorted(os.listdir(run_dir)):
        path = os.path.join(run_dir, name)
        kind = name.split("-", 1)[0]
        if name.endswith(".txt") and kind in kinds:
            try:
                with open(path, encoding="ascii", errors="replace") as fh:
                    item = ast.literal_eval(fh.read())
            except (OSError, ValueError, SyntaxError, MemoryError, RecursionError):
                doc["unreadable"].append(name)
                continue
            if isinstance(item, dict):
                item["_order"] = _order(name)
                doc[kinds[kind]].append(item)
        elif kind == "trace" and name.endswith(".json"):
            try:
                with open(path, encoding="utf-8") as fh:
                    doc["traces"][name[len("trace-"):-len(".json")]] = json.load(fh)
            except (OSError, ValueError):
                doc["unreadable"].append(name)
    for key in ("records", "spawns", "missing", "errors"):
        doc[key].sort(key=lambda item: item.pop("_order"))
    return doc


def _order(name):
    try:
        stem = name.rsplit(".", 1)[0].split("-")
        return int(stem[1]), int(stem[2])
    except (IndexError, ValueError):
        return (0, 0)


def read_script(command, env=None, cwd=None):
    """The launch script, when the command runs one with a shell (for the script checks)."""
    shells = ("bash", "sh", "dash", "zsh", "ksh")
    path = None
    if os.path.basename(command[0]) in shells:
        rest = [w for w in command[1:]]
        while rest and rest[0].startswith("-"):
            if rest[0] in ("-c",):
                return None
            rest = rest[1:]
        path = rest[0] if rest else None
    else:
        found = shutil.which(command[0], path=(env if env is not None else os.environ).get("PATH")) \
            if os.sep not in command[0] else command[0]
        if found and _shell_shebang(os.path.join(cwd, found) if cwd else found, shells):
            path = found
    if not path or not os.path.isfile(os.path.join(cwd, path) if cwd else path):
        return None
    try:
        with open(os.path.join(cwd, path) if cwd else path, encoding="utf-8", errors="replace") as fh:
            text = fh.read(1 << 20)
    except OSError:
        return None
    return {"path": path, "text": text}


def _shell_shebang(path, shells):
    words, _ = shebang(path)
    if words and os.path.basename(words[0]) == "env":
        words = words[1:]
    return bool(words) and os.path.basename(words[0]) in shells
