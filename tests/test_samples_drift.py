"""The docs' sample outputs are what their commands print today, pids and timings aside
(scripts/samples.py --check): the samples that need no framework (those that do:
tests/frameworks/test_samples_drift_frameworks.py)."""
import pytest

from samples_support import check, samples_module

SAMPLES = samples_module().SAMPLES


@pytest.mark.parametrize("name", sorted(n for n, s in SAMPLES.items() if not s.needs))
def test_the_sample_is_what_its_command_prints_today(name):
    code, out = check(name)
    assert code == 0, out


def test_a_block_that_differs_is_found_with_its_line(tmp_path):
    samples = samples_module()
    page = tmp_path / "page.md"
    page.write_text("# A page\n\n<!-- sample: gpus -->\n```text\n$ flagtrace gpus\nline one\nline two pid 12\n```\n"
                    "<!-- /sample -->\n")
    samples.PAGES = [str(page)]
    assert samples.drift("gpus", "$ flagtrace gpus\nline one\nline two pid 3456") == []  # a pid is not drift
    assert samples.drift("gpus", "$ flagtrace gpus\nline one\nline 2") == [
        ("%s:7" % samples.os.path.relpath(str(page), samples.ROOT), "line two pid 12", "line 2")]
    assert samples.drift("gpus", "$ flagtrace gpus\nline one") == [
        ("%s:7" % samples.os.path.relpath(str(page), samples.ROOT), "line two pid 12", "(the output ends)")]
