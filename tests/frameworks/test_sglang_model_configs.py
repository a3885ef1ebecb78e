"""A launch command copied from a GPU box names its model as a hub id or as a path that exists only
there. The bundled catalog stands in for it, the report says so, and the resolution is the one
the real model's config gives: the seed's radix-cache error, on 0.5.11 and 0.5.23."""
import json
import os
import subprocess
import sys

import pytest

from sglang_support import HEADLINE, QWEN36, run_sglang

AS_TYPED = {"hub id": "Qwen/Qwen3.6-27B", "foreign path": "/workspace/models/Qwen3.6-27B"}


def _with_model(model):
    args = list(HEADLINE)
    args[args.index(QWEN36)] = model
    return args


@pytest.mark.parametrize("version", ["0.5.11", "0.5.23"])
@pytest.mark.parametrize("kind", sorted(AS_TYPED))
def test_hub_id_and_foreign_path_resolve_like_the_local_config(version, kind, tmp_path):
    local = run_sglang(version, HEADLINE)
    named = run_sglang(version, _with_model(AS_TYPED[kind]))
    assert named.rc == local.rc, named
    how = "bundled Qwen/Qwen3.6-27B config.json" + (", matched by name" if kind == "foreign path" else "")
    assert named.doc["inputs"] == ["--model-path %s → %s" % (AS_TYPED[kind], how)]
    saved = tmp_path / "trace.json"
    saved.write_text(json.dumps(named.trace))
    text = subprocess.run([sys.executable, "-m", "flagtrace", "explain", "--from", str(saved), "--width", "300",
                           "--no-color"], capture_output=True, text=True).stdout
    assert "  model        --model-path %s → %s\n" % (AS_TYPED[kind], how) in text
    if local.doc["error"]:
        for key in ("type", "message"):
            assert named.doc["error"][key] == local.doc["error"][key]
        assert named.doc["error"]["site"]["line"] == local.doc["error"]["site"]["line"]
    if version == "0.5.11":  # the seed: speculative decoding against radix cache with no_buffer
        assert "not compatible with radix cache when using --mamba-scheduler-strategy no_buffer" in \
            named.doc["error"]["message"]
    local_fields = {f["field"]: (f["verdict"], f["final"]["repr"]) for f in local.doc["fields"]}
    named_fields = {f["field"]: (f["verdict"], f["final"]["repr"]) for f in named.doc["fields"]}
    differ = {k for k in local_fields if named_fields.get(k) != local_fields[k]}
    # the path itself (and the 0.5.23 model_config that holds it) differs; a seed is random
    assert differ <= {"model_path", "served_model_name", "tokenizer_path", "model_config", "random_seed"}, differ
    # every value shows what the command named, never the folder that stood in for it (issue 38)
    assert named_fields["model_path"][1] == repr(AS_TYPED[kind])
    assert named_fields["tokenizer_path"][1] == repr(AS_TYPED[kind])
    assert QWEN36 not in json.dumps({k: v for k, v in named.doc.items() if k != "inputs"})
