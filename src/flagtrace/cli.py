"""Command line: parse options, build the request, run, analyse, report. No logic of its own."""
import argparse
import sys

from . import __version__
from . import gpus, modelconfigs
from . import trace as tracefile
from .adapters import annotate, choose_adapter
from .analysis.explain import analyse, field_history
from .analysis import verdict
from .analysis.expect import evaluate_expectations
from .analysis.prewarm import Prewarm
from .exitcodes import ExitCode, FlagtraceError
from .launch.local import stderr_tail
from .launch import remote, via
from .launch.asked import Asked
from .modelconfigs import add_model_options
from .envcmd import add_release_option, apply_releases
from .deploycmd import add_file_options
from .progress import Progress
from . import report as reporters
from .report.paths import short_path

DEFAULT_TIMEOUT = 300.0


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        verb = self.prog.split(None, 1)[1:]  # "flagtrace explain" -> explain; the top parser has none
        raise FlagtraceError("%s%s (see %s --help)" % ("".join(v + ": " for v in verb), message, self.prog),
                             ExitCode.USAGE)


def _common(p, verb):
    p.add_argument("--from", dest="from_trace", metavar="TRACE.json",
                   help="analyse a saved trace instead of running a command")
    p.add_argument("--save-trace", metavar="FILE", help="also write the raw trace to FILE")
    p.add_argument("--watch", action="append", default=[], metavar="MODULE:CLASS",
                   help="config class to watch (repeatable); adapters know their framework's")
    p.add_argument("--stop-at", action="append", default=[], metavar="MODULE:FUNCTION",
                   help="stop the target when it calls this (resolution is over); repeatable")
    p.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, metavar="SECONDS",
                   help="kill the target and its children after this long (default %(default)s)")
    p.add_argument("--format", choices=reporters.formats(verb), default="terminal")
    p.add_argument("-o", "--output", metavar="FILE", help="write the report to FILE instead of stdout")
    p.add_argument("--show-output", action="store_true", help="print the target's own stdout/stderr too")
    p.add_argument("--width", type=int, default=None, help="terminal report width (default: the terminal's)")
    p.add_argument("--no-color", action="store_true")
    p.add_argument("--details", action="store_true",
                   help="show conditions and causes for decided fields too (overridden ones always)")
    p.add_argument("--strict", action="store_true", help="exit 1 when an explicit request was overridden")
    p.add_argument("--adapter", default="auto", metavar="NAME",
                   help="auto (default: recognise SGLang), sglang, or generic (--watch/--stop-at only)")
    p.add_argument("--gpu", metavar="NAME[xCOUNT]",
                   help="simulate this hardware, e.g. B200x7 (see flagtrace gpus); default: the real one")
    p.add_argument("--gpu-profile", metavar="FILE.toml", help="a GPU profile of your own (same shape as "
                   "flagtrace gpus --toml prints)")
    via.add_options(p)  # --via PREFIX, --python PATH (run on another host)
    add_model_options(p)
    add_release_option(p)
    if verb != "run":
        add_file_options(p)


def build_parser():
    parser = _Parser(prog="flagtrace", description=(
        "Explain where every config value of a Python server launch came from. "
        "Put the launch command after --."))
    parser.add_argument("--version", action="version", version="flagtrace " + __version__)
    sub = parser.add_subparsers(dest="verb", metavar="VERB", parser_class=_Parser)
    parser.verbs = sub.choices
    p = sub.add_parser("explain", help="report every field: overridden, decided, honoured, default")
    _common(p, "explain")
    p.add_argument("--fix", action="store_true", help="add the best verified fix to the error and to each "
                   "overridden field (flagtrace fix; resolves the command again per candidate)")
    p = sub.add_parser("why", help="the full history of one field")
    p.add_argument("field")
    _common(p, "why")
    p = sub.add_parser("gpus", help="list the GPU profiles --gpu can simulate")
    p.add_argument("--toml", action="store_true", help="print the profiles as TOML (a template)")
    p = sub.add_parser("models", help="list the bundled model configs a hub id or foreign path finds")
    from .modelscmd import add_arguments as models_arguments

    models_arguments(p)
    p = sub.add_parser("check", help="exit 1 unless every --expect holds (and, with --strict, nothing "
                                      "explicit was overridden)")
    p.add_argument("--expect", action="append", default=[], metavar="FIELD=VALUE")
    p.add_argument("--lock", metavar="LOCK", help="with -f: fail (exit 1) on any field whose value drifted from "
                   "the lock file flagtrace lock wrote, and say what set the new value")
    _common(p, "check")
    p = sub.add_parser("lock", help="with -f: write each deployment command's resolved values (check --lock "
                                     "compares against them)")
    from .deploycmd import add_lock_arguments

    add_lock_arguments(p)
    p = sub.add_parser("diff", help="the same command on two GPUs, or with a flag or variable changed: "
                                     "the fields that differ and why")
    from .diffcmd import add_arguments as diff_arguments

    diff_arguments(p)
    p = sub.add_parser("fix", help="the smallest change that makes the command resolve, or a request "
                                    "stick, verified by re-resolution")
    from .fixcmd import add_arguments as fix_arguments

    fix_arguments(p)
    p = sub.add_parser("matrix", help="GPUs x flag sets: a table of chosen fields, or of every field "
                                       "that differs")
    from .matrixcmd import add_arguments as matrix_arguments

    matrix_arguments(p)
    p = sub.add_parser("debug", help="flagtrace about itself: version, data, GPU profiles, stand-ins, cache, "
                                      "adapters; with a command, the interpreter and framework it gets")
    from .debugcmd import add_arguments as debug_arguments

    debug_arguments(p)
    p = sub.add_parser("env", help="the framework releases flagtrace builds for --release: list, build, prune")
    from .envcmd import add_arguments as env_arguments

    env_arguments(p)
    p = sub.add_parser("run", help="probe every Python process a launch command starts "
                                    "(flagtrace run -- bash launch.sh)")
    p.add_argument("--live", action="store_true", help="let processes run past their stop point and "
                   "record until they exit (default: stop each framework process before weights load)")
    _common(p, "run")
    return parser


