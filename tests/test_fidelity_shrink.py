"""bench/fidelity.py's shrinking of a failing combination: the smallest part that fails the same way."""
import os
import sys

from hypothesis import given, settings, strategies as st

from ft_support import ROOT

sys.path.insert(0, os.path.join(ROOT, "bench"))
import fidelity  # noqa: E402


def _rows(names):
    return [{"option": n, "command": [n, "1"]} for n in names]


def _failing_when(culprits, kind="value", field="page_size"):
    """An attempt whose combinations fail (one problem, at ``field``) exactly when they hold every culprit."""
    batches = []

    def attempt(combos):
        batches.append(len(combos))
        return [[{"kind": kind, "field": field}] if culprits <= {r["option"] for r in c} else [] for c in combos]

    return attempt, batches


def test_shrinks_to_the_two_options_that_fail_together():
    combo = _rows(["--a", "--b", "--c", "--d", "--e"])
    attempt, batches = _failing_when({"--b", "--d"})
    small, problems, rounds = fidelity.shrink(combo, [{"kind": "value", "field": "page_size"}], attempt)
    assert [r["option"] for r in small] == ["--b", "--d"]
    assert problems == [{"kind": "value", "field": "page_size"}]
    assert rounds == 4 and batches == [5, 4, 3, 2]  # one batch per round, each one option smaller


def test_another_failure_is_not_the_same_failure():
    combo = _rows(["--a", "--b", "--c"])
    attempt, _ = _failing_when({"--a"}, field="other_field")
    small, problems, rounds = fidelity.shrink(combo, [{"kind": "value", "field": "page_size"}], attempt)
    assert [r["option"] for r in small] == ["--a", "--b", "--c"] and rounds == 1


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from("abcdefgh"), min_size=2, max_size=6, unique=True), st.data())
def test_the_result_is_exactly_the_culprits(names, data):
    culprits = set(data.draw(st.lists(st.sampled_from(names), min_size=1, unique=True)))
    attempt, _ = _failing_when(culprits)
    small, _, _ = fidelity.shrink(_rows(names), [{"kind": "value", "field": "page_size"}], attempt)
    assert [r["option"] for r in small] == [n for n in names if n in culprits]
