"""``flagtrace diff [sides] -- COMMAND...``: the same command resolved under different conditions,
field by field.

Sides: ``--gpu A --gpu B`` (hardware), or the command as typed against the command with
``--set "--flag value"`` / ``--unset --flag`` / ``--env K=V`` applied. One import of the framework
per (interpreter, GPU profile), one fork per side (launch/variants.py); each side is analysed as
``explain`` would, then compared (analysis/compare.py).
"""
import concurrent.futures
import os
import shlex

from . import whatif
from .analysis.compare import compare
from .exitcodes import ExitCode, FlagtraceError
from .launch import remote
from .launch.variants import Variant, VariantResult
from .adapters import choose_adapter
from .report import jsonreport
from .report.paths import short_path


def add_arguments(p):
    p.add_argument("--gpu", action="append", default=[], metavar="NAME[xCOUNT]",
                   help="a side per GPU profile (repeat: --gpu H100x8 --gpu B200x7); once: every side's GPU")
    p.add_argument("--python", action="append", default=[], metavar="PATH",
                   help="a side per interpreter (a release or an environment; repeat): the command run by each; "
                        "options renamed between releases are translated")
    p.add_argument("--via", metavar="PREFIX",
                   help="side 1: the command on another host through this prefix (its real hardware); side 2: "
                        "the same command here (with --gpu: simulated) - does the simulation agree?")
    p.add_argument("--set", action="append", default=[], metavar='"--FLAG [VALUE]"',
                   help="the other side: the command with this option set (replacing it if typed)")
    p.add_argument("--unset", action="append", default=[], metavar="--FLAG",
                   help="the other side: the command without this option (back to its default)")
    p.add_argument("--env", action="append", default=[], metavar="KEY=VALUE",
                   help="the other side: the command with this environment variable (KEY= removes it)")
    whatif.add_arguments(p, "side", ("terminal", "json", "markdown"))


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
    kinds = [k for k, given in (("several --gpu", len(opts.gpu) > 1), ("--python", opts.python),
                                ("--via", opts.via), ("--set/--unset/--env", edits)) if given]
    if len(kinds) > 1:
        raise FlagtraceError("compare one thing at a time: %s, not both" % " or ".join(kinds), ExitCode.USAGE)
    if not kinds or (opts.python and len(opts.python) < 2):
        raise FlagtraceError("nothing to compare: give two --gpu, two --python, or --set/--unset/--env for "
                             "the other side", ExitCode.USAGE)
    gpu = opts.gpu[0] if len(opts.gpu) == 1 else None
    notes = {}
    local = 1 if opts.via else 0  # the first side resolved here (whatif.plan clears opts.via)
    if opts.via:
        remote_side = _via_side(command, opts)
        plan = whatif.plan(command, opts, "diff --via 'ssh gpu-box' --gpu H100x8")
        groups = [(plan, gpu, [Variant(list(plan.target.args), label="here" + (" (--gpu %s)" % gpu if gpu else ""))])]
        with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
            there = pool.submit(remote_side)
            here = whatif.resolve(_with_twin(groups), opts.timeout, err, "sides")
            resolved = [there.result()] + here
        aliases = {}
    elif opts.python:
        groups = []
        for python in opts.python:
            plan = whatif.plan(whatif.side_command(command, python), opts, "diff --python A --python B")
            groups.append((plan, gpu, [Variant(list(plan.target.args), label="--python %s" % python)]))
        whatif.one_framework([g[0] for g in groups])

        resolved = whatif.resolve(_with_twin(groups), opts.timeout, err, "sides", whatif.translating(notes))
        aliases = groups[0][0].adapter.field_aliases()
    else:
        plan = whatif.plan(command, opts, "diff --gpu H100x8 --gpu B200x7")
        args = list(plan.target.args)
        if len(opts.gpu) > 1:
            groups = [(plan, g, [Variant(args, label="--gpu %s" % g)]) for g in opts.gpu]
        else:
            other, changes, label = whatif.apply(args, edits)
            groups = [(plan, gpu, [Variant(args, label="as typed"), Variant(other, changes, label=label)])]
        resolved = whatif.resolve(_with_twin(groups), opts.timeout, err, "sides")
        aliases = {}
    (_, twin), resolved = resolved[-1], resolved[:-1]
    results = [r for r, _ in resolved]
    analyses = [a for _, a in resolved]
    envs = whatif.environments(results, groups[0][0].env)
    unstable = set(random_fields(analyses[local], twin))
    doc = compare([r.variant.label for r in results], analyses, envs,
                  [whatif.hardware(r.trace) for r in results], aliases, unstable)
    doc["command"] = list(command)
    doc["translated"] = [notes.get(r.variant.label, []) for r in results]
    doc["alone"] = [r.why if r.status == "alone" else None for r in results]
    doc["releases"] = [_release(a) for a in analyses]
    with whatif.sink(opts, out) as stream:
        if opts.format == "json":
            jsonreport.write(doc, stream)
        elif opts.format == "markdown":
            render_markdown(doc, analyses, stream)
        else:
            render(doc, analyses, stream)
    return ExitCode.OK


def _with_twin(groups):
    """``groups`` and, last, the first side once more: a field that differs between two
    resolutions of the same command is random (a seed, an id), not a difference between sides."""
    plan, gpu, variants = groups[0]
    first = variants[0]
    return list(groups) + [(plan, gpu, [Variant(first.args, first.env, label=first.label + " (again)")])]


