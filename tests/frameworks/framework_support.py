"""Runs flagtrace explain/why/check --format json on a real framework command, cached per command.
Shared by the SGLang and vLLM suites."""
import ast
import functools
import json
import os
import subprocess
import sys
import tempfile

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
