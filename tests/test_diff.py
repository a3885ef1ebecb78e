"""flagtrace diff on the example programs: the fields that differ between the command as typed and
the command with a flag set, removed or an environment variable given, who decided each, and the
first thing that went differently."""
import json
import sys

from ft_support import PY, example, line_of, run_sub

from flagtrace.core.exitcodes import ExitCode

SCRIPT = "env_config.py"
WATCH = "env_config:WorkerConfig"
UNSET = {k: None for k in ("APP_WORKERS", "APP_SAFE_MODE", "APP_ALLOW_DENSE", "APP_ALLOW_SPARSE")}


def diff(sides, args, fmt="json"):
    run = run_sub(["diff", *sides, "--format", fmt, "--watch", WATCH, "--", PY, example(SCRIPT), *args], env=UNSET)
    return run, (json.loads(run.out) if fmt == "json" and run.rc == 0 else None)


def only(doc, name):
    [d] = [d for d in doc["differences"] if d["field"] == name]
    return d


def test_an_environment_variable_on_one_side_is_named_as_the_cause(no_leftovers):
    run, doc = diff(["--env", "APP_WORKERS=4"], ["--sparse"])
    assert run.rc == 0, run
    assert doc["schema"] == "flagtrace/diff@1" and doc["sides"] == ["as typed", "with APP_WORKERS=4"]
    assert [d["field"] for d in doc["differences"]] == ["workers"]
    d = only(doc, "workers")
    assert d["values"] == ["1", "4"] and d["verdicts"] == ["default", "decided"]
    assert d["deciders"][0] is None
    assert (d["deciders"][1]["func"], d["deciders"][1]["line"]) == (
        "WorkerConfig.__post_init__", line_of(SCRIPT, "self.workers = int(envs.APP_WORKERS or 1)"))
    assert d["cause"] == {"kind": "env", "env": "APP_WORKERS", "values": ["unset", "'4'"],
                          "text": "$APP_WORKERS = unset vs '4'"}


def test_a_flag_set_on_one_side_is_the_request_that_differs(no_leftovers):
    run, doc = diff(["--set", "--workers 4"], ["--sparse", "--workers", "2"])
    d = only(doc, "workers")
    assert d["values"] == ["2", "4"] and d["verdicts"] == ["honoured", "honoured"]
    assert d["cause"]["kind"] == "request" and d["cause"]["values"] == ["2", "4"]


def test_a_flag_removed_shows_the_decision_it_had_suppressed(no_leftovers):
    # --safe sets APP_SAFE_MODE, which sends workers back to 1: without it, the request stands
    run, doc = diff(["--unset", "--safe"], ["--sparse", "--safe", "--workers", "8"])
    d = only(doc, "workers")
    assert d["values"] == ["1", "8"] and d["verdicts"] == ["overridden", "honoured"]
    assert (d["deciders"][0]["func"], d["deciders"][0]["line"]) == ("WorkerConfig.__post_init__",
                                                                    line_of(SCRIPT, "self.workers = 1"))
    assert d["cause"]["kind"] == "condition" and d["cause"]["side"] == 0
    assert d["cause"]["conditions"] == ['os.getenv("APP_SAFE_MODE") == "1"']


def test_a_side_that_raises_is_compared_with_one_that_resolves(no_leftovers):
    run, doc = diff(["--set", "--sparse"], ["--workers", "8"])
    assert run.rc == 0, run
    assert doc["statuses"] == ["error", "resolved"] and doc["errors"][1] is None
    assert doc["errors"][0].startswith("ValidationError: 1 validation error for WorkerConfig")
    d = only(doc, "dense")
    assert d["values"] == ["True", "False"] and d["cause"]["kind"] == "initial"


def test_terminal_report_lists_each_side_and_the_cause(no_leftovers):
    run, _ = diff(["--env", "APP_WORKERS=4"], ["--sparse"], fmt="terminal")
    assert run.rc == 0, run
    assert "side 2  with APP_WORKERS=4  (resolved)" in run.out
    assert "1 of 2 fields differ" in run.out and "cause: $APP_WORKERS = unset vs '4'" in run.out


def test_usage_errors_are_one_line():
    for sides, message in ((["--gpu", "H100"], "nothing to compare"),
                           (["--gpu", "H100", "--gpu", "A100", "--set", "--workers 2"], "one thing at a time"),
                           (["--set", "workers 2"], "--set takes an option"),
                           (["--env", "APP_WORKERS"], "--env takes KEY=VALUE"),
                           (["--gpu", "H100", "--gpu", "XYZ"], "unknown GPU 'XYZ'"),
                           (["--python", PY], "nothing to compare"),
                           (["--python", PY, "--python", PY, "--set", "--workers 2"], "one thing at a time")):
        run, _ = diff(sides, ["--sparse"])
        assert run.rc == 64, (sides, run)
        assert message in run.err and "Traceback" not in run.err and len(run.err.strip().splitlines()) == 1, run.err


