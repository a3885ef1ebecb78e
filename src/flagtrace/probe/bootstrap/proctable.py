"""Watch a process tree through /proc (Linux): which processes ran under a launch command, what
each one exec'd, with which argv and environment, and which are still alive.

``flagtrace run`` polls it while the command runs (supervise.py, on the host where the command
runs: here, or inside the ``--via`` agent on the remote host), so that a Python process that never
ran the bootstrap (``python -I``, ``-E``, ``-S``, a launcher that reset PYTHONPATH) is still listed.
Standard library only, Python >= 3.9: it is shipped with the probe.
A process that starts and ends between two polls can be missed: the bootstrap's own records
and the children its probed parents note cover most of those.

It is also the one home of what flagtrace and the code it ships (the probe, the ``--via`` agent,
which gets this file's source before its own) both ask of a process or a program: is it a Python
(is_python_path, shebang_python), its #! line (shebang), its output files (read_bytes), its exit
status in words (exit_status).
"""
import os
import re
import shutil
import signal

_PYTHON = re.compile(r"^(python|pypy)(\d+(\.\d+)*)?[a-z]?(\.exe)?$")
_KEEP_ENV = ("PYTHONPATH", "FLAGTRACE_RUN_DIR", "PYTHONHOME", "PYTHONNOUSERSITE")


def is_python_path(path):
    """Whether ``path`` (a program name or path) names a Python interpreter: python, python3.11, pypy3."""
    return bool(path) and bool(_PYTHON.match(os.path.basename(str(path))))


def shebang(path):
    """(the words of a file's #! line, its second line): ([], "") where it has none or cannot be read."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(512)
    except OSError:
        return [], ""
    if not head.startswith(b"#!"):
        return [], ""
    lines = head.decode("utf-8", "replace").splitlines()
    return lines[0][2:].strip().split(), lines[1] if len(lines) > 1 else ""


def shebang_python(path, which=shutil.which):
    """The Python interpreter a script (a console script) runs with, from its #! line; None if it is
    not Python. ``#!/usr/bin/env python3`` is looked up with ``which`` (None: only named)."""
    words, second = shebang(path)
    if words and os.path.basename(words[0]) == "env":
        words = [w for w in words[1:] if not w.startswith("-")]
        if which is not None:
            found = which(words[0]) if words else None
            words = [found] if found else []
    if words and is_python_path(words[0]):
        return words[0]
    # pip writes "#!/bin/sh" + "'''exec' /long/path/python "$0" "$@"" for long paths.
    if words and os.path.basename(words[0]) == "sh" and second:
        m = re.match(r"^'''exec' \"?([^\" ]+)\"? ", second)
        if m and is_python_path(m.group(1)):
            return m.group(1)
    return None


def read_bytes(path):
    """A file's bytes; b"" if it cannot be read (a process that never wrote it)."""
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except OSError:
        return b""


def exit_status(code, number=True):
    """A process's exit status in a message: "1", "-9 (SIGKILL)" (``number=False``: "SIGKILL")."""
    if code is not None and code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            return str(code)
        return "%d (%s)" % (code, name) if number else name
    return str(code)


def read_stat(pid):
    """(state, ppid, session, starttime) of ``pid``, or None when it is gone."""
    try:
        with open("/proc/%d/stat" % pid, "rb") as fh:
            data = fh.read()
    except OSError:
        return None
    try:
        rest = data.rsplit(b")", 1)[1].split()
        return rest[0].decode(), int(rest[1]), int(rest[3]), int(rest[19])
    except (IndexError, ValueError):
        return None


def read_cmdline(pid):
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as fh:
            raw = fh.read()
    except OSError:
        return None
    if not raw:
        return None
    return [os.fsdecode(w) for w in raw.split(b"\0")[:-1]] if raw.endswith(b"\0") else \
        [os.fsdecode(w) for w in raw.split(b"\0")]


