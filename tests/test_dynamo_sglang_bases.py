"""A wrapper release whose worker modules sit on different frameworks: ai-dynamo 1.6.1's pin file puts
``python -m dynamo.sglang`` on SGLang 0.5.21's overlay (``#@on sglang==0.5.21 dynamo.sglang``) and everything
else on vLLM 0.25.1's (``#@on vllm==0.25.1``). Its bin/python swaps the overlays for ``-m dynamo.sglang`` and
names the swap in FLAGTRACE_WRAPPER_BASES, which the probe's Dynamo adapter applies on sys.path (the probe's argv
does not name the module). The real worker: tests/frameworks/test_dynamo_sglang.py."""
import os
import subprocess
import sys
import types

from flagtrace.envs.build import Builder, base_of, module_bases
from flagtrace.envs.release import Release, parse_release
from flagtrace.probe.adapters import dynamo


def test_the_pin_file_names_a_base_per_worker_module():
    builder = Builder(root="/nonexistent")
    pins = builder.pin_path(parse_release("ai-dynamo==1.6.1"))
    assert base_of(pins) == Release("vllm", "0.25.1")
    assert module_bases(pins) == {"dynamo.sglang": Release("sglang", "0.5.21")}


def test_bin_python_swaps_the_overlay_for_the_module_and_names_the_swap(tmp_path):
    builder = Builder(root=str(tmp_path))
    release = parse_release("ai-dynamo==1.6.1")
    os.makedirs(builder.overlay(release))
    builder.write_wrappers(release, builder.recipes["ai-dynamo"])
    venv_python = os.path.join(builder.venv(), "bin", "python")
    os.makedirs(os.path.dirname(venv_python))
    with open(venv_python, "w") as fh:
        fh.write('#!/bin/sh\necho "$PYTHONPATH"\necho "$FLAGTRACE_WRAPPER_BASES"\n')
    os.chmod(venv_python, 0o755)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "FLAGTRACE_WRAPPER_BASES")}
    root = os.path.join(str(tmp_path), "ai-dynamo")

    def run(*argv):
        out = subprocess.run([builder.python(release), *argv], capture_output=True, text=True, env=env).stdout
        return out.splitlines()

    vllm, sglang = root + "/../vllm/overlays/0.25.1", root + "/../sglang/overlays/0.5.21"
    bases = "dynamo.sglang=%s=%s" % (vllm, sglang)
    assert run("-m", "dynamo.sglang", "--model-path", "m") == [root + "/overlays/1.6.1:" + sglang, bases]
    assert run("-m", "dynamo.vllm") == [root + "/overlays/1.6.1:" + vllm, bases]
    assert run("-c", "pass") == [root + "/overlays/1.6.1:" + vllm, bases]  # the probe: it swaps itself


def test_the_probe_swaps_the_overlay_only_for_the_module_named(monkeypatch, tmp_path):
    default, other = str(tmp_path / "vllm"), str(tmp_path / "sglang")
    monkeypatch.setenv("FLAGTRACE_WRAPPER_BASES", "dynamo.sglang=%s=%s" % (default, other))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(["/o", default]))
    for target, expected in (("dynamo.vllm", default), ("dynamo.sglang", other)):
        monkeypatch.setattr(sys, "path", ["/o", default, "/venv"])
        probe = types.SimpleNamespace(request={"mode": "module", "target": target})
        dynamo._swap_base(probe)
        assert sys.path == ["/o", expected, "/venv"]
        assert os.environ["PYTHONPATH"] == os.pathsep.join(["/o", expected])
        assert bool(probe.__dict__.get("dynamo_base")) == (target == "dynamo.sglang")
