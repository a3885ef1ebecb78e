"""What every verb gets (a Request) and the set-up verbs that run a command share: the report's
file writable, the command taken from ``-f FILE`` (engine/deployment.py), the ``--release`` built."""
import dataclasses

from .. import report as reporters
from ..core.exitcodes import ExitCode, FlagtraceError
from ..core.asked import Asked
from ..engine import releases


@dataclasses.dataclass
class Request:
    """A verb's request: its options (the argparse Namespace stops at the verbs), the command after
    ``--`` (None: none), where its output and messages go, and (with -f) the launch it came from."""
    opts: object
    command: object
    out: object
    err: object
    launch: object = None
    prepared: bool = False

    @property
    def asked(self):
        return asked_of(self.opts)


def asked_of(opts):
    """The typed request launch/ and adapters/ read (the Namespace stops here)."""
    python = getattr(opts, "python", None)
    return Asked(adapter=getattr(opts, "adapter", "auto"), watch=tuple(getattr(opts, "watch", ()) or ()),
                 stop_at=tuple(getattr(opts, "stop_at", ()) or ()), via=getattr(opts, "via", None),
                 python=python if isinstance(python, str) else None,  # diff/matrix: a list of sides
                 from_trace=getattr(opts, "from_trace", None), model_config=getattr(opts, "model_config", None),
                 offline=bool(getattr(opts, "offline", False)))


def writable(req):
    """Usage errors for a report or trace file that cannot be written, before anything runs."""
    opts = req.opts
    reporters.check_writable(getattr(opts, "output", None), getattr(opts, "save_trace", None))


def launches(req):
    """The launches of the ``-f`` files ([Launch]; None: no -f)."""
    if not getattr(req.opts, "file", None):
        return None
    if req.command:
        raise FlagtraceError("give -f FILE or a command after --, not both", ExitCode.USAGE)
    from ..engine import deployment  # deploy/'s readers load only for -f

    return deployment.launches(req.opts)


def take(req, found):
    """``req`` set for its command: the one launch of ``found`` (-f) taken, then each --release built
    and in place."""
    opts = req.opts
    if found is not None:
        from ..engine import deployment

        req.launch, req.command = deployment.take(opts, deployment.one_launch(found, req.err), req.err)
    if getattr(opts, "release", None):
        req.command, sides = releases.apply_releases(opts.verb, opts.release, req.command,
                                                     getattr(opts, "python", None), getattr(opts, "via", None),
                                                     getattr(opts, "offline", False), req.err)
        if opts.verb in ("diff", "matrix"):
            opts.python = sides
    return req


def prepare(req):
    """The set-up of a verb that runs a command: writable(), launches(), take(); once (a second call,
    from what the verb shares, finds it done)."""
    if req.prepared:
        return req
    writable(req)
    take(req, launches(req))
    req.prepared = True
    return req
