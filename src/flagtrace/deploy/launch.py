"""Reading files and folders (``-f``) into framework launches: each file handed to the first reader that
recognises it (readers.READERS)."""
import os
import sys

from ..core.exitcodes import ExitCode, FlagtraceError
from .entry_points import recognise  # noqa: F401  (the names this module has always offered)
from .model import Artifact, Launch, Token  # noqa: F401
from .readers import READERS


def read_paths(paths, stdin=None):
    """Every launch the files (folders: their *.yaml, *.yml, *.json, *.sh, *.txt files) hold, in order:
    [(path, [Launch])], a file with none included (its list empty)."""
    out = []
    for path in paths:
        if path == "-":
            out.append(("-", read_text((stdin or sys.stdin).read(), "-")))
            continue
        if os.path.isdir(path):
            found = sorted(os.path.join(folder, name) for folder, _, names in os.walk(path) for name in names
                           if name.lower().endswith((".yaml", ".yml", ".json", ".sh", ".txt")))
            if not found:
                raise FlagtraceError("-f %s: a folder with no .yaml/.yml/.json/.sh file" % path, ExitCode.USAGE)
            out += [(p, read_file(p)) for p in found]
        elif os.path.isfile(path):
            out.append((path, read_file(path)))
        else:
            raise FlagtraceError("-f %s: no such file or folder" % path, ExitCode.USAGE)
    return out


def read_file(path):
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except (OSError, UnicodeDecodeError) as exc:
        raise FlagtraceError("-f %s: cannot read it: %s" % (path, exc), ExitCode.USAGE)
    return read_text(text, path)


def read_text(text, source):
    """The launches of one file's text, read by the first reader that recognises it: a docker run line (shell
    text), a compose file (a mapping with ``services``) or Kubernetes objects (one document or many)."""
    artifact = Artifact(source, text)
    for reader in READERS:
        if reader.recognises(artifact):
            return reader.read(artifact)
    return []