def asked_of(opts):
    """The typed request launch/ and adapters/ read (the Namespace stops here)."""
    python = getattr(opts, "python", None)
    return Asked(adapter=getattr(opts, "adapter", "auto"), watch=tuple(getattr(opts, "watch", ()) or ()),
                 stop_at=tuple(getattr(opts, "stop_at", ()) or ()), via=getattr(opts, "via", None),
                 python=python if isinstance(python, str) else None,  # diff/matrix: a list of sides
                 from_trace=getattr(opts, "from_trace", None), model_config=getattr(opts, "model_config", None),
                 offline=bool(getattr(opts, "offline", False)))


def split_command(argv):
    if "--" in argv:
        i = argv.index("--")
        return argv[:i], argv[i + 1:]
    return argv, None


def obtain_trace(opts, asked, command, err):
    via.check_options(asked)
    if opts.from_trace:
        if command:
            raise FlagtraceError("give either --from TRACE or a command after --, not both", ExitCode.USAGE)
        return tracefile.load(opts.from_trace), None
    if command is None:
        raise FlagtraceError("nothing to trace: put the launch command after --, e.g. "
                             "flagtrace %s -- python -m sglang.launch_server --model-path DIR" % opts.verb,
                             ExitCode.USAGE)
    profile = gpus.choose(opts.gpu, opts.gpu_profile)
    target = remote.parse_target(command, asked)  # parse_command, or the remote twin with --via
    adapter = choose_adapter(target, asked)
    target, request, deferred = prepare_request(adapter, target, asked)
    # the probe reports a typed --watch / --stop-at whose module or name never appears
    request["user_specs"] = list(opts.watch) + list(opts.stop_at)
    if profile is not None:
        request["gpu"] = profile
        request["setup"] = ["sim.gpu"] + list(request.get("setup", []))
        if gpus.real_gpus_present() and not opts.via:
            err.write("flagtrace: warning: this machine has real GPUs; --gpu %s replaces them in the "
                      "traced process\n" % opts.gpu)
    progress = Progress(err, target.describe())
    report_modules = {"json": (), "markdown": ("flagtrace.report.markdown",)}.get(
        opts.format, ("rich.console", "flagtrace.report.terminal"))
    try:
        result = remote.launcher(asked)(target, request, opts.timeout, env=adapter.environment(target, asked),
                                       on_wait=progress.tick if progress.enabled else None,
                                       alongside=lambda hint: Prewarm(hint, report_modules).start())
    except FlagtraceError:
        if deferred is not None:
            raise deferred  # the framework never got to parse: flagtrace's own answer stands
        raise
    finally:
        progress.done()
    trace = tracefile.check(result.trace)
    if opts.save_trace:
        tracefile.save(trace, opts.save_trace)
    if deferred is not None and not any(p.get("error") for p in trace.get("parses", [])):
        raise deferred
    return trace, result


def prepare_request(adapter, target, asked):
    """(target, request, deferred): the target with the configs that stand for its models, and the
    probe's request. flagtrace's own checks of the command's input (the model it names: the adapter's
    check, modelconfigs) do not pre-empt the framework's parser: a usage error of theirs is deferred
    (``deferred``), the command runs as typed up to its parser, where the probe stops it
    (``request["input_error"]``), and the error is the answer only if the parser accepted the command
    or never ran (``vllm serve vllm serve MODEL``: vLLM's "unrecognized arguments", not "--model vllm
    does not exist here")."""
    try:
        prepared, models = adapter.prepare(target, asked)
        return prepared, modelconfigs.into_request(adapter.request(prepared, asked), models), None
    except FlagtraceError as exc:
        if exc.code != ExitCode.USAGE or asked.via or not hasattr(adapter, "check"):
            raise
        deferred = exc
    request = adapter.request(target, asked, check=False)
    request["input_error"] = str(deferred)
    return target, request, deferred


