"""A real OpenSSH server on 127.0.0.1 for the --via tests (and bench/remote.py).

``SshServer`` generates a host key and a client key in a private folder, writes an sshd_config
(key login only, PidFile and AuthorizedKeysFile in that folder, ``StrictModes no``, the sessions'
TMPDIR in that folder too so the tests can see what the remote side leaves behind) and runs
``sshd -D`` on a free non-standard port. ``client`` is the ssh command line that reaches it with
strict host key checking against a known_hosts file holding the generated host key.

The pytest fixtures share one server per session (``shared()``), whichever test module asks."""
import contextlib
import getpass
import os
import shlex
import shutil
import socket
import subprocess
import tempfile
import threading
import time

SSHD = "/usr/sbin/sshd"
SSH = shutil.which("ssh") or "/usr/bin/ssh"
SSH_KEYGEN = shutil.which("ssh-keygen") or "/usr/bin/ssh-keygen"


def available():
    """None if a test server can run here, else the reason."""
    for path in (SSHD, SSH, SSH_KEYGEN):
        if not os.path.exists(path):
            return "%s is missing (apt-get install -y openssh-server openssh-client)" % path
    return None


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _keygen(path, comment):
    subprocess.run([SSH_KEYGEN, "-q", "-t", "ed25519", "-N", "", "-C", comment, "-f", path], check=True,
                   stdin=subprocess.DEVNULL)


def _children(pid):
    table = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open("/proc/%s/stat" % entry) as fh:
                    rest = fh.read().rsplit(")", 1)[1].split()
                table[int(entry)] = (rest[0], int(rest[1]))
            except (OSError, ValueError, IndexError):
                continue
    kids = {}
    for p, (state, ppid) in table.items():
        kids.setdefault(ppid, []).append(p)
    out, todo = [], [pid]
    while todo:
        for child in kids.get(todo.pop(), []):
            todo.append(child)
            if table[child][0] != "Z":
                out.append(child)
    return sorted(out)


