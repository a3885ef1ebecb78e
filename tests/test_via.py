"""``--via``: explain / why / check through a real OpenSSH server on 127.0.0.1 (tests/sshd_support.py)
and through argv-style transports; the same findings as a local run, one transport invocation per
verb, and every failure as one ``flagtrace:`` line with exit 3 and nothing left on either side."""
import json
import os
import shlex
import signal
import subprocess
import sys
import time

import pytest

import sshd_support
from ft_support import EXAMPLES, FLAGTRACE, PY, ROOT, field, is_alive, run_cli, run_sub
from flagtrace.core.exitcodes import ExitCode
from flagtrace.launch import transport as agent, remote, via
from flagtrace.launch.command import parse_command
from flagtrace.launch.local import run_probe

pytestmark = pytest.mark.skipif(sshd_support.available() is not None, reason=str(sshd_support.available()))

SERVE = os.path.join(EXAMPLES, "serve_config.py")
W_SERVE = ["--watch", "serve_config:ServeConfig", "--stop-at", "serve_config:start"]
OLD_PYTHON = "/root/.pyenv/versions/3.8.18/bin/python3.8"
PY2 = "/root/.pyenv/versions/2.7.18/bin/python2.7"


@pytest.fixture(scope="session")
def sshd():
    server = sshd_support.acquire()
    yield server
    sshd_support.release()


@pytest.fixture
def clean(sshd, no_leftovers):
    """After the test: no session, agent or target left under sshd, no remote temp dir; and
    (no_leftovers) no local process or flagtrace temp dir."""
    yield sshd
    assert sshd.wait_idle() == [], sshd.log_text()
    assert sshd.remote_leftovers() == []


def essence(doc):
    """What a report finds, without paths and timings (which differ between hosts)."""
    def change(c):
        return (c["func"], c["line"], c["src"], c["old"]["repr"], c["new"]["repr"],
                [(k["test"], k["holds"]) for k in c.get("conditions", [])],
                [(r["field"], r["value"]["repr"], r["origin"]) for r in c.get("reads", [])])

    error = doc.get("error") or {}
    return {
        "status": doc["status"], "summary": doc["summary"], "object": doc["object"],
        "stop": doc.get("stop"),
        "fields": [(f["field"], f["verdict"], f["origin"], (f.get("final") or {}).get("repr"),
                    [change(c) for c in f.get("changes", [])]) for f in doc["fields"]],
        "error": (error.get("type"), error.get("message"), (error.get("site") or {}).get("line")),
    }


def assert_clear_error(r, code, *phrases, lines=1):
    assert r.rc == code, r
    assert r.err.startswith("flagtrace: "), r
    assert "Traceback" not in r.err, r
    if lines is not None:
        assert len(r.err.splitlines()) == lines, r
    first = r.err.splitlines()[0]
    for phrase in phrases:
        assert phrase in first, (phrase, first)


