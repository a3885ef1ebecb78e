"""``-f FILE`` (explain, why, check, diff, fix): the launch command a deployment artifact holds (deploy/),
run in the release its image tag names, with the container's environment and GPU count. ``check -f``
over several commands (files, folders, a multi-document stream) is a CI gate: every command explained,
those sharing a release and GPU in one import (the variant engine), one row each, a non-zero exit when
any was refused, raised, or (with --strict) had an explicit request overridden."""
import dataclasses
import json
import os

from ..deploy.launch import read_paths
from ..probe.hooks import PLACEHOLDERS_ENV
from ..core.exitcodes import ExitCode, FlagtraceError

class Launches(list):
    """The launches of the -f files, with ``files``: what was looked at, each file's launches and what was skipped,
    with why ([{"path", "commands", "unreadable", "skipped"}]); ``shard``: "K/N" where only a shard is kept."""
    files = ()
    shard = None


def launches(opts):
    """Every framework launch of the -f files (filtered by --container), a file or document that cannot be read
    one of them (a Launch with only its problem): Launches; usage errors for none."""
    found = read_paths(opts.file)
    out = Launches(launch for read in found for launch in read.launches)
    out.files = [{"path": read.path, "commands": sum(1 for l in read.launches if not _unreadable(l)),
                  "unreadable": sum(1 for l in read.launches if _unreadable(l)), "skipped": read.skipped}
                 for read in found]
    if opts.container:
        out[:] = [l for l in out if l.name.rsplit(" ", 1)[-1] == opts.container or l.name.endswith(
            "service " + opts.container)]
        if not out:
            raise FlagtraceError("-f: no container or service named %s runs a framework there" % opts.container,
                                 ExitCode.USAGE)
    if not out:
        reasons = "; ".join("%s: %s" % (read.path, read.skipped) for read in found[:3])
        raise FlagtraceError("-f %s: no container runs SGLang or vLLM there (looked at %d file%s: %s%s)"
                             % (" ".join(opts.file), len(found), "" if len(found) == 1 else "s", reasons,
                                "; ..." if len(found) > 3 else ""), ExitCode.USAGE)
    if getattr(opts, "shard", None):
        out.shard = "%d/%d" % opts.shard
        out[:] = shard_of(out, *opts.shard)
    return out


def shard_of(items, k, n):
    """The K-th of N shards of the launches: sorted by release, then file and name (commands sharing a release
    stay together, for one import each), cut into N runs of nearly equal length; every launch in exactly one."""
    ordered = sorted(items, key=lambda l: (l.release or "", l.source, l.name))
    size, extra = divmod(len(ordered), n)
    start = (k - 1) * size + min(k - 1, extra)
    return ordered[start:start + size + (1 if k <= extra else 0)]


def _unreadable(launch):
    return not launch.tokens and bool(launch.problem)


def one_launch(found, err=None):
    """The one command of the -f files; a document or file that could not be read beside it is said on ``err``
    (check -f gives each a row)."""
    commands = [l for l in found if not _unreadable(l)]
    if len(commands) == 1 and len(found) > 1:
        for launch in found:
            if _unreadable(launch) and err is not None:
                err.write("flagtrace: note: left out: %s\n" % launch.problem)
        found = commands
    if len(found) > 1:
        raise FlagtraceError("-f: %d commands there (%s); pick one with --container NAME (check -f takes them all)"
                             % (len(found), "; ".join(l.name for l in found)), ExitCode.USAGE)
    return found[0]


