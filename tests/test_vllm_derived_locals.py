"""issue 24: an EngineArgs attribute converted into a local before it reaches a config's constructor
(vLLM >= 0.15: ``resolved_cache_dtype = resolve_kv_cache_dtype_string(self.kv_cache_dtype, model_config)``,
then ``CacheConfig(cache_dtype=resolved_cache_dtype)``) still names the field it becomes: without it
``--kv-cache-dtype fp8_e4m3`` lost its request and ``cache_config.cache_dtype`` was reported *default*
(found by bench/fidelity.py on vLLM 0.34.0)."""
from flagtrace.probe.adapters.vllm_fields import engine_arg_paths

BUILDER = '''
class EngineArgs:
    def create_engine_config(self):
        model_config = self.create_model_config()
        resolved_cache_dtype = resolve_kv_cache_dtype_string(self.kv_cache_dtype, model_config)
        rpc_port = (self.data_parallel_rpc_port if self.data_parallel_rpc_port is not None
                    else ParallelConfig.data_parallel_rpc_port)
        two = self.a if x else self.b
        again = self.c
        again = self.d
        compilation_config = copy.deepcopy(self.compilation_config)
        cache_config = CacheConfig(cache_dtype=resolved_cache_dtype, block_size=self.block_size, x=two, y=again)
        parallel_config = ParallelConfig(data_parallel_rpc_port=rpc_port, cp_kv_cache_interleave_size=(
            self.cp_kv_cache_interleave_size if self.cp_kv_cache_interleave_size is not None
            else ParallelConfig.cp_kv_cache_interleave_size), w=self.e if self.f else None,
            device="cpu" if is_online(self.quantization) else None)
        return VllmConfig(model_config=model_config, compilation_config=compilation_config,
                          cache_config=cache_config, parallel_config=parallel_config)
'''
HOLDERS = {"CacheConfig": "cache_config", "ParallelConfig": "parallel_config", "ModelConfig": "model_config",
           "CompilationConfig": "compilation_config"}


def test_an_attribute_converted_in_a_local_names_the_field_it_becomes():
    paths = engine_arg_paths(BUILDER, HOLDERS)
    assert paths["kv_cache_dtype"] == "cache_config.cache_dtype"
    assert paths["data_parallel_rpc_port"] == "parallel_config.data_parallel_rpc_port"
    assert paths["block_size"] == "cache_config.block_size"  # the direct copy, as before
    # with a fallback when not given (vLLM 0.34.0; was reported default, its request lost)
    assert paths["cp_kv_cache_interleave_size"] == "parallel_config.cp_kv_cache_interleave_size"


def test_only_a_local_made_from_one_field_counts():
    paths = engine_arg_paths(BUILDER, HOLDERS)
    assert not {"a", "b", "c", "d", "e", "f", "quantization"} & set(paths)  # quantization: the condition only  # two attributes in one value, or two assignments
    assert "create_model_config" not in paths  # a method called, not a field read
    assert "compilation_config" not in paths  # a held config copied whole is not an engine argument's field


BUILDER_0_11 = '''
class EngineArgs:
    def create_engine_config(self):
        if self.eplb_window_size is not None:
            self.eplb_config.window_size = self.eplb_window_size
        parallel_config = ParallelConfig(eplb_config=self.eplb_config)
        speculative_config = self.create_speculative_config()
        num_lookahead_slots = self.num_lookahead_slots
        if speculative_config is not None:
            num_lookahead_slots = speculative_config.num_lookahead_slots
        mixed = self.g
        mixed = self.h
        scheduler_config = SchedulerConfig(num_lookahead_slots=num_lookahead_slots, z=mixed)
        return VllmConfig(parallel_config=parallel_config, scheduler_config=scheduler_config)
'''


def test_vllm_0_11_deprecated_options_and_a_local_decided_later():
    """vLLM 0.11.2, found by bench/fidelity.py: ``self.eplb_config.window_size = self.eplb_window_size`` writes the
    EPLBConfig that ``ParallelConfig(eplb_config=self.eplb_config)`` receives; ``num_lookahead_slots`` is the
    option's value unless speculative decoding decides another. Both were reported *default*, requests lost."""
    from flagtrace.probe.adapters.vllm_fields import engine_arg_copies

    holders = {"ParallelConfig": "parallel_config", "EPLBConfig": "parallel_config.eplb_config",
               "SchedulerConfig": "scheduler_config"}
    assert engine_arg_copies(BUILDER_0_11, holders) == {"eplb_window_size": ["parallel_config.eplb_config.window_size"]}
    paths = engine_arg_paths(BUILDER_0_11, holders)
    assert paths["num_lookahead_slots"] == "scheduler_config.num_lookahead_slots"
    assert "g" not in paths and "h" not in paths  # two attributes: neither is the source
