"""Runs flagtrace against the real SGLang releases that `make sglang-env` installs
(.envs/sglang/<VERSION>/bin/python), on simulated GPUs. FLAGTRACE_SGLANG=V limits the
suite to one release."""
import os

import pytest

from framework_support import Run, line_in_file, run_flagtrace  # noqa: F401  (Run: used by the test files)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RELEASES = ("0.5.10.post1", "0.5.11", "0.5.12")
MODELS = os.path.join(ROOT, "models")
QWEN36 = os.path.join(MODELS, "qwen3.6-27b")
LLAMA3 = os.path.join(MODELS, "llama-3-8b")
HEADLINE = ["--model-path", QWEN36, "--speculative-algorithm", "EAGLE", "--speculative-num-steps", "3",
            "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "4",
            "--max-mamba-cache-size", "24", "--mem-fraction-static", "0.92", "--context-length", "8192",
            "--trust-remote-code"]


def releases():
    chosen = os.environ.get("FLAGTRACE_SGLANG")
    if chosen:
        return tuple(r for r in RELEASES if r == chosen)
    return RELEASES


def pick(preferred="0.5.11"):
    """One release of the old generation for a test that needs just one."""
    chosen = releases()
    if not chosen:
        pytest.skip("FLAGTRACE_SGLANG selects a release these tests do not cover", allow_module_level=True)
    return preferred if preferred in chosen else chosen[0]


def python_for(version):
    path = os.path.join(ROOT, ".envs", "sglang", version, "bin", "python")
    if not os.path.exists(path):
        pytest.fail("SGLang %s environment missing (%s): run `make sglang-env`" % (version, path))
    return path


def overlay_file(version, relpath="sglang/srt/server_args.py"):
    return os.path.join(ROOT, ".envs", "sglang", "overlays", version, relpath)


def _run(version, args, gpu, env_items, verb="explain", extra=()):
    return run_flagtrace((python_for(version), "-m", "sglang.launch_server", *args), gpu, env_items, verb, extra)


def run_sglang(version, args, gpu="B200x7", env=None, extra=()):
    """flagtrace explain --format json on a real SGLang release; cached per command."""
    return _run(version, tuple(args), gpu, tuple(sorted((env or {}).items())), "explain", tuple(extra))


def line_in(version, func, text, nth=0):
    """Line of the ``nth`` source line containing ``text`` inside ``def func`` of server_args.py."""
    return line_in_file(overlay_file(version), func, text, nth)


def by_version(version, table):
    return table[version]
