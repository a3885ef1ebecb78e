"""``flagtrace matrix --gpu A --gpu B --flags "..." --flags "..." -- COMMAND...``: one resolution per
(GPU, flag set), a table of chosen fields, or of every field that differs between the cells.

One import of the framework per GPU profile, one fork per flag set (whatif.py); terminal, JSON, CSV.
"""
import csv
import difflib

from . import whatif
from .analysis.compare import error_line, ordered_keys
from .exitcodes import ExitCode, FlagtraceError
from .launch.variants import Variant
from .report import jsonreport

SCHEMA = "flagtrace/matrix@1"


def add_arguments(p):
    p.add_argument("--gpu", action="append", default=[], metavar="NAME[xCOUNT]",
                   help="a row group per GPU profile (repeat); none: the real hardware")
    p.add_argument("--flags", action="append", default=[], metavar='"--FLAG VALUE ..."',
                   help="a row per flag set, each option replacing the one typed (repeat; \"\": as typed)")
    p.add_argument("--python", action="append", default=[], metavar="PATH",
                   help="a row group per interpreter (a release or an environment; repeat); options renamed "
                        "between releases are translated")
    p.add_argument("--fields", default=None, metavar="A,B,...",
                   help="the columns (default: every field that differs between the cells)")
    whatif.add_arguments(p, "cell", ("terminal", "json", "csv", "markdown"))


def run_matrix(opts, command, out, err):
    example = 'matrix --gpu H100x8 --gpu B200x7 --flags "--page-size 64"'
    plans = ([(python, whatif.plan(whatif.side_command(command, python), opts, example)) for python in opts.python]
             or [(None, whatif.plan(command, opts, example))])
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
    with whatif.sink(opts, out) as stream:
        if opts.format == "json":
            jsonreport.write(doc, stream)
        elif opts.format == "csv":
            write_csv(doc, stream)
        elif opts.format == "markdown":
            render_markdown(doc, stream)
        else:
            render(doc, stream)
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


def write_csv(doc, stream):
    writer = csv.writer(stream)
    writer.writerow(["python", "gpu", "flags", "status"] + doc["fields"])
    for cell in doc["cells"]:
        writer.writerow([cell["python"] or "", cell["gpu"] or "", cell["flags"], cell["status"]]
                        + [(cell["values"][f] or {}).get("value", "") for f in doc["fields"]])


def render(doc, stream):
    fields = doc["fields"]
    pythons = any(c["python"] for c in doc["cells"])
    head = (["python"] if pythons else []) + ["gpu", "flags"] + fields
    rows = []
    for cell in doc["cells"]:
        values = []
        for name in fields:
            v = cell["values"][name]
            values.append("-" if v is None else whatif.cut(v["value"], 28) + ("*" if v["verdict"] == "overridden" else ""))
        if cell["error"]:
            values = [cell["error"]] + [""] * (len(fields) - 1) if fields else [cell["error"]]
        rows.append(([cell["python"]] if pythons else []) + [cell["gpu"] or "(this machine)",
                                                             cell["flags"] or "(as typed)"] + values)
    widths = [max(len(str(r[i])) for r in [head] + rows) for i in range(len(head))]
    stream.write("flagtrace matrix  %s\n\n" % " ".join(doc["command"]))
    for row in [head] + rows:
        stream.write("  ".join(str(v).ljust(w) for v, w in zip(row, widths)).rstrip() + "\n")
    if not fields:
        stream.write("\nno field differs between the cells\n")
    for note in sorted({n for c in doc["cells"] for n in c.get("translated", [])}):
        stream.write("\ntranslated: %s\n" % note)
    alone = [c for c in doc["cells"] if c.get("alone")]
    if alone:
        stream.write("\n%d cells were resolved in processes of their own: %s\n" % (len(alone), alone[0]["alone"]))
    if any((v or {}).get("verdict") == "overridden" for c in doc["cells"] for v in c["values"].values()):
        stream.write("\n* overridden: the command line asked for another value\n")



def render_markdown(doc, stream):
    from .report.markdown import code, plain

    fields = doc["fields"]
    pythons = any(c["python"] for c in doc["cells"])
    head = (["python"] if pythons else []) + ["gpu", "flags"] + fields
    stream.write("### flagtrace matrix: %d cells\n\n```sh\n%s\n```\n\n" % (len(doc["cells"]), " ".join(doc["command"])))
    stream.write("| %s |\n|%s\n" % (" | ".join(head), "---|" * len(head)))
    for cell in doc["cells"]:
        values = [plain(cell["error"])] + [""] * (len(fields) - 1) if cell["error"] and fields else [
            "-" if cell["values"][n] is None else code(cell["values"][n]["value"], 40)
            + ("\\*" if cell["values"][n]["verdict"] == "overridden" else "") for n in fields]
        row = ([code(cell["python"])] if pythons else []) + [cell["gpu"] or "(this machine)",
                                                            code(cell["flags"]) if cell["flags"] else "(as typed)"]
        stream.write("| %s |\n" % " | ".join(row + values))
    if any((v or {}).get("verdict") == "overridden" for c in doc["cells"] for v in c["values"].values()):
        stream.write("\n\\* overridden: the command line asked for another value\n")
