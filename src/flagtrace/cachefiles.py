"""flagtrace's own files: its cache folder, and writes that a reader never sees half done."""
import os


def cache_folder():
    """flagtrace's own cache folder: ``FLAGTRACE_CACHE_DIR``, else ``$XDG_CACHE_HOME/flagtrace`` or
    ``~/.cache/flagtrace``; None where ``FLAGTRACE_CACHE_DIR`` is set empty (no cache)."""
    folder = os.environ.get("FLAGTRACE_CACHE_DIR")
    if folder is None:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        folder = os.path.join(base, "flagtrace")
    return folder or None


def write_whole(path, write, quiet=False, make_folder=False):
    """Write ``path`` through ``write(fh)`` into ``path.partial``, then rename it into place, so a
    concurrent reader (another flagtrace, a waiting probe) sees the old file or the new one, never
    a torn one. ``make_folder``: make the folder if missing (a cache). ``quiet``: an OSError returns None (a cache that
    cannot be written is only slower) instead of raising. Returns ``path``."""
    partial = path + ".partial"
    try:
        if make_folder:
            os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        with open(partial, "w", encoding="utf-8") as fh:
            write(fh)
        os.replace(partial, path)
    except OSError:
        if not quiet:
            raise
        try:
            os.unlink(partial)
        except OSError:
            pass
        return None
    return path
