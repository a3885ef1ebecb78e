"""Issue 37: flagtrace's own checks run in flagtrace's environment. A caller's loader or interpreter variables
(``LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu`` from SGLang's CPU docs, a stray PYTHONHOME) reached the release
builder's question "which Python is the shared venv's?": through the system's libpython the venv's 3.11.7
answered 3.11.2, so a built release was "not built here" offline (exit 3) and, online, the 5.4 GB shared venv
was recreated on every run that carried the variable."""
import os
import subprocess
import sys

import pytest

from framework_support import ROOT
from flagtrace.core.own_env import own_environment
from flagtrace.envs.build import Builder
from flagtrace.envs.release import Release

SYSTEM_LIBS = "/usr/lib/x86_64-linux-gnu"
CASES = [pytest.param({"PYTHONHOME": "/nonexistent"}, id="PYTHONHOME"),
         pytest.param({"LD_LIBRARY_PATH": SYSTEM_LIBS}, id="LD_LIBRARY_PATH", marks=pytest.mark.skipif(
             not os.path.exists(os.path.join(SYSTEM_LIBS, "libpython%d.%d.so.1.0" % sys.version_info[:2])),
             reason="no system libpython of another build here"))]
RELEASE = Release("sglang", "0.5.11")


@pytest.mark.parametrize("caller", CASES)
def test_a_built_release_stays_built_whatever_the_caller_carries(caller, monkeypatch):
    builder = Builder(os.path.join(ROOT, ".envs"))
    assert builder.ready(RELEASE), "sglang 0.5.11 is not built (make sglang-env)"
    for name, value in caller.items():
        monkeypatch.setenv(name, value)
    assert builder.ready(RELEASE)  # before: False (the venv's Python answered another version, or none)
    assert not set(caller) & set(own_environment())


@pytest.mark.parametrize("caller", CASES[1:])  # PYTHONHOME would break flagtrace's own interpreter first
def test_env_build_finds_the_release_built(caller):
    """The whole command: `VAR=... flagtrace env build sglang==0.5.11` says it is there and builds nothing."""
    proc = subprocess.run([sys.executable, "-m", "flagtrace", "env", "build", "--root", os.path.join(ROOT, ".envs"),
                           str(RELEASE)], capture_output=True, text=True, cwd=ROOT, timeout=300,
                          env=dict(os.environ, **caller))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith(str(RELEASE) + " ") and "creating" not in proc.stderr, proc.stderr


@pytest.mark.parametrize("caller", CASES[1:])
def test_a_loader_path_to_another_libpython_is_a_gap_not_the_frameworks_error(caller):
    """The variable reaches the target (as it must: on the GPU box it may be what the user's interpreter needs);
    here it loads the system's libpython under the release's 3.11.7 interpreter, which then cannot import
    ``_ssl``. Before: "the target raised ImportError ... undefined symbol" (exit 3) and nothing said why; now the
    line names the libpython the target ran on and the variable's kind, as a simulation gap."""
    proc = subprocess.run([sys.executable, "-m", "flagtrace", "explain", "--release", "sglang==0.5.11", "--offline",
                           "--", "python", "-m", "sglang.launch_server", "--model-path",
                           os.path.join(ROOT, "models", "llama-3-8b")], capture_output=True, text=True, cwd=ROOT,
                          timeout=300, env=dict(os.environ, FLAGTRACE_ENVS=os.path.join(ROOT, ".envs"), **caller))
    assert proc.returncode == 3, proc.stderr
    first = proc.stderr.splitlines()[0]
    assert "before resolution started; the interpreter " in first
    assert " ran on %s/libpython%d.%d.so.1.0, not on the libpython it was built with" % (
        (SYSTEM_LIBS,) + sys.version_info[:2]) in first
