"""The pin generators (adapters/sglang_pins.py, adapters/vllm_pins.py) and core/pinlib.py raise pinlib.PinError,
one subclass per kind of failure; only the scripts' main() turns one into a message and exit status, and the
release builder (envs/build.py) maps each kind to flagtrace's exit code by its class, never by its text."""
import importlib
import os
import subprocess

import pytest

from flagtrace.core import pinlib
from flagtrace.core.exitcodes import ExitCode, FlagtraceError
from flagtrace.envs.build import Builder, _vkey_or_last
from flagtrace.envs.release import Release


def test_an_unparsable_version_raises_bad_version_not_system_exit():
    with pytest.raises(pinlib.BadVersion) as info:
        pinlib.vkey("not-a-version")
    assert not isinstance(info.value, SystemExit)
    assert isinstance(info.value, pinlib.PinError) and isinstance(info.value, ValueError)
    assert str(info.value) == info.value.reason == "unparsable version 'not-a-version'"


def test_a_name_that_is_no_version_sorts_last_in_the_builder_cache():
    assert sorted(["0.5.11", "junk", "0.4.0"], key=_vkey_or_last) == ["0.4.0", "0.5.11", "junk"]


# A reason that says "on PyPI" where the kind is not NoWheel, and one that does not where it is: the code
# follows the class alone.
@pytest.mark.parametrize("framework", ["sglang", "vllm"])
@pytest.mark.parametrize("error, code", [
    (pinlib.NoWheel("a reason that names no index"), ExitCode.USAGE),
    (pinlib.PipFailed("pip download sglang==9.9 failed: not on PyPI?\nsecond line"), ExitCode.CANNOT_RUN),
    (pinlib.Unresolved("no wheel on PyPI fits (add one to CHOICES)"), ExitCode.CANNOT_RUN),
    (pinlib.BadVersion("unparsable version 'x' on PyPI"), ExitCode.CANNOT_RUN),
    (pinlib.PinError("any other failure on PyPI"), ExitCode.CANNOT_RUN),
])
def test_a_generator_failure_reaches_the_builder_as_its_exit_code(framework, error, code, tmp_path, monkeypatch):
    module = importlib.import_module("flagtrace.adapters.%s_pins" % framework)

    def pin_file(version):
        raise error

    monkeypatch.setattr(module, "pin_file", pin_file)
    monkeypatch.setattr(module, "WHEELS", module.WHEELS)  # generate_pins points it into the builder's root
    release = Release(framework, "0.0.1")
    builder = Builder(root=str(tmp_path))
    with pytest.raises(FlagtraceError) as info:
        builder.generate_pins(release)
    assert info.value.code == code
    assert info.value.__cause__ is error
    # what the user reads is unchanged: the reason's first line
    assert info.value.message == "%s: cannot write its pin file: %s" % (release, str(error).splitlines()[0])
    assert not os.path.exists(os.path.join(builder.home(framework), "pins", "0.0.1.txt"))


def test_a_generated_pin_file_is_written(tmp_path, monkeypatch):
    module = importlib.import_module("flagtrace.adapters.vllm_pins")
    monkeypatch.setattr(module, "pin_file", lambda version: "vllm==%s\n" % version)
    monkeypatch.setattr(module, "WHEELS", module.WHEELS)
    builder = Builder(root=str(tmp_path))
    path = builder.generate_pins(Release("vllm", "0.0.1"))
    assert open(path).read() == "vllm==0.0.1\n"


@pytest.mark.parametrize("framework", ["sglang", "vllm"])
def test_a_release_without_a_wheel_raises_no_wheel(framework, monkeypatch):
    module = importlib.import_module("flagtrace.adapters.%s_pins" % framework)
    monkeypatch.setattr(module, "wheel", lambda name, version: None)
    with pytest.raises(pinlib.NoWheel) as info:
        module.pin_file("0.0.1")
    assert str(info.value) == "no %s 0.0.1 wheel on PyPI" % framework


def test_a_failed_pip_download_raises_pip_failed(tmp_path, monkeypatch):
    monkeypatch.setattr(pinlib.subprocess, "run", lambda *a, **kw: subprocess.CompletedProcess(
        a, 1, None, "ERROR: network unreachable\n"))
    with pytest.raises(pinlib.PipFailed) as info:
        pinlib.wheel(str(tmp_path), "sglang", "0.5.11")
    assert str(info.value) == "pip download sglang==0.5.11 failed:\nERROR: network unreachable\n"


def test_a_release_pip_finds_no_wheel_of_raises_no_wheel(tmp_path, monkeypatch):
    monkeypatch.setattr(pinlib.subprocess, "run", lambda *a, **kw: subprocess.CompletedProcess(
        a, 1, None, "ERROR: No matching distribution found for sgl-kernel==9.9\n"))
    assert pinlib.wheel(str(tmp_path), "sgl-kernel", "9.9") is None
    with pytest.raises(pinlib.NoWheel) as info:
        pinlib.top_dirs(str(tmp_path), "sgl-kernel", "9.9")
    assert str(info.value) == "no sgl-kernel==9.9 wheel on PyPI"


def test_fetch_raises_no_wheel_and_its_script_exits_with_the_reason(tmp_path, monkeypatch):
    pins = tmp_path / "pins.txt"
    pins.write_text("# a comment\nfoo==1.0\n")
    monkeypatch.setattr(pinlib.subprocess, "run", lambda *a, **kw: subprocess.CompletedProcess(a, 0))
    with pytest.raises(pinlib.NoWheel) as info:
        pinlib.fetch(str(tmp_path / "wheels"), str(pins))
    assert str(info.value) == "%s: no wheel of foo==1.0" % pins
    with pytest.raises(SystemExit) as out:
        pinlib.fetch_main([str(tmp_path / "wheels"), str(pins)])
    assert out.value.code == "%s: no wheel of foo==1.0" % pins


@pytest.mark.parametrize("framework", ["sglang", "vllm"])
def test_the_scripts_turn_a_pin_error_into_its_message_and_exit_status_1(framework, tmp_path, monkeypatch):
    module = importlib.import_module("flagtrace.adapters.%s_pins" % framework)
    with pytest.raises(pinlib.BadArguments) as info:
        pinlib.write_pin_files(["--help"], str(tmp_path), module.pin_file, module.__doc__)
    assert info.value.reason == module.__doc__
    with pytest.raises(SystemExit) as out:
        module.main(["--help"])
    assert out.value.code == module.__doc__  # sys.exit(text): the text on stderr, exit status 1

    def pin_file(version):
        raise pinlib.Unresolved("%s %s: no version of x accepts >=2 (add one to CHOICES)" % (framework, version))

    monkeypatch.setattr(module, "pin_file", pin_file)
    with pytest.raises(SystemExit) as out:
        module.main(["0.0.1", "-o", str(tmp_path)])
    assert out.value.code == "%s 0.0.1: no version of x accepts >=2 (add one to CHOICES)" % framework
    with pytest.raises(SystemExit) as out:
        module.main(["not-a-version", "-o", str(tmp_path)])
    assert out.value.code == "unparsable version 'not-a-version'"
    assert os.listdir(tmp_path) == []


def test_the_script_exit_status_is_1_with_the_message_on_stderr(tmp_path):
    import sys

    src = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(pinlib.__file__))))
    env = dict(os.environ, PYTHONPATH=src)
    r = subprocess.run([sys.executable, "-m", "flagtrace.adapters.vllm_pins", "not-a-version", "-o", str(tmp_path)],
                       capture_output=True, text=True, env=env)
    assert (r.returncode, r.stdout, r.stderr) == (1, "", "unparsable version 'not-a-version'\n")
