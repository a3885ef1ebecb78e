"""``flagtrace run``: run a launch command (``bash launch.sh``) with the bootstrap sitecustomize
first on PYTHONPATH, so that every Python process under it records itself and the ones that
import a watched framework are probed; watch the process tree through /proc meanwhile; bring
back every record and trace as one run document (``flagtrace/run@1``).

Leaves nothing behind: the run directory is removed, and whatever still runs under the command
when it exits (or at the timeout) is killed and named.
"""
import ast
import contextlib
import importlib.util
import json
import os
import py_compile
import re
import shutil
import signal
import subprocess
import tempfile
import time

from .. import __version__
from ..exitcodes import FlagtraceError
from ..probe import values
from ..probe.bootstrap import sitecustomize as bootstrap
from .local import PROBE_DIR, stderr_tail
from .proctable import ProcTable, is_alive

RUN_SCHEMA = "flagtrace/run@1"
SITECUSTOMIZE = os.path.join(PROBE_DIR, "bootstrap", "sitecustomize.py")
POLL_S = 0.01
_OUTPUT_LIMIT = 1 << 20  # of the command's own stdout/stderr kept in the run document


def resolve_command(command):
    first = command[0]
    if os.sep in first:
        if not os.path.exists(first):
            raise FlagtraceError("command not found: %s" % first)
        if not os.access(first, os.X_OK) or os.path.isdir(first):
            raise FlagtraceError("%s is not an executable file" % first)
        return os.path.abspath(first)
    found = shutil.which(first)
    if found is None:
        raise FlagtraceError("command not found: %s (not on PATH)" % first)
    return found


def prepare(run_dir, request):
    """The run directory: the bootstrap in ``site/``, the request, the watched names."""
    site_dir = os.path.join(run_dir, "site")
    os.mkdir(site_dir)
    target = os.path.join(site_dir, "sitecustomize.py")
    shutil.copyfile(SITECUSTOMIZE, target)
    # its bytecode for this interpreter now (processes of other versions write theirs once)
    py_compile.compile(target, cfile=importlib.util.cache_from_source(target), doraise=False, quiet=2)
    with open(os.path.join(run_dir, "request.json"), "w", encoding="utf-8") as fh:
        json.dump(request, fh)
    with open(os.path.join(run_dir, "watch.txt"), "w", encoding="utf-8") as fh:
        fh.write(",".join(request["names"]))
    return site_dir


def environment(run_dir, site_dir, names, base=None):
    env = dict(os.environ if base is None else base)
    old = env.get("PYTHONPATH")
    env["PYTHONPATH"] = site_dir + (os.pathsep + old if old else "")
    env["FLAGTRACE_RUN_DIR"] = run_dir
    env["FLAGTRACE_RUN_WATCH"] = ",".join(names)
    return env


def run_tree(command, request, timeout, on_wait=None):
    """Run ``command`` under the bootstrap; return the run document."""
    resolve_command(command)
    run_dir = tempfile.mkdtemp(prefix="flagtrace-run-")
    proc = None
    table = None
    try:
        request = dict(request, probe_dir=PROBE_DIR, flagtrace_version=__version__)
        site_dir = prepare(run_dir, request)
        env = environment(run_dir, site_dir, request["names"])
        out_path = os.path.join(run_dir, "stdout")
        err_path = os.path.join(run_dir, "stderr")
        started = time.monotonic()
        created = time.time()
        with open(out_path, "wb") as out, open(err_path, "wb") as err:
            try:
                proc = subprocess.Popen(command, stdout=out, stderr=err, env=env, start_new_session=True)
            except OSError as exc:
                raise FlagtraceError("cannot start %s: %s" % (command[0], exc.strerror))
            table = ProcTable(proc.pid, relevant_env=bootstrap.relevant_env, on_env=values.redact_env)
            try:
                timed_out = _watch(proc, table, timeout, on_wait, started)
                interrupted = False
            except KeyboardInterrupt:  # Ctrl-C (a --live server runs until then): report what ran
                timed_out, interrupted = False, True
        seconds = time.monotonic() - started
        table.scan()
        leftovers = [dict(table.members[pid]) for pid in table.alive(exclude=(proc.pid,))]
        _kill_all(proc, table)
        doc = collect(run_dir)
        doc.update({
            "schema": RUN_SCHEMA, "flagtrace_version": __version__, "command": list(command),
            "cwd": os.getcwd(), "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(created)),
            "duration_s": round(seconds, 3), "live": bool(request.get("live")), "timeout": timeout,
            "timed_out": timed_out, "interrupted": interrupted,
            "exit_status": None if (timed_out or interrupted) else proc.returncode,
            "root_pid": proc.pid, "site_dir": site_dir, "run_dir": run_dir, "request": _public(request),
            "scanned": table.snapshot(), "leftovers": leftovers, "script": read_script(command),
            "stdout": _read(out_path)[-_OUTPUT_LIMIT:].decode("utf-8", "replace"),
            "stderr": _read(err_path)[-_OUTPUT_LIMIT:].decode("utf-8", "replace"),
        })
        return redact(doc)
    except BaseException:
        if proc is not None:
            _kill_all(proc, table)
        raise
    finally:
        shutil.rmtree(run_dir, ignore_errors=True)


def _watch(proc, table, timeout, on_wait, started):
    """Poll the tree until the command exits; True if it ran past ``timeout`` (then killed)."""
    while True:
        table.scan()
        elapsed = time.monotonic() - started
        if elapsed > timeout:
            return True
        try:
            proc.wait(timeout=POLL_S)
            return False
        except subprocess.TimeoutExpired:
            if on_wait is not None:
                on_wait(time.monotonic() - started)


def _kill_all(proc, table):
    """Kill the command and everything still running in its tree; wait until they are gone."""
    pids = table.alive() if table is not None else []
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
    with contextlib.suppress(Exception):
        proc.wait(timeout=5)
    deadline = time.monotonic() + 5
    while any(is_alive(pid) for pid in pids if pid != proc.pid) and time.monotonic() < deadline:
        time.sleep(0.01)


def redact(doc):
    """Secrets out of the whole run document: argv values of secret options as /proc showed
    them, and every value seen under a secret name (the environment flagtrace and the
    processes ran with, ``NAME=value`` lines of the script) wherever it appears (the script
    text, the command's output)."""
    values.redact_env(dict(os.environ))
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


def read_script(command):
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
        found = shutil.which(command[0]) if os.sep not in command[0] else command[0]
        if found and _shell_shebang(found, shells):
            path = found
    if not path or not os.path.isfile(path):
        return None
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            text = fh.read(1 << 20)
    except OSError:
        return None
    return {"path": path, "text": text}


def _shell_shebang(path, shells):
    try:
        with open(path, "rb") as fh:
            head = fh.readline(200).decode("utf-8", "replace")
    except OSError:
        return False
    if not head.startswith("#!"):
        return False
    words = head[2:].split()
    if words and os.path.basename(words[0]) == "env":
        words = words[1:]
    return bool(words) and os.path.basename(words[0]) in shells


def _read(path):
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except OSError:
        return b""


__all__ = ["run_tree", "collect", "RUN_SCHEMA", "stderr_tail"]
