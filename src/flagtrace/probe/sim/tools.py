"""Stand-ins for the GPU command-line tools (``nvidia-smi``; ``rocminfo``, ``rocm-smi`` for AMD)
that answer as the simulated GPUs would.

Run as a script (``tools.py TOOL ARGS``, profile JSON in $FLAGTRACE_SIM_GPU) from the fake tools
put first on PATH, and imported by the simulator to record what they answered.
Standard library only, Python >= 3.9.
"""
import json
import os
import sys


def _field(profile, index, name):
    mem = profile["memory_mib"]
    free = profile.get("free_mib", mem - 512)
    values = {
        "name": profile["device_name"], "gpu_name": profile["device_name"],
        "memory.total": "%d MiB" % mem, "memory.free": "%d MiB" % free,
        "memory.used": "%d MiB" % (mem - free), "driver_version": profile["driver_version"],
        "compute_cap": "%d.%d" % tuple(profile["compute_capability"]), "index": str(index),
        "count": str(profile.get("count", 1)), "uuid": "GPU-00000000-0000-0000-0000-%012d" % index,
        "pci.bus_id": "00000000:%02X:00.0" % (0x18 + index), "persistence_mode": "Enabled",
        "temperature.gpu": "35", "utilization.gpu": "0 %", "power.draw": "120.00 W",
        "clocks.max.sm": "1980 MHz", "mig.mode.current": "[N/A]",
    }
    return values.get(name, "[N/A]")


def rocminfo(profile, argv):
    """The agent blocks of ``rocminfo`` that tools grep for (name, gfx arch, VRAM pool size)."""
    blocks = []
    for i in range(profile.get("count", 1)):
        arch = profile.get("gcn_arch", "gfx942").split(":")[0]
        blocks.append("\n".join([
            "*******", "Agent %d" % (i + 2), "*******",
            "  Name:                    %s" % arch,
            "  Marketing Name:          %s" % profile["device_name"],
            "  Vendor Name:             AMD",
            "  Device Type:             GPU",
            "  Compute Unit:            %d" % profile["sm_count"],
            "  Pool Info:",
            "    Pool 1",
            "      Segment:                 GLOBAL; FLAGS: COARSE GRAINED",
            "      Size:                    %d(0x%x) KB" % (profile["memory_mib"] * 1024, profile["memory_mib"] * 1024),
            "      Allocatable:             TRUE",
        ]))
    return 0, "ROCk module is loaded\n" + "\n".join(blocks) + "\n"


def rocm_smi(profile, argv):
    rows = []
    for i in range(profile.get("count", 1)):
        total = profile["memory_mib"] * 1024 * 1024
        rows.append("GPU[%d]\t\t: VRAM Total Memory (B): %d" % (i, total))
        rows.append("GPU[%d]\t\t: Card Series: \t\t%s" % (i, profile["device_name"]))
    return 0, "\n".join(rows) + "\n"


TOOLS = {"nvidia": ("nvidia-smi",), "amd": ("rocminfo", "rocm-smi")}


def answer(tool, profile, argv):
    """(exit status, stdout) for ``TOOL argv``."""
    if tool == "rocminfo":
        return rocminfo(profile, argv)
    if tool == "rocm-smi":
        return rocm_smi(profile, argv)
    return nvidia_smi(profile, argv)


def nvidia_smi(profile, argv):
    """(exit status, stdout) for ``nvidia-smi argv``."""
    count = profile.get("count", 1)
    query = next((a.split("=", 1)[1] for a in argv if a.startswith("--query-gpu=")), None)
    if query is None and "--query-gpu" in argv:
        query = argv[argv.index("--query-gpu") + 1]
    fmt = next((a.split("=", 1)[1] for a in argv if a.startswith("--format=")), "csv")
    indices = list(range(count))
    for flag in ("-i", "--id"):
        if flag in argv:
            indices = [int(x) for x in argv[argv.index(flag) + 1].split(",")]
    if query is not None:
        names = [q.strip() for q in query.split(",") if q.strip()]
        lines = []
        if "noheader" not in fmt:
            lines.append(", ".join(names))
        for i in indices:
            values = [_field(profile, i, n) for n in names]
            if "nounits" in fmt:
                values = [v.split(" ")[0] if v.endswith(("MiB", "MHz", "W", "%")) else v for v in values]
            lines.append(", ".join(values))
        return 0, "\n".join(lines) + "\n"
    if "-L" in argv:
        return 0, "".join("GPU %d: %s (UUID: %s)\n" % (i, profile["device_name"], _field(profile, i, "uuid"))
                          for i in indices)
    if argv[:1] == ["topo"]:
        head = "\t" + "\t".join("GPU%d" % i for i in indices)
        rows = [head] + ["GPU%d\t" % i + "\t".join("X" if i == j else "NV18" for j in indices) for i in indices]
        return 0, "\n".join(rows) + "\n"
    rows = ["NVIDIA-SMI %s    Driver Version: %s    CUDA Version: %s"
            % (profile["driver_version"], profile["driver_version"], profile.get("cuda_version", ""))]
    rows += ["|   %d  %s   %s |" % (i, profile["device_name"], _field(profile, i, "memory.total")) for i in indices]
    return 0, "\n".join(rows) + "\n"


if __name__ == "__main__":
    status, out = answer(sys.argv[1], json.loads(os.environ["FLAGTRACE_SIM_GPU"]), sys.argv[2:])
    sys.stdout.write(out)
    sys.exit(status)
