"""How much slower is a program under flagtrace? (bare run vs `flagtrace explain`)

The target, tests/examples/many_writes.py, assigns the fields of a watched config object
100,000 times and prints one line. It is run bare (`python many_writes.py`) and under
`flagtrace explain --watch many_writes:TunedConfig --format json -o /dev/null`, interleaved,
N times each; the medians and their ratio, measured in this run, are printed. A last run
with --save-trace splits flagtrace's time into the probe inside the target and the rest.

    .venv/bin/python bench/overhead.py [--runs 5] [--writes 100000]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TARGET = os.path.join(ROOT, "tests", "examples", "many_writes.py")
WATCH = "many_writes:TunedConfig"


def timed(argv):
    started = time.perf_counter()
    proc = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT)
    seconds = time.perf_counter() - started
    if proc.returncode != 0:
        sys.exit("failed (%d): %s\n%s" % (proc.returncode, " ".join(argv), proc.stderr.decode()[-2000:]))
    return seconds


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5, help="runs of each (default %(default)s)")
    parser.add_argument("--writes", type=int, default=100000, help="field writes in the target")
    parser.add_argument("--python", default=sys.executable, help="interpreter for the target")
    opts = parser.parse_args()

    target = [opts.python, TARGET, "--writes", str(opts.writes)]
    traced = [sys.executable, "-m", "flagtrace", "explain", "--watch", WATCH, "--format", "json",
              "-o", os.devnull, "--"] + target
    bare_times, traced_times = [], []
    timed(target)  # warm the file cache and the bytecode cache
    for i in range(opts.runs):
        bare_times.append(timed(target))
        traced_times.append(timed(traced))
        print("run %d/%d: bare %.3fs  flagtrace %.3fs" % (i + 1, opts.runs, bare_times[-1], traced_times[-1]),
              file=sys.stderr)
    bare, under = statistics.median(bare_times), statistics.median(traced_times)

    with tempfile.TemporaryDirectory() as tmp:
        saved = os.path.join(tmp, "trace.json")
        total = timed(traced[:-len(target) - 1] + ["--save-trace", saved, "--"] + target)
        with open(saved, encoding="utf-8") as fh:
            trace = json.load(fh)
        size = os.path.getsize(saved)
    writes = sum(1 for e in trace["events"] if e["kind"] == "write")

    print("target: %d field writes (%s), %d runs each, interleaved" % (opts.writes, os.path.relpath(TARGET, ROOT),
                                                                        opts.runs))
    print("bare      median %8.3f s" % bare)
    print("flagtrace median %8.3f s   (explain --format json -o /dev/null)" % under)
    print("ratio flagtrace/bare: %.1fx" % (under / bare))
    print("breakdown of one more traced run (%.2f s, --save-trace): probe inside the target until the trace "
          "is built %.2f s; the rest (trace written, read back, analysed, reported) %.2f s; %d write events, "
          "trace %.1f MB" % (total, trace["duration_s"], total - trace["duration_s"], writes, size / 1e6))


if __name__ == "__main__":
    main()
