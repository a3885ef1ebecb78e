"""SGLang 0.5.23: a sealed msgspec record resolved by declarations only, in resolve_once().

No field is ever written: each decision is a declaration, credited to the code that decided (the
line that stored the value in a pass's or provider's returned dict, or the line that called
declare_resolution), with the place it entered the stash. Line numbers measured on the release
(docs/dev/sglang-0.5.15-0.5.23.md); each is checked against the source text it names.
"""
import json
import os
import subprocess
import sys

import jsonschema
import pytest

from sglang_support import HEADLINE, LLAMA3, MODELS, ROOT, overlay_file, run_sglang

VERSION = "0.5.23"
pytestmark = pytest.mark.skipif(os.environ.get("FLAGTRACE_SGLANG", VERSION) != VERSION,
                                reason="FLAGTRACE_SGLANG selects another release")
STOP = "sglang.srt.server_args:ServerArgs.resolve_once (returned)"


def source_line(relpath, line):
    with open(overlay_file(VERSION, os.path.join("sglang", "srt", relpath)), encoding="utf-8") as fh:
        return fh.read().splitlines()[line - 1].strip()


def declared_change(run, name):
    change = run.field(name)["changes"][-1]
    assert change["how"] == "declared", change
    return change, change["declared"]


def test_headline_auto_strategy_is_credited_to_the_line_the_pass_stored_it():
    run = run_sglang(VERSION, HEADLINE)
    assert run.rc == 0, run
    schema = os.path.join(ROOT, "src", "flagtrace", "schema", "trace.schema.json")
    jsonschema.validate(run.trace, json.load(open(schema)))
    assert run.doc["stop"] == STOP
    assert run.doc["adapter"]["version"] == VERSION
    field = run.field("mamba_radix_cache_strategy")
    assert field["verdict"] == "decided"
    assert (field["initial"]["value"], field["final"]["value"]) == ("auto", "extra_buffer")
    change, declared = declared_change(run, "mamba_radix_cache_strategy")
    assert change["func"] == "_mamba_radix_cache_resolution"
    assert change["file"].endswith(os.path.join("arg_groups", "overrides.py"))
    assert change["line"] == 483
    assert source_line("arg_groups/overrides.py", 483) == 'declared["mamba_radix_cache_strategy"] = "extra_buffer"'
    assert [(c["line"], c["holds"]) for c in change["conditions"]][-2:] == [(477, True), (480, True)]
    reads = {r["field"]: r for r in change["reads"] if "field" in r}
    assert reads["mamba_radix_cache_strategy"]["value"]["value"] == "auto"
    assert reads["mamba_radix_cache_strategy"]["origin"] == "default"
    assert declared["slot"]["func"] == "handle_mamba_radix_cache"
    assert (declared["slot"]["line"], declared["applied"]["line"]) == (1057, 1057)
    assert source_line("arg_groups/model_hook.py", 1057).startswith("run_post_process_pass(")


def test_page_size_forced_to_1_on_b200_by_the_model_override_without_a_log_line():
    run = run_sglang(VERSION, HEADLINE + ["--page-size", "64"])
    assert run.rc == 0, run
    page = run.field("page_size")
    assert page["verdict"] == "overridden"
    assert (page["initial"]["value"], page["final"]["value"]) == (64, 1)
    assert page["requested"]["typed"] == "--page-size"
    change, declared = declared_change(run, "page_size")
    assert change["func"] == "_qwen3_5_hybrid_overrides"
    assert change["file"].endswith(os.path.join("model_overrides", "qwen3_5.py"))
    assert change["line"] == 48 and '"page_size": 64 if' in change["statement"]
    ternary = change["conditions"][-1]
    assert (ternary["keyword"], ternary["holds"]) == ("ternary", False), ternary
    assert {"local": "sm100_default_attn_backend", "value": {"repr": "'triton'"}} in change["reads"]
    assert any(h["query"] == "is_sm100_supported()" and h["result"] == "True" for h in change["hardware"])
    # the model hook that applied it: the .extend of the stash
    assert declared["slot"]["func"] == "handle_model_specific_adjustments"
    assert declared["slot"]["line"] == 237
    assert source_line("arg_groups/model_hook.py", 237) == "server_args._resolved_overrides.extend(model_overrides)"
    assert change["logs"] == []


def test_page_size_stays_64_on_h100():
    run = run_sglang(VERSION, HEADLINE + ["--page-size", "64"], gpu="H100")
    assert run.rc == 0, run
    page = run.field("page_size")
    assert page["verdict"] == "honoured" and page["final"]["value"] == 64
    assert page["changes"] == []


