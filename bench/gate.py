"""What a CI gate over many deployment commands costs: ``check -f DIR`` over N manifests that share a release
and a GPU (the production-stack chart's Deployment, each with another --max-model-len / --gpu-memory-utilization,
as N services of one chart would differ) against ``explain -f`` of one of them. Those commands share one import
of the framework (the variant engine forks a child per command), so the goal is <= 3x for 20.
Beside it, the same N commands in a folder of mixed forms (Kubernetes, compose, docker run, a Slurm script,
SkyPilot, a Dockerfile, in turn), as a deployment repository holds them: the readers' cost on top, the same goal.
Ratios are measured in this one run, interleaved (absolute times mean little on a noisy machine).

    .venv/bin/python bench/gate.py [--commands 20] [--runs 3] [--gpu H100:1]
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


WORDS = ["serve", "meta-llama/Llama-3.1-8B-Instruct", "--host", "0.0.0.0", "--port", "8000",
         "--no-enable-chunked-prefill", "--no-enable-prefix-caching", "--max-model-len", "{len}", "--dtype",
         "bfloat16", "--gpu-memory-utilization", "{mem}"]
IMAGE = "vllm/vllm-openai:latest"  # the manifest's; a pin below names the same release for the forms with no image


def mixed_form(i, length, memory, release):
    """(file name, text) of the i-th command in one of six forms, in turn."""
    words = [w.format(len=length, mem=memory) for w in WORDS]
    line = "vllm " + " ".join(words)
    form = i % 6
    if form == 0:
        return "compose-%02d.yaml" % i, ("services:\n  vllm:\n    image: %s\n    command: [%s]\n"
                                          % (IMAGE, ", ".join('"%s"' % w for w in words[1:])))
    if form == 1:
        return "docker-%02d.sh" % i, "#!/bin/bash\ndocker run --gpus all %s %s\n" % (IMAGE, " ".join(words[1:]))
    if form == 2:
        return "job-%02d.slurm" % i, ("#!/bin/bash\n#SBATCH --nodes=1\n#SBATCH --gpus-per-node=1\n"
                                       "pip install vllm==%s\nsrun %s\n" % (release, line))
    if form == 3:
        return "sky-%02d.yaml" % i, ("resources:\n  accelerators: H100:1\nsetup: pip install vllm==%s\nrun: |\n  %s\n"
                                     % (release, line))
    if form == 4:
        return "Dockerfile.%02d" % i, ("FROM %s\nENTRYPOINT [\"vllm\", \"serve\"]\nCMD [%s]\n"
                                       % (IMAGE, ", ".join('"%s"' % w for w in words[1:])))
    return None  # form 5: the Kubernetes manifest itself


def write_folders(work, commands, text, release):
    uniform, mixed = os.path.join(work, "uniform"), os.path.join(work, "mixed")
    os.makedirs(uniform)
    os.makedirs(mixed)
    for i in range(commands):
        length, memory = 2048 + 256 * i, "0.%d" % (70 + i % 25)
        variant = text.replace('"4096"', '"%d"' % length, 1).replace('"0.8"', '"%s"' % memory, 1)
        variant = variant.replace("vllm-llama3", "vllm-llama3-%02d" % i)
        with open(os.path.join(uniform, "service-%02d.yaml" % i), "w") as fh:
            fh.write(variant)
        name, form = mixed_form(i, length, memory, release) or ("service-%02d.yaml" % i, variant)
        with open(os.path.join(mixed, name), "w") as fh:
            fh.write(form)
    return uniform, mixed


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--commands", type=int, default=20)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--gpu", default="H100:1")  # with the count: every form's command on the same simulated GPU
    opts = ap.parse_args()
    work = tempfile.mkdtemp(prefix="ft-gate-bench-")
    env = dict(os.environ, FLAGTRACE_ENVS=os.path.join(ROOT, ".envs"), HF_HUB_OFFLINE="1")
    try:
        from flagtrace.core.pinlib import shipped

        uniform, mixed = write_folders(work, opts.commands, open(MANIFEST).read(), shipped("vllm")[-1])
        one = [FLAGTRACE, "explain", "-f", os.path.join(uniform, "service-00.yaml"), "--gpu", opts.gpu, "--format",
               "json", "-o", os.devnull]
        gates = {folder: [FLAGTRACE, "check", "-f", folder, "--gpu", opts.gpu, "--format", "json", "-o", os.devnull]
                 for folder in (uniform, mixed)}
        timed(one, env)  # warm the page cache and flagtrace's imports cache once
        a, b, c = [], [], []
        for _ in range(opts.runs):
            a.append(timed(one, env))
            b.append(timed(gates[uniform], env))
            c.append(timed(gates[mixed], env))
        for label, times in (("manifests", b), ("mixed forms", c)):
            print("explain -f (1 command): %.1fs; check -f over %d commands (%s): %.1fs (medians of %d): %.2fx"
                  % (statistics.median(a), opts.commands, label, statistics.median(times), opts.runs,
                     statistics.median(times) / statistics.median(a)))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