def take(opts, launch, err):
    """The verb's options (the CLI's, before anything reads them) set for one launch: its release (unless
    --release or --python says otherwise), its GPU count, its environment exported: (launch, command)."""
    refuse_wrapper(launch)
    command = run_argv(launch)
    python = opts.python if isinstance(getattr(opts, "python", None), str) and not opts.via else None
    if python:  # an interpreter that stands for the image's
        command, opts.python = command_of(launch, python, None), None
    elif not opts.release and launch.release:
        if opts.verb in ("diff", "matrix"):  # the image's release runs the command; the sides come on top
            pythons = release_pythons([launch], [], getattr(opts, "offline", False), err)
            command = command_of(launch, None, pythons[launch.release])
        else:
            opts.release = [launch.release]
    if isinstance(getattr(opts, "gpu", None), str) or getattr(opts, "gpu", None) is None and launch.gpu_type:
        opts.gpu = gpu_spec(launch, opts.gpu)
    elif getattr(opts, "gpu", None) and len(opts.gpu) == 1:  # diff/matrix: a list of sides
        opts.gpu = [gpu_spec(launch, opts.gpu[0])]
    if launch.model_configs:  # what the file says a path holds (KServe's /mnt/models); --model-config wins
        given = list(getattr(opts, "model_config", None) or [])
        opts.model_config = list(launch.model_configs) + given
    export_environment(launch)
    return launch, command


def refuse_wrapper(launch):
    if launch.problem:
        raise FlagtraceError(launch.problem, ExitCode.USAGE)
    if launch.wrapper:
        raise FlagtraceError("%s runs %s: flagtrace does not follow that wrapper's parser; run the framework's own "
                             "entry point with the same flags to explain them" % (launch.describe(), launch.wrapper),
                             ExitCode.USAGE)


def gpu_spec(launch, gpu):
    """--gpu as given, with the container's GPU count where --gpu names only the type; without --gpu, the GPU the
    file names (a SkyPilot task's accelerators) where flagtrace has its profile."""
    if not gpu and launch.gpu_type:
        from ..core import gpus

        if gpus.find(gpus.load_profiles(), launch.gpu_type) is not None:
            gpu = launch.gpu_type
    if not gpu or not launch.gpus:
        return gpu
    from ..core.gpus import _SPEC

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
    return side_command(run_argv(launch), chosen)


def run_argv(launch):
    """The launch's argv with each file its script writes with a heredoc (``--config config.yaml``) given as a copy
    of what the script writes, in a temporary folder that is removed when flagtrace exits."""
    if not launch.files:
        return launch.argv
    folder = _scratch()
    copies = {}
    for path, text in launch.files.items():
        copies[path] = os.path.join(folder, "%d-%s" % (len(os.listdir(folder)), os.path.basename(path) or "file"))
        with open(copies[path], "w", encoding="utf-8") as fh:
            fh.write(text)

    def one(word):
        option, eq, value = word.partition("=")
        return option + "=" + copies[value] if eq and value in copies else copies.get(word, word)
    return [one(w) for w in launch.argv]


_SCRATCH = []


def _scratch():
    if not _SCRATCH:
        import atexit
        import shutil
        import tempfile

        _SCRATCH.append(tempfile.mkdtemp(prefix="flagtrace-written-"))
        atexit.register(shutil.rmtree, _SCRATCH[0], True)
    return _SCRATCH[0]


def release_pythons(items, release_opts, offline, err, python=None, tolerant=False):
    """{release: interpreter} for each launch's release (``--release`` overrides the tags): built once each;
    none with ``python`` (--python: that interpreter runs them all), none for a launch that will not run.
    ``tolerant`` (the gate): a release that cannot be had (outside the supported range, not built and --offline,
    a failed build) maps to its FlagtraceError, for its rows to say, and the other releases are still built."""
    from ..envs.build import builder_for
    from ..envs.release import parse_release

    if len(release_opts) > 1:
        raise FlagtraceError("-f takes one --release (it overrides every image tag)", ExitCode.USAGE)
    if python:
        return {}
    builder = builder_for(err, offline=offline)
    out = {}
    for launch in items:
        release = release_opts[0] if release_opts else launch.release
        if release and release not in out and not launch.wrapper and not launch.problem:
            try:
                out[release] = builder.interpreter(parse_release(release))
            except FlagtraceError as exc:
                if not tolerant:
                    raise
                out[release] = exc
    return out


def deployment_doc(launch, adapter_name, version):
    """The report's account of the deployment: where the command came from, token by token, and what its
    layers did (deploy/origins.py, with the flag table of adapter ``adapter_name``)."""
    from ..adapters import adapter_named
    from ..deploy.origins import findings

    adapter = adapter_named(adapter_name)
    return {"source": launch.source, "name": launch.name, "image": launch.image, "release": launch.release,
            "gpus": launch.gpus, "notes": list(launch.notes),
            "tokens": [{"text": t.text, "origin": t.origin} for t in launch.tokens],
            "env": sorted(launch.env), "findings": findings(launch, adapter, version) if version else []}


