"""What the user asked for, as vLLM's own resolution received it (issue 24), on real releases with
simulated GPUs: a request copied into a nested config keeps its verdict, enum-valued fields are
listed with their values, ``requested.option`` is the option string argparse matched, a simulation
gap is reported as one, and vLLM's parser speaks before flagtrace's own input checks."""
import pytest

from vllm_support import LLAMA31, MODELS, line_in, releases, run_vllm

COPIED = [v for v in ("0.11.2", "0.33.0", "0.34.0") if v in releases()]
# One command for the requests below (cached per command).
ASKED = [LLAMA31, "--max-cudagraph-capture-size", "1000", "--enable-prefix-caching", "--trust-remote-code"]


@pytest.mark.parametrize("version", COPIED)
def test_an_option_copied_into_a_nested_config_keeps_its_request(version):
    """``compilation_config = copy.deepcopy(self.compilation_config)`` then
    ``compilation_config.max_cudagraph_capture_size = self.max_cudagraph_capture_size``: 1000 was
    asked for and vLLM truncated it to the largest capture size, 992. Before: *decided* 992 (the
    request was lost in the copy)."""
    run = run_vllm(version, ASKED)
    assert run.rc == 0, run
    f = run.field("compilation_config.max_cudagraph_capture_size")
    assert f["verdict"] == "overridden" and f["origin"] == "cli", f
    assert f["requested"]["option"] == f["requested"]["typed"] == "--max-cudagraph-capture-size"
    assert f["final"]["value"] == 992
    asked, truncated = f["changes"]
    assert (asked["old"]["value"], asked["new"]["value"]) == (None, 1000)
    assert asked["func"] == "EngineArgs.create_engine_config" and asked["file"].endswith("vllm/engine/arg_utils.py")
    assert asked["line"] == line_in(version, "engine/arg_utils.py", "create_engine_config",
                                    "compilation_config.max_cudagraph_capture_size = (")
    assert (truncated["old"]["value"], truncated["new"]["value"]) == (1000, 992)
    assert truncated["func"] == "VllmConfig._set_cudagraph_sizes" and truncated["file"].endswith("vllm/config/vllm.py")
    assert truncated["line"] == line_in(version, "config/vllm.py", "_set_cudagraph_sizes",
                                        "self.compilation_config.max_cudagraph_capture_size = valid_max_size")
    if version == "0.33.0":
        assert (asked["line"], truncated["line"]) == (2847, 2631)


@pytest.mark.parametrize("version", [v for v in ("0.33.0",) if v in releases()])
def test_options_copied_after_conversion_are_requests_too(version):
    """``kernel_config.moe_backend = self.moe_backend`` (a deep copy handed to VllmConfig) and
    ``mamba_config.backend = MambaBackendEnum[self.mamba_backend.upper()]`` (converted on the way).
    Before: decided 'auto' -> 'triton' and default."""
    run = run_vllm(version, [LLAMA31, "--moe-backend", "triton", "--mamba-backend", "triton"])
    assert run.rc == 0, run
    moe = run.field("kernel_config.moe_backend")
    assert moe["verdict"] == "honoured" and moe["requested"]["option"] == "--moe-backend"
    [c] = moe["changes"]
    assert (c["old"]["value"], c["new"]["value"]) == ("auto", "triton")
    assert (c["func"], c["line"]) == ("EngineArgs.create_engine_config", 2801)
    mamba = run.field("mamba_config.backend")
    assert mamba["verdict"] == "honoured" and mamba["requested"]["typed"] == "--mamba-backend"
    assert mamba["final"]["repr"] == "MambaBackendEnum.TRITON"


@pytest.mark.parametrize("version", COPIED)
def test_requested_option_is_the_one_typed_not_the_longest(version):
    """vLLM's switches carry two option strings of opposite meaning (``--enable-prefix-caching`` /
    ``--disable-prefix-caching`` on 0.33+, ``--trust-remote-code`` / ``--no-trust-remote-code``);
    the JSON named the longest. Before: ``--disable-prefix-caching`` / ``--no-trust-remote-code``."""
    run = run_vllm(version, ASKED)
    assert run.rc == 0, run
    for field, option in (("cache_config.enable_prefix_caching", "--enable-prefix-caching"),
                          ("model_config.trust_remote_code", "--trust-remote-code")):
        f = run.field(field)
        assert f["verdict"] == "honoured" and f["final"]["value"] is True, f
        assert f["requested"] == {"option": option, "typed": option}, f["requested"]


