"""Every vLLM entry point resolves through the same adapter: the console script, the CLI module, the
OpenAI API server module, and `flagtrace run` over a command that starts one of them."""
import json
import os
import subprocess
import sys
import tempfile

import pytest

from framework_support import ROOT
from vllm_support import LLAMA31, python_for, releases, run_vllm

VERSION = "0.33.0" if "0.33.0" in releases() else None
pytestmark = pytest.mark.skipif(VERSION is None, reason="0.33.0 not selected")


def check(run, model_typed="--model"):
    assert run.rc == 0, run
    model = run.field("model_config.model")  # `vllm serve MODEL` asks for it as much as --model does
    assert model["verdict"] == "honoured" and model["origin"] == "cli" and model["final"]["value"] == LLAMA31
    assert model["requested"]["typed"] == model_typed
    seqs = run.field("scheduler_config.max_num_seqs")
    assert seqs["verdict"] == "honoured" and seqs["final"]["value"] == 32
    assert run.doc["stop"] == "vllm.engine.arg_utils:EngineArgs.create_engine_config (returned)"


def test_console_script():
    script = os.path.join(os.path.dirname(python_for(VERSION)), "vllm")
    check(run_vllm(VERSION, [LLAMA31, "--max-num-seqs", "32"], entry=("serve",), python=script), model_typed=LLAMA31)


def test_openai_api_server_module():
    check(run_vllm(VERSION, ["--model", LLAMA31, "--max-num-seqs", "32"],
                   entry=("-m", "vllm.entrypoints.openai.api_server")))


def test_flagtrace_run_probes_the_vllm_process():
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "run.json")
        proc = subprocess.run([sys.executable, "-m", "flagtrace", "run", "--gpu", "H100", "--format", "json", "-o", out,
                               "--", python_for(VERSION), "-m", "vllm.entrypoints.cli.main", "serve", LLAMA31,
                               "--max-num-seqs", "32"], capture_output=True, text=True, cwd=ROOT, timeout=600)
        assert proc.returncode == 0, proc.stderr[-3000:]
        doc = json.load(open(out))
    text = json.dumps(doc)
    assert "vllm.config.vllm:VllmConfig" in text and '"scheduler_config.max_num_seqs"' in text


def test_via_a_command_prefix():
    # `env` stands for `ssh gpu-box`: the probe travels over the prefix's stdin, the trace comes back
    check(run_vllm(VERSION, [LLAMA31, "--max-num-seqs", "32"], extra=("--via", "env")), model_typed=LLAMA31)
