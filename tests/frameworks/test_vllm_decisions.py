"""The decisions vLLM's own resolution makes, explained on real releases with simulated GPUs:
field, old and new value, function, file:line, condition and what it read."""
import getpass
import json
import os
import subprocess
import sys

import pytest

from vllm_support import DEEPSEEK_V3, LLAMA31, MODELS, ROOT, SERVE, line_in, python_for, releases, run_vllm

QWEN3 = MODELS + "/qwen3-8b"

NEW = [v for v in ("0.33.0", "0.34.0") if v in releases()]
BATCH = "_set_default_max_num_seqs_and_batched_tokens_args"


@pytest.mark.parametrize("version", NEW)
@pytest.mark.parametrize("gpu,tokens,seqs", [("H100", 8192, 1024), ("A100", 2048, 256), ("B200", 16384, 1024)])
def test_batch_defaults_follow_the_gpu_tier(version, gpu, tokens, seqs):
    run = run_vllm(version, [LLAMA31], gpu=gpu)
    assert run.rc == 0, run
    for field, value, assigns in (("scheduler_config.max_num_batched_tokens", tokens, "self.max_num_batched_tokens = "),
                                  ("scheduler_config.max_num_seqs", seqs, "self.max_num_seqs = ")):
        report = run.field(field)
        assert report["verdict"] == "decided" and report["initial"]["value"] is None
        assert report["final"]["value"] == value
        first = report["changes"][0]
        assert first["func"] == "EngineArgs." + BATCH and first["file"].endswith("vllm/engine/arg_utils.py")
        assert first["line"] == line_in(version, "engine/arg_utils.py", BATCH, assigns, nth=0 if "seqs" in field else 1)
        assert first["new"]["value"] == value
        # the GPU question that decided the tier
        asked = {h["query"]: h["result"] for h in first["hardware"]}
        assert "pynvml.nvmlDeviceGetName()" in asked, first["hardware"]


def test_batch_defaults_lines_on_0_33_0():
    if "0.33.0" not in releases():
        pytest.skip("0.33.0 not selected")
    run = run_vllm("0.33.0", [LLAMA31], gpu="H100")
    assert run.field("scheduler_config.max_num_batched_tokens")["changes"][0]["line"] == 3172
    assert run.field("scheduler_config.max_num_seqs")["changes"][0]["line"] == 3178


@pytest.mark.parametrize("version", NEW)
def test_enforce_eager_overrides_the_compilation_config(version):
    run = run_vllm(version, [LLAMA31, "--enforce-eager", "--compilation-config", '{"mode":3,"cudagraph_mode":"FULL"}'])
    assert run.rc == 0, run
    mode, graphs = run.field("compilation_config.mode"), run.field("compilation_config.cudagraph_mode")
    assert mode["verdict"] == graphs["verdict"] == "overridden"
    assert mode["requested"]["option"] == "--compilation-config"
    assert mode["initial"]["repr"] == "CompilationMode.VLLM_COMPILE" and mode["final"]["repr"] == "CompilationMode.NONE"
    assert graphs["initial"]["repr"] == "CUDAGraphMode.FULL" and graphs["final"]["repr"] == "CUDAGraphMode.NONE"
    for report, text in ((mode, "self.compilation_config.mode = CompilationMode.NONE"),
                         (graphs, "self.compilation_config.cudagraph_mode = CUDAGraphMode.NONE")):
        c = report["changes"][-1]
        assert c["func"] == "VllmConfig.__post_init__" and c["file"].endswith("vllm/config/vllm.py")
        assert c["line"] == line_in(version, "config/vllm.py", "__post_init__", text)
        assert any("enforce_eager" in cond["test"] for cond in c["conditions"])
        eager = next(r for r in c["reads"] if r.get("field") == "model_config.enforce_eager")
        assert eager["value"]["value"] is True and eager["origin"] == "cli"
    assert run.field("model_config.enforce_eager")["verdict"] == "honoured"
    if version == "0.33.0":
        assert mode["changes"][-1]["line"] == 1767 and graphs["changes"][-1]["line"] == 1768


@pytest.mark.parametrize("version", NEW)
def test_deepseek_mtp_becomes_mtp_in_a_pydantic_post_init(version):
    run = run_vllm(version, [DEEPSEEK_V3, "-tp", "8", "--speculative-config",
                             '{"method":"deepseek_mtp","num_speculative_tokens":3}'], gpu="H200x8")
    assert run.rc == 0, run
    method = run.field("speculative_config.method")
    assert method["verdict"] == "overridden" and method["requested"]["option"] == "--speculative-config"
    assert method["initial"]["value"] == "deepseek_mtp" and method["final"]["value"] == "mtp"
    c = method["changes"][-1]
    assert c["func"] == "SpeculativeConfig.__post_init__" and c["file"].endswith("vllm/config/speculative.py")
    assert c["line"] == line_in(version, "config/speculative.py", "__post_init__", 'self.method = "mtp"')
    assert any("deprecated" in log["message"] for log in c["logs"])
    assert run.field("speculative_config.num_speculative_tokens")["verdict"] == "honoured"
    assert run.field("parallel_config.tensor_parallel_size")["verdict"] == "honoured"
    if version == "0.33.0":
        assert c["line"] == 1250


