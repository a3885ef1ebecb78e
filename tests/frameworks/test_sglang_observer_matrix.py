"""Observer effect on the declaring generations: over 30 commands per release (models x GPUs x
flag sets), the effective config flagtrace reports equals what SGLang resolves without it
(0.5.15: the dataclass after prepare_server_args; 0.5.23: resolution_result after resolve_once).

Commands run in batches (observer_support.py: one import per release, serving every GPU it can, a fork per
command); the batch traces are checked against the real ``flagtrace explain`` on two commands.
"""
import concurrent.futures
import os

import pytest

from flagtrace.analysis.explain import analyse
from observer_support import differences, tier, traced, untraced
from sglang_support import HEADLINE, MODELS, run_sglang

RELEASES = ("0.5.15", "0.5.23")
SPEC = ["--speculative-algorithm", "EAGLE", "--speculative-num-steps", "3", "--speculative-eagle-topk", "1",
        "--speculative-num-draft-tokens", "4", "--trust-remote-code"]
FLAGS = {
    "base": [], "page64": ["--page-size", "64"], "tp2": ["--tp", "2"], "nooverlap": ["--disable-overlap-schedule"],
    "chunk": ["--chunked-prefill-size", "4096"], "noradix": ["--disable-radix-cache"],
    "mem": ["--mem-fraction-static", "0.8", "--context-length", "8192"], "maxrun": ["--max-running-requests", "64"],
    "spec": SPEC, "headline": HEADLINE[2:], "headline-page64": HEADLINE[2:] + ["--page-size", "64"],
}
MATRIX = {  # GPU -> (model, flag set)
    "B200x7": [("llama-3-8b", "base"), ("llama-3-8b", "page64"), ("qwen3-8b", "tp2"), ("qwen3.6-27b", "headline"),
               ("qwen3.6-27b", "headline-page64"), ("qwen3.6-27b", "base"), ("qwen3-next-80b-a3b", "base"),
               ("deepseek-v3", "base"), ("gpt-oss-20b", "base"), ("falcon-h1-7b", "nooverlap")],
    "H100": [("llama-3-8b", "base"), ("llama-3-8b", "page64"), ("qwen3-8b", "chunk"),
             ("qwen3.6-27b", "headline-page64"), ("qwen3.6-27b", "noradix"), ("qwen3-next-80b-a3b", "spec"),
             ("deepseek-v3", "tp2"), ("deepseek-v3-fp8", "base"), ("gpt-oss-20b", "mem"), ("falcon-h1-7b", "base")],
    "A100-80G": [("llama-3-8b", "base"), ("llama-3-8b", "maxrun"), ("qwen3-8b", "nooverlap"), ("qwen3-8b", "spec"),
                 ("qwen3.6-27b", "base"), ("qwen3.6-27b", "page64"), ("qwen3-next-80b-a3b", "mem"),
                 ("deepseek-v3", "noradix"), ("gpt-oss-20b", "base"), ("falcon-h1-7b", "chunk")],
}
# Checked against the real `flagtrace explain` (run_sglang, shared with the release tests).
CLI_CHECKED = [("B200x7", "qwen3.6-27b", "headline"), ("B200x7", "qwen3.6-27b", "headline-page64")]


def command(model, flags):
    return ["--model-path", os.path.join(MODELS, model)] + FLAGS[flags]


def _batch(version):  # every GPU from one import where the simulation allows it
    groups = {gpu: [(command(model, flags), {}) for model, flags in entries] for gpu, entries in MATRIX.items()}
    bare, modules = untraced(version, groups)
    traces = traced(version, groups, modules)
    return {(version, gpu): (bare[gpu], traces[gpu]) for gpu in MATRIX}


@pytest.fixture(scope="module")
def results():
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        out = {}
        for batch in pool.map(_batch, tier(RELEASES, ("0.5.23",))):
            out.update(batch)
        return out


def reported_config(trace):
    analysis = analyse(trace)
    assert analysis["status"] == "resolved", analysis.get("error")
    return {f["field"]: f["final"]["repr"] for f in analysis["fields"] if "." not in f["field"]}


@pytest.mark.parametrize("version", tier(RELEASES, ("0.5.23",)))
def test_reported_config_equals_untraced_resolution(version, results):
    count = 0
    for gpu, entries in MATRIX.items():
        bare, traces = results[(version, gpu)]
        for (model, flags), b, trace in zip(entries, bare, traces):
            name = "%s %s %s" % (gpu, model, flags)
            assert "fields" in b, (name, b)
            assert trace is not None, name
            reported = reported_config(trace)
            expected = {k: v for k, v in b["fields"].items() if not k.startswith("_")}
            assert set(reported) == set(expected), (name, set(reported) ^ set(expected))
            assert not differences(reported, expected), (name, differences(reported, expected))
            count += 1
    assert count >= 30


@pytest.mark.parametrize("version", tier(RELEASES, ("0.5.23",)))
def test_batch_traces_match_the_real_cli(version, results):
    for gpu, model, flags in CLI_CHECKED:
        _, traces = results[(version, gpu)]
        trace = traces[MATRIX[gpu].index((model, flags))]
        run = run_sglang(version, command(model, flags), gpu=gpu)
        assert run.rc == 0, run
        cli = {f["field"]: f["final"]["repr"] for f in run.doc["fields"] if "." not in f["field"]}
        assert not differences(reported_config(trace), cli)
        verdicts = {f["field"]: f["verdict"] for f in analyse(trace)["fields"]}
        assert verdicts == {f["field"]: f["verdict"] for f in run.doc["fields"]}
