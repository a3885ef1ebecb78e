"""Issue 39: a release flagtrace's suite does not run says so in every output — the terminal header, the JSON
analysis (``adapter.tested``), Markdown, the gate's row — and a tested one says nothing; the tested releases are
the ones the Makefile builds (the framework records' ``tested``)."""
import json
import os
import re

from ft_support import PY, ROOT, example, run_cli

from flagtrace.core.frameworks import FRAMEWORKS, named, with_tested


def traced(tmp_path, version):
    """A real trace (an example run), its adapter section made SGLang's at ``version``."""
    path = tmp_path / "trace.json"
    run_cli(["explain", "--save-trace", str(path), "--format", "json", "-o", os.devnull, "--watch",
             "frozen_config:EngineConfig", "--", PY, example("frozen_config.py"), "--quantization", "fp8"])
    trace = json.loads(path.read_text())
    trace["adapter"] = {"name": "sglang", "version": version, "describe": "sglang %s (dataclass __post_init__)"
                        % version}
    path.write_text(json.dumps(trace))
    return str(path)


def test_an_untested_release_says_so_in_every_output(tmp_path):
    saved = traced(tmp_path, "0.5.5.post3")
    terminal = run_cli(["explain", "--no-color", "--width", "200", "--from", saved]).out
    assert "adapter      sglang 0.5.5.post3 (dataclass __post_init__) · untested release (the suite runs " \
           "others; see docs/releases.md)" in terminal
    assert "· **untested release** ·" in run_cli(["explain", "--format", "markdown", "--from", saved]).out
    doc = run_cli(["explain", "--format", "json", "--from", saved]).doc
    assert doc["adapter"]["tested"] is False


def test_a_tested_release_says_nothing(tmp_path):
    saved = traced(tmp_path, "0.5.11")
    assert "untested" not in run_cli(["explain", "--no-color", "--width", "200", "--from", saved]).out
    assert run_cli(["explain", "--format", "json", "--from", saved]).doc["adapter"]["tested"] is True
    assert with_tested({"name": "generic", "version": "1.0"}) == {"name": "generic", "version": "1.0"}


def test_the_tested_releases_are_the_ones_the_makefile_builds():
    """What the records call tested is what the suite's environments hold: the Makefile's SGLANG_VERSIONS and
    VLLM_VERSIONS, and the SGLang and vLLM releases the ai-dynamo pin files run their workers on (#@on)."""
    makefile = open(os.path.join(ROOT, "Makefile")).read()
    built = {name: set(re.search(r"^%s_VERSIONS \?= (.*)$" % name.upper(), makefile, re.M).group(1).split())
             for name in ("sglang", "vllm")}
    dynamo = os.path.join(ROOT, "src", "flagtrace", "data", "env", "ai-dynamo")
    for pins in os.listdir(dynamo):
        for framework, version in re.findall(r"^#@on (\w+)==(\S+)", open(os.path.join(dynamo, pins)).read(), re.M):
            built[framework].add(version)
    assert {r.name: set(r.tested) for r in FRAMEWORKS} == built
    assert named("sglang").tested[0] == "0.4.5"
    from flagtrace.probe.adapters import vllm as probe_vllm  # the probe's own list, in its refusal message

    assert tuple(probe_vllm.TESTED) == named("vllm").tested
