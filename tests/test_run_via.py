"""``flagtrace run --via``: launch scripts run on the other side of a real OpenSSH server on
127.0.0.1 (tests/sshd_support.py). The agent runs the bootstrap and the /proc watch there and
sends the run document back; the tree, the script findings and each process's explanation are
the same as a local ``flagtrace run`` of the same script finds, through one transport
invocation. Every failure is one ``flagtrace:`` line with exit 3 and nothing left running or
on disk on either side (the ``clean`` fixture)."""
import json
import os
import shlex
import signal
import subprocess
import time

import pytest

import sshd_support
from ft_support import FLAGTRACE, PY, ROOT, flat, is_alive, run_cli
from flagtrace.core.exitcodes import ExitCode
from flagtrace.launch import via
from test_run_scripts import SCRIPTS, WATCH
from test_via import HW, OLD_PYTHON, _all_dead, _comm, _pids, assert_clear_error, essence
from test_via import clean, sshd  # noqa: F401 (the fixtures: one sshd per session, nothing left behind)

pytestmark = pytest.mark.skipif(sshd_support.available() is not None, reason=str(sshd_support.available()))


def there(server, prefix=None):
    """--via for the fixture's sshd that starts in ROOT with PYTHON set, as the local script
    tests run (the local directory and environment do not travel; both go in the prefix)."""
    words = list(prefix or server.client()) + ["cd", ROOT, "&&", "env", "PYTHON=" + PY]
    return shlex.join(words)


def run_both(server, options, command, monkeypatch):
    """The same ``flagtrace run --format json`` here and through ssh: (local, remote)."""
    monkeypatch.setenv("PYTHON", PY)
    local = run_cli(["run", "--format", "json"] + options + ["--"] + command)
    monkeypatch.delenv("PYTHON")  # the remote side gets it from the prefix only
    far = run_cli(["run", "--format", "json", "--via", there(server)] + options + ["--"] + command)
    return local, far


def findings(doc):
    """The whole tree's findings, without pids and timings (which differ between runs)."""
    def finding(f):
        f = {k: v for k, v in f.items() if k != "pids"}
        if "never_reached" in f:
            f["never_reached"] = sorted(f["never_reached"].values())
        return f

    def proc(p):
        return {"kind": p["kind"], "argv": p["argv"], "status": p["status"], "probed": p["probed"],
                "reason": p["reason"], "interpreter": p["interpreter"], "venv": p["venv"], "python": p["python"],
                "message": p["message"], "hints": p["hints"], "findings": [finding(f) for f in p["findings"]],
                "depth": p["depth"], "exit_code": p["exit_code"],
                "analysis": essence(p["analysis"]) if p.get("analysis") else None}

    script = doc.get("script") or {}
    return {"summary": doc["summary"], "exit_status": doc["exit_status"], "exit_code": doc["exit_code"],
            "message": doc["message"], "processes": [proc(p) for p in doc["processes"]],
            "script": [finding(f) for f in script.get("findings") or []]}


def python_procs(doc):
    return [p for p in doc["processes"] if p["kind"] == "python"]


def one(doc, word):
    [p] = [p for p in python_procs(doc) if any(word in a for a in p["argv"])]
    return p


def field(proc, name):
    return next(f for f in proc["analysis"]["fields"] if f["field"] == name)


# -- the same findings as locally -----------------------------------------------------------
def test_broken_continuation_via_ssh(clean, monkeypatch):
    local, far = run_both(clean, WATCH, ["bash", os.path.join(SCRIPTS, "broken_continuation.sh")], monkeypatch)
    assert far.rc == local.rc == ExitCode.TARGET_RAISED, far
    assert findings(far.doc) == findings(local.doc)
    p = one(far.doc, "serve_config.py")
    assert p["argv"] == [PY, "tests/examples/serve_config.py", "--model", "hybrid-7b", " "]
    assert p["analysis"]["error"]["kind"] == "argparse"
    [finding] = [f for f in far.doc["script"]["findings"] if f["kind"] == "broken-continuation"]
    assert finding["line"] == 6 and finding["orphan_line"] == 7
    assert finding["never_reached"][str(p["pid"])] == ["--page-size", "64", "--cache-strategy", "extra_buffer"]
    assert "--page-size: command not found" in finding["shell_said"]
    assert far.doc["via"]["transport"] == "ssh %s@127.0.0.1 -p %d" % (clean.user, clean.port)
    assert far.doc["cwd"] == ROOT


