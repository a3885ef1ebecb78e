"""Decisions SGLang makes on its own, checked on the real releases with simulated GPUs."""
import pytest

from sglang_support import LLAMA3, QWEN36, line_in, pick, releases, run_sglang

PAGE_SIZE_TO_1 = {"0.5.11": 2427, "0.5.12": 2542}


def only(versions):
    return [v for v in releases() if v in versions]


@pytest.mark.parametrize("version", only(("0.5.11", "0.5.12")))
def test_page_size_forced_to_1_for_hybrid_model(version):
    run = run_sglang(version, ["--model-path", QWEN36, "--page-size", "64"])
    assert run.rc == 0, run
    page = run.field("page_size")
    assert page["verdict"] == "overridden"
    assert page["requested"]["option"] == "--page-size"
    change = page["changes"][0]
    assert (change["old"]["value"], change["new"]["value"]) == (64, 1)
    assert change["func"] == "ServerArgs._handle_mamba_radix_cache"
    assert change["line"] == PAGE_SIZE_TO_1[version]
    assert change["line"] == line_in(version, "_handle_mamba_radix_cache", "self.page_size = 1")
    assert "self.page_size is not None and self.page_size != 1" in [c["text"] for c in change["conditions"]]
    assert any("Automatically setting page_size=1" in log["message"] and log["level"] == "WARNING"
               for log in change["logs"])


@pytest.mark.parametrize("version", only(("0.5.10.post1",)))
def test_page_size_kept_on_0_5_10(version):
    run = run_sglang(version, ["--model-path", QWEN36, "--page-size", "64"])
    assert run.rc == 0, run
    page = run.field("page_size")
    assert page["verdict"] == "honoured"
    assert page["final"]["value"] == 64


@pytest.mark.parametrize("version", releases())
def test_overlap_disabled_without_speculative_decoding(version):
    run = run_sglang(version, ["--model-path", QWEN36, "--page-size", "64"])
    overlap = run.field("disable_overlap_schedule")
    assert overlap["verdict"] == "decided"
    assert overlap["final"]["value"] is True
    change = overlap["changes"][0]
    assert change["func"] == "ServerArgs._handle_mamba_radix_cache"
    assert change["line"] == line_in(version, "_handle_mamba_radix_cache", "self.disable_overlap_schedule = True")
    assert "self.speculative_algorithm is None" in [c["text"] for c in change["conditions"]]
    assert any("Disabling overlap schedule since mamba no_buffer" in log["message"] for log in change["logs"])


@pytest.mark.parametrize("version", releases())
def test_trtllm_mha_turns_overlap_off_and_back_on(version):
    run = run_sglang(version, ["--model-path", QWEN36, "--attention-backend", "trtllm_mha"])
    assert run.rc == 0, run
    overlap = run.field("disable_overlap_schedule")
    values = [(c["old"]["value"], c["new"]["value"]) for c in overlap["changes"]]
    assert values[:2] == [(False, True), (True, False)]
    assert overlap["final"]["value"] is False
    assert overlap["note"] == "changed and changed back"
    assert run.field("disable_radix_cache")["final"]["value"] is True


EXPECTED_BACKEND = {
    # gpu: (backend, hardware question that decided it)
    "H100": ("fa3", "is_hopper_with_cuda_12_3()"),
    "B200": ("trtllm_mha", "is_sm100_supported()"),
    "RTX-PRO-6000": ("flashinfer", "is_flashinfer_available()"),
    "MI300X": ("aiter", "is_hip()"),  # ROCm: torch.version.hip, rocminfo for the memory
}


@pytest.mark.parametrize("gpu", sorted(EXPECTED_BACKEND))
def test_attention_backend_depends_on_gpu(gpu):
    version = pick()
    run = run_sglang(version, ["--model-path", LLAMA3], gpu=gpu)
    assert run.rc == 0, run
    backend, question = EXPECTED_BACKEND[gpu]
    field = run.field("attention_backend")
    assert field["verdict"] == "decided"
    assert field["final"]["value"] == backend
    change = [c for c in field["changes"] if c["new"]["value"] == backend][0]
    assert change["func"] == "ServerArgs._handle_attention_backend_compatibility"
    asked = {h["query"]: h["result"] for h in change["hardware"]}
    assert asked.get(question) == "True", asked
    assert any("Attention backend not specified. Use %s backend by default." % backend in log["message"]
               for log in change["logs"])
