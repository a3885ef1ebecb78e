"""Paths as a report shows them: relative to site-packages, the package or the cwd."""
import os


def short_path(path, analysis):
    if not path:
        return "?"
    roots = []
    for pkg in analysis.get("packages", []):
        if pkg.get("file"):
            roots.append(os.path.dirname(os.path.dirname(pkg["file"])))
    cwd = analysis.get("target", {}).get("cwd")
    if cwd:
        roots.append(cwd)
    for marker in ("site-packages" + os.sep, "dist-packages" + os.sep):
        if marker in path:
            return path.split(marker, 1)[1]
    for root in sorted(roots, key=len, reverse=True):
        if root and path.startswith(root.rstrip(os.sep) + os.sep):
            return os.path.relpath(path, root)
    return path


def source_context(analysis):
    """What short_path and source links read of an analysis, kept in documents (diff) that show
    paths from several analyses."""
    return {"adapter": analysis.get("adapter"), "packages": analysis.get("packages", []),
            "target": {"cwd": (analysis.get("target") or {}).get("cwd")}}
