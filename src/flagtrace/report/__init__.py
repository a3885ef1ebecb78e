"""Reporters: one ``render(doc, sink, options)`` per format, chosen by name; ``--format``'s
choices come from here. ``doc``: the analysis (with ``field`` for why, ``expectations`` for
check); ``options``: verb, width, color, details."""
FORMATS = ("terminal", "json", "markdown")


def render(fmt, doc, sink, options):
    if fmt == "json":
        from . import jsonreport

        jsonreport.render(doc, sink, options)
    elif fmt == "markdown":
        from . import markdown

        markdown.render(doc, sink, options)
    else:  # rich only for the terminal: JSON stays fast to start
        from . import terminal

        terminal.render_doc(doc, sink, options)
