"""One resolution: a command parsed, its adapter chosen and its probe request built (prepare), run under the
probe here or through --via (obtain_trace), its outcome gated (check_outcome) and analysed (explanation)."""
import dataclasses

from .. import adapters
from ..analysis import verdict
from ..analysis.explain import analyse
from ..analysis.prewarm import Prewarm
from ..core import gpus
from ..core import trace as tracefile
from ..core.exitcodes import ExitCode, FlagtraceError
from ..core.request import ProbeRequest
from ..launch import remote, via
from ..launch.local import stderr_tail
from ..report.progress import Progress


@dataclasses.dataclass
class Prepared:
    """A command ready to run under the probe."""
    target: object  # launch.command.Target, with the configs standing for its models in place
    adapter: object  # its adapter (an instance)
    request: ProbeRequest
    models: list  # [modelconfigs.Found] standing for its models
    deferred: FlagtraceError = None  # flagtrace's own usage error, deferred to the framework's parser


def prepare(command, asked, defer=False):
    """``command`` parsed (here, or as the host behind ``asked.via`` sees it), its adapter chosen, the configs
    standing for its models found and its probe request built (the probe reports a typed --watch / --stop-at
    whose module or name never appears). ``defer``: flagtrace's own checks of the command's input (the model
    it names: the adapter's check, modelconfigs) do not pre-empt the framework's parser: a usage error of
    theirs is deferred (``Prepared.deferred``), the command runs as typed up to its parser, where the probe
    stops it (``request.input_error``), and the error is the answer only if the parser accepted the command or
    never ran (``vllm serve vllm serve MODEL``: vLLM's "unrecognized arguments", not "--model vllm does not
    exist here")."""
    target = remote.parse_target(command, asked)  # parse_command, or the remote twin with --via
    adapter = adapters.choose_adapter(target, asked)
    try:
        prepared, models = adapter.prepare(target, asked)
        return Prepared(prepared, adapter, ProbeRequest.build(adapter, prepared, asked, models, user_specs=True),
                        models)
    except FlagtraceError as exc:
        # the generic adapter has no parser to wait for
        if not defer or exc.code != ExitCode.USAGE or asked.via or not adapter.package:
            raise
        deferred = exc
    return Prepared(target, adapter, ProbeRequest.build(adapter, target, asked, check=False,
                                                        input_error=str(deferred), user_specs=True), [], deferred)


def obtain_trace(opts, asked, command, err):
    """The trace of ``command`` run under the probe (or the saved one --from names): (trace, launch result or
    None)."""
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
    ready = prepare(command, asked, defer=True)
    target, deferred = ready.target, ready.deferred
    request = ready.request.simulating(profile)
    if profile is not None:
        if gpus.real_gpus_present() and not opts.via:
            err.write("flagtrace: warning: this machine has real GPUs; --gpu %s replaces them in the "
                      "traced process\n" % opts.gpu)
    progress = Progress(err, target.describe())
    report_modules = {"json": (), "markdown": ("flagtrace.report.markdown",)}.get(
        opts.format, ("rich.console", "flagtrace.report.terminal"))
    try:
        result = remote.launcher(asked)(target, request.to_json(), opts.timeout,
                                        env=ready.adapter.environment(target, asked),
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


def check_outcome(trace, result):
    stop = verdict.gate(trace)
    if stop:
        raise FlagtraceError(stop.message, detail=stderr_tail(result.stderr) if result and stop.status == "died"
                             else None)


def explanation(trace):
    """The analysis of ``trace``, with what only its adapter knows (flag renames)."""
    return adapters.annotate(analyse(trace))
