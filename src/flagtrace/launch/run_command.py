"""``flagtrace run``: run a launch command (``bash launch.sh``) with the bootstrap sitecustomize
first on PYTHONPATH, so that every Python process under it records itself and the ones that
import a watched framework are probed; watch the process tree through /proc meanwhile; bring
back every record and trace as one run document (``flagtrace/run@1``).

Leaves nothing behind: the run directory is removed, and whatever still runs under the command
when it exits (or at the timeout) is killed and named.

The work itself is probe/bootstrap/supervise.py, which runs where the command runs: in this
process, or (``--via PREFIX``) inside the agent on the remote host (launch/remote.py, launch/transport.py), which
sends the run document back over the same single transport invocation.
"""
import shutil
import tempfile

from .. import __version__
from ..core.exitcodes import FlagtraceError
from ..probe.bootstrap.supervise import RunError, supervise
from . import remote

RUN_SCHEMA = "flagtrace/run@1"


def run_tree(command, request, timeout, on_wait=None, via=None, python=None):
    """Run ``command`` under the bootstrap, here or through ``via``; return the run document."""
    request = dict(request, flagtrace_version=__version__)
    if via:
        doc = remote.run_tree_remote(command, request, timeout, via, python, on_wait=on_wait)
    else:
        run_dir = tempfile.mkdtemp(prefix="flagtrace-run-")
        try:
            doc = supervise(command, request, timeout, run_dir, on_wait=on_wait)
        except RunError as exc:
            raise FlagtraceError(str(exc))
        finally:
            shutil.rmtree(run_dir, ignore_errors=True)
    return dict({"schema": RUN_SCHEMA, "flagtrace_version": __version__}, **doc)


__all__ = ["run_tree", "RUN_SCHEMA"]