def test_correct_continuation_via_ssh(clean, monkeypatch):
    local, far = run_both(clean, WATCH, ["bash", os.path.join(SCRIPTS, "good_continuation.sh")], monkeypatch)
    assert far.rc == local.rc == ExitCode.OK, far
    assert findings(far.doc) == findings(local.doc)
    p = one(far.doc, "serve_config.py")
    assert p["argv"][1:] == ["tests/examples/serve_config.py", "--model", "hybrid-7b", "--page-size", "64",
                             "--cache-strategy", "extra_buffer"]
    assert p["status"] == "resolved" and p["hints"] == [] and far.doc["script"]["findings"] == []
    page = field(p, "page_size")
    assert page["verdict"] == "overridden" and page["final"]["value"] == 1
    assert field(p, "cache_strategy")["verdict"] == "honoured"
    strict = run_cli(["run", "--strict", "--via", there(clean)] + WATCH +
                     ["--", "bash", os.path.join(SCRIPTS, "good_continuation.sh")])
    assert strict.rc == ExitCode.OVERRIDDEN, strict


@pytest.mark.parametrize("script", ["unexported_variable.sh", "heredoc_quoting.sh", "joined_flag.sh",
                                    "json_requoted.sh"])
def test_script_pitfalls_via_ssh(script, clean, monkeypatch):
    monkeypatch.delenv("SGLANG_ENABLE_SPEC_V2", raising=False)
    local, far = run_both(clean, WATCH, ["bash", os.path.join(SCRIPTS, script)], monkeypatch)
    assert far.rc == local.rc, far
    assert findings(far.doc) == findings(local.doc)
    assert far.doc["script"]["findings"] or any(p["hints"] for p in python_procs(far.doc))


def test_terminal_report_and_saved_run(clean, tmp_path):
    saved = str(tmp_path / "run.json")
    r = run_cli(["run", "--no-color", "--width", "200", "--save-trace", saved, "--via", there(clean)] + WATCH +
                ["--", "bash", os.path.join(SCRIPTS, "broken_continuation.sh")])
    assert r.rc == ExitCode.TARGET_RAISED, r
    text = flat(r.out)
    assert "host %s via ssh %s@127.0.0.1 -p %d" % (os.uname().nodename, clean.user, clean.port) in text
    assert "broken_continuation.sh:6 ends with a space after the backslash: the command ended there" in text
    assert "never reached this process: --page-size 64 --cache-strategy extra_buffer" in text
    again = run_cli(["run", "--no-color", "--width", "200", "--from", saved])
    assert again.rc == r.rc and again.out == r.out  # offline, as for a local run


def test_inline_command_argv_travels_exactly(clean):
    """An inline ``bash -c '...'`` with its arguments: every word arrives byte-exact (never
    through a shell string of flagtrace's), and there is no script to check."""
    model = "it's $HOME; `id` \"q\" \\ \t ünï"
    r = run_cli(["run", "--format", "json", "--via", there(clean)] + WATCH +
                ["--", "bash", "-c", 'exec "$PYTHON" tests/examples/serve_config.py "$@"', "launch",
                 "--model", model, "--page-size", "8"])
    assert r.rc == ExitCode.OK, r
    p = one(r.doc, "serve_config.py")
    assert p["argv"] == [PY, "tests/examples/serve_config.py", "--model", model, "--page-size", "8"]
    assert field(p, "model")["final"]["value"] == model
    assert r.doc["script"] is None


