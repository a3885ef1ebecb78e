"""``--via PREFIX``: run the target on another host (ssh, docker exec, kubectl exec, ...) under the
probe, with exactly one transport invocation, and bring its trace back.

The remote command line is fixed: ``PYTHON -c LOADER`` (one shell-quoted word for ssh, which
joins its argv into a shell string; separate argv words for docker/kubectl, which do not).
Everything else travels on the transport's stdin: the agent's source (remote_agent.py), then
frames with the header (the request, the argv as JSON), the probe package as a zip, and the
target's own stdin. The agent answers on stdout after a magic marker, with frames of its own;
the target's stdout/stderr are captured apart on the remote side and sent as frames, so they
never mix with the trace. See remote_agent.py for the frame format.

``run_agent`` takes any argv / env / files / collect list; ``flagtrace run --via`` uses it
through ``run_tree_remote``: the same probe zip, the launch command as argv, and ``tree`` in the
header, so the agent runs probe/bootstrap/supervise.py there (the bootstrap on PYTHONPATH, the
/proc watch of the command's tree, the timeout) and sends the run document back as one file.
``add_options`` adds --via/--python to any verb's parser.
"""
import contextlib
import dataclasses
import io
import json
import os
import queue
import secrets
import shlex
import signal
import stat
import subprocess
import threading
import time
import zipfile

from .. import __version__
from ..exitcodes import ExitCode, FlagtraceError
from ..probe.values import REDACTED, is_secret_name
from .wire import MAGIC, Prefixed, frame, read_frame
from .command import Target, is_python_name, parse_command, python_command
from .local import BOOTSTRAP, PROBE_DIR, TOO_OLD, RunResult, run_probe, stderr_tail

AGENT_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "remote_agent.py")
WIRE_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "wire.py")
PROCTABLE_PATH = os.path.join(PROBE_DIR, "bootstrap", "proctable.py")
DEFAULT_PYTHON = "python3"
GRACE = 15.0  # beyond --timeout, for connecting and transfers, before the transport is killed
TRANSPORT_EXIT_WAIT = 5.0

# One line, no newline, no backslash, no "!": survives sh, bash, zsh, fish and csh quoting.
# Refuses Pythons older than 3.9 (even Python 2), then runs the agent read from stdin.
LOADER = (
    "import sys;v=sys.version_info;"
    "v<(3,9) and (sys.stderr.write(\"flagtrace-remote: Python %d.%d.%d at %s\""
    "%(v[0],v[1],v[2],sys.executable)+chr(10)),sys.exit(" + str(TOO_OLD) + "));"
    "r=sys.stdin.buffer;exec(compile(r.read(int(r.readline())),\"flagtrace-agent\",\"exec\"))"
)

# Transports that join their argv into one shell command line on the other side.
SHELL_JOINERS = {"ssh", "autossh", "ssh.exe"}
# Transports that pass argv on as is.
ARGV_TRANSPORTS = {"docker", "podman", "nerdctl", "kubectl", "oc", "lxc", "incus", "env", "apptainer",
                   "singularity", "enroot", "nsenter", "chroot", "machinectl", "srun"}


# -- options --------------------------------------------------------------------------------
def add_options(parser):
    parser.add_argument("--via", metavar="PREFIX",
                        help="run the target on another host through this command prefix, e.g. "
                             "'ssh -p 19248 root@gpu-box', 'docker exec -i ctr', 'kubectl exec -i pod --'")
    parser.add_argument("--python", metavar="PATH",
                        help="with --via: the remote interpreter (default: the command's own python "
                             "word, or %s for a console script)" % DEFAULT_PYTHON)


def check_options(asked):
    """Usage errors of --via / --python (exit 64)."""
    via = asked.via
    if asked.python and via is None:
        raise FlagtraceError("--python names the remote interpreter; it needs --via PREFIX", ExitCode.USAGE)
    if via is None:
        return
    if asked.from_trace:
        raise FlagtraceError("--via runs a command on another host; it cannot be combined with --from",
                             ExitCode.USAGE)
    split_via(via)


