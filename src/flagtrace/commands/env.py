"""``flagtrace env list | build RELEASE... | prune [RELEASE...]``: the framework releases flagtrace has built
for ``--release`` (envs/build.py), their size and last use; build ahead of time (CI, a machine that will be
offline); remove what is no longer wanted."""
import json
import os
import time

from ..envs.build import Builder, builder_for, human, _du
from ..envs.release import parse_release
from ..core.exitcodes import ExitCode, FlagtraceError

HELP = "the framework releases flagtrace builds for --release: list, build, prune"


def add_arguments(p):
    actions = p.add_subparsers(dest="action", metavar="ACTION", parser_class=type(p))
    actions.required = True
    for name, text in (("list", "the releases built here: size, last use"),
                       ("build", "build these releases now (CI, a machine that will be offline)"),
                       ("prune", "remove these releases; with none, those unused for --days")):
        a = actions.add_parser(name, help=text)
        if name != "list":
            a.add_argument("releases", nargs="+" if name == "build" else "*", metavar="NAME==VERSION",
                           help="e.g. sglang==0.5.11 vllm==0.33.0")
        a.add_argument("--root", metavar="DIR", help="where the environments live (default: FLAGTRACE_ENVS, else "
                       "flagtrace's cache folder/envs)")
        if name == "prune":
            a.add_argument("--days", type=float, default=30.0, help="releases unused for this many days (default 30)")
        if name == "list":
            a.add_argument("--json", action="store_true", help="as JSON")


def run(req):
    return run_env(req.opts, req.out, req.err)


def run_env(opts, out, err):
    root = os.path.abspath(opts.root) if opts.root else None
    releases = [parse_release(r) for r in getattr(opts, "releases", [])]
    if opts.action == "build":
        builder = builder_for(err, root=root)
        for release in releases:
            builder.interpreter(release)
            out.write("%s %s\n" % (release, builder.python(release)))
        return ExitCode.OK
    builder = Builder(root=root)
    if opts.action == "list":
        return _list(builder, out, opts.json)
    return _prune(builder, releases, opts.days, out)


def _list(builder, out, as_json):
    rows = []
    for release, folder in builder.built():
        stamp = os.path.join(folder, ".flagtrace-stamp")
        rows.append({"release": str(release), "python": builder.python(release), "size": _du(folder),
                     "last_used": os.path.getmtime(stamp), "up_to_date": builder.ready(release)})
    venv = builder.venv()
    shared = _du(venv) if os.path.isdir(venv) else 0
    if as_json:
        json.dump({"root": builder.root, "shared_venv": {"path": venv, "size": shared}, "releases": rows}, out,
                  indent=2)
        out.write("\n")
        return ExitCode.OK
    out.write("%s\n" % builder.root)
    if not rows:
        out.write("  no release built yet (flagtrace env build sglang==0.5.11, or --release on any verb)\n")
    for row in rows:
        out.write("  %-22s %9s  last used %s%s\n" % (row["release"], human(row["size"]),
                                                    time.strftime("%Y-%m-%d %H:%M", time.localtime(row["last_used"])),
                                                    "" if row["up_to_date"] else "  (stale: rebuilt on next use)"))
    if shared:
        out.write("  %-22s %9s  (torch and the packages every release shares)\n" % ("shared venv", human(shared)))
    return ExitCode.OK


def _prune(builder, releases, days, out):
    built = dict((str(r), (r, f)) for r, f in builder.built())
    if releases:
        unknown = [str(r) for r in releases if str(r) not in built]
        if unknown:
            raise FlagtraceError("env prune: not built here: %s" % ", ".join(unknown), ExitCode.USAGE)
        chosen = [built[str(r)] for r in releases]
    else:
        cutoff = time.time() - days * 86400
        chosen = [(r, f) for r, f in built.values() if os.path.getmtime(os.path.join(f, ".flagtrace-stamp")) < cutoff]
    freed = 0
    for release, folder in chosen:
        freed += _du(folder)
        builder.remove(release)
        out.write("removed %s\n" % release)
    out.write("%d release%s removed, %s freed\n" % (len(chosen), "" if len(chosen) == 1 else "s", human(freed)))
    return ExitCode.OK
