"""Text helpers every reporter shares."""
from .paths import short_path


def cut(text, width):
    """``text`` on one line, at most ``width`` characters (a table cell, a cause)."""
    text = " ".join(str(text).split())
    return text if len(text) <= width else text[:width - 3] + "..."


def error_summary(error, analysis):
    """The target's error in one line, as flagtrace says it when the report is elsewhere (and a gate's row)."""
    if error.get("kind") == "argparse":
        hints = ["%s: did you mean %s?" % (flag, " or ".join(close))
                 for flag, close in sorted((error.get("suggestions") or {}).items()) if close]
        return "the target's argument parser refused the command line: %s%s" % (
            error["message"], ("; " + "; ".join(hints)) if hints else "")
    site = error.get("site") or {}
    where = " in %s (%s:%s)" % (site.get("func"), short_path(site.get("file"), analysis),
                                site.get("line")) if site else ""
    message = " ".join(str(error.get("message", "")).split())
    raised = "the target raised %s%s: %s" % (error.get("type"), where, message[:300])
    if error.get("simulation_gap"):
        return "a simulation gap, not the target's own error: %s; %s" % (error["simulation_gap"], raised)
    return raised