def resolve_all(opts, items, asked, err, twice=False):
    """Every launch of the -f files resolved: [(row, Launch or None, analysis or None, again or None)]; those
    sharing an interpreter, entry point and GPU share one import. ``twice``: each is resolved a second time in
    the same import (``again``), so that a lock leaves out what differs between two runs (a random seed)."""
    from . import whatif
    from ..launch.command import parse_command
    from ..launch.variants import Variant

    pythons = release_pythons(items, opts.release, getattr(opts, "offline", False), err, opts.python, tolerant=True)
    groups, keys, out = {}, [], []
    for launch in items:
        row = {"source": launch.source, "name": launch.name, "image": launch.image,
               "release": opts.release[0] if opts.release and not launch.wrapper else launch.release}
        slot = None
        if launch.problem:
            row.update(status="input", exit=int(ExitCode.USAGE), message=launch.problem)
        elif launch.wrapper:
            row.update(status="unsupported", exit=0, message="runs %s: not followed" % launch.wrapper)
        else:
            try:
                interpreter = pythons.get(opts.release[0] if opts.release else launch.release)
                if isinstance(interpreter, FlagtraceError):
                    raise interpreter  # this release cannot be had: its rows say why, the others run
                command = command_of(launch, opts.python, interpreter)
                gpu = gpu_spec(launch, opts.gpu)
                target = parse_command(command)
                key = (target.interpreter, target.mode, target.target, gpu)
                implied = dataclasses.replace(asked, model_config=list(launch.model_configs) + list(
                    asked.model_config or [])) if launch.model_configs else asked  # what the file says a path holds
                if key not in groups:
                    groups[key] = (whatif.plan(command, implied, "check -f DIR"), gpu, [])
                    keys.append(key)
                args, models = groups[key][0].adapter.substitute_models(list(target.args), implied)
                variants = groups[key][2]
                slot = (key, len(variants))
                for label in [launch.describe()] + [launch.describe() + " (again)"] * twice:
                    variants.append(Variant(args, target_environment(launch), label=label, models=models))
            except FlagtraceError as exc:
                row.update(status="input" if exc.code == ExitCode.USAGE else "failed", exit=int(exc.code),
                           message=exc.message)
        out.append([row, launch, slot])
    resolved = whatif.resolve([groups[k] for k in keys], opts.timeout, err, "commands", tolerant=True) if keys else []
    by_slot, i = {}, 0
    for key in keys:
        for position in range(len(groups[key][2])):
            by_slot[(key, position)] = (groups[key][0], resolved[i])
            i += 1
    done = []
    for row, launch, slot in out:
        if slot is None:
            done.append((row, None, None, None, None))
            continue
        plan, (result, analysis) = by_slot[slot]
        again = by_slot[(slot[0], slot[1] + 1)][1][1] if twice else None
        done.append((row, launch, plan, (result, analysis), again))
    return done


# What a container's env may not change in flagtrace's own process (the target inherits the rest).
_KEEP = ("PATH", "PYTHONPATH", "PYTHONHOME", "HOME", "LD_LIBRARY_PATH", "LD_PRELOAD", "VIRTUAL_ENV")


def export_environment(launch):
    """The container's environment, set for the command (the target inherits it); a placeholder for what only
    the cluster knows (a secret) is set as the placeholder, never looked up."""
    for name, value in target_environment(launch).items():
        if name in _KEEP or name.startswith("FLAGTRACE_") and name != PLACEHOLDERS_ENV:
            continue
        os.environ[name] = value


def target_environment(launch):
    """The launch's environment, with the words only known at run time named for the probe (probe/hooks.py
    stand_in_placeholders)."""
    env = dict(launch.env)
    if launch.placeholders:
        env[PLACEHOLDERS_ENV] = json.dumps(launch.placeholders)
    return env
