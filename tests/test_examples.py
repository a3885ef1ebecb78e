"""The example programs traced for real through the CLI, with exact findings (JSON reports)."""
import json
import os
import tempfile

import pytest

from ft_support import PY, example, explain_json, field, flat, line_of, run_cached, run_cli, run_sub
from flagtrace.core.exitcodes import ExitCode

SERVE = "serve_config.py"
FROZEN = "frozen_config.py"
W_SERVE = "serve_config:ServeConfig"
S_SERVE = "serve_config:start"
W_FROZEN = "frozen_config:EngineConfig"
HYBRID_SPEC = ["--model", "hybrid-7b", "--page-size", "64", "--speculative-algo", "EAGLE"]
HYBRID = ["--model", "hybrid-7b", "--page-size", "64"]


def serve(args, **kw):
    return explain_json(SERVE, args, W_SERVE, S_SERVE, **kw)


@pytest.fixture(scope="module")
def spec_run():
    """hybrid model + page size + speculative: an override, decisions and a ValueError."""
    return serve(HYBRID_SPEC)


@pytest.fixture(scope="module")
def hybrid_run():
    """hybrid model + page size, no speculative: resolves and reaches the stop point."""
    return serve(HYBRID)


@pytest.fixture(scope="module")
def frozen_run():
    return explain_json(FROZEN, ["--quantization", "fp8"], W_FROZEN)


def _texts(conditions):
    return [c["text"] for c in conditions]


# -- (i) an explicit flag overridden under a condition -----------------------------------------
def test_explicit_flag_overridden_under_condition(hybrid_run):
    doc = hybrid_run.doc
    assert hybrid_run.rc == ExitCode.OK
    assert doc["status"] == "resolved" and doc["stop"] == S_SERVE
    f = field(doc, "page_size")
    assert f["verdict"] == "overridden" and f["origin"] == "cli"
    assert f["requested"] == {"option": "--page-size", "typed": "--page-size"}
    assert (f["initial"]["value"], f["final"]["value"]) == (64, 1)
    [ch] = f["changes"]
    assert ch["func"] == "ServeConfig._adjust_for_model"
    assert ch["file"] == os.path.abspath(example(SERVE))
    assert ch["line"] == line_of(SERVE, "self.page_size = 1")
    assert ch["src"] == "self.page_size = 1"
    assert (ch["old"]["value"], ch["new"]["value"], ch["how"]) == (64, 1, "setattr")
    [c] = ch["conditions"]
    assert c["text"] == "self.uses_hybrid_cache() and self.page_size > 1"
    assert (c["keyword"], c["holds"]) == ("if", True)
    assert c["line"] == line_of(SERVE, "if self.uses_hybrid_cache() and self.page_size > 1")
    reads = {r["field"]: r for r in ch["reads"]}
    assert reads["page_size"]["value"]["value"] == 64
    assert (reads["page_size"]["origin"], reads["page_size"]["option"]) == ("cli", "--page-size")
    # the model is read through a method the condition calls
    assert reads["model"]["via"] == "self.uses_hybrid_cache()"
    assert (reads["model"]["value"]["value"], reads["model"]["origin"]) == ("hybrid-7b", "cli")
    assert ch["logs"] == [{"level": "WARNING", "logger": "serve_config",
                           "message": "page_size 64 is not supported for hybrid models; using 1",
                           "line": line_of(SERVE, "logger.warning(")}]
    assert doc["summary"]["overridden"] == 1


def test_override_is_the_headline_of_the_terminal_report():
    r = run_cached(["explain", "--watch", W_SERVE, "--stop-at", S_SERVE, "--no-color", "--width", "100",
                    "--", PY, example(SERVE)] + HYBRID)
    assert r.rc == ExitCode.OK, r
    assert "OVERRIDDEN" in r.out
    assert "page_size 64 → 1 (asked: --page-size)" in flat(r.out)
    assert "ServeConfig._adjust_for_model  %s:%d" % (example(SERVE), line_of(SERVE, "self.page_size = 1")) in r.out
    assert "because self.uses_hybrid_cache() and self.page_size > 1" in r.out
    assert "logged  WARNING page_size 64 is not supported" in r.out
    assert r.out.index("OVERRIDDEN") < r.out.index("DECIDED") < r.out.index("HONOURED")


