"""Tool-side adapters: which classes to watch, where to stop and what to set up in the target.

Everything that knows a framework (and its versions) lives in its adapter; the generic one takes
``--watch`` and ``--stop-at`` for any Python program. The registry is data (core/frameworks: each
framework's record names its adapter by import path, the generic one last: it takes what no framework
took); an adapter's module is imported here, by that path, only when one is asked for.
"""
import functools
import importlib

from ..core.exitcodes import ExitCode, FlagtraceError
from ..core.frameworks import ADAPTERS as REGISTERED, NAMES


@functools.lru_cache(maxsize=None)
def load(path):
    """The adapter class ``"module:Class"`` names."""
    module, _, name = path.partition(":")
    return getattr(importlib.import_module(module), name)


def adapter_classes():
    """Every adapter class, in the registry's order (the generic one last)."""
    return [load(path) for _, path in REGISTERED]


def check_name(name):
    if name not in NAMES:
        raise FlagtraceError("unknown adapter %r; known: %s" % (name, ", ".join(NAMES)), ExitCode.USAGE)


def choose_adapter(target, asked):
    """``asked``: core.asked.Asked."""
    check_name(asked.adapter)
    return next(a for a in adapter_classes() if a.matches(target, asked))()


def adapter_named(name):
    """The adapter called ``name`` (an instance), or None."""
    path = dict(REGISTERED).get(name)
    return load(path)() if path else None


def annotate(analysis):
    """Let the adapter that produced a trace add what only it knows (e.g. flag renames)."""
    adapter = adapter_named((analysis.get("adapter") or {}).get("name"))
    if adapter is not None:
        adapter.annotate(analysis)
    return analysis
