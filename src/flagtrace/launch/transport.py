"""One transport invocation: start the remote agent through a ``--via`` prefix, feed it on stdin
(its source: agent_program.py after wire.py and the probe's proctable.py; then frames with the
header, the files as a zip, and the target's own stdin) and collect what it sends back after a
magic marker (the target's stdout/stderr apart, the files named in ``collect``), so they never mix
with the trace. Every failure of the transport is one line (``transport_failure``).
"""
import contextlib
import dataclasses
import io
import json
import os
import queue
import secrets
import signal
import stat
import subprocess
import threading
import time
import zipfile

from ..core.exitcodes import FlagtraceError
from ..probe.bootstrap.proctable import exit_status
from .local import PROBE_DIR, TOO_OLD
from .via import describe, transport_argv
from .wire import MAGIC, Prefixed, frame, read_frame


AGENT_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "agent_program.py")


WIRE_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "wire.py")


PROCTABLE_PATH = os.path.join(PROBE_DIR, "bootstrap", "proctable.py")


GRACE = 15.0  # beyond --timeout, for connecting and transfers, before the transport is killed


TRANSPORT_EXIT_WAIT = 5.0


_PACKED = {}


def pack_dir(path):
    """A folder's files (no caches) as a zip, built once per process."""
    if path not in _PACKED:
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
            for root, dirs, files in os.walk(path):
                dirs[:] = sorted(d for d in dirs if d != "__pycache__")
                for name in sorted(files):
                    if name.endswith((".pyc", ".pyo")):
                        continue
                    full = os.path.join(root, name)
                    zf.write(full, os.path.relpath(full, path))
        _PACKED[path] = buf.getvalue()
    return _PACKED[path]


def _agent_source():
    """What the loader runs on the remote side: the process-tree killer the probe uses here
    (bootstrap/proctable.py), the frames (wire.py), then the agent."""
    parts = []
    for path in (PROCTABLE_PATH, WIRE_PATH, AGENT_PATH):
        with open(path, "rb") as fh:
            parts.append(fh.read())
    return b"\n".join(parts)


@dataclasses.dataclass
class AgentResult:
    returncode: int
    stdout: bytes
    stderr: bytes
    files: dict  # name -> bytes, for the names in header["collect"] that existed
    seconds: float
    hello: dict  # the agent's interpreter: python, executable, host, pid
    transport_stderr: bytes


def run_agent(prefix, interpreter, header, files, timeout, on_wait=None, stdin_fd=0):
    """Start the agent through ``prefix`` (one invocation), feed it, and collect what it sends.

    ``header``: argv (with {python}, {files}, {request}, {workdir} placeholders), request, env,
    collect, resolve; the nonce and timeout are added here. ``files``: a zip, unpacked on the
    remote side into {files}. Raises FlagtraceError (exit 3) with one line for every failure."""
    header = dict(header, nonce=secrets.token_hex(16), timeout=timeout)
    argv = transport_argv(prefix, interpreter)
    label = "--via " + describe(prefix)
    try:
        proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    except OSError as exc:
        raise FlagtraceError("%s: cannot start %s: %s" % (label, prefix[0], exc.strerror))
    session = _Session(proc, header, files, stdin_fd)
    started = time.monotonic()
    try:
        session.start()
        deadline = started + timeout + GRACE
        while not session.finished:
            try:
                session.handle(session.frames.get(timeout=0.2))
            except queue.Empty:
                pass
            if time.monotonic() > deadline and not session.finished:
                session.stop(kill=True)
                raise FlagtraceError(
                    "the remote run did not finish within %gs (--timeout, plus %gs to connect); the "
                    "transport was killed (%s)" % (timeout, GRACE, label))
            if on_wait is not None:
                on_wait(time.monotonic() - started)
        session.stop()
    except BaseException:
        session.stop(kill=True)
        raise
    return session.result(label, interpreter)