def test_strict_exits_1_when_explicit_flag_overridden():
    r = run_cached(["explain", "--strict", "--format", "json", "--watch", W_SERVE, "--stop-at", S_SERVE,
                    "--", PY, example(SERVE)] + HYBRID)
    assert r.rc == ExitCode.OVERRIDDEN
    assert r.doc["summary"]["overridden"] == 1


# -- (ii) an `auto` value decided ----------------------------------------------------------
def test_auto_value_decided(hybrid_run):
    f = field(hybrid_run.doc, "cache_strategy")
    assert f["verdict"] == "decided" and f["origin"] == "default" and "requested" not in f
    assert (f["initial"]["value"], f["final"]["value"]) == ("auto", "no_buffer")
    [ch] = f["changes"]
    assert ch["func"] == "ServeConfig._decide_cache_strategy"
    assert ch["line"] == line_of(SERVE, 'self.cache_strategy = "no_buffer"')
    assert _texts(ch["conditions"]) == ['self.cache_strategy == "auto"']
    assert [(r["field"], r["origin"]) for r in ch["reads"]] == [("cache_strategy", "default")]
    assert ch["logs"] == []


# -- (iii) if / elif / else ------------------------------------------------------------------
def test_elif_branch_lists_negated_earlier_tests(hybrid_run):
    f = field(hybrid_run.doc, "attention")
    assert f["verdict"] == "decided"
    assert (f["initial"]["value"], f["final"]["value"]) == ("auto", "flash")
    [ch] = f["changes"]
    assert ch["func"] == "ServeConfig._choose_attention"
    assert ch["line"] == line_of(SERVE, 'self.attention = "flash"')
    assert [(c["keyword"], c["holds"], c["text"], c["line"]) for c in ch["conditions"]] == [
        ("if", False, "self.attention == 'auto'", line_of(SERVE, 'if self.attention != "auto"')),
        ("elif", False, "self.device != 'cpu'", line_of(SERVE, 'elif self.device == "cpu"')),
        ("elif", True, 'self.model.startswith("hybrid")', line_of(SERVE, 'elif self.model.startswith')),
    ]
    reads = {r["field"]: r for r in ch["reads"]}
    assert set(reads) == {"attention", "device", "model"}
    assert reads["device"]["origin"] == "default" and reads["model"]["option"] == "--model"


def test_change_gets_only_the_logs_of_its_own_call(hybrid_run):
    # The warning is logged in _adjust_for_model; _choose_attention runs later, in a new frame
    # that may reuse the same memory address: it must not inherit that warning.
    ch = field(hybrid_run.doc, "attention")["changes"][0]
    assert ch["logs"] == []


def test_else_branch_negates_every_test():
    doc = serve(["--model", "tiny"]).doc
    [ch] = field(doc, "attention")["changes"]
    assert ch["new"]["value"] == "triton"
    assert ch["line"] == line_of(SERVE, 'self.attention = "triton"')
    assert _texts(ch["conditions"]) == ["self.attention == 'auto'", "self.device != 'cpu'",
                                        'not (self.model.startswith("hybrid"))']


def test_first_elif_and_explicit_device():
    doc = serve(["--device", "cpu"]).doc
    [ch] = field(doc, "attention")["changes"]
    assert ch["new"]["value"] == "torch_native"
    assert _texts(ch["conditions"]) == ["self.attention == 'auto'", 'self.device == "cpu"']
    reads = {r["field"]: r for r in ch["reads"]}
    assert (reads["device"]["origin"], reads["device"]["option"]) == ("cli", "--device")
    assert field(doc, "device")["verdict"] == "honoured"


def test_explicit_value_kept_is_honoured():
    doc = serve(["--attention", "flash", "--model", "hybrid-1b"]).doc
    f = field(doc, "attention")
    assert f["verdict"] == "honoured" and f["changes"] == []
    assert f["requested"]["typed"] == "--attention"


# -- (iv) frozen dataclass, in-place list, nested object ----------------------------------------
def test_frozen_dataclass_object_setattr(frozen_run):
    doc = frozen_run.doc
    assert frozen_run.rc == ExitCode.OK and doc["status"] == "resolved"
    assert doc["object"] == "__main__:EngineConfig"
    f = field(doc, "dtype")
    assert f["verdict"] == "decided"
    [ch] = f["changes"]
    assert ch["how"] == "bypass"
    assert ch["func"] == "EngineConfig.__post_init__"
    assert ch["line"] == line_of(FROZEN, 'object.__setattr__(self, "dtype", "bfloat16")')
    assert (ch["old"]["value"], ch["new"]["value"]) == ("auto", "bfloat16")
    assert _texts(ch["conditions"]) == ['self.dtype == "auto"']


