"""Runs flagtrace against the real vLLM releases that `make vllm-env` installs
(.envs/vllm/<VERSION>/bin/python), on simulated GPUs. FLAGTRACE_VLLM=V limits the suite to one release."""
import os
from unittest import mock

import pytest

from framework_support import ROOT, Run, line_in_file, run_flagtrace  # noqa: F401  (Run: used by the test files)

RELEASES = ("0.11.2", "0.15.1", "0.25.1", "0.33.0", "0.34.0")
MODELS = os.path.join(ROOT, "models")
LLAMA31 = os.path.join(MODELS, "llama-3.1-8b")
DEEPSEEK_V3 = os.path.join(MODELS, "deepseek-v3")
SERVE = ("-m", "vllm.entrypoints.cli.main", "serve")


def releases():
    chosen = os.environ.get("FLAGTRACE_VLLM")
    return tuple(r for r in RELEASES if r == chosen) if chosen else RELEASES


def python_for(version):
    path = os.path.join(ROOT, ".envs", "vllm", version, "bin", "python")
    if not os.path.exists(path):
        pytest.fail("vLLM %s environment missing (%s): run `make vllm-env`" % (version, path))
    return path


def overlay_file(version, relpath):
    return os.path.join(ROOT, ".envs", "vllm", "overlays", version, "vllm", relpath)


def model_info_cache(version):
    """vLLM inspects a model class in a subprocess of its own (a fresh torch and vLLM import) unless its
    cache under VLLM_CACHE_ROOT/modelinfos holds it; that cache keeps one file per class for every release,
    so a suite alternating releases would miss it on nearly every command. Each release gets its own for
    the session, set in this process's environment while a run starts (and inherited by it) only."""
    shared = os.environ.get("FLAGTRACE_TEST_RUNS")
    return mock.patch.dict(os.environ, {"VLLM_CACHE_ROOT": os.path.join(shared, "vllm-cache", version)}
                           if shared else {})


def run_vllm(version, args, gpu="H100", env=None, verb="explain", extra=(), entry=SERVE, python=None):
    """flagtrace explain --format json on ``vllm serve ARGS`` of a real vLLM release; cached per command.
    ``python``: another program to run ``entry ARGS`` with (the release's console script)."""
    with model_info_cache(version):
        return run_flagtrace((python or python_for(version), *entry, *args), gpu,
                             tuple(sorted((env or {}).items())), verb, tuple(extra))


def line_in(version, relpath, func, text, nth=0):
    """Line of the ``nth`` source line containing ``text`` inside ``def func`` of vllm/RELPATH."""
    return line_in_file(overlay_file(version, relpath), func, text, nth)


def change(run, field, nth=-1):
    """The ``nth`` change of ``field`` in an explain run."""
    return run.field(field)["changes"][nth]
