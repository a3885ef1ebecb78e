"""Observer effect: the config flagtrace reports equals what SGLang resolves without it.

The untraced run is the bare method: `prepare_server_args` under the same hardware simulation (the
probe with recording off), every attribute it leaves; one import per release serves the three
GPUs where the simulation allows it, a fork per command (observer_support.py).
"""
import functools

import pytest

from observer_support import differences, tier, untraced
from sglang_support import HEADLINE, LLAMA3, QWEN36, releases, run_sglang

COMMANDS = [
    ("B200x7", HEADLINE + ["--mamba-scheduler-strategy", "extra_buffer"], {"SGLANG_ENABLE_SPEC_V2": "1"}),
    ("H100", ["--model-path", LLAMA3], {}),
    ("RTX-PRO-6000", ["--model-path", QWEN36, "--page-size", "64"], {}),
]


@functools.lru_cache(maxsize=None)
def bare_configs(version):
    fields, _ = untraced(version, {gpu: [(args, env)] for gpu, args, env in COMMANDS}, fields="vars")
    return {gpu: results[0] for gpu, results in fields.items()}


@pytest.mark.parametrize("version", tier(releases(), ("0.5.11",)))
@pytest.mark.parametrize("gpu, args, env", COMMANDS, ids=[c[0] for c in COMMANDS])
def test_reported_config_equals_untraced_resolution(version, gpu, args, env):
    bare = bare_configs(version)[gpu]
    assert "fields" in bare, bare
    run = run_sglang(version, args, gpu=gpu, env=env)
    assert run.rc == 0, run
    reported = {k: v["repr"] for k, v in run.trace["outcome"]["fields"]["1"].items() if "." not in k}
    assert set(reported) == set(bare["fields"])
    assert not differences(reported, bare["fields"])