def test_list_appended_in_place_attributed_to_innermost_function(frozen_run):
    f = field(frozen_run.doc, "paths")
    assert f["verdict"] == "decided"
    assert f["initial"]["value"] == []
    assert f["final"]["value"] == ["/opt/kernels/fp8", "/opt/kernels/common"]
    first, second = f["changes"]
    assert (first["how"], first["func"]) == ("inplace", "EngineConfig.__post_init__")
    assert first["line"] == line_of(FROZEN, 'self.paths.append("/opt/kernels/fp8")')
    assert (first["old"]["value"], first["new"]["value"]) == ([], ["/opt/kernels/fp8"])
    assert _texts(first["conditions"]) == ['self.quantization == "fp8"']
    [read] = first["reads"]
    assert (read["field"], read["origin"], read["option"]) == ("quantization", "cli", "--quantization")
    # a plain function, not a method of the watched class
    assert (second["how"], second["func"]) == ("inplace", "register_defaults")
    assert second["line"] == line_of(FROZEN, 'config.paths.append("/opt/kernels/common")')
    assert second["new"]["value"] == ["/opt/kernels/fp8", "/opt/kernels/common"]
    assert second["conditions"] == []


def test_nested_object_field_reported_by_dotted_path(frozen_run):
    doc = frozen_run.doc
    names = [f["field"] for f in doc["fields"]]
    assert "graph.backend" in names and "graph.max_bs" in names
    assert "graph" not in names  # the nested object is reported through its fields
    f = field(doc, "graph.backend")
    assert f["verdict"] == "decided"
    [ch] = f["changes"]
    assert (ch["old"]["value"], ch["new"]["value"]) == ("auto", "full")
    assert ch["func"] == "EngineConfig.__post_init__"
    assert ch["line"] == line_of(FROZEN, 'self.graph.backend = "full"')
    assert _texts(ch["conditions"]) == ['self.graph.backend == "auto"']
    assert [r["field"] for r in ch["reads"]] == ["graph.backend"]
    assert field(doc, "graph.max_bs")["verdict"] == "default"
    assert field(doc, "quantization")["verdict"] == "honoured"
    assert doc["summary"] == {"overridden": 0, "decided": 3, "honoured": 1, "default": 1, "fields": 5}


def test_frozen_without_quantization_only_common_path():
    doc = explain_json(FROZEN, ["--dtype", "float16"], W_FROZEN).doc
    assert field(doc, "dtype")["verdict"] == "honoured"
    [ch] = field(doc, "paths")["changes"]
    assert ch["func"] == "register_defaults"
    assert field(doc, "paths")["final"]["value"] == ["/opt/kernels/common"]


# -- (v) the error that names a value the user never passed ------------------------------------
def test_error_names_decided_value_with_provenance(spec_run):
    assert spec_run.rc == ExitCode.TARGET_RAISED
    doc = spec_run.doc
    assert doc["status"] == "error"
    e = doc["error"]
    assert e["kind"] == "exception" and e["type"] == "ValueError"
    assert "no_buffer" in e["message"]
    assert e["site"]["func"] == "ServeConfig._validate"
    assert e["site"]["file"] == os.path.abspath(example(SERVE))
    assert e["site"]["line"] == line_of(SERVE, "raise ValueError(")
    assert [(c["keyword"], c["holds"], c["text"], c["line"]) for c in e["conditions"]] == [
        ("if", True, "self.speculative is not None and not self.disable_cache",
         line_of(SERVE, "if self.speculative is not None and not self.disable_cache")),
        ("if", True, 'self.cache_strategy == "no_buffer"', line_of(SERVE, 'if self.cache_strategy == "no_buffer"')),
    ]
    reads = {r["field"]: r for r in e["reads"]}
    assert list(reads) == ["speculative", "disable_cache", "cache_strategy"]
    spec = reads["speculative"]
    assert (spec["value"]["value"], spec["origin"], spec["option"]) == ("EAGLE", "cli", "--speculative-algo")
    assert (reads["disable_cache"]["value"]["value"], reads["disable_cache"]["origin"]) == (False, "default")
    cache = reads["cache_strategy"]
    assert (cache["value"]["value"], cache["origin"]) == ("no_buffer", "decided")
    assert cache["set_by"]["func"] == "ServeConfig._decide_cache_strategy"
    assert cache["set_by"]["line"] == line_of(SERVE, 'self.cache_strategy = "no_buffer"')
    assert cache["was"]["value"] == "auto" and cache["requested"] is None
    # the user never passed no_buffer: the message's value is traced to its decision
    [mention] = e["mentions"]
    assert mention["field"] == "cache_strategy" and mention["origin"] == "decided"


