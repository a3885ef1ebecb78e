"""A value someone expects of a field (``check --expect``, ``fix --want``) against the value it
ended with: ``FIELD=VALUE`` as typed on a command line, compared leniently by type."""
import json

from ..core.exitcodes import ExitCode, FlagtraceError
from .explain import field_history


def evaluate_expectations(analysis, expects):
    out = []
    for spec in expects:
        if "=" not in spec:
            raise FlagtraceError("--expect wants FIELD=VALUE, got %r" % spec, ExitCode.USAGE)
        field, _, want = spec.partition("=")
        report = field_history(analysis, field.strip())
        if report is None:
            out.append((field, want, None, False))
            continue
        final = report["final"] or {}
        got = final.get("value")
        ok = matches(want.strip(), got, final.get("repr"))
        out.append((field, want, final.get("repr"), ok))
    return out


def matches(want, value, rep):
    if rep == want or (isinstance(value, str) and value == want):
        return True
    lowered = want.lower()
    if isinstance(value, bool):
        return lowered == str(value).lower()
    if value is None:
        return lowered in ("none", "null")
    if isinstance(value, (int, float)):
        try:
            return float(want) == float(value)
        except ValueError:
            return False
    try:
        return json.loads(want) == value
    except ValueError:
        return False
