"""``flagtrace matrix --gpu A --gpu B --flags "..." --flags "..." -- COMMAND...``: one resolution per
(GPU, flag set), a table of chosen fields, or of every field that differs between the cells.

One import of the framework per GPU profile, one fork per flag set (engine/whatif/); terminal, JSON, CSV.
"""
import difflib

from ..engine import whatif
from . import options
from ..analysis.compare import error_line, ordered_keys
from ..core.exitcodes import ExitCode, FlagtraceError
from ..launch.variants import Variant
from .. import report as reporters
from .base import prepare

SCHEMA = "flagtrace/matrix@1"
HELP = "GPUs x flag sets: a table of chosen fields, or of every field that differs"


def add_arguments(p):
    p.add_argument("--gpu", action="append", default=[], metavar="NAME[xCOUNT]",
                   help="a row group per GPU profile (repeat); none: the real hardware")
    p.add_argument("--flags", action="append", default=[], metavar='"--FLAG VALUE ..."',
                   help="a row per flag set, each option replacing the one typed (repeat; \"\": as typed)")
    options.python_option(p, "rows")
    p.add_argument("--fields", default=None, metavar="A,B,...",
                   help="the columns (default: every field that differs between the cells)")
    options.whatif(p, "cell", "matrix")


preparse = options.join_values  # --flags "--page-size 64": one value


def run(req):
    prepare(req)
    return run_matrix(req.opts, req.asked, req.command, req.out, req.err)


def run_matrix(opts, asked, command, out, err):
    example = 'matrix --gpu H100x8 --gpu B200x7 --flags "--page-size 64"'
    plans = ([(python, whatif.plan(whatif.side_command(command, python), asked, example)) for python in opts.python]
             or [(None, whatif.plan(command, asked, example))])
    whatif.one_framework([p for _, p in plans])
    flag_sets = opts.flags or [""]
    rows = []  # (python, gpu, flag set) per cell
    groups = []
    for python, plan in plans:
        for gpu in opts.gpu or [None]:
            variants = []
            for flags in flag_sets:
                changes = whatif.edits([flags] if flags.strip() else [])
                args, _, _ = whatif.apply(list(plan.target.args), changes)
                variants.append(Variant(args, label=" ".join(filter(None, (python, gpu or "this machine",
                                                                          flags or "(as typed)")))))
                rows.append((python, gpu, flags))
            groups.append((plan, gpu, variants))
    notes = {}
    resolved = whatif.resolve(groups, opts.timeout, err, "cells", whatif.translating(notes) if opts.python else None)
    aliases = plans[0][1].adapter.field_aliases() if opts.python else {}
    analyses = [a for _, a in resolved]
    tables = [{aliases.get(f["field"], f["field"]): f for f in a.get("fields", [])} for a in analyses]
    fields = _columns(opts.fields, tables)
    doc = {"schema": SCHEMA, "command": list(command), "fields": fields, "cells": [
        {"python": python, "gpu": gpu, "flags": flags, "status": a.get("status"),
         "error": error_line(a.get("error")), "alone": r.why if r.status == "alone" else None,
         "translated": notes.get(r.variant.label, []),
         "values": {name: _cell(t.get(name)) for name in fields}}
        for (python, gpu, flags), (r, a), t in zip(rows, resolved, tables)]}
    with reporters.output(opts.output, out) as stream:
        reporters.render(opts.format, doc, stream, {"verb": "matrix"})
    return ExitCode.OK


def _columns(wanted, tables):
    names = ordered_keys(tables)
    if wanted:
        chosen = [w.strip() for w in wanted.split(",") if w.strip()]
        for name in chosen:
            if name not in names:
                close = difflib.get_close_matches(name, names, n=5, cutoff=0.5)
                raise FlagtraceError("%s is not a field of this command's config; closest: %s"
                                     % (name, ", ".join(close) or "(none)"), ExitCode.USAGE)
        return chosen
    return [n for n in names if len({_final(t.get(n)) for t in tables}) > 1]


def _final(report):
    return report["final"]["repr"] if report else None


def _cell(report):
    if report is None:
        return None
    return {"value": report["final"]["repr"], "verdict": report["verdict"]}
