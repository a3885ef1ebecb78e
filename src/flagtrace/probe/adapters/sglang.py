"""SGLang, inside the target: pick the release's resolution mechanism and hook it.

Releases 0.4.0 - 0.5.14: ``ServerArgs`` is a dataclass that ``__post_init__`` mutates in
place; ``prepare_server_args`` parses argv (merging ``--config`` files first, from 0.5.3) and returns
the resolved object. Its return is the stop point: the engine has not started (up to 0.5.3 the HTTP
server is imported before parsing, and the attention backend is chosen later, at model load).
0.5.15 - 0.5.18 add declarations applied at the end (sglang_declarations.py); 0.5.19 (a dataclass)
and 0.5.20 - 0.5.23 (a sealed msgspec record) resolve by declarations in ``resolve_once()``
(sglang_sealed.py). Old releases get compatibility shims under simulation (sglang_compat.py).
Standard library only, Python >= 3.9.
"""
import functools
import inspect
import importlib.util
import os
import sys

from .. import hooks
from .release import installed_version, parse_version
from . import sglang_compat, sglang_declarations, sglang_sealed

WATCH = "sglang.srt.server_args:ServerArgs"
PREPARE = "sglang.srt.server_args:prepare_server_args"
# (first, last) release of each resolution mechanism this adapter knows; "tested": the releases the
# suite runs (the others in the range share the mechanism by a static reading of their source).
MECHANISMS = [
    {"name": "dataclass __post_init__", "first": (0, 4, 0), "last": (0, 5, 14),
     "tested": ["0.4.6.post5", "0.4.10.post2", "0.5.3", "0.5.6", "0.5.9", "0.5.10.post1", "0.5.11", "0.5.12",
                "0.5.13"],
     "stop_after": PREPARE},
    {"name": "dataclass __post_init__ + declaration stash", "first": (0, 5, 15), "last": (0, 5, 18),
     "tested": ["0.5.15"], "stop_after": PREPARE, "declarations": "sglang.srt.arg_groups.overrides"},
    {"name": "dataclass resolved by declarations in resolve_once()", "first": (0, 5, 19), "last": (0, 5, 19),
     "tested": ["0.5.19"], "sealed": True},
    {"name": "sealed msgspec record, declarations only", "first": (0, 5, 20), "last": (0, 5, 23),
     "tested": ["0.5.23"], "sealed": True},
]
# Releases whose real entry point cannot be run under simulation on today's torch, with why.
NOT_SIMULATED = [((0, 4, 0), (0, 4, 0),
                  "its launch_server imports the whole server before parsing, including vllm 0.6 "
                  "(which needs torch 2.5) and outlines; a stand-in vllm breaks AutoConfig.register")]
# Hardware predicates whose answers decide backends; they are lru_cached, so torch is asked
# once and the answer is reused: record every call, with the code that asked.
HARDWARE_HELPERS = (
    "is_cuda", "is_hip", "is_npu", "is_xpu", "is_cpu", "is_mps", "is_musa",
    "is_hopper_with_cuda_12_3", "is_blackwell", "is_blackwell_supported", "is_sm120_supported",
    "is_sm100_supported", "is_sm90_supported", "is_flashinfer_available", "get_device_sm",
    "get_device_capability", "get_device_memory_capacity", "get_nvgpu_memory_capacity",
    "get_device_name", "get_device", "is_no_spec_infer_or_topk_one", "is_sm100_or_sm110_supported",
    "is_gfx95_supported", "is_mnnvl_fabric_device",
)
# Hardware read at import by code that never reaches server-argument resolution: flashinfer's JIT
# compilation context (the architectures to compile kernels for) and its KDA kernels (which
# kernels load). A process imported under one simulated GPU may still resolve variants of another
# (probe/variants.py); any other import-time read keeps them apart.
PRIVATE_IMPORT_READS = (("flashinfer/compilation_context.py", "CompilationContext.__init__"),
                        ("flashinfer/kda_kernels/__init__.py", "<module>"))
# Where those predicates live, by release (0.4.10 - 0.5.1 keep the sm checks in layers/utils).
HELPER_MODULES = ("sglang.srt.utils.common", "sglang.srt.utils", "sglang.srt.layers.utils")


def mechanism_for(version):
    v = parse_version(version)
    for mech in MECHANISMS:
        if mech["first"] <= v <= mech["last"]:
            return mech
    return None


def supported_text():
    return "%s-%s; tested: %s" % (".".join(map(str, MECHANISMS[0]["first"])), ".".join(map(str, MECHANISMS[-1]["last"])),
                                  ", ".join(t for m in MECHANISMS for t in m["tested"]))