def test_error_terminal_report_points_at_the_decision():
    r = run_cached(["explain", "--no-color", "--watch", W_SERVE, "--stop-at", S_SERVE,
                    "--", PY, example(SERVE)] + HYBRID_SPEC)
    assert r.rc == ExitCode.TARGET_RAISED
    assert "Resolution failed" in r.out
    assert "ERROR ValueError" in r.out
    assert "raised in ServeConfig._validate  %s:%d" % (example(SERVE), line_of(SERVE, "raise ValueError(")) in r.out
    text = flat(r.out)  # the report wraps long lines at 100 columns
    assert ("cache_strategy = 'no_buffer' ← set from 'auto' by ServeConfig._decide_cache_strategy (line %d)"
            % line_of(SERVE, 'self.cache_strategy = "no_buffer"')) in text
    assert "speculative = 'EAGLE' ← --speculative-algo (command line)" in text


# -- (vi) os.environ writes ----------------------------------------------------------------
def test_environ_write_recorded(hybrid_run):
    env = hybrid_run.doc["env"]
    assert env == [{"key": "SERVE_CACHE_STRATEGY", "old": None, "new": "'no_buffer'", "how": None,
                    "func": "ServeConfig.__post_init__", "file": os.path.abspath(example(SERVE)),
                    "line": line_of(SERVE, 'os.environ["SERVE_CACHE_STRATEGY"]'),
                    "src": 'os.environ["SERVE_CACHE_STRATEGY"] = self.cache_strategy  # (vi) sets os.environ'}]


# -- (vii) a noisy program reading stdin ---------------------------------------------------
def test_chatty_program_reading_stdin():
    data = b"q" * 100000
    r = run_sub(["explain", "--format", "json", "--watch", W_SERVE, "--stop-at", S_SERVE, "--show-output",
                 "--", PY, example(SERVE), "--chatty", "50000", "--read-stdin"] + HYBRID, input=data)
    assert r.rc == ExitCode.OK, r
    doc = json.loads(r.out)  # stdout is the report and only the report
    assert "chatter" not in r.out
    assert doc["status"] == "resolved" and doc["stop"] == S_SERVE
    assert field(doc, "page_size")["verdict"] == "overridden"
    assert field(doc, "cache_strategy")["final"]["value"] == "no_buffer"
    # the target really printed and really read its stdin (shown on stderr by --show-output)
    assert "line 49999 of chatter" in r.err
    assert "read 100000 bytes from stdin" in r.err


def test_chatty_program_terminal_report_is_clean():
    r = run_sub(["explain", "--no-color", "--watch", W_SERVE, "--stop-at", S_SERVE,
                 "--", PY, example(SERVE), "--chatty", "50000", "--read-stdin"], input=b"abc")
    assert r.rc == ExitCode.OK, r
    assert "chatter" not in r.out and "chatter" not in r.err
    assert r.out.startswith("flagtrace explain")
    assert "cache_strategy 'auto' → 'no_buffer'" in flat(r.out)


# -- how flags are typed ---------------------------------------------------------------------
def test_prefix_abbreviation_is_explicit(spec_run):
    f = field(spec_run.doc, "speculative")
    assert f["verdict"] == "honoured" and f["origin"] == "cli"
    assert f["requested"] == {"option": "--speculative-algorithm", "typed": "--speculative-algo"}


def test_flag_equals_value_form_and_store_true():
    r = serve(["--model", "hybrid-7b", "--page-size=64", "--speculative-algo=EAGLE", "--disable-cache"])
    assert r.rc == ExitCode.OK, r
    doc = r.doc
    assert doc["status"] == "resolved" and doc["error"] is None
    f = field(doc, "page_size")
    assert f["verdict"] == "overridden" and f["requested"]["typed"] == "--page-size"
    assert f["initial"]["value"] == 64
    spec = field(doc, "speculative")
    assert spec["requested"] == {"option": "--speculative-algorithm", "typed": "--speculative-algo"}
    d = field(doc, "disable_cache")
    assert d["verdict"] == "honoured" and d["final"]["value"] is True
    assert d["requested"]["typed"] == "--disable-cache"
    mb = field(doc, "max_batch")
    assert mb["verdict"] == "decided" and mb["final"]["value"] == 48
    assert _texts(mb["changes"][0]["conditions"]) == ["self.speculative is not None and self.max_batch is None"]


