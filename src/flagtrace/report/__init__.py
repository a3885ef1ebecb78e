"""Reporters: one ``render(fmt, doc, sink, options)`` for every verb and format; ``--format``'s
choices come from here (``formats(kind)``).

``doc``: the verb's document, as JSON writes it: the analysis (with ``field`` for why,
``expectations`` for check, ``fix`` entries for explain --fix), a run result, a diff, a matrix or a
fix search. ``options``: verb, width, no_color, details. Reporters are imported only when used:
JSON stays fast to start (rich is for the terminal)."""
import importlib

# kind -> format -> "module:function" under flagtrace.report
REPORTERS = {
    "analysis": {"terminal": "terminal:render_doc", "json": "jsonreport:render", "markdown": "markdown:render"},
    "run": {"terminal": "tree:render_doc", "json": "jsonreport:render", "markdown": "markdown:render_run"},
    "diff": {"terminal": "diff:terminal", "json": "jsonreport:render", "markdown": "diff:markdown"},
    "matrix": {"terminal": "matrix:terminal", "json": "jsonreport:render", "csv": "matrix:csv",
               "markdown": "matrix:markdown"},
    "fix": {"terminal": "fix:terminal", "json": "jsonreport:render", "markdown": "fix:markdown"},
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
