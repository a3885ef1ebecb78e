"""Many resolutions of one command from one import of its framework: the probe's variant mode
(probe/variants.py) forks a child per variant, each traced exactly as ``flagtrace explain`` would
trace that command alone. Leaves no process or file behind."""
import dataclasses
import hashlib
import json
import os
import shutil
import tempfile
import threading
import time

from .. import __version__
from ..probe.modelconfigs import model_inputs
from ..core.cachefiles import cache_folder, write_whole
from ..core.exitcodes import FlagtraceError
from ..probe.bootstrap.proctable import read_bytes
from ..probe.variants import variant_command
from .local import run_probe, stderr_tail

SETUP_ALLOWANCE = 600.0  # the parent's own start: interpreter, probe, the framework's import


@dataclasses.dataclass
class Variant:
    args: list  # what the target sees as sys.argv[1:]
    env: dict = dataclasses.field(default_factory=dict)  # K -> value; None: removed
    label: str = ""
    gpu: object = None  # a GPU profile other than the session's (probe/variants.py: if it can share)
    models: list = None  # [modelconfigs.Found] standing for this variant's models (None: the session's)


@dataclasses.dataclass
class VariantResult:
    variant: Variant
    status: str  # "ran" | "timeout" | "failed" (its import failed: why) | "unshared" (another GPU this import cannot stand for) |
    # "alone" (the importing process could not be forked faithfully: a process of its own, see why)
    returncode: object  # int, or None after a timeout
    seconds: float
    trace: object  # the variant's trace (dict), or None where it wrote none
    output: bytes  # what it printed (stdout and stderr together)
    why: str = None  # unshared / alone: why this import could not stand for the variant


def run_variants(target, request, variants, timeout_each, env=None, preimport=(), on_progress=None):
    """Trace ``target`` once per variant; results in the order of ``variants``.
    ``on_progress(done, total)`` is called while they run."""
    with VariantSession(target, request, timeout_each, env, preimport, len(variants)) as session:
        return session.run(variants, on_progress)


class _Abandoned(Exception):
    """Raised inside the probe's wait to stop it: the session is left early."""


