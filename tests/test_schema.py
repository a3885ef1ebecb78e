"""Every document flagtrace writes follows its published JSON Schema (src/flagtrace/schema/): the probe's
traces and requests, the analysis (explain, check, why), run's saved run and its analysis, diff, matrix, fix,
the gate (check -f) and the lock; each schema refuses a document no code writes."""
import json
import os

import jsonschema
import pytest

from ft_support import PY, ROOT, example, run_cli, run_sub  # not conftest: tests/frameworks has one too

SCHEMA = json.load(open(os.path.join(ROOT, "src", "flagtrace", "schema", "trace.schema.json")))


@pytest.mark.parametrize("script, args, watch", [
    ("serve_config.py", ["--model", "hybrid-7b", "--page-size", "64"], "serve_config:ServeConfig"),
    ("serve_config.py", ["--speculative-algorithm", "EAGLE"], "serve_config:ServeConfig"),
    ("frozen_config.py", ["--quantization", "fp8"], "frozen_config:EngineConfig"),
])
def test_example_traces_follow_the_schema(tmp_path, script, args, watch):
    saved = tmp_path / "trace.json"
    result = run_cli(["explain", "--format", "json", "--watch", watch, "--save-trace", str(saved),
                      "--", PY, example(script), *args])
    assert result.rc in (0, 2), result
    trace = json.loads(saved.read_text())
    jsonschema.validate(trace, SCHEMA)
    assert trace["schema"] == "flagtrace/trace@2"
    assert any(e["kind"] == "write" and e["how"] != "init" for e in trace["events"])


REQUEST_SCHEMA = json.load(open(os.path.join(ROOT, "src", "flagtrace", "schema", "request.schema.json")))


class _Recording:
    """launch/local.py's json, keeping each request it writes."""

    def __init__(self):
        self.written = []

    def dump(self, obj, fh, **kw):
        self.written.append(json.loads(json.dumps(obj)))
        return json.dump(obj, fh, **kw)

    def __getattr__(self, name):
        return getattr(json, name)


@pytest.mark.parametrize("argv", [
    ["explain", "--watch", "serve_config:ServeConfig", "--gpu", "H100x2", "--"],  # one command
    ["diff", "--watch", "serve_config:ServeConfig", "--gpu", "H100", "--gpu", "A100", "--"],  # the variant engine
])
def test_the_probe_s_requests_follow_their_schema(monkeypatch, argv):
    from flagtrace.launch import local

    recording = _Recording()
    monkeypatch.setattr(local, "json", recording)
    result = run_cli(argv + [PY, example("serve_config.py"), "--page-size", "64"])
    assert result.rc == 0, result
    requests = [r for r in recording.written if r.get("schema") == "flagtrace/request@1"]
    assert requests, recording.written
    for request in requests:
        jsonschema.validate(request, REQUEST_SCHEMA)
        assert request["watch"] == ["serve_config:ServeConfig"] and request["user_specs"] == request["watch"]
        assert request["gpu"]["name"].split("-")[0] in ("H100", "A100")
    jsonschema.validate({"schema": "flagtrace/request@1", "adapter": "generic", "adapter_info": {"name": "generic"},
                         "watch": [], "stop_at": [], "setup": []}, REQUEST_SCHEMA)
    with pytest.raises(jsonschema.ValidationError):  # a key no code writes
        jsonschema.validate(dict(requests[0], wach=["x:Y"]), REQUEST_SCHEMA)


# -- the documents the verbs write ---------------------------------------------------------------
def schema(kind):
    with open(os.path.join(ROOT, "src", "flagtrace", "schema", kind + ".schema.json")) as fh:
        return json.load(fh)


def rejected(doc, kind):
    """``doc`` does not follow ``kind``'s schema (a test that it can fail)."""
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(doc, schema(kind))


SERVE = ["--watch", "serve_config:ServeConfig", "--stop-at", "serve_config:start", "--", PY, example("serve_config.py")]
OVERRIDE = ["--model", "hybrid-7b", "--page-size", "64", "--speculative-algo", "EAGLE",
            "--cache-strategy", "extra_buffer"]


