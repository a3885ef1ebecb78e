"""What the `flagtrace run` bootstrap costs a Python process that never imports a framework.

Under `flagtrace run` every Python process starts with the bootstrap sitecustomize first on
PYTHONPATH: it writes one small record of the process and installs an inert import hook. This
runs `python -c pass` and `python -c "import json"` bare and with the bootstrap (the run
directory prepared exactly as `flagtrace run` prepares it), interleaved, N times each, and
prints the medians (wall clock, and the CPU time of the process, which other load on the machine
disturbs less), the extra milliseconds and the ratio, all measured in this one run.

    .venv/bin/python bench/bootstrap.py [--runs 60] [--python PATH]
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "src"))

from flagtrace.probe.bootstrap.supervise import environment, prepare  # noqa: E402
from flagtrace.core.frameworks import env_patterns, run_frameworks  # noqa: E402

RUN_FRAMEWORKS = run_frameworks()

PROGRAMS = [("python -c pass", "pass"), ('python -c "import json"', "import json")]


def timed(argv, env):
    """(wall seconds, CPU seconds of the child) for one run."""
    started = time.perf_counter()
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - started
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        sys.exit("failed (%d): %s" % (proc.returncode, " ".join(argv)))
    return seconds, usage.ru_utime + usage.ru_stime


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=60, help="runs of each (default %(default)s)")
    parser.add_argument("--python", default=sys.executable, help="interpreter (default: this one)")
    opts = parser.parse_args()
    run_dir = tempfile.mkdtemp(prefix="flagtrace-bench-")
    try:
        request = {"watch": [], "stop_at": [], "user_specs": [], "frameworks": RUN_FRAMEWORKS,
                   "names": list(RUN_FRAMEWORKS), "env": env_patterns(), "live": False, "probe_dir": "", "flagtrace_version": ""}
        site_dir = prepare(run_dir, request)
        bare_env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHONPATH", "FLAGTRACE_"))}
        boot_env = environment(run_dir, site_dir, request, base=bare_env)
        # one warm-up of each (page cache, the bootstrap's own .pyc)
        for _, code in PROGRAMS:
            timed([opts.python, "-c", code], bare_env)
            timed([opts.python, "-c", code], boot_env)
        times = {(label, kind): [] for label, _ in PROGRAMS for kind in ("bare", "boot")}
        for _ in range(opts.runs):
            for label, code in PROGRAMS:
                times[(label, "bare")].append(timed([opts.python, "-c", code], bare_env))
                times[(label, "boot")].append(timed([opts.python, "-c", code], boot_env))
        records = sum(1 for n in os.listdir(run_dir) if n.startswith("proc-"))
        probes = sum(1 for n in os.listdir(run_dir) if n.startswith("trace-"))
    finally:
        shutil.rmtree(run_dir, ignore_errors=True)
    print("interpreter: %s (%d runs of each, interleaved; medians; load average %.2f)" % (
        opts.python, opts.runs, os.getloadavg()[0]))
    print("%-26s %-5s %10s %14s %10s %8s" % ("program", "time", "bare ms", "bootstrap ms", "extra ms", "ratio"))
    for label, _ in PROGRAMS:
        for i, kind in enumerate(("wall", "CPU")):
            bare = statistics.median(t[i] for t in times[(label, "bare")]) * 1000
            boot = statistics.median(t[i] for t in times[(label, "boot")]) * 1000
            print("%-26s %-5s %10.2f %14.2f %+10.2f %7.3fx" % (label if i == 0 else "", kind, bare, boot,
                                                               boot - bare, boot / bare))
    print("process records written: %d, probes loaded: %d (the bootstrap stays inert without a "
          "watched import)" % (records, probes))


if __name__ == "__main__":
    main()
