"""The vLLM adapter's parts that need no vLLM: which EngineArgs attribute becomes which VllmConfig
field (read from source), the tool-side model check, and a release outside the range refused with
its version (a stand-in vllm package that only carries the version)."""
import os

from flagtrace.core.exitcodes import ExitCode
from flagtrace.probe.adapters.vllm_fields import engine_arg_copies, engine_arg_copy_sites, engine_arg_paths
from flagtrace.probe.hooks import explicit_options
from ft_support import PY, run_cli

SOURCE = '''
class EngineArgs:
    def create_engine_config(self):
        cache_config = CacheConfig(block_size=self.block_size, is_attention_free=model_config.x)
        scheduler_config = SchedulerConfig(max_model_len=self.max_model_len, max_num_seqs=self.max_num_seqs)
        attention_config = AttentionConfig(backend=cast(str, self.attention_backend))
        return VllmConfig(model_config=model_config, compilation_config=self.compilation_config)

    def create_model_config(self):
        return ModelConfig(model=self.model, max_model_len=self.max_model_len)

    def create_structured_outputs_config(self):
        if self.reasoning_parser:
            self.structured_outputs_config.reasoning_parser = self.reasoning_parser
        self.reasoning_config.reasoning_parser = self.reasoning_parser
        self.speculative_config.method = self.method
        self.structured_outputs_config.enable_in_reasoning = True
'''
HOLDERS = {"StructuredOutputsConfig": "structured_outputs_config", "ReasoningConfig": "reasoning_config",
           "CacheConfig": "cache_config", "SchedulerConfig": "scheduler_config", "ModelConfig": "model_config",
           "AttentionConfig": "attention_config", "CompilationConfig": "compilation_config"}


def test_engine_args_map_to_the_config_field_they_are_copied_into():
    paths = engine_arg_paths(SOURCE, HOLDERS, {"max_model_len": "ModelConfig"})
    assert paths["block_size"] == "cache_config.block_size"
    assert paths["max_num_seqs"] == "scheduler_config.max_num_seqs"
    assert paths["attention_backend"] == "attention_config.backend"  # another name, through cast()
    assert paths["compilation_config"] == "compilation_config"  # a VllmConfig field itself
    assert paths["max_model_len"] == "model_config.max_model_len"  # two configs: the option's group wins
    assert "is_attention_free" not in paths and "x" not in paths
    assert engine_arg_paths(SOURCE, HOLDERS)["max_model_len"] == "scheduler_config.max_model_len"  # first call


def test_an_attribute_copied_into_a_held_config_names_those_fields():
    copies = engine_arg_copies(SOURCE, HOLDERS)
    assert list(copies) == ["reasoning_parser"]  # not speculative_config.method: not a held config
    assert sorted(copies["reasoning_parser"]) == ["reasoning_config.reasoning_parser",
                                                  "structured_outputs_config.reasoning_parser"]


BUILDER = '''
class EngineArgs:
    def create_engine_config(self):
        compilation_config = copy.deepcopy(self.compilation_config)
        if self.max_cudagraph_capture_size is not None:
            compilation_config.max_cudagraph_capture_size = (
                self.max_cudagraph_capture_size
            )
        mamba = copy.deepcopy(self.mamba_config)
        mamba.backend = MambaBackendEnum[self.mamba_backend.upper()]
        kernel_config = KernelConfig()
        kernel_config.moe_backend = self.moe_backend
        unused = copy.deepcopy(self.speculative_config)
        unused.method = self.method
        so_config = self.structured_outputs_config
        so_config.backend = self.guided_decoding_backend
        compilation_config.mode = self.compilation_config.mode
        return VllmConfig(compilation_config=compilation_config, kernel_config=kernel_config, mamba_config=mamba)
'''


