"""A decision or an error that read an environment variable names it, with its value and where
that came from (the launch environment, code that set it, or unset), on the example program."""
from ft_support import PY, example, field, line_of, run_sub

SCRIPT = "env_config.py"
WATCH = "env_config:WorkerConfig"


def explain(args, env):
    unset = {k: None for k in ("APP_WORKERS", "APP_SAFE_MODE", "APP_ALLOW_DENSE", "APP_ALLOW_SPARSE")}
    return run_sub(["explain", "--format", "json", "--watch", WATCH, "--", PY, example(SCRIPT), *args],
                   env={**unset, **env})


def _env_reads(item):
    return {r["env"]: r for r in item["reads"] if "env" in r}


def test_value_taken_from_an_env_module_names_the_variable():
    run = explain(["--sparse"], {"APP_WORKERS": "4"})
    f = field(run.doc, "workers")
    assert f["verdict"] == "decided" and (f["initial"]["value"], f["final"]["value"]) == (1, 4)
    [ch] = f["changes"]
    assert ch["func"] == "WorkerConfig.__post_init__"
    assert ch["line"] == line_of(SCRIPT, "self.workers = int(envs.APP_WORKERS or 1)")
    assert _env_reads(ch)["APP_WORKERS"] == {"env": "APP_WORKERS", "value": "'4'", "origin": "environment"}


def test_condition_on_os_getenv_set_by_code_names_the_line_that_set_it():
    run = explain(["--sparse", "--safe", "--workers", "8"], {})
    f = field(run.doc, "workers")
    assert f["verdict"] == "overridden" and (f["initial"]["value"], f["final"]["value"]) == (8, 1)
    ch = f["changes"][-1]
    assert ch["line"] == line_of(SCRIPT, "self.workers = 1")
    assert [c["text"] for c in ch["conditions"]] == ['os.getenv("APP_SAFE_MODE") == "1"']
    read = _env_reads(ch)["APP_SAFE_MODE"]
    assert (read["value"], read["origin"]) == ("'1'", "decided")
    assert (read["set_by"]["func"], read["set_by"]["line"]) == ("main", line_of(SCRIPT, 'os.environ["APP_SAFE_MODE"] = "1"'))


def test_error_rewrapped_by_message_is_explained_at_the_validator_with_the_env_read():
    run = explain([], {"APP_WORKERS": "4"})
    assert run.rc == 2 and "Traceback" not in run.err
    error = run.doc["error"]
    assert error["type"] == "ValidationError"
    # the re-raise lost the validator's frames; the raise inside __post_init__ is the site
    assert error["site"]["func"] == "WorkerConfig.__post_init__"
    assert error["site"]["line"] == line_of(SCRIPT, 'raise ValueError("several workers need a sparse model")')
    assert error["chain"][-1] == {"type": "ValueError", "message": "several workers need a sparse model"}
    [read] = [r for r in error["reads"] if r.get("field") == "workers"]
    assert read["value"]["value"] == 4 and read["origin"] == "decided"
    assert read["set_by"]["line"] == line_of(SCRIPT, "self.workers = int(envs.APP_WORKERS or 1)")
    assert read["from_env"] == [{"env": "APP_WORKERS", "value": "'4'", "origin": "environment"}]


def test_condition_reading_an_unset_variable_says_so():
    run = explain(["--workers", "3"], {})
    error = run.doc["error"]
    assert error["site"]["line"] == line_of(SCRIPT, 'raise ValueError("several workers need a sparse model")')
    assert error["conditions"][-1]["text"] == "self.workers > 1 and self.dense and not envs.APP_ALLOW_DENSE"
    assert _env_reads(error) == {"APP_ALLOW_DENSE": {"env": "APP_ALLOW_DENSE", "value": None, "origin": "unset"}}
    text = run_sub(["explain", "--watch", WATCH, "--", PY, example(SCRIPT), "--workers", "3"],
                   env={"APP_ALLOW_DENSE": None, "APP_WORKERS": None}).out
    assert "$APP_ALLOW_DENSE = unset" in text and "not in the environment" in text


def test_variable_read_by_a_method_the_condition_calls():
    run = explain([], {"APP_WORKERS": "4", "APP_ALLOW_SPARSE": "1"})
    assert run.rc == 0, run.err
    f = field(run.doc, "dense")
    assert f["verdict"] == "decided" and (f["initial"]["value"], f["final"]["value"]) == (True, False)
    [ch] = f["changes"]
    assert ch["line"] == line_of(SCRIPT, "self.dense = False")
    assert _env_reads(ch)["APP_ALLOW_SPARSE"] == {"env": "APP_ALLOW_SPARSE", "value": "'1'",
                                                  "origin": "environment", "via": "self._sparse_allowed()"}
