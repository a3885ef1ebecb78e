"""vLLM under a simulated GPU (``--gpu``), recording or not: what vLLM asks that the generic
simulation does not answer. Its own copy of pynvml, and ``torch.ops._C`` when its compiled
extension could not load. Nothing here runs without ``--gpu``.
Standard library only, Python >= 3.9.
"""
import functools
import sys

# vLLM reads the GPU through its own copy of pynvml.
PYNVML_MODULES = ("vllm.third_party.pynvml",)
# Capability queries vLLM asks its compiled ops (torch.ops._C), by compute capability (major*10+minor),
# answered under simulation when the real extension could not load. The rules are the ops' C++ ones.
EXTENSIONS = ("vllm._C", "vllm._C_stable_libtorch")  # the ones that register torch.ops._C
CAPABILITY_OPS = {
    "cutlass_scaled_mm_supports_fp8": lambda cap: cap >= 89,
    "cutlass_scaled_mm_supports_block_fp8": lambda cap: cap >= 90,
    "cutlass_scaled_mm_supports_fp4": lambda cap: cap >= 100,
    "mxfp4_experts_quant_supported": lambda cap: 100 <= cap < 110,
    "cutlass_group_gemm_supported": lambda cap: 90 <= cap < 110,
}


def setup(probe):
    simulation = getattr(probe, "simulation", None)
    if simulation is None:
        return
    for name in PYNVML_MODULES:
        simulation.patch_pynvml_module(name)
    probe.imports.on_import("torch", functools.partial(_compiled_ops, probe))


def _compiled_ops(probe, torch):
    """``torch.ops._C`` when vLLM's extension could not load: the capability queries answer from
    the simulated GPU; a name vLLM tests with ``hasattr`` stays absent (it picks kernels by it);
    any other name (a module-level ``torch.ops._C.rotary_embedding.default``) is a placeholder op."""
    import linecache

    from ..sim.standins import _Stub

    namespace = torch.ops._C
    base = type(namespace)

    class CompiledOps(base):
        def __getattr__(self, name):
            try:
                return base.__getattr__(self, name)
            except AttributeError:
                if name.startswith("__") or not _extension_missing():
                    raise
            caller = sys._getframe(1)
            if name in CAPABILITY_OPS:
                def op(capability, _name=name, _rule=CAPABILITY_OPS[name]):
                    result = bool(_rule(int(capability)))
                    probe.trace.hardware("torch.ops._C.%s(%s)" % (_name, capability), result, sys._getframe(2))
                    return result

                return op
            if "hasattr(" in linecache.getline(caller.f_code.co_filename, caller.f_lineno):
                raise AttributeError(name)
            probe.simulation.standins.note("torch.ops._C.%s" % name, "placeholder op: vLLM's extension is stood in")
            return _Stub("torch.ops._C." + name)

    try:
        namespace.__class__ = CompiledOps
    except TypeError as exc:
        probe.recorder.failed("simulating torch.ops._C", exc)


def _extension_missing():
    return any(getattr(sys.modules.get(name), "__flagtrace_stand_in__", False) for name in EXTENSIONS)
