"""One policy, for explain, check, run and the what-if verbs: which traces flagtrace refuses to
explain (and why, in one line), and the exit code of an analysis."""
from ..exitcodes import ExitCode

REFUSED = ("no_target", "no_framework", "unsupported")


def refusal(trace):
    """Why this trace cannot be explained (the probe found no target, no framework, an unsupported
    release, a --watch/--stop-at naming nothing): one line, or None."""
    outcome = trace.get("outcome") or {}
    if outcome.get("status") in REFUSED:
        return outcome.get("message", "target not found")
    for problem in trace.get("problems", []):
        if problem["kind"] == "spec":
            return problem["message"]
    return None


def died_early(trace):
    """How the target ended before resolution started (no config object, no parse error), or None."""
    outcome = trace.get("outcome") or {}
    status = outcome.get("status")
    if trace.get("objects") or status not in ("exited", "raised") or any(
            p.get("error") for p in trace.get("parses", [])):
        return None
    if status == "raised":
        return "raised %s: %s" % (outcome["exception"]["type"], outcome["exception"]["message"])
    return "exited with status %s" % outcome.get("exit_code")


def exit_code(analysis, strict=False, failed_expectations=0):
    """2 when the target's resolution raised; 1 when an expectation failed, or (strict) an explicit
    request was overridden; else 0."""
    if analysis["status"] == "error":
        return ExitCode.TARGET_RAISED
    if failed_expectations or (strict and analysis["summary"]["overridden"]):
        return ExitCode.OVERRIDDEN
    return ExitCode.OK
