"""Turn the command a user typed after ``--`` into: which interpreter, and what it runs."""
import dataclasses
import os
import re
import shutil

from ..core.exitcodes import ExitCode, FlagtraceError
from ..probe.bootstrap.proctable import is_python_path, shebang_python
from ..probe.common.cmdline import python_options


@dataclasses.dataclass
class Target:
    command: list  # exactly what the user typed after --
    interpreter: str  # absolute path
    python_options: list  # e.g. ["-u", "-X", "dev"]
    mode: str  # "module" | "script" | "code"
    target: str  # module name, script path or code
    args: list  # what the target sees as sys.argv[1:]

    def describe(self):
        if self.mode == "module":
            return "python -m " + self.target
        if self.mode == "script":
            return self.target
        return "python -c ..."


def _which(word):
    if os.sep in word:
        return os.path.abspath(word) if os.path.isfile(word) and os.access(word, os.X_OK) else None
    return shutil.which(word)


_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")


def refuse_assignments(command):
    """A command pasted with its variables in front (``VAR=value python -m ...``, ``env VAR=value ...``): one usage
    line saying where they go (before flagtrace, where they reach the target and not flagtrace's own checks)."""
    words = list(command or [])
    skip = 1 if words[:1] == ["env"] else 0
    assignments = []
    while skip + len(assignments) < len(words) and _ASSIGNMENT.match(words[skip + len(assignments)]):
        assignments.append(words[skip + len(assignments)])
    if assignments or skip:
        rest = " ".join(words[skip + len(assignments):][:3])
        raise FlagtraceError(
            "the command starts with %s: put variables before flagtrace (%s flagtrace ... -- %s ...), where the "
            "target gets them and flagtrace's own checks do not; a script or manifest that sets them is read with -f"
            % ("variable assignments" if assignments else "env", " ".join(assignments) or "VAR=value", rest),
            ExitCode.USAGE)


def parse_command(command):
    refuse_assignments(command)
    if not command:
        raise FlagtraceError(
            "nothing to trace: give the launch command after --, e.g. "
            "flagtrace explain -- python -m sglang.launch_server --model-path DIR",
            ExitCode.USAGE,
        )
    first = command[0]
    if is_python_path(first):
        interpreter = _which(first)
        if interpreter is None:
            raise FlagtraceError("interpreter not found: %s" % first)
        return _parse_python_args(command, interpreter, command[1:])
    path = _which(first)
    if path is None:
        raise FlagtraceError("command not found: %s (not on PATH and not a file)%s" % (first, _release_hint(first)))
    interpreter = shebang_python(path)
    if interpreter is None:
        raise FlagtraceError(
            "%s is not a Python program (no python #! line); explain runs Python entry points "
            "such as 'python -m MODULE ...' or a console script like 'sglang serve ...'" % first
        )
    return Target(command, interpreter, [], "script", path, list(command[1:]))


def _release_hint(word):
    """For a framework's console script that is not installed here: which --release to add."""
    from ..core.frameworks import by_script, release_hint

    record = by_script(word)
    return "; " + release_hint(record.name) if record else ""


def python_command(command, rest):
    """(options, mode, target, args) of a Python command line whose interpreter words are
    ``command[: len(command) - len(rest)]``, read by the bootstrap's parser (the one every traced
    process uses). Usage errors for what cannot be traced."""
    parsed = python_options(["python"] + list(rest))
    mode, target = parsed["mode"], parsed["target"]
    shown = " ".join(command)
    if mode in ("module", "code") and not target:
        raise FlagtraceError("-%s expects an argument: %s" % (mode[0], shown), ExitCode.USAGE)
    if mode == "stdin":
        raise FlagtraceError("a program read from stdin cannot be traced; save it to a file", ExitCode.USAGE)
    if mode in ("interactive", "info"):
        raise FlagtraceError("no script or module to run in: %s (an interactive interpreter cannot be traced)"
                             % shown, ExitCode.USAGE)
    return parsed["options"], mode, target, parsed["args"]


def _parse_python_args(command, interpreter, rest):
    options, mode, target, args = python_command(command, rest)
    if mode == "script" and not os.path.isfile(target):
        raise FlagtraceError("script not found: %s" % target)
    return Target(command, interpreter, options, mode, target, list(args))
