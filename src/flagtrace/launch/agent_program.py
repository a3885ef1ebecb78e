"""flagtrace's agent on the remote side of ``--via``. Never imported by flagtrace itself: its
source travels on the transport's stdin, and the fixed one-line loader (via.LOADER) runs it.

Standard library only, Python >= 3.9, one file: the remote host has nothing but Python and the
framework. The agent is a small supervisor:

  stdin (from flagtrace)   frames 'H' header JSON, 'Z' files (zip, unpacked into a private temp
                           dir), then 'I' chunks of the target's stdin and 'i' (its end). The
                           stream then stays open: EOF means flagtrace or the transport is gone.
  stdout (to flagtrace)    MAGIC + nonce (anything a login shell printed before it is skipped),
                           then frames: 'V' hello, 'O' / 'E' the target's stdout / stderr,
                           'F' a collected file, 'R' result JSON, 'X' error JSON, 'D' done.

The target runs in a session of its own with its stdout/stderr in files, so nothing it prints
can mix with the frames. On EOF of stdin, SIGHUP/SIGTERM, or the deadline, the agent kills the
target's process group and every descendant, removes its temp dir and exits.

With ``tree`` in the header (``flagtrace run``) the target is a launch command: the probe's
bootstrap/supervise.py runs it under the bootstrap and watches its whole process tree here
(through /proc); the run document comes back as the file run.json.

The frames (MAGIC, frame, read_frame) are wire.py's; the process-tree killer (kill_tree), the #! reader
(shebang_python) and read_bytes are the probe's bootstrap/proctable.py: their sources arrive just
before this file's.
"""
import io
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import zipfile

if "read_frame" not in globals():  # run from its own file, not sent after wire.py's and proctable.py's source
    from flagtrace.launch.wire import MAGIC, frame, read_frame  # noqa: F401
    from flagtrace.probe.bootstrap.proctable import kill_tree, read_bytes, shebang_python  # noqa: F401


class Channel:
    """Frames to flagtrace on stdout; a broken pipe means flagtrace is gone."""

    def __init__(self, stream):
        self.stream = stream
        self.lock = threading.Lock()
        self.broken = False

    def raw(self, data):
        with self.lock:
            try:
                self.stream.write(data)
                self.stream.flush()
            except (OSError, ValueError):
                self.broken = True

    def send(self, tag, payload):
        self.raw(frame(tag, payload))

    def send_json(self, tag, doc):
        self.send(tag, json.dumps(doc))


def tail(data, lines=15):
    text = data.decode("utf-8", "replace").rstrip()
    return "\n".join(text.splitlines()[-lines:])


