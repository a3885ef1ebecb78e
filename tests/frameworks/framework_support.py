"""Runs flagtrace explain/why/check --format json on a real framework command, cached per command.
Shared by the SGLang and vLLM suites."""
import ast
import atexit
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
    def __init__(self, rc, doc, err, trace, by="cli"):
        self.rc, self.doc, self.err, self.trace = rc, doc, err, trace
        self.by = by  # what answered: the CLI or the test pool (runs.log)

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
                                "by": run.by,
                                "test": os.environ.get("PYTEST_CURRENT_TEST", "").split("::")[0],
                                "command": " ".join(command)[:300]}) + "\n")
        return run


def _run_flagtrace(command, gpu, env_items, verb, extra):
    if verb == "explain" and not env_items and not extra and POOL_SIZE:
        run = _pool.explain(command, gpu)
        if run is not None:
            return run
    return _explain_cli(command, gpu, env_items, verb, extra)


def _explain_cli(command, gpu, env_items, verb, extra):
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


# A plain explain of a command that resolves (no error, no refusal, no environment of its own) is answered by
# flagtrace's variant engine (launch/variants.py, what diff, matrix, fix and the check -f gate run on): one
# import of the release per worker, a forked child per command, each traced as `flagtrace explain` traces it
# alone and analysed by the same code. Anything else, and whatever the engine could not run in a child of its
# own (another simulated GPU the import cannot stand for, a child it could not fork faithfully), runs the CLI.
# FLAGTRACE_TEST_POOL=0: every command through the CLI.
POOL_SIZE = int(os.environ.get("FLAGTRACE_TEST_POOL", "3"))


class _Pool:
    def __init__(self, size):
        self.size = size
        self.sessions = {}  # (command key, GPU) -> VariantSession, least recently used first
        self.unshared = set()  # (session key, GPU) an import could not stand for

    def explain(self, command, gpu):
        from flagtrace.core import gpus
        from flagtrace.engine import whatif
        from flagtrace.core import trace as tracefile
        from flagtrace.analysis import verdict
        from flagtrace.core.exitcodes import FlagtraceError
        from flagtrace.core.asked import Asked
        from flagtrace.launch.variants import Variant

        try:
            plan = whatif.plan(list(command), Asked(), "explain")
        except FlagtraceError:
            return None
        profile = gpus.choose(gpu) if gpu else None
        request = whatif.gpu_request(plan, gpu)
        t = plan.target
        # one import serves every model (a variant names its own) and, where it can, every GPU
        same = {k: [s for s in v if s != "remote_code"] if k == "setup" else v for k, v in request.items()
                if k not in ("gpu", "inputs", "model_folders", "model_typed")}
        base = json.dumps([t.interpreter, t.python_options, t.mode, t.target, plan.env, plan.preimport, same],
                          sort_keys=True, default=str)
        models = list(plan.models or [])
        result = None
        # an open session of this command whose import can stand for this GPU (most recent first), else its own
        for key in [k for k in reversed(list(self.sessions)) if k[0] == base and (k, gpu) not in self.unshared]:
            [result] = self._use(key).run([Variant(list(t.args), gpu=profile if key[1] != gpu else None,
                                                   models=models)])
            if result.status != "unshared":
                break
            self.unshared.add((key, gpu))
            result = None
        if result is None:
            [result] = self._open((base, gpu), plan, request).run([Variant(list(t.args), models=models)])
        if result.status != "ran" or result.trace is None:
            return None
        try:
            analysis = whatif.analysis(result)
        except FlagtraceError:
            return None
        if analysis.get("error"):
            return None  # the CLI's one line on stderr, which tests read
        notes = "".join("flagtrace: note: %s\n" % note for note in analysis.get("notes", []))  # as the CLI says them
        trace = json.loads(json.dumps(tracefile.check(result.trace)))  # as read back from the saved file
        return Run(verdict.exit_code(analysis, False, 0), json.loads(json.dumps(analysis)), notes, trace, "pool")

    def _use(self, key):
        self.sessions[key] = self.sessions.pop(key)  # most recently used last
        return self.sessions[key]

    def _open(self, key, plan, request):
        from flagtrace.launch.variants import VariantSession

        while len(self.sessions) >= self.size:
            self.close(next(iter(self.sessions)))
        session = VariantSession(plan.target, request, 600, env=plan.env, preimport=plan.preimport, expected=400)
        session.__enter__()
        self.sessions[key] = session
        return session

    def close(self, key=None):
        for k in ([key] if key else list(self.sessions)):
            self.sessions.pop(k).__exit__(None, None, None)


_pool = _Pool(POOL_SIZE)
atexit.register(_pool.close)
