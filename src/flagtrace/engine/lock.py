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


def write(path, entries, shard=None):
    """The lock file; ``shard`` ("K/N"): the part one shard wrote (lock --merge joins them)."""
    doc = {"schema": LOCK_SCHEMA, "commands": entries}
    if shard:
        doc["shard"] = shard
    write_whole(path, lambda fh: (json.dump(doc, fh, indent=1, sort_keys=True), fh.write("\n")))


def read(path, option="--lock"):
    return _document(path, option).get("commands") or {}


def _document(path, option):
    try:
        with open(path, encoding="utf-8") as fh:
            doc = json.load(fh)
    except (OSError, ValueError) as exc:
        raise FlagtraceError("%s %s: cannot read it: %s" % (option, path, exc), ExitCode.USAGE)
    if not isinstance(doc, dict) or doc.get("schema") != LOCK_SCHEMA:
        raise FlagtraceError("%s %s: not a flagtrace lock file (%s; write one with flagtrace lock -f ...)"
                             % (option, path, LOCK_SCHEMA), ExitCode.USAGE)
    return doc


def merge(parts, path):
    """One lock file from the parts the shards wrote (lock -f ... --shard K/N each): every shard of N exactly
    once, no command in two parts. The number of commands written."""
    docs = [(part, _document(part, "--merge")) for part in parts]
    shards = {}
    for part, doc in docs:
        k, _, n = str(doc.get("shard") or "").partition("/")
        if not (k.isdigit() and n.isdigit()):
            raise FlagtraceError("--merge %s: not a shard's part (no \"shard\": write it with lock -f ... --shard K/N)"
                                 % part, ExitCode.USAGE)
        if (int(k), int(n)) in shards:
            raise FlagtraceError("--merge: shard %s/%s twice (%s, %s)" % (k, n, shards[(int(k), int(n))], part),
                                 ExitCode.USAGE)
        shards[(int(k), int(n))] = part
    counts = {n for _, n in shards}
    if len(counts) != 1:
        raise FlagtraceError("--merge: parts of different shardings (%s)" % ", ".join("/%d" % n for n in sorted(counts)),
                             ExitCode.USAGE)
    n = counts.pop()
    missing = [k for k in range(1, n + 1) if (k, n) not in shards]
    if missing:
        raise FlagtraceError("--merge: shard%s %s of %d missing" % ("" if len(missing) == 1 else "s",
                             ", ".join(str(k) for k in missing), n), ExitCode.USAGE)
    merged = {}
    for part, doc in docs:
        for name, entry in (doc.get("commands") or {}).items():
            if name in merged:
                raise FlagtraceError("--merge: %s is in two parts (%s)" % (name, part), ExitCode.USAGE)
            merged[name] = entry
    write(path, merged)
    return len(merged)


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
