"""``flagtrace run`` bad input: one clear ``flagtrace:`` line, exit 3 (64 for usage), no
traceback, no process and no temporary directory left behind."""
import os
import time

import pytest

from ft_support import PY, is_alive, run_cli
from flagtrace.core.exitcodes import ExitCode
from test_bad_input import assert_clear_error

SCRIPTS = os.path.join("tests", "scripts")


@pytest.fixture(autouse=True)
def python_for_scripts(monkeypatch):
    monkeypatch.setenv("PYTHON", PY)


def test_script_exits_before_any_python_process(no_leftovers):
    r = run_cli(["run", "--", "bash", os.path.join(SCRIPTS, "no_python.sh")])
    assert_clear_error(r, ExitCode.CANNOT_RUN, "bash tests/scripts/no_python.sh exited with status 4 before "
                                               "starting any Python process", lines=None)
    assert r.out == ""
    # the script's own last words come after the line, as explain shows a target's stderr
    assert r.err.splitlines()[1:] == ["--- last lines of the target's stderr ---", "checking the GPU..."]


def test_python_child_still_running_when_the_script_exits(no_leftovers):
    started = time.monotonic()
    r = run_cli(["run", "--format", "json", "--", "bash", os.path.join(SCRIPTS, "left_running.sh")])
    assert time.monotonic() - started < 20  # not the child's 60 s
    assert_clear_error(r, ExitCode.CANNOT_RUN, "a Python process was still running when bash "
                                               "tests/scripts/left_running.sh exited", "it was killed")
    [left] = r.doc["leftovers"]
    assert left["python"] and left["argv"][1:] == ["-c", "import time; time.sleep(60)"]
    assert not is_alive(left["pid"])


def test_timeout_kills_the_whole_tree(no_leftovers, tmp_path):
    script = tmp_path / "slow.sh"
    script.write_text('"%s" -c "import time; time.sleep(60)" &\n"%s" -c "import time; time.sleep(60)"\n' % (PY, PY))
    r = run_cli(["run", "--timeout", "1.5", "--format", "json", "--", "bash", str(script)])
    assert_clear_error(r, ExitCode.CANNOT_RUN, "did not finish within 1.5s (--timeout)")
    pids = [p["pid"] for p in r.doc["processes"] if p["kind"] == "python"]
    assert len(pids) == 2 and not any(is_alive(pid) for pid in pids)


CASES = {
    "nothing after --": (["run", "--"], ExitCode.USAGE, ["nothing to run"]),
    "no -- at all": (["run"], ExitCode.USAGE, ["nothing to run"]),
    "command not found": (["run", "--", "no-such-launcher.sh"], ExitCode.CANNOT_RUN,
                          ["command not found: no-such-launcher.sh"]),
    "path not found": (["run", "--", "./no/such/launch.sh"], ExitCode.CANNOT_RUN,
                       ["command not found: ./no/such/launch.sh"]),
    "not executable": (["run", "--", "./README.md"], ExitCode.CANNOT_RUN, ["./README.md is not an executable file"]),
    "malformed --watch": (["run", "--watch", "ServeConfig", "--", "true"], ExitCode.USAGE,
                          ["expected MODULE:NAME, got 'ServeConfig'"]),
    "generic without --watch": (["run", "--adapter", "generic", "--", "true"], ExitCode.USAGE, ["needs --watch"]),
    "unknown gpu": (["run", "--gpu", "Z9000", "--", "true"], ExitCode.USAGE, ["Z9000"]),
    "from: missing file": (["run", "--from", "no/such/run.json"], ExitCode.USAGE, ["run file not found"]),
    "from and a command": (["run", "--from", "x.json", "--", "true"], ExitCode.USAGE, ["either --from"]),
    "--python without --via": (["run", "--python", "python3", "--", "true"], ExitCode.USAGE,
                               ["--python names the remote interpreter; it needs --via PREFIX"]),
    "--via with --from": (["run", "--via", "ssh h", "--from", "x.json"], ExitCode.USAGE,
                          ["cannot be combined with --from"]),
    "no python at all": (["run", "--", "true"], ExitCode.CANNOT_RUN,
                         ["true exited with status 0 before starting any Python process"]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_bad_input(name, no_leftovers):
    argv, code, phrases = CASES[name]
    assert_clear_error(run_cli(argv), code, *phrases)


def test_from_a_file_that_is_not_a_run(no_leftovers, tmp_path):
    path = tmp_path / "trace.json"
    path.write_text('{"schema": "flagtrace/trace@2"}')
    assert_clear_error(run_cli(["run", "--from", str(path)]), ExitCode.CANNOT_RUN, "is not a flagtrace run")
    path.write_text("garbage")
    assert_clear_error(run_cli(["run", "--from", str(path)]), ExitCode.CANNOT_RUN, "not JSON")


def test_nothing_imported_the_watched_package(no_leftovers):
    r = run_cli(["run", "--watch", "serve_config:ServeConfig", "--", PY, "-c", "print(1)"])
    assert r.rc == ExitCode.CANNOT_RUN
    assert r.err == "flagtrace: no Python process under %s -c print(1) imported sglang or vllm or serve_config " \
                    "(1 ran; see the tree)\n" % PY
    assert "did not import sglang or vllm or serve_config" in " ".join(r.out.split())