def test_flag_left_at_default_is_not_explicit(hybrid_run):
    for name in ("disable_cache", "device", "speculative"):
        f = field(hybrid_run.doc, name)
        assert f["verdict"] == "default" and f["origin"] == "default" and "requested" not in f


# -- secrets --------------------------------------------------------------------------------
API_KEY = "sk-live-4f9a8b7c6d5e"
HUB_TOKEN = "hubtok-0123456789abcdef"
PLAIN = "plain_class.py"
W_PLAIN = "plain_class:Settings"


@pytest.mark.parametrize("how", ["terminal", "json", "why", "save"])
def test_secrets_never_leave_the_target(how, tmp_path, monkeypatch):
    monkeypatch.setenv("HUB_TOKEN", HUB_TOKEN)
    saved = tmp_path / "trace.json"
    common = ["--watch", W_PLAIN, "--stop-at", "plain_class:serve", "--save-trace", str(saved)]
    command = ["--", PY, example(PLAIN), "--api-key", API_KEY, "--serve", "--verbose"]
    if how == "terminal":
        r = run_cli(["explain", "--no-color"] + common + command)
    elif how == "json":
        r = run_cli(["explain", "--format", "json"] + common + command)
    elif how == "why":
        r = run_cli(["why", "hub_token"] + common + command)
    else:
        r = run_cli(["explain", "--format", "json"] + common + command)
        again = run_cli(["why", "api_key", "--format", "json", "--from", str(saved)])
        assert API_KEY not in again.out + again.err
    assert r.rc == ExitCode.OK, r
    everything = r.out + r.err + saved.read_text()
    assert API_KEY not in everything
    assert HUB_TOKEN not in everything
    assert "<redacted>" in everything
    assert "sk-live" not in everything and "hubtok" not in everything


def test_secret_flag_abbreviated_and_inline(tmp_path, monkeypatch):
    monkeypatch.delenv("HUB_TOKEN", raising=False)
    saved = tmp_path / "trace.json"
    for flag in (["--api-k", API_KEY], ["--api-key=" + API_KEY], ["--api", API_KEY]):
        r = run_cli(["explain", "--format", "json", "--watch", W_PLAIN, "--save-trace", str(saved),
                     "--", PY, example(PLAIN)] + flag)
        assert r.rc == ExitCode.OK, r
        assert API_KEY not in r.out + r.err + saved.read_text(), flag
        f = field(r.doc, "api_key")
        assert f["verdict"] == "honoured" and f["final"]["repr"] == "<redacted>"


def test_secret_in_config_object_passed_to_stop_point(tmp_path):
    # the stop point receives the whole config object, whose repr contains the key
    saved = tmp_path / "trace.json"
    r = run_cli(["explain", "--format", "json", "--watch", W_SERVE, "--stop-at", S_SERVE, "--save-trace",
                 str(saved), "--", PY, example(SERVE), "--api-key", API_KEY])
    assert r.rc == ExitCode.OK, r
    assert API_KEY not in r.out + r.err + saved.read_text()
    assert field(r.doc, "api_key")["final"]["repr"] == "<redacted>"


def test_secret_written_to_environment_is_redacted(monkeypatch):
    monkeypatch.setenv("HUB_TOKEN", HUB_TOKEN)
    r = run_cli(["explain", "--format", "json", "--watch", W_PLAIN, "--", PY, example(PLAIN)])
    env = {e["key"]: e for e in r.doc["env"]}
    assert env["DOWNLOAD_TOKEN"]["new"] == "<redacted>"
    assert HUB_TOKEN not in r.out


# -- why / check / saved traces ----------------------------------------------------------------
def test_why_field_json(hybrid_run):
    r = run_cached(["why", "page_size", "--format", "json", "--watch", W_SERVE, "--stop-at", S_SERVE,
                    "--", PY, example(SERVE)] + HYBRID)
    assert r.rc == ExitCode.OK
    assert r.doc["field"] == field(hybrid_run.doc, "page_size")


