"""Two or more analyses of the same command under different conditions (GPUs, interpreters,
flags, environment): the fields whose final values differ, who decided each on each side, and the
first thing that went differently (a hardware answer, a value read, the command line itself)."""
import re

SCHEMA = "flagtrace/diff@1"


def compare(labels, analyses, environments=None, hardware=None, aliases=None, unstable=()):
    """The ``flagtrace/diff@1`` document for ``analyses`` (one per side, in ``labels``' order).
    ``environments``: per side, the value of each environment variable that differs between the
    sides' launches (None: unset), so that a variable read on one side is known on the others.
    ``hardware``: per side, each hardware question the target asked and its first answer.
    ``aliases``: {old field name: newer name} for fields renamed between the sides' releases.
    ``unstable``: fields that differ between two resolutions of the same command (random)."""
    aliases = aliases or {}
    tables = [{aliases.get(f["field"], f["field"]): f for f in a.get("fields", [])} for a in analyses]
    names = ordered_keys(tables)
    differences = []
    for name in names:
        reports = [t.get(name) for t in tables]
        finals = [_final(r) for r in reports]
        if len(set(finals)) > 1:
            differences.append(_difference(name, reports, finals, tables, environments, hardware, aliases))
            if name in unstable:
                differences[-1]["cause"] = {"kind": "random", "text": "it differs between two resolutions of "
                                                                      "the same command (random)"}
            spelled = [r["field"] if r else None for r in reports]
            if any(s not in (None, name) for s in spelled):
                differences[-1]["names"] = spelled
    errors = [a.get("error") for a in analyses]
    # the fields someone asked for and did not get first, fields one side lacks last
    differences.sort(key=lambda d: ("overridden" not in d["verdicts"], d["cause"]["kind"] in ("absent", "random")))
    return {
        "schema": SCHEMA,
        "sides": list(labels),
        "statuses": [a.get("status") for a in analyses],
        "errors": [error_line(e) for e in errors],
        "fields_compared": len(names),
        "differences": differences,
    }


def _final(report):
    return report["final"]["repr"] if report else "(no such field)"


def _decider(report):
    """The change that left the field at its final value (None: never changed)."""
    if not report or not report.get("changes"):
        return None
    c = report["changes"][-1]
    return {"func": c.get("func"), "file": c.get("file"), "line": c.get("line"), "src": c.get("src")}


def _difference(name, reports, finals, tables, environments, hardware, aliases=None):
    return {
        "field": name,
        "values": finals,
        "verdicts": [r.get("verdict") if r else None for r in reports],
        "deciders": [_decider(r) for r in reports],
        "cause": cause(reports, tables, environments, hardware, aliases),
    }


