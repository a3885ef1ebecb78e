"""Many resolutions of one command from one import of its framework: the probe's variant mode
(probe/variants.py) forks a child per variant, each traced exactly as ``flagtrace explain`` would
trace that command alone. Leaves no process or file behind."""
import dataclasses
import json
import os
import shutil
import tempfile

from ..exitcodes import FlagtraceError
from .local import read_bytes, run_probe, stderr_tail

SETUP_ALLOWANCE = 600.0  # the parent's own start: interpreter, probe, the framework's import


@dataclasses.dataclass
class Variant:
    args: list  # what the target sees as sys.argv[1:]
    env: dict = dataclasses.field(default_factory=dict)  # K -> value; None: removed
    label: str = ""


@dataclasses.dataclass
class VariantResult:
    variant: Variant
    status: str  # "ran" | "timeout"
    returncode: object  # int, or None after a timeout
    seconds: float
    trace: object  # the variant's trace (dict), or None where it wrote none
    output: bytes  # what it printed (stdout and stderr together)


def run_variants(target, request, variants, timeout_each, env=None, preimport=(), on_progress=None):
    """Trace ``target`` once per variant; results in the order of ``variants``.
    ``on_progress(done, total)`` is called while they run."""
    tmp = tempfile.mkdtemp(prefix="flagtrace-variants-")
    try:
        specs = [{"args": list(v.args), "env": dict(v.env), "trace_path": os.path.join(tmp, "%d.json" % i),
                  "output_path": os.path.join(tmp, "%d.out" % i), "modules_path": os.path.join(tmp, "%d.modules" % i)}
                 for i, v in enumerate(variants)]
        progress_path = os.path.join(tmp, "progress")
        request = dict(request, variants=specs, variant_timeout=timeout_each, preimport=list(preimport),
                       progress_path=progress_path)

        def tick(_seconds):
            on_progress(_count_lines(progress_path), len(variants))

        result = run_probe(target, request, SETUP_ALLOWANCE + timeout_each * len(variants), env=env,
                           on_wait=tick if on_progress else None)
        summary = result.trace.get("variants") if isinstance(result.trace, dict) else None
        if not isinstance(summary, list) or len(summary) != len(variants):
            raise FlagtraceError("the variant runner ended without its summary (exit status %s)"
                                 % result.returncode, detail=stderr_tail(result.stderr))
        return [VariantResult(v, s.get("status", "ran"), s.get("returncode"), s.get("seconds", 0.0),
                              _load(spec["trace_path"]), read_bytes(spec["output_path"]))
                for v, s, spec in zip(variants, summary, specs)]
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _load(path):
    try:
        with open(path, encoding="utf-8") as fh:
            return json.load(fh)
    except (OSError, ValueError):
        return None


def _count_lines(path):
    try:
        with open(path, encoding="utf-8") as fh:
            return sum(1 for _ in fh)
    except OSError:
        return 0
