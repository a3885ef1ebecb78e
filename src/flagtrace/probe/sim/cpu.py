"""A command that targets the CPU (SGLang's ``--device cpu``), run without ``--gpu``: no GPU is simulated, but
the framework's native kernel packages that flagtrace's release environments leave out (``sgl_kernel``: its CPU
build is not on PyPI) are stood in for where their import fails, as under --gpu (standins.json, vendor "cpu"),
and recorded. The real module is always tried first; on a box with the kernels installed nothing is stood in.
Standard library only, Python >= 3.9.
"""
from .standins import StandIns


def setup(probe):
    if probe.request.get("gpu"):
        return  # --gpu as well: the GPU simulation's stand-ins serve
    standins = StandIns(probe, {"vendor": "cpu"})
    standins.install()
    probe.trace.simulation = {
        "cpu": probe.request.get("cpu_target"), "stand_ins": standins.used,
        "describe": "a CPU target (%s): no GPU simulated; native kernels stood in where their import fails"
                    % probe.request.get("cpu_target")}