def cause(reports, tables, environments=None, hardware=None, aliases=None):
    """The first thing that went differently between the sides, looked for in this order: a side
    without the field, the request (the command lines asked for different values), a hardware
    answer the deciding code got, a value it read, an environment variable it read, different
    deciding code (other releases), a condition that held on one side only, a value it started
    with and kept."""
    missing = [i for i, r in enumerate(reports) if r is None]
    if missing:
        return {"kind": "absent", "sides": missing,
                "text": "no such field on side %s (its release or config class does not have it)"
                        % " and ".join(str(i + 1) for i in missing)}
    asked = [(r or {}).get("requested") for r in reports]
    initials = [r["initial"]["repr"] if r else None for r in reports]
    if any(asked) and len(set(initials)) > 1:
        typed = [(a or {}).get("typed") for a in asked]
        return {"kind": "request", "values": initials, "typed": typed,
                "text": "the command lines ask for %s" % " vs ".join(
                    "%s (%s)" % (v, t) if t else "%s (not asked)" % v for v, t in zip(initials, typed))}
    changes = [((r or {}).get("changes") or []) for r in reports]
    answers = [_answers(cs) for cs in changes]
    differing = []
    for query in ordered_keys(answers):
        # a side whose deciding code never asked: what the target answered it elsewhere, if asked
        seen = [a.get(query, (hardware[i] if hardware else {}).get(query)) for i, a in enumerate(answers)]
        if all(s is not None for s in seen) and len(set(seen)) > 1:
            differing.append((query, seen))
    if differing:
        query, seen = differing[-1]  # the last question asked before the decision
        return {"kind": "hardware", "query": query, "values": seen,
                "also": [{"query": q, "values": v} for q, v in differing[:-1]],
                "text": "; ".join("%s → %s" % (q, " vs ".join(v)) for q, v in reversed(differing))}
    # each side asked its own questions (another vendor: pynvml on one, amdsmi on the other)
    own = [[(q, v) for q, v in a.items() if not all(q in b for b in answers)] for a in answers]
    if len(own) > 1 and all(own):
        last = [o[-1] for o in own]
        return {"kind": "hardware", "query": None, "values": [v for _, v in last],
                "asked": [{"query": q, "value": v} for q, v in last],
                "text": "the deciding code asked different hardware: %s" % " vs ".join(
                    "%s → %s" % (q, v if len(v) <= 60 else v[:57] + "...") for q, v in last)}
    reads = [_reads(cs, aliases) for cs in changes]
    for key in ordered_keys(reads):
        seen = [r.get(key) for r in reads]
        if all(s is not None for s in seen) and len(set(seen)) > 1:
            return {"kind": "read", "read": key, "values": seen, "text": "%s = %s" % (key, " vs ".join(seen))}
    for key in ordered_keys([_env_reads(cs) for cs in changes]):
        values = [_repr_env(env.get(key)) if key in env else None for env in (environments or [])]
        if len(values) == len(reports) and len(set(values)) > 1:
            return {"kind": "env", "env": key, "values": values,
                    "text": "$%s = %s" % (key, " vs ".join(values))}
    deciders = [(c[-1].get("func"), c[-1].get("src")) if c else None for c in changes]
    if all(deciders) and len(set(deciders)) > 1:
        return {"kind": "code", "deciders": [{"func": f, "src": src} for f, src in deciders],
                "text": "decided by different code: %s" % " vs ".join(
                    "%s (%s)" % (f, " ".join(str(src).split())[:80]) for f, src in deciders)}
    # A change on some sides only: its condition held there and not on the others.
    for index, cs in enumerate(changes):
        if cs and not all(changes):
            last = cs[-1]
            conditions = [c.get("text") or c.get("test") for c in last.get("conditions", [])]
            held = _side_reads(last, tables, aliases)
            return {"kind": "condition", "side": index, "conditions": conditions, "reads": held,
                    "text": "on side %d only: %s" % (index + 1, " and ".join(conditions) or
                                                     "%s (line %s)" % (last.get("func"), last.get("line")))}
    if len(set(initials)) > 1 and not any(changes):
        return {"kind": "initial", "values": initials,
                "text": "it started as %s (never changed after construction)" % " vs ".join(initials)}
    return {"kind": "unknown", "text": "nothing the deciding code asked or read differs (a value it "
                                       "computed from something flagtrace does not see, or a random one)"}


def _answers(changes):
    out = {}
    for c in changes:
        for h in c.get("hardware", []):
            out.setdefault(h["query"], h["result"])
    return out


def _reads(changes, aliases=None):
    out = {}
    for c in changes:
        for r in c.get("reads", []):
            key = (aliases or {}).get(r.get("field"), r.get("field")) or ("$" + r["env"] if r.get("env") else None)
            value = r.get("value")
            if key:
                out.setdefault(key, value.get("repr") if isinstance(value, dict) else _repr(value))
    return out


def _env_reads(changes):
    return {r["env"]: r.get("value") for c in changes for r in c.get("reads", []) if r.get("env")}


def _repr_env(value):
    return "unset" if value is None else repr(value)


def _side_reads(change, tables, aliases=None):
    """Each field the condition read, with its final value on every side."""
    out = []
    for r in change.get("reads", []):
        name = r.get("field")
        if name:
            key = (aliases or {}).get(name, name)
            out.append({"field": name, "values": [_final(t.get(key)) for t in tables]})
    return out


def ordered_keys(dicts):
    """The keys of ``dicts``, each once, in the order they first appear."""
    keys = []
    for d in dicts:
        keys += [k for k in d if k not in keys]
    return keys


def _repr(value):
    if isinstance(value, dict):
        return value.get("repr")
    return None if value is None else str(value)


def error_line(error):
    """An analysis' error in one line (None: it resolved)."""
    if not error:
        return None
    return "%s: %s" % (error.get("type"), " ".join(str(error.get("message", "")).split())[:200])


# An object's default repr names its address: two resolutions forked from one import may share it by chance,
# another process never does (not a value to lock).
_IDENTITY = re.compile(r" at 0x[0-9a-fA-F]+>")


def final_values(analysis):
    """{field: its final value's repr} of an analysis."""
    return {f["field"]: f["final"]["repr"] for f in (analysis or {}).get("fields", [])}


def unstable_fields(analysis, again):
    """The fields whose final values differ between two resolutions of the same command (a seed, an id): not
    a difference between sides (diff), nor a value to lock (lock)."""
    if analysis is None or again is None:
        return []
    finals = final_values(analysis)
    return [name for name, value in final_values(again).items()
            if finals.get(name) != value or _IDENTITY.search(str(value))]
