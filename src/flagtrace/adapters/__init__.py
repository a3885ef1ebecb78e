"""Tool-side adapters: which classes to watch, where to stop and what to set up in the target.

Everything that knows a framework (and its versions) lives in its adapter; the generic one
takes ``--watch`` and ``--stop-at`` for any Python program.
"""
from .generic import GenericAdapter

ADAPTERS = []  # framework adapters, tried in order before the generic one


def choose_adapter(target, opts):
    for adapter_class in ADAPTERS:
        if adapter_class.matches(target, opts):
            return adapter_class()
    return GenericAdapter()
