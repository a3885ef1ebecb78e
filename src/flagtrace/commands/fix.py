"""``flagtrace fix [--want FIELD=VALUE] -- COMMAND...``: the smallest change to the command that
makes it resolve, or makes an overridden request (or a wanted value) stick, each verified by a
real re-resolution (the search: engine/whatif/fixsearch.py).
"""
from ..engine import whatif
from . import options
from ..core.exitcodes import ExitCode
from ..engine.whatif.fixsearch import check_want_syntax, find
from .. import report as reporters
from .base import prepare

HELP = ("the smallest change that makes the command resolve, or a request stick, verified by "
        "re-resolution")


def add_arguments(p):
    p.add_argument("--want", action="append", default=[], metavar="FIELD=VALUE",
                   help="a value you want the field to end with (repeatable); default: make the command "
                        "resolve, and every overridden request stick")
    p.add_argument("--gpu", metavar="NAME[xCOUNT]", help="simulate this hardware, e.g. B200x7")
    p.add_argument("--max-candidates", type=int, default=60, metavar="N",
                   help="try at most N candidate changes per round (default %(default)s)")
    options.whatif(p, "candidate", "fix")


preparse = options.join_values


def run(req):
    prepare(req)
    return run_fix(req.opts, req.asked, req.command, req.out, req.err)


def run_fix(opts, asked, command, out, err):
    check_want_syntax(opts.want)
    plan = whatif.plan(command, asked, "fix --gpu B200x7")
    doc = find(plan, opts.gpu, opts.want, opts.timeout, opts.max_candidates, err)
    with reporters.output(opts.output, out) as stream:
        reporters.render(opts.format, doc, stream, {"verb": "fix"})
    if any(not p["fixes"] for p in doc["problems"]):
        return ExitCode.OVERRIDDEN
    return ExitCode.OK
