"""``--via PREFIX``: the transport a prefix names (ssh, docker exec, kubectl exec, ...), its usage
errors, and the one remote command line flagtrace runs through it.

That line is fixed: ``PYTHON -c LOADER`` (one shell-quoted word for ssh, which joins its argv into a
shell string; separate argv words for docker/kubectl, which do not). Everything else travels on the
transport's stdin (launch/transport.py). ``add_options`` adds --via/--python to any verb's parser.
"""
import os
import shlex

from ..core.exitcodes import ExitCode, FlagtraceError
from ..probe.values import REDACTED, is_secret_name
from .local import TOO_OLD


DEFAULT_PYTHON = "python3"


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


_SSH_VALUE_OPTIONS = set("BbcDEeFIiJLlmOoPpQRSWw")


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


def joins_into_shell(prefix):
    """Whether the transport hands the remote side one shell string (ssh) or an argv (docker)."""
    for word in prefix:
        name = os.path.basename(word)
        if name in SHELL_JOINERS:
            return True
        if name in ARGV_TRANSPORTS:
            return False
    return False


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


def redact_word(word):
    """``NAME=value`` with a secret NAME (``env HF_TOKEN=...``, ``-e HF_TOKEN=...`` in a prefix)."""
    name, sep, _ = word.partition("=")
    return name + "=" + REDACTED if sep and is_secret_name(name.lstrip("-")) else word
