"""Bad input: one clear ``flagtrace: `` line on stderr, the documented exit code, no traceback,
no process and no temporary directory left behind."""
import json
import signal
import subprocess
import os
import time

import pytest

from ft_support import FLAGTRACE, ROOT, flat, PY, example, field, is_alive, run_cli, run_sub
from flagtrace.core.exitcodes import ExitCode

W_SERVE = "serve_config:ServeConfig"


def assert_clear_error(r, code, *phrases, lines=1):
    assert r.rc == code, r
    assert r.err.startswith("flagtrace: "), r
    assert "Traceback" not in r.err, r
    if lines is not None:
        assert len(r.err.splitlines()) == lines, r
    first = r.err.splitlines()[0]
    for phrase in phrases:
        assert phrase in first, (phrase, first)


CASES = {
    "nothing after --": (["explain", "--watch", W_SERVE, "--"], ExitCode.USAGE, ["nothing to trace"]),
    "no -- at all": (["explain", "--watch", W_SERVE], ExitCode.USAGE, ["nothing to trace"]),
    "no verb option": (["explain", "--format", "xml", "--", PY, "x.py"], ExitCode.USAGE, ["--format"]),
    "unknown option of a verb": (["diff", "--gpu", "H100", "--fields", "a", "--", PY, "x.py"], ExitCode.USAGE,
                                 ["flagtrace: diff: unrecognized arguments: --fields a (see flagtrace diff --help)"]),
    "unknown option before the verb": (["--bogus"], ExitCode.USAGE,
                                       ["flagtrace: unrecognized arguments: --bogus (see flagtrace --help)"]),
    "interpreter not found": (["explain", "--watch", W_SERVE, "--", "python9.99", example("serve_config.py")],
                              ExitCode.CANNOT_RUN, ["interpreter not found: python9.99"]),
    "interpreter path not found": (["explain", "--watch", W_SERVE, "--", "/no/such/bin/python3", "x.py"],
                                   ExitCode.CANNOT_RUN, ["interpreter not found"]),
    "script not found": (["explain", "--watch", W_SERVE, "--", PY, "tests/examples/no_such_script.py"],
                         ExitCode.CANNOT_RUN, ["script not found: tests/examples/no_such_script.py"]),
    "module not found": (["explain", "--watch", W_SERVE, "--", PY, "-m", "no_such_mod"],
                         ExitCode.CANNOT_RUN, ["No module named no_such_mod"]),
    "not a python program": (["explain", "--watch", W_SERVE, "--", "ls", "-l"],
                             ExitCode.CANNOT_RUN, ["ls is not a Python program"]),
    "interactive interpreter": (["explain", "--watch", W_SERVE, "--", PY], ExitCode.USAGE,
                                ["an interactive interpreter cannot be traced"]),
    "program on stdin": (["explain", "--watch", W_SERVE, "--", PY, "-"], ExitCode.USAGE, ["stdin"]),
    "no --watch": (["explain", "--", PY, example("serve_config.py")], ExitCode.USAGE, ["give --watch"]),
    "malformed --watch": (["explain", "--watch", "ServeConfig", "--", PY, example("serve_config.py")],
                          ExitCode.USAGE, ["expected MODULE:NAME, got 'ServeConfig'"]),
    "watch: module missing": (["explain", "--watch", "no_such_module:Config", "--", PY,
                               example("serve_config.py")],
                              ExitCode.CANNOT_RUN, ["watch: no module named no_such_module"]),
    "watch: dotted module missing": (["explain", "--watch", "no_such_pkg.sub:Config", "--", PY,
                                      example("serve_config.py")],
                                     ExitCode.CANNOT_RUN, ["no module named no_such_pkg.sub"]),
    "watch: class missing in script": (["explain", "--watch", "serve_config:NoSuchConfig", "--", PY,
                                        example("serve_config.py")],
                                       ExitCode.CANNOT_RUN, ["watch:", "defines no NoSuchConfig"]),
    "watch: class missing in module": (["explain", "--watch", "json:NoSuchConfig", "--", PY,
                                        example("serve_config.py")],
                                       ExitCode.CANNOT_RUN, ["watch: json has no class NoSuchConfig"]),
    "watch: not a class": (["explain", "--watch", "serve_config:start", "--", PY, example("serve_config.py")],
                           ExitCode.CANNOT_RUN, ["serve_config:start is not a class"]),
    # the what-if verbs refuse a mistyped --watch as explain does (they answered "0 of 0 fields differ", exit 0)
    "diff: watch: class missing in script": (["diff", "--gpu", "H100", "--gpu", "A100", "--watch",
                                              "serve_config:NoSuchConfig", "--", PY, example("serve_config.py")],
                                             ExitCode.CANNOT_RUN, ["watch:", "defines no NoSuchConfig"]),
    "fix: stop-at: function missing": (["fix", "--watch", W_SERVE, "--stop-at", "serve_config:no_such_func",
                                        "--", PY, example("serve_config.py")],
                                       ExitCode.CANNOT_RUN, ["stop-at:", "defines no no_such_func"]),
    "stop-at: function missing": (["explain", "--watch", W_SERVE, "--stop-at", "serve_config:no_such_func",
                                   "--", PY, example("serve_config.py")],
                                  ExitCode.CANNOT_RUN, ["stop-at:", "defines no no_such_func"]),
    "stop-at: module missing": (["explain", "--watch", W_SERVE, "--stop-at", "no_such_module:start",
                                 "--", PY, example("serve_config.py")],
                                ExitCode.CANNOT_RUN, ["stop-at: no module named no_such_module"]),
    "from: missing file": (["explain", "--from", "no/such/trace.json"], ExitCode.USAGE,
                           ["trace file not found: no/such/trace.json"]),
    "from and a command": (["explain", "--from", "x.json", "--", PY, "x.py"], ExitCode.USAGE,
                           ["either --from TRACE or a command"]),
    "output in a missing folder": (["explain", "-o", "no/such/dir/report.md", "--watch", W_SERVE, "--", PY,
                                    example("serve_config.py")], ExitCode.USAGE,
                                   ["cannot write no/such/dir/report.md: no directory"]),
    "save-trace to a directory": (["explain", "--save-trace", ".", "--watch", W_SERVE, "--", PY,
                                   example("serve_config.py")], ExitCode.USAGE, ["cannot write .: it is a directory"]),
    # a command pasted with its variables in front (SGLang's CPU docs: LD_LIBRARY_PATH=... python -m ...): before,
    # "command not found: LD_LIBRARY_PATH=..." (exit 3) or, with --release, "... is a console script" (exit 64)
    "variables before the command": (["explain", "--watch", W_SERVE, "--", "LD_LIBRARY_PATH=/usr/lib", "OMP_NUM_THREADS=8",
                                      PY, example("serve_config.py")], ExitCode.USAGE,
                                     ["the command starts with variable assignments: put variables before flagtrace "
                                      "(LD_LIBRARY_PATH=/usr/lib OMP_NUM_THREADS=8 flagtrace ... -- "]),
    "env before the command": (["diff", "--gpu", "H100", "--gpu", "A100", "--watch", W_SERVE, "--", "env", "A=1", PY,
                                example("serve_config.py")], ExitCode.USAGE,
                               ["the command starts with variable assignments", "(A=1 flagtrace ... -- "]),
    "check: bad expect": (["check", "--expect", "page_size", "--watch", W_SERVE, "--stop-at", "serve_config:start",
                           "--", PY, example("serve_config.py")], ExitCode.USAGE, ["FIELD=VALUE"]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_bad_input(name, no_leftovers):
    argv, code, phrases = CASES[name]
    assert_clear_error(run_cli(argv), code, *phrases)


@pytest.mark.parametrize("name", ["interpreter not found", "module not found", "watch: module missing"])
def test_bad_input_as_a_process(name, private_tmp):
    argv, code, phrases = CASES[name]
    r = run_sub(argv)
    assert_clear_error(r, code, *phrases)
    assert os.listdir(private_tmp) == []


def test_problems_are_structured_in_the_trace(tmp_path, no_leftovers):
    """The refusal comes from the problem's kind (trace@2), not from matching its text."""
    saved = tmp_path / "trace.json"
    r = run_cli(["explain", "--watch", "json:NoSuchConfig", "--watch", W_SERVE, "--save-trace", str(saved), "--",
                 PY, example("serve_config.py")])
    assert_clear_error(r, ExitCode.CANNOT_RUN, "watch: json has no class NoSuchConfig")
    trace = json.loads(saved.read_text())
    assert {"kind": "spec", "message": "watch: json has no class NoSuchConfig"} in trace["problems"]
    for problem in trace["problems"]:
        problem["kind"] = "probe"  # the same words under another kind: no longer a refusal
    saved.write_text(json.dumps(trace))
    again = run_cli(["explain", "--from", str(saved), "--no-color"])
    assert again.rc == ExitCode.OK and "note: watch: json has no class NoSuchConfig" in flat(again.out)


def test_no_verb_prints_help():
    r = run_cli([])
    assert r.rc == ExitCode.USAGE and "explain" in r.out


# -- the target misbehaves ---------------------------------------------------------------
def test_stop_point_never_reached_is_not_a_success(no_leftovers):
    """A program that ends without reaching its stop point made no config it would run with: exit 4
    (ExitCode.NOT_REACHED), status incomplete, what ran before still shown (issue 37; was exit 0, resolved)."""
    argv = ["--watch", "plain_class:Settings", "--stop-at", "plain_class:serve", "--", PY,
            example("plain_class.py"), "--retries", "3"]
    note = ("the stop point (plain_class:serve) was never reached: the program ended without it, so no resolved "
            "config is reported (what ran before is shown)")
    r = run_cli(["explain", "--no-color"] + argv)
    assert r.rc == ExitCode.NOT_REACHED == 4, r
    assert "Stop point not reached:" in r.out
    assert "note: " + note in flat(r.out)
    assert "mode 'auto' → 'remote'" in flat(r.out)
    j = run_cli(["explain", "--format", "json"] + argv)
    assert j.rc == ExitCode.NOT_REACHED
    assert j.err == "flagtrace: note: %s\n" % note
    doc = j.doc
    assert doc["stop"] is None and doc["status"] == "incomplete"
    assert field(doc, "mode")["final"]["value"] == "remote"
    assert field(doc, "retries")["verdict"] == "honoured"
    assert not is_alive(doc["target"]["pid"])


def test_target_exits_before_resolution_shows_its_stderr(no_leftovers):
    r = run_cli(["explain", "--watch", "early_exit:Config", "--", PY, example("early_exit.py")])
    assert_clear_error(r, ExitCode.CANNOT_RUN, "the target exited with status 5 before resolution started",
                       lines=None)
    assert "early_exit: fatal: no accelerator found (CUDA_VISIBLE_DEVICES is empty)" in r.err
    assert "loading plugins" in r.err
    assert r.out == ""


def test_target_that_hangs_is_killed_with_its_children(no_leftovers, tmp_path):
    pidfile = str(tmp_path / "pids")
    started = time.monotonic()
    r = run_cli(["explain", "--timeout", "2", "--watch", "hang:HangConfig", "--", PY, example("hang.py"), pidfile])
    elapsed = time.monotonic() - started
    assert_clear_error(r, ExitCode.CANNOT_RUN, "did not finish within 2s", lines=None)
    assert elapsed < 15
    with open(pidfile) as fh:
        pids = [int(x) for x in fh.read().split()]
    assert len(pids) == 3  # the target, a child in its group, a child in a session of its own
    deadline = time.monotonic() + 5
    while any(is_alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert [p for p in pids if is_alive(p)] == []


def test_binary_garbage_on_stdout(no_leftovers):
    argv = ["--watch", "garbage:BlobConfig", "--", PY, example("garbage.py")]
    r = run_cli(["explain", "--format", "json"] + argv)
    assert r.rc == ExitCode.OK, r
    doc = json.loads(r.out)
    assert field(doc, "codec")["final"]["value"] == "raw"
    assert field(doc, "codec")["changes"][0]["func"] == "BlobConfig.__post_init__"
    assert not is_alive(doc["target"]["pid"])
    t = run_cli(["explain", "--no-color"] + argv)
    assert t.rc == ExitCode.OK and "\x1b" not in t.out and "\x00" not in t.out
    assert "codec 'auto' → 'raw'" in flat(t.out)
    shown = run_cli(["explain", "--format", "json", "--show-output"] + argv)
    assert shown.rc == ExitCode.OK and json.loads(shown.out) == doc | {"target": shown.doc["target"]}
    assert "\ufffd" in shown.err  # the garbage was shown, decoded with replacement characters


def test_binary_garbage_as_a_process(private_tmp):
    r = run_sub(["explain", "--format", "json", "--show-output", "--watch", "garbage:BlobConfig",
                 "--", PY, example("garbage.py")])
    assert r.rc == ExitCode.OK, r
    assert field(json.loads(r.out), "codec")["final"]["value"] == "raw"
    assert "Traceback" not in r.err


def test_argparse_error_in_target_suggests_closest_flag(no_leftovers):
    argv = ["--watch", W_SERVE, "--", PY, example("serve_config.py"), "--page-sise", "32"]
    r = run_cli(["explain", "--no-color"] + argv)
    assert r.rc == ExitCode.TARGET_RAISED, r
    assert "the argument parser refused the command line" in r.out
    assert "unrecognized arguments: --page-sise 32" in r.out
    assert "--page-sise: did you mean --page-size?" in r.out
    assert "no instance of" not in r.out
    j = run_cli(["explain", "--format", "json"] + argv)
    assert_clear_error(j, ExitCode.TARGET_RAISED, "argument parser refused", "--page-sise",
                       "did you mean --page-size?")
    e = j.doc["error"]
    assert e["kind"] == "argparse" and e["suggestions"] == {"--page-sise": ["--page-size"]}
    assert e["prog"] == "serve_config"


def test_target_raised_says_so_on_stderr_with_json(no_leftovers):
    r = run_cli(["explain", "--format", "json", "--watch", W_SERVE, "--", PY, example("serve_config.py"),
                 "--speculative-algorithm", "EAGLE"])
    assert_clear_error(r, ExitCode.TARGET_RAISED, "the target raised ValueError in ServeConfig._validate",
                       "no_buffer")


# -- --from with something that is not a trace ------------------------------------------------
def _from(tmp_path, content):
    path = tmp_path / "trace.json"
    path.write_bytes(content if isinstance(content, bytes) else json.dumps(content).encode())
    return run_cli(["explain", "--from", str(path)]), str(path)


def test_from_file_that_is_not_json(tmp_path):
    r, path = _from(tmp_path, b"\x89PNG\r\n\x1a\n\x00\x00 not json at all")
    assert_clear_error(r, ExitCode.CANNOT_RUN, "%s is not a flagtrace trace (not JSON)" % path)
    r, path = _from(tmp_path, b"{\"schema\": \"flagtrace/trace@2\", ")
    assert_clear_error(r, ExitCode.CANNOT_RUN, "not JSON")


@pytest.mark.parametrize("content", [[1, 2, 3], {"hello": "world"}, "just a string", {"schema": 7}])
def test_from_json_that_is_not_a_trace(tmp_path, content):
    r, path = _from(tmp_path, content)
    assert_clear_error(r, ExitCode.CANNOT_RUN, "is not a flagtrace trace")


def test_from_trace_of_a_newer_schema(tmp_path):
    r, path = _from(tmp_path, {"schema": "flagtrace/trace@3", "target": {}, "outcome": {}, "objects": [],
                               "events": []})
    assert_clear_error(r, ExitCode.CANNOT_RUN, "has schema flagtrace/trace@3", "this flagtrace reads flagtrace/trace@2")


def test_from_damaged_trace(tmp_path):
    r, path = _from(tmp_path, {"schema": "flagtrace/trace@2", "target": {}})
    assert_clear_error(r, ExitCode.CANNOT_RUN, "damaged flagtrace trace", "outcome")


def test_an_internal_error_exits_70_with_one_line_and_the_traceback_saved(tmp_path):
    # a trace whose header is intact but whose body is not what the probe writes: the analysis
    # breaks inside flagtrace, which is flagtrace's own failure, not the target's (never exit 1)
    damaged = tmp_path / "trace.json"
    damaged.write_text(json.dumps({"schema": "flagtrace/trace@2", "target": {}, "outcome": {"status": "stopped"},
                                   "objects": "not a list", "events": 7}))
    cache = tmp_path / "cache"
    r = run_sub(["explain", "--from", str(damaged)], env={"FLAGTRACE_CACHE_DIR": str(cache)})
    assert_clear_error(r, ExitCode.INTERNAL, "flagtrace: internal error: ", "traceback saved to ", "please report it")
    [saved] = list(cache.iterdir())
    assert saved.name.startswith("internal-error-") and saved.name in r.err
    text = saved.read_text()
    assert text.startswith("flagtrace ") and "Traceback (most recent call last)" in text


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
def test_flagtrace_terminated_kills_the_target_and_removes_its_files(sig, private_tmp, tmp_path):
    """A CI job's timeout (SIGTERM) or a closed terminal (SIGHUP) ends flagtrace as Ctrl-C does: the target, its
    children (one in a session of its own) and the run's folder go too (the probe's process ran on, orphaned)."""
    pidfile = str(tmp_path / "pids")
    proc = subprocess.Popen(FLAGTRACE + ["explain", "--watch", "hang:HangConfig", "--", PY, example("hang.py"),
                                         pidfile], stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT)
    deadline = time.monotonic() + 60
    while not os.path.exists(pidfile) and time.monotonic() < deadline:
        time.sleep(0.05)
    with open(pidfile) as fh:
        pids = [int(x) for x in fh.read().split()]
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 128 + sig, err
    assert err.decode() == "flagtrace: terminated (signal %d)\n" % sig
    deadline = time.monotonic() + 5
    while any(is_alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert [p for p in pids if is_alive(p)] == []
    assert [n for n in os.listdir(private_tmp) if n.startswith("flagtrace-")] == []
