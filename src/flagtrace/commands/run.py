"""``flagtrace run [options] -- COMMAND...``: probe every Python process a launch command starts.

cli.py parses the options; this builds the run request, runs the command tree (launch/run_command.py),
analyses it (analysis/run_analysis.py) and reports it (report/run_report.py).
"""

from .. import adapters
from ..adapters.generic import check_specs
from ..core.frameworks import env_patterns, run_frameworks
from ..core import gpus
from ..core import trace as tracefile
from ..report.progress import Progress
from ..analysis.run_analysis import analyse_run
from ..core.exitcodes import ExitCode, FlagtraceError
from ..launch import via
from ..launch.local import stderr_tail
from ..launch.run_command import RUN_SCHEMA, run_tree
from .. import report as reporters
from . import options
from .base import prepare

HELP = "probe every Python process a launch command starts (flagtrace run -- bash launch.sh)"


def add_arguments(p):
    p.add_argument("--live", action="store_true", help="let processes run past their stop point and "
                   "record until they exit (default: stop each framework process before weights load)")
    options.common(p, "run")


def run(req):
    prepare(req)
    return run_verb(req.opts, req.asked, req.command, req.out, req.err)


def build_request(opts, asked, profile):
    check_specs(asked.watch + asked.stop_at)
    adapters.check_name(asked.adapter)
    # Framework packages whose first import activates the probe, and the probe-side adapter set-up
    # that then runs (the adapter itself reads the release where the framework is installed).
    frameworks = {k: v for k, v in run_frameworks().items() if asked.adapter in ("auto", v["adapter"])}
    if not frameworks and not asked.watch:  # --adapter generic
        raise FlagtraceError("--adapter generic needs --watch MODULE:CLASS (the config class)", ExitCode.USAGE)
    names = list(frameworks)
    for spec in asked.watch + asked.stop_at:
        module = spec.partition(":")[0]
        if module not in names:
            names.append(module)
    request = {"watch": list(asked.watch), "stop_at": list(asked.stop_at),
               "user_specs": list(asked.watch + asked.stop_at), "frameworks": frameworks,
               "names": names, "live": bool(opts.live), "adapter": asked.adapter,
               "env": env_patterns(),  # the variables each process records
               # models stood in where each framework process starts (probe/modelconfigs.py; with --via on the
               # remote host: its paths, its Hugging Face cache and hub, not this machine's catalog)
               "models": {"explicit": asked.model_config, "offline": asked.offline}}
    if profile is not None:
        request["gpu"] = profile
    return request


def load_run(path):
    doc = tracefile.read_json(path, "flagtrace run")
    if not isinstance(doc, dict) or doc.get("schema") != RUN_SCHEMA:
        raise FlagtraceError("%s is not a flagtrace run (%s); flagtrace run --save-trace writes one" % (path, RUN_SCHEMA))
    return doc


def obtain_run(opts, asked, command, err):
    via.check_options(asked)  # --via PREFIX / --python PATH: usage errors
    if opts.from_trace:
        if command:
            raise FlagtraceError("give either --from RUN.json or a command after --, not both", ExitCode.USAGE)
        return load_run(opts.from_trace)
    if not command:
        raise FlagtraceError("nothing to run: put the launch command after --, e.g. flagtrace run -- bash "
                             "launch.sh", ExitCode.USAGE)
    profile = gpus.choose(opts.gpu, opts.gpu_profile)
    request = build_request(opts, asked, profile)
    progress = Progress(err, " ".join(command)[:60])
    try:
        doc = run_tree(command, request, opts.timeout, on_wait=progress.tick if progress.enabled else None,
                       via=opts.via, python=opts.python)
    finally:
        progress.done()
    if opts.save_trace:
        tracefile.save(doc, opts.save_trace)
    return doc


def run_verb(opts, asked, command, out, err):
    doc = obtain_run(opts, asked, command, err)
    result = analyse_run(doc, strict=opts.strict)
    if opts.show_output:
        err.write(doc.get("stdout", ""))
        err.write(doc.get("stderr", ""))
    if result["summary"]["python"] == 0 and not (result["timed_out"] or result["interrupted"] or result["leftovers"]):
        raise FlagtraceError(result["message"], detail=stderr_tail(doc.get("stderr", "").encode()) or None)
    with reporters.output(opts.output, out) as sink:
        reporters.render(opts.format, result, sink, {"verb": "run", "width": opts.width, "details": opts.details,
                                                     "no_color": opts.no_color or bool(opts.output)})
    if result["message"]:
        err.write("flagtrace: %s\n" % result["message"])
    return result["exit_code"]
