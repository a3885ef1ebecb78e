"""``--release``: a release not yet built is built by flagtrace itself (its progress said), then reused
without a build step; a build that fails leaves nothing behind; a command whose interpreter lacks the
framework is told which --release to add. The shared venv (torch and base.txt, GBs) is the one
`make sglang-env` built, linked into a fresh root: the overlay is what these tests build."""
import os
import shutil

import pytest

from ft_support import run_sub
from sglang_support import LLAMA3, ROOT
from test_bad_input import assert_clear_error

from flagtrace.core.exitcodes import ExitCode

VENV = os.path.join(ROOT, ".envs", "sglang", "venv")
RELEASE = "0.4.10.post2"  # small (no sgl-kernel wheel to unpack), resolves on a simulated GPU
COMMAND = ["--", "python3", "-m", "sglang.launch_server", "--model-path", LLAMA3, "--page-size", "16"]

pytestmark = pytest.mark.skipif(not os.path.isfile(os.path.join(VENV, ".flagtrace-stamp")),
                                reason="the shared venv is built by make sglang-env")


@pytest.fixture
def root(tmp_path):
    """A release cache of its own whose shared venv is the one already built."""
    (tmp_path / "sglang").mkdir()
    os.symlink(VENV, tmp_path / "sglang" / "venv")
    return tmp_path


def explain(root, *extra, env=None):
    return run_sub(["explain", "--gpu", "H100x8", "--format", "json"] + list(extra) + ["--release", "sglang==" + RELEASE]
                   + COMMAND, timeout=600, env=dict({"FLAGTRACE_ENVS": str(root)}, **(env or {})))


def test_a_release_is_built_on_first_use_and_reused_without_the_network(root):
    first = explain(root)
    assert first.rc == 0, first
    said = [line for line in first.err.splitlines() if line.startswith("flagtrace: sglang==%s: " % RELEASE)]
    assert any("installing" in line and "pins (%s.txt)" % RELEASE in line for line in said), first.err
    assert said[-1].startswith("flagtrace: sglang==%s: ready in " % RELEASE), first.err
    doc = first.doc
    assert doc["adapter"]["version"] == RELEASE
    assert doc["target"]["command"][0] == str(root / "sglang" / RELEASE / "bin" / "python")
    page = next(f for f in doc["fields"] if f["field"] == "page_size")
    assert page["verdict"] == "honoured" and page["final"]["value"] == 16
    stamp = root / "sglang" / "overlays" / RELEASE / ".flagtrace-stamp"
    inode = os.stat(stamp).st_ino
    # No network now: --offline refuses any build step, and neither installer may reach an index.
    again = explain(root, "--offline", env={"UV_OFFLINE": "1", "PIP_NO_INDEX": "1"})
    assert again.rc == 0, again
    assert "flagtrace: sglang==" not in again.err  # no build step ran
    assert os.stat(stamp).st_ino == inode
    finals = lambda d: {f["field"]: f["final"]["repr"] for f in d["fields"] if f["field"] != "random_seed"}  # noqa
    assert finals(again.doc) == finals(doc)
    listed = run_sub(["env", "list", "--json", "--root", str(root)]).doc
    assert [(r["release"], r["up_to_date"]) for r in listed["releases"]] == [("sglang==" + RELEASE, True)]


def test_a_failed_build_leaves_nothing_behind(root, tmp_path_factory):
    """uv offline with an empty cache: the install fails; one line naming its log, exit 3, and neither the
    overlay nor its build folder stays."""
    if shutil.which("uv") is None:
        from flagtrace.envs.installer import uv_binary

        if not uv_binary():
            pytest.skip("uv is not installed")
    cache = tmp_path_factory.mktemp("uv-cache")
    r = explain(root, env={"UV_OFFLINE": "1", "UV_CACHE_DIR": str(cache), "FLAGTRACE_INSTALLER": "uv"})
    assert r.rc == ExitCode.CANNOT_RUN, r
    assert "Traceback" not in r.err
    failed = [line for line in r.err.splitlines() if line.startswith("flagtrace: uv pip install")]
    assert failed and "failed (exit " in failed[0] and "overlay-%s-install.log" % RELEASE in failed[0], r.err
    assert os.listdir(root / "sglang" / "overlays") == []
    assert not (root / "sglang" / RELEASE).exists()


def test_an_interpreter_without_the_framework_names_the_release_to_add(tmp_path):
    """A Python that has no SGLang (the tool's own) runs the command: one line with the --release to add."""
    import sys

    from flagtrace.core.pinlib import shipped

    r = run_sub(["explain", "--gpu", "H100x8", "--", sys.executable, "-m", "sglang.launch_server", "--model-path",
                 LLAMA3], timeout=120)
    assert_clear_error(r, ExitCode.CANNOT_RUN, "SGLang is not installed for %s" % sys.executable,
                       "add --release sglang==%s" % shipped("sglang")[-1])


def test_diff_compares_two_releases_by_name():
    """diff --release A --release B: a side per release, each run by the builder's interpreter of it."""
    envs = os.path.join(ROOT, ".envs")
    built = [v for v in ("0.5.11", "0.5.12") if os.path.isfile(os.path.join(envs, "sglang", "overlays", v,
                                                                               ".flagtrace-stamp"))]
    if len(built) < 2:
        pytest.skip("sglang 0.5.11 and 0.5.12 are built by make sglang-env")
    r = run_sub(["diff", "--gpu", "H100x8", "--format", "json", "--offline", "--release", "sglang==0.5.11",
                 "--release", "sglang==0.5.12"] + COMMAND, timeout=600, env={"FLAGTRACE_ENVS": envs})
    assert r.rc == 0, r
    assert r.doc["releases"] == ["sglang 0.5.11", "sglang 0.5.12"]
    assert r.doc["sides"] == ["--python %s" % os.path.join(envs, "sglang", v, "bin", "python") for v in built]
    assert r.doc["statuses"] == ["resolved", "resolved"]
    assert "page_size" not in [d["field"] for d in r.doc["differences"]]  # honoured at 16 on both sides


def test_run_puts_the_release_first_on_path_so_a_scripts_python3_is_it(tmp_path):
    """flagtrace run --release: the launch script's own `python3` runs the release (bin/python3 beside
    bin/python), and the framework process resolves under the simulated GPU."""
    envs = os.path.join(ROOT, ".envs")
    if not os.path.isfile(os.path.join(envs, "sglang", "overlays", "0.5.11", ".flagtrace-stamp")):
        pytest.skip("sglang 0.5.11 is built by make sglang-env")
    script = tmp_path / "launch.sh"
    script.write_text("#!/bin/bash\nexec python3 -m sglang.launch_server --model-path %s --page-size 32\n" % LLAMA3)
    r = run_sub(["run", "--release", "sglang==0.5.11", "--gpu", "H100", "--format", "json", "--", "bash",
                 str(script)], timeout=600, env={"FLAGTRACE_ENVS": envs})
    assert r.rc == 0, r
    [process] = r.doc["processes"]
    assert process["status"] == "resolved" and process["venv"] == os.path.join(envs, "sglang", "venv")
    page = next(f for f in process["analysis"]["fields"] if f["field"] == "page_size")
    assert page["verdict"] == "honoured" and page["final"]["value"] == 32
