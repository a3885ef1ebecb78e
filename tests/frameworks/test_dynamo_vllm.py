"""NVIDIA Dynamo's vLLM worker (``python -m dynamo.vllm``) explained through its own code: ai-dynamo 1.6.1 on
vLLM 0.25.1, the overlay ``make dynamo-env`` builds (``flagtrace env build ai-dynamo==1.6.1``), under a
simulated H100. No --adapter: the vLLM adapter recognises the module. Dynamo's runtime is stood in for, so
the default discovery backend (etcd, which retries localhost:2379 without end) never hangs the run."""
import os
import time

import pytest

from ft_support import run_sub
from sglang_support import ROOT

ENVS = os.path.join(ROOT, ".envs")
MODEL = os.path.join(ROOT, "models", "llama-3.1-8b")

needs = pytest.mark.skipif(
    not os.path.isfile(os.path.join(ENVS, "ai-dynamo", "overlays", "1.6.1", ".flagtrace-stamp")),
    reason="ai-dynamo 1.6.1 is built by make dynamo-env (flagtrace env build ai-dynamo==1.6.1)")


def explain(args, timeout=240, env=None):
    started = time.monotonic()
    r = run_sub(["explain", "--release", "ai-dynamo==1.6.1", "--offline", "--gpu", "H100x1", "--format", "json",
                 "--timeout", str(timeout), "--", "python3", "-m", "dynamo.vllm", "--model", MODEL] + args,
                timeout=timeout + 120, env=dict(env or {}, FLAGTRACE_ENVS=ENVS))
    return r, time.monotonic() - started


@needs
def test_dynamo_forces_skip_tokenizer_init_off_and_the_report_names_its_line():
    r, seconds = explain(["--skip-tokenizer-init", "--discovery-backend", "etcd", "--request-plane", "nats"])
    assert r.rc == 0, r
    doc = r.doc
    adapter = doc["adapter"]
    assert (adapter["name"], adapter["version"]) == ("vllm", "0.25.1")
    assert adapter["wrapper"] == {"module": "dynamo.vllm", "distribution": "ai-dynamo", "version": "1.6.1"}
    assert adapter["describe"].endswith(" via dynamo.vllm (ai-dynamo 1.6.1)")
    assert doc["stop"] == "vllm.engine.arg_utils:EngineArgs.create_engine_config (returned)"
    fields = {f["field"]: f for f in doc["fields"]}
    skip = fields["model_config.skip_tokenizer_init"]
    assert skip["verdict"] == "overridden" and skip["requested"]["typed"] == "--skip-tokenizer-init"
    assert (skip["initial"]["value"], skip["final"]["value"]) == (True, False)
    [change] = skip["changes"]
    assert change["func"] == "update_engine_config_with_dynamo"
    assert change["file"].endswith("/ai-dynamo/overlays/1.6.1/dynamo/vllm/args.py") and change["line"] == 519
    assert change["src"] == "setattr(engine_config, key, value)"
    prefix = fields["cache_config.enable_prefix_caching"]  # None -> True, Dynamo's default (args.py:360)
    assert prefix["verdict"] == "decided" and prefix["final"]["value"] is True
    assert [(c["func"], c["line"]) for c in prefix["changes"]] == [("update_engine_config_with_dynamo", 360)]
    # etcd and NATS were asked for; the runtime was built in memory and the report says so
    assert adapter["stand_ins"] == [
        "dynamo.common.utils.runtime.create_runtime (no cluster contacted: discovery_backend 'etcd' -> 'mem', "
        "request_plane 'nats' -> 'tcp'; Dynamo's config keeps what was asked)"]
    assert seconds < 240  # nothing waited on localhost:2379


@needs
def test_dynamos_own_parser_refuses_what_neither_it_nor_vllm_knows():
    """Dynamo parses its flags with parse_known_args and hands the rest to vLLM's parser, which refuses an
    unknown one: the error is vLLM's argparse error, exit 2."""
    r, _ = explain(["--no-such-flag", "1"])
    assert r.rc == 2, r
    assert r.doc["error"]["kind"] == "argparse" and "--no-such-flag" in r.doc["error"]["message"]


@needs
def test_kvbm_connector_and_a_nats_event_plane_resolve():
    """KVBM offloading as Dynamo's docs launch it (docs/kvbm/vllm-setup.md: DynamoConnector from
    kvbm.vllm_integration.connector), in a pod the Dynamo operator gave NATS_SERVER and ETCD_ENDPOINTS. vLLM imports
    kvbm inside create_engine_config: the overlay holds kvbm and nixl (env/ai-dynamo/1.6.1.txt); before it did,
    the run was a simulation gap (exit 3, "No module named 'kvbm'"). The NATS event plane is the local one."""
    connector = ('{"kv_connector":"DynamoConnector","kv_role":"kv_both",'
                 '"kv_connector_module_path":"kvbm.vllm_integration.connector"}')
    r, seconds = explain(["--kv-transfer-config", connector], env={
        "NATS_SERVER": "nats://dynamo-platform-nats:4222", "ETCD_ENDPOINTS": "dynamo-platform-etcd:2379",
        "DYN_EVENT_PLANE": "nats"})
    assert r.rc == 0, r
    assert r.doc["status"] == "resolved"
    assert r.doc["stop"] == "vllm.engine.arg_utils:EngineArgs.create_engine_config (returned)"
    fields = {f["field"]: f for f in r.doc["fields"]}
    assert fields["kv_transfer_config.kv_connector"]["final"]["value"] == "DynamoConnector"
    assert fields["kv_transfer_config.kv_connector_module_path"]["verdict"] == "honoured"
    assert r.doc["adapter"]["stand_ins"] == [
        "dynamo.common.utils.runtime.create_runtime (no cluster contacted: discovery_backend 'etcd' -> 'mem', "
        "event_plane 'nats' -> 'zmq'; Dynamo's config keeps what was asked)"]
    assert seconds < 240  # no NATS server was dialled
