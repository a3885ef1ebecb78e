"""The same launch through each entry point a user types: the wrapper interpreter, a venv's
python3, and the `sglang serve` console script."""
import json
import os
import subprocess
import sys

import pytest

from sglang_support import LLAMA3, ROOT, overlay_file, pick, python_for

VERSION = pick()
ENVS = os.path.join(ROOT, ".envs", "sglang")


def entry(kind):
    overlay = overlay_file(VERSION, "")
    if kind == "wrapper python -m":
        return [python_for(VERSION), "-m", "sglang.launch_server"], {}
    if kind == "venv python3 -m":
        return [os.path.join(ENVS, "venv", "bin", "python3"), "-m", "sglang.launch_server"], {"PYTHONPATH": overlay}
    return [os.path.join(overlay, "bin", "sglang"), "serve"], {"PYTHONPATH": overlay}


@pytest.mark.parametrize("kind", ["wrapper python -m", "venv python3 -m", "sglang serve"])
def test_entry_points_resolve_the_same(kind, tmp_path):
    command, extra_env = entry(kind)
    env = dict(os.environ, **extra_env)
    out = tmp_path / "a.json"
    proc = subprocess.run([sys.executable, "-m", "flagtrace", "explain", "--gpu", "H100", "--format", "json",
                           "-o", str(out), "--", *command, "--model-path", LLAMA3, "--page-size", "64"],
                          capture_output=True, text=True, cwd=ROOT, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    doc = json.loads(out.read_text())
    fields = {f["field"]: f for f in doc["fields"]}
    assert doc["adapter"]["name"] == "sglang" and doc["adapter"]["version"] == VERSION
    assert fields["page_size"]["verdict"] == "honoured"
    assert fields["attention_backend"]["final"]["value"] == "fa3"
    assert doc["stop"] == "sglang.srt.server_args:prepare_server_args (returned)"


def test_debug_names_the_release_a_command_would_run():
    proc = subprocess.run([sys.executable, "-m", "flagtrace", "debug", "--", python_for(VERSION), "-m",
                           "sglang.launch_server", "--model-path", LLAMA3], capture_output=True, text=True, cwd=ROOT,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "  adapter      sglang\n" in proc.stdout
    assert "  framework    sglang %s at %s" % (VERSION, overlay_file(VERSION, "sglang")) in proc.stdout