ENUMS = [v for v in ("0.33.0", "0.34.0") if v in releases()]


@pytest.mark.parametrize("version", ENUMS)
def test_enum_valued_fields_are_listed_with_their_values(version):
    """``optimization_level`` (an IntEnum) and ``compilation_config.dynamic_shapes_config.type`` (an
    Enum of vllm.config): their members were taken for nested configs, recorded as the enum's
    internals (``optimization_level._value_``, ``._name_``) and the fields themselves dropped. Before:
    neither field listed. The validator's conversion '3' -> OptimizationLevel.O3 is the value asked
    for (honoured), and -O3 is what was typed (vLLM rewrites it to --optimization-level 3)."""
    run = run_vllm(version, [LLAMA31, "-O3", "-cc.dynamic_shapes_config.type=unbacked"])
    assert run.rc == 0, run
    names = [f["field"] for f in run.doc["fields"]]
    assert not [n for n in names if n.rsplit(".", 1)[-1] in ("_value_", "_name_", "__objclass__", "_sort_order_")]
    level = run.field("optimization_level")
    assert (level["verdict"], level["origin"]) == ("honoured", "cli"), level
    assert level["requested"] == {"option": "--optimization-level", "typed": "-O3"}
    assert (level["initial"]["value"], level["final"]["repr"], level["final"]["value"]) == ("3", "OptimizationLevel.O3", 3)
    [converted] = level["changes"]  # pydantic's validation of VllmConfig(optimization_level='3')
    assert (converted["old"]["value"], converted["new"]["repr"]) == ("3", "OptimizationLevel.O3")
    assert converted["func"] == "complete_dataclass.<locals>.__init__"
    assert converted["file"].endswith("pydantic/_internal/_dataclasses.py")
    shapes = run.field("compilation_config.dynamic_shapes_config.type")
    assert (shapes["verdict"], shapes["origin"]) == ("honoured", "cli"), shapes
    assert shapes["requested"]["typed"] == "-cc.dynamic_shapes_config.type"
    assert shapes["final"] == {"repr": "DynamicShapesType.UNBACKED", "value": "unbacked", "type": "DynamicShapesType"}
    assert shapes["changes"] == []


@pytest.mark.parametrize("version", ENUMS[:1])
def test_an_enum_field_left_alone_is_default(version):
    run = run_vllm(version, ASKED)
    shapes = run.field("compilation_config.dynamic_shapes_config.type")
    assert (shapes["verdict"], shapes["final"]["repr"]) == ("default", "DynamicShapesType.BACKED")
    level = run.field("optimization_level")
    assert level["verdict"] == "default" and level["final"]["repr"] == "OptimizationLevel.O2"


@pytest.mark.parametrize("version", [v for v in ("0.15.1",) if v in releases()])
def test_qwen3_next_resolves_with_tritons_driver_simulated(version):
    """vLLM 0.15.1's fla ops ask triton at import which target they compile for
    (``triton.runtime.driver.active.get_current_target()``), which starts triton's real CUDA driver: an
    AssertionError (libcuda.so) that vLLM logged and re-raised as "failed to be inspected" (exit 2, as
    vLLM's own error). Now the driver that cannot start is stood in and answers from the GPU profile."""
    run = run_vllm(version, [MODELS + "/qwen3-next-80b-a3b"], gpu="H100")
    assert run.rc == 0 and run.doc["status"] == "resolved", run
    assert any(s.startswith("triton.runtime.driver (the real driver could not start: AssertionError")
               for s in run.doc["simulation"]["stand_ins"])
    [asked] = [e for e in run.trace["events"] if e["kind"] == "hw" and e["query"].startswith("triton.")]
    assert asked["result"] == "GPUTarget(backend='cuda', arch=90, warp_size=32)"
    assert asked["at"]["func"] == "get_available_device"
    assert asked["at"]["file"].endswith("vllm/model_executor/layers/fla/ops/utils.py")
    assert asked["at"]["line"] == line_in(version, "model_executor/layers/fla/ops/utils.py", "get_available_device",
                                          "triton.runtime.driver.active.get_current_target()")
    assert run.field("model_config.model")["verdict"] == "honoured"


