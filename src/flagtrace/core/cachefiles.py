"""flagtrace's own files: its cache folder, and writes that a reader never sees half done."""
import os

from ..probe.files import write_whole  # noqa: F401 - flagtrace's own files are written this way


def cache_folder():
    """flagtrace's own cache folder: ``FLAGTRACE_CACHE_DIR``, else ``$XDG_CACHE_HOME/flagtrace`` or
    ``~/.cache/flagtrace``; None where ``FLAGTRACE_CACHE_DIR`` is set empty (no cache)."""
    folder = os.environ.get("FLAGTRACE_CACHE_DIR")
    if folder is None:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        folder = os.path.join(base, "flagtrace")
    return folder or None
