"""Compatibility shims that let an old SGLang release import on today's torch / triton under
simulation (the simulation's torch is the shared venv's, not the one the release shipped with).

Each shim fills in exactly one name the release uses and today's library no longer has, only when
that name is missing (or, for ``register_fake``, only for operators of a stood-in ``sgl_kernel``),
and is recorded in the trace (``simulation.compat``) when it is applied. On a real GPU box (no
``--gpu``) none is installed: the release runs against its own libraries; a CPU target (``--device cpu``)
gets them, as it gets the kernel stand-ins (probe/sim/cpu.py).
Standard library only, Python >= 3.9.
"""
import functools
import os
import sys


def _note(probe, text):
    used = list((probe.trace.simulation or {}).get("compat") or [])
    if text not in used:
        used.append(text)
        probe.trace.simulation = dict(probe.trace.simulation or {}, compat=used)


def _provide(probe, module, names):
    """Answer ``module.NAME`` for the missing ``names`` (PEP 562 ``__getattr__``): noted on first use,
    so a release that never asks for a name is not told it got a shim."""
    missing = {name: made for name, made in names.items() if name not in module.__dict__}
    if not missing:
        return
    previous = module.__dict__.get("__getattr__")

    def __getattr__(name):
        make = missing.get(name)
        if make is None:
            if previous is not None:
                return previous(name)
            raise AttributeError("module %r has no attribute %r" % (module.__name__, name))
        value, why = make()
        module.__dict__[name] = value
        _note(probe, "%s.%s (%s)" % (module.__name__, name, why))
        return value

    module.__getattr__ = __getattr__


def triton_cache_dirs(probe, module):
    """<= 0.4.6: ``from triton.runtime.cache import default_cache_dir, ...`` (triton 3.4 moved them
    to ``triton.knobs.cache``)."""
    def maker(name, attr):
        def make():
            def getter():
                cache = getattr(getattr(sys.modules.get("triton"), "knobs", None), "cache", None)
                return getattr(cache, attr, None) or os.path.join(os.path.expanduser("~"), ".triton", attr)

            getter.__name__ = name
            return getter, "removed in triton 3.4; answers triton.knobs.cache.%s" % attr
        return make

    _provide(probe, module, {name: maker(name, attr) for name, attr in (
        ("default_cache_dir", "dir"), ("default_dump_dir", "dump_dir"), ("default_override_dir", "override_dir"))})


def torch_amx_probe(probe, module):
    """0.4.10 - 0.5.1: ``torch._C._cpu._is_amx_tile_supported()`` unguarded at import (torch 2.14
    has it as ``torch.cpu._is_amx_tile_supported``)."""
    cpu = getattr(getattr(module, "_C", None), "_cpu", None)
    if cpu is None:
        return

    def make():
        try:
            import torch.cpu as torch_cpu

            return torch_cpu._is_amx_tile_supported, "now torch.cpu._is_amx_tile_supported"
        except (ImportError, AttributeError):
            return (lambda: False), "gone from torch; answers False"

    _provide(probe, cpu, {"_is_amx_tile_supported": make})


def fake_kernels_of_stand_ins(probe, module):
    """<= 0.5.9: ``torch.library.register_fake("sgl_kernel::OP")`` at import fails on a stood-in
    sgl_kernel (the operator does not exist). Skip those registrations, as 0.5.10's own
    ``register_fake_if_exists`` does."""
    orig = getattr(module, "register_fake", None)
    if orig is None or getattr(orig, "_flagtrace_compat", False):
        return

    def register_fake(op, *args, **kwargs):
        name = op if isinstance(op, str) else ""
        top = name.split("::", 1)[0]
        if "::" in name and getattr(sys.modules.get(top), "__flagtrace_stand_in__", False):
            _note(probe, "torch.library.register_fake(%s::*) skipped (%s is stood in for)" % (top, top))
            if args and callable(args[0]):
                return args[0]
            return lambda func: func
        return orig(op, *args, **kwargs)

    functools.update_wrapper(register_fake, orig)
    register_fake._flagtrace_compat = True
    module.register_fake = register_fake


SHIMS = {"triton.runtime.cache": triton_cache_dirs, "torch": torch_amx_probe, "torch.library": fake_kernels_of_stand_ins}


def setup(probe):
    """Under simulation only (--gpu, or a CPU target: probe/sim/cpu.py); also a set-up step of its own
    (``adapters.sglang_compat``) for the untraced baseline that benchmarks and observer-effect tests compare with."""
    if not probe.request.get("gpu") and not probe.request.get("cpu_target"):
        return
    for module, shim in SHIMS.items():
        probe.imports.on_import(module, functools.partial(shim, probe))
