"""Run the target under the probe in a local subprocess and bring its trace back."""
import contextlib
import dataclasses
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time

from .. import __version__
from ..core.exitcodes import FlagtraceError
from ..probe.bootstrap.proctable import exit_status, kill_tree, read_bytes
from .command import Target

PROBE_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "probe")
TOO_OLD = 86  # the bootstrap's exit status when the interpreter is older than the probe supports

# Loads the probe from its source folder under a private name, adds nothing to sys.path
# (probe/bootstrap/loader.py: the same load_probe() that flagtrace run's sitecustomize uses).
with open(os.path.join(PROBE_DIR, "bootstrap", "loader.py"), encoding="utf-8") as _fh:
    LOADER_SOURCE = _fh.read()
BOOTSTRAP = (
    "import sys\n"
    "if sys.version_info < (3, 9):\n"
    "    sys.stderr.write('flagtrace: Python %d.%d is older than 3.9\\n' % sys.version_info[:2])\n"
    "    sys.exit(" + str(TOO_OLD) + ")\n"
    + LOADER_SOURCE +
    "load_probe(sys.argv[1])\n"
    "import _flagtrace_probe.main\n"
    "_flagtrace_probe.main.main(sys.argv[2])\n"
)


@dataclasses.dataclass
class RunResult:
    trace: dict
    returncode: int
    stdout: bytes
    stderr: bytes
    seconds: float


def stderr_tail(data, lines=15):
    text = data.decode("utf-8", "replace").rstrip()
    return "\n".join(text.splitlines()[-lines:])


def run_probe(target: Target, request: dict, timeout: float, env=None, on_wait=None, alongside=None) -> RunResult:
    """Start ``target`` under the probe; return its trace. Leaves no process or file behind.
    ``alongside(sources_hint)``, if given, starts work to run while the target does (see
    analysis/prewarm.py); it is stopped before this returns."""
    workdir = tempfile.mkdtemp(prefix="flagtrace-")
    proc = None
    try:
        trace_path = os.path.join(workdir, "trace.json")
        request = dict(request, trace_path=trace_path, workdir=workdir, mode=target.mode, target=target.target,
                       args=target.args, command=target.command, flagtrace_version=__version__)
        if alongside is not None:
            request["sources_hint"] = os.path.join(workdir, "sources")
        request_path = os.path.join(workdir, "request.json")
        with open(request_path, "w", encoding="utf-8") as fh:
            json.dump(request, fh)
        out_path = os.path.join(workdir, "stdout")
        err_path = os.path.join(workdir, "stderr")
        argv = [target.interpreter, *target.python_options, "-c", BOOTSTRAP, PROBE_DIR, request_path]
        started = time.monotonic()
        with open(out_path, "wb") as out, open(err_path, "wb") as err:
            try:
                proc = subprocess.Popen(argv, stdout=out, stderr=err, env=env,
                                        start_new_session=True)
            except OSError as exc:
                raise FlagtraceError("cannot start %s: %s" % (target.interpreter, exc.strerror))
            helper = alongside(request.get("sources_hint")) if alongside is not None else None
            try:
                _wait(proc, timeout, on_wait, started)
            except subprocess.TimeoutExpired:
                kill_tree(proc)
                raise FlagtraceError(
                    "the target did not finish within %gs (--timeout); it and its children were killed"
                    % timeout, detail=stderr_tail(read_bytes(err_path)))
            finally:
                if helper is not None:
                    helper.stop()
                if proc.poll() is None:
                    kill_tree(proc)
                else:
                    # The target is done; anything it left running in its group goes too.
                    with contextlib.suppress(ProcessLookupError, PermissionError):
                        os.killpg(proc.pid, signal.SIGKILL)
        seconds = time.monotonic() - started
        stdout, stderr = read_bytes(out_path), read_bytes(err_path)
        if proc.returncode == TOO_OLD and not os.path.exists(trace_path):
            raise FlagtraceError("%s is older than Python 3.9, which the probe needs"
                                 % target.interpreter)
        if not os.path.exists(trace_path):
            raise FlagtraceError(
                "the target exited with status %s before flagtrace could record anything"
                % exit_status(proc.returncode), detail=stderr_tail(stderr))
        with open(trace_path, encoding="utf-8") as fh:
            trace = json.load(fh)
        return RunResult(trace, proc.returncode, stdout, stderr, seconds)
    except KeyboardInterrupt:
        if proc is not None and proc.poll() is None:
            kill_tree(proc)
        raise
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def _wait(proc, timeout, on_wait, started):
    if on_wait is None:
        proc.wait(timeout=timeout)
        return
    while True:
        left = timeout - (time.monotonic() - started)
        if left <= 0:
            raise subprocess.TimeoutExpired(proc.args, timeout)
        try:
            proc.wait(timeout=min(0.2, left))
            return
        except subprocess.TimeoutExpired:
            on_wait(time.monotonic() - started)
