"""``flagtrace lock -f FILE... [-o LOCK]``: each deployment command's resolved values, for check --lock
(the resolution: engine/gate.py; the lock file: engine/lock.py)."""
from ..core.exitcodes import ExitCode, FlagtraceError
from ..engine.deployment import launches
from ..engine import lock as lock_file
from ..engine.gate import gate
from .gating import render_gate
from . import options
from .base import writable

HELP = "with -f: write each deployment command's resolved values (check --lock compares against them)"


def add_arguments(p):
    options.file_options(p)
    p.add_argument("-o", "--output", default="flagtrace.lock.json", metavar="LOCK",
                   help="the lock file to write (default %(default)s)")
    p.add_argument("--gpu", metavar="NAME[xCOUNT]", help="simulate this GPU (the count from each manifest where "
                   "only the type is given)")
    options.python_option(p, "image")
    options.timeout_option(p)
    options.release_option(p)
    options.model_options(p)
    options.shard_option(p)
    p.add_argument("--merge", nargs="+", metavar="PART", help="join the lock files of the shards (lock -f ... "
                   "--shard K/N each) into one (-o), refusing a missing shard or a command in two")


def run(req):
    writable(req)
    opts = req.opts
    if opts.merge:
        if opts.file:
            raise FlagtraceError("lock: give either -f FILE... or --merge PART..., not both", ExitCode.USAGE)
        count = lock_file.merge(opts.merge, opts.output)
        req.err.write("flagtrace: wrote %s: %d command%s from %d part%s\n" % (
            opts.output, count, "" if count == 1 else "s", len(opts.merge), "" if len(opts.merge) == 1 else "s"))
        return ExitCode.OK
    if not opts.file:
        raise FlagtraceError("lock: name the manifests with -f FILE|DIR|-", ExitCode.USAGE)
    opts.format, path, opts.output = "terminal", opts.output, None
    return render_gate(req, *gate(opts, launches(opts), req.asked, req.err, lock_out=path))
