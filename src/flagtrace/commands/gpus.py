"""``flagtrace gpus [--toml]``: the GPU profiles --gpu can simulate."""
from ..core import gpus
from ..core.exitcodes import ExitCode

HELP = "list the GPU profiles --gpu can simulate"


def add_arguments(p):
    p.add_argument("--toml", action="store_true", help="print the profiles as TOML (a template)")


def run(req):
    out = req.out
    if req.opts.toml:
        with open(gpus.BUILTIN, encoding="utf-8") as fh:
            out.write(fh.read())
        return ExitCode.OK
    out.write("%-14s %-46s %9s  %-5s %5s  %s\n" % ("NAME", "DEVICE", "MEMORY", "CC", "SMs", "ALIASES"))
    for name, p in gpus.load_profiles().items():
        out.write("%-14s %-46s %6d MiB  %-5s %5d  %s\n" % (
            name, p["device_name"], p["memory_mib"], "%d.%d" % tuple(p["compute_capability"]),
            p["sm_count"], ", ".join(p.get("aliases", []))))
    out.write("\nUse --gpu NAMExCOUNT (e.g. --gpu B200x7); --gpu-profile FILE.toml adds your own.\n")
    return ExitCode.OK
