"""What-if speed: `flagtrace matrix` over 4 GPUs x 16 flag sets (64 resolutions) of the SGLang 0.5.23
headline model against one `flagtrace explain` of the same command (goal: at most 3x), a two-GPU
`flagtrace diff` against the same explain, and `flagtrace fix` on the seed case (SGLang 0.5.11,
B200 x7, Qwen3.6-27B + EAGLE, no strategy flag) against one explain of that command (goal: at most
2x). Runs interleaved, medians, ratios from this one run.

    .venv/bin/python bench/whatif.py [--version 0.5.23] [--fix-version 0.5.11] [--runs 1] [--only fix]
"""
import argparse
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GPUS = ["H100-80Gx8", "B200x7", "H200x8", "A100x8"]
FLAG_SETS = ["", "--page-size 64", "--page-size 16", "--attention-backend triton",
             "--attention-backend flashinfer", "--mem-fraction-static 0.8", "--chunked-prefill-size 4096",
             "--max-running-requests 64", "--disable-radix-cache", "--tp-size 2", "--tp-size 4",
             "--context-length 4096", "--max-mamba-cache-size 24", "--disable-cuda-graph",
             "--schedule-policy fcfs", "--kv-cache-dtype fp8_e4m3"]


def timed(argv, ok=(0,)):
    started = time.perf_counter()
    proc = subprocess.run(argv, capture_output=True, cwd=ROOT)
    seconds = time.perf_counter() - started
    assert proc.returncode in ok, proc.stderr.decode()[-3000:]
    return seconds


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--version", default="0.5.23")
    parser.add_argument("--fix-version", default="0.5.11")
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--only", choices=("matrix", "fix"), help="measure only matrix/diff, or only fix")
    opts = parser.parse_args()
    if opts.only != "matrix":
        bench_fix(opts)
    if opts.only == "fix":
        return
    python = os.path.join(ROOT, ".envs", "sglang", opts.version, "bin", "python")
    command = [python, "-m", "sglang.launch_server", "--model-path", os.path.join(ROOT, "models", "qwen3.6-27b"),
               "--trust-remote-code"]
    flagtrace = [sys.executable, "-m", "flagtrace"]
    explain = flagtrace + ["explain", "--gpu", GPUS[0], "--format", "json", "-o", os.devnull, "--"] + command
    matrix = flagtrace + ["matrix", "--format", "json", "-o", os.devnull]
    for gpu in GPUS:
        matrix += ["--gpu", gpu]
    for flags in FLAG_SETS:
        matrix += ["--flags=" + flags]
    matrix += ["--"] + command
    diff = flagtrace + ["diff", "--gpu", GPUS[0], "--gpu", GPUS[1], "--format", "json", "-o", os.devnull, "--"] + command
    timed(explain)  # warm the page cache
    e, m, d = [], [], []
    for i in range(opts.runs):
        e.append(timed(explain))
        m.append(timed(matrix))
        d.append(timed(diff))
        print("run %d: explain %.1fs  matrix (%d cells) %.1fs  diff (2 GPUs) %.1fs"
              % (i + 1, e[-1], len(GPUS) * len(FLAG_SETS), m[-1], d[-1]), flush=True)
    me, mm, md = statistics.median(e), statistics.median(m), statistics.median(d)
    print("sglang %s, qwen3.6-27b, %d run(s)" % (opts.version, opts.runs))
    print("ratio matrix (64 cells) / one explain: %.2f (goal <= 3)" % (mm / me))
    print("ratio diff (2 GPUs) / one explain:     %.2f" % (md / me))


SEED = ["--speculative-algorithm", "EAGLE", "--speculative-num-steps", "3", "--speculative-eagle-topk", "1",
        "--speculative-num-draft-tokens", "4", "--max-mamba-cache-size", "24", "--mem-fraction-static", "0.92",
        "--context-length", "8192", "--trust-remote-code"]


def bench_fix(opts):
    python = os.path.join(ROOT, ".envs", "sglang", opts.fix_version, "bin", "python")
    command = [python, "-m", "sglang.launch_server", "--model-path", os.path.join(ROOT, "models", "qwen3.6-27b")] + SEED
    flagtrace = [sys.executable, "-m", "flagtrace"]
    explain = flagtrace + ["explain", "--gpu", "B200x7", "--format", "json", "-o", os.devnull, "--"] + command
    fix = flagtrace + ["fix", "--gpu", "B200x7", "--format", "json", "-o", os.devnull, "--"] + command
    subprocess.run(explain, capture_output=True, cwd=ROOT)  # warm the page cache (explain exits 2 here)
    e, f = [], []
    for i in range(opts.runs):
        e.append(timed(explain, ok=(2,)))
        f.append(timed(fix))
        print("run %d: explain %.1fs  fix %.1fs" % (i + 1, e[-1], f[-1]), flush=True)
    print("sglang %s, seed case on B200x7, %d run(s)" % (opts.fix_version, opts.runs))
    print("ratio fix / one explain: %.2f (goal <= 2)" % (statistics.median(f) / statistics.median(e)))


if __name__ == "__main__":
    main()
