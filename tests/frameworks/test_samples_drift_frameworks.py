"""The docs' sample outputs that run a real SGLang release are what their commands print today,
pids and timings aside (scripts/samples.py --check)."""
import pytest

from samples_support import check, samples_module

SAMPLES = samples_module().SAMPLES


@pytest.mark.parametrize("name", sorted(n for n, s in SAMPLES.items() if s.needs))
def test_the_sample_is_what_its_command_prints_today(name):
    code, out = check(name)
    assert code == 0, out