class Agent:
    def __init__(self, header, files, stdin, out):
        self.header = header
        self.files = files
        self.stdin = stdin
        self.out = out
        self.gone = threading.Event()
        self.proc = None
        self.workdir = None

    def fail(self, kind, message, detail=None):
        self.out.send_json(b"X", {"kind": kind, "message": message, "detail": detail})

    def run(self):
        for sig in (signal.SIGHUP, signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, lambda *_: self.gone.set())
        base = self.header.get("tmpdir") or None
        self.workdir = tempfile.mkdtemp(prefix="flagtrace-remote-", dir=base)
        try:
            self._run()
        except Exception as exc:  # the agent's own failure: one line for the user, the rest as detail
            import traceback

            self.fail("internal", "the flagtrace agent failed on the remote host: %s: %s"
                      % (type(exc).__name__, exc), traceback.format_exc())
        finally:
            if self.proc is not None and self.proc.poll() is None:
                kill_tree(self.proc)
            # processes killed a moment ago may still be writing into it: retry briefly
            for _ in range(60):
                shutil.rmtree(self.workdir, ignore_errors=True)
                if not os.path.exists(self.workdir):
                    break
                time.sleep(0.05)
            self.out.send(b"D", b"")

    def _subst(self, value, names):
        for key, repl in names.items():
            value = value.replace("{%s}" % key, repl)
        return value

    def _run(self):
        h = self.header
        workdir = self.workdir
        with zipfile.ZipFile(io.BytesIO(self.files)) as zf:
            zf.extractall(os.path.join(workdir, "files"))
        interpreter = sys.executable
        resolve = h.get("resolve") or {}
        request = h.get("request")
        script = resolve.get("script")
        if script:  # a console script, found on the remote PATH; it runs with its own #! Python
            path = script if os.sep in script else shutil.which(script)
            if not path or not os.path.isfile(path):
                return self.fail("no_command", "command not found on the remote host: %s (not on its "
                                 "PATH and not a file)" % script)
            path = os.path.abspath(path)
            if not resolve.get("explicit"):
                interpreter = shebang_python(path)
                if interpreter is None:
                    return self.fail("not_python", "%s on the remote host is not a Python program (no "
                                     "python #! line)" % path)
            if request is not None:
                request["target"] = path
        names = {"workdir": workdir, "files": os.path.join(workdir, "files"), "python": interpreter,
                 "request": os.path.join(workdir, "request.json")}
        if request is not None:
            request["trace_path"] = os.path.join(workdir, "trace.json")
            request["workdir"] = workdir
            with open(names["request"], "w", encoding="utf-8") as fh:
                json.dump(request, fh)
        argv = [self._subst(a, names) for a in h["argv"]]
        env = dict(os.environ)
        for key, value in (h.get("env") or {}).items():
            if value is None:
                env.pop(key, None)
            else:
                env[key] = self._subst(value, names)
        if h.get("tree") is not None:
            return self._run_tree(argv, env, names["files"])
        out_path, err_path = os.path.join(workdir, "stdout"), os.path.join(workdir, "stderr")
        timeout = float(h.get("timeout") or 300)
        started = time.monotonic()
        with open(out_path, "wb") as out, open(err_path, "wb") as err:
            try:
                self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=out, stderr=err, env=env,
                                             cwd=h.get("cwd") or None, start_new_session=True)
            except OSError as exc:
                return self.fail("cannot_start", "cannot start %s on the remote host: %s"
                                 % (argv[0], exc.strerror))
        threading.Thread(target=self._pump_stdin, daemon=True).start()
        while True:
            try:
                self.proc.wait(timeout=0.05)
                break
            except subprocess.TimeoutExpired:
                pass
            if self.gone.is_set() or self.out.broken:
                kill_tree(self.proc)
                return None
            if time.monotonic() - started > timeout:
                kill_tree(self.proc)
                return self.fail("timeout", "the target did not finish within %gs (--timeout); it and "
                                 "its children were killed on the remote host" % timeout,
                                 tail(read_bytes(err_path)))
        seconds = time.monotonic() - started
        # The target is done; anything it left running in its group goes too.
        kill_tree(self.proc, pids=[])
        self.out.send(b"O", read_bytes(out_path))
        self.out.send(b"E", read_bytes(err_path))
        for name in h.get("collect", []):
            path = os.path.join(workdir, name)
            if os.path.isfile(path):
                self.out.send(b"F", name.encode("utf-8") + b"\x00" + read_bytes(path))
        self.out.send_json(b"R", {"returncode": self.proc.returncode, "seconds": seconds})
        return None

    def _run_tree(self, argv, env, files):
        """flagtrace run: the probe's supervise.py (shipped in ``files``) runs the command under
        the bootstrap here and polls its process tree through /proc; the run document goes back
        as the file run.json. Everything the command started is killed when it exits, at the
        timeout, or as soon as flagtrace is gone (stdin closed, a signal)."""
        h = self.header
        supervise = load_probe_module(files, "bootstrap.supervise")
        run_dir = os.path.join(self.workdir, "run")
        os.mkdir(run_dir)
        try:
            doc = supervise.supervise(argv, h["tree"], float(h.get("timeout") or 300), run_dir, env=env,
                                      cwd=h.get("cwd") or None, stdin=subprocess.PIPE, on_start=self._started,
                                      stop=lambda: self.gone.is_set() or self.out.broken)
        except supervise.RunError as exc:
            return self.fail("cannot_start", "on the remote host: %s" % exc)
        except supervise.Stopped:
            return None
        self.out.send(b"F", b"run.json\x00" + json.dumps(doc).encode("utf-8"))
        self.out.send_json(b"R", {"returncode": doc.get("exit_status"), "seconds": doc.get("duration_s")})
        return None

    def _started(self, proc):
        self.proc = proc
        threading.Thread(target=self._pump_stdin, daemon=True).start()

    def _pump_stdin(self):
        """The target's stdin, then wait for EOF: flagtrace (or its transport) has gone away."""
        child = self.proc.stdin
        try:
            while True:
                tag, data = read_frame(self.stdin)
                if child is None:
                    continue
                try:
                    if tag == b"I":
                        child.write(data)
                        child.flush()
                    elif tag == b"i":
                        child.close()
                        child = None
                except (OSError, ValueError):  # the target closed its stdin: keep draining
                    child = None
        except (EOFError, OSError, ValueError):
            self.gone.set()


def load_probe_module(files, name):
    """``_flagtrace_probe.NAME`` from the probe unpacked in ``files``, loaded by its own
    bootstrap/loader.py (as the bootstrap of a traced process loads it)."""
    import importlib

    path = os.path.join(files, "bootstrap", "loader.py")
    namespace = {"__name__": "_flagtrace_loader", "__file__": path}
    with open(path, "rb") as fh:
        exec(compile(fh.read(), path, "exec"), namespace)
    namespace["load_probe"](files)
    return importlib.import_module("_flagtrace_probe." + name)


def main():
    stdin = sys.stdin.buffer
    out = Channel(sys.stdout.buffer)
    try:
        tag, raw = read_frame(stdin)
        header = json.loads(raw.decode("utf-8"))
        tag2, files = read_frame(stdin)
    except (EOFError, ValueError, OSError):
        return 3  # flagtrace went away (or is not on the other end)
    if tag != b"H" or tag2 != b"Z":
        sys.stderr.write("flagtrace agent: unexpected frames %r %r\n" % (tag, tag2))
        return 3
    out.raw(MAGIC + header["nonce"].encode("ascii"))
    out.send_json(b"V", {"python": "%d.%d.%d" % sys.version_info[:3], "executable": sys.executable,
                         "host": socket.gethostname(), "pid": os.getpid()})
    Agent(header, files, stdin, out).run()
    return 0


if __name__ == "__main__":
    code = main()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    finally:
        # not sys.exit: the stdin thread may still hold stdin's lock, which interpreter
        # shutdown would wait for
        os._exit(code)