def test_two_interpreters_are_two_sides(no_leftovers):
    import sys

    run, doc = diff(["--python", PY, "--python", sys.base_prefix + "/bin/python3"], ["--sparse", "--workers", "2"])
    assert run.rc == 0, run
    assert doc["sides"] == ["--python %s" % PY, "--python %s/bin/python3" % sys.base_prefix]
    assert doc["statuses"] == ["resolved", "resolved"] and doc["differences"] == []
    assert doc["translated"] == [[], []] and doc["releases"] == [None, None]


def test_a_variant_the_importing_process_cannot_fork_runs_in_a_process_of_its_own(no_leftovers):
    # the first side's resolution imports a module that starts a thread; once the runner's parent
    # has imported it as well, the other side is resolved by a process of its own, and says so
    run = run_sub(["diff", "--format", "json", "--set", "--workers 3", "--watch", "thread_config:ThreadConfig",
                   "--", PY, example("thread_config.py"), "--workers", "2"],
                  env={"PYTHONPATH": example(""), "FLAGTRACE_CACHE_DIR": ""})
    assert run.rc == 0, run
    doc = json.loads(run.out)
    assert doc["alone"] == [None, "the importing process runs other threads (ticker)"]
    assert {d["field"]: d["values"] for d in doc["differences"]} == {"scaled": ["4", "6"], "workers": ["2", "3"]}


def test_matrix_table_of_flag_sets(no_leftovers):
    run = run_sub(["matrix", "--flags", "", "--flags", "--workers 4", "--flags", "--safe", "--format", "json",
                   "--watch", WATCH, "--", PY, example(SCRIPT), "--sparse", "--workers", "2"], env=UNSET)
    assert run.rc == 0, run
    doc = json.loads(run.out)
    assert doc["schema"] == "flagtrace/matrix@1" and doc["fields"] == ["workers"]  # the only field that differs
    assert [(c["flags"], c["values"]["workers"]) for c in doc["cells"]] == [
        ("", {"value": "2", "verdict": "honoured"}), ("--workers 4", {"value": "4", "verdict": "honoured"}),
        ("--safe", {"value": "1", "verdict": "overridden"})]
    run = run_sub(["matrix", "--flags", "", "--flags", "--workers 4", "--fields", "workers,dense", "--format", "csv",
                   "--watch", WATCH, "--", PY, example(SCRIPT), "--sparse", "--workers", "2"], env=UNSET)
    assert run.out.splitlines() == ["python,gpu,flags,status,workers,dense", ",,,resolved,2,False",
                                    ",,--workers 4,resolved,4,False"]


def test_matrix_rows_per_interpreter(no_leftovers):
    import sys

    other = sys.base_prefix + "/bin/python3"
    run = run_sub(["matrix", "--python", PY, "--python", other, "--flags", "", "--flags", "--workers 4",
                   "--fields", "workers", "--format", "json", "--watch", WATCH, "--", "python", example(SCRIPT),
                   "--sparse", "--workers", "2"], env=UNSET)
    assert run.rc == 0, run
    doc = json.loads(run.out)
    assert [(c["python"], c["flags"], c["values"]["workers"]["value"]) for c in doc["cells"]] == [
        (PY, "", "2"), (PY, "--workers 4", "4"), (other, "", "2"), (other, "--workers 4", "4")]


def test_matrix_unknown_field_names_the_closest(no_leftovers):
    run = run_sub(["matrix", "--fields", "worker", "--watch", WATCH, "--", PY, example(SCRIPT)], env=UNSET)
    assert run.rc == 64 and "worker is not a field" in run.err and "closest: workers" in run.err, run


def test_diff_and_matrix_in_markdown(no_leftovers):
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark").enable("table")
    run, _ = diff(["--set", "--workers 4"], ["--sparse", "--workers", "2"], fmt="markdown")
    assert run.rc == 0, run
    tokens = md.parse(run.out)
    cells = [tokens[i + 1].content for i, t in enumerate(tokens) if t.type in ("th_open", "td_open")]
    assert cells == ["field", "side 1", "side 2", "cause", "`workers`", "`2` honoured", "`4` honoured",
                     "the command lines ask for 2 (--workers) vs 4 (--workers)"]
    run = run_sub(["matrix", "--flags", "", "--flags", "--safe", "--format", "markdown", "--watch", WATCH, "--", PY,
                   example(SCRIPT), "--sparse", "--workers", "2"], env=UNSET)
    tokens = md.parse(run.out)
    cells = [tokens[i + 1].content for i, t in enumerate(tokens) if t.type in ("th_open", "td_open")]
    assert cells == ["gpu", "flags", "workers", "(this machine)", "(as typed)", "`2`", "(this machine)", "`--safe`",
                     "`1`\\*"]


def test_an_interpreter_without_the_framework_is_said_as_explain_says_it():
    """The import every side forks from ends at once: its own reason, not 'the variant runner ended'."""
    r = run_sub(["diff", "--gpu", "H100", "--gpu", "A100", "--", sys.executable, "-m", "sglang.launch_server",
                 "--model-path", "models/llama-3-8b"], timeout=300)
    assert r.rc == ExitCode.CANNOT_RUN, r
    assert r.err.startswith("flagtrace: SGLang is not installed for %s; add --release sglang==" % sys.executable), r