@pytest.mark.parametrize("version", NEW)
def test_no_chunked_prefill_raises_the_batch_to_the_context(version):
    run = run_vllm(version, [LLAMA31, "--no-enable-chunked-prefill"])
    assert run.rc == 0, run
    assert run.field("scheduler_config.enable_chunked_prefill")["verdict"] == "honoured"
    tokens = run.field("scheduler_config.max_num_batched_tokens")
    assert tokens["verdict"] == "decided" and tokens["final"]["value"] == 131072
    c = next(c for c in tokens["changes"] if c["new"]["value"] == 131072)
    assert c["func"] == "EngineArgs." + BATCH
    assert c["line"] == line_in(version, "engine/arg_utils.py", BATCH, "self.max_num_batched_tokens = max(")
    assert any("enable_chunked_prefill" in cond["test"] for cond in c["conditions"])
    # self.enable_chunked_prefill in EngineArgs is read as the field it becomes, with its provenance
    read = next(r for r in c["reads"] if r.get("field") == "scheduler_config.enable_chunked_prefill")
    assert read["value"]["value"] is False and read["origin"] == "cli"
    if version == "0.33.0":
        assert c["line"] == 3196


OLD = [v for v in ("0.11.2", "0.15.1", "0.25.1") if v in releases()]
OLD_BATCH = {"0.11.2": "_set_default_args"}  # renamed in 0.12


@pytest.mark.parametrize("version", OLD)
@pytest.mark.parametrize("gpu,tokens,seqs", [("H100", 8192, 1024), ("A100", 2048, 256)])
def test_older_releases_batch_defaults(version, gpu, tokens, seqs):
    func = OLD_BATCH.get(version, BATCH)
    run = run_vllm(version, [LLAMA31], gpu=gpu)
    assert run.rc == 0, run
    for field, value, assigns, nth in (
            ("scheduler_config.max_num_batched_tokens", tokens, "self.max_num_batched_tokens = default_max_num", 0),
            ("scheduler_config.max_num_seqs", seqs, "self.max_num_seqs = default_max_num_seqs", 0)):
        report = run.field(field)
        assert report["verdict"] == "decided" and report["final"]["value"] == value
        c = report["changes"][0]
        assert c["func"] == "EngineArgs." + func and c["new"]["value"] == value
        assert c["line"] == line_in(version, "engine/arg_utils.py", func, assigns, nth=nth)


@pytest.mark.parametrize("version", OLD)
def test_older_releases_deepseek_mtp(version):
    run = run_vllm(version, [DEEPSEEK_V3, "-tp", "8", "--speculative-config",
                             '{"method":"deepseek_mtp","num_speculative_tokens":1}'], gpu="H200x8")
    assert run.rc == 0, run
    method = run.field("speculative_config.method")
    assert method["verdict"] == "overridden", method
    assert method["initial"]["value"] == "deepseek_mtp" and method["final"]["value"] == "mtp"
    c = method["changes"][-1]
    assert c["func"] == "SpeculativeConfig.__post_init__"
    assert c["line"] == line_in(version, "config/speculative.py", "__post_init__", 'self.method = "mtp"')


@pytest.mark.parametrize("version", OLD)
def test_older_releases_enforce_eager_decides_the_compilation_mode(version):
    run = run_vllm(version, [LLAMA31, "--enforce-eager"])
    assert run.rc == 0, run
    assert run.field("model_config.enforce_eager")["verdict"] == "honoured"
    mode = run.field("compilation_config.mode")
    assert mode["verdict"] == "decided" and mode["final"]["repr"] == "CompilationMode.NONE"
    c = mode["changes"][-1]
    assert c["file"].endswith("vllm/config/vllm.py") and c["func"].startswith("VllmConfig.")


@pytest.mark.parametrize("version", [v for v in ("0.11.2", "0.33.0") if v in releases()])
def test_reasoning_parser_request_names_the_config_fields_it_is_copied_into(version):
    run = run_vllm(version, [QWEN3, "--reasoning-parser", "qwen3"])
    fields = ["structured_outputs_config.reasoning_parser"] + (["reasoning_config.reasoning_parser"]
                                                                if version == "0.33.0" else [])
    for name in fields:
        f = run.field(name)
        assert f["verdict"] == "honoured" and f["origin"] == "cli", f
        assert f["requested"]["option"] == "--reasoning-parser"
        assert (f["initial"]["value"], f["final"]["value"]) == ("", "qwen3")
        [ch] = f["changes"]
        assert ch["file"].endswith("vllm/engine/arg_utils.py") and ch["new"]["value"] == "qwen3"
        assert ch["src"] == "self.%s = self.reasoning_parser" % name


