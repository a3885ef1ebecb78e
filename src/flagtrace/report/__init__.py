"""Reporters: one ``render(fmt, doc, sink, options)`` for every verb and format; ``--format``'s
choices come from here (``formats(kind)``).

``doc``: the verb's document, as JSON writes it: the analysis (with ``field`` for why,
``expectations`` for check, ``fix`` entries for explain --fix), a run result, a diff, a matrix or a
fix search. ``options``: verb, width, no_color, details. Reporters are imported only when used:
JSON stays fast to start (rich is for the terminal)."""
import contextlib
import importlib
import os

# kind -> format -> "module:function" under flagtrace.report
REPORTERS = {
    "analysis": {"terminal": "terminal:render_doc", "json": "jsonreport:render", "markdown": "markdown:render"},
    "run": {"terminal": "run_report:render_doc", "json": "jsonreport:render", "markdown": "markdown:render_run"},
    "diff": {"terminal": "diff:terminal", "json": "jsonreport:render", "markdown": "diff:markdown"},
    "matrix": {"terminal": "matrix:terminal", "json": "jsonreport:render", "csv": "matrix:csv",
               "markdown": "matrix:markdown"},
    "fix": {"terminal": "fix:terminal", "json": "jsonreport:render", "markdown": "fix:markdown"},
    "gate": {"terminal": "gate:terminal", "json": "jsonreport:render", "markdown": "gate:markdown"},
}
KINDS = {"explain": "analysis", "why": "analysis", "check": "analysis"}  # other verbs: their own kind
FORMATS = tuple(REPORTERS["analysis"])


def kind_of(verb):
    return KINDS.get(verb, verb)


def formats(verb):
    return tuple(REPORTERS[kind_of(verb)])


def render(fmt, doc, sink, options):
    module, _, func = REPORTERS[kind_of(options.get("verb", "explain"))][fmt].partition(":")
    getattr(importlib.import_module("." + module, __name__), func)(doc, sink, options)


def check_writable(*paths):
    """Files a verb will write (-o, --save-trace), checked before anything runs: their folder
    must exist and be writable (a usage error, exit 64, not a failure after a long resolution)."""
    from ..core.exitcodes import ExitCode, FlagtraceError

    for path in paths:
        if not path:
            continue
        folder = os.path.dirname(os.path.abspath(path))
        if os.path.isdir(path):
            raise FlagtraceError("cannot write %s: it is a directory" % path, ExitCode.USAGE)
        if not os.path.isdir(folder):
            raise FlagtraceError("cannot write %s: no directory %s" % (path, folder), ExitCode.USAGE)
        if not os.access(folder, os.W_OK):
            raise FlagtraceError("cannot write %s: %s is not writable" % (path, folder), ExitCode.USAGE)


@contextlib.contextmanager
def output(path, out):
    """Where a report goes: ``path`` (-o FILE) or ``out``."""
    if not path:
        yield out
        return
    with open(path, "w", encoding="utf-8") as fh:
        yield fh