def setup(probe):
    version = installed_version("sglang")
    trace = probe.trace
    if version is None:
        trace.outcome = {"status": "no_framework",
                         "message": "SGLang is not installed for %s" % sys.executable}
        probe.finish(3)
    mech = mechanism_for(version)
    info = {"name": "sglang", "version": version,
            "describe": "sglang %s (%s)" % (version, mech["name"] if mech else "unsupported")}
    trace.request["adapter_info"] = info
    if mech is None:
        trace.outcome = {"status": "unsupported", "version": version, "message": (
            "SGLang %s is outside the releases flagtrace's SGLang adapter supports (%s); "
            "generic mode still works: --adapter generic --watch %s --stop-at MODULE:FUNCTION"
            % (version, supported_text(), WATCH))}
        probe.finish(3)
    refused = next((why for first, last, why in NOT_SIMULATED if first <= parse_version(version) <= last), None)
    if refused and probe.request.get("gpu"):
        trace.outcome = {"status": "unsupported", "version": version, "message": (
            "SGLang %s cannot run on a simulated GPU: %s; explain it on the GPU box (--via PREFIX, or "
            "flagtrace on that machine without --gpu)" % (version, refused))}
        probe.finish(3)
    _after_stop(probe, info)
    if mech.get("sealed"):
        sglang_sealed.setup(probe)
    else:
        probe.add_watch(WATCH)
        probe.add_stop_after(mech["stop_after"])
    for name in HELPER_MODULES:
        probe.imports.on_import(name, functools.partial(_wrap_helpers, probe))
    if getattr(probe, "simulation", None) is not None:
        probe.simulation.private_reads.update(PRIVATE_IMPORT_READS)
    sglang_compat.setup(probe)
    probe.imports.on_import("sglang.srt.environ", functools.partial(_wrap_envs, probe))
    if mech.get("declarations"):
        probe.imports.on_import(mech["declarations"], functools.partial(sglang_declarations.install, probe))


# Code after the stop point that still assigns ServerArgs fields (the attention backend up to 0.5.3):
# its source is shipped so the report can say which unset fields are decided there.
AFTER_STOP = [{"path": ("srt", "model_executor", "model_runner.py"), "func": "ModelRunner.model_specific_adjustment",
               "receiver": "server_args", "when": "at model load"}]


def _after_stop(probe, info):
    spec = importlib.util.find_spec("sglang")
    roots = list(spec.submodule_search_locations or []) if spec else []
    sites = []
    for site in AFTER_STOP:
        path = next((os.path.join(r, *site["path"]) for r in roots if os.path.exists(os.path.join(r, *site["path"]))), None)
        if path is not None:
            probe.trace.files.add(path)
            sites.append({"file": path, "func": site["func"], "receiver": site["receiver"], "when": site["when"]})
    info["after_stop"] = sites


def _wrap_helpers(probe, module):
    recorder = probe.recorder
    for name in HARDWARE_HELPERS:
        func = module.__dict__.get(name)
        if func is None or not callable(func) or getattr(func, "_flagtrace_helper", False):
            continue

        def helper(*args, _func=func, _name=name, **kwargs):
            result = _func(*args, **kwargs)
            if recorder.depth > 0 or recorder.resolving:
                probe.trace.hardware("%s()" % _name, result, sys._getframe(1))
            return result

        simulation = getattr(probe, "simulation", None)
        if simulation is not None:  # asked again under another GPU, its cache bypassed (sim/gpu.py)
            simulation.answers["%s()" % name] = inspect.unwrap(func)
        functools.update_wrapper(helper, func)
        for attr in ("cache_clear", "cache_info", "cache_parameters"):
            if hasattr(func, attr):
                setattr(helper, attr, getattr(func, attr))
        helper._flagtrace_helper = True
        setattr(module, name, helper)


def _wrap_envs(probe, module):
    """``envs.X.set(v)`` writes os.environ; credit it to the code that called ``set``."""
    field_class = getattr(module, "EnvField", None)
    if field_class is None or not hasattr(field_class, "set"):
        return
    orig = field_class.set

    def set(self, value):
        import os

        name = getattr(self, "name", None)
        old = os.environ.get(name) if name else None
        with probe.quiet():
            result = orig(self, value)
        if name:
            probe.trace.env(name, old, os.environ.get(name), hooks.caller(2),
                            how="envs.%s.set(%r)" % (name, value))
        return result

    field_class.set = set


def supported_range():
    """(first, last) release numbers the adapter supports (--release checks against it)."""
    return MECHANISMS[0]["first"], MECHANISMS[-1]["last"]
