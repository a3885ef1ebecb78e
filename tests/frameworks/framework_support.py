"""Runs flagtrace explain/why/check --format json on a real framework command, cached per command.
Shared by the SGLang and vLLM suites."""
import ast
import fcntl
import functools
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class Run:
    def __init__(self, rc, doc, err, trace):
        self.rc, self.doc, self.err, self.trace = rc, doc, err, trace

    def field(self, name):
        for f in self.doc["fields"]:
            if f["field"] == name:
                return f
        raise AssertionError("no field %s" % name)

    def __repr__(self):
        return "Run(rc=%s, err=%s)" % (self.rc, self.err[-2000:])


@functools.lru_cache(maxsize=None)
def run_flagtrace(command, gpu, env_items, verb="explain", extra=()):
    """Cached per command in this process and, where tests/conftest.py made one (FLAGTRACE_TEST_RUNS),
    in a folder the pytest workers share: a command two test files ask for runs once per session."""
    shared = os.environ.get("FLAGTRACE_TEST_RUNS")
    if not shared:
        return _run_flagtrace(command, gpu, env_items, verb, extra)
    key = hashlib.sha256(json.dumps([command, gpu, env_items, verb, extra]).encode()).hexdigest()[:24]
    path = os.path.join(shared, key + ".json")
    with open(path + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # the other worker, asking the same, waits for this run
        if os.path.exists(path):
            with open(path) as f:
                saved = json.load(f)
            return Run(saved["rc"], saved["doc"], saved["err"], saved["trace"])
        start = time.monotonic()
        run = _run_flagtrace(command, gpu, env_items, verb, extra)
        with open(path + ".tmp", "w") as f:
            json.dump({"rc": run.rc, "doc": run.doc, "err": run.err, "trace": run.trace}, f)
        os.replace(path + ".tmp", path)
        with open(os.path.join(shared, "runs.log"), "a") as f:
            f.write(json.dumps({"key": key, "seconds": round(time.monotonic() - start, 1), "verb": verb, "gpu": gpu,
                                "test": os.environ.get("PYTEST_CURRENT_TEST", "").split("::")[0],
                                "command": " ".join(command[1:])[:300]}) + "\n")
        return run


def _run_flagtrace(command, gpu, env_items, verb, extra):
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "analysis.json")
        trace = os.path.join(tmp, "trace.json")
        argv = [sys.executable, "-m", "flagtrace", verb, "--format", "json", "-o", out,
                "--save-trace", trace, *extra]
        if gpu:
            argv += ["--gpu", gpu]
        argv += ["--", *command]
        env = dict(os.environ)
        env.update(dict(env_items))
        for key in [k for k, v in env.items() if v is None]:  # None: not in the target's environment
            del env[key]
        proc = subprocess.run(argv, capture_output=True, text=True, cwd=ROOT, env=env, timeout=600)
        doc = json.load(open(out)) if os.path.exists(out) and os.path.getsize(out) else None
        tr = json.load(open(trace)) if os.path.exists(trace) else None
        return Run(proc.returncode, doc, proc.stderr, tr)


def line_in_file(path, func, text, nth=0):
    """Line of the ``nth`` source line containing ``text`` inside ``def func`` of the file ``path``."""
    src = open(path, encoding="utf-8").read()
    for node in ast.walk(ast.parse(src)):
        if isinstance(node, ast.FunctionDef) and node.name == func:
            lines = src.splitlines()
            hits = [i for i in range(node.lineno, node.end_lineno + 1) if text in lines[i - 1]]
            if len(hits) > nth:
                return hits[nth]
    raise AssertionError("%r not found in %s of %s" % (text, func, path))