def check_outcome(trace, result):
    refused = verdict.refusal(trace)
    if refused:
        raise FlagtraceError(refused)
    died = verdict.died_early(trace)
    if died:
        gap = verdict.simulation_gap(trace, died)
        raise FlagtraceError("the target %s before resolution started%s" % (died, "; " + gap if gap else ""),
                             detail=stderr_tail(result.stderr) if result else None)


def run(argv, out, err):
    head, command = split_command(argv)
    if head[:1] in (["diff"], ["matrix"], ["fix"]):
        from .diffcmd import join_values

        head = join_values(head)
    parser = build_parser()
    opts, extra = parser.parse_known_args(head)
    if extra:  # said by the verb's own parser: "flagtrace diff: unrecognized arguments: ..."
        parser.verbs.get(opts.verb, parser).error("unrecognized arguments: %s" % " ".join(extra))
    if opts.verb is None:
        build_parser().print_help(out)
        return ExitCode.USAGE
    if opts.verb == "gpus":
        return list_gpus(opts, out)
    if opts.verb == "models":
        from .modelscmd import run_models

        return run_models(opts, out)
    if opts.verb == "env":
        from .envcmd import run_env

        return run_env(opts, out, err)
    reporters.check_writable(getattr(opts, "output", None), getattr(opts, "save_trace", None))
    launch = None
    if opts.verb == "lock":
        from .deploycmd import run_lock

        return run_lock(opts, asked_of(opts), out, err)
    if getattr(opts, "file", None):
        if command:
            raise FlagtraceError("give -f FILE or a command after --, not both", ExitCode.USAGE)
        from . import deploycmd

        found = deploycmd.launches(opts)
        if opts.verb == "check" and (opts.lock or len(opts.file) > 1 or len(found) > 1):
            return deploycmd.run_gate(opts, found, asked_of(opts), out, err)
        launch, command = deploycmd.take(opts, deploycmd.one_launch(found), err)
    if getattr(opts, "release", None):
        command, sides = apply_releases(opts.verb, opts.release, command, getattr(opts, "python", None),
                                        getattr(opts, "via", None), getattr(opts, "offline", False), err)
        if opts.verb in ("diff", "matrix"):
            opts.python = sides
    asked = asked_of(opts)
    if opts.verb == "diff":  # the comparing verb lives in diffcmd.py
        from .diffcmd import run_diff

        return run_diff(opts, asked, command, out, err)
    if opts.verb == "debug":
        from .debugcmd import run_debug

        return run_debug(opts, asked, command, out)
    if opts.verb == "fix":
        from .fixcmd import run_fix

        return run_fix(opts, asked, command, out, err)
    if opts.verb == "matrix":
        from .matrixcmd import run_matrix

        return run_matrix(opts, asked, command, out, err)
    if opts.verb == "run":  # the process-tree verb lives in runcmd.py
        from .runcmd import run_verb

        return run_verb(opts, asked, command, out, err)
    trace, result = obtain_trace(opts, asked, command, err)
    check_outcome(trace, result)
    analysis = annotate(analyse(trace))
    if launch is not None:
        analysis["deployment"] = deploycmd_doc(launch, analysis)
    if getattr(opts, "fix", False):
        _add_fixes(opts, asked, command, analysis, err)
    if opts.show_output and result is not None:
        err.write(result.stdout.decode("utf-8", "replace"))
        err.write(result.stderr.decode("utf-8", "replace"))
    for note in analysis.get("notes", []):
        if opts.format != "terminal" or opts.output:
            err.write("flagtrace: note: %s\n" % note)
    if analysis.get("error") and (opts.format != "terminal" or opts.output):
        # the report is not on the terminal: say in one line why the exit status is 2
        err.write("flagtrace: %s\n" % error_line(analysis["error"], analysis))
    with reporters.output(opts.output, out) as sink:
        return _report(opts, analysis, sink)


def deploycmd_doc(launch, analysis):
    from .adapters import adapter_named
    from .deploycmd import deployment_doc

    info = analysis.get("adapter") or {}
    return deployment_doc(launch, adapter_named(info.get("name")), info.get("version"))


