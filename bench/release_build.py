"""What --release costs: a cold build of one release's overlay by flagtrace's builder with uv and with pip,
and by the shell scripts it replaced (scripts/sglang_env.sh at git revision OLD); the warm reuse overhead of
``explain --release`` against explain with the release's interpreter named directly; disk per release.

Every build goes into a fresh root whose shared venv is the one `make sglang-env` built (linked: the overlay
is what is measured). "cold" means an empty uv cache (UV_CACHE_DIR of its own) and pip with --no-cache-dir;
wheels still come from the configured indexes, so the network (or a local mirror) is part of the time.
Ratios are measured in this one run (the machine is noisy: absolute times mean little).

    .venv/bin/python bench/release_build.py [--release 0.5.11] [--runs 5] [--old 74dc1cc]
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
VENV = os.path.join(ROOT, ".envs", "sglang", "venv")
MODEL = os.path.join(ROOT, "models", "llama-3-8b")


def fresh_root(work, name):
    root = os.path.join(work, name)
    os.makedirs(os.path.join(root, "sglang"))
    os.symlink(VENV, os.path.join(root, "sglang", "venv"))
    return root


def timed(argv, env):
    started = time.perf_counter()
    proc = subprocess.run(argv, env=env, capture_output=True, text=True, cwd=ROOT)
    seconds = time.perf_counter() - started
    if proc.returncode not in (0, 2):
        sys.exit("failed (%d): %s\n%s" % (proc.returncode, " ".join(argv), proc.stderr[-2000:]))
    return seconds


def du(path):
    out = subprocess.run(["du", "-sb", path], capture_output=True, text=True).stdout
    return int(out.split()[0]) if out else 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--release", default="0.5.11")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--old", default="74dc1cc", help="the revision whose scripts/sglang_env.sh is compared")
    opts = ap.parse_args()
    v = opts.release
    work = tempfile.mkdtemp(prefix="ft-release-bench-")
    base = {k: val for k, val in os.environ.items() if k not in ("PYTHONPATH", "FLAGTRACE_ENVS")}
    try:
        rows = {}
        uv_root = fresh_root(work, "uv")
        rows["flagtrace, uv (empty cache)"] = timed(
            [FLAGTRACE, "env", "build", "--root", uv_root, "sglang==" + v],
            dict(base, FLAGTRACE_INSTALLER="uv", UV_CACHE_DIR=os.path.join(work, "uv-cache")))
        again = fresh_root(work, "uv-warm")
        rows["flagtrace, uv (warm cache)"] = timed(
            [FLAGTRACE, "env", "build", "--root", again, "sglang==" + v],
            dict(base, FLAGTRACE_INSTALLER="uv", UV_CACHE_DIR=os.path.join(work, "uv-cache")))
        pip_root = fresh_root(work, "pip")
        rows["flagtrace, pip"] = timed([FLAGTRACE, "env", "build", "--root", pip_root, "sglang==" + v],
                                       dict(base, FLAGTRACE_INSTALLER="pip", PIP_NO_CACHE_DIR="1"))
        old = os.path.join(work, "old")
        os.makedirs(old)
        subprocess.run("git archive %s scripts env | tar -x -C %s" % (opts.old, old), shell=True, check=True,
                       cwd=ROOT)
        old_root = os.path.join(old, ".envs", "sglang")
        os.makedirs(old_root)
        os.symlink(VENV, os.path.join(old_root, "venv"))
        rows["scripts/sglang_env.sh (%s)" % opts.old] = timed(
            ["bash", os.path.join(old, "scripts", "sglang_env.sh"), v],
            dict(base, SGLANG_ENVS_DIR=old_root, PIP_NO_CACHE_DIR="1"))
        reference = rows["scripts/sglang_env.sh (%s)" % opts.old]
        print("cold build of sglang %s's overlay (shared venv already built)" % v)
        for name, seconds in rows.items():
            print("  %-36s %7.1f s   %.2fx the shell script" % (name, seconds, seconds / reference))
        print("disk: overlay %.0f MB (apparent; uv hard-links files from its cache); shared venv %.1f GB"
              % (du(os.path.join(uv_root, "sglang", "overlays", v)) / 1e6, du(os.path.realpath(VENV)) / 1e9))

        python = os.path.join(uv_root, "sglang", v, "bin", "python")
        command = ["-m", "sglang.launch_server", "--model-path", MODEL, "--page-size", "16"]
        direct = [FLAGTRACE, "explain", "--gpu", "H100x8", "--format", "json", "-o", os.devnull, "--", python] \
            + command
        release = [FLAGTRACE, "explain", "--gpu", "H100x8", "--format", "json", "-o", os.devnull, "--release",
                   "sglang==" + v, "--", "python3"] + command
        env = dict(base, FLAGTRACE_ENVS=uv_root)
        timed(direct, env)  # warm the page cache once
        a, b = [], []
        for _ in range(opts.runs):  # interleaved
            a.append(timed(direct, env))
            b.append(timed(release, env))
        print("warm reuse: explain --release %.2fs vs the interpreter named %.2fs (medians of %d): %.3fx"
              % (statistics.median(b), statistics.median(a), opts.runs, statistics.median(b) / statistics.median(a)))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