@pytest.mark.parametrize("version", [v for v in ("0.33.0", "0.34.0") if v in releases()])
def test_a_constant_written_under_the_option_is_its_request(version):
    """``if self.monokernel: kernel_config.monokernel = True``: the option decides the field through a
    constant. Before: *decided* (``--monokernel``) or *default* (``--disable-return-routed-experts``)."""
    run = run_vllm(version, [LLAMA31, "--monokernel", "--disable-return-routed-experts"])
    assert run.rc == 0, run
    mono = run.field("kernel_config.monokernel")
    assert mono["verdict"] == "honoured" and mono["requested"]["option"] == "--monokernel", mono
    [c] = mono["changes"]
    assert (c["old"]["value"], c["new"]["value"]) == (False, True) and c["func"] == "EngineArgs.create_engine_config"
    assert c["line"] == line_in(version, "engine/arg_utils.py", "create_engine_config", "kernel_config.monokernel = True")
    experts = run.field("aux_output_config.enable_return_routed_experts")
    assert experts["verdict"] == "honoured" and experts["final"]["value"] is False, experts
    assert experts["requested"]["option"] == "--disable-return-routed-experts"
    if version == "0.34.0":
        assert c["line"] == 2836


@pytest.mark.parametrize("version", [v for v in ("0.15.1", "0.34.0") if v in releases()])
def test_a_local_named_after_the_option_with_a_fallback_is_its_request(version):
    """``data_parallel_external_lb = (self.data_parallel_external_lb or self.data_parallel_rank is not None)``,
    later perhaps ``= True``, then ``ParallelConfig(data_parallel_external_lb=data_parallel_external_lb)``.
    Before: *default*, no request."""
    run = run_vllm(version, [LLAMA31, "--no-data-parallel-external-lb"])
    assert run.rc == 0, run
    f = run.field("parallel_config.data_parallel_external_lb")
    assert f["verdict"] == "honoured" and f["final"]["value"] is False, f
    assert f["requested"]["option"] == f["requested"]["typed"] == "--no-data-parallel-external-lb"


@pytest.mark.parametrize("version", [v for v in ("0.33.0", "0.34.0") if v in releases()])
def test_an_option_built_into_a_config_inside_a_config_is_its_request(version):
    """``OffloadConfig(uva=UVAOffloadConfig(cpu_offload_gb=self.cpu_offload_gb))``: a config two levels below
    ``VllmConfig``; and ``create_logging_config() -> LoggingConfig``, which writes the option through
    ``dataclasses.replace(config, log_level=self.log_level)``. Before: *default*, no request."""
    run = run_vllm(version, [LLAMA31, "--cpu-offload-gb", "4", "--log-level", "DEBUG"])
    assert run.rc == 0, run
    for field, option, value in (("offload_config.uva.cpu_offload_gb", "--cpu-offload-gb", 4.0),
                                 ("logging_config.log_level", "--log-level", "DEBUG")):
        f = run.field(field)
        assert f["verdict"] == "honoured" and f["final"]["value"] == value, f
        assert f["requested"]["option"] == f["requested"]["typed"] == option
    prefetch = run_vllm(version, [LLAMA31, "--offload-group-size", "4", "--offload-num-in-group", "2",
                                  "--offload-prefetch-step", "2"])
    assert prefetch.rc == 0, prefetch
    for field, option, value in (("offload_config.prefetch.offload_group_size", "--offload-group-size", 4),
                                 ("offload_config.prefetch.offload_num_in_group", "--offload-num-in-group", 2),
                                 ("offload_config.prefetch.offload_prefetch_step", "--offload-prefetch-step", 2)):
        f = prefetch.field(field)
        assert f["verdict"] == "honoured" and f["final"]["value"] == value, f
        assert f["requested"]["option"] == option


@pytest.mark.parametrize("version", [v for v in ("0.11.2", "0.34.0") if v in releases()])
def test_a_secret_named_switch_does_not_hide_the_next_option(version):
    """``--allow-credentials`` (a switch whose name reads as a secret) followed by ``--data-parallel-rpc-port 2``:
    the redaction took ``--data-parallel-rpc-port`` for the switch's value, hid it and scrubbed it from the whole
    trace, so the field's request read ``<redacted>``. Found by bench/fidelity.py's combinations on 0.11.2."""
    run = run_vllm(version, [LLAMA31, "--allow-credentials", "--data-parallel-rpc-port", "2"])
    assert run.rc == 0, run
    f = run.field("parallel_config.data_parallel_rpc_port")
    assert f["verdict"] == "honoured" and f["final"]["value"] == 2
    assert f["requested"]["option"] == f["requested"]["typed"] == "--data-parallel-rpc-port"
