"""What a CI gate over many deployment commands costs: ``check -f DIR`` over N manifests that share a release
and a GPU (the production-stack chart's Deployment, each with another --max-model-len / --gpu-memory-utilization,
as N services of one chart would differ) against ``explain -f`` of one of them. Those commands share one import
of the framework (the variant engine forks a child per command), so the goal is <= 3x for 20.
Ratios are measured in this one run, interleaved (absolute times mean little on a noisy machine).

    .venv/bin/python bench/gate.py [--commands 20] [--runs 3] [--gpu H100]
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
FLAGTRACE = os.path.join(ROOT, ".venv", "bin", "flagtrace")
MANIFEST = os.path.join(ROOT, "tests", "manifests", "vllm-production-stack.yaml")


def timed(argv, env):
    started = time.perf_counter()
    proc = subprocess.run(argv, env=env, capture_output=True, text=True, cwd=ROOT)
    seconds = time.perf_counter() - started
    if proc.returncode != 0:
        sys.exit("failed (%d): %s\n%s" % (proc.returncode, " ".join(argv), proc.stderr[-2000:]))
    return seconds


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--commands", type=int, default=20)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--gpu", default="H100")
    opts = ap.parse_args()
    work = tempfile.mkdtemp(prefix="ft-gate-bench-")
    env = dict(os.environ, FLAGTRACE_ENVS=os.path.join(ROOT, ".envs"), HF_HUB_OFFLINE="1")
    try:
        text = open(MANIFEST).read()
        for i in range(opts.commands):
            variant = text.replace('"4096"', '"%d"' % (2048 + 256 * i), 1).replace('"0.8"', '"0.%d"' % (70 + i % 25), 1)
            with open(os.path.join(work, "service-%02d.yaml" % i), "w") as fh:
                fh.write(variant.replace("vllm-llama3", "vllm-llama3-%02d" % i))
        one = [FLAGTRACE, "explain", "-f", os.path.join(work, "service-00.yaml"), "--gpu", opts.gpu, "--format",
               "json", "-o", os.devnull]
        gate = [FLAGTRACE, "check", "-f", work, "--gpu", opts.gpu, "--format", "json", "-o", os.devnull]
        timed(one, env)  # warm the page cache and flagtrace's imports cache once
        a, b = [], []
        for _ in range(opts.runs):
            a.append(timed(one, env))
            b.append(timed(gate, env))
        print("explain -f (1 command): %.1fs; check -f over %d commands: %.1fs (medians of %d): %.2fx"
              % (statistics.median(a), opts.commands, statistics.median(b), opts.runs,
                 statistics.median(b) / statistics.median(a)))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