def read_exe(pid):
    try:
        return os.readlink("/proc/%d/exe" % pid)
    except OSError:
        return None


def read_environ(pid):
    try:
        with open("/proc/%d/environ" % pid, "rb") as fh:
            raw = fh.read()
    except OSError:
        return None
    env = {}
    for item in raw.split(b"\0"):
        key, sep, value = item.partition(b"=")
        if sep:
            env[os.fsdecode(key)] = os.fsdecode(value)
    return env


def is_alive(pid):
    stat = read_stat(pid)
    return stat is not None and stat[0] not in ("Z", "X")


class ProcTable:
    """The processes of one session (the launch command runs in a session of its own) and
    every descendant of its leader, as seen over repeated ``scan()`` calls."""

    def __init__(self, root, relevant_env=None, on_env=None):
        self.root = root
        self.on_env = on_env  # sees each Python process's whole environment (to learn its secrets)
        self.members = {}  # pid -> dict
        self.others = set()
        self.relevant_env = relevant_env
        self.enabled = os.path.isdir("/proc/self")

    def scan(self):
        if not self.enabled:
            return
        try:
            entries = os.listdir("/proc")
        except OSError:
            return
        for entry in entries:
            if not entry.isdigit():
                continue
            pid = int(entry)
            if pid in self.members:
                self._refresh(pid)
                continue
            if pid in self.others:
                continue
            stat = read_stat(pid)
            if stat is None:
                continue
            state, ppid, session, start = stat
            if pid == self.root or session == self.root or ppid in self.members:
                self.members[pid] = {"pid": pid, "ppid": ppid, "start": start, "exe": None, "argv": None,
                                     "history": [], "python": False, "env": None, "alive": True}
                self._refresh(pid)
            else:
                self.others.add(pid)

    def _refresh(self, pid):
        member = self.members[pid]
        if not member["alive"]:
            return
        stat = read_stat(pid)
        if stat is None or stat[3] != member["start"] or stat[0] in ("Z", "X"):
            member["alive"] = False
            return
        exe = read_exe(pid)
        if exe is None or (exe == member["exe"] and member["argv"] is not None):
            return
        argv = read_cmdline(pid)
        if argv is None:
            return
        member["exe"] = exe
        if argv != member["argv"]:
            member["argv"] = argv
            member["history"].append(argv)
        python = is_python_path(exe) or is_python_path(argv[0] if argv else None)
        member["python"] = python  # of the program it runs now (it may exec another)
        if python and member["env"] is None:
            env = read_environ(pid)
            if env is not None:
                if self.on_env is not None:
                    self.on_env(env)
                kept = {k: v for k, v in env.items() if k in _KEEP_ENV}
                if self.relevant_env is not None:
                    kept.update(self.relevant_env(env))
                member["env"] = kept

    def alive(self, exclude=()):
        """Members still running (re-checked now)."""
        out = []
        for pid, member in sorted(self.members.items()):
            if pid in exclude:
                continue
            stat = read_stat(pid)
            if stat is not None and stat[3] == member["start"] and stat[0] not in ("Z", "X"):
                out.append(pid)
        return out

    def snapshot(self):
        return [dict(m, env=dict(m["env"]) if m["env"] is not None else None) for _, m in sorted(self.members.items())]


def descendants(pid):
    """Processes under ``pid`` (Linux /proc; elsewhere none), for those that left its group."""
    children = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return []
    for entry in entries:
        if entry.isdigit():
            stat = read_stat(int(entry))
            if stat is not None:
                children.setdefault(stat[1], []).append(int(entry))
    out, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def kill_tree(proc, pids=None):
    """SIGKILL ``proc``'s process group and ``pids`` (default: every descendant); reap ``proc``."""
    pids = descendants(proc.pid) if pids is None else pids
    for kill, pid in [(os.killpg, proc.pid)] + [(os.kill, p) for p in pids]:
        try:
            kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    try:
        proc.wait(timeout=5)
    except Exception:
        pass
