"""Reading files and folders (``-f``) into framework launches: each file handed to the first reader that
recognises it (readers.READERS)."""
import collections
import os
import sys

from ..core.exitcodes import ExitCode, FlagtraceError
from .entry_points import known_frameworks, recognise  # noqa: F401  (recognise: a name this module has always offered)
from .model import Artifact, Launch, Token, unreadable  # noqa: F401
from .objects import Objects
from . import helm
from .readers import READERS, chart_values
from .shell_script import SHELL_SUFFIXES


SUFFIXES = (".yaml", ".yml", ".json") + SHELL_SUFFIXES


FileRead = collections.namedtuple("FileRead", "path launches skipped")  # skipped: why nothing was taken, or None


def read_paths(paths, stdin=None):
    """Every file -f names (folders: their *.yaml, *.yml, *.json, *.sh, *.txt files), in order: [FileRead], a
    file with no launch included with why. Nothing is lost: a file that cannot be read is a Launch with only its
    problem (a row of the gate), and the files after it are read."""
    out, charts = [], set()
    files = list(files_of(paths))
    objects = Objects([path for path, skipped in files if not skipped])
    for path, skipped in files:
        chart = helm.chart_root(path) if path != "-" else None
        if chart is not None:  # a chart is read once, as what it renders
            if chart not in charts:
                charts.add(chart)
                out.append(_chart(chart, path if os.path.isfile(path) and helm.is_values_file(path, _text(path))
                                  else None))
            continue
        if skipped:
            out.append(FileRead(path, [], skipped))
            continue
        if path == "-":
            text = (stdin or sys.stdin).read()
        else:
            try:
                with open(path, encoding="utf-8") as fh:
                    text = fh.read()
            except (OSError, UnicodeDecodeError) as exc:
                out.append(FileRead(path, [unreadable(path, "the file", "-f %s: cannot read it: %s" % (path, exc))],
                                    None))
                continue
        artifact = Artifact(path, text, objects)
        if helm.is_values_file(path, text) and not chart_values.recognises(artifact):
            out.append(FileRead(path, [unreadable(path, "the values file", "-f %s: a Helm values file: flagtrace reads "
                                                  "what its chart renders with it; run: %s" % (
                                                      path, helm.render_command("CHART", path)))], None))
            continue
        launches, reader = _read(artifact)
        why = None if launches else "text no reader takes (no docker run line, no #! line)" if reader is None else (
            artifact.skipped or "read as %s: no container, service or command there runs %s"
            % (reader.FORM, known_frameworks()))
        out.append(FileRead(path, launches, why))
    return out


def _text(path):
    try:
        with open(path, encoding="utf-8") as fh:
            return fh.read()
    except (OSError, UnicodeDecodeError):
        return ""


def _chart(chart, values):
    """The chart's FileRead: what ``helm template`` renders from it, or one row saying how to render it."""
    rendered, why = helm.render(chart, values)
    if rendered is None:
        return FileRead(chart, [unreadable(chart, "the chart", why)], None)
    launches, _ = _read(Artifact("%s (helm template)" % chart, rendered))
    return FileRead(chart, launches, None if launches else "rendered by helm template: no container runs %s"
                    % known_frameworks())


def read_text(text, source):
    """The launches of one file's text, read by the first reader that recognises it: docker run lines (shell
    text), a compose file (a mapping with ``services``) or Kubernetes objects (one document or many)."""
    return _read(Artifact(source, text))[0]


def _read(artifact):
    reader = next((r for r in READERS if r.recognises(artifact)), None)
    return (reader.read(artifact) if reader is not None else []), reader


def files_of(paths):
    """(path, why it is skipped or None) of every file -f names: folders walked (hidden folders left out); a file
    of a folder whose suffix no reader takes is listed as skipped."""
    for path in paths:
        if path == "-" or os.path.isfile(path):
            yield path, None
        elif os.path.isdir(path):
            found = sorted(os.path.join(folder, name) for folder, dirs, names in os.walk(path)
                           if not _hidden(folder, path) for name in names if not name.startswith("."))
            if not any(_readable_name(p) for p in found):
                raise FlagtraceError("-f %s: a folder with no .yaml/.yml/.json/.sh/.txt file" % path, ExitCode.USAGE)
            for p in found:
                yield p, None if _readable_name(p) else "not a form flagtrace reads (%s, Dockerfile)" % ", ".join(
                    SUFFIXES)
        else:
            raise FlagtraceError("-f %s: no such file or folder" % path, ExitCode.USAGE)


def _readable_name(path):
    name = os.path.basename(path)
    return name.lower().endswith(SUFFIXES) or name == "Dockerfile" or name.endswith(".Dockerfile") \
        or name.startswith("Dockerfile.")


def _hidden(folder, top):
    rel = os.path.relpath(folder, top)
    return rel != "." and any(part.startswith(".") for part in rel.split(os.sep))