def split_via(via):
    try:
        prefix = shlex.split(via)
    except ValueError as exc:
        raise FlagtraceError("--via %r: %s" % (via, exc), ExitCode.USAGE)
    if not prefix:
        raise FlagtraceError("--via needs a command prefix, e.g. --via 'ssh user@gpu-box'", ExitCode.USAGE)
    tty = tty_option(prefix)
    if tty:
        raise FlagtraceError("--via: %s asks for a terminal, which would mangle flagtrace's binary stream; "
                             "drop it (stdin is forwarded without one: ssh as is, docker/kubectl exec -i)" % tty,
                             ExitCode.USAGE)
    return prefix


_SSH_FLAGS = set("46AaCfGgKkMNnqsTtVvXxYy")  # ssh options without a value
_EXEC_TRANSPORTS = {"docker", "podman", "nerdctl", "kubectl", "oc"}


def tty_option(prefix):
    """The word of ``prefix`` that would make the transport allocate a terminal, if any."""
    kind, expect_value, tees = None, False, 0
    for word in prefix:
        name = os.path.basename(word)
        if kind is None:
            kind = "ssh" if name in SHELL_JOINERS else "exec" if name in _EXEC_TRANSPORTS else None
            continue
        if word == "--":
            break
        if kind == "ssh":
            if expect_value:
                expect_value = False
                if word.lower().replace(" ", "").startswith("requesttty=force"):
                    return "-o " + word
                continue
            if not word.startswith("-") or word == "-":
                break  # the destination: what follows is the remote command
            if set(word[1:]) <= _SSH_FLAGS:
                tees += word.count("t")
                if tees >= 2:  # -tt forces a terminal (a single -t is ignored: stdin is a pipe)
                    return word
            elif word[1] in _SSH_VALUE_OPTIONS:
                if len(word) == 2:
                    expect_value = True
                elif word[1] == "o" and word[2:].lower().replace(" ", "").startswith("requesttty=force"):
                    return word
        elif word in ("-t", "-it", "-ti", "--tty", "--tty=true", "-t=true"):
            return word
    return None


def parse_target(command, asked):
    """The target of ``command``: on this machine, or (with --via) on the remote host."""
    if asked.via:
        return parse_remote_command(command, asked.python)
    return parse_command(command)


def launcher(asked):
    """A function with run_probe's signature that runs where the options say."""
    via = asked.via
    if not via:
        return run_probe

    def launch(target, request, timeout, env=None, on_wait=None, alongside=None):
        helper = alongside(None) if alongside is not None else None  # no sources named from afar
        try:
            return run_remote(target, request, timeout, via, env=env, on_wait=on_wait)
        finally:
            if helper is not None:
                helper.stop()

    return launch


# -- the remote command ---------------------------------------------------------------------
@dataclasses.dataclass
class RemoteTarget(Target):
    console_script: bool = False  # command[0] is a program found (and its #! read) on the remote
    explicit_python: bool = False  # --python was given


def parse_remote_command(command, python=None):
    """Like parse_command, but nothing is looked up here: paths name files on the remote host."""
    if not command:
        return parse_command(command)  # the usage error
    first = command[0]
    if not is_python_name(first):
        return RemoteTarget(list(command), python or DEFAULT_PYTHON, [], "script", first, list(command[1:]),
                            console_script=True, explicit_python=bool(python))
    options, mode, target, args = python_command(command, command[1:])
    return RemoteTarget(list(command), python or first, options, mode, target, list(args),
                        explicit_python=bool(python))


def joins_into_shell(prefix):
    """Whether the transport hands the remote side one shell string (ssh) or an argv (docker)."""
    for word in prefix:
        name = os.path.basename(word)
        if name in SHELL_JOINERS:
            return True
        if name in ARGV_TRANSPORTS:
            return False
    return False


_SSH_VALUE_OPTIONS = set("BbcDEeFIiJLlmOoPpQRSWw")


def describe(prefix):
    """A short name for the transport in messages: ssh's destination and port, else the prefix."""
    for i, word in enumerate(prefix):
        if os.path.basename(word) not in SHELL_JOINERS:
            continue
        port, dest, j = None, None, i + 1
        while j < len(prefix):
            w = prefix[j]
            if w.startswith("-") and len(w) > 1:
                flag = w[1:2]
                if flag in _SSH_VALUE_OPTIONS:
                    value = w[2:] if len(w) > 2 else (prefix[j + 1] if j + 1 < len(prefix) else "")
                    if flag == "p":
                        port = value
                    j += 1 if len(w) > 2 else 2
                    continue
                j += 1
                continue
            dest = w
            break
        if dest:
            return "ssh %s%s" % (dest, " -p %s" % port if port else "")
    text = shlex.join(prefix)
    return text if len(text) <= 80 else text[:77] + "..."


