"""What explain, why and check share: the command run under the probe (or a saved trace read), its
outcome gated, analysed, the -f deployment and ``--fix`` added, then reported by the verb."""
from .. import gpus
from .. import report as reporters
from .. import trace as tracefile
from ..adapters import annotate, choose_adapter
from ..analysis import verdict
from ..analysis.explain import analyse
from ..analysis.prewarm import Prewarm
from ..exitcodes import ExitCode, FlagtraceError
from ..launch import remote, via
from ..launch.local import stderr_tail
from ..launch.request import ProbeRequest
from ..progress import Progress
from ..report.paths import short_path
from .base import prepare


def explained(req):
    """``req``'s command (-f, --release set up) traced and analysed, its notes and error said on stderr
    where the report is not on the terminal: the analysis."""
    prepare(req)
    opts, err = req.opts, req.err
    asked = req.asked
    trace, result = obtain_trace(opts, asked, req.command, err)
    check_outcome(trace, result)
    analysis = annotate(analyse(trace))
    if req.launch is not None:
        analysis["deployment"] = _deployment(req.launch, analysis)
    if getattr(opts, "fix", False):
        _add_fixes(opts, asked, req.command, analysis, err)
    if opts.show_output and result is not None:
        err.write(result.stdout.decode("utf-8", "replace"))
        err.write(result.stderr.decode("utf-8", "replace"))
    for note in analysis.get("notes", []):
        if opts.format != "terminal" or opts.output:
            err.write("flagtrace: note: %s\n" % note)
    if analysis.get("error") and (opts.format != "terminal" or opts.output):
        # the report is not on the terminal: say in one line why the exit status is 2
        err.write("flagtrace: %s\n" % error_line(analysis["error"], analysis))
    return analysis


def report(req, analysis, document=None):
    """The verb's document rendered (``document(analysis)``: (the analysis with what the verb adds, how
    many expectations failed); default: the analysis itself); the exit code of ``analysis``."""
    opts = req.opts
    with reporters.output(opts.output, req.out) as sink:
        doc, failed = document(analysis) if document else (analysis, 0)
        # the terminal's colours only where the report goes to a terminal
        reporters.render(opts.format, doc, sink, {"verb": opts.verb, "width": opts.width, "details": opts.details,
                                                  "no_color": opts.no_color or bool(opts.output)})
    return verdict.exit_code(analysis, opts.strict, failed)


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
    request = request.simulating(profile)
    if profile is not None:
        if gpus.real_gpus_present() and not opts.via:
            err.write("flagtrace: warning: this machine has real GPUs; --gpu %s replaces them in the "
                      "traced process\n" % opts.gpu)
    progress = Progress(err, target.describe())
    report_modules = {"json": (), "markdown": ("flagtrace.report.markdown",)}.get(
        opts.format, ("rich.console", "flagtrace.report.terminal"))
    try:
        result = remote.launcher(asked)(target, request.to_json(), opts.timeout, env=adapter.environment(target, asked),
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
    probe's request (launch/request.ProbeRequest; the probe reports a typed --watch / --stop-at whose
    module or name never appears). flagtrace's own checks of the command's input (the model it names: the adapter's
    check, modelconfigs) do not pre-empt the framework's parser: a usage error of theirs is deferred
    (``deferred``), the command runs as typed up to its parser, where the probe stops it
    (``request.input_error``), and the error is the answer only if the parser accepted the command
    or never ran (``vllm serve vllm serve MODEL``: vLLM's "unrecognized arguments", not "--model vllm
    does not exist here")."""
    try:
        prepared, models = adapter.prepare(target, asked)
        return prepared, ProbeRequest.build(adapter, prepared, asked, models, user_specs=True), None
    except FlagtraceError as exc:
        if exc.code != ExitCode.USAGE or asked.via or not adapter.package:  # the generic one: no parser to wait for
            raise
        deferred = exc
    return target, ProbeRequest.build(adapter, target, asked, check=False, input_error=str(deferred),
                                      user_specs=True), deferred


def check_outcome(trace, result):
    stop = verdict.gate(trace)
    if stop:
        raise FlagtraceError(stop.message, detail=stderr_tail(result.stderr) if result and stop.status == "died"
                             else None)


def _deployment(launch, analysis):
    from ..adapters import adapter_named
    from .deployment import deployment_doc

    info = analysis.get("adapter") or {}
    return deployment_doc(launch, adapter_named(info.get("name")), info.get("version"))


def _add_fixes(opts, asked, command, analysis, err):
    """``explain --fix``: the best verified fix of the error and of each overridden field."""
    if opts.from_trace or opts.via or opts.gpu_profile:
        raise FlagtraceError("--fix resolves the command again: it needs the command itself, here, with "
                             "--gpu (not --from, --via or --gpu-profile)", ExitCode.USAGE)
    if not analysis.get("error") and not analysis["summary"]["overridden"]:
        return
    from .. import whatif
    from ..whatif.fixsearch import find

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