def random_fields(analysis, again):
    """The fields whose final values differ between two resolutions of the same command."""
    if analysis is None or again is None:
        return []
    finals = {f["field"]: f["final"]["repr"] for f in analysis.get("fields", [])}
    return [f["field"] for f in again.get("fields", []) if f["field"] in finals and finals[f["field"]] != f["final"]["repr"]]


def _via_side(command, opts):
    """A function resolving the command on the host behind ``--via`` (as explain --via does):
    (VariantResult, analysis). Usage errors are raised here, before anything starts."""
    prefix = remote.split_via(opts.via)
    if not command:
        raise FlagtraceError("nothing to run: put the launch command after --", ExitCode.USAGE)
    target = remote.parse_remote_command(command)
    adapter = choose_adapter(target, opts)
    request = adapter.request(target, opts)  # opts.via is set: the model path is checked over there
    label, via, timeout = "via %s" % remote.describe(prefix), opts.via, opts.timeout

    def resolve():
        result = remote.run_remote(target, request, timeout, via, stdin_fd=None)
        side = VariantResult(Variant(list(target.args), label=label), "ran", result.returncode, result.seconds,
                             result.trace, result.stdout + result.stderr)
        return side, whatif.analysis(side)

    return resolve


def _release(analysis):
    adapter = analysis.get("adapter") or {}
    return "%s %s" % (adapter.get("name"), adapter.get("version")) if adapter.get("version") else None


# -- terminal -----------------------------------------------------------------------------------
def render(doc, analyses, sink):
    w = sink.write
    sides = doc["sides"]
    w("flagtrace diff  %s\n" % " ".join(shlex.quote(a) for a in doc["command"]))
    for i, label in enumerate(sides):
        status = doc["statuses"][i]
        error = doc["errors"][i]
        release = doc["releases"][i]
        w("  side %d  %s%s  (%s%s)\n" % (i + 1, label, "  [%s]" % release if release else "",
                                         status, ": " + error if error else ""))
        for note in doc["translated"][i]:
            w("          translated: %s\n" % note)
        if doc["alone"][i]:
            w("          resolved in a process of its own: %s\n" % doc["alone"][i])
    diffs = doc["differences"]
    w("\n%d of %d fields differ\n" % (len(diffs), doc["fields_compared"]))
    # a field one side lacks and the other leaves at its default, a random one: listed, not detailed
    quiet = [d for d in diffs if d["cause"]["kind"] == "absent" and set(d["verdicts"]) <= {None, "default"}]
    random = [d for d in diffs if d["cause"]["kind"] == "random"]
    quiet += random
    for d in diffs:
        if d in quiet:
            continue
        w("\n%s%s\n" % (d["field"], "  (named %s)" % " / ".join(d["names"]) if d.get("names") else ""))
        for i, label in enumerate(sides):
            decider = d["deciders"][i]
            where = ("  %s  %s:%s" % (decider["func"], short_path(decider["file"], analyses[i]), decider["line"])
                     if decider else "")
            w("  %d  %-24s %-10s%s\n" % (i + 1, whatif.cut(d["values"][i], 40), d["verdicts"][i] or "-", where))
        w("  cause: %s\n" % whatif.cut(d["cause"]["text"], 300))
        for read in d["cause"].get("reads", []):
            w("         %s = %s\n" % (read["field"], " vs ".join(read["values"])))
    if random:
        w("\nrandom (they differ between two resolutions of the same command): %s\n"
          % ", ".join(d["field"] for d in random))
    for i, label in enumerate(sides):
        only = [d["field"] for d in quiet if d not in random and d["values"][i] != "(no such field)" and
                all(v == "(no such field)" for j, v in enumerate(d["values"]) if j != i)]
        if only:
            w("\nonly side %d has (at their defaults): %s\n" % (i + 1, whatif.cut(", ".join(only), 1200)))




# -- markdown -----------------------------------------------------------------------------------
def render_markdown(doc, analyses, sink):
    from .report.markdown import code, plain, where

    w = lambda text="": sink.write(text + "\n")  # noqa: E731
    sides = doc["sides"]
    shown = [d for d in doc["differences"] if d["cause"]["kind"] not in ("absent", "random")]
    w("### flagtrace diff: %d of %d fields differ" % (len(doc["differences"]), doc["fields_compared"]))
    w()
    w("```sh\n%s\n```" % " ".join(shlex.quote(a) for a in doc["command"]))
    w()
    for i, label in enumerate(sides):
        error = doc["errors"][i]
        w("- side %d: %s%s: %s%s" % (i + 1, code(label), " (%s)" % doc["releases"][i] if doc["releases"][i] else "",
                                      doc["statuses"][i], " — %s" % plain(error) if error else ""))
        for note in doc["translated"][i]:
            w("  - translated: %s" % plain(note))
    w()
    if shown:
        w("| field | %s | cause |" % " | ".join("side %d" % (i + 1) for i in range(len(sides))))
        w("|---|%s---|" % ("---|" * len(sides)))
        for d in shown:
            cells = []
            for i, value in enumerate(d["values"]):
                decider = d["deciders"][i]
                at = " %s" % where(analyses[i], decider["file"], decider["line"]) if decider else ""
                cells.append("%s %s%s" % (code(value, 40), d["verdicts"][i] or "", at))
            w("| %s | %s | %s |" % (code(d["field"]), " | ".join(cells), plain(whatif.cut(d["cause"]["text"], 200))))
    rest = [d["field"] for d in doc["differences"] if d not in shown]
    if rest:
        w()
        w("<details><summary>%d more: random, or a field one side lacks</summary>" % len(rest))
        w()
        w(plain(", ".join(rest)))
        w()
        w("</details>")
