"""Observer effect on real vLLM releases: for 3 GPUs x 10 model/flag sets per release, the config
flagtrace reports equals the one vLLM's own create_engine_config() returns without flagtrace's
recording, under the same simulation (one fork per command on both sides)."""
import functools
import os

import pytest

from vllm_observer_support import differences, reported, traced, untraced
from vllm_support import DEEPSEEK_V3, LLAMA31, MODELS, releases

QWEN3 = MODELS + "/qwen3-8b"
GPT_OSS = MODELS + "/gpt-oss-20b"
DEEPSEEK_FP8 = MODELS + "/deepseek-v3-fp8"
QWEN3_NEXT = MODELS + "/qwen3-next-80b-a3b"
SETS = [
    [LLAMA31],
    [LLAMA31, "--enforce-eager", "--compilation-config", '{"mode":3,"cudagraph_mode":"FULL"}'],
    [LLAMA31, "--no-enable-chunked-prefill", "--max-num-seqs", "64"],
    [LLAMA31, "--max-model-len", "32768", "--enable-prefix-caching", "--gpu-memory-utilization", "0.85"],
    [QWEN3, "-tp", "2", "--kv-cache-dtype", "fp8", "--block-size", "32"],
    [QWEN3, "--reasoning-parser", "qwen3", "--max-num-batched-tokens", "4096"],
    [GPT_OSS, "--async-scheduling"],
    [DEEPSEEK_FP8, "-tp", "8", "--enable-expert-parallel"],
    [DEEPSEEK_V3, "-tp", "8", "--speculative-config", '{"method":"deepseek_mtp","num_speculative_tokens":3}'],
    [QWEN3_NEXT, "-tp", "4", "-O", "0"],
]
# make test runs one GPU on one release of each generation (a batch costs 2-3 minutes);
# FLAGTRACE_VLLM_OBSERVER=all runs every tested release on all three GPUs (30 commands per release).
ALL = os.environ.get("FLAGTRACE_VLLM_OBSERVER") == "all"
GPUS = ("H100x8", "A100x8", "B200x8") if ALL else ("H100x8",)
RELEASES = releases() if ALL else tuple(r for r in releases() if r in ("0.15.1", "0.33.0")) or releases()[:1]
COMMANDS = [(tuple(s), ()) for s in SETS]


@functools.lru_cache(maxsize=None)
def batch(version):  # every GPU from one import where the simulation allows it
    groups = {gpu: COMMANDS for gpu in GPUS}
    bare, modules = untraced(version, groups)
    return bare, traced(version, groups, modules)


@pytest.mark.parametrize("version", RELEASES)
@pytest.mark.parametrize("gpu", GPUS)
def test_reported_config_equals_untraced_resolution(version, gpu):
    bare, traces = (side[gpu] for side in batch(version))
    resolved = 0
    for (args, _), plain, trace in zip(COMMANDS, bare, traces):
        assert trace is not None, (args, plain)
        if "error" in plain:  # vLLM refused the command: flagtrace saw the same refusal
            assert trace["outcome"]["status"] == "raised", (args, plain, trace["outcome"])
            assert plain["error"].split(":")[0] == trace["outcome"]["exception"]["type"], (args, plain)
            continue
        assert trace["outcome"]["status"] == "stopped", (args, trace["outcome"])
        got = reported(trace)
        missing = sorted(set(plain["fields"]) - set(got))
        assert not missing, (args, missing[:20])
        diff = differences({k: got[k]["repr"] for k in plain["fields"] if k in got},
                           {k: v for k, v in plain["fields"].items() if k in got})
        assert not diff, (args, diff)
        resolved += 1
    assert resolved >= 7, resolved
