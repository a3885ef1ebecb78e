"""Tool-side adapters: which classes to watch, where to stop and what to set up in the target.

Everything that knows a framework (and its versions) lives in its adapter; the generic one
takes ``--watch`` and ``--stop-at`` for any Python program.
"""
from ..exitcodes import ExitCode, FlagtraceError
from .generic import GenericAdapter
from .sglang import SGLangAdapter
from .vllm import VLLMAdapter

ADAPTERS = [SGLangAdapter, VLLMAdapter]  # framework adapters, tried in order before the generic one
NAMES = ("auto", "generic", "sglang", "vllm")


def run_frameworks():
    """Framework package -> the probe-side set-up its first import runs under ``flagtrace run``, and
    which of the process's arguments name a model (stood in there as explain does here)."""
    return {ad.package: {"adapter": ad.name, "setup": list(ad.setup), "models": ad.model_spec()}
            for ad in (a() for a in ADAPTERS)}


def choose_adapter(target, asked):
    """``asked``: launch.asked.Asked."""
    if asked.adapter not in NAMES:
        raise FlagtraceError("unknown adapter %r; known: %s" % (asked.adapter, ", ".join(NAMES)),
                             ExitCode.USAGE)
    for adapter_class in ADAPTERS:
        if adapter_class.matches(target, asked):
            return adapter_class()
    return GenericAdapter()


def adapter_named(name):
    """The framework adapter called ``name`` (an instance), or None."""
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
