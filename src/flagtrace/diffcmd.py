"""``flagtrace diff [sides] -- COMMAND...``: the same command resolved under different conditions,
field by field.

Sides: ``--gpu A --gpu B`` (hardware), or the command as typed against the command with
``--set "--flag value"`` / ``--unset --flag`` / ``--env K=V`` applied. One import of the framework
per (interpreter, GPU profile), one fork per side (launch/variants.py); each side is analysed as
``explain`` would, then compared (analysis/compare.py).
"""
import os
import shlex

from . import gpus
from . import trace as tracefile
from .adapters import annotate, choose_adapter
from .analysis.compare import compare
from .analysis.explain import analyse
from .exitcodes import ExitCode, FlagtraceError
from .launch.command import parse_command
from .launch.local import stderr_tail
from .launch.variants import Variant, run_variants
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
    p.add_argument("--watch", action="append", default=[], metavar="MODULE:CLASS")
    p.add_argument("--stop-at", action="append", default=[], metavar="MODULE:FUNCTION")
    p.add_argument("--adapter", default="auto", metavar="NAME")
    p.add_argument("--timeout", type=float, default=300.0, metavar="SECONDS",
                   help="per side: kill a side's resolution after this long (default %(default)s)")
    p.add_argument("--format", choices=("terminal", "json"), default="terminal")
    p.add_argument("-o", "--output", metavar="FILE", help="write the report to FILE instead of stdout")


def join_values(head):
    """``--set --flag`` and ``--unset --flag`` as ``--set=--flag``: argparse would read the option
    value as an option of its own."""
    out, i = [], 0
    while i < len(head):
        if head[i] in ("--set", "--unset") and i + 1 < len(head):
            out.append("%s=%s" % (head[i], head[i + 1]))
            i += 2
            continue
        out.append(head[i])
        i += 1
    return out


def run_diff(opts, command, out, err):
    if not command:
        raise FlagtraceError("nothing to compare: put the launch command after --, e.g. flagtrace diff "
                             "--gpu H100x8 --gpu B200x7 -- python -m sglang.launch_server --model-path DIR",
                             ExitCode.USAGE)
    edits = _edits(opts)
    if len(opts.gpu) > 1 and edits:
        raise FlagtraceError("compare one thing at a time: several --gpu, or --set/--unset/--env, not both",
                             ExitCode.USAGE)
    if len(opts.gpu) < 2 and not edits:
        raise FlagtraceError("nothing to compare: give two --gpu, or --set/--unset/--env for the other side",
                             ExitCode.USAGE)
    opts.via = None
    target = parse_command(command)
    adapter = choose_adapter(target, opts)
    request = adapter.request(target, opts)
    env = adapter.environment(target, opts)
    preimport = getattr(adapter, "preimport", ())
    if len(opts.gpu) > 1:
        groups = [(gpu, [Variant(list(target.args), label="--gpu %s" % gpu)]) for gpu in opts.gpu]
    else:
        args, changes, label = _apply(list(target.args), edits)
        groups = [(opts.gpu[0] if opts.gpu else None,
                   [Variant(list(target.args), label="as typed"), Variant(args, changes, label=label)])]
    results = []
    done = []
    for gpu, variants in groups:
        side_request = dict(request)
        if gpu is not None:
            side_request["gpu"] = gpus.choose(gpu)
            side_request["setup"] = ["sim.gpu"] + list(side_request.get("setup", []))

        def progress(count, total, before=len(done)):
            if err.isatty():
                err.write("\r  flagtrace diff: %d of %d sides resolved" % (before + count, _count(groups)))
                err.flush()

        results += run_variants(target, side_request, variants, opts.timeout, env=env, preimport=preimport,
                                on_progress=progress)
        done += variants
    if err.isatty():
        err.write("\r\033[K")
    analyses = [_analysis(r) for r in results]
    doc = compare([r.variant.label for r in results], analyses, _environments(results, env),
                  [_hardware(r.trace) for r in results])
    doc["command"] = list(command)
    sink = open(opts.output, "w", encoding="utf-8") if opts.output else out
    try:
        if opts.format == "json":
            jsonreport.write(doc, sink)
        else:
            render(doc, analyses, sink)
    finally:
        if opts.output:
            sink.close()
    return ExitCode.OK


def _environments(results, env):
    """Per side, the launch value of every variable some side changed (None: unset)."""
    launch = os.environ if env is None else env
    keys = {k for r in results for k in r.variant.env}
    return [{k: r.variant.env[k] if k in r.variant.env else launch.get(k) for k in keys} for r in results]


def _hardware(trace):
    out = {}
    for event in trace.get("events", []):
        if event.get("kind") == "hw":
            out.setdefault(event["query"], event["result"])
    return out


def _count(groups):
    return sum(len(v) for _, v in groups)


def _analysis(result):
    if result.status == "timeout":
        raise FlagtraceError("side %r did not finish within %gs (--timeout); it and its children were killed"
                             % (result.variant.label, result.seconds))
    if result.trace is None:
        raise FlagtraceError("side %r ended before flagtrace could record anything (exit status %s)"
                             % (result.variant.label, result.returncode), detail=stderr_tail(result.output))
    trace = tracefile.check(result.trace)
    status = trace["outcome"].get("status")
    if status in ("no_target", "no_framework", "unsupported"):
        raise FlagtraceError(trace["outcome"].get("message", "target not found"))
    return annotate(analyse(trace))


# -- the other side's command line -----------------------------------------------------------
def _edits(opts):
    edits = []
    for text in opts.set:
        words = shlex.split(text)
        if not words or not words[0].startswith("-"):
            raise FlagtraceError("--set takes an option and its value, e.g. --set \"--page-size 64\"; got %r"
                                 % text, ExitCode.USAGE)
        edits.append(("set", words))
    for flag in opts.unset:
        if not flag.startswith("-"):
            raise FlagtraceError("--unset takes an option name, e.g. --unset --page-size; got %r" % flag,
                                 ExitCode.USAGE)
        edits.append(("unset", [flag]))
    for item in opts.env:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise FlagtraceError("--env takes KEY=VALUE (KEY= to remove it); got %r" % item, ExitCode.USAGE)
        edits.append(("env", [key, value]))
    return edits


def _apply(args, edits):
    """(args, env changes, label) of the other side."""
    env, label = {}, []
    for kind, words in edits:
        if kind == "env":
            key, value = words
            env[key] = value or None
            label.append("%s=%s" % (key, value) if value else "without $%s" % key)
            continue
        args = _without(args, words[0].split("=", 1)[0])
        if kind == "set":
            args = args + words
            label.append(" ".join(words))
        else:
            label.append("without %s" % words[0])
    return args, env, "with " + ", ".join(label) if label else "edited"


def _without(args, flag):
    """``args`` without ``flag`` (``--flag v``, ``--flag=v``, or a bare switch)."""
    out, skip = [], False
    for i, word in enumerate(args):
        if skip:
            skip = False
            continue
        if word == flag:
            nxt = args[i + 1] if i + 1 < len(args) else None
            skip = nxt is not None and not nxt.startswith("-")
            continue
        if word.startswith(flag + "="):
            continue
        out.append(word)
    return out


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
            w("  %d  %-24s %-10s%s\n" % (i + 1, _cut(d["values"][i]), d["verdicts"][i] or "-", where))
        w("  cause: %s\n" % _cut(d["cause"]["text"], 300))
        for read in d["cause"].get("reads", []):
            w("         %s = %s\n" % (read["field"], " vs ".join(read["values"])))



def _cut(text, width=40):
    text = " ".join(str(text).split())
    return text if len(text) <= width else text[:width - 3] + "..."
