"""The framework registry: one data record per framework (frameworks/<name>.py), nothing that runs.

A record says what the rest of flagtrace may know about a framework without loading its adapter: its
entry points, the environment it reads, where its source lives, the options that name models, how
``--release`` builds it, and the adapter that does the work, named by its import path
(``"flagtrace.adapters.sglang:SGLangAdapter"``, loaded by ``adapters.load`` only where it is needed).
"""
from ..pinlib import shipped
from .record import Framework  # noqa: F401 - the record's type
from .sglang import RECORD as SGLANG
from .vllm import RECORD as VLLM

# Variables every Python program's resolution may read (the hub's, the visible devices, the import path);
# each framework adds its own (``env``), and reports keep these only (env_patterns()).
COMMON_ENV = ("HF_*", "CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "PYTHONPATH")
# The adapter for any other Python program (--watch, --stop-at): last in the registry, it takes what no
# framework took.
GENERIC = ("generic", "flagtrace.adapters.generic:GenericAdapter")


FRAMEWORKS = (SGLANG, VLLM)
ADAPTERS = tuple((r.name, r.adapter) for r in FRAMEWORKS) + (GENERIC,)  # (name, "module:Class"), tried in order
NAMES = ("auto",) + tuple(name for name, _ in ADAPTERS)


def named(name):
    """The record of framework ``name``, or None."""
    return next((r for r in FRAMEWORKS if r.name == name), None)


def env_patterns():
    """The environment variables reports keep, as patterns (``SGLANG_*``, ``CUDA_VISIBLE_DEVICES``): each
    framework's own, then those every program may read."""
    out = []
    for pattern in [p for r in FRAMEWORKS for p in r.env] + list(COMMON_ENV):
        if pattern not in out:
            out.append(pattern)
    return out


def run_frameworks():
    """Framework package -> the probe-side set-up its first import runs under ``flagtrace run``, and which of
    the process's arguments name a model (stood in there as explain does here)."""
    return {r.package: {"adapter": r.name, "setup": list(r.setup), "models": r.model_spec()} for r in FRAMEWORKS}


def with_tested(adapter):
    """The analysed adapter section with ``tested``: whether the test suite runs that release (None: no framework
    release, or one of no record's)."""
    if not isinstance(adapter, dict):
        return adapter
    record = named(adapter.get("name"))
    if record is None or not adapter.get("version"):
        return adapter
    return dict(adapter, tested=adapter["version"] in record.tested)


def by_script(word):
    """The framework whose console script is ``word``, or None."""
    return next((r for r in FRAMEWORKS if word in r.scripts), None)


def source_url(analysis, relpath, line):
    """A link to a framework file at the analysed release's tag (None: not the framework's)."""
    info = analysis.get("adapter") or {}
    record = named(info.get("name"))
    return record.source_url(relpath, line, info.get("version")) if record is not None else None


def release_hint(framework):
    """What to add when the command's interpreter lacks the framework: the newest release flagtrace ships pins
    for, built on demand."""
    releases = shipped(framework)
    if not releases:
        return "run the command with an interpreter that has it"
    return ("add --release %s==%s (or the release you deploy) and flagtrace builds that release's environment "
            "here, once" % (framework, releases[-1]))
