"""``flagtrace explain -- COMMAND...``: every field of the command's config, with its verdict
(overridden, decided, honoured, default) and where its value came from."""
from . import options
from .base import prepare
from .tracing import explained, report

HELP = "report every field: overridden, decided, honoured, default"


def add_arguments(p):
    options.common(p, "explain")
    p.add_argument("--fix", action="store_true", help="add the best verified fix to the error and to each "
                   "overridden field (flagtrace fix; resolves the command again per candidate)")


def run(req):
    prepare(req)
    return report(req, explained(req))
