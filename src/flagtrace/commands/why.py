"""``flagtrace why FIELD -- COMMAND...``: the full history of one field."""
import difflib

from ..analysis.explain import field_history
from ..core.exitcodes import ExitCode, FlagtraceError
from . import options
from .base import prepare
from .tracing import explained, report

HELP = "the full history of one field"


def add_arguments(p):
    p.add_argument("field")
    options.common(p, "why")


def run(req):
    prepare(req)
    field = req.opts.field

    def document(analysis):
        history = field_history(analysis, field)
        if history is None:
            raise FlagtraceError("%s is not a field of %s; fields: %s" % (
                field, analysis.get("object"), _closest(field, analysis)), ExitCode.USAGE)
        return dict(analysis, field=history), 0

    return report(req, explained(req), document)


def _closest(field, analysis):
    names = [f["field"] for f in analysis["fields"]]
    close = difflib.get_close_matches(field, names, n=5, cutoff=0.5)
    return ", ".join(close) if close else "(%d fields; see flagtrace explain)" % len(names)
