"""The gate (check -f) and the lock on a real release follow their JSON Schemas (src/flagtrace/schema/): resolved
and refused rows with their deployment, drift against a lock, a lock with values. Two runs on SGLang 0.5.11 (the
release the image tag names, from the builder's cache that `make sglang-env` filled); the framework-free rows
(bad input, a wrapper) are tests/test_schema.py's."""
import json
import os

import jsonschema
import pytest

from ft_support import run_sub
from sglang_support import ROOT

from flagtrace.core.exitcodes import ExitCode

ENVS = os.path.join(ROOT, ".envs")
IMAGE = "lmsysorg/sglang:v0.5.11-cu129"


def schema(kind):
    with open(os.path.join(ROOT, "src", "flagtrace", "schema", kind + ".schema.json")) as fh:
        return json.load(fh)


def manifest(page_size):
    """Two SGLang containers: one resolves, the other passes a flag the release's parser refuses."""
    container = ("        - name: %s\n          image: " + IMAGE + "\n"
                 "          command: [python3, -m, sglang.launch_server]\n"
                 "          args: [--model-path, $(MODEL), %s]\n"
                 "          env: [{name: MODEL, value: meta-llama/Meta-Llama-3-8B-Instruct}]\n")
    return ("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: sglang-llama}\nspec:\n  template:\n"
            "    spec:\n      containers:\n"
            + container % ("sglang", '--page-size, "%d"' % page_size)
            + container % ("sglang-bad", '--no-such-flag, "1"'))


@pytest.mark.skipif(not os.path.isfile(os.path.join(ENVS, "sglang", "overlays", "0.5.11", ".flagtrace-stamp")),
                    reason="sglang 0.5.11 is built by make sglang-env")
def test_lock_and_gate_on_sglang_follow_their_schemas(tmp_path):
    stack = tmp_path / "stack.yaml"
    stack.write_text(manifest(16))
    lock = tmp_path / "flagtrace.lock.json"
    env = {"FLAGTRACE_ENVS": ENVS}
    written = run_sub(["lock", "-f", str(stack), "--gpu", "H100", "-o", str(lock)], timeout=900, env=env)
    assert written.rc == ExitCode.TARGET_RAISED, written  # the refused command: left out of the lock
    locked = json.loads(lock.read_text())
    jsonschema.validate(locked, schema("lock"))
    [(name, entry)] = locked["commands"].items()
    assert name == "%s: Deployment/sglang-llama container sglang" % stack
    assert (entry["release"], entry["image"], entry["values"]["page_size"]) == ("sglang==0.5.11", IMAGE, "16")
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(dict(locked, extra=1), schema("lock"))

    stack.write_text(manifest(32))
    gate = run_sub(["check", "-f", str(stack), "--gpu", "H100", "--lock", str(lock), "--format", "json"],
                   timeout=900, env=env)
    assert gate.rc == ExitCode.TARGET_RAISED, gate
    doc = gate.doc
    jsonschema.validate(doc, schema("gate"))
    good, bad = doc["rows"]
    assert (good["status"], good["exit"], bad["status"], bad["exit"]) == ("resolved", 1, "error", 2)
    assert good["drift"] == [{"field": "page_size", "locked": "16", "now": "32", "by": "asked for with --page-size"}]
    assert "drift" not in bad  # never locked because it raises: its error fails the row, no '(command)' drift
    assert good["deployment"]["release"] == "sglang==0.5.11"
    assert [f["option"] for f in bad["deployment"]["findings"]] == ["--no-such-flag"]
    for broken in (dict(doc, extra=1), dict(doc, rows=[dict(good, status="drifted")])):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(broken, schema("gate"))
