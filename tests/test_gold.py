"""Gold files: the terminal report (width 100, no colour) and the JSON analysis of a few example
runs, byte for byte.

Each example is traced for real; the machine-specific parts of the trace (absolute paths,
interpreter, Python version, pid, timestamps, frame ids) are normalised; the reports are then
rendered from the normalised trace with ``--from``, so they do not depend on where the
repository or the interpreter lives.

Regenerate after an intended change:  FLAGTRACE_UPDATE_GOLD=1 .venv/bin/python -m pytest tests/test_gold.py
"""
import difflib
import json
import os
import sys

import pytest

from ft_support import PY, ROOT, example, run_cli

GOLD = os.path.join(ROOT, "tests", "gold")
UPDATE = os.environ.get("FLAGTRACE_UPDATE_GOLD") == "1"
VERSION_FILE = os.path.join(GOLD, "PYTHON_VERSION")
STDLIB = os.path.dirname(os.__file__)

TERMINAL = ["--no-color", "--width", "100"]
RUNS = {
    "serve_error": (["--watch", "serve_config:ServeConfig", "--stop-at", "serve_config:start", "--", PY,
                     example("serve_config.py"), "--model", "hybrid-7b", "--page-size", "64",
                     "--speculative-algo", "EAGLE", "--api-key", "sk-gold-0123456789"],
                    {"explain.txt": ["explain"] + TERMINAL,
                     "explain.json": ["explain", "--format", "json"],
                     "explain.md": ["explain", "--format", "markdown"]}),
    "serve_override": (["--watch", "serve_config:ServeConfig", "--stop-at", "serve_config:start", "--", PY,
                        example("serve_config.py"), "--model", "hybrid-7b", "--page-size=64",
                        "--speculative-algo", "EAGLE", "--disable-cache"],
                       {"explain.txt": ["explain"] + TERMINAL,
                        "why_page_size.txt": ["why", "page_size"] + TERMINAL,
                        "check.txt": ["check", "--expect", "page_size=64", "--expect", "cache_strategy=no_buffer"]
                        + TERMINAL,
                        "explain.md": ["explain", "--format", "markdown"],
                        "why_page_size.md": ["why", "page_size", "--format", "markdown"],
                        "check.md": ["check", "--expect", "page_size=64", "--expect", "cache_strategy=no_buffer",
                                     "--format", "markdown"]}),
    "frozen": (["--watch", "frozen_config:EngineConfig", "--", PY, example("frozen_config.py"),
                "--quantization", "fp8"],
               {"explain.txt": ["explain"] + TERMINAL,
                "explain.json": ["explain", "--format", "json"]}),
}
CASES = [(run, name) for run, (_, outputs) in sorted(RUNS.items()) for name in sorted(outputs)]


def normalise_trace(trace):
    """The trace with everything that depends on this machine or this moment replaced."""
    target = trace["target"]
    target.update(interpreter="<PYTHON>", python="<PYVER>", pid=0)
    target["command"] = ["python"] + list(target["command"][1:])
    trace["created"] = "<CREATED>"
    trace["duration_s"] = 0.0
    frames = {}
    for event in trace["events"]:
        if "frame" in event:
            event["frame"] = frames.setdefault(event["frame"], len(frames) + 1)
    text = json.dumps(trace, indent=1, sort_keys=True)
    for path, name in ((ROOT, "<ROOT>"), (STDLIB, "<STDLIB>")):
        text = text.replace(json.dumps(path)[1:-1], name)
    return text


@pytest.fixture(scope="module")
def normalised_traces(tmp_path_factory):
    where = tmp_path_factory.mktemp("gold")
    out = {}
    for run, (argv, _) in RUNS.items():
        raw = str(where / (run + ".raw.json"))
        r = run_cli(["explain", "--format", "json", "--save-trace", raw] + argv)
        assert r.rc in (0, 1, 2), r
        with open(raw, encoding="utf-8") as fh:
            text = normalise_trace(json.load(fh))
        assert ROOT not in text
        path = str(where / (run + ".json"))
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)
        out[run] = path
    return out


