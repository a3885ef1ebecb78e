"""``-f FILE`` (explain, why, check, diff, fix): the launch command a deployment artifact holds (deploy/),
run in the release its image tag names, with the container's environment and GPU count. ``check -f``
over several commands (files, folders, a multi-document stream) is a CI gate: every command explained,
those sharing a release and GPU in one import (the variant engine), one row each, a non-zero exit when
any was refused, raised, or (with --strict) had an explicit request overridden."""
import os

from .deploy.launch import read_paths
from .exitcodes import ExitCode, FlagtraceError

GATE_SCHEMA = "flagtrace/gate@1"


def add_file_options(p):
    p.add_argument("-f", "--file", action="append", default=[], metavar="FILE|DIR|-",
                   help="read the launch command from a Kubernetes manifest (helm template output too), a docker "
                        "compose file or a docker run line; - reads stdin; check: several files or folders")
    p.add_argument("--container", metavar="NAME", help="with -f: the container (or service) whose command to run, "
                   "when the file has several")


def launches(opts):
    """Every framework launch of the -f files (filtered by --container): [Launch]; usage errors for none."""
    found = read_paths(opts.file)
    out = [launch for _, ls in found for launch in ls]
    if opts.container:
        out = [l for l in out if l.name.rsplit(" ", 1)[-1] == opts.container or l.name.endswith(
            "service " + opts.container)]
        if not out:
            raise FlagtraceError("-f: no container or service named %s runs a framework there" % opts.container,
                                 ExitCode.USAGE)
    if not out:
        raise FlagtraceError("-f %s: no container runs SGLang or vLLM there (looked at %d file%s)"
                             % (" ".join(opts.file), len(found), "" if len(found) == 1 else "s"), ExitCode.USAGE)
    return out


def one_launch(opts):
    found = launches(opts)
    if len(found) > 1:
        raise FlagtraceError("-f: %d commands there (%s); pick one with --container NAME (check -f takes them all)"
                             % (len(found), "; ".join(l.name for l in found)), ExitCode.USAGE)
    return found[0]


def refuse_wrapper(launch):
    if launch.wrapper:
        raise FlagtraceError("%s runs %s: flagtrace does not follow that wrapper's parser; run the framework's own "
                             "entry point with the same flags to explain them" % (launch.describe(), launch.wrapper),
                             ExitCode.USAGE)


def gpu_spec(launch, gpu):
    """--gpu as given, with the container's GPU count where --gpu names only the type."""
    if not gpu or not launch.gpus:
        return gpu
    from .gpus import _SPEC

    m = _SPEC.match(gpu)
    return gpu if m and m.group("count") else "%sx%d" % (gpu, launch.gpus)


def command_of(launch, python, release_python):
    """The argv to run here: the image's interpreter or console script replaced by ``python`` (--python), else
    by the interpreter of the release (--release, or the one the image tag names)."""
    from .whatif import side_command

    chosen = python or release_python
    if not chosen:
        raise FlagtraceError("%s: the image %s names no release flagtrace knows; give --release NAME==VERSION or "
                             "--python PATH" % (launch.describe(), launch.image or "(none)"), ExitCode.USAGE)
    return side_command(launch.argv, chosen)


def release_pythons(items, release_opts, offline, err):
    """{release: interpreter} for each launch's release (``--release`` overrides the tags): built once each."""
    from .envs.build import builder_for
    from .envs.release import parse_release

    if len(release_opts) > 1:
        raise FlagtraceError("-f takes one --release (it overrides every image tag)", ExitCode.USAGE)
    builder = builder_for(err, offline=offline)
    out = {}
    for launch in items:
        release = release_opts[0] if release_opts else launch.release
        if release and release not in out and not launch.wrapper:
            out[release] = builder.interpreter(parse_release(release))
    return out


def deployment_doc(launch, adapter, version):
    """The report's account of the deployment: where the command came from, token by token, and what its
    layers did (deploy/origins.py)."""
    from .deploy.origins import findings

    return {"source": launch.source, "name": launch.name, "image": launch.image, "release": launch.release,
            "gpus": launch.gpus, "notes": list(launch.notes),
            "tokens": [{"text": t.text, "origin": t.origin} for t in launch.tokens],
            "env": sorted(launch.env), "findings": findings(launch, adapter, version) if version else []}


