"""A fixed sample of bench/fidelity.py's option sweep (issue 24): ten options and five random
combinations of them (hypothesis, seeded) on SGLang 0.5.23 and vLLM 0.34.0, each run through
flagtrace (the variant engine, as ``explain`` analyses) and through the release's untraced
resolution under the same simulation (the observer-effect machinery). For every command: the
option's field(s) honoured or overridden, every final value equal to the untraced one, every
resolved field present, ``requested.option`` what was typed. One import per side and release, all
four at once; the full sweep is ``bench/fidelity.py --release ...`` (docs/fidelity.md)."""
import concurrent.futures
import functools
import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import fidelity  # noqa: E402

GPU = "H100x8"
# (typed, dest, words after the base command, requested.option expected: None = typed)
SAMPLES = {
    ("sglang", "0.5.23"): [
        ("--page-size", "page_size", ["--page-size", "64"], None),
        ("--disable-radix-cache", "disable_radix_cache", ["--disable-radix-cache"], None),
        ("--schedule-policy", "schedule_policy", ["--schedule-policy", "lpm"], None),
        ("--mem-fraction-static", "mem_fraction_static", ["--mem-fraction-static", "0.8"], None),
        ("--chunked-prefill-size", "chunked_prefill_size", ["--chunked-prefill-size", "4096"], None),
        ("--max-running-requests", "max_running_requests", ["--max-running-requests", "64"], None),
        ("--attention-backend", "attention_backend", ["--attention-backend", "triton"], None),
        ("--tp-size", "tp_size", ["--tp-size", "2"], None),
        ("--trust-remote-code", "trust_remote_code", ["--trust-remote-code"], None),
        ("--kv-cache-dtype", "kv_cache_dtype", ["--kv-cache-dtype", "fp8_e4m3"], None),
    ],
    ("vllm", "0.34.0"): [
        # converted in a local before CacheConfig (issue 24: was reported default, its request lost)
        ("--kv-cache-dtype", "kv_cache_dtype", ["--kv-cache-dtype", "fp8_e4m3"], None),
        ("--disable-prefix-caching", "enable_prefix_caching", ["--disable-prefix-caching"], None),
        ("-tp", "tensor_parallel_size", ["-tp", "2"], None),
        ("--max-num-seqs", "max_num_seqs", ["--max-num-seqs", "64"], None),
        # a dict field, not a config: the request is the field whole (issue 24: was split into keys, lost)
        ("--override-generation-config", "override_generation_config",
         ["--override-generation-config", '{"temperature": 0.5}'], None),
        ("--gpu-memory-utilization", "gpu_memory_utilization", ["--gpu-memory-utilization", "0.85"], None),
        ("--enforce-eager", "enforce_eager", ["--enforce-eager"], None),
        ("-O3", "optimization_level", ["-O3"], "--optimization-level"),  # rewritten before argparse
        ("-cc.max_cudagraph_capture_size", "compilation_config", ["-cc.max_cudagraph_capture_size=256"], "-cc"),
        # with a fallback when not given (issue 24: was reported default, its request lost)
        ("--cp-kv-cache-interleave-size", "cp_kv_cache_interleave_size", ["--cp-kv-cache-interleave-size", "2"], None),
    ],
}
COMBINATIONS = 5
SEED = 24


def _rows(key):
    return [{"option": typed, "dest": dest, "command": words, "expect": expect or typed}
            for typed, dest, words, expect in SAMPLES[key]]


@functools.lru_cache(maxsize=None)
def _all_batches():
    """Every release's untraced and traced batch, side by side (four processes, one import each)."""
    jobs = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=4) as pool:
        for key in SAMPLES:
            framework, version = key
            release = fidelity.Release(framework, version, GPU, fidelity.BASE_MODEL[framework], 240)
            rows = _rows(key)
            combos = fidelity.draw_combinations(rows, COMBINATIONS, SEED)
            fragments = [r["command"] for r in rows] + [fidelity.fragment(c) for c in combos]
            jobs[key] = (rows, combos, pool.submit(release.untraced, fragments),
                         pool.submit(release.traced, fragments))
        return {key: (rows, combos, bare.result(), traced.result()) for key, (rows, combos, bare, traced)
                in jobs.items()}


def _message(command, problems):
    return "%s:\n%s" % (" ".join(command), "\n".join(
        "  %s %s%s: expected %s, got %s" % (p["kind"], p.get("option", ""), " field " + p["field"]
                                            if p.get("field") else "", p.get("expected"), p.get("got"))
        for p in problems))


@pytest.fixture(scope="module")
def batches():
    for framework, version in SAMPLES:
        if not os.path.exists(os.path.join(fidelity.envs_root(), framework, version, "bin", "python")):
            pytest.skip("%s %s is not built (make %s-env)" % (framework, version, framework))
    return _all_batches()


@pytest.mark.parametrize("key", list(SAMPLES), ids=["%s-%s" % k for k in SAMPLES])
def test_each_option_is_asked_for_and_resolves_as_untraced(key, batches):
    rows, _, bare, analyses = batches[key]
    failures = []
    for row, b, analysis in zip(rows, bare, analyses):
        assert "fields" in b, (row["command"], b)  # the sample's values all resolve
        seen = {}
        problems = fidelity.check(key[0], [(row["option"], row["dest"], row["expect"])], b, analysis, seen)
        if problems:
            failures.append(_message(row["command"], problems))
        else:
            assert seen["compared"] > 100, (row["command"], seen)
            assert seen["verdicts"][row["option"]], row["command"]
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("key", list(SAMPLES), ids=["%s-%s" % k for k in SAMPLES])
def test_random_combinations_hold_the_same_properties(key, batches):
    rows, combos, bare, analyses = batches[key]
    assert len(combos) == COMBINATIONS
    results = fidelity.check_combinations(key[0], combos, bare[len(rows):], analyses[len(rows):])
    failures = [_message(r["command"], r["problems"]) for r in results if r["problems"]]
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("option, field, value", [
    # converted in a local before CacheConfig(cache_dtype=resolved_cache_dtype)
    ("--kv-cache-dtype", "cache_config.cache_dtype", "'fp8_e4m3'"),
    # a JSON option of a dict field: the field whole, not a field per key
    ("--override-generation-config", "model_config.override_generation_config", "{'temperature': 0.5}"),
    # x if self.x is not None else ParallelConfig.x
    ("--cp-kv-cache-interleave-size", "parallel_config.cp_kv_cache_interleave_size", "2"),
])
def test_a_vllm_request_reaches_the_field_it_becomes(batches, option, field, value):
    """issue 24, found by the sweep on vLLM 0.34.0: each was reported *default* with the value
    asked for and no request (the request lost on the way from EngineArgs to the config)."""
    rows, _, _, analyses = batches[("vllm", "0.34.0")]
    analysis = analyses[[r["option"] for r in rows].index(option)]
    report = next(f for f in analysis["fields"] if f["field"] == field)
    assert (report["verdict"], report["final"]["repr"], report["requested"]["option"],
            report["requested"]["typed"]) == ("honoured", value, option, option), report
