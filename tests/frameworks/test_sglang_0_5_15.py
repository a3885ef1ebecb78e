"""SGLang 0.5.15: decisions declared into a stash and applied at the end of __post_init__.

Each applied declaration must be credited to the code that declared it (not to
materialize_declarations), with the handler that asked and where it was applied. Line numbers
from docs/dev/sglang-0.5.15-0.5.23.md where it gives them, measured on the release otherwise.
"""
import json
import os

import jsonschema
import pytest

from sglang_support import HEADLINE, LLAMA3, run_sglang

VERSION = "0.5.15"
pytestmark = pytest.mark.skipif(os.environ.get("FLAGTRACE_SGLANG", VERSION) != VERSION,
                                reason="FLAGTRACE_SGLANG selects another release")


def declared_change(run, name):
    change = run.field(name)["changes"][-1]
    assert change["how"] == "declared", change
    return change, change["declared"]


def test_headline_auto_strategy_is_credited_to_the_pass_that_declared_it():
    run = run_sglang(VERSION, HEADLINE)
    assert run.rc == 0, run
    schema = os.path.join(os.path.dirname(__file__), "..", "..", "src", "flagtrace", "schema", "trace.schema.json")
    jsonschema.validate(run.trace, json.load(open(schema)))
    assert any(e["kind"] == "decl" for e in run.trace["events"])
    field = run.field("mamba_radix_cache_strategy")
    assert field["verdict"] == "decided"
    assert (field["initial"]["value"], field["final"]["value"]) == ("auto", "extra_buffer")
    change, declared = declared_change(run, "mamba_radix_cache_strategy")
    assert change["func"] == "_mamba_radix_cache_resolution"
    assert change["file"].endswith(os.path.join("arg_groups", "overrides.py"))
    # the line that stored the value in the pass's returned dict, not its `return declared`
    assert change["line"] == 1044
    assert change["statement"] == 'declared["mamba_radix_cache_strategy"] = "extra_buffer"'
    assert [c["line"] for c in change["conditions"]][-2:] == [1038, 1041]
    assert declared["slot"]["func"] == "ServerArgs._handle_mamba_radix_cache"
    assert declared["slot"]["line"] == 4289
    assert declared["applied"]["func"] == "materialize_declarations"
    assert declared["applied"]["line"] == 212
    assert field["declarations"][-1]["source"] == "_mamba_radix_cache_resolution"


def test_page_size_forced_to_1_on_b200_by_the_model_override_without_a_log_line():
    run = run_sglang(VERSION, HEADLINE + ["--page-size", "64"])
    assert run.rc == 0, run
    page = run.field("page_size")
    assert page["verdict"] == "overridden"
    assert (page["initial"]["value"], page["final"]["value"]) == (64, 1)
    change, declared = declared_change(run, "page_size")
    assert change["func"] == "_qwen3_5_hybrid_overrides"
    assert change["line"] == 815 and '"page_size"' in change["statement"]
    ternary = change["conditions"][-1]
    assert (ternary["keyword"], ternary["holds"]) == ("ternary", False), ternary
    assert {"local": "sm100_default_attn_backend", "value": {"repr": "'triton'"}} in change["reads"]
    assert declared["slot"]["func"] == "ServerArgs._handle_model_specific_adjustments"
    assert declared["slot"]["line"] == 3840
    assert change["logs"] == []


def test_page_size_stays_64_on_h100():
    run = run_sglang(VERSION, HEADLINE + ["--page-size", "64"], gpu="H100")
    assert run.rc == 0, run
    assert run.field("page_size")["verdict"] == "honoured"


def test_max_running_requests_48_from_the_speculative_hook():
    run = run_sglang(VERSION, HEADLINE)
    change = run.field("max_running_requests")["changes"][-1]
    assert (change["old"]["value"], change["new"]["value"]) == (None, 48)
    assert change["func"] == "_handle_eagle_family"
    assert change["file"].endswith(os.path.join("arg_groups", "speculative_hook.py"))
    assert change["line"] == 330


def test_old_flag_is_reported_as_an_alias_of_the_new_one():
    run = run_sglang(VERSION, HEADLINE + ["--mamba-scheduler-strategy", "extra_buffer"])
    assert run.rc == 0, run
    field = run.field("mamba_radix_cache_strategy")
    assert field["verdict"] == "honoured"
    assert field["requested"]["typed"] == "--mamba-scheduler-strategy"
    assert field["requested"]["alias_of"] == "--mamba-radix-cache-strategy"


def test_no_buffer_assertion_reads_the_declared_page_size():
    run = run_sglang(VERSION, HEADLINE + ["--mamba-radix-cache-strategy", "no_buffer"])
    assert run.rc == 2, run
    error = run.doc["error"]
    assert error["type"] == "AssertionError"
    assert error["message"] == "no_buffer only supports page_size=1."
    assert error["site"]["func"] == "ServerArgs._validate_mamba_no_buffer"
    assert error["site"]["line"] == 4252
    page = [r for r in error["reads"] if r.get("field") == "page_size"][0]
    assert page["declared"]["value"]["value"] == 64
    assert page["declared"]["source"] == "_qwen3_5_hybrid_overrides"
    strategy = [m for m in error["mentions"] if m["field"] == "mamba_radix_cache_strategy"][0]
    assert strategy["origin"] == "cli"


def test_dense_model_on_b200_resolves():
    run = run_sglang(VERSION, ["--model-path", LLAMA3])
    assert run.rc == 0, run
    assert run.field("attention_backend")["final"]["value"] == "trtllm_mha"
