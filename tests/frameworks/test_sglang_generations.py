"""The same command on the two declaring generations (0.5.15: a dataclass that applies its
declarations; 0.5.23: a sealed record that only declares) gives analyses that line up field by
field: the same field names, verdicts and change shape, so two of them can be compared."""
import os

import pytest

from sglang_support import LLAMA3, HEADLINE, run_sglang

GENERATIONS = ("0.5.15", "0.5.23")
pytestmark = pytest.mark.skipif(bool(os.environ.get("FLAGTRACE_SGLANG")),
                                reason="needs both 0.5.15 and 0.5.23; FLAGTRACE_SGLANG selects one release")
HEADLINE_DECISIONS = {
    "mamba_radix_cache_strategy": ("decided", "auto", "extra_buffer"),
    "uses_mamba_radix_cache": ("decided", False, True),
    "max_running_requests": ("decided", None, 48),
    "page_size": ("decided", None, 64),
    "attention_backend": ("decided", None, "trtllm_mha"),
    "speculative_algorithm": ("honoured", "EAGLE", "EAGLE"),
    "mem_fraction_static": ("honoured", 0.92, 0.92),
}


def analyses():
    runs = {v: run_sglang(v, HEADLINE) for v in GENERATIONS}
    for run in runs.values():
        assert run.rc == 0, run
    return {v: {f["field"]: f for f in run.doc["fields"]} for v, run in runs.items()}, runs


def test_headline_decisions_line_up_across_generations():
    fields, _ = analyses()
    for name, (verdict, initial, final) in HEADLINE_DECISIONS.items():
        for version in GENERATIONS:
            f = fields[version][name]
            assert (f["verdict"], f["initial"]["value"], f["final"]["value"]) == (verdict, initial, final), (version, f)


def test_same_report_shape_and_mostly_the_same_fields():
    fields, runs = analyses()
    old, new = (set(fields[v]) for v in GENERATIONS)
    common = old & new
    assert len(common) >= 380, len(common)  # 0.5.15 has 422 fields, 0.5.23 546
    assert set(runs["0.5.15"].doc) == set(runs["0.5.23"].doc)
    for name in HEADLINE_DECISIONS:
        a, b = fields["0.5.15"][name], fields["0.5.23"][name]
        # after_stop only where code after the stop point assigns the field (0.5.15's model runner
        # may still set attention_backend at model load; 0.5.23's does not)
        assert set(a) - {"after_stop"} == set(b) - {"after_stop"}, name
        if a["changes"] and b["changes"]:
            # a declared change carries its declaration besides; 0.5.15 still writes this one directly
            assert set(a["changes"][-1]) - {"declared"} == set(b["changes"][-1]) - {"declared"}, name
            assert a["changes"][-1]["how"] == b["changes"][-1]["how"] or name == "max_running_requests"
            assert a["changes"][-1]["func"] == b["changes"][-1]["func"] or name == "attention_backend"
    # the verdicts of the fields both releases have agree, except where the release really differs
    differ = {n: (fields["0.5.15"][n]["verdict"], fields["0.5.23"][n]["verdict"]) for n in common
              if fields["0.5.15"][n]["verdict"] != fields["0.5.23"][n]["verdict"]}
    assert len(differ) <= 12, differ



def test_json_holds_whole_lists_and_nested_config_objects():
    """cuda_graph_bs (0.5.11: a list of 36 sizes) and cuda_graph_config (0.5.23: a dataclass of
    per-phase dataclasses) are JSON values a consumer can read, not null."""
    old = run_sglang("0.5.11", ["--model-path", LLAMA3], gpu="H100x8")
    bs = old.field("cuda_graph_bs")["final"]["value"]
    assert isinstance(bs, list) and len(bs) == 36 and bs[:4] == [1, 2, 4, 8] and bs[-1] == 256 and bs == sorted(bs)
    new = run_sglang("0.5.23", ["--model-path", LLAMA3])
    config = new.field("cuda_graph_config")["final"]["value"]
    assert set(config) >= {"decode", "prefill"}
    decode = config["decode"]
    assert decode["max_bs"] == max(decode["bs"]) and decode["bs"][:3] == [1, 2, 4]
