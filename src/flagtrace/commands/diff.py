"""``flagtrace diff [sides] -- COMMAND...``: the same command resolved under different conditions,
field by field.

Sides: ``--gpu A --gpu B`` (hardware), or the command as typed against the command with
``--set "--flag value"`` / ``--unset --flag`` / ``--env K=V`` applied. One import of the framework
per (interpreter, GPU profile), one fork per side (launch/variants.py); each side is analysed as
``explain`` would, then compared (analysis/compare.py).
"""
import concurrent.futures

from ..engine import resolve, whatif
from . import options
from ..analysis.compare import compare, unstable_fields
from ..core.exitcodes import ExitCode, FlagtraceError
from ..launch import remote, via
from ..launch.variants import Variant, VariantResult
from .. import report as reporters
from ..report.paths import source_context
from .base import prepare

HELP = ("the same command on two GPUs, or with a flag or variable changed: the fields that differ "
        "and why")


def add_arguments(p):
    p.add_argument("--gpu", action="append", default=[], metavar="NAME[xCOUNT]",
                   help="a side per GPU profile (repeat: --gpu H100x8 --gpu B200x7); once: every side's GPU")
    options.python_option(p, "sides")
    p.add_argument("--via", metavar="PREFIX",
                   help="side 1: the command on another host through this prefix (its real hardware); side 2: "
                        "the same command here (with --gpu: simulated) - does the simulation agree?")
    p.add_argument("--set", action="append", default=[], metavar='"--FLAG [VALUE]"',
                   help="the other side: the command with this option set (replacing it if typed)")
    p.add_argument("--unset", action="append", default=[], metavar="--FLAG",
                   help="the other side: the command without this option (back to its default)")
    p.add_argument("--env", action="append", default=[], metavar="KEY=VALUE",
                   help="the other side: the command with this environment variable (KEY= removes it)")
    options.whatif(p, "side", "diff")


preparse = options.join_values  # --set --flag: the option's value is no option of its own


def run(req):
    prepare(req)
    return run_diff(req.opts, req.asked, req.command, req.out, req.err)


def run_diff(opts, asked, command, out, err):
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
    local = 1 if opts.via else 0  # the first side resolved here (whatif.plan resolves here)
    if opts.via:
        remote_side = _via_side(command, opts, asked)
        plan = whatif.plan(command, asked, "diff --via 'ssh gpu-box' --gpu H100x8")
        groups = [(plan, gpu, [Variant(list(plan.target.args), label="here" + (" (--gpu %s)" % gpu if gpu else ""))])]
        with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
            there = pool.submit(remote_side)
            here = whatif.resolve(_with_twin(groups), opts.timeout, err, "sides")
            resolved = [there.result()] + here
        aliases = {}
    elif opts.python:
        groups = []
        for python in opts.python:
            plan = whatif.plan(whatif.side_command(command, python), asked, "diff --python A --python B")
            groups.append((plan, gpu, [Variant(list(plan.target.args), label="--python %s" % python)]))
        whatif.one_framework([g[0] for g in groups])

        resolved = whatif.resolve(_with_twin(groups), opts.timeout, err, "sides", whatif.translating(notes))
        aliases = groups[0][0].adapter.field_aliases()
    else:
        plan = whatif.plan(command, asked, "diff --gpu H100x8 --gpu B200x7")
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
    unstable = set(unstable_fields(analyses[local], twin))
    doc = compare([r.variant.label for r in results], analyses, envs,
                  [whatif.hardware(r.trace) for r in results], aliases, unstable)
    doc["command"] = list(command)
    doc["translated"] = [notes.get(r.variant.label, []) for r in results]
    doc["alone"] = [r.why if r.status == "alone" else None for r in results]
    doc["releases"] = [_release(a) for a in analyses]
    doc["sources"] = [source_context(a) for a in analyses]
    with reporters.output(opts.output, out) as stream:
        reporters.render(opts.format, doc, stream, {"verb": "diff"})
    return ExitCode.OK


def _with_twin(groups):
    """``groups`` and, last, the first side once more: a field that differs between two
    resolutions of the same command is random (a seed, an id), not a difference between sides."""
    plan, gpu, variants = groups[0]
    first = variants[0]
    return list(groups) + [(plan, gpu, [Variant(first.args, first.env, label=first.label + " (again)")])]


def _via_side(command, opts, asked):
    """A function resolving the command on the host behind ``--via`` (as explain --via does):
    (VariantResult, analysis). Usage errors are raised here, before anything starts."""
    prefix = via.split_via(opts.via)
    if not command:
        raise FlagtraceError("nothing to run: put the launch command after --", ExitCode.USAGE)
    ready = resolve.prepare(command, asked)  # asked.via is set: the model path is checked there
    target, request = ready.target, ready.request.to_json()
    label, where, timeout = "via %s" % via.describe(prefix), opts.via, opts.timeout

    def resolve_there():
        result = remote.run_remote(target, request, timeout, where, stdin_fd=None)
        side = VariantResult(Variant(list(target.args), label=label), "ran", result.returncode, result.seconds,
                             result.trace, result.stdout + result.stderr)
        return side, whatif.analysis(side)

    return resolve_there


def _release(analysis):
    adapter = analysis.get("adapter") or {}
    return "%s %s" % (adapter.get("name"), adapter.get("version")) if adapter.get("version") else None
