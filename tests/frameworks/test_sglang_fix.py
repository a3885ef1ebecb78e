"""flagtrace fix on the seed case (SGLang 0.5.11, simulated B200 x7, Qwen3.6-27B with EAGLE and no
--mamba-scheduler-strategy): SGLang refuses the radix cache with speculative decoding; fix finds the
changes that make it resolve, each verified by a real re-resolution."""
import json
import os
import subprocess
import sys

import pytest

from sglang_support import HEADLINE, ROOT, python_for, releases

VERSION = "0.5.11"
pytestmark = pytest.mark.skipif(VERSION not in releases(), reason="FLAGTRACE_SGLANG selects another release")


@pytest.fixture(scope="module")
def seed():
    proc = subprocess.run([sys.executable, "-m", "flagtrace", "fix", "--gpu", "B200x7", "--format", "json", "--",
                           python_for(VERSION), "-m", "sglang.launch_server", *HEADLINE],
                          capture_output=True, text=True, cwd=ROOT, timeout=600,
                          env={k: v for k, v in os.environ.items() if k != "SGLANG_ENABLE_SPEC_V2"})
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout)


def test_the_problem_is_the_radix_cache_error_and_what_its_check_read(seed):
    [problem] = seed["problems"]
    assert problem["kind"] == "error"
    assert problem["text"].startswith("ValueError: Speculative decoding for Qwen3_5ForConditionalGeneration is "
                                      "not compatible with radix cache")
    assert problem["read"][:3] == ["mamba_scheduler_strategy", "disable_radix_cache", "speculative_algorithm"]


def test_the_strategy_flag_and_disabling_the_radix_cache_are_verified_fixes(seed):
    by = {tuple(f["changes"]): f for f in seed["fixes"]}
    strategy = by[("--mamba-scheduler-strategy extra_buffer",)]
    assert strategy["verified"] is True and strategy["outcome"] == "resolves"
    assert strategy["reason"] == "mamba_scheduler_strategy: a choice of --mamba-scheduler-strategy"
    assert strategy["command"][-2:] == ["--mamba-scheduler-strategy", "extra_buffer"]
    assert strategy["side_effects"] == [{"field": "mamba_scheduler_strategy", "old": "'no_buffer'",
                                         "new": "'extra_buffer'"}]
    radix = by[("--disable-radix-cache",)]
    assert radix["outcome"] == "resolves"
    assert {"field": "disable_radix_cache", "old": "False", "new": "True"} in radix["side_effects"]
    # the one-change fixes with the fewest side effects come first
    assert {tuple(f["changes"]) for f in seed["fixes"][:2]} == {("--mamba-scheduler-strategy extra_buffer",),
                                                                ("--disable-radix-cache",)}


def test_a_random_field_is_no_side_effect(seed):
    # random_seed differs between two resolutions of the same command
    assert "random_seed" in seed["unstable"]
    assert not any(e["field"] == "random_seed" for f in seed["fixes"] for e in f["side_effects"])


def test_choices_that_still_fail_are_tried_and_not_shown(seed):
    # auto is no_buffer again on this model; the other speculative algorithms still need the radix cache
    shown = [c for f in seed["fixes"] for c in f["changes"]]
    assert "--mamba-scheduler-strategy no_buffer" not in shown
    assert seed["candidates_tried"] > len(seed["fixes"])
