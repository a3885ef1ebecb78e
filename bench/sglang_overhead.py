"""Overhead of `flagtrace explain` on the SGLang headline case (before 0.5.10: DeepSeek-V3 FP8
with --tp 8), against the bare method.

The bare method is what an engineer does by hand: a plain `python -c` that calls SGLang's
`prepare_server_args` (and, from 0.5.19, `resolve_once`) on the same argv, under the same hardware
simulation and compatibility shims (the probe with recording switched off). Both include interpreter start-up and SGLang's import. Runs are
interleaved and the medians compared in this one run (absolute times on this machine are
noise; the ratio is the result).

    .venv/bin/python bench/sglang_overhead.py [--version V (any built release)] [--runs 3]
"""
import argparse
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "src"))

from flagtrace.core import gpus  # noqa: E402
from flagtrace.launch.command import Target  # noqa: E402
from flagtrace.launch.local import run_probe  # noqa: E402

HEADLINE = ["--model-path", os.path.join(ROOT, "models", "qwen3.6-27b"), "--speculative-algorithm", "EAGLE",
            "--speculative-num-steps", "3", "--speculative-eagle-topk", "1",
            "--speculative-num-draft-tokens", "4",
            "--max-mamba-cache-size", "24", "--mem-fraction-static", "0.92", "--context-length", "8192",
            "--trust-remote-code"]
# Before 0.5.15 the headline needs the strategy flag to resolve; 0.5.20+ no longer knows it.
OLD_STRATEGY = ["--mamba-scheduler-strategy", "extra_buffer"]
# The bare method of each generation: 0.5.19+ resolves in resolve_once(), read via resolution_result.
BARE = ("import sys\n"
        "from sglang.srt.server_args import prepare_server_args\n"
        "FIELDS = %r\n"
        "args = prepare_server_args(sys.argv[1:])\n"
        "if hasattr(type(args), 'resolve_once'):\n"
        "    args.resolve_once()\n"
        "    from sglang.srt.arg_groups.overrides import resolution_result\n"
        "    values = [resolution_result(args, f) for f in FIELDS]\n"
        "else:\n"
        "    values = [getattr(args, f, None) for f in FIELDS]\n"
        "print(*values, flush=True)\n")
# Releases before the hybrid model and the strategy flag (< 0.5.10): DeepSeek-V3 FP8 with --tp 8.
DEEPSEEK = ["--model-path", os.path.join(ROOT, "models", "deepseek-v3-fp8"), "--tp", "8", "--trust-remote-code"]
# --no-teardown: the bare method ends as flagtrace does at its stop point, without the interpreter's
# teardown (which a user running the bare method by hand waits for: 2 s on 0.5.23).
HARD_EXIT = "import os\nos._exit(0)\n"


def case(version):
    """(argv, fields the bare method prints, what it must print) for a release."""
    v = tuple(int("".join(c for c in p if c.isdigit()) or 0) for p in version.split(".")[:3])
    if v < (0, 5, 10):
        return DEEPSEEK, ("tp_size", "page_size"), b"8 "
    if v < (0, 5, 15):
        return HEADLINE + OLD_STRATEGY, ("mamba_scheduler_strategy", "max_running_requests"), b"extra_buffer 48"
    return HEADLINE, ("mamba_radix_cache_strategy", "max_running_requests"), b"extra_buffer 48"


def bare(python, profile, args, fields, expected, teardown=True):
    target = Target(command=[python, "-c", "..."], interpreter=python, python_options=[], mode="code",
                    target=BARE % (fields,) + ("" if teardown else HARD_EXIT), args=list(args))
    started = time.perf_counter()
    result = run_probe(target, {"observe": False, "gpu": profile, "setup": ["sim.gpu", "adapters.sglang_compat"]}, timeout=600)
    seconds = time.perf_counter() - started
    assert result.trace["outcome"].get("exit_code") == 0, result.stderr[-2000:]
    assert expected in result.stdout, result.stdout
    return seconds


def traced(python, args):
    argv = [sys.executable, "-m", "flagtrace", "explain", "--gpu", "B200x7", "--format", "json",
            "-o", os.devnull, "--", python, "-m", "sglang.launch_server", *args]
    started = time.perf_counter()
    proc = subprocess.run(argv, capture_output=True, cwd=ROOT)
    seconds = time.perf_counter() - started
    assert proc.returncode == 0, proc.stderr[-2000:]
    return seconds


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--version", default=os.environ.get("FLAGTRACE_SGLANG", "0.5.11"))
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--no-teardown", action="store_true",
                        help="end the bare method with os._exit after printing, as flagtrace ends")
    opts = parser.parse_args()
    os.environ["SGLANG_ENABLE_SPEC_V2"] = "1"
    python = os.path.join(ROOT, ".envs", "sglang", opts.version, "bin", "python")
    profile = gpus.choose("B200x7")
    args, fields, expected = case(opts.version)
    teardown = not opts.no_teardown
    bare(python, profile, args, fields, expected, teardown)  # warm the page cache for both
    b, t = [], []
    for i in range(opts.runs):
        b.append(bare(python, profile, args, fields, expected, teardown))
        t.append(traced(python, args))
        print("run %d: bare %.2fs  flagtrace %.2fs" % (i + 1, b[-1], t[-1]), flush=True)
    mb, mt = statistics.median(b), statistics.median(t)
    print("sglang %s %s, B200x7, %d runs each, interleaved" % (
        opts.version, "DeepSeek-V3 FP8 --tp 8" if args is DEEPSEEK else "headline case", opts.runs))
    print("median bare method (python -c prepare_server_args [+ resolve_once], same simulation%s): %.2fs"
          % ("" if teardown else ", no teardown", mb))
    print("median flagtrace explain:                                              %.2fs" % mt)
    print("ratio flagtrace / bare: %.3f" % (mt / mb))


if __name__ == "__main__":
    main()