def run_gate(opts, asked, out, err):
    """``check -f``: every launch explained, a row each."""
    from . import whatif
    from . import report as reporters
    from .adapters import ADAPTERS
    from .analysis import verdict
    from .analysis.expect import evaluate_expectations
    from .launch.command import parse_command
    from .launch.variants import Variant

    items = launches(opts)
    pythons = release_pythons(items, opts.release, getattr(opts, "offline", False), err)
    groups, keys, rows = {}, [], []
    for launch in items:
        row = {"source": launch.source, "name": launch.name, "image": launch.image, "release": launch.release}
        rows.append(row)
        if launch.wrapper:
            row.update(status="unsupported", exit=0, message="runs %s: not followed" % launch.wrapper)
            continue
        try:
            command = command_of(launch, opts.python, pythons.get(opts.release[0] if opts.release else launch.release))
            gpu = gpu_spec(launch, opts.gpu)
            target = parse_command(command)
            key = (target.interpreter, target.mode, target.target, gpu)
            if key not in groups:
                groups[key] = (whatif.plan(command, asked, "check -f DIR"), gpu, [])
                keys.append(key)
            plan = groups[key][0]
            args, _ = plan.adapter.substitute_models(list(target.args), asked)
            groups[key][2].append(Variant(args, dict(launch.env), label=launch.describe()))
            row["_launch"], row["_key"] = launch, key
        except FlagtraceError as exc:
            row.update(status="input", exit=int(exc.code), message=exc.message)
    resolved = whatif.resolve([groups[k] for k in keys], opts.timeout, err, "commands", tolerant=True) if keys else []
    by_label = {}
    for (plan, _, variants), chunk in zip((groups[k] for k in keys), _chunks(resolved, [len(groups[k][2]) for k in keys])):
        for variant, pair in zip(variants, chunk):
            by_label[variant.label] = (plan, pair)
    worst = ExitCode.OK
    adapters = {a.name: a() for a in ADAPTERS}
    for row in rows:
        launch = row.pop("_launch", None)
        row.pop("_key", None)
        if launch is None:
            worst = max(worst, row["exit"]) if row.get("exit") else worst
            continue
        plan, (result, analysis) = by_label[launch.describe()]
        version = ((analysis or {}).get("adapter") or {}).get("version")
        row["deployment"] = deployment_doc(launch, adapters.get(plan.adapter.name), version)
        if analysis is None or analysis.get("status") == "refused":
            row.update(status="failed", exit=int(ExitCode.CANNOT_RUN),
                       message=(analysis or {}).get("message") or result.why or "did not run")
        else:
            failed = sum(1 for r in evaluate_expectations(analysis, opts.expect) if not r[3])
            code = verdict.exit_code(analysis, opts.strict, failed)
            error = analysis.get("error")
            row.update(status="error" if error else "resolved", exit=int(code),
                       overridden=[f["field"] for f in analysis.get("fields", []) if f.get("verdict") == "overridden"],
                       message=_error_line(error, analysis) if error else "")
        worst = max(worst, ExitCode(row["exit"]))
    doc = {"schema": GATE_SCHEMA, "files": opts.file, "rows": rows,
           "summary": {k: sum(1 for r in rows if r["status"] == k)
                       for k in ("resolved", "error", "failed", "input", "unsupported")}}
    with reporters.output(opts.output, out) as sink:
        reporters.render(opts.format, doc, sink, {"verb": "gate"})
    return worst


def _chunks(items, sizes):
    out, i = [], 0
    for size in sizes:
        out.append(items[i:i + size])
        i += size
    return out


def _error_line(error, analysis):
    from .cli import error_line

    return error_line(error, analysis)


# What a container's env may not change in flagtrace's own process (the target inherits the rest).
_KEEP = ("PATH", "PYTHONPATH", "PYTHONHOME", "HOME", "LD_LIBRARY_PATH", "LD_PRELOAD", "VIRTUAL_ENV")


def export_environment(launch, err):
    """The container's environment, set for the command (the target inherits it); a placeholder for what only
    the cluster knows (a secret) is set as the placeholder, never looked up."""
    for name, value in launch.env.items():
        if name in _KEEP or name.startswith("FLAGTRACE_"):
            continue
        os.environ[name] = value
