"""Tool-side adapters: which classes to watch, where to stop and what to set up in the target.

Everything that knows a framework (and its versions) lives in its adapter; the generic one
takes ``--watch`` and ``--stop-at`` for any Python program. The registry: ADAPTERS, tried in order
(the generic one last: it takes what no framework took).
"""
from ..exitcodes import ExitCode, FlagtraceError
from .base import COMMON_ENV
from .generic import GenericAdapter, check_specs  # noqa: F401 - check_specs: flagtrace run's --watch
from .sglang import SGLangAdapter
from .vllm import VLLMAdapter

FRAMEWORKS = [SGLangAdapter, VLLMAdapter]
ADAPTERS = FRAMEWORKS + [GenericAdapter]
NAMES = ("auto",) + tuple(a.name for a in ADAPTERS)


def env_patterns():
    """The environment variables reports keep, as patterns (``SGLANG_*``, ``CUDA_VISIBLE_DEVICES``):
    each adapter's own, then those every program may read."""
    out = []
    for pattern in [p for a in ADAPTERS for p in a.env] + list(COMMON_ENV):
        if pattern not in out:
            out.append(pattern)
    return out


def check_name(name):
    if name not in NAMES:
        raise FlagtraceError("unknown adapter %r; known: %s" % (name, ", ".join(NAMES)), ExitCode.USAGE)


def run_frameworks():
    """Framework package -> the probe-side set-up its first import runs under ``flagtrace run``, and
    which of the process's arguments name a model (stood in there as explain does here)."""
    return {ad.package: {"adapter": ad.name, "setup": list(ad.setup), "models": ad.model_spec()}
            for ad in (a() for a in FRAMEWORKS)}


def choose_adapter(target, asked):
    """``asked``: launch.asked.Asked."""
    check_name(asked.adapter)
    return next(a for a in ADAPTERS if a.matches(target, asked))()


def adapter_named(name):
    """The adapter called ``name`` (an instance), or None."""
    return next((a() for a in ADAPTERS if a.name == name), None)


def annotate(analysis):
    """Let the adapter that produced a trace add what only it knows (e.g. flag renames)."""
    adapter = adapter_named((analysis.get("adapter") or {}).get("name"))
    if adapter is not None:
        adapter.annotate(analysis)
    return analysis


def source_url(analysis, relpath, line):
    """A link to a framework file at the analysed release's tag (None: not the framework's)."""
    info = analysis.get("adapter") or {}
    adapter = adapter_named(info.get("name"))
    return adapter.source_url(relpath, line, info.get("version")) if adapter is not None else None
