"""Observer effect: the config flagtrace reports equals what SGLang resolves without it.

The untraced run is the bare method: `prepare_server_args` called from a plain `python -c`
under the same hardware simulation (the probe with recording off), printing every field.
"""
import json
import re

import pytest

from flagtrace import gpus
from flagtrace.launch.command import Target
from flagtrace.launch.local import run_probe
from sglang_support import HEADLINE, LLAMA3, QWEN36, python_for, releases, run_sglang

BARE = ("import json, sys\n"
        "from _flagtrace_probe.values import describe\n"
        "from sglang.srt.server_args import prepare_server_args\n"
        "args = prepare_server_args(sys.argv[1:])\n"
        "print('FIELDS=' + json.dumps({k: describe(v, k)['repr'] for k, v in vars(args).items()}))\n")
# A fresh random seed per run; everything else must match exactly.
NONDETERMINISTIC = {"random_seed"}
ADDRESS = re.compile(r" at 0x[0-9a-f]+")


def same(a, b):
    return ADDRESS.sub(" at 0x?", a) == ADDRESS.sub(" at 0x?", b)

COMMANDS = [
    ("B200x7", HEADLINE + ["--mamba-scheduler-strategy", "extra_buffer"], {"SGLANG_ENABLE_SPEC_V2": "1"}),
    ("H100", ["--model-path", LLAMA3], {}),
    ("RTX-PRO-6000", ["--model-path", QWEN36, "--page-size", "64"], {}),
]


def untraced(version, gpu, args, env, monkeypatch):
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    python = python_for(version)
    target = Target([python, "-c", "..."], python, [], "code", BARE, list(args))
    result = run_probe(target, {"observe": False, "gpu": gpus.choose(gpu), "setup": ["sim.gpu"]}, timeout=600)
    out = result.stdout.decode()
    assert "FIELDS=" in out, result.stderr.decode()[-3000:]
    return json.loads(out.split("FIELDS=", 1)[1].splitlines()[0])


@pytest.mark.parametrize("version", releases())
@pytest.mark.parametrize("gpu, args, env", COMMANDS, ids=[c[0] for c in COMMANDS])
def test_reported_config_equals_untraced_resolution(version, gpu, args, env, monkeypatch):
    bare = untraced(version, gpu, args, env, monkeypatch)
    run = run_sglang(version, args, gpu=gpu, env=env)
    assert run.rc == 0, run
    reported = {k: v["repr"] for k, v in run.trace["outcome"]["fields"]["1"].items() if "." not in k}
    assert set(reported) == set(bare)
    differ = {k: (reported[k], bare[k]) for k in bare if k not in NONDETERMINISTIC and not same(reported[k], bare[k])}
    assert not differ