@pytest.mark.parametrize("verb, args, rc, status, error", [
    (["explain"], OVERRIDE, 0, "resolved", None),  # page_size asked for, overridden
    (["check", "--expect", "page_size=64", "--expect", "no_such_field=1"], OVERRIDE, 1, "resolved", None),
    (["explain"], ["--speculative-algorithm", "EAGLE"], 2, "error", "exception"),  # the validation raised
    (["explain"], ["--page-sise", "3"], 2, "error", "argparse"),  # the parser refused it
])
def test_explain_and_check_documents_follow_the_analysis_schema(verb, args, rc, status, error):
    result = run_cli(verb + ["--format", "json"] + SERVE + args)
    assert result.rc == rc, result
    doc = result.doc
    jsonschema.validate(doc, schema("analysis"))
    assert (doc["schema"], doc["status"], (doc["error"] or {}).get("kind")) == ("flagtrace/analysis@1", status, error)
    if verb[0] == "check":
        assert [(e["field"], e["ok"]) for e in doc["expectations"]] == [("page_size", False), ("no_such_field", False)]
    if args == OVERRIDE:
        page = next(f for f in doc["fields"] if f["field"] == "page_size")
        assert page["verdict"] == "overridden" and page["requested"]["typed"] == "--page-size"
        assert (page["initial"]["value"], page["final"]["value"]) == (64, 1) and page["changes"]
        rejected(dict(doc, fields=[dict(page, verdict="ignored")]), "analysis")
        rejected(dict(doc, fields=[dict(page, final={"value": 1})]), "analysis")  # a value without its repr
    rejected(dict(doc, extra=1), "analysis")  # a key no code writes
    rejected(dict(doc, status="fine"), "analysis")


def test_why_writes_its_own_kind_with_the_analysis_field_entry():
    result = run_cli(["why", "page_size", "--format", "json"] + SERVE + OVERRIDE)
    assert result.rc == 0, result
    doc = result.doc
    jsonschema.validate(doc, schema("analysis"))
    assert sorted(doc) == ["field", "schema"] and doc["schema"] == "flagtrace/why@1"
    assert doc["field"]["field"] == "page_size" and doc["field"]["verdict"] == "overridden"
    rejected(dict(doc, fields=[]), "analysis")
    rejected({"schema": doc["schema"], "field": dict(doc["field"], verdict="kept")}, "analysis")
    rejected(dict(doc, schema="flagtrace/analysis@1"), "analysis")  # the analysis's name is the whole analysis's


@pytest.mark.parametrize("command, rc, status", [
    # the escaped space ends the command: the program's own parser refuses the stray ' ' (an error)
    (["bash", os.path.join("tests", "scripts", "broken_continuation.sh")], 2, "error"),
    ([PY, example("serve_config.py"), "--model", "hybrid-7b", "--page-size", "64"], 0, "resolved"),  # an override
])
def test_run_documents_follow_their_schemas(tmp_path, monkeypatch, command, rc, status):
    monkeypatch.setenv("PYTHON", PY)
    saved = tmp_path / "run.json"
    result = run_cli(["run", "--watch", "serve_config:ServeConfig", "--stop-at", "serve_config:start",
                      "--save-trace", str(saved), "--format", "json", "--"] + command)
    assert result.rc == rc, result
    run, analysed = json.loads(saved.read_text()), result.doc
    jsonschema.validate(run, schema("run"))
    jsonschema.validate(analysed, schema("run-analysis"))
    assert (run["schema"], analysed["schema"]) == ("flagtrace/run@1", "flagtrace/run-analysis@1")
    for trace in run["traces"].values():  # each probed process's trace, as explain would save it
        jsonschema.validate(trace, SCHEMA)
    [python] = [p for p in analysed["processes"] if p["kind"] == "python"]
    assert python["status"] == status and run["traces"], python
    jsonschema.validate(python["analysis"], schema("analysis"))
    rejected(dict(run, extra=1), "run")
    rejected(dict(analysed, extra=1), "run-analysis")
    rejected(dict(analysed, processes=[dict(python, status="fine")]), "run-analysis")


UNSET = ("APP_WORKERS", "APP_SAFE_MODE", "APP_ALLOW_DENSE", "APP_ALLOW_SPARSE")
WORKERS = ["--watch", "env_config:WorkerConfig", "--", PY, example("env_config.py")]