def transport_argv(prefix, interpreter):
    remote = [interpreter, "-c", LOADER]
    if joins_into_shell(prefix):
        return list(prefix) + [" ".join(shlex.quote(w) for w in remote)]
    return list(prefix) + remote


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


def _env_changes(env):
    if env is None:
        return {}
    changes = {k: v for k, v in env.items() if os.environ.get(k) != v}
    changes.update({k: None for k in os.environ if k not in env})
    return changes


# -- explain / why / check over a transport -------------------------------------------------
def run_remote(target, request, timeout, via, env=None, on_wait=None, stdin_fd=0):
    """run_probe's remote twin: the same BOOTSTRAP in the remote interpreter, one transport call."""
    prefix = split_via(via)
    console = getattr(target, "console_script", False)
    request = dict(request, mode=target.mode, target=target.target, args=list(target.args),
                   command=list(target.command), flagtrace_version=__version__)
    header = {
        "request": request,
        "resolve": {"script": target.target, "explicit": getattr(target, "explicit_python", False)}
        if console else None,
        "argv": ["{python}"] + list(target.python_options) + ["-c", BOOTSTRAP, "{files}", "{request}"],
        "env": _env_changes(env),
        "collect": ["trace.json"],
    }
    res = run_agent(prefix, target.interpreter, header, pack_dir(PROBE_DIR), timeout, on_wait=on_wait,
                    stdin_fd=stdin_fd)
    raw = res.files.get("trace.json")
    if raw is None:
        if res.returncode == TOO_OLD:
            raise FlagtraceError("the remote interpreter is older than Python 3.9, which the probe needs: %s"
                                 % stderr_tail(res.stderr, 1))
        raise FlagtraceError("the target exited with status %s on the remote host before flagtrace could "
                             "record anything" % _status(res.returncode), detail=stderr_tail(res.stderr))
    try:
        trace = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise FlagtraceError("the trace that came back from the remote host is not JSON")
    return RunResult(trace, res.returncode, res.stdout, res.stderr, res.seconds)


# -- flagtrace run over a transport ------------------------------------------------------------
def run_tree_remote(command, request, timeout, via, python=None, on_wait=None, stdin_fd=0):
    """launch/tree.py's run on the remote host, one transport call: the agent (run by ``python``,
    default python3) runs ``command`` through the probe's supervise.py there and returns the run
    document, with where it ran added as ``via``."""
    prefix = split_via(via)
    header = {"request": None, "argv": list(command), "env": {}, "collect": [], "tree": request}
    res = run_agent(prefix, python or DEFAULT_PYTHON, header, pack_dir(PROBE_DIR), timeout, on_wait=on_wait,
                    stdin_fd=stdin_fd)
    raw = res.files.get("run.json")
    if raw is None:
        raise FlagtraceError("--via %s: the remote run sent no result back" % describe(prefix))
    try:
        doc = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise FlagtraceError("the run document that came back from the remote host is not JSON")
    hello = res.hello or {}
    doc["via"] = {"transport": describe([_redact_word(w) for w in prefix]), "host": hello.get("host"),
                  "python": hello.get("python"), "executable": hello.get("executable")}
    return doc


def _redact_word(word):
    """``NAME=value`` with a secret NAME (``env HF_TOKEN=...``, ``-e HF_TOKEN=...`` in a prefix)."""
    name, sep, _ = word.partition("=")
    return name + "=" + REDACTED if sep and is_secret_name(name.lstrip("-")) else word


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


# -- what went wrong ------------------------------------------------------------------------
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
        return "(the transport was killed by %s)" % _status(code)
    return "(transport exit status %d)" % code


def _status(code):
    if code is not None and code < 0:
        try:
            return signal.Signals(-code).name
        except ValueError:
            return str(code)
    return str(code)


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
        return "%s: the transport was killed by %s before the remote run started" % (label, _status(code))
    return "%s: the transport failed (exit status %s) before the remote run started%s" % (label, code, said)
