"""vLLM commands that name their model by hub id: the bundled config stands in, and where that
config's auto_map names remote configuration code flagtrace does not ship, transformers' own class
for the model type stands in for it (the command trusts remote code, as the recipe says)."""
import json

import pytest

from vllm_support import releases, run_vllm

NEMOTRON = "nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16"


@pytest.mark.skipif("0.34.0" not in releases(), reason="0.34.0 not selected")
def test_remote_configuration_code_is_stood_in_by_transformers_own_class():
    # vllm-project/recipes NVIDIA/Nemotron-3-Nano-30B-A3B.md (bench/corpus/vllm.toml)
    run = run_vllm("0.34.0", [NEMOTRON, "--max-num-seqs", "8", "--tensor-parallel-size", "1", "--max-model-len",
                              "262144", "--trust-remote-code"], gpu="H100x1")
    assert run.rc == 0, run
    assert run.doc["inputs"] == ["serve %s → bundled %s config.json" % (NEMOTRON, NEMOTRON)]
    assert {"kind": "model_config", "message": "configuration_nemotron_h.NemotronHConfig (remote code named by the "
            "config's auto_map; flagtrace bundles config.json only) stood in by transformers' own NemotronHConfig"} \
        in run.trace["problems"]
    assert run.field("model_config.trust_remote_code")["verdict"] == "honoured"
    assert run.field("model_config.max_model_len")["final"]["value"] == 262144
    # the hybrid Mamba layout came from the config: vLLM sized the mamba cache block from it
    assert run.field("cache_config.mamba_block_size")["verdict"] == "decided"


@pytest.mark.skipif("0.34.0" not in releases(), reason="0.34.0 not selected")
def test_remote_code_nothing_here_has_is_named_with_what_to_give(tmp_path):
    folder = tmp_path / "acme"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({
        "architectures": ["AcmeForCausalLM"], "model_type": "acme_unknown",
        "auto_map": {"AutoConfig": "configuration_acme.AcmeConfig"}}))
    run = run_vllm("0.34.0", ["acme/Acme-7B", "--trust-remote-code"], gpu="H100x1",
                   extra=("--model-config", str(folder)))
    assert run.rc == 2, run
    assert "configuration_acme.py" in run.doc["error"]["message"]
    assert {"kind": "model_config", "message": "configuration_acme.AcmeConfig (remote code named by the config's "
            "auto_map) is not here: flagtrace bundles config.json only and transformers has no class of its own "
            "for this model type; give --model-config DIR with the model's .py files"} in run.trace["problems"]


@pytest.mark.skipif("0.34.0" not in releases(), reason="0.34.0 not selected")
def test_a_tokenizer_the_resolution_loads_is_said_to_be_missing_from_the_stand_in():
    # the same recipe's reasoning parser loads the tokenizer while vLLM validates its config
    run = run_vllm("0.34.0", [NEMOTRON, "--max-num-seqs", "8", "--tensor-parallel-size", "1", "--max-model-len",
                              "262144", "--trust-remote-code", "--reasoning-parser", "nano_v3"], gpu="H100x1")
    assert run.rc == 2, run
    error = run.doc["error"]
    assert "Couldn't instantiate the backend tokenizer" in error["message"]
    assert "AutoTokenizer.from_pretrained" in [f["func"] for f in error["frames"]]
    assert {"text": "the model was stood in by its config.json alone (serve %s → bundled %s config.json); flagtrace "
                    "bundles config.json only, not the tokenizer files this code loads: give --model-config DIR "
                    "holding the model's config.json and tokenizer files" % (NEMOTRON, NEMOTRON)} in error["hints"]
