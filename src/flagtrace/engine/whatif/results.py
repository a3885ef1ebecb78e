"""A variant's results: its analysis (or why flagtrace cannot explain it), the environment and the
hardware answers it saw."""
import ast
import os

from ...core import trace as tracefile
from ...analysis import verdict
from ...core.exitcodes import FlagtraceError
from ...launch.local import stderr_tail


def _analysis(result, tolerant):
    try:
        return analysis(result)
    except FlagtraceError as exc:
        if not tolerant:
            raise
        return {"status": "refused", "message": exc.message}


def analysis(result):
    label = result.variant.label
    if result.status == "timeout":
        raise FlagtraceError("%s did not finish within %gs (--timeout); it and its children were killed"
                             % (label, result.seconds))
    if result.trace is None:
        raise FlagtraceError("%s ended before flagtrace could record anything (exit status %s)"
                             % (label, result.returncode), detail=stderr_tail(result.output))
    trace = tracefile.check(result.trace)
    stop = verdict.gate(trace, died=False)
    if stop:
        raise FlagtraceError(stop.message)
    from ..resolve import explanation

    return explanation(trace)


def environments(results, env):
    """Per variant, the environment as the target saw it: each variable it read (the value at its
    first read; None: unset), and the launch value of every variable some variant changed."""
    launch = os.environ if env is None else env
    keys = {k for r in results for k in r.variant.env}
    out = []
    for r in results:
        seen = {}
        for event in (r.trace or {}).get("events", []):
            if event.get("kind") == "envread" and event["key"] not in seen:
                seen[event["key"]] = _unrepr(event.get("value"))
        seen.update({k: r.variant.env[k] if k in r.variant.env else launch.get(k) for k in keys})
        out.append(seen)
    return out


def _unrepr(text):
    """A value the trace keeps as its repr ("'4'"), as the value itself."""
    try:
        return ast.literal_eval(text) if text is not None else None
    except (ValueError, SyntaxError):
        return text


def hardware(trace):
    """Each hardware question the target asked, with its first answer."""
    out = {}
    for event in trace.get("events", []):
        if event.get("kind") == "hw":
            out.setdefault(event["query"], event["result"])
    return out
