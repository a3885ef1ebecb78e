"""Property tests for probe/values.py (hypothesis, from requirements-dev.txt)."""
import json

import pytest

pytest.importorskip("hypothesis")
from hypothesis import given, settings, strategies as st  # noqa: E402

from flagtrace.probe.common.recorded import is_option_word
from flagtrace.probe.values import REDACTED, describe, is_secret_name, redact_argv, safe_repr  # noqa: E402

json_like = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text() | st.binary(),
    lambda children: st.lists(children, max_size=5) | st.tuples(children, children)
    | st.dictionaries(st.text(max_size=5) | st.integers(), children, max_size=5)
    | st.frozensets(st.integers() | st.text(max_size=3), max_size=4),
    max_leaves=30)


@settings(max_examples=300, deadline=None)
@given(json_like, st.sampled_from([None, "x", "api_key", "HF_TOKEN"]))
def test_describe_anything_is_json_serialisable(value, name):
    out = describe(value, name)
    text = json.dumps(out, default=safe_repr)
    assert json.loads(text)["type"] == type(value).__name__


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(max_size=12) | st.sampled_from(["--api-key", "--hf-token", "--api-key=", "--"]),
                max_size=12))
def test_redact_argv_keeps_length_and_hides_values_after_secret_flags(argv):
    out = redact_argv(argv)
    assert len(out) == len(argv)
    i = 0
    while i < len(argv) - 1:
        tok = argv[i]
        if tok.startswith("--") and "=" not in tok and is_secret_name(tok):
            if is_option_word(argv[i + 1]):  # a switch (``--allow-credentials``): the next option is no value
                assert out[i + 1] != REDACTED
            else:
                assert out[i + 1] == REDACTED
                i += 1  # the value is consumed, whatever else it looks like
        i += 1
