"""Writes that a reader never sees half done: the tool's caches and the probe's."""
import os


def write_whole(path, write, quiet=False, make_folder=False):
    """Write ``path`` through ``write(fh)`` into ``path.PID.partial``, then rename it into place, so a
    concurrent reader (another flagtrace, a waiting probe) sees the old file or the new one, never
    a torn one. ``make_folder``: make the folder if missing (a cache). ``quiet``: an OSError returns None (a cache that
    cannot be written is only slower) instead of raising. Returns ``path``."""
    partial = "%s.%d.partial" % (path, os.getpid())  # one per writer: two never share one
    try:
        if make_folder:
            os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        with open(partial, "w", encoding="utf-8") as fh:
            write(fh)
        os.replace(partial, path)
    except OSError:
        try:
            os.unlink(partial)
        except OSError:
            pass
        if not quiet:
            raise
        return None
    return path
