"""``flagtrace lock -f FILE... [-o LOCK]``: each deployment command's resolved values, for check --lock
(the resolution and the lock file: deployment.py)."""
from . import deployment, options
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


def run(req):
    writable(req)
    return deployment.run_lock(req.opts, req.asked, req.out, req.err)