class SshServer:
    def __init__(self, folder=None):
        self.dir = folder or tempfile.mkdtemp(prefix="ft-sshd-")
        self._own_dir = folder is None
        self.port = None
        self.proc = None
        self.user = getpass.getuser()
        self.host_key = os.path.join(self.dir, "host_ed25519")
        self.client_key = os.path.join(self.dir, "client_ed25519")
        self.other_key = os.path.join(self.dir, "stranger_ed25519")  # not authorised
        self.known_hosts = os.path.join(self.dir, "known_hosts")
        self.wrong_known_hosts = os.path.join(self.dir, "known_hosts.wrong")
        self.authorized_keys = os.path.join(self.dir, "authorized_keys")
        self.config = os.path.join(self.dir, "sshd_config")
        self.log = os.path.join(self.dir, "sshd.log")
        self.remote_tmp = os.path.join(self.dir, "remote-tmp")

    # -- life cycle -------------------------------------------------------------------------
    def start(self):
        reason = available()
        if reason:
            raise RuntimeError(reason)
        os.makedirs(self.remote_tmp, exist_ok=True)
        if os.geteuid() == 0 and not os.path.isdir("/run/sshd"):
            os.makedirs("/run/sshd", mode=0o755, exist_ok=True)  # sshd's privilege separation dir
        for path, comment in ((self.host_key, "ft-host"), (self.client_key, "ft-client"),
                              (self.other_key, "ft-stranger")):
            if not os.path.exists(path):
                _keygen(path, comment)
        with open(self.client_key + ".pub") as fh:
            pub = fh.read()
        with open(self.authorized_keys, "w") as fh:
            fh.write(pub)
        with open(self.config, "w") as fh:
            fh.write("\n".join([
                "ListenAddress 127.0.0.1",
                "HostKey %s" % self.host_key,
                "PidFile %s" % os.path.join(self.dir, "sshd.pid"),
                "AuthorizedKeysFile %s" % self.authorized_keys,
                "StrictModes no",
                "PermitRootLogin prohibit-password",
                "PubkeyAuthentication yes",
                "PasswordAuthentication no",
                "KbdInteractiveAuthentication no",
                "UsePAM no",
                "MaxStartups 200",
                "MaxSessions 100",
                "SetEnv TMPDIR=%s" % self.remote_tmp,
                "LogLevel INFO",
                "",
            ]))
        for attempt in range(5):
            self.port = free_port()
            self._write_known_hosts()
            with open(self.log, "ab") as log:
                self.proc = subprocess.Popen([SSHD, "-D", "-e", "-f", self.config, "-p", str(self.port)],
                                             stdin=subprocess.DEVNULL, stdout=log, stderr=log)
            if self._wait_ready():
                self.wait_idle()  # the readiness probe's own connection process
                return self
            self._stop_proc()
        raise RuntimeError("sshd did not start; its log:\n%s" % self.log_text())

    def _write_known_hosts(self):
        with open(self.host_key + ".pub") as fh:
            kind, key = fh.read().split()[:2]
        with open(self.known_hosts, "w") as fh:
            fh.write("[127.0.0.1]:%d %s %s\n" % (self.port, kind, key))
        with open(self.other_key + ".pub") as fh:  # another key for this host: a "changed" host key
            kind, key = fh.read().split()[:2]
        with open(self.wrong_known_hosts, "w") as fh:
            fh.write("[127.0.0.1]:%d %s %s\n" % (self.port, kind, key))

    def _wait_ready(self, seconds=10.0):
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                return False
            with contextlib.suppress(OSError):
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5) as s:
                    s.settimeout(2.0)
                    if s.recv(64).startswith(b"SSH-"):
                        return True
            time.sleep(0.05)
        return False

    def _stop_proc(self):
        if self.proc is None:
            return
        for pid in _children(self.proc.pid):
            with contextlib.suppress(OSError):
                os.kill(pid, 9)
        with contextlib.suppress(OSError):
            self.proc.terminate()
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=5)

    def stop(self):
        self._stop_proc()
        self.proc = None
        if self._own_dir:
            shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    # -- clients ----------------------------------------------------------------------------
    def client(self, key=None, known_hosts=None, port=None):
        """The ssh command line (a list) that reaches this server."""
        return [SSH, "-F", "/dev/null", "-p", str(port or self.port), "-i", key or self.client_key,
                "-o", "IdentitiesOnly=yes", "-o", "UserKnownHostsFile=%s" % (known_hosts or self.known_hosts),
                "-o", "StrictHostKeyChecking=yes", "-o", "BatchMode=yes", "-o", "ConnectTimeout=10",
                "%s@127.0.0.1" % self.user]

    def via(self, **kw):
        """The same, as the one string ``--via`` takes."""
        return shlex.join(self.client(**kw))

    # -- what is left on the "remote" side ----------------------------------------------------
    def sessions(self):
        """Live processes under the listening sshd: connections, the agent, its target."""
        return _children(self.proc.pid) if self.proc else []

    def remote_leftovers(self, seconds=10.0):
        """The remote temp dirs still there after ``seconds`` (empty when none). An agent whose
        connection was killed is re-parented away from sshd (no longer in sessions()) while it still
        kills its target and removes its dir: wait for that, as a user's box would."""
        deadline = time.monotonic() + seconds
        while os.listdir(self.remote_tmp) and time.monotonic() < deadline:
            time.sleep(0.05)
        return sorted(os.listdir(self.remote_tmp))

    def wait_idle(self, seconds=10.0):
        """Wait for every session to end; returns what is still running (empty when idle)."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if not self.sessions():
                return []
            time.sleep(0.05)
        return self.sessions()

    def log_text(self):
        try:
            with open(self.log, errors="replace") as fh:
                return fh.read()[-4000:]
        except OSError:
            return ""


_shared = {"server": None, "users": 0}
_lock = threading.Lock()


def acquire():
    """The session's server, started on first use (fixtures in several modules share it)."""
    with _lock:
        if _shared["server"] is None:
            _shared["server"] = SshServer().start()
        _shared["users"] += 1
        return _shared["server"]


def release():
    with _lock:
        _shared["users"] -= 1
        if _shared["users"] == 0 and _shared["server"] is not None:
            _shared["server"].stop()
            _shared["server"] = None


SHIM = '''#!%(python)s
# flagtrace test shim: records one JSON line per transport invocation (its argv), then execs it.
import json, os, sys
with open(%(log)r, "a") as fh:
    fh.write(json.dumps(sys.argv[1:]) + "\\n")
os.execvp(sys.argv[1], sys.argv[1:])
'''


def recording_prefix(prefix, folder):
    """``prefix`` behind a shim that logs every invocation; returns (new prefix, read_log)."""
    import sys

    log = os.path.join(folder, "invocations.jsonl")
    shim = os.path.join(folder, "count-transport")
    with open(shim, "w") as fh:
        fh.write(SHIM % {"python": sys.executable, "log": log})
    os.chmod(shim, 0o755)

    def read_log():
        import json

        try:
            with open(log) as fh:
                return [json.loads(line) for line in fh if line.strip()]
        except FileNotFoundError:
            return []

    return [shim] + list(prefix), read_log
