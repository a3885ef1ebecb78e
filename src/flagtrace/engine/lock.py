"""The lock file (``flagtrace/lock@1``): each deployment command's resolved values, less those that differ
between two resolutions of the same command (a seed, an id); and the drift of a resolution from it."""
import json
import os

from ..analysis.compare import final_values, unstable_fields
from ..core.cachefiles import write_whole
from ..core.exitcodes import ExitCode, FlagtraceError

LOCK_SCHEMA = "flagtrace/lock@1"


def entry(launch, analysis, again):
    """The lock's entry for one command: its release, image and values (``again``: a second resolution)."""
    values = final_values(analysis)
    unstable = sorted(unstable_fields(analysis, again)) if again and again.get("status") != "refused" else []
    adapter = analysis.get("adapter") or {}
    return {"release": "%s==%s" % (adapter.get("name"), adapter.get("version")), "image": launch.image,
            "values": {k: v for k, v in sorted(values.items()) if k not in unstable}, "unstable": unstable}


def write(path, entries):
    doc = {"schema": LOCK_SCHEMA, "commands": entries}
    write_whole(path, lambda fh: (json.dump(doc, fh, indent=1, sort_keys=True), fh.write("\n")))


def read(path):
    try:
        with open(path, encoding="utf-8") as fh:
            doc = json.load(fh)
    except (OSError, ValueError) as exc:
        raise FlagtraceError("--lock %s: cannot read it: %s" % (path, exc), ExitCode.USAGE)
    if not isinstance(doc, dict) or doc.get("schema") != LOCK_SCHEMA:
        raise FlagtraceError("--lock %s: not a flagtrace lock file (%s; write one with flagtrace lock -f ...)"
                             % (path, LOCK_SCHEMA), ExitCode.USAGE)
    return doc.get("commands") or {}


def drift(entry, analysis):
    """[{field, locked, now, by}] for each field whose final value is not the locked one (a field new or gone
    too); ``by``: the code that set the new value, where it was changed."""
    if entry is None:
        return [{"field": "(command)", "locked": None, "now": "not in the lock file", "by": ""}]
    now = final_values(analysis)
    fields = {f["field"]: f for f in analysis.get("fields", [])}
    out = []
    for name in sorted(set(entry["values"]) | (set(now) - set(entry.get("unstable", [])))):
        if name in entry.get("unstable", []) or entry["values"].get(name) == now.get(name):
            continue
        field = fields.get(name) or {}
        change = field.get("changes") or []
        requested = (field.get("requested") or {}).get("option")
        if field.get("verdict") == "honoured" and requested:
            by = "asked for with %s" % requested
        elif change:
            by = "%s (%s:%s)" % (change[-1].get("func"), os.path.basename(change[-1].get("file") or "?"),
                                 change[-1].get("line"))
        else:
            by = {"default": "its default", None: "gone from this release"}.get(field.get("verdict"), field.get("verdict"))
        out.append({"field": name, "locked": entry["values"].get(name), "now": now.get(name), "by": by})
    return out
