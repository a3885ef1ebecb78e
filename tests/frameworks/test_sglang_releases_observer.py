"""Observer effect on every newly supported release: over 10 commands each (2 GPUs x 5 model/flag
sets), the final config flagtrace reports equals SGLang's own untraced resolution under the same
simulation and compatibility shims (prepare_server_args; resolve_once + resolution_result on 0.5.19).
Batched as in test_sglang_observer_matrix.py: one import per release (both GPUs where the simulation
allows it), a fork per command.
"""
import concurrent.futures
import os

import pytest

from flagtrace.analysis.explain import analyse
from observer_support import tier, differences, traced, untraced
from sglang_support import MODELS

RELEASES = ("0.4.6.post5", "0.4.10.post2", "0.5.3", "0.5.6", "0.5.9", "0.5.13", "0.5.19")
COMMANDS = [
    ["--model-path", os.path.join(MODELS, "llama-3-8b")],
    ["--model-path", os.path.join(MODELS, "llama-3-8b"), "--tp", "2", "--chunked-prefill-size", "4096"],
    ["--model-path", os.path.join(MODELS, "qwen3-8b"), "--mem-fraction-static", "0.8", "--disable-radix-cache"],
    ["--model-path", os.path.join(MODELS, "deepseek-v3-fp8"), "--tp", "8", "--trust-remote-code"],
    ["--model-path", os.path.join(MODELS, "deepseek-v3-fp8"), "--tp", "8", "--page-size", "16",
     "--trust-remote-code"],
]
GPUS = ("B200x8", "H100x8")


def chosen():  # make test: one release per age band (0.4 dataclass, 0.5 __post_init__, declarations)
    return list(tier(RELEASES, ("0.4.6.post5", "0.5.9", "0.5.19")))


def _batch(version):  # both GPUs from one import where the simulation allows it
    groups = {gpu: [(args, {}) for args in COMMANDS] for gpu in GPUS}
    bare, modules = untraced(version, groups)
    traces = traced(version, groups, modules)
    return {(version, gpu): (bare[gpu], traces[gpu]) for gpu in GPUS}


@pytest.fixture(scope="module")
def results():
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        out = {}
        for batch in pool.map(_batch, chosen()):
            out.update(batch)
        return out


@pytest.mark.parametrize("version", chosen())
def test_reported_config_equals_untraced_resolution(version, results):
    count = 0
    for gpu in GPUS:
        bare, traces = results[(version, gpu)]
        for args, b, trace in zip(COMMANDS, bare, traces):
            name = "%s %s" % (gpu, " ".join(os.path.basename(a) for a in args))
            assert "fields" in b, (name, b)
            assert trace is not None, name
            analysis = analyse(trace)
            assert analysis["status"] == "resolved", (name, analysis.get("error"))
            reported = {f["field"]: f["final"]["repr"] for f in analysis["fields"] if "." not in f["field"]}
            expected = {k: v for k, v in b["fields"].items() if not k.startswith("_")}
            assert set(reported) == set(expected), (name, set(reported) ^ set(expected))
            assert not differences(reported, expected), (name, differences(reported, expected))
            count += 1
    assert count >= 10