def test_an_attribute_copied_into_a_local_copy_of_a_config_names_that_field():
    """issue 24: ``compilation_config = copy.deepcopy(self.compilation_config)`` then
    ``compilation_config.max_cudagraph_capture_size = self.max_cudagraph_capture_size``: the option
    asked for that field (it was shown as decided, the request lost in the copy)."""
    holders = dict(HOLDERS, KernelConfig="kernel_config", MambaConfig="mamba_config",
                   SpeculativeConfig="speculative_config")
    sites = {(attr, path): (first, last) for attr, path, first, last in engine_arg_copy_sites(BUILDER, holders)}
    assert sites == {("max_cudagraph_capture_size", "compilation_config.max_cudagraph_capture_size"): (6, 8),
                     ("mamba_backend", "mamba_config.backend"): (10, 10),  # converted on the way
                     ("moe_backend", "kernel_config.moe_backend"): (12, 12),  # a local passed to VllmConfig
                     ("guided_decoding_backend", "structured_outputs_config.backend"): (16, 16)}  # another name
    # not a deep copy never handed to VllmConfig (unused), nor a held config's own field read back
    # (self.compilation_config.mode)
    assert engine_arg_copies(BUILDER, holders)["moe_backend"] == ["kernel_config.moe_backend"]


def test_requested_option_is_the_string_argparse_matched():
    """issue 24: the longest option string of the action named the opposite switch
    (--enable-prefix-caching recorded as --disable-prefix-caching)."""
    import argparse

    parser = argparse.ArgumentParser()
    parser.add_argument("--enable-prefix-caching", "--disable-prefix-caching", dest="enable_prefix_caching",
                        action=argparse.BooleanOptionalAction)
    parser.add_argument("--trust-remote-code", action=argparse.BooleanOptionalAction)
    parser.add_argument("--tensor-parallel-size", "-tp", type=int)
    parser.add_argument("-O", dest="optimization_level")
    found = explicit_options(parser, ["--enable-prefix-caching", "--trust-remote-code", "-tp", "2", "-O3"])
    assert [(f["dest"], f["typed"], f["option"]) for f in found] == [
        ("enable_prefix_caching", "--enable-prefix-caching", "--enable-prefix-caching"),
        ("trust_remote_code", "--trust-remote-code", "--trust-remote-code"),
        ("tensor_parallel_size", "-tp", "-tp"), ("optimization_level", "-O", "-O")]
    assert found[-1]["inline"] and not found[2]["inline"]
    # an abbreviation: the option string argparse expands it to
    [abbrev] = explicit_options(parser, ["--no-trust", "--tensor-parallel=4"][:1])
    assert (abbrev["typed"], abbrev["option"]) == ("--no-trust", "--no-trust-remote-code")
    [inline] = explicit_options(parser, ["--tensor-parallel=4"])
    assert (inline["typed"], inline["option"], inline["inline"]) == ("--tensor-parallel", "--tensor-parallel-size", True)


def test_vllm_serve_without_a_model_or_config_is_a_usage_error(tmp_path):
    r = run_cli(["explain", "--adapter", "vllm", "--", PY, "-m", "vllm.entrypoints.cli.main", "serve",
                 "--max-num-seqs", "8"])
    assert r.rc == ExitCode.USAGE
    assert r.err.startswith("flagtrace: the vLLM command names no model")
    r = run_cli(["explain", "--", PY, "-m", "vllm.entrypoints.cli.main", "serve", str(tmp_path)])
    assert r.rc == ExitCode.USAGE and r.err == "flagtrace: model %s has no config.json (flagtrace needs only " \
        "that file, no weights)\n" % tmp_path


def test_a_release_outside_the_range_is_refused_with_its_version(tmp_path, monkeypatch):
    (tmp_path / "vllm").mkdir()
    (tmp_path / "vllm" / "__init__.py").write_text("raise SystemExit('vllm itself must not be imported')\n")
    dist = tmp_path / "vllm-0.10.2.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: vllm\nVersion: 0.10.2\n")
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    model = os.path.join("models", "llama-3.1-8b")
    r = run_cli(["explain", "--gpu", "H100", "--", PY, "-m", "vllm.entrypoints.cli.main", "serve", model])
    assert r.rc == ExitCode.CANNOT_RUN, r.err
    assert r.err.startswith("flagtrace: vLLM 0.10.2 is outside the releases flagtrace's vLLM adapter supports "
                            "(0.11.0-0.34.0; tested: 0.11.2, 0.15.1, 0.25.1, 0.33.0, 0.34.0)"), r.err