# -- the same findings as locally -----------------------------------------------------------
CASES = {
    "overridden": ["--model", "hybrid-7b", "--page-size", "64"],
    "honoured": ["--model", "hybrid-7b", "--page-size", "1", "--speculative-algorithm", "EAGLE",
                 "--cache-strategy", "extra_buffer"],
    "raises": ["--model", "hybrid-7b", "--speculative-algorithm", "EAGLE"],
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_explain_via_ssh_finds_what_a_local_run_finds(case, clean):
    args = CASES[case]
    local = run_cli(["explain", "--format", "json"] + W_SERVE + ["--", PY, SERVE] + args)
    there = run_cli(["explain", "--format", "json", "--via", clean.via()] + W_SERVE + ["--", "python3", SERVE] + args)
    assert there.rc == local.rc, there
    assert local.rc == (ExitCode.TARGET_RAISED if case == "raises" else ExitCode.OK)
    assert essence(there.doc) == essence(local.doc)
    assert there.doc["fields"], there
    if case == "overridden":
        assert field(there.doc, "page_size")["verdict"] == "overridden"
        assert there.err == ""


def test_terminal_report_via_ssh(clean):
    r = run_cli(["explain", "--no-color", "--width", "120", "--via", clean.via()] + W_SERVE +
                ["--", "python3", SERVE, "--model", "hybrid-7b", "--page-size", "64"])
    assert r.rc == ExitCode.OK, r
    assert "page_size  64 → 1  (asked: --page-size)" in r.out
    assert "because self.uses_hybrid_cache() and self.page_size > 1  (line 45)" in r.out


def test_check_via_ssh(clean):
    argv = W_SERVE + ["--expect", "page_size=1", "--expect", "attention=flash"]
    cmd = [SERVE, "--model", "hybrid-7b", "--page-size", "64"]
    local = run_cli(["check", "--format", "json"] + argv + ["--", PY] + cmd)
    there = run_cli(["check", "--format", "json", "--via", clean.via()] + argv + ["--", "python3"] + cmd)
    assert there.rc == local.rc == ExitCode.OK, there
    assert there.doc["expectations"] == local.doc["expectations"]
    assert all(e["ok"] for e in there.doc["expectations"])
    strict = run_cli(["check", "--strict", "--no-color", "--via", clean.via()] + argv + ["--", "python3"] + cmd)
    assert strict.rc == ExitCode.OVERRIDDEN, strict
    assert "PASS page_size: expected 1, got 1" in strict.out
    wrong = run_cli(["check", "--no-color", "--via", clean.via(), "--expect", "page_size=64"] + W_SERVE +
                    ["--", "python3"] + cmd)
    assert wrong.rc == ExitCode.OVERRIDDEN and "FAIL page_size: expected 64, got 1" in wrong.out


def test_why_via_ssh(clean):
    argv = ["why", "max_batch", "--format", "json"] + W_SERVE
    cmd = [SERVE, "--model", "hybrid-7b", "--speculative-algorithm", "EAGLE", "--cache-strategy", "extra_buffer"]
    local = run_cli(argv + ["--", PY] + cmd)
    there = run_cli(argv[:1] + ["--via", clean.via()] + argv[1:] + ["--", "python3"] + cmd)
    assert there.rc == local.rc == ExitCode.OK, there
    a, b = there.doc["field"], local.doc["field"]
    assert (a["verdict"], a["final"]["repr"]) == (b["verdict"], b["final"]["repr"]) == ("decided", "48")
    assert [c["line"] for c in a["changes"]] == [c["line"] for c in b["changes"]]


def test_target_sees_what_it_sees_locally(clean, tmp_path):
    """The remote run is local.py's run: the same __main__, argv, sys.path[0], loader, hooks."""
    command = [PY, os.path.join(EXAMPLES, "introspect.py"), "--flag", "it's $HOME; `id`"]
    request = {"watch": ["introspect:SeenConfig"], "stop_at": [], "setup": [], "adapter": "generic"}
    local = run_probe(parse_command(command), dict(request), 60)
    there = remote.run_remote(remote.parse_remote_command(command), dict(request), 60, clean.via())
    seen_here, seen_there = json.loads(local.stdout), json.loads(there.stdout)
    assert seen_there == seen_here
    assert seen_there["argv"][1:] == ["--flag", "it's $HOME; `id`"]
    assert there.trace["objects"] and there.trace["outcome"]["status"] == "completed"


HW = '''import dataclasses, subprocess
@dataclasses.dataclass
class HwConfig:
    gpu: str = "auto"
    def __post_init__(self):
        if self.gpu == "auto":
            out = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"],
                                 capture_output=True, text=True).stdout
            self.gpu = out.splitlines()[0]
HwConfig()
'''


def test_gpu_simulation_travels_with_the_probe(clean, tmp_path):
    script = tmp_path / "hw.py"
    script.write_text(HW)
    argv = ["--format", "json", "--gpu", "H100", "--watch", "hw:HwConfig", "--", "python3", str(script)]
    r = run_cli(["explain", "--via", clean.via()] + argv)
    assert r.rc == ExitCode.OK, r
    assert field(r.doc, "gpu")["final"]["value"] == "NVIDIA H100 80GB HBM3"
    assert r.doc["simulation"]


def test_target_stdin_travels_on_the_same_stdin(clean):
    r = run_sub(["explain", "--show-output", "--via", clean.via()] + W_SERVE +
                ["--", "python3", SERVE, "--read-stdin"], input=b"hello over ssh\n" * 1000)
    assert r.rc == ExitCode.OK, r
    assert "read 15000 bytes from stdin" in r.err


def test_console_script_uses_its_own_interpreter_on_the_remote(clean, tmp_path):
    script = tmp_path / "serve-config"
    with open(SERVE) as fh:
        script.write_text("#!%s\n" % sys.executable + fh.read())
    script.chmod(0o755)
    r = run_cli(["explain", "--format", "json", "--via", clean.via(), "--watch", "serve-config:ServeConfig",
                 "--", str(script), "--model", "hybrid-7b", "--page-size", "64"])
    assert r.rc == ExitCode.OK, r
    assert field(r.doc, "page_size")["verdict"] == "overridden"
    assert os.path.realpath(r.doc["target"]["interpreter"]) == os.path.realpath(sys.executable)


# -- one invocation, a fixed command line -----------------------------------------------------
@pytest.mark.parametrize("verb", ["explain", "why", "check"])
def test_one_transport_invocation_per_verb_and_a_fixed_command_line(verb, clean, tmp_path):
    prefix, log = sshd_support.recording_prefix(clean.client(), str(tmp_path))
    extra = {"explain": [], "why": ["page_size"], "check": ["--expect", "page_size=1"]}[verb]
    secret_arg = "--model=hybrid-7b;$(touch %s)`touch %s`" % (tmp_path / "pwned1", tmp_path / "pwned2")
    r = run_cli([verb] + extra + ["--format", "json", "--via", shlex.join(prefix)] + W_SERVE +
                ["--", "python3", SERVE, secret_arg, "--page-size", "64"])
    assert r.rc == ExitCode.OK, r
    calls = log()
    assert len(calls) == 1
    # ssh joins its argv into a shell string: the command is one word, quoted once, and fixed
    assert calls[0][:-1] == clean.client()
    assert shlex.split(calls[0][-1]) == ["python3", "-c", via.LOADER]
    assert "hybrid" not in calls[0][-1] and "page-size" not in calls[0][-1]
    assert not (tmp_path / "pwned1").exists() and not (tmp_path / "pwned2").exists()


def test_single_ssh_t_is_harmless(clean):
    """ssh -t without a terminal on stdin allocates none: the frames stay intact."""
    client = clean.client()
    r = run_cli(["explain", "--format", "json", "--via", shlex.join(client[:1] + ["-t"] + client[1:])] +
                W_SERVE + ["--", "python3", SERVE, "--model", "hybrid-7b", "--page-size", "64"])
    assert r.rc == ExitCode.OK, r
    assert field(r.doc, "page_size")["verdict"] == "overridden"


def test_argv_style_transport(no_leftovers, tmp_path):
    """docker exec / kubectl exec pass argv as is: the same fixed words, unquoted ('env' and a
    wrapper script stand in for them here)."""
    prefix, log = sshd_support.recording_prefix(["env", "FLAGTRACE_TEST=1"], str(tmp_path))
    r = run_cli(["explain", "--format", "json", "--via", shlex.join(prefix)] + W_SERVE +
                ["--", "python3", SERVE, "--model", "hybrid-7b", "--page-size", "64"])
    assert r.rc == ExitCode.OK, r
    assert log() == [["env", "FLAGTRACE_TEST=1", "python3", "-c", via.LOADER]]
    assert field(r.doc, "page_size")["verdict"] == "overridden"


def test_login_shell_chatter_before_the_agent_is_skipped(no_leftovers):
    """A .bashrc that prints (even NUL bytes and a fake frame) does not confuse the frames."""
    prefix = ["sh", "-c", "printf 'Welcome!\\n\\000\\001flagtrace-agent-1\\001junk'; exec \"$@\"", "sh"]
    r = run_cli(["explain", "--format", "json", "--via", shlex.join(prefix)] + W_SERVE +
                ["--", "python3", SERVE, "--model", "hybrid-7b", "--page-size", "64"])
    assert r.rc == ExitCode.OK, r
    assert field(r.doc, "page_size")["verdict"] == "overridden"


def test_remote_directory_and_environment_through_the_prefix(clean):
    """ssh runs its words in a shell: 'cd DIR &&' in the prefix sets the remote working directory
    (relative paths then work), and 'env K=V' passes through as well."""
    prefix = clean.via() + " cd %s '&&' env SERVE_TEST_VAR=1" % shlex.quote(ROOT)
    r = run_cli(["explain", "--format", "json", "--via", prefix] + W_SERVE +
                ["--", "python3", "tests/examples/serve_config.py", "--model", "hybrid-7b", "--page-size", "64"])
    assert r.rc == ExitCode.OK, r
    assert r.doc["target"]["cwd"] == ROOT
    assert field(r.doc, "page_size")["verdict"] == "overridden"


def test_loader_is_one_portable_line():
    assert "\n" not in via.LOADER and "\\" not in via.LOADER and "!" not in via.LOADER
    assert "'" not in via.LOADER  # shlex.quote wraps it in single quotes once
    assert via.transport_argv(["ssh", "h"], "python3")[-1] == "python3 -c '%s'" % via.LOADER
    assert via.joins_into_shell(["/usr/bin/ssh", "-p", "2", "h"])
    assert via.joins_into_shell(["sshpass", "-e", "ssh", "h"])
    assert not via.joins_into_shell(["docker", "exec", "-i", "ssh"])
    assert not via.joins_into_shell(["kubectl", "exec", "-i", "pod", "--"])
    assert via.describe(["ssh", "-p", "19248", "-o", "BatchMode=yes", "root@gpu-box"]) == "ssh root@gpu-box -p 19248"
    assert via.describe(["ssh", "-J", "jump", "-i", "k", "gpu"]) == "ssh gpu"
    assert via.describe(["docker", "exec", "-i", "ctr"]) == "docker exec -i ctr"


# -- bad input ------------------------------------------------------------------------------
def test_connection_refused(clean):
    port = sshd_support.free_port()
    r = run_cli(["explain", "--via", clean.via(port=port)] + W_SERVE + ["--", "python3", SERVE])
    assert_clear_error(r, ExitCode.CANNOT_RUN, "connection refused", "port %d" % port)


def test_authentication_failure(clean):
    r = run_cli(["explain", "--via", clean.via(key=clean.other_key)] + W_SERVE + ["--", "python3", SERVE])
    assert_clear_error(r, ExitCode.CANNOT_RUN, "authentication failed", "Permission denied (publickey)")


def test_host_key_mismatch(clean):
    r = run_cli(["explain", "--via", clean.via(known_hosts=clean.wrong_known_hosts)] + W_SERVE +
                ["--", "python3", SERVE])
    assert_clear_error(r, ExitCode.CANNOT_RUN, "host key verification failed")


@pytest.mark.parametrize("how", ["--python", "command"])
def test_remote_interpreter_missing(how, clean):
    missing = "/no/such/venv/bin/python3"
    cmd = ["--python", missing, "--", "python3", SERVE] if how == "--python" else ["--", missing, SERVE]
    r = run_cli(["explain", "--via", clean.via()] + W_SERVE + cmd)
    assert_clear_error(r, ExitCode.CANNOT_RUN, "the remote interpreter %s was not found" % missing)


@pytest.mark.parametrize("old", [OLD_PYTHON, PY2])
def test_remote_python_too_old(old, clean):
    if not os.path.exists(old):
        pytest.skip("%s is not installed here" % old)
    r = run_cli(["explain", "--via", clean.via(), "--python", old] + W_SERVE + ["--", "python3", SERVE])
    version = "3.8" if "3.8" in old else "2.7"
    assert_clear_error(r, ExitCode.CANNOT_RUN, "the remote interpreter is too old (Python %s" % version,
                       "needs Python 3.9")


def test_remote_python_too_old_fake(clean, tmp_path):
    """A python3 that reports an old version (whatever the interpreter really is)."""
    fake = tmp_path / "python3"
    fake.write_text("#!/bin/sh\nexec %s -c 'import sys; sys.version_info = (3, 7, 9, \"final\", 0); "
                    "exec(sys.argv[2])' \"$@\"\n" % sys.executable)
    fake.chmod(0o755)
    r = run_cli(["explain", "--via", clean.via(), "--python", str(fake)] + W_SERVE + ["--", "python3", SERVE])
    assert_clear_error(r, ExitCode.CANNOT_RUN, "too old (Python 3.7.9")


def test_framework_not_installed_remotely(clean):
    r = run_cli(["explain", "--via", clean.via(), "--", "python3", "-m", "sglang.launch_server",
                 "--model-path", "Qwen/Qwen3-8B"])
    assert_clear_error(r, ExitCode.CANNOT_RUN, "SGLang is not installed for")


def test_module_or_script_missing_remotely(clean):
    r = run_cli(["explain", "--via", clean.via()] + W_SERVE + ["--", "python3", "-m", "no_such_mod"])
    assert_clear_error(r, ExitCode.CANNOT_RUN, "No module named no_such_mod")
    r = run_cli(["explain", "--via", clean.via()] + W_SERVE + ["--", "python3", "/no/such/serve.py"])
    assert_clear_error(r, ExitCode.CANNOT_RUN, "script not found: /no/such/serve.py")
    r = run_cli(["explain", "--via", clean.via()] + W_SERVE + ["--", "no-such-console-script", "--x"])
    assert_clear_error(r, ExitCode.CANNOT_RUN, "command not found on the remote host: no-such-console-script")


def _pids(pidfile, seconds=30.0):
    deadline = time.monotonic() + seconds
    while not os.path.exists(pidfile):
        assert time.monotonic() < deadline, "the target never started"
        time.sleep(0.05)
    with open(pidfile) as fh:
        return [int(x) for x in fh.read().split()]


def _all_dead(pids, seconds=10.0):
    deadline = time.monotonic() + seconds
    while any(is_alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    return [p for p in pids if is_alive(p)] == []


def test_remote_timeout_kills_the_remote_tree(clean, tmp_path):
    pidfile = str(tmp_path / "pids")
    started = time.monotonic()
    r = run_cli(["explain", "--timeout", "2", "--via", clean.via(), "--watch", "hang:HangConfig", "--",
                 "python3", os.path.join(EXAMPLES, "hang.py"), pidfile])
    assert_clear_error(r, ExitCode.CANNOT_RUN, "did not finish within 2s", "killed on the remote host", lines=None)
    assert time.monotonic() - started < 15
    pids = _pids(pidfile)
    assert len(pids) == 3 and _all_dead(pids)


def test_transport_killed_mid_run(clean, tmp_path, private_tmp):
    pidfile = str(tmp_path / "pids")
    env = dict(os.environ, TMPDIR=private_tmp)
    proc = subprocess.Popen(FLAGTRACE + ["explain", "--via", clean.via(), "--watch", "hang:HangConfig", "--",
                                         "python3", os.path.join(EXAMPLES, "hang.py"), pidfile],
                            cwd=ROOT, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    try:
        pids = _pids(pidfile)
        ssh = [p for p in sshd_support._children(proc.pid) if _comm(p) == "ssh"]
        assert len(ssh) == 1
        os.kill(ssh[0], signal.SIGKILL)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    err = err.decode()
    assert proc.returncode == ExitCode.CANNOT_RUN, err
    assert err.startswith("flagtrace: ") and len(err.splitlines()) == 1 and "Traceback" not in err, err
    assert "the connection ended (the transport was killed by SIGKILL) during the remote run" in err
    assert _all_dead(pids)


def test_flagtrace_itself_killed_mid_run_leaves_nothing_remote(clean, tmp_path, private_tmp):
    pidfile = str(tmp_path / "pids")
    proc = subprocess.Popen(FLAGTRACE + ["explain", "--via", clean.via(), "--watch", "hang:HangConfig", "--",
                                         "python3", os.path.join(EXAMPLES, "hang.py"), pidfile],
                            cwd=ROOT, env=dict(os.environ, TMPDIR=private_tmp), stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    pids = _pids(pidfile)
    ssh = [p for p in sshd_support._children(proc.pid) if _comm(p) == "ssh"]
    proc.kill()
    proc.wait()
    # the ssh client reads EOF on its stdin, the agent on its own, and stops the target
    assert _all_dead(pids + ssh)


def test_local_backstop_kills_a_transport_that_hangs(no_leftovers, monkeypatch, tmp_path):
    monkeypatch.setattr(agent, "GRACE", 1.0)
    marker = tmp_path / "started"
    prefix = ["sh", "-c", "touch %s; exec sleep 60" % shlex.quote(str(marker)), "sh"]
    started = time.monotonic()
    r = run_cli(["explain", "--timeout", "1", "--via", shlex.join(prefix)] + W_SERVE + ["--", "python3", SERVE])
    assert_clear_error(r, ExitCode.CANNOT_RUN, "did not finish within 1s", "the transport was killed")
    assert time.monotonic() - started < 10 and marker.exists()


def test_prefix_that_does_not_forward_stdin(no_leftovers):
    prefix = ["sh", "-c", 'exec "$@" </dev/null', "sh"]  # like docker exec without -i
    r = run_cli(["explain", "--via", shlex.join(prefix)] + W_SERVE + ["--", "python3", SERVE])
    assert_clear_error(r, ExitCode.CANNOT_RUN, "the remote side got no input", "exec -i")


@pytest.mark.parametrize("version", ["3.9.18", "3.13.0"])
def test_oldest_and_newest_remote_python(version, clean):
    python = "/root/.pyenv/versions/%s/bin/python3" % version
    if not os.path.exists(python):
        pytest.skip("%s is not installed here" % python)
    r = run_cli(["explain", "--format", "json", "--via", clean.via(), "--python", python] + W_SERVE +
                ["--", "python3", SERVE, "--model", "hybrid-7b", "--page-size", "64"])
    assert r.rc == ExitCode.OK, r
    assert r.doc["target"]["python"] == version
    assert field(r.doc, "page_size")["verdict"] == "overridden"


def test_transport_program_missing(no_leftovers):
    r = run_cli(["explain", "--via", "no-such-ssh host"] + W_SERVE + ["--", "python3", SERVE])
    assert_clear_error(r, ExitCode.CANNOT_RUN, "cannot start no-such-ssh")


@pytest.mark.parametrize("argv, phrase", [
    (["--python", "python3"] + W_SERVE + ["--", "python3", SERVE], "--python names the remote interpreter"),
    (["--via", "ssh h", "--from", "x.json"], "cannot be combined with --from"),
    (["--via", ""] + W_SERVE + ["--", "python3", SERVE], "--via needs a command prefix"),
    (["--via", "ssh 'h"] + W_SERVE + ["--", "python3", SERVE], "No closing quotation"),
    (["--via", "ssh h"] + W_SERVE + ["--", "python3"], "an interactive interpreter cannot be traced"),
    (["--via", "ssh -p 2 -tt h"] + W_SERVE + ["--", "python3", SERVE], "-tt asks for a terminal"),
    (["--via", "docker exec -it ctr"] + W_SERVE + ["--", "python3", SERVE], "-it asks for a terminal"),
    (["--via", "kubectl exec --tty -i pod --"] + W_SERVE + ["--", "python3", SERVE], "--tty asks for a terminal"),
])
def test_usage_errors(argv, phrase, no_leftovers):
    assert_clear_error(run_cli(["explain"] + argv), ExitCode.USAGE, phrase)


def _comm(pid):
    try:
        with open("/proc/%d/comm" % pid) as fh:
            return fh.read().strip()
    except OSError:
        return None


# -- diff: a side through the transport ---------------------------------------------------------
def test_diff_via_ssh_against_here(clean):
    # the same program on both sides agrees field by field; a variable only this side's launch has
    # is named as the cause of the one field it changes
    env_config = os.path.join(EXAMPLES, "env_config.py")
    argv = ["diff", "--format", "json", "--via", clean.via(), "--watch", "env_config:WorkerConfig", "--",
            "python3", env_config, "--sparse"]
    same = run_sub(argv, env={"APP_WORKERS": None})
    assert same.rc == 0, same
    assert same.doc["sides"] == ["via %s" % via.describe(shlex.split(clean.via())), "here"]
    assert same.doc["statuses"] == ["resolved", "resolved"] and same.doc["differences"] == []
    apart = run_sub(argv, env={"APP_WORKERS": "4"})
    assert apart.rc == 0, apart
    [d] = apart.doc["differences"]
    assert d["field"] == "workers" and d["values"] == ["1", "4"]
    assert d["cause"] == {"kind": "env", "env": "APP_WORKERS", "values": ["unset", "'4'"],
                          "text": "$APP_WORKERS = unset vs '4'"}
