"""The README is a front door and the docs are a site: their shape, links and samples (no framework needed).

What this does not check: that a sample's output is what its command prints today (scripts/samples.py
regenerates a sample from a real run; tests/test_samples_drift.py and its frameworks twin run them), nor the anchors of the README's and
CONTRIBUTING.md's links (mkdocs build --strict checks those of docs/, below and in make docs)."""
import os
import re
import subprocess
import sys
import tempfile

import pytest

from samples_support import samples_module

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
README = os.path.join(ROOT, "README.md")
MACHINE_PATHS = re.compile(r"(?<![\w.~-])/(?:work|tmp|root|home)/")
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")


def _read(path):
    with open(path, encoding="utf-8") as fh:
        return fh.read()


def _pages():
    """README.md, CONTRIBUTING.md and every Markdown page under docs/."""
    out = [README, os.path.join(ROOT, "CONTRIBUTING.md")]
    for folder, _, files in os.walk(os.path.join(ROOT, "docs")):
        out += [os.path.join(folder, f) for f in sorted(files) if f.endswith(".md")]
    return out


def _outside_code_spans(text):
    """The text with fenced blocks and inline code blanked (links inside them are not links)."""
    text = re.sub(r"(?ms)^(`{3,}|~{3,}).*?^\1\s*$", "", text)
    return re.sub(r"`[^`\n]*`", "", text)


def test_readme_is_short_and_opens_with_make_demo_and_make_test():
    text = _read(README)
    assert len(text.splitlines()) <= 250
    commands = []
    for block in re.findall(r"(?ms)^```[a-z]*\n(.*?)^```", text):
        for line in block.splitlines():
            line = line.split("#", 1)[0].strip()
            line = line[2:] if line.startswith("$ ") else line
            if line:
                commands.append(line)
    assert commands[:2] == ["make demo", "make test"]
    # and nothing but the title comes before them
    before = text[:text.index("make demo")]
    assert [l for l in before.splitlines() if l.strip() and not l.startswith("```")] == ["# flagtrace"]


def test_readme_keeps_the_measured_make_test_time():
    assert "`make test` on a clean clone" in _read(README)


@pytest.mark.parametrize("path", _pages(), ids=lambda p: os.path.relpath(p, ROOT))
def test_no_machine_paths(path):
    bad = [(n, line) for n, line in enumerate(_read(path).splitlines(), 1) if MACHINE_PATHS.search(line)]
    assert not bad, "machine paths in %s: %s" % (os.path.relpath(path, ROOT), bad[:5])


@pytest.mark.parametrize("path", _pages(), ids=lambda p: os.path.relpath(p, ROOT))
def test_relative_links_resolve(path):
    missing = []
    for target in LINK.findall(_outside_code_spans(_read(path))):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
            continue
        file = target.split("#", 1)[0]
        if not os.path.exists(os.path.normpath(os.path.join(os.path.dirname(path), file))):
            missing.append(target)
    assert not missing, "%s links to missing files: %s" % (os.path.relpath(path, ROOT), missing)


def test_no_link_leaves_the_repository():
    for path in _pages():
        for target in LINK.findall(_outside_code_spans(_read(path))):
            if "://" in target or target.startswith("#"):
                continue
            where = os.path.normpath(os.path.join(os.path.dirname(path), target.split("#", 1)[0]))
            assert where == ROOT or where.startswith(ROOT + os.sep), (path, target)


def test_sample_blocks_name_a_listed_command():
    samples = samples_module()
    used = {}
    for path in _pages():
        for name, _, _, body in samples.blocks(_read(path)):
            assert name in samples.SAMPLES, "%s: sample %s is not in scripts/samples.py" % (path, name)
            assert samples.shown_command(body) == samples.SAMPLES[name].shown, (path, name)
            used.setdefault(name, []).append(path)
    assert set(used) == set(samples.SAMPLES), "listed but marked nowhere: %s" % (set(samples.SAMPLES) - set(used))


def test_sample_markers_are_checked():
    samples = samples_module()
    good = "<!-- sample: gpus -->\n```text\n$ flagtrace gpus\nNAME\n```\n<!-- /sample -->\n"
    assert [b[0] for b in samples.blocks(good)] == ["gpus"]
    for bad in ("<!-- sample: gpus -->\n```text\n$ flagtrace gpus\n```\n",
                "<!-- sample: gpus -->\nprose\n<!-- /sample -->\n",
                "<!-- /sample -->\n"):
        with pytest.raises(ValueError):
            samples.blocks(bad)


def test_sample_output_is_trimmed_and_freed_of_machine_paths():
    samples = samples_module()
    sample = samples.Sample("flagtrace x", cut=[("^B", "^D"), ("^F", None)], head=4)
    lines = samples.trim(sample, ["A", "B", "C", "", "D", "E", "F", "G"])
    assert lines == ["A", "  …", "", "D", "…"]
    assert samples.trim(samples.Sample("x", cut=[("^B", "^D")]), ["A", "B", "C", "D"]) == ["A", "  …", "D"]
    assert samples.trim(samples.Sample("x", start="^C"), ["A", "B", "C", "D"]) == ["...", "C", "D"]
    assert samples.sanitize(samples.ROOT + "/.envs/x " + os.path.expanduser("~") + "/.cache") == ".envs/x ~/.cache"
    words, env = samples.Sample("K=1 flagtrace gpus").argv()
    assert env == {"K": "1"} and words[1:] == ["gpus"] and words[0].endswith(".venv/bin/flagtrace")


def test_the_design_lives_in_the_repository():
    assert os.path.exists(os.path.join(ROOT, "docs", "design.md"))
    for path in _pages() + [os.path.join(ROOT, "mkdocs.yml")]:
        assert "../shared" not in _read(path), path


def test_every_docs_page_is_in_the_site_nav():
    nav = _read(os.path.join(ROOT, "mkdocs.yml"))
    docs = os.path.join(ROOT, "docs")
    for path in _pages()[2:]:
        assert os.path.relpath(path, docs) in nav, path


def test_mkdocs_builds_strictly():
    try:
        import mkdocs  # noqa: F401
        import material  # noqa: F401
    except ImportError:
        pytest.skip("mkdocs and mkdocs-material are not installed (requirements-dev.txt pins them)")
    with tempfile.TemporaryDirectory() as site:
        # not -q: mkdocs 1.6 does not count the warnings it does not print, and --strict would pass them
        proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-d", site],
                              cwd=ROOT, env=dict(os.environ, NO_MKDOCS_2_WARNING="1"), stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, universal_newlines=True, timeout=60)
    assert proc.returncode == 0, proc.stdout