def test_max_running_requests_48_declared_by_the_speculative_hook():
    run = run_sglang(VERSION, HEADLINE)
    field = run.field("max_running_requests")
    change, declared = declared_change(run, "max_running_requests")
    assert (change["old"]["value"], change["new"]["value"]) == (None, 48)
    assert change["func"] == "_handle_eagle_family"
    assert change["file"].endswith(os.path.join("arg_groups", "speculative_hook.py"))
    assert change["line"] == 1087
    assert source_line("arg_groups/speculative_hook.py", 1087) == "declare_resolution("
    assert declared["source"] == "_handle_eagle_family"
    assert any(c["test"] == "cfg.max_running_requests is None" and c["holds"] for c in change["conditions"])
    assert any("Max running requests is reset to 48" in log["message"] for log in change["logs"])
    assert field["final"]["value"] == 48


def test_superseded_declarations_stay_in_the_history_with_their_declared_names():
    run = run_sglang(VERSION, HEADLINE)
    field = run.field("uses_mamba_radix_cache")
    assert [(d["source"], d["value"]["value"], d["superseded"]) for d in field["declarations"]] == [
        ("_handle_model_specific_adjustments", False, True),
        ("_mamba_radix_cache_resolution", True, False)]
    # the legacy source name is not the function that declared it
    assert field["declarations"][0]["decider"]["func"] == "handle_model_specific_adjustments"
    spec = run.field("speculative_algorithm")
    assert [d["source"] for d in spec["declarations"]] == ["handle_speculative_decoding"] * 2
    assert spec["verdict"] == "honoured"


def test_fallback_value_is_shown_as_such():
    run = run_sglang(VERSION, ["--model-path", LLAMA3])
    assert run.rc == 0, run
    field = run.field("swa_full_tokens_ratio")
    assert (field["verdict"], field["origin"], field["final"]["value"]) == ("default", "fallback", 0.8)
    assert field["fallback"]["file"].endswith(os.path.join("fields", "schedule.py"))
    assert "fallback=0.8" in source_line("arg_groups/fields/schedule.py", field["fallback"]["line"]).replace(" ", "")
    assert not any(e.get("field") == "swa_full_tokens_ratio" and e["how"] == "declared" for e in run.trace["events"]
                   if e["kind"] == "write")


def test_old_flag_is_rejected_with_the_rename():
    run = run_sglang(VERSION, HEADLINE + ["--mamba-scheduler-strategy", "extra_buffer"])
    assert run.rc == 2, run
    error = run.doc["error"]
    assert error["kind"] == "argparse"
    assert "unrecognized arguments: --mamba-scheduler-strategy extra_buffer" in error["message"]
    assert error["renamed"]["--mamba-scheduler-strategy"].startswith("renamed to --mamba-radix-cache-strategy")
    assert "0.5.20" in error["renamed"]["--mamba-scheduler-strategy"]


@pytest.mark.parametrize("gpu, line, field, origin", [
    ("B200x7", 157, "page_size", "decided"),
    ("H100", 158, "disable_overlap_schedule", "default"),
])
def test_no_buffer_assertion_is_explained_with_what_its_check_read(gpu, line, field, origin):
    run = run_sglang(VERSION, HEADLINE + ["--mamba-radix-cache-strategy", "no_buffer"], gpu=gpu)
    assert run.rc == 2, run
    error = run.doc["error"]
    assert error["type"] == "AssertionError"
    assert (error["site"]["func"], error["site"]["line"]) == ("validate_mamba_no_buffer", line)
    assert error["site"]["file"].endswith(os.path.join("arg_groups", "mamba_hook.py"))
    read = next(r for r in error["reads"] if r.get("field") == field)
    assert read["origin"] == origin
    if field == "page_size":  # the value the resolved view read: declared by the model override
        assert read["value"]["value"] == 64
        assert (read["set_by"]["func"], read["set_by"]["line"]) == ("_qwen3_5_hybrid_overrides", 48)
        assert read["declared_as"] == "_qwen3_5_hybrid_overrides"
    else:
        assert read["value"]["value"] is False
        assert any(h["option"] == "--disable-overlap-schedule" for h in error["hints"])
    strategy = run.field("mamba_radix_cache_strategy")
    assert strategy["verdict"] == "honoured" and strategy["final"]["value"] == "no_buffer"


