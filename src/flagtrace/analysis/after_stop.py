"""Fields that code after the stop point assigns: a value still unset at the stop may be decided
there (at model load); the adapter names those functions."""
from . import conditions as cond


def after_stop_assignments(trace):
    """field -> the code after the stop point that assigns it (func, file, line, src, when)."""
    sources = trace.get("sources", {})
    out = {}
    for site in (trace.get("adapter") or {}).get("after_stop") or []:
        text = sources.get(site["file"])
        lines = text.splitlines() if text else []
        for field, line in cond.attribute_assignments(text, site["func"], site["receiver"]).items():
            out.setdefault(field, {"func": site["func"], "file": site["file"], "line": line,
                                   "src": lines[line - 1].strip(), "when": site.get("when")})
    return out