class VariantSession:
    """One import of the framework, then variants in rounds: ``run(variants)`` returns their
    results, and the next round may be chosen from them (``flagtrace fix``). Used as a context
    manager; leaving it ends the probe and removes its files."""

    def __init__(self, target, request, timeout_each, env=None, preimport=(), expected=200, parallel=1):
        self.target, self.env = target, env
        self.timeout_each = timeout_each
        self.tmp = tempfile.mkdtemp(prefix="flagtrace-variants-")
        self.progress_path = os.path.join(self.tmp, "progress")
        # a variant may name other models than the first: the stand-in for remote configuration code
        # is set up in every session and reads the folders of the variant it runs (probe/remote_code.py)
        setup = list(request.get("setup") or [])
        setup += ["remote_code"] * ("remote_code" not in setup)
        self.request = dict(request, setup=setup, variants=[], rounds_dir=self.tmp, variant_timeout=timeout_each,
                            preimport=list(preimport), progress_path=self.progress_path,
                            imports_cache=imports_cache(target, env), parallel=parallel)
        self.budget = SETUP_ALLOWANCE + timeout_each * expected
        self.count = 0  # variants sent so far
        self.rounds = 0
        self.outcome = None  # (RunResult or None, exception or None) once the probe has ended
        self.leaving = False
        self.thread = None

    def __enter__(self):
        self.thread = threading.Thread(target=self._probe, daemon=True)
        self.thread.start()
        return self

    def _probe(self):
        def tick(_seconds):
            if self.leaving:
                raise _Abandoned()

        try:
            self.outcome = (run_probe(self.target, self.request, self.budget, env=self.env, on_wait=tick), None)
        except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread
            self.outcome = (None, exc)

    def run(self, variants, on_progress=None):
        variants = list(variants)
        if not variants:
            return []
        first = self.count
        specs = [self._spec(first + i, v) for i, v in enumerate(variants)]
        self.count += len(variants)
        self.rounds += 1
        write_whole(os.path.join(self.tmp, "round-%d.json" % self.rounds), lambda fh: json.dump(specs, fh))
        lines = self._wait_for(self.count, first, len(variants), on_progress)
        by_index = {line.get("index"): line for line in lines}
        results = [VariantResult(v, s.get("status", "ran"), s.get("returncode"), s.get("seconds", 0.0),
                                 _load(spec["trace_path"]), read_bytes(spec["output_path"]), s.get("why"))
                   for v, s, spec in zip(variants, (by_index.get(first + i, {}) for i in range(len(variants))), specs)]
        return [self._alone(r) if r.status == "unforkable" else r for r in results]

    def _alone(self, result):
        """A variant the importing process could not fork faithfully: a process of its own, as
        ``explain`` runs it (``why`` says why; the report notes it)."""
        variant = result.variant
        env = dict(os.environ if self.env is None else self.env)
        for key, value in variant.env.items():
            if value is None:
                env.pop(key, None)
            else:
                env[key] = value
        request = {k: v for k, v in self.request.items()
                   if k not in ("variants", "rounds_dir", "variant_timeout", "preimport", "progress_path",
                                "imports_cache", "parallel")}
        if variant.gpu is not None:
            request["gpu"] = variant.gpu
        if variant.models is not None:
            request.update(model_inputs(variant.models))
        target = dataclasses.replace(self.target, args=list(variant.args),
                                     command=variant_command(self.target.command, self.target.args, variant.args))
        try:
            run = run_probe(target, request, self.timeout_each, env=env)
        except FlagtraceError as exc:
            return dataclasses.replace(result, status="alone", trace=None, output=exc.message.encode())
        return VariantResult(variant, "alone", run.returncode, round(run.seconds, 3), run.trace,
                             run.stdout + run.stderr, result.why)

    def _spec(self, index, variant):
        path = os.path.join(self.tmp, str(index))
        spec = {"args": list(variant.args), "env": dict(variant.env), "trace_path": path + ".json",
                "output_path": path + ".out", "modules_path": path + ".modules"}
        if variant.gpu is not None:
            spec["gpu"] = variant.gpu
        if variant.models is not None:
            spec.update(model_inputs(variant.models))
        return spec

    def _wait_for(self, total, first, size, on_progress):
        reported = -1
        while True:
            lines = _read_progress(self.progress_path)
            if on_progress and len(lines) - first != reported:
                reported = len(lines) - first
                on_progress(max(0, reported), size)
            if len(lines) >= total:
                return lines
            if not self.thread.is_alive():
                result, exc = self.outcome or (None, None)
                if isinstance(exc, FlagtraceError):
                    raise exc
                detail = stderr_tail(result.stderr) if result is not None else None
                raise FlagtraceError("the variant runner ended after %d of %d resolutions%s"
                                     % (len(lines), total, " (%s)" % exc if exc else ""), detail=detail)
            time.sleep(0.05)

    def __exit__(self, *exc_info):
        try:
            if exc_info[0] is not None:
                self.leaving = True  # the probe's wait raises: it and its children are killed
            with open(os.path.join(self.tmp, "done"), "w", encoding="utf-8"):
                pass
            self.thread.join()
        finally:
            shutil.rmtree(self.tmp, ignore_errors=True)
        return False


def imports_cache(target, env):
    """Where the variant runner remembers what resolving this command imported (None: nowhere).
    Keyed by interpreter, what it runs and its module path; ``FLAGTRACE_CACHE_DIR`` (or
    ``XDG_CACHE_HOME``) chooses the folder, ``FLAGTRACE_CACHE_DIR=`` turns it off."""
    environ = os.environ if env is None else env
    folder = cache_folder()
    if not folder:
        return None
    key = json.dumps([os.path.realpath(target.interpreter), target.python_options, target.mode, target.target,
                      environ.get("PYTHONPATH", ""), __version__])
    return os.path.join(folder, "imports-%s.txt" % hashlib.sha1(key.encode()).hexdigest()[:16])


def _load(path):
    try:
        with open(path, encoding="utf-8") as fh:
            return json.load(fh)
    except (OSError, ValueError):
        return None


def _read_progress(path):
    """The finished variants' lines (status, returncode, seconds), in the order they ran."""
    try:
        with open(path, encoding="utf-8") as fh:
            return [json.loads(line) for line in fh if line.endswith("\n")]
    except (OSError, ValueError):
        return []