def test_sglang_serve_stops_at_the_same_point(tmp_path):
    overlay = overlay_file(VERSION, "")
    out = tmp_path / "a.json"
    proc = subprocess.run([sys.executable, "-m", "flagtrace", "explain", "--gpu", "H100", "--format", "json",
                           "-o", str(out), "--", os.path.join(overlay, "bin", "sglang"), "serve",
                           "--model-path", LLAMA3, "--page-size", "64"],
                          capture_output=True, text=True, cwd=ROOT, timeout=600,
                          env=dict(os.environ, PYTHONPATH=overlay))
    assert proc.returncode == 0, proc.stderr[-3000:]
    doc = json.loads(out.read_text())
    fields = {f["field"]: f for f in doc["fields"]}
    assert doc["stop"] == STOP
    assert fields["page_size"]["verdict"] == "honoured"
    assert fields["attention_backend"]["final"]["value"] == "fa3"
    assert fields["attention_backend"]["changes"][-1]["func"] == "_attention_backend_default"


def test_deepseek_page_size_is_credited_to_the_local_that_decided_it():
    """DeepSeek-V3 FP8, --page-size 16 on a B200: the pass returns {"page_size": page_size} because
    the local differs from the view; the reason is the trtllm_mla branch that set page_size = 64,
    under its own if chain, and attention_backend there was decided by the DeepSeek overrides."""
    run = run_sglang(VERSION, ["--model-path", os.path.join(MODELS, "deepseek-v3-fp8"), "--tp", "8", "--page-size",
                               "16"], gpu="B200x8")
    assert run.rc == 0, run
    field = run.field("page_size")
    assert (field["verdict"], field["initial"]["value"], field["final"]["value"]) == ("overridden", 16, 64)
    change = field["changes"][-1]
    assert change["func"] == "_mla_backend_page_constraints" and source_line(
        "arg_groups/overrides.py", change["line"]) == 'return {"page_size": page_size}'
    local = change["from_local"]
    assert (local["local"], local["src"]) == ("page_size", "page_size = 64")
    assert source_line("arg_groups/overrides.py", local["line"]) == "page_size = 64"
    tests = [c["test"] for c in local["conditions"]]
    assert tests == ['view.attention_backend == "trtllm_mla" or view.decode_attention_backend == "trtllm_mla"',
                     "page_size not in [32, 64]"] and all(c["holds"] for c in local["conditions"])
    backend = next(r for r in local["reads"] if r.get("field") == "attention_backend")
    assert backend["value"]["value"] == "trtllm_mla" and backend["origin"] == "decided"
    assert backend["set_by"]["func"] == "_deepseek_family_overrides"
    assert all(r.get("local") != "page_size" for r in local["reads"])  # its value there is not the final one


def test_declared_override_of_an_explicit_flag_is_an_override():
    """issue 24: ``--dp-size 8 --enable-dp-attention`` is the deprecated spelling of
    ``--attn-dp-size 8``; handle_deprecated_dp_attention declares attn_dp_size=8, dp_size=1 and
    enable_dp_attention=False, which resolution_result returns. Before: enable_dp_attention was shown
    honoured True (resolved_dict's /server_info value, attn_dp_size > 1) with that very change."""
    run = run_sglang(VERSION, ["--model-path", LLAMA3, "--tp", "8", "--dp-size", "8", "--enable-dp-attention"],
                     gpu="B200x8")
    assert run.rc == 0, run
    hook = "arg_groups/parallel_hook.py"
    expected = {"enable_dp_attention": ("overridden", True, False, 59, "declare_resolution("),
                "dp_size": ("overridden", 8, 1, 53, "declare_resolution("),
                "attn_dp_size": ("decided", 1, 8, 53, "declare_resolution(")}
    for name, (verdict, old, new, line, src) in expected.items():
        field = run.field(name)
        assert (field["verdict"], field["initial"]["value"], field["final"]["value"]) == (verdict, old, new), field
        change, declared = declared_change(run, name)
        assert (change["old"]["value"], change["new"]["value"]) == (old, new)
        assert change["func"] == "handle_deprecated_dp_attention" and change["file"].endswith(hook)
        assert change["line"] == line and source_line(hook, line) == src
        assert declared["source"] == "_handle_deprecated_dp_attention"
    assert run.field("enable_dp_attention")["requested"] == {"option": "--enable-dp-attention",
                                                            "typed": "--enable-dp-attention"}
    assert run.field("dp_size")["requested"]["typed"] == "--dp-size"
