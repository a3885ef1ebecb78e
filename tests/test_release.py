"""``--release NAME==VERSION`` and ``flagtrace env``: what is refused before anything is built, and the
release builder's cache as ``env list`` / ``env prune`` show it. Building a real release is in
tests/frameworks/test_release_on_demand.py."""
import os

import pytest

from ft_support import run_sub
from test_bad_input import assert_clear_error

from flagtrace.core import pinlib
from flagtrace.core.exitcodes import ExitCode

CMD = ["--", "python3", "-m", "sglang.launch_server", "--model-path", "Qwen/Qwen3-8B"]


@pytest.mark.parametrize("release, phrases", [
    ("sglang==0.3.99", ["sglang 0.3.99 is outside the releases flagtrace supports (0.4.0-0.5.23)"]),
    ("vllm==9", ["vllm 9 is outside the releases flagtrace supports (0.11.0-0.34.0)"]),
    ("sglang", ["write it as NAME==VERSION", "frameworks: sglang, vllm, ai-dynamo"]),
    ("sglang==latest", ["write it as NAME==VERSION"]),
    ("tgi==2.0.1", ["flagtrace builds releases of sglang, vllm and ai-dynamo, not tgi"]),
    ("ai-dynamo==1.5.1", ["ai-dynamo 1.5.1 is outside the releases flagtrace supports (1.6.1-1.6.1)"]),
])
def test_a_release_flagtrace_cannot_build_is_one_line_exit_64(release, phrases, tmp_path):
    r = run_sub(["explain", "--release", release] + CMD, env={"FLAGTRACE_ENVS": str(tmp_path)})
    assert_clear_error(r, ExitCode.USAGE, "--release %s" % release, *phrases)
    assert os.listdir(tmp_path) == []  # nothing built, nothing begun


def test_release_with_via_is_a_usage_error(tmp_path):
    r = run_sub(["explain", "--via", "ssh gpu-box", "--release", "sglang==0.5.11"] + CMD,
                env={"FLAGTRACE_ENVS": str(tmp_path)})
    assert_clear_error(r, ExitCode.USAGE, "--release builds the release here")


def test_one_release_outside_diff_and_matrix(tmp_path):
    r = run_sub(["explain", "--release", "sglang==0.5.11", "--release", "sglang==0.5.12"] + CMD,
                env={"FLAGTRACE_ENVS": str(tmp_path)})
    assert_clear_error(r, ExitCode.USAGE, "give one --release (diff and matrix compare several)")


def test_offline_and_not_built_names_what_to_run_where_the_network_is(tmp_path):
    r = run_sub(["explain", "--offline", "--release", "sglang==0.5.11"] + CMD, env={"FLAGTRACE_ENVS": str(tmp_path)})
    assert_clear_error(r, ExitCode.CANNOT_RUN, "sglang==0.5.11 is not built here",
                       "run `flagtrace env build sglang==0.5.11` where PyPI is reachable")
    assert os.listdir(tmp_path) == []


def test_env_list_on_an_empty_cache(tmp_path):
    r = run_sub(["env", "list", "--root", str(tmp_path)])
    assert r.rc == 0 and r.out.splitlines() == [str(tmp_path), "  no release built yet (flagtrace env build "
                                                "sglang==0.5.11, or --release on any verb)"], r
    r = run_sub(["env", "list", "--json"], env={"FLAGTRACE_ENVS": str(tmp_path)})
    assert r.doc == {"root": str(tmp_path), "shared_venv": {"path": str(tmp_path / "sglang" / "venv"), "size": 0},
                     "releases": []}


def test_env_prune_removes_only_what_is_named(tmp_path):
    for v in ("0.5.11", "0.5.12"):  # two releases as the builder leaves them (an overlay with its stamp)
        overlay = tmp_path / "sglang" / "overlays" / v
        overlay.mkdir(parents=True)
        (overlay / ".flagtrace-stamp").write_text("x\n")
        (tmp_path / "sglang" / v / "bin").mkdir(parents=True)
    listed = run_sub(["env", "list", "--json", "--root", str(tmp_path)]).doc
    assert [(r["release"], r["up_to_date"]) for r in listed["releases"]] == [("sglang==0.5.11", False),
                                                                            ("sglang==0.5.12", False)]
    r = run_sub(["env", "prune", "--root", str(tmp_path), "sglang==0.5.11"])
    assert r.rc == 0 and r.out.splitlines()[0] == "removed sglang==0.5.11", r
    assert sorted(os.listdir(tmp_path / "sglang" / "overlays")) == ["0.5.12"]
    assert not (tmp_path / "sglang" / "0.5.11").exists() and (tmp_path / "sglang" / "0.5.12").exists()
    r = run_sub(["env", "prune", "--root", str(tmp_path), "vllm==0.33.0"])
    assert_clear_error(r, ExitCode.USAGE, "env prune: not built here: vllm==0.33.0")


def test_env_build_needs_a_release():
    r = run_sub(["env", "build"])
    assert_clear_error(r, ExitCode.USAGE, "env build: the following arguments are required: NAME==VERSION")


def test_the_pin_files_ship_in_the_package():
    """The wheel carries every pin file (package data): what --release installs needs no repository."""
    assert "0.5.11" in pinlib.shipped("sglang") and "0.33.0" in pinlib.shipped("vllm")
    assert os.path.isfile(pinlib.BASE_TXT)
    assert pinlib.PINS.endswith(os.path.join("flagtrace", "data", "env"))


def test_a_missing_console_script_names_the_release_to_add():
    r = run_sub(["explain", "--", "vllm-that-is-not-here", "serve", "x"])
    assert_clear_error(r, ExitCode.CANNOT_RUN, "command not found: vllm-that-is-not-here")
    assert "--release" not in r.err  # not a framework's console script: no hint
    r = run_sub(["explain", "--", "vllm", "serve", "Qwen/Qwen3-8B"], env={"PATH": "/usr/bin:/bin"})
    assert_clear_error(r, ExitCode.CANNOT_RUN, "command not found: vllm",
                       "add --release vllm==%s (or the release you deploy)" % pinlib.shipped("vllm")[-1])



def test_a_wrapper_release_sits_on_the_overlay_its_pin_file_names(tmp_path):
    """ai-dynamo's pin file names the vLLM release under it (#@on); its bin/python puts Dynamo's overlay first,
    then that vLLM overlay, then the shared venv. Building it for real: tests/frameworks/test_dynamo_vllm.py."""
    from flagtrace.envs.build import Builder, base_of
    from flagtrace.envs.release import Release, parse_release

    release = parse_release("ai-dynamo==1.6.1")
    assert release == Release("ai-dynamo", "1.6.1") and "1.6.1" in pinlib.shipped("ai-dynamo")
    builder = Builder(root=str(tmp_path))
    assert base_of(builder.pin_path(release)) == Release("vllm", "0.25.1")
    assert not builder.ready(release)
    os.makedirs(builder.overlay(release))
    builder.write_wrappers(release, builder.recipes["ai-dynamo"])
    with open(builder.python(release)) as fh:
        text = fh.read()
    assert 'PYTHONPATH="$root/overlays/1.6.1:$root/../vllm/overlays/0.25.1${PYTHONPATH:+:$PYTHONPATH}"' in text
    assert 'exec "$root/../sglang/venv/bin/python" "$@"' in text
