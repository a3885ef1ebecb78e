"""Helpers for the core tests: run flagtrace in-process or as a subprocess, find lines in the
examples, and find processes and temporary directories a run left behind.

(Not in conftest.py: tests/frameworks has a conftest of its own, and ``from conftest import``
would pick either.)"""
import contextlib
import functools
import io
import json
import os
import subprocess
import sys
import tempfile

from flagtrace import cli

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLES = os.path.join(ROOT, "tests", "examples")
PY = sys.executable
FLAGTRACE = [sys.executable, "-m", "flagtrace"]


def example(name):
    """Path of an example program, relative to ROOT (the tests run with ROOT as cwd)."""
    return os.path.join("tests", "examples", name)


def line_of(name, text, nth=0):
    """Line number (1-based) of the ``nth`` line of example ``name`` containing ``text``."""
    with open(os.path.join(EXAMPLES, name), encoding="utf-8") as fh:
        hits = [i for i, line in enumerate(fh.read().splitlines(), 1) if text in line]
    if len(hits) <= nth:
        raise AssertionError("%r not found in %s" % (text, name))
    return hits[nth]


class Result:
    def __init__(self, rc, out, err):
        self.rc, self.out, self.err = rc, out, err

    @property
    def doc(self):
        return json.loads(self.out)

    def __repr__(self):
        return "Result(rc=%r, out=%r..., err=%r)" % (self.rc, self.out[:300], self.err[-800:])


def run_cli(argv, cwd=ROOT):
    """``flagtrace.cli.main(argv)`` in this process; stdout/stderr captured as text."""
    out, err = io.StringIO(), io.StringIO()
    old = os.getcwd()
    os.chdir(cwd)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            rc = cli.main(list(argv))
    finally:
        os.chdir(old)
    return Result(rc, out.getvalue(), err.getvalue())


@functools.lru_cache(maxsize=None)
def _cached(argv):
    return run_cli(argv)


def run_cached(argv):
    """Like run_cli, but each distinct command runs once per session (tests only read it)."""
    r = _cached(tuple(argv))
    return Result(r.rc, r.out, r.err)


def run_sub(argv, input=None, timeout=60, env=None):
    """``python -m flagtrace ARGV`` as a subprocess; returns Result with text (replace errors).
    ``env``: variables to add (None: to remove)."""
    full_env = dict(os.environ)
    full_env.update(env or {})
    for key in [k for k, v in full_env.items() if v is None]:  # None: not in its environment
        del full_env[key]
    proc = subprocess.run(FLAGTRACE + list(argv), input=input, capture_output=True, timeout=timeout,
                          cwd=ROOT, env=full_env)
    return Result(proc.returncode, proc.stdout.decode("utf-8", "replace"),
                  proc.stderr.decode("utf-8", "replace"))


def explain_json(script, args=(), watch=None, stop_at=None, extra=()):
    """Run ``flagtrace explain --format json`` on an example (cached); returns Result."""
    argv = ["explain", "--format", "json"]
    for w in ([watch] if isinstance(watch, str) else watch or []):
        argv += ["--watch", w]
    for s in ([stop_at] if isinstance(stop_at, str) else stop_at or []):
        argv += ["--stop-at", s]
    argv += list(extra) + ["--", PY, example(script)] + list(args)
    return run_cached(argv)


def origin(launch, text):
    """Where the first token ``text`` of a deployment launch (deploy.model.Launch) came from."""
    return next(t.origin for t in launch.tokens if t.text == text)


def flat(text):
    """``text`` with every run of whitespace (and the report's line wrapping) made one space."""
    return " ".join(text.split())


def field(doc, name):
    for f in doc["fields"]:
        if f["field"] == name:
            return f
    raise AssertionError("no field %s in %s" % (name, [f["field"] for f in doc["fields"]]))


# -- processes and temporary directories -------------------------------------------------
def _proc_table():
    table = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open("/proc/%s/stat" % entry) as fh:
                    rest = fh.read().rsplit(")", 1)[1].split()
                table[int(entry)] = (rest[0], int(rest[1]))  # state, ppid
            except (OSError, ValueError, IndexError):
                continue
    return table


def live_descendants(pid=None):
    """Pids of running (not zombie) processes under ``pid`` (default: this process)."""
    pid = os.getpid() if pid is None else pid
    table = _proc_table()
    children = {}
    for p, (state, ppid) in table.items():
        children.setdefault(ppid, []).append(p)
    out, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            todo.append(child)
            if table[child][0] != "Z":
                out.append(child)
    return sorted(out)


def is_alive(pid):
    """True if ``pid`` exists and is not a zombie."""
    try:
        with open("/proc/%d/stat" % pid) as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def flagtrace_tmpdirs(where=None):
    where = where or tempfile.gettempdir()
    return sorted(n for n in os.listdir(where) if n.startswith("flagtrace-"))


def load_script(name):
    """A script under scripts/ (not a package) as a module, e.g. load_script("sglang_flag_history")."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(name, os.path.join(ROOT, "scripts", name + ".py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