def test_gpu_simulation_and_secrets_stay_remote(clean, tmp_path):
    hw = tmp_path / "hw.py"
    hw.write_text(HW)
    script = tmp_path / "launch.sh"
    script.write_text('export HF_TOKEN=hf_remote_secret_123\necho "token $HF_TOKEN"\n'
                      '"$PYTHON" %s --api-key sk-remote-arg-456\n' % hw)
    saved = str(tmp_path / "run.json")
    r = run_cli(["run", "--gpu", "H100", "--show-output", "--format", "json", "--save-trace", saved,
                 "--via", there(clean), "--watch", "hw:HwConfig", "--", "bash", str(script)])
    assert r.rc == ExitCode.OK, r
    with open(saved) as fh:
        everything = fh.read() + r.out + r.err
    assert "hf_remote_secret_123" not in everything and "sk-remote-arg-456" not in everything
    assert "token <redacted>" in r.err
    # the simulated nvidia-smi answered inside the probed process on the remote host
    p = one(r.doc, "hw.py")
    assert field(p, "gpu")["final"]["value"] == "NVIDIA H100 80GB HBM3"
    assert "H100" in r.doc["simulation"]
    assert p["env"]["HF_TOKEN"] == "<redacted>" and p["argv"][-2:] == ["--api-key", "<redacted>"]


# -- one invocation -------------------------------------------------------------------------
def test_one_transport_invocation_and_a_fixed_command_line(clean, tmp_path):
    prefix, log = sshd_support.recording_prefix(clean.client(), str(tmp_path))
    r = run_cli(["run", "--format", "json", "--via", there(clean, prefix)] + WATCH +
                ["--", "bash", os.path.join(SCRIPTS, "good_continuation.sh")])
    assert r.rc == ExitCode.OK, r
    [call] = log()
    assert call[:len(clean.client())] == clean.client()
    assert shlex.split(call[-1]) == ["python3", "-c", via.LOADER]
    assert not any("continuation" in word or "serve_config" in word for word in call)


def test_python_picks_the_agent_interpreter(clean, tmp_path):
    prefix, log = sshd_support.recording_prefix(clean.client(), str(tmp_path))
    r = run_cli(["run", "--format", "json", "--via", there(clean, prefix), "--python", PY] + WATCH +
                ["--", "bash", os.path.join(SCRIPTS, "good_continuation.sh")])
    assert r.rc == ExitCode.OK, r
    assert shlex.split(log()[0][-1])[0] == PY
    assert r.doc["via"]["executable"] == PY


def test_live_lets_the_remote_process_run_on(clean, tmp_path):
    saved = str(tmp_path / "run.json")
    r = run_cli(["run", "--live", "--format", "json", "--save-trace", saved, "--via", there(clean)] + WATCH +
                ["--", PY, "tests/examples/serve_config.py", "--page-size", "8"])
    assert r.rc == ExitCode.OK, r
    [p] = r.doc["processes"]
    assert p["analysis"]["stop"] == "serve_config:start"  # resolution ended there ...
    assert p["after"] == {"status": "exited", "exit_code": 0}  # ... and the process went on
    with open(saved) as fh:
        assert "serving with" in json.load(fh)["stdout"]


def test_argv_style_transport(no_leftovers, tmp_path):
    """docker exec / kubectl exec pass argv on as is ('env' stands in for them): the same fixed
    words, unquoted, and the same run."""
    prefix, log = sshd_support.recording_prefix(["env", "PYTHON=" + PY], str(tmp_path))
    r = run_cli(["run", "--format", "json", "--via", shlex.join(prefix)] + WATCH +
                ["--", "bash", os.path.join(SCRIPTS, "good_continuation.sh")])
    assert r.rc == ExitCode.OK, r
    assert log() == [["env", "PYTHON=" + PY, "python3", "-c", via.LOADER]]
    assert one(r.doc, "serve_config.py")["status"] == "resolved"


# -- bad input ------------------------------------------------------------------------------
def test_connection_refused(clean):
    port = sshd_support.free_port()
    r = run_cli(["run", "--via", clean.via(port=port), "--", "bash", "launch.sh"])
    assert_clear_error(r, ExitCode.CANNOT_RUN, "connection refused", "port %d" % port)


def test_remote_interpreter_missing(clean):
    r = run_cli(["run", "--via", clean.via(), "--python", "/no/such/bin/python3", "--", "bash", "launch.sh"])
    assert_clear_error(r, ExitCode.CANNOT_RUN, "the remote interpreter /no/such/bin/python3 was not found")