def test_an_in_place_edit_of_a_copied_sub_config_is_credited():
    # VllmConfig.__post_init__ appends to its compilation config's list (a deep copy pydantic set
    # before running __post_init__ inside its validator): adopted at the snapshot, diffed in place
    if "0.33.0" not in releases():
        pytest.skip("0.33.0 not selected")
    f = run_vllm("0.33.0", [LLAMA31], gpu="H100").field("compilation_config.custom_ops")
    assert (f["initial"]["repr"], f["final"]["repr"]) == ("[]", "['none']")
    [ch] = f["changes"]
    assert (ch["func"], ch["how"], ch["src"]) == ("VllmConfig.__post_init__", "inplace",
                                                  'self.compilation_config.custom_ops.append("none")')
    assert ch["line"] == line_in("0.33.0", "config/vllm.py", "__post_init__", 'custom_ops.append("none")')


@pytest.mark.parametrize("version", [v for v in ("0.15.1", "0.33.0") if v in releases()])
def test_an_edit_of_the_model_s_own_config_is_credited(version):
    # ModelConfig.__post_init__ clears the sliding window in the transformers config it holds: a
    # plain object on transformers 4 (0.15.1), a dataclass on transformers 5 (0.33.0)
    run = run_vllm(version, [MODELS + "/gpt-oss-20b", "--disable-sliding-window"])
    assert run.rc == 0, run
    f = run.field("model_config.hf_config.sliding_window")
    assert (f["initial"]["value"], f["final"]["value"]) == (128, None)
    assert f["verdict"] == "decided", f
    [ch] = f["changes"]  # once: not also inside the transformers config's own __setattr__
    assert ch["func"] == "ModelConfig.__post_init__" and ch["file"].endswith("vllm/config/model.py")
    assert ch["line"] == line_in(version, "config/model.py", "__post_init__",
                                 "self.hf_text_config.sliding_window = None", nth=-1)  # 0.33: the 2nd
    assert any("disable_sliding_window" in cond["test"] for cond in ch["conditions"])


@pytest.mark.parametrize("version", NEW)
def test_a_simulated_mi300x_is_a_rocm_box(version):
    """NVML is missing and AMD SMI answers: vLLM picks its ROCm platform, whose defaults decide."""
    run = run_vllm(version, [LLAMA31], gpu="MI300X")
    assert run.rc == 0, run
    ops = run.field("compilation_config.custom_ops")
    assert ops["verdict"] == "decided" and "+sparse_attn_indexer" in ops["final"]["value"]
    first = ops["changes"][0]
    assert first["func"] == "RocmPlatform.apply_config_platform_defaults" and first["file"].endswith("vllm/platforms/rocm.py")
    assert first["line"] == line_in(version, "platforms/rocm.py", "apply_config_platform_defaults",
                                    'compilation_config.custom_ops.append("+sparse_attn_indexer")')
    tokens = run.field("scheduler_config.max_num_batched_tokens")
    assert tokens["final"]["value"] == 16384  # MI300X's 192 GB put it in the top tier (H100: 8192)
    asked = {h["query"]: h["result"] for h in tokens["changes"][0]["hardware"]}
    assert "'market_name': 'AMD Instinct MI300X'" in asked["amdsmi.amdsmi_get_gpu_asic_info()"]
    assert any(s.startswith("amdsmi (not installed)") for s in run.doc["simulation"]["stand_ins"])
    assert any(p.startswith("TVM_FFI_DISABLE_TORCH_C_DLPACK=1 (tvm_ffi") for p in run.doc["simulation"]["patched"])


@pytest.mark.skipif("0.34.0" not in releases(), reason="0.34.0 not selected")
def test_a_diff_across_vendors_names_what_each_side_asked(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "flagtrace", "diff", "--gpu", "H100", "--gpu", "MI300X", "--format",
                           "json", "--", python_for("0.34.0"), *SERVE, LLAMA31],
                          capture_output=True, text=True, cwd=ROOT, timeout=600,
                          env={**os.environ, "TMPDIR": str(tmp_path)})
    assert proc.returncode == 0, proc.stderr[-3000:]
    # nothing left behind, the framework's own temp files included: under the simulated ROCm, tvm_ffi
    # would compile its torch addon at import (no hipcc here), fail, and leave tvm-ffi-torch-c-dlpack-*.
    # torch's inductor cache (made once, reused by every later run, as on a real run) is not a leftover.
    assert set(os.listdir(tmp_path)) <= {"torchinductor_" + getpass.getuser()}
    doc = json.loads(proc.stdout)
    tokens = next(d for d in doc["differences"] if d["field"] == "scheduler_config.max_num_batched_tokens")
    assert tokens["values"] == ["8192", "16384"]
    cause = tokens["cause"]
    assert cause["kind"] == "hardware"
    assert [a["query"] for a in cause["asked"]] == ["pynvml.nvmlDeviceGetName()", "amdsmi.amdsmi_get_gpu_asic_info()"]
    assert cause["values"][0] == "'NVIDIA H100 80GB HBM3'" and "'market_name': 'AMD Instinct MI300X'" in cause["values"][1]
