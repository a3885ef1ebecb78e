"""A variant's command line: ``--set``, ``--unset``, ``--env`` (and a renamed option) applied to the
command as typed."""
import shlex

from ...core.exitcodes import ExitCode, FlagtraceError


def edited_command(target, args):
    """The command as typed, with the target's arguments replaced by ``args``."""
    head = target.command[:len(target.command) - len(target.args)] if target.args else list(target.command)
    return list(head) + list(args)


def edits(sets=(), unsets=(), envs=()):
    """``--set "--flag v"``, ``--unset --flag``, ``--env K=V`` as [(kind, words)]; usage errors here."""
    out = []
    for text in sets:
        words = shlex.split(text)
        if not words or not words[0].startswith("-"):
            raise FlagtraceError("--set takes an option and its value, e.g. --set \"--page-size 64\"; got %r"
                                 % text, ExitCode.USAGE)
        out.append(("set", words))
    for flag in unsets:
        if not flag.startswith("-"):
            raise FlagtraceError("--unset takes an option name, e.g. --unset --page-size; got %r" % flag,
                                 ExitCode.USAGE)
        out.append(("unset", [flag]))
    for item in envs:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise FlagtraceError("--env takes KEY=VALUE (KEY= to remove it); got %r" % item, ExitCode.USAGE)
        out.append(("env", [key, value]))
    return out


def apply(args, changes):
    """(args, env changes, label) of the command with ``changes`` (from edits()) applied: a set
    option replaces the one typed, an unset one goes back to its default."""
    env, label = {}, []
    for kind, words in changes:
        if kind == "env":
            key, value = words
            env[key] = value or None
            label.append("%s=%s" % (key, value) if value else "without $%s" % key)
            continue
        if kind == "rename":  # an option the parser refused, spelled as it suggested
            old, new = words
            args = [new + w[len(old):] if w == old or w.startswith(old + "=") else w for w in args]
            label.append("%s instead of %s" % (new, old))
            continue
        args = without(args, words[0].split("=", 1)[0])
        if kind == "set":
            args = args + words
            label.append(" ".join(words))
        else:
            label.append("without %s" % words[0])
    return args, env, "with " + ", ".join(label) if label else "as typed"


def without(args, flag):
    """``args`` without ``flag`` (``--flag v``, ``--flag=v``, or a bare switch)."""
    out, skip = [], False
    for i, word in enumerate(args):
        if skip:
            skip = False
            continue
        if word == flag:
            nxt = args[i + 1] if i + 1 < len(args) else None
            skip = nxt is not None and not nxt.startswith("-")
            continue
        if word.startswith(flag + "="):
            continue
        out.append(word)
    return out
