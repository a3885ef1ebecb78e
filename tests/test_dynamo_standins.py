"""probe/adapters/dynamo.py on a stand-in of Dynamo's modules (the real worker runs in
tests/frameworks/test_dynamo_vllm.py): the runtime is built in memory whatever discovery and planes were
asked for, fetch_model downloads nothing, each is recorded once it is used, a module that imported the
function before the probe gets the stand-in too, and a live run (flagtrace run --live) is left alone."""
import json
import subprocess
import sys
import textwrap

from ft_support import ROOT

FILES = {
    "dynamo/common/__init__.py": "",
    "dynamo/common/utils/__init__.py": "",
    "dynamo/common/utils/runtime.py": """
        def create_runtime(discovery_backend, request_plane, event_plane=None, use_kv_events=None,
                           response_plane="tcp"):
            return [discovery_backend, request_plane, event_plane, response_plane]
    """,
    "dynamo/common/model_fetch.py": """
        async def fetch_model(remote_name, ignore_weights=False):
            raise RuntimeError("the network was reached")
    """,
    "dynamo/vllm/__init__.py": "__version__ = '9.9.9'\n",
    "dynamo/vllm/args.py": "from dynamo.common.model_fetch import fetch_model\n",
    "dynamo/vllm/main.py": "from dynamo.common.utils.runtime import create_runtime\n",
}

SCRIPT = """
import asyncio, json, sys, types
from flagtrace.probe.imports import PostImportHooks
from flagtrace.probe.adapters import dynamo as adapter

live, early = sys.argv[1] == "live", sys.argv[2] == "early"
if early:  # imported before the probe (flagtrace run activates on the first import of vllm)
    import dynamo.vllm.args, dynamo.vllm.main
request = {"live": live, "adapter_info": {"name": "vllm", "describe": "vllm 0.0.0"}}
probe = types.SimpleNamespace(request=request, trace=types.SimpleNamespace(request=request),
                              imports=PostImportHooks())
probe.imports.install()
adapter.setup(probe)
import dynamo.vllm, dynamo.vllm.args, dynamo.vllm.main
try:
    fetched = asyncio.run(dynamo.vllm.args.fetch_model("Qwen/Qwen3-0.6B", ignore_weights=True))
except RuntimeError as exc:
    fetched = str(exc)
runtime = dynamo.vllm.main.create_runtime(discovery_backend="etcd", request_plane="nats", event_plane="nats")
print(json.dumps({"fetched": fetched, "runtime": runtime, "info": request["adapter_info"]}))
"""


def run(tmp_path, live=False, early=False):
    for name, text in FILES.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    proc = subprocess.run([sys.executable, "-c", SCRIPT, "live" if live else "dry", "early" if early else "late"],
                          capture_output=True, text=True, timeout=60, cwd=str(tmp_path),
                          env={"PYTHONPATH": "%s:%s/src" % (tmp_path, ROOT), "PATH": "/usr/bin:/bin"})
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_the_runtime_is_built_in_memory_and_nothing_is_fetched(tmp_path):
    out = run(tmp_path)
    assert out["runtime"] == ["mem", "tcp", "zmq", "tcp"]
    assert out["fetched"] == "Qwen/Qwen3-0.6B"
    assert out["info"]["wrapper"] == {"module": "dynamo.vllm", "distribution": "ai-dynamo", "version": "9.9.9"}
    assert out["info"]["describe"] == "vllm 0.0.0 via dynamo.vllm (ai-dynamo 9.9.9)"
    assert out["info"]["stand_ins"] == [
        "dynamo.common.model_fetch.fetch_model (nothing downloaded: 'Qwen/Qwen3-0.6B' returned as given)",
        "dynamo.common.utils.runtime.create_runtime (no cluster contacted: discovery_backend 'etcd' -> 'mem', "
        "event_plane 'nats' -> 'zmq', request_plane 'nats' -> 'tcp'; Dynamo's config keeps what was asked)"]


def test_a_module_that_imported_them_before_the_probe_gets_the_stand_ins(tmp_path):
    out = run(tmp_path, early=True)
    assert out["runtime"] == ["mem", "tcp", "zmq", "tcp"] and out["fetched"] == "Qwen/Qwen3-0.6B"


def test_a_live_run_is_left_alone(tmp_path):
    out = run(tmp_path, live=True)
    assert out["runtime"] == ["etcd", "nats", "nats", "tcp"] and out["fetched"] == "the network was reached"
    assert "stand_ins" not in out["info"] and "wrapper" not in out["info"]