def _check_python():
    major_minor = "%d.%d" % sys.version_info[:2]
    if UPDATE:
        with open(VERSION_FILE, "w") as fh:
            fh.write(major_minor + "\n")
        return
    with open(VERSION_FILE) as fh:
        wanted = fh.read().strip()
    if wanted != major_minor:
        pytest.skip("gold files were made with Python %s (ast.unparse, qualnames and dataclass frames "
                    "differ across versions); this is %s" % (wanted, major_minor))


@pytest.mark.parametrize("run,name", CASES)
def test_gold(run, name, normalised_traces):
    _check_python()
    argv = RUNS[run][1][name]
    r = run_cli(argv + ["--from", normalised_traces[run]])
    assert r.rc in (0, 1, 2), r
    got = r.out
    assert ROOT not in got and "sk-gold" not in got
    path = os.path.join(GOLD, "%s.%s" % (run, name))
    if UPDATE:
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(got)
        return
    if not os.path.exists(path):
        pytest.fail("missing gold file %s: run with FLAGTRACE_UPDATE_GOLD=1" % path)
    with open(path, encoding="utf-8") as fh:
        want = fh.read()
    if got != want:
        diff = "".join(difflib.unified_diff(want.splitlines(True), got.splitlines(True), path, "now"))
        pytest.fail("%s differs from the gold file (FLAGTRACE_UPDATE_GOLD=1 to accept):\n%s" % (name, diff[:6000]))
    if name.endswith(".json"):
        json.loads(got)


def test_gold_reports_match_a_live_run(normalised_traces):
    """Rendering from the saved, normalised trace gives what the live run printed, paths aside."""
    argv, _ = RUNS["frozen"]
    live = run_cli(["explain", "--format", "json"] + argv).doc
    saved = run_cli(["explain", "--format", "json", "--from", normalised_traces["frozen"]]).doc
    for doc in (live, saved):
        doc.pop("target")
        doc["packages"] = []
    text = json.dumps(live).replace(json.dumps(ROOT)[1:-1], "<ROOT>")
    assert json.loads(text) == saved


@pytest.mark.parametrize("run,name", [(r, n) for r, n in CASES if n.endswith(".md")])
def test_markdown_renders_as_a_github_comment(run, name, normalised_traces):
    """Read back with a CommonMark parser (GFM tables on): the parts a maintainer looks for are
    there as structure, not as text that happens to look like it."""
    from markdown_it import MarkdownIt

    r = run_cli(RUNS[run][1][name] + ["--from", normalised_traces[run]])
    tokens = MarkdownIt("commonmark").enable("table").parse(r.out)
    kinds = [t.type for t in tokens]
    headings = [tokens[i + 1].content for i, t in enumerate(tokens) if t.type == "heading_open"]
    assert headings[0].startswith("flagtrace %s: " % name.split(".")[0].split("_")[0])
    assert any(t.type == "fence" and t.info == "sh" and "serve_config.py" in t.content for t in tokens)
    html = "".join(t.content for t in tokens if t.type == "html_block")
    assert html.count("<details>") == html.count("</details>")
    if name == "explain.md" and run == "serve_override":
        assert "Overridden: asked for one value, got another" in headings
        cells = [tokens[i + 1].content for i, t in enumerate(tokens) if t.type in ("th_open", "td_open")]
        assert cells[:5] == ["field", "asked", "got", "who", "where"]
        assert cells[5:10] == ["`page_size`", "`64` (`--page-size`)", "`1`", "`ServeConfig._adjust_for_model`",
                               "`tests/examples/serve_config.py:%d`" % line_of_page_size()]
        assert "table_open" in kinds and "<summary>Decided" in html
    if run == "serve_error" and name == "explain.md":
        assert "Error" in headings and "sk-gold" not in r.out


def line_of_page_size():
    from ft_support import line_of

    return line_of("serve_config.py", "self.page_size = 1")
