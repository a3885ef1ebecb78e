"""The headline case on the real releases: the mamba strategy, speculative decoding, B200 x7."""
import json
import os

import jsonschema
import pytest

from sglang_support import HEADLINE, releases, run_sglang

SERVER_ARGS = os.path.join("sglang", "srt", "server_args.py")
SCHEMA = json.load(open(os.path.join(os.path.dirname(__file__), "..", "..", "src", "flagtrace", "schema",
                                     "trace.schema.json")))
# Lines read from each release's source by hand (docs/dev/sglang-0.5.10-0.5.12.md), so the
# tests check flagtrace against an independent reading, not only against itself.
RAISE_LINE = {"0.5.10.post1": 2206, "0.5.11": 2453, "0.5.12": 2568}
AUTO_TO_NO_BUFFER = {"0.5.10.post1": 967, "0.5.11": 1082, "0.5.12": 1187}
MAX_RUNNING_48 = {"0.5.10.post1": 2994, "0.5.11": 3455, "0.5.12": 3743}


def only(versions):
    return [v for v in releases() if v in versions]


@pytest.mark.parametrize("version", only(("0.5.11", "0.5.12")))
def test_headline_resolves_and_strategy_is_honoured(version):
    run = run_sglang(version, HEADLINE + ["--mamba-scheduler-strategy", "extra_buffer"],
                     env={"SGLANG_ENABLE_SPEC_V2": "1"})
    assert run.rc == 0, run
    jsonschema.validate(run.trace, SCHEMA)
    assert run.doc["status"] == "resolved"
    assert run.doc["simulation"]["gpu"] == "B200" and run.doc["simulation"]["count"] == 7
    strategy = run.field("mamba_scheduler_strategy")
    assert strategy["verdict"] == "honoured"
    assert strategy["final"]["value"] == "extra_buffer"
    assert strategy["requested"]["option"] == "--mamba-scheduler-strategy"

    mrr = run.field("max_running_requests")
    assert mrr["verdict"] == "decided"
    change = mrr["changes"][-1]
    assert (change["old"]["value"], change["new"]["value"]) == (None, 48)
    assert change["func"] == "ServerArgs._handle_speculative_decoding"
    assert change["file"].endswith(SERVER_ARGS)
    assert change["line"] == MAX_RUNNING_48[version]
    assert change["src"] == "self.max_running_requests = 48"
    assert any("Max running requests is reset to 48" in log["message"] for log in change["logs"])
    reads = {r["field"]: r for r in change["reads"] if "field" in r}
    assert reads["speculative_algorithm"]["origin"] == "cli"


@pytest.mark.parametrize("version", releases())
def test_radix_cache_error_is_explained(version):
    run = run_sglang(version, HEADLINE)
    assert run.rc == 2, run
    jsonschema.validate(run.trace, SCHEMA)
    error = run.doc["error"]
    assert error["type"] == "ValueError"
    assert ("Speculative decoding for Qwen3_5ForConditionalGeneration is not compatible with radix "
            "cache when using --mamba-scheduler-strategy no_buffer") in error["message"]
    assert error["site"]["func"] == "ServerArgs._handle_mamba_radix_cache"
    assert error["site"]["line"] == RAISE_LINE[version]
    texts = [c["text"] for c in error["conditions"]]
    assert "self.speculative_algorithm is not None" in texts
    assert "not self.disable_radix_cache" in texts
    reads = {r["field"]: r for r in error["reads"] if "field" in r}
    strategy = reads["mamba_scheduler_strategy"]
    assert strategy["value"]["value"] == "no_buffer"
    assert strategy["origin"] == "decided"
    assert strategy["was"]["value"] == "auto"
    assert strategy["set_by"]["line"] == AUTO_TO_NO_BUFFER[version]
    assert strategy["set_by"]["func"] == "ServerArgs._handle_missing_default_values"
    assert reads["speculative_algorithm"]["value"]["value"] == "EAGLE"
    assert reads["speculative_algorithm"]["origin"] == "cli"
    assert reads["speculative_algorithm"]["option"] == "--speculative-algorithm"
    assert reads["disable_radix_cache"]["value"]["value"] is False
    assert reads["disable_radix_cache"]["origin"] == "default"


GOLD = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "gold")


def _markdown(run, tmp_path):
    import re
    import subprocess
    import sys

    from sglang_support import ROOT

    saved = tmp_path / "trace.json"
    saved.write_text(json.dumps(run.trace))
    proc = subprocess.run([sys.executable, "-m", "flagtrace", "explain", "--from", str(saved), "--format", "markdown"],
                          capture_output=True, text=True, cwd=ROOT, timeout=120)
    text = proc.stdout.replace(ROOT, "<ROOT>")
    # the one value that differs from run to run
    return re.sub(r"(\| `random_seed` \| `None` \| )`\d+`", r"\1`<RANDOM>`", text)


@pytest.mark.parametrize("case", ["seed", "resolved"])
def test_markdown_report_gold(case, tmp_path):
    """The Markdown a user pastes into an issue, for the seed case and its resolved twin on 0.5.11:
    byte for byte (FLAGTRACE_UPDATE_GOLD=1 to accept a change), links to the release's source."""
    if "0.5.11" not in releases():
        pytest.skip("FLAGTRACE_SGLANG selects another release")
    run = (run_sglang("0.5.11", HEADLINE) if case == "seed" else
           run_sglang("0.5.11", HEADLINE + ["--mamba-scheduler-strategy", "extra_buffer"],
                      env={"SGLANG_ENABLE_SPEC_V2": "1"}))
    got = _markdown(run, tmp_path)
    assert "[sglang/srt/server_args.py:" in got and "https://github.com/sgl-project/sglang/blob/v0.5.11/python/" in got
    path = os.path.join(GOLD, "sglang_0.5.11_%s.explain.md" % case)
    if os.environ.get("FLAGTRACE_UPDATE_GOLD") == "1":
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(got)
    with open(path, encoding="utf-8") as fh:
        assert got == fh.read()