def test_why_field_terminal():
    r = run_cached(["why", "attention", "--no-color", "--watch", W_SERVE, "--stop-at", S_SERVE,
                    "--", PY, example(SERVE)] + HYBRID)
    assert r.rc == ExitCode.OK
    assert "attention: decided 'auto' → 'flash'" in flat(r.out)
    assert "initial value from default" in r.out
    assert "ServeConfig._choose_attention" in r.out


def test_why_unknown_field_suggests_close_names():
    r = run_cached(["why", "page_sz", "--watch", W_SERVE, "--stop-at", S_SERVE, "--", PY, example(SERVE)])
    assert r.rc == ExitCode.USAGE
    assert r.err.startswith("flagtrace: page_sz is not a field of __main__:ServeConfig")
    assert "page_size" in r.err


def test_check_expectations_and_strict():
    base = ["--watch", W_SERVE, "--stop-at", S_SERVE, "--format", "json", "--", PY, example(SERVE)] + HYBRID
    ok = run_cached(["check", "--expect", "page_size=1", "--expect", "cache_strategy=no_buffer",
                     "--expect", "disable_cache=false", "--expect", "max_batch=None"] + base)
    assert ok.rc == ExitCode.OK, ok
    assert [e["ok"] for e in ok.doc["expectations"]] == [True, True, True, True]
    bad = run_cached(["check", "--expect", "page_size=64"] + base)
    assert bad.rc == ExitCode.OVERRIDDEN
    assert bad.doc["expectations"] == [{"field": "page_size", "expected": "64", "actual": "1", "ok": False}]
    strict = run_cached(["check", "--strict"] + base)
    assert strict.rc == ExitCode.OVERRIDDEN
    missing = run_cached(["check", "--expect", "nope=1"] + base)
    assert missing.rc == ExitCode.OVERRIDDEN and missing.doc["expectations"][0]["actual"] is None


def test_saved_trace_gives_the_same_report(tmp_path):
    saved = str(tmp_path / "t.json")
    argv = ["--watch", W_SERVE, "--stop-at", S_SERVE, "--", PY, example(SERVE)] + HYBRID_SPEC
    live = run_cli(["explain", "--format", "json", "--save-trace", saved] + argv)
    again = run_cli(["explain", "--format", "json", "--from", saved])
    assert live.rc == again.rc == ExitCode.TARGET_RAISED
    assert again.doc == live.doc
    with open(saved, encoding="utf-8") as fh:
        trace = json.load(fh)
    assert trace["schema"] == "flagtrace/trace@2"
    assert os.path.abspath(example(SERVE)) in {os.path.abspath(p) for p in trace["sources"]}
    term_live = run_cli(["explain", "--no-color", "--from", saved])
    term = run_cached(["explain", "--no-color"] + argv)
    assert term_live.out == term.out


def test_module_mode_target(tmp_path):
    # python -m MODULE with the watched class in an imported module (post-import hook path)
    pkg = tmp_path / "svc"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "config.py").write_text(
        "import dataclasses\n"
        "@dataclasses.dataclass\n"
        "class Cfg:\n"
        "    port: int = 0\n"
        "    def __post_init__(self):\n"
        "        if self.port == 0:\n"
        "            self.port = 8080\n")
    (pkg / "__main__.py").write_text(
        "import argparse\nfrom svc.config import Cfg\n"
        "p = argparse.ArgumentParser(); p.add_argument('--port', type=int, default=0)\n"
        "print(Cfg(port=p.parse_args().port))\n")
    r = run_cli(["explain", "--format", "json", "--watch", "svc.config:Cfg", "--", PY, "-m", "svc"],
                cwd=str(tmp_path))
    assert r.rc == ExitCode.OK, r
    f = field(r.doc, "port")
    assert f["verdict"] == "decided" and f["final"]["value"] == 8080
    assert f["changes"][0]["func"] == "Cfg.__post_init__" and f["changes"][0]["line"] == 7
    assert r.doc["object"] == "svc.config:Cfg"
    r2 = run_cli(["explain", "--format", "json", "--watch", "svc.config:Cfg", "--", PY, "-m", "svc",
                  "--port", "9000"], cwd=str(tmp_path))
    assert field(r2.doc, "port")["verdict"] == "honoured"


