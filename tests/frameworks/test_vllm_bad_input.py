"""vLLM refusing a command: one explanation, the documented exit code, no flagtrace traceback."""
import json

import pytest

from vllm_support import LLAMA31, MODELS, releases, run_vllm

VERSION = "0.33.0" if "0.33.0" in releases() else None
pytestmark = pytest.mark.skipif(VERSION is None, reason="0.33.0 not selected")


def test_unknown_flag_is_explained_with_suggestions():
    run = run_vllm(VERSION, [LLAMA31, "--max-num-seqz", "8"])
    assert run.rc == 2 and "Traceback" not in run.err
    error = run.doc["error"]
    assert error["kind"] == "argparse" and error["unknown"] == ["--max-num-seqz"]
    assert "--max-num-seqs" in error["suggestions"]["--max-num-seqz"]
    assert run.doc["object"] is None  # nothing was resolved


def test_malformed_compilation_config_json_is_vllms_own_error():
    run = run_vllm(VERSION, [LLAMA31, "--compilation-config", "{bad"])
    assert run.rc == 2 and "Traceback" not in run.err
    assert run.doc["error"]["kind"] == "argparse"
    assert "Invalid JSON" in run.doc["error"]["message"] and "--compilation-config" in run.doc["error"]["message"]


def test_unknown_architecture_is_explained(tmp_path):
    config = json.load(open(LLAMA31 + "/config.json"))
    config["architectures"] = ["FooBarForCausalLM"]
    (tmp_path / "config.json").write_text(json.dumps(config))
    run = run_vllm(VERSION, [str(tmp_path)])
    assert run.rc == 2 and "Traceback" not in run.err
    error = run.doc["error"]
    assert error["type"] == "ValidationError" and "FooBarForCausalLM" in error["message"]
    assert "are not supported for now" in error["message"]


def test_reasoning_parser_without_the_models_tokenizer_is_vllms_own_error_explained():
    run = run_vllm(VERSION, [MODELS + "/qwen3-8b", "--reasoning-parser", "qwen3"])  # config.json only
    assert run.rc == 2 and "Traceback" not in run.err
    error = run.doc["error"]
    assert error["type"] == "ValidationError" and "failed to tokenize reasoning strings" in error["message"]
    assert error["site"]["func"] == "ReasoningConfig.initialize_token_ids"
    locals_ = {r["local"]: r["value"]["repr"] for r in error["reads"] if "local" in r}
    assert locals_ == {"reasoning_start_str": "'<think>'", "reasoning_end_str": "'</think>'"}
    ids = {r["field"]: r for r in error["reads"] if "field" in r}
    assert ids["reasoning_config._reasoning_start_token_ids"]["value"]["repr"] == "[]"


INJECT = '''import sys
if "vllm.model_executor.models.registry" in sys.orig_argv:
    sys.stderr.write("injected: model inspection failed\\n")
    raise SystemExit(3)
'''


def test_model_inspection_subprocess_failing_is_explained_with_what_it_logged(tmp_path):
    # vLLM inspects the architecture in a child `python -m vllm.model_executor.models.registry`
    # (cached under VLLM_CACHE_ROOT): a fresh cache makes it run; a sitecustomize makes only it fail
    (tmp_path / "inject").mkdir()
    (tmp_path / "inject" / "sitecustomize.py").write_text(INJECT)
    run = run_vllm(VERSION, [LLAMA31], env={"PYTHONPATH": str(tmp_path / "inject"),
                                            "VLLM_CACHE_ROOT": str(tmp_path / "cache")})
    assert run.rc == 2 and "Traceback" not in run.err
    error = run.doc["error"]
    assert "failed to be inspected" in error["message"]
    assert error["site"]["func"] == "_ModelRegistry._raise_for_unsupported"
    [log] = [entry for entry in error["logs"] if "inspecting model architecture" in entry["message"]]
    assert log["level"] == "ERROR" and "injected: model inspection failed" in log["message"]


def test_the_parsers_error_comes_before_flagtraces_own_model_check():
    """issue 24: ``vllm serve vllm serve MODEL`` (a sub-command typed twice, from a real report): the
    model check ran first and answered "--model vllm does not exist here" (exit 64); vLLM's own parser
    refuses the command, and that is the answer (exit 2)."""
    run = run_vllm(VERSION, ["vllm", "serve", LLAMA31])
    assert run.rc == 2 and "Traceback" not in run.err, run
    assert "does not exist here" not in run.err
    error = run.doc["error"]
    assert error["kind"] == "argparse"
    assert error["message"] == "unrecognized arguments: serve %s" % LLAMA31
    assert error["site"]["func"] == "FlexibleArgumentParser.error"
    assert error["site"]["file"].endswith("vllm/utils/argparse_utils.py")
    assert run.doc["object"] is None


def test_a_model_missing_here_is_flagtraces_answer_once_the_parser_accepted_the_command(tmp_path):
    """The parser accepts ``serve ./nowhere``: then flagtrace's own check answers (exit 64)."""
    missing = str(tmp_path / "nowhere")
    run = run_vllm(VERSION, [missing, "--max-num-seqs", "8"])
    assert run.rc == 64, run
    assert "flagtrace: --model %s does not exist here" % missing in run.err
    assert run.doc is None
