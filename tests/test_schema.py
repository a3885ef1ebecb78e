"""Traces written by the probe conform to the published JSON Schema; readers refuse others."""
import json
import os

import jsonschema
import pytest

from ft_support import PY, ROOT, example, run_cli  # not conftest: tests/frameworks has one too

SCHEMA = json.load(open(os.path.join(ROOT, "src", "flagtrace", "schema", "trace.schema.json")))


@pytest.mark.parametrize("script, args, watch", [
    ("serve_config.py", ["--model", "hybrid-7b", "--page-size", "64"], "serve_config:ServeConfig"),
    ("serve_config.py", ["--speculative-algorithm", "EAGLE"], "serve_config:ServeConfig"),
    ("frozen_config.py", ["--quantization", "fp8"], "frozen_config:EngineConfig"),
])
def test_example_traces_follow_the_schema(tmp_path, script, args, watch):
    saved = tmp_path / "trace.json"
    result = run_cli(["explain", "--format", "json", "--watch", watch, "--save-trace", str(saved),
                      "--", PY, example(script), *args])
    assert result.rc in (0, 2), result
    trace = json.loads(saved.read_text())
    jsonschema.validate(trace, SCHEMA)
    assert trace["schema"] == "flagtrace/trace@2"
    assert any(e["kind"] == "write" and e["how"] != "init" for e in trace["events"])


REQUEST_SCHEMA = json.load(open(os.path.join(ROOT, "src", "flagtrace", "schema", "request.schema.json")))


class _Recording:
    """launch/local.py's json, keeping each request it writes."""

    def __init__(self):
        self.written = []

    def dump(self, obj, fh, **kw):
        self.written.append(json.loads(json.dumps(obj)))
        return json.dump(obj, fh, **kw)

    def __getattr__(self, name):
        return getattr(json, name)


@pytest.mark.parametrize("argv", [
    ["explain", "--watch", "serve_config:ServeConfig", "--gpu", "H100x2", "--"],  # one command
    ["diff", "--watch", "serve_config:ServeConfig", "--gpu", "H100", "--gpu", "A100", "--"],  # the variant engine
])
def test_the_probe_s_requests_follow_their_schema(monkeypatch, argv):
    from flagtrace.launch import local

    recording = _Recording()
    monkeypatch.setattr(local, "json", recording)
    result = run_cli(argv + [PY, example("serve_config.py"), "--page-size", "64"])
    assert result.rc == 0, result
    requests = [r for r in recording.written if r.get("schema") == "flagtrace/request@1"]
    assert requests, recording.written
    for request in requests:
        jsonschema.validate(request, REQUEST_SCHEMA)
        assert request["watch"] == ["serve_config:ServeConfig"] and request["user_specs"] == request["watch"]
        assert request["gpu"]["name"].split("-")[0] in ("H100", "A100")
    jsonschema.validate({"schema": "flagtrace/request@1", "adapter": "generic", "adapter_info": {"name": "generic"},
                         "watch": [], "stop_at": [], "setup": []}, REQUEST_SCHEMA)
    with pytest.raises(jsonschema.ValidationError):  # a key no code writes
        jsonschema.validate(dict(requests[0], wach=["x:Y"]), REQUEST_SCHEMA)
