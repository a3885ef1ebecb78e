"""``flagtrace diff [sides] -- COMMAND...``: the same command resolved under different conditions,
field by field.

Sides: ``--gpu A --gpu B`` (hardware), or the command as typed against the command with
``--set "--flag value"`` / ``--unset --flag`` / ``--env K=V`` applied. One import of the framework
per (interpreter, GPU profile), one fork per side (launch/variants.py); each side is analysed as
``explain`` would, then compared (analysis/compare.py).
"""
import shlex

from . import whatif
from .analysis.compare import compare
from .exitcodes import ExitCode, FlagtraceError
from .launch.variants import Variant
from .report import jsonreport
from .report.paths import short_path


def add_arguments(p):
    p.add_argument("--gpu", action="append", default=[], metavar="NAME[xCOUNT]",
                   help="a side per GPU profile (repeat: --gpu H100x8 --gpu B200x7); once: every side's GPU")
    p.add_argument("--set", action="append", default=[], metavar='"--FLAG [VALUE]"',
                   help="the other side: the command with this option set (replacing it if typed)")
    p.add_argument("--unset", action="append", default=[], metavar="--FLAG",
                   help="the other side: the command without this option (back to its default)")
    p.add_argument("--env", action="append", default=[], metavar="KEY=VALUE",
                   help="the other side: the command with this environment variable (KEY= removes it)")
    whatif.add_arguments(p, "side", ("terminal", "json"))


def join_values(head):
    """``--set --flag`` (``--unset``, ``--flags``) as ``--set=--flag``: argparse would read the
    option value as an option of its own."""
    out, i = [], 0
    while i < len(head):
        if head[i] in ("--set", "--unset", "--flags") and i + 1 < len(head):
            out.append("%s=%s" % (head[i], head[i + 1]))
            i += 2
            continue
        out.append(head[i])
        i += 1
    return out


def run_diff(opts, command, out, err):
    edits = whatif.edits(opts.set, opts.unset, opts.env)
    if len(opts.gpu) > 1 and edits:
        raise FlagtraceError("compare one thing at a time: several --gpu, or --set/--unset/--env, not both",
                             ExitCode.USAGE)
    if len(opts.gpu) < 2 and not edits:
        raise FlagtraceError("nothing to compare: give two --gpu, or --set/--unset/--env for the other side",
                             ExitCode.USAGE)
    plan = whatif.plan(command, opts, "diff --gpu H100x8 --gpu B200x7")
    args = list(plan.target.args)
    if len(opts.gpu) > 1:
        groups = [(gpu, [Variant(args, label="--gpu %s" % gpu)]) for gpu in opts.gpu]
    else:
        other, changes, label = whatif.apply(args, edits)
        groups = [(opts.gpu[0] if opts.gpu else None, [Variant(args, label="as typed"), Variant(other, changes, label=label)])]
    resolved = whatif.resolve(plan, groups, opts.timeout, err, "sides")
    results = [r for r, _ in resolved]
    analyses = [a for _, a in resolved]
    doc = compare([r.variant.label for r in results], analyses, whatif.environments(results, plan.env),
                  [whatif.hardware(r.trace) for r in results])
    doc["command"] = list(command)
    with whatif.sink(opts, out) as stream:
        if opts.format == "json":
            jsonreport.write(doc, stream)
        else:
            render(doc, analyses, stream)
    return ExitCode.OK


# -- terminal -----------------------------------------------------------------------------------
def render(doc, analyses, sink):
    w = sink.write
    sides = doc["sides"]
    w("flagtrace diff  %s\n" % " ".join(shlex.quote(a) for a in doc["command"]))
    for i, label in enumerate(sides):
        status = doc["statuses"][i]
        error = doc["errors"][i]
        w("  side %d  %s  (%s%s)\n" % (i + 1, label, status, ": " + error if error else ""))
    diffs = doc["differences"]
    w("\n%d of %d fields differ\n" % (len(diffs), doc["fields_compared"]))
    for d in diffs:
        w("\n%s\n" % d["field"])
        for i, label in enumerate(sides):
            decider = d["deciders"][i]
            where = ("  %s  %s:%s" % (decider["func"], short_path(decider["file"], analyses[i]), decider["line"])
                     if decider else "")
            w("  %d  %-24s %-10s%s\n" % (i + 1, whatif.cut(d["values"][i], 40), d["verdicts"][i] or "-", where))
        w("  cause: %s\n" % whatif.cut(d["cause"]["text"], 300))
        for read in d["cause"].get("reads", []):
            w("         %s = %s\n" % (read["field"], " vs ".join(read["values"])))