def _add_fixes(opts, asked, command, analysis, err):
    """``explain --fix``: the best verified fix of the error and of each overridden field."""
    if opts.from_trace or opts.via or opts.gpu_profile:
        raise FlagtraceError("--fix resolves the command again: it needs the command itself, here, with "
                             "--gpu (not --from, --via or --gpu-profile)", ExitCode.USAGE)
    if not analysis.get("error") and not analysis["summary"]["overridden"]:
        return
    from . import whatif
    from .whatif.fixsearch import find

    doc = find(whatif.plan(command, asked, "explain --fix"), opts.gpu, (), opts.timeout, 60, err)
    fields = {f["field"]: f for f in analysis["fields"]}
    for problem in doc["problems"]:
        best = doc["fixes"][problem["fixes"][0]] if problem["fixes"] else None
        entry = ({"changes": best["changes"], "outcome": best["outcome"], "side_effects": best["side_effects"]}
                 if best else {"changes": None, "tried": doc["candidates_tried"], "read": problem["read"]})
        if problem["kind"] == "error":
            analysis["error"]["fix"] = entry
        elif problem.get("field") in fields:
            fields[problem["field"]]["fix"] = entry


def error_line(error, analysis):
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


def _report(opts, analysis, sink):
    doc = analysis
    failed = 0
    if opts.verb == "why":
        report = field_history(analysis, opts.field)
        if report is None:
            raise FlagtraceError("%s is not a field of %s; fields: %s" % (
                opts.field, analysis.get("object"), _closest(opts.field, analysis)), ExitCode.USAGE)
        doc = dict(analysis, field=report)
    elif opts.verb == "check":
        results = evaluate_expectations(analysis, opts.expect)
        failed = sum(1 for r in results if not r[3])
        doc = dict(analysis, expectations=[{"field": f, "expected": w, "actual": g, "ok": ok}
                                           for f, w, g, ok in results])
    # the terminal's colours only where the report goes to a terminal
    reporters.render(opts.format, doc, sink, {"verb": opts.verb, "width": opts.width, "details": opts.details,
                                              "no_color": opts.no_color or bool(opts.output)})
    return verdict.exit_code(analysis, opts.strict, failed)


def list_gpus(opts, out):
    if opts.toml:
        with open(gpus.BUILTIN, encoding="utf-8") as fh:
            out.write(fh.read())
        return ExitCode.OK
    out.write("%-14s %-46s %9s  %-5s %5s  %s\n" % ("NAME", "DEVICE", "MEMORY", "CC", "SMs", "ALIASES"))
    for name, p in gpus.load_profiles().items():
        out.write("%-14s %-46s %6d MiB  %-5s %5d  %s\n" % (
            name, p["device_name"], p["memory_mib"], "%d.%d" % tuple(p["compute_capability"]),
            p["sm_count"], ", ".join(p.get("aliases", []))))
    out.write("\nUse --gpu NAMExCOUNT (e.g. --gpu B200x7); --gpu-profile FILE.toml adds your own.\n")
    return ExitCode.OK


def _closest(field, analysis):
    import difflib

    names = [f["field"] for f in analysis["fields"]]
    close = difflib.get_close_matches(field, names, n=5, cutoff=0.5)
    return ", ".join(close) if close else "(%d fields; see flagtrace explain)" % len(names)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    try:
        return int(run(argv, sys.stdout, sys.stderr))
    except FlagtraceError as exc:
        sys.stderr.write("flagtrace: %s\n" % exc.message)
        if exc.detail:
            sys.stderr.write("--- last lines of the target's stderr ---\n%s\n" % exc.detail)
        return int(exc.code)
    except KeyboardInterrupt:
        sys.stderr.write("flagtrace: interrupted\n")
        return int(ExitCode.INTERRUPTED)
    except BrokenPipeError:
        return int(ExitCode.OK)
    except Exception as exc:  # noqa: BLE001 - a flagtrace bug: one line, its own exit code
        saved = _save_traceback()
        sys.stderr.write("flagtrace: internal error: %s: %s (%s; please report it)\n" % (
            type(exc).__name__, " ".join(str(exc).split())[:200],
            "traceback saved to %s" % saved if saved else "traceback follows"))
        if not saved:
            import traceback

            traceback.print_exc()
        return int(ExitCode.INTERNAL)


def _save_traceback():
    """The current exception's traceback in flagtrace's cache folder; its path (None: not saved)."""
    import os
    import time
    import traceback

    from .cachefiles import cache_folder, write_whole

    folder = cache_folder()
    if not folder:
        return None
    path = os.path.join(folder, "internal-error-%s-%d.txt" % (time.strftime("%Y%m%d-%H%M%S"), os.getpid()))

    def write(fh):
        fh.write("flagtrace %s\nargv: %s\n\n" % (__version__, " ".join(sys.argv)))
        traceback.print_exc(file=fh)

    return write_whole(path, write, quiet=True, make_folder=True)