def test_remote_python_too_old(clean):
    if not os.path.exists(OLD_PYTHON):
        pytest.skip("%s is not installed here" % OLD_PYTHON)
    r = run_cli(["run", "--via", clean.via(), "--python", OLD_PYTHON, "--", "bash", "launch.sh"])
    assert_clear_error(r, ExitCode.CANNOT_RUN, "the remote interpreter is too old (Python 3.8", "needs Python 3.9")


def test_framework_not_installed_remotely(clean):
    r = run_cli(["run", "--via", clean.via(), "--", "bash", "-c",
                 "python3 -m sglang.launch_server --model-path Qwen/Qwen3-8B"])
    assert_clear_error(r, ExitCode.CANNOT_RUN, "imported sglang, which is not installed for")


def test_command_missing_on_the_remote_host(clean):
    r = run_cli(["run", "--via", clean.via(), "--", "/no/such/launch.sh"])
    assert_clear_error(r, ExitCode.CANNOT_RUN, "on the remote host: command not found: /no/such/launch.sh")


def test_script_exits_before_any_python_process(clean):
    r = run_cli(["run", "--via", there(clean), "--", "bash", os.path.join(SCRIPTS, "no_python.sh")])
    assert_clear_error(r, ExitCode.CANNOT_RUN, "bash tests/scripts/no_python.sh exited with status 4 before "
                                               "starting any Python process", lines=None)
    assert r.err.splitlines()[1:] == ["--- last lines of the target's stderr ---", "checking the GPU..."]


def test_python_child_still_running_when_the_script_exits(clean):
    started = time.monotonic()
    r = run_cli(["run", "--format", "json", "--via", there(clean), "--", "bash",
                 os.path.join(SCRIPTS, "left_running.sh")])
    assert time.monotonic() - started < 20  # not the child's 60 s
    assert_clear_error(r, ExitCode.CANNOT_RUN, "a Python process was still running when bash "
                                               "tests/scripts/left_running.sh exited", "it was killed")
    [left] = r.doc["leftovers"]
    assert left["python"] and left["argv"][1:] == ["-c", "import time; time.sleep(60)"]
    assert not is_alive(left["pid"])  # the "remote" host is this one


def _hang_script(tmp_path):
    pidfile = str(tmp_path / "pids")
    script = tmp_path / "hang.sh"
    script.write_text('"$PYTHON" tests/examples/hang.py %s\n' % shlex.quote(pidfile))
    return str(script), pidfile


def test_remote_timeout_kills_the_remote_tree(clean, tmp_path):
    script, pidfile = _hang_script(tmp_path)
    started = time.monotonic()
    r = run_cli(["run", "--timeout", "2", "--format", "json", "--via", there(clean), "--", "bash", script])
    assert_clear_error(r, ExitCode.CANNOT_RUN, "did not finish within 2s (--timeout)", "were killed")
    assert time.monotonic() - started < 15
    pids = _pids(pidfile)
    assert len(pids) == 3 and _all_dead(pids)
    assert r.doc["timed_out"] and one(r.doc, "hang.py")["status"] == "not watched"


@pytest.mark.parametrize("what", ["transport", "flagtrace"])
def test_killed_mid_run_leaves_nothing_remote(what, clean, tmp_path, private_tmp):
    script, pidfile = _hang_script(tmp_path)
    proc = subprocess.Popen(FLAGTRACE + ["run", "--via", there(clean), "--", "bash", script], cwd=ROOT,
                            env=dict(os.environ, TMPDIR=private_tmp), stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        pids = _pids(pidfile)
        [ssh] = [p for p in sshd_support._children(proc.pid) if _comm(p) == "ssh"]
        os.kill(ssh if what == "transport" else proc.pid, signal.SIGKILL)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert _all_dead(pids + [ssh])
    if what == "transport":
        err = err.decode()
        assert proc.returncode == ExitCode.CANNOT_RUN, err
        assert err.startswith("flagtrace: ") and len(err.splitlines()) == 1 and "Traceback" not in err, err
        assert "the connection ended (the transport was killed by SIGKILL) during the remote run" in err
