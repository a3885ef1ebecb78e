"""Text helpers every reporter shares."""


def cut(text, width):
    """``text`` on one line, at most ``width`` characters (a table cell, a cause)."""
    text = " ".join(str(text).split())
    return text if len(text) <= width else text[:width - 3] + "..."