class _Session:
    def __init__(self, proc, header, files, stdin_fd):
        self.proc = proc
        self.header = header
        self.files = files
        self.stdin_fd = stdin_fd
        self.frames = queue.Queue()
        self.lock = threading.Lock()
        self.closed = False
        self.finished = False
        self.seen_magic = False
        self.noise = b""
        self.errbuf = bytearray()
        self.got = {"O": b"", "E": b"", "F": {}, "R": None, "X": None, "V": {}, "D": False}
        self.threads = []

    # -- threads --------------------------------------------------------------------------
    def start(self):
        for fn in (self._feed, self._read_stdout, self._read_stderr):
            t = threading.Thread(target=fn, daemon=True)
            t.start()
            self.threads.append(t)

    def _write(self, data):
        with self.lock:
            if self.closed:
                raise BrokenPipeError
            self.proc.stdin.write(data)
            self.proc.stdin.flush()

    def _feed(self):
        agent = _agent_source()
        try:
            self._write(b"%d\n" % len(agent) + agent)
            self._write(frame(b"H", json.dumps(self.header).encode("utf-8")))
            self._write(frame(b"Z", self.files))
            if _forwardable(self.stdin_fd):
                while True:
                    data = os.read(self.stdin_fd, 65536)
                    if not data:
                        break
                    self._write(frame(b"I", data))
            self._write(frame(b"i", b""))
        except (OSError, ValueError):  # the transport is gone; the reader reports why
            pass

    def _read_stderr(self):
        with contextlib.suppress(OSError, ValueError):
            for chunk in iter(lambda: self.proc.stderr.read1(65536), b""):
                self.errbuf += chunk
                del self.errbuf[:-262144]

    def _read_stdout(self):
        stream = self.proc.stdout
        marker = MAGIC + self.header["nonce"].encode("ascii")
        buf = b""
        try:
            while True:
                chunk = stream.read1(65536)
                if not chunk:
                    self.noise = buf[-4096:]
                    return
                buf += chunk
                at = buf.find(marker)
                if at >= 0:
                    self.noise = buf[:at][-4096:]
                    rest = buf[at + len(marker):]
                    break
                if len(buf) > 1 << 20:
                    buf = buf[-(1 << 16):]
            self.seen_magic = True
            reader = Prefixed(rest, stream)
            while True:
                tag, payload = read_frame(reader)
                self.frames.put((tag.decode("ascii"), payload))
        except (OSError, ValueError, EOFError):
            return
        finally:
            self.frames.put(("EOF", None))

    # -- main thread ----------------------------------------------------------------------
    def handle(self, item):
        tag, payload = item
        if tag in ("O", "E"):
            self.got[tag] = payload
        elif tag == "F":
            name, _, data = payload.partition(b"\x00")
            self.got["F"][name.decode("utf-8")] = data
        elif tag in ("R", "X", "V"):
            self.got[tag] = json.loads(payload.decode("utf-8"))
        elif tag == "D":
            self.got["D"] = True
            self.finished = True
        elif tag == "EOF":
            self.finished = True

    def stop(self, kill=False):
        """Close the agent's stdin (it ends when it reads EOF), wait for the transport; kill it
        if asked to or if it lingers."""
        if kill:
            _kill_transport(self.proc)
        if self.lock.acquire(timeout=1.0):  # the feeder may be blocked writing to a dead transport
            try:
                self.closed = True
                with contextlib.suppress(OSError, ValueError):
                    self.proc.stdin.close()
            finally:
                self.lock.release()
        try:
            self.proc.wait(timeout=TRANSPORT_EXIT_WAIT)
        except subprocess.TimeoutExpired:
            _kill_transport(self.proc)
        for t in self.threads[1:]:  # the readers end with the transport; the feeder may wait on stdin
            t.join(timeout=2.0)
        for stream in (self.proc.stdout, self.proc.stderr):
            with contextlib.suppress(OSError, ValueError):
                stream.close()

    def result(self, label, interpreter):
        got = self.got
        err = bytes(self.errbuf)
        if got["X"]:
            x = got["X"]
            raise FlagtraceError(x.get("message") or "the remote run failed", detail=x.get("detail"))
        if got["D"] and got["R"] is not None:
            return AgentResult(got["R"].get("returncode"), got["O"], got["E"], got["F"],
                               got["R"].get("seconds", 0.0), got["V"], err)
        if not self.seen_magic:
            raise FlagtraceError(transport_failure(label, interpreter, self.proc.returncode, err))
        raise FlagtraceError("%s: the connection ended %s during the remote run%s; the agent there stops "
                             "its target when its stdin closes"
                             % (label, _ended(self.proc.returncode), _last_line(err, ": ")))


def _forwardable(fd):
    """The target gets our stdin when it is a pipe or a file (never a terminal)."""
    if fd is None:
        return False
    try:
        mode = os.fstat(fd).st_mode
        return not os.isatty(fd) and (stat.S_ISFIFO(mode) or stat.S_ISREG(mode) or stat.S_ISSOCK(mode))
    except OSError:
        return False


def _kill_transport(proc):
    from ..probe.bootstrap.proctable import descendants

    pids = descendants(proc.pid)
    for pid in [proc.pid] + pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
    with contextlib.suppress(Exception):
        proc.wait(timeout=5)


def _meaningful(text):
    out = []
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("@") or line.startswith("Warning: Permanently added"):
            continue
        out.append(line)
    return out


def _last_line(err, lead=""):
    lines = _meaningful(err.decode("utf-8", "replace"))
    return lead + lines[-1][:300] if lines else ""


def _ended(code):
    if code is None:
        return "(still running)"
    if code < 0:
        return "(the transport was killed by %s)" % exit_status(code, number=False)
    return "(transport exit status %d)" % code


def transport_failure(label, interpreter, code, err):
    """One line for a transport that ended before the agent started."""
    text = err.decode("utf-8", "replace")
    low = text.lower()
    last = _last_line(err)
    said = " (%s)" % last if last else ""
    if code == TOO_OLD and "flagtrace-remote:" in text:
        line = [ln for ln in text.splitlines() if "flagtrace-remote:" in ln][-1]
        return "%s: the remote interpreter is too old (%s); the probe needs Python 3.9 or newer" % (
            label, line.split("flagtrace-remote:", 1)[1].strip())
    if "remote host identification has changed" in low or "host key verification failed" in low:
        return ("%s: host key verification failed: the remote host's key does not match known_hosts (or is "
                "not in it)%s" % (label, said))
    if "connection refused" in low:
        return "%s: connection refused%s" % (label, said)
    if "permission denied" in low and code == 255:
        return "%s: authentication failed%s" % (label, said)
    if "could not resolve hostname" in low or "name or service not known" in low:
        return "%s: unknown host%s" % (label, said)
    if "timed out" in low and code == 255:
        return "%s: connection timed out%s" % (label, said)
    if "no route to host" in low or "network is unreachable" in low:
        return "%s: host unreachable%s" % (label, said)
    if "invalid literal for int()" in text and "flagtrace-agent" not in text:
        return ("%s: the remote side got no input: the prefix must forward stdin (ssh does; docker and "
                "kubectl need exec -i)" % label)
    if code in (126, 127):
        return "%s: the remote interpreter %s was not found or cannot run%s" % (label, interpreter, said)
    if code is not None and code < 0:
        return "%s: the transport was killed by %s before the remote run started" % (label, exit_status(code, number=False))
    return "%s: the transport failed (exit status %s) before the remote run started%s" % (label, code, said)
