"""flagtrace diff on a real SGLang release (0.5.23, simulated GPUs): the same command on H100 and
B200, the fields that differ, who decided each, and the hardware answer that went differently."""
import json
import os
import subprocess
import sys

import pytest

from sglang_support import QWEN36, ROOT, overlay_file, python_for

VERSION = "0.5.23"
pytestmark = pytest.mark.skipif(os.environ.get("FLAGTRACE_SGLANG", VERSION) != VERSION,
                                reason="FLAGTRACE_SGLANG selects another release")


def source_line(relpath, line):
    with open(overlay_file(VERSION, os.path.join("sglang", "srt", relpath)), encoding="utf-8") as fh:
        return fh.read().splitlines()[line - 1].strip()


def test_page_size_64_on_h100_and_1_on_b200_names_the_sm100_answer():
    proc = subprocess.run([sys.executable, "-m", "flagtrace", "diff", "--gpu", "H100-80Gx8", "--gpu", "B200x7",
                           "--format", "json", "--", python_for(VERSION), "-m", "sglang.launch_server",
                           "--model-path", QWEN36, "--page-size", "64", "--trust-remote-code"],
                          capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    doc = json.loads(proc.stdout)
    assert doc["sides"] == ["--gpu H100-80Gx8", "--gpu B200x7"] and doc["statuses"] == ["resolved", "resolved"]
    first = doc["differences"][0]  # the overridden request comes first
    assert first["field"] == "page_size"
    assert first["values"] == ["64", "1"] and first["verdicts"] == ["honoured", "overridden"]
    decider = first["deciders"][1]
    assert decider["func"] == "_qwen3_5_hybrid_overrides"
    assert decider["file"].endswith(os.path.join("arg_groups", "model_overrides", "qwen3_5.py"))
    line = source_line("arg_groups/model_overrides/qwen3_5.py", decider["line"])
    assert line.startswith('"page_size": 64 if') and line in decider["src"]
    assert first["cause"]["kind"] == "hardware"
    assert first["cause"]["query"] == "is_sm100_supported()" and first["cause"]["values"] == ["False", "True"]
    fields = {d["field"]: d for d in doc["differences"]}
    assert fields["attention_backend"]["values"] == ["'fa3'", "'triton'"]
    # a random seed differs between any two resolutions: named as such, listed last
    assert fields["random_seed"]["cause"]["kind"] == "random"
    assert doc["differences"][-1]["cause"]["kind"] in ("random", "absent")


def test_a_forked_variant_reports_what_explain_reports_for_the_command_alone():
    # the second variant runs after the parent imported what the first one imported lazily
    from flagtrace.core.asked import Asked

    from flagtrace.core import gpus
    from flagtrace.adapters.sglang import SGLangAdapter
    from flagtrace.analysis.explain import analyse
    from flagtrace.launch.command import parse_command
    from flagtrace.launch.variants import Variant, run_variants
    from sglang_support import run_sglang

    args = ["--model-path", QWEN36, "--trust-remote-code"]
    target = parse_command([python_for(VERSION), "-m", "sglang.launch_server", *args])
    adapter = SGLangAdapter()
    request = adapter.request(target, Asked()).simulating(gpus.choose("B200x7")).to_json()
    _, variant = run_variants(target, request, [Variant(args + ["--page-size", "16"]), Variant(args + ["--page-size", "64"])],
                              300, preimport=adapter.preimport)
    alone = run_sglang(VERSION, args + ["--page-size", "64"], gpu="B200x7")

    def summary(doc):
        return {f["field"]: (f["verdict"], f["final"]["repr"],
                             [(c["func"], c["line"], sorted(h["query"] for h in c.get("hardware", [])))
                              for c in f["changes"]]) for f in doc["fields"] if f["field"] != "random_seed"}

    got, want = summary(analyse(variant.trace)), summary(alone.doc)
    assert got.keys() == want.keys()
    assert {k: v for k, v in got.items() if v != want[k]} == {}
    assert got["page_size"][:2] == ("overridden", "1")


def summary_of(doc):
    return {f["field"]: (f["verdict"], f["final"]["repr"],
                         [(c["func"], c["line"], sorted((h["query"], h["result"]) for h in c.get("hardware", [])))
                          for c in f["changes"]]) for f in doc["fields"] if f["field"] != "random_seed"}


def test_variants_of_other_gpus_forked_from_a_shared_import_report_what_explain_reports_alone():
    # H100 x4 forked from an import made under H100 x8 (nothing read at import differs). H200 x8 and B200 x7
    # cannot be forked from that process: SGLang's fla ops, imported lazily by the first resolution, read the
    # device name at import (``is_nvidia_hopper``) once triton's driver says the box is a CUDA one. They are
    # forked from the fork taken before those imports (probe/base_fork.py), switched to their GPU first.
    # MI300X cannot be had from either: the simulation switches GPUs of one vendor only.
    from flagtrace.core.asked import Asked

    from flagtrace.core import gpus
    from flagtrace.adapters.sglang import SGLangAdapter
    from flagtrace.analysis.explain import analyse
    from flagtrace.launch.command import parse_command
    from flagtrace.launch.variants import Variant, run_variants
    from sglang_support import run_sglang

    args = ["--model-path", QWEN36, "--trust-remote-code", "--page-size", "64"]
    target = parse_command([python_for(VERSION), "-m", "sglang.launch_server", *args])
    adapter = SGLangAdapter()
    request = adapter.request(target, Asked()).simulating(gpus.choose("H100x8")).to_json()
    others = ("H100x4", "H200x8", "B200x7", "MI300X")
    first, *rest = run_variants(target, request, [Variant(args)] + [Variant(args, gpu=gpus.choose(g)) for g in others],
                                300, preimport=adapter.preimport)
    assert [first.status] + [r.status for r in rest] == ["ran", "ran", "ran", "ran", "unshared"]
    assert rest[-1].why == "another vendor (amd)"
    for gpu, result in zip(others[:3], rest):
        doc = analyse(result.trace)
        name, count = gpus.choose(gpu)["name"], gpus.choose(gpu)["count"]
        assert (doc["simulation"]["gpu"], doc["simulation"]["count"]) == (name, count)
        alone = run_sglang(VERSION, args, gpu=gpu)
        got, want = summary_of(doc), summary_of(alone.doc)
        assert {k: v for k, v in got.items() if v != want.get(k)} == {}, gpu
        assert got.keys() == want.keys()


def test_two_releases_translate_the_renamed_flag_and_pair_the_renamed_field():
    # --mamba-scheduler-strategy is --mamba-radix-cache-strategy from 0.5.20: 0.5.23 refuses the old
    # name, the side is resolved again with its own, and the field is compared under both names
    from sglang_support import HEADLINE

    old, new = "0.5.11", "0.5.23"
    proc = subprocess.run([sys.executable, "-m", "flagtrace", "diff", "--gpu", "B200x7", "--python", python_for(old),
                           "--python", python_for(new), "--format", "json", "--", "python", "-m",
                           "sglang.launch_server", *HEADLINE, "--mamba-scheduler-strategy", "auto"],
                          capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    doc = json.loads(proc.stdout)
    assert doc["releases"] == ["sglang 0.5.11", "sglang 0.5.23"]
    assert doc["translated"] == [[], ["--mamba-scheduler-strategy → --mamba-radix-cache-strategy (SGLang 0.5.23's name)"]]
    assert doc["statuses"] == ["error", "resolved"]
    assert doc["errors"][0].startswith("ValueError: Speculative decoding for Qwen3_5ForConditionalGeneration")
    [d] = [d for d in doc["differences"] if d["field"] == "mamba_radix_cache_strategy"]
    assert d["names"] == ["mamba_scheduler_strategy", "mamba_radix_cache_strategy"]
    assert d["values"] == ["'no_buffer'", "'extra_buffer'"]
    first, second = d["deciders"]
    assert (first["func"], first["line"]) == ("ServerArgs._handle_missing_default_values", 1082)
    assert second["func"] == "_mamba_radix_cache_resolution"
    assert source_line("arg_groups/overrides.py", second["line"]) == 'declared["mamba_radix_cache_strategy"] = "extra_buffer"'
    assert d["cause"]["kind"] == "code"


def test_matrix_over_two_releases_translates_the_flag_set():
    # the flag set names the 0.5.11 option; 0.5.23 is given its own name for it
    old, new = "0.5.11", "0.5.23"
    proc = subprocess.run([sys.executable, "-m", "flagtrace", "matrix", "--gpu", "B200x7", "--python", python_for(old),
                           "--python", python_for(new), "--flags", "--mamba-scheduler-strategy no_buffer",
                           "--fields", "mamba_radix_cache_strategy,page_size", "--format", "json", "--",
                           "python", "-m", "sglang.launch_server", "--model-path", QWEN36, "--trust-remote-code"],
                          capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    cells = json.loads(proc.stdout)["cells"]
    assert [c["python"] for c in cells] == [python_for(old), python_for(new)]
    assert cells[0]["translated"] == [] and cells[1]["translated"] == [
        "--mamba-scheduler-strategy → --mamba-radix-cache-strategy (SGLang 0.5.23's name)"]
    assert [c["values"]["mamba_radix_cache_strategy"]["value"] for c in cells] == ["'no_buffer'", "'no_buffer'"]
