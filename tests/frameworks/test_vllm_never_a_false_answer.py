"""Issue 37: exit 0 only when the stop point was reached. ``vllm serve ... --data-parallel-multi-port-external-lb``
(vLLM 0.34.0) resolves nothing in the command's own process: its DP supervisor starts one API server process per
local data-parallel rank. flagtrace used to end there with exit 0, "resolved", reporting a stray ``EPLBConfig``
(9 fields, all default). Now the first rank's server is followed in the same process, with the arguments the
supervisor gives it: the report is its ``VllmConfig``, the stop point named."""
import pytest

from framework_support import ROOT  # noqa: F401
from vllm_support import DEEPSEEK_V3, LLAMA31, releases, run_vllm

VERSION = "0.34.0" if "0.34.0" in releases() else None
pytestmark = pytest.mark.skipif(VERSION is None, reason="0.34.0 not selected")
DP = ["--data-parallel-multi-port-external-lb", "--data-parallel-size", "2", "--data-parallel-size-local", "2"]


def test_the_dp_supervisors_first_server_is_followed_to_the_stop_point():
    run = run_vllm(VERSION, [DEEPSEEK_V3, "--enable-expert-parallel"] + DP, gpu="H100x8")
    assert run.rc == 0, run
    doc = run.doc
    assert doc["status"] == "resolved" and doc["object"] == "vllm.config.vllm:VllmConfig"
    assert doc["stop"] == "vllm.engine.arg_utils:EngineArgs.create_engine_config (returned)"
    assert run.field("parallel_config.data_parallel_size")["final"]["value"] == 2
    assert run.field("parallel_config.data_parallel_rank")["final"]["value"] == 0
    assert run.field("parallel_config.data_parallel_external_lb")["final"]["value"] is True
    note = next(n for n in doc["notes"] if "DP supervisor" in n)
    assert "reported: the first (data_parallel_rank 0, port 8000)" in note
    assert "data_parallel_size_local 2 -> 1" in note


def test_a_dense_model_gets_the_servers_own_refusal():
    """What each API server process would raise, not a success: vLLM refuses external DP for a dense model."""
    run = run_vllm(VERSION, [LLAMA31] + DP, gpu="H100x8")
    assert run.rc == 2, run
    error = run.doc["error"]
    assert error["type"] == "ValueError" and "Non-MoE models do not support external data parallel mode" in \
        error["message"]
    assert error["site"]["func"] == "EngineArgs.create_engine_config"


def test_a_model_after_options_and_a_draft_model_are_found_as_vllm_finds_them():
    """``vllm serve --speculative-config '{"model": DRAFT}' MODEL``: vLLM's parser takes MODEL after the options,
    and the draft is a model like the main one (catalog, cache, hub, stand-in). Before: "the vLLM command names no
    model" (exit 64), and offline the draft failed inside vLLM."""
    draft = '{"model": "Qwen/Qwen3-0.6B", "num_speculative_tokens": 3}'
    run = run_vllm(VERSION, ["--speculative-config", draft, "Qwen/Qwen3-8B", "--max-num-seqs", "32"],
                   extra=("--offline",))
    assert run.rc == 0, run
    assert run.doc["inputs"] == ["serve Qwen/Qwen3-8B → bundled Qwen/Qwen3-8B config.json",
                                 "--speculative-config.model Qwen/Qwen3-0.6B → bundled Qwen/Qwen3-0.6B config.json"]
    assert run.field("model_config.model")["verdict"] == "honoured"
    spec = run.field("speculative_config.model")
    assert spec["verdict"] == "honoured" and spec["final"]["value"] == "Qwen/Qwen3-0.6B"  # as typed (issue 38)
    method = run.field("speculative_config.method")
    assert method["verdict"] == "decided" and method["final"]["value"] == "draft_model"
    assert run.field("scheduler_config.max_num_seqs")["final"]["value"] == 32


def test_model_config_names_the_draft_it_answers_for():
    """A draft only the GPU box has (a path in ``--speculative-config``'s JSON): ``--model-config NAME=ID`` names
    the config that stands for it, as ``--model-config ID`` does for the main model. Before, --model-config
    answered for the main model only and the draft was a usage error (exit 64)."""
    draft = '{"model": "/models/acme-eagle-draft", "num_speculative_tokens": 3}'
    run = run_vllm(VERSION, ["--speculative-config", draft, "Qwen/Qwen3-8B"],
                   extra=("--offline", "--model-config", "acme-eagle-draft=Qwen/Qwen3-0.6B"))
    assert run.rc == 0, run
    assert run.doc["inputs"][1] == ("--speculative-config.model /models/acme-eagle-draft → bundled Qwen/Qwen3-0.6B "
                                    "config.json (--model-config)")
    assert run.field("speculative_config.model")["final"]["value"] == "/models/acme-eagle-draft"  # as typed
