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