def test_diff_document_follows_its_schema(monkeypatch):
    for key in UNSET:
        monkeypatch.delenv(key, raising=False)
    result = run_cli(["diff", "--format", "json", "--env", "APP_WORKERS=4"] + WORKERS + ["--sparse"])
    assert result.rc == 0, result
    doc = result.doc
    jsonschema.validate(doc, schema("diff"))
    [difference] = doc["differences"]
    assert difference["field"] == "workers" and difference["cause"]["kind"] == "env"
    rejected(dict(doc, extra=1), "diff")
    rejected(dict(doc, differences=[dict(difference, verdicts=["default", "kept"])]), "diff")
    rejected(dict(doc, statuses=["resolved", "fine"]), "diff")


def test_matrix_document_follows_its_schema(monkeypatch):
    for key in UNSET:
        monkeypatch.delenv(key, raising=False)
    result = run_cli(["matrix", "--flags", "", "--flags", "--workers 4", "--flags", "--safe", "--format", "json"]
                     + WORKERS + ["--sparse", "--workers", "2"])
    assert result.rc == 0, result
    doc = result.doc
    jsonschema.validate(doc, schema("matrix"))
    assert [c["values"]["workers"]["verdict"] for c in doc["cells"]] == ["honoured", "honoured", "overridden"]
    cell = doc["cells"][0]
    rejected(dict(doc, extra=1), "matrix")
    rejected(dict(doc, cells=[dict(cell, values={"workers": {"value": "2", "verdict": "kept"}})]), "matrix")
    rejected(dict(doc, cells=[dict(cell, status="fine")]), "matrix")


def test_fix_document_follows_its_schema():
    result = run_cli(["fix", "--format", "json", "--watch", "fix_config:FixConfig", "--", PY, example("fix_config.py"),
                      "--page-size", "64"])
    assert result.rc == 0, result
    doc = result.doc
    jsonschema.validate(doc, schema("fix"))
    [problem] = doc["problems"]
    assert problem["kind"] == "overridden" and problem["fixes"] and doc["fixes"][0]["verified"] is True
    rejected(dict(doc, extra=1), "fix")
    rejected(dict(doc, problems=[dict(problem, kind="bug")]), "fix")
    rejected(dict(doc, fixes=[dict(doc["fixes"][0], verified=False)]), "fix")


def test_gate_and_lock_without_a_framework_follow_their_schemas(tmp_path):
    """check -f / lock -f on commands that never run a framework: an undefined $(VAR) and an image naming no
    release (bad input), KServe's wrapper (not followed). (tests/frameworks/test_schema_frameworks.py: resolved
    rows, drift and a lock with values, on SGLang.)"""
    pods = tmp_path / "pods.yaml"
    pods.write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n"
                    "    - name: undefined\n      image: registry.example.com/my-sglang:dev\n"
                    "      command: [python3, -m, sglang.launch_server, --model-path, $(MODEL_DIR)]\n"
                    "    - name: unknown-release\n      image: registry.example.com/my-sglang:dev\n"
                    "      command: [python3, -m, sglang.launch_server, --model-path, models/llama-3-8b]\n")
    files = ["-f", str(pods), os.path.join("tests", "manifests", "kserve-huggingfaceserver-llama3.yaml")]
    gate = run_sub(["check", "--format", "json"] + files)
    assert gate.rc == 64, gate
    doc = gate.doc
    jsonschema.validate(doc, schema("gate"))
    assert [r["status"] for r in doc["rows"]] == ["input", "input", "unsupported", "unsupported"]
    rejected(dict(doc, extra=1), "gate")
    rejected(dict(doc, rows=[dict(doc["rows"][0], status="passed")]), "gate")
    lock = tmp_path / "flagtrace.lock.json"
    written = run_sub(["lock", "-o", str(lock)] + files)
    assert written.rc == 64 and "wrote %s: 0 commands" % lock in written.err, written
    locked = json.loads(lock.read_text())
    jsonschema.validate(locked, schema("lock"))
    assert locked == {"schema": "flagtrace/lock@1", "commands": {}}
    rejected(dict(locked, extra=1), "lock")
    rejected(dict(locked, commands={"x": {"release": "sglang==0.5.11", "image": "", "values": {"page_size": 16},
                                          "unstable": []}}), "lock")  # a value is its repr, a string
