"""explain / why / check and ``flagtrace run`` on another host: the target as the remote side
sees it (paths name files there), and one agent run per resolution (launch/transport.py) that brings
the trace, or the run document, back.

``run_remote`` is run_probe's twin: the same BOOTSTRAP in the remote interpreter. ``run_tree_remote``
sends the launch command with ``tree`` in the header, so the agent runs probe/bootstrap/supervise.py
there (the bootstrap on PYTHONPATH, the /proc watch of the command's tree, the timeout) and sends
the run document back as one file.
"""
import dataclasses
import json
import os

from .. import __version__
from ..core.exitcodes import FlagtraceError
from ..probe.bootstrap.proctable import exit_status, is_python_path
from .transport import pack_dir, run_agent
from .command import Target, parse_command, python_command
from .local import BOOTSTRAP, PROBE_DIR, TOO_OLD, RunResult, run_probe, stderr_tail
from .via import DEFAULT_PYTHON, describe, redact_word, split_via


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


@dataclasses.dataclass
class RemoteTarget(Target):
    console_script: bool = False  # command[0] is a program found (and its #! read) on the remote
    explicit_python: bool = False  # --python was given


def parse_remote_command(command, python=None):
    """Like parse_command, but nothing is looked up here: paths name files on the remote host."""
    if not command:
        return parse_command(command)  # the usage error
    first = command[0]
    if not is_python_path(first):
        return RemoteTarget(list(command), python or DEFAULT_PYTHON, [], "script", first, list(command[1:]),
                            console_script=True, explicit_python=bool(python))
    options, mode, target, args = python_command(command, command[1:])
    return RemoteTarget(list(command), python or first, options, mode, target, list(args),
                        explicit_python=bool(python))


def _env_changes(env):
    if env is None:
        return {}
    changes = {k: v for k, v in env.items() if os.environ.get(k) != v}
    changes.update({k: None for k in os.environ if k not in env})
    return changes


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
                             "record anything" % exit_status(res.returncode, number=False), detail=stderr_tail(res.stderr))
    try:
        trace = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise FlagtraceError("the trace that came back from the remote host is not JSON")
    return RunResult(trace, res.returncode, res.stdout, res.stderr, res.seconds)


def run_tree_remote(command, request, timeout, via, python=None, on_wait=None, stdin_fd=0):
    """launch/run_command.py's run on the remote host, one transport call: the agent (run by ``python``,
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
    doc["via"] = {"transport": describe([redact_word(w) for w in prefix]), "host": hello.get("host"),
                  "python": hello.get("python"), "executable": hello.get("executable")}
    return doc
