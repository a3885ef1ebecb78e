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
