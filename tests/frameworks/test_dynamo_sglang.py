"""NVIDIA Dynamo's SGLang worker (``python -m dynamo.sglang``) explained through its own code: ai-dynamo 1.6.1,
whose pin file sits that module on SGLang 0.5.21's overlay (``#@on sglang==0.5.21 dynamo.sglang``; the
[sglang] extra pins sglang==0.5.21), under a simulated H100x8. No --adapter: the SGLang adapter recognises the
module. Dynamo's parser takes its own flags and SGLang's (ServerArgs.add_cli_args), then sets some of SGLang's
on the parsed Namespace before ServerArgs.from_cli_args: those writes are reported at Dynamo's line. Its runtime
(etcd, NATS) is stood in for, so the default discovery backend never hangs the run."""
import os
import time

import pytest

from ft_support import run_sub
from sglang_support import ROOT

ENVS = os.path.join(ROOT, ".envs")
MODEL = os.path.join(ROOT, "models", "qwen3-8b")
MANIFESTS = os.path.join(ROOT, "tests", "manifests")
ARGS = os.path.join("ai-dynamo", "overlays", "1.6.1", "dynamo", "sglang", "args.py")


def _built(*parts):
    return os.path.isfile(os.path.join(ENVS, *parts, ".flagtrace-stamp"))


needs = pytest.mark.skipif(
    not (_built("ai-dynamo", "overlays", "1.6.1") and _built("sglang", "overlays", "0.5.21")),
    reason="ai-dynamo 1.6.1 and the sglang 0.5.21 overlay it names are built by make dynamo-env "
           "(flagtrace env build ai-dynamo==1.6.1)")


def explain(args, timeout=240):
    started = time.monotonic()
    r = run_sub(["explain", "--release", "ai-dynamo==1.6.1", "--offline", "--gpu", "H100x8", "--format", "json",
                 "--timeout", str(timeout), "--", "python3", "-m", "dynamo.sglang", "--model-path", MODEL] + args,
                timeout=timeout + 120, env={"FLAGTRACE_ENVS": ENVS})
    return r, time.monotonic() - started


@needs
def test_dynamo_overrides_served_model_name_and_sets_incremental_streaming_at_its_lines():
    r, seconds = explain(["--tp", "8", "--served-model-name", "qwen a b", "--discovery-backend", "etcd"])
    assert r.rc == 0, r
    doc = r.doc
    adapter = doc["adapter"]
    assert (adapter["name"], adapter["version"]) == ("sglang", "0.5.21")
    assert adapter["wrapper"] == {"module": "dynamo.sglang", "distribution": "ai-dynamo", "version": "1.6.1"}
    assert adapter["describe"].endswith(" via dynamo.sglang (ai-dynamo 1.6.1)")
    assert doc["stop"] == "sglang.srt.server_args:ServerArgs.resolve_once (returned)"
    fields = {f["field"]: f for f in doc["fields"]}
    # Dynamo splits --served-model-name on whitespace/commas: the first is SGLang's, the rest aliases
    served = fields["served_model_name"]
    assert served["verdict"] == "overridden" and served["requested"]["typed"] == "--served-model-name"
    assert (served["initial"]["value"], served["final"]["value"]) == ("qwen a b", "qwen")
    [change] = served["changes"]
    assert (change["func"], change["line"]) == ("parse_args", 764) and change["file"].endswith(ARGS)
    assert change["src"] == "parsed_args.served_model_name = served_names[0]"
    # not asked for: SGLang's parser default False, Dynamo's True ("Dynamo expects disjoint output_ids")
    stream = fields["incremental_streaming_output"]
    assert stream["verdict"] == "decided" and (stream["initial"]["value"], stream["final"]["value"]) == (False, True)
    assert [(c["func"], c["line"], c["file"].endswith(ARGS)) for c in stream["changes"]] == [("parse_args", 881, True)]
    # the user's SGLang flag, through Dynamo's parser (--tp is SGLang's abbreviation of --tp-size)
    assert fields["tp_size"]["verdict"] == "honoured" and fields["tp_size"]["final"]["value"] == 8
    # Dynamo's own flag is Dynamo's (not a ServerArgs field); its runtime was built in memory, said so
    assert "discovery_backend" not in fields
    assert [s for s in adapter["stand_ins"] if s.startswith("python -m dynamo.sglang on ")
            and "/sglang/overlays/0.5.21, not " in s and "/vllm/overlays/0.25.1 (the wrapper release's pin file" in s]
    assert ("dynamo.common.utils.runtime.create_runtime (no cluster contacted: discovery_backend 'etcd' -> 'mem'; "
            "Dynamo's config keeps what was asked)") in adapter["stand_ins"]
    assert seconds < 240  # nothing waited on localhost:2379


@needs
def test_what_neither_dynamos_parser_nor_sglangs_knows_is_refused_by_sglangs():
    """Dynamo parses with parse_known_args and hands the rest to a parser holding SGLang's options only
    (sglang_only_parser), which refuses an unknown one: an argparse error, exit 2."""
    r, _ = explain(["--no-such-flag", "1"])
    assert r.rc == 2, r
    assert r.doc["error"]["kind"] == "argparse" and "--no-such-flag" in r.doc["error"]["message"]


@needs
def test_the_gate_resolves_dynamos_sglang_graph_instead_of_calling_it_unsupported():
    """Dynamo's SGLang disaggregated graph (DynamoGraphDeployment, python3 -m dynamo.sglang): each worker is
    explained on ai-dynamo 1.6.1 (the 0.7.1 tag is overridden by --release), not reported 'not followed'."""
    r = run_sub(["check", "-f", os.path.join(MANIFESTS, "dynamo-sglang-disagg.yaml"), "--release", "ai-dynamo==1.6.1",
                 "--gpu", "H100", "--offline", "--format", "json"], timeout=400, env={"FLAGTRACE_ENVS": ENVS})
    assert r.rc == 0, r
    rows = {row["name"].rsplit(" services ", 1)[-1]: row for row in r.doc["rows"]}
    assert {k: (row["status"], row["exit"], row["release"]) for k, row in rows.items()} == {
        "decode container main": ("resolved", 0, "ai-dynamo==1.6.1"),
        "prefill container main": ("resolved", 0, "ai-dynamo==1.6.1")}
    assert r.doc["summary"]["unsupported"] == 0