# -- an option whose dest reaches the config under another name -------------------------------
def test_explicit_request_follows_a_dest_copied_to_another_name():
    """``--tp 4`` parses into tensor_parallel_size; ``args.tp_size = args.tensor_parallel_size``
    carries the request to the config's tp_size (SGLang's from_cli_args does exactly this)."""
    res = explain_json("renamed_dest.py", ["--tp", "4", "--dp", "8"], "renamed_dest:Config", "renamed_dest:start")
    assert res.rc == ExitCode.OK
    tp = field(res.doc, "tp_size")
    assert tp["verdict"] == "honoured" and tp["origin"] == "cli"
    # the option string argparse matched (the action's other string may mean something else)
    assert tp["requested"] == {"option": "--tp", "typed": "--tp", "renamed_from": "tensor_parallel_size"}
    dp = field(res.doc, "dp_size")
    assert dp["verdict"] == "overridden" and (dp["initial"]["value"], dp["final"]["value"]) == (8, 4)
    [ch] = dp["changes"]
    assert (ch["func"], ch["line"]) == ("Config.__post_init__", line_of("renamed_dest.py", "self.dp_size = self.tp_size"))
    assert [r["field"] for r in ch["reads"]] == ["dp_size", "tp_size"]
    assert {r["field"]: (r["origin"], r["option"]) for r in ch["reads"]} == {"dp_size": ("cli", "--dp"),
                                                                          "tp_size": ("cli", "--tp")}


def test_observed_namespace_still_pickles_and_copies():
    res = run_sub(["run", "--watch", "renamed_dest:Config", "--", PY, example("renamed_dest.py"), "--tp", "2"])
    assert res.rc == ExitCode.OK and "exit status 0" in res.out and "HONOURED (1): tp_size=2" in res.out


def test_an_edit_in_place_flagtrace_did_not_see_is_not_called_unchanged():
    doc = explain_json("unseen_edit.py", [], "unseen_edit:Config").doc
    f = field(doc, "paths")
    assert (f["initial"]["value"], f["final"]["value"], f["changes"]) == ([], ["/opt/kernels"], [])
    assert f["verdict"] == "decided"
    assert f["note"].startswith("changed without an assignment flagtrace saw")


# -- enum-valued fields (issue 24) --------------------------------------------------------------
def test_enum_fields_are_values_listed_with_their_verdicts():
    """A member of an enum defined beside the config was adopted as a nested config: its internals
    (level._value_, level._name_) listed and the field itself dropped."""
    doc = explain_json("enum_fields.py", ["--level", "3"], "enum_fields:Config", "enum_fields:start").doc
    names = [f["field"] for f in doc["fields"]]
    assert sorted(names) == ["eager", "level", "shapes"], names
    level = field(doc, "level")
    # '3' converted to Level.O3 is the value asked for, not an override
    assert (level["verdict"], level["initial"]["value"], level["final"]["repr"]) == ("honoured", "3", "Level.O3")
    [c] = level["changes"]
    assert (c["func"], c["line"]) == ("Config.__post_init__", line_of("enum_fields.py", "self.level = Level(int("))
    assert (field(doc, "shapes")["verdict"], field(doc, "shapes")["final"]["value"]) == ("default", "backed")
    doc = explain_json("enum_fields.py", ["--level", "3", "--eager"], "enum_fields:Config", "enum_fields:start").doc
    level = field(doc, "level")
    assert (level["verdict"], level["final"]["repr"]) == ("overridden", "Level.O0")
    assert level["changes"][-1]["line"] == line_of("enum_fields.py", "self.level = Level.O0")


def test_the_targets_temporary_files_are_removed_and_named_as_its_own(tmp_path):
    """A program stopped before it serves never removes the temporary files it made at start: they are made
    in the run's own folder (removed with it; probe/tempdir.py), and the trace names the folder the program
    would have used."""
    r = run_cli(["explain", "--format", "json", "--watch", "temp_files:ServerConfig", "--stop-at", "temp_files:serve",
                 "--", PY, example("temp_files.py")])
    assert r.rc == 0, r
    fields = {f["field"]: f["final"]["value"] for f in r.doc["fields"]}
    for name, prefix in (("log_config", "tmp"), ("metrics_dir", "metrics_")):
        assert os.path.dirname(fields[name]) == tempfile.gettempdir(), fields
        assert os.path.basename(fields[name]).startswith(prefix) and not os.path.exists(fields[name])
