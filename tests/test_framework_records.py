"""The framework registry (core/frameworks): each record's data, and what the rest of flagtrace asks of it
without loading an adapter: source links, environment patterns, model options, the adapter's class."""
from flagtrace import adapters
from flagtrace.core import frameworks


def test_source_links_point_at_the_release_tag():
    analysis = {"adapter": {"name": "sglang", "version": "0.5.11"}}
    assert frameworks.source_url(analysis, "sglang/srt/server_args.py", 12) == \
        "https://github.com/sgl-project/sglang/blob/v0.5.11/python/sglang/srt/server_args.py#L12"
    assert frameworks.source_url({"adapter": {"name": "vllm", "version": "0.34.0"}}, "vllm/config/model.py", 3) == \
        "https://github.com/vllm-project/vllm/blob/v0.34.0/vllm/config/model.py#L3"
    assert frameworks.source_url(analysis, "torch/cuda/__init__.py", 1) is None  # not the framework's file
    assert frameworks.source_url({"adapter": {"name": "generic"}}, "x.py", 1) is None


def test_every_record_names_an_adapter_that_carries_its_data():
    for record in frameworks.FRAMEWORKS:
        adapter = adapters.adapter_named(record.name)
        assert adapter.record is record and adapter.name == record.name and adapter.scripts == record.scripts
        assert adapter.model_spec() == record.model_spec()
    assert frameworks.NAMES == ("auto", "sglang", "vllm", "generic")
    assert frameworks.env_patterns()[:3] == ["SGLANG_*", "SGL_*", "VLLM_*"]
    assert frameworks.by_script("vllm").label == "vLLM" and frameworks.by_script("python") is None
