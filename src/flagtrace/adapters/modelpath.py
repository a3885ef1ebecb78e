"""What can be checked of a launch command's model before starting a multi-second import."""
import json
import os

from ..core.exitcodes import ExitCode, FlagtraceError


def option_value(args, names):
    """The value of the last occurrence of an option (``--x v`` or ``--x=v``)."""
    value = None
    for i, tok in enumerate(args):
        for name in names:
            if tok == name and i + 1 < len(args):
                value = args[i + 1]
            elif tok.startswith(name + "="):
                value = tok.split("=", 1)[1]
    return value


def check_model_dir(path, option):
    """A local model directory must hold a readable config.json (no weights needed); a hub id
    (``org/name``) is left to the framework, which fetches its config itself."""
    if not os.path.exists(path):
        if path.startswith((".", "/", "~")) or path.count("/") != 1:
            raise FlagtraceError("%s %s does not exist" % (option, path), ExitCode.USAGE)
        return
    config = os.path.join(path, "config.json")
    if not os.path.isfile(config):
        raise FlagtraceError("%s %s has no config.json (flagtrace needs only that file, no "
                             "weights)" % (option, path), ExitCode.USAGE)
    try:
        with open(config, encoding="utf-8") as fh:
            json.load(fh)
    except (ValueError, UnicodeDecodeError) as exc:
        raise FlagtraceError("%s is not valid JSON: %s" % (config, exc), ExitCode.USAGE)
