"""Bounded, never-raising renderings of target values, with secrets redacted.

Runs inside the target interpreter: standard library only, Python >= 3.9.
"""
import dataclasses
import enum
import functools
import reprlib

from .common import recorded
from .common.recorded import REDACTED

# Field / option / env names whose values never leave the target: the one rule (common/recorded.py),
# cached: it is asked for every recorded value, and names repeat.
is_secret_name = functools.lru_cache(maxsize=4096)(recorded.is_secret_name)


_repr = reprlib.Repr()
_repr.maxstring = 160
_repr.maxother = 160
_repr.maxlist = 12
_repr.maxtuple = 12
_repr.maxdict = 12
_repr.maxset = 12
_repr.maxlevel = 3

_SIMPLE = (bool, int, float, str, type(None))


_PLAIN_REPR = (bool, float, type(None))


def safe_repr(value):
    # Fast path (most recorded values): exactly what reprlib gives, without its dispatch.
    kind = type(value)
    if kind in _PLAIN_REPR:
        return repr(value)
    if kind is int and -(1 << 100) < value < (1 << 100):
        return repr(value)
    if kind is str and len(value) <= 60:
        return repr(value)
    try:
        if isinstance(value, enum.Enum):
            return "%s.%s" % (type(value).__name__, value.name)
        return _repr.repr(value)
    except Exception as exc:  # a target's __repr__ may raise anything
        return "<unrepresentable %s: %s>" % (type(value).__name__, type(exc).__name__)


# The JSON copy of a value (``describe``'s ``value``): lists, string-keyed dicts and config objects
# (dataclass, msgspec Struct, pydantic model: their fields as a dict) are copied whole up to these
# bounds; past them the copy says so: {"$truncated": {"length": N, "kept": K}, "items": [...]}
# (a list) or {"$truncated": {"depth": D}} (nesting deeper than MAX_DEPTH).
MAX_ITEMS = 512  # per list or dict
MAX_DEPTH = 6
MAX_NODES = 4096  # per value, all levels together


def plain(value):
    """A JSON-safe copy of a value: simple values, containers and config objects within the bounds
    above (with a truncation marker past them); None for anything else (its repr stands)."""
    return _plain(value, 0, [MAX_NODES])


def _plain(value, depth, budget):
    if isinstance(value, enum.Enum):
        value = value.value
    if isinstance(value, _SIMPLE):
        if isinstance(value, str) and len(value) > 2000:
            return None
        if isinstance(value, float) and value != value:
            return None
        if isinstance(value, int) and value.bit_length() > 1024:
            return None  # json.dumps refuses ints past 4300 digits; the repr is enough
        return value
    if isinstance(value, (list, tuple)):
        items = value
    elif isinstance(value, dict):
        if not all(isinstance(k, str) for k in value):
            return None
        items = value
    else:
        items = _fields(value)
        if items is None:
            return None
    if depth >= MAX_DEPTH:
        return {"$truncated": {"depth": depth}}
    keep = max(0, min(len(items), MAX_ITEMS, budget[0]))
    budget[0] -= keep
    if isinstance(items, dict):
        out = {}
        for k in list(items)[:keep]:
            if is_secret_name(k) and not _empty(items[k]):
                remember_secret(items[k])
                out[k] = REDACTED
            else:
                out[k] = _plain(items[k], depth + 1, budget)
        return out if keep == len(items) else {"$truncated": {"length": len(items), "kept": keep}, "items": out}
    out = [_plain(v, depth + 1, budget) for v in items[:keep]]
    return out if keep == len(items) else {"$truncated": {"length": len(items), "kept": keep}, "items": out}


def _fields(obj):
    """A config object's fields as {name: value} (dataclass, msgspec Struct, pydantic model), else None."""
    kind = type(obj)
    if isinstance(obj, type):
        return None
    names = None
    if hasattr(kind, "__dataclass_fields__"):
        names = [f.name for f in dataclasses.fields(obj)]
    elif isinstance(getattr(kind, "__struct_fields__", None), tuple):
        names = list(kind.__struct_fields__)
    elif isinstance(getattr(kind, "model_fields", None), dict) and hasattr(obj, "model_dump"):
        names = list(kind.model_fields)
    if names is None:
        return None
    out = {}
    for name in names:
        try:
            out[name] = getattr(obj, name)
        except Exception:  # a field not set yet (a half-built object)
            continue
    return out


# Values seen under a secret name. Redacting by name misses the same value elsewhere (in the
# repr of the config object that holds it, after an abbreviated ``--api-k``, copied to a field
# with an ordinary name), so the finished trace is scrubbed of every one of them.
_SECRET_VALUES = set()
_MIN_SECRET = 6  # shorter values would scrub ordinary words out of the trace


def remember_secret(value):
    # Strings only, and not number-like ones: "123456" is also part of numbers (a seq, a line).
    try:
        if isinstance(value, str) and len(value) >= _MIN_SECRET and value.strip("0123456789.+-eE "):
            _SECRET_VALUES.add(str(value))
    except Exception:  # isinstance() asks __class__, which a target's object may make raise
        pass


def scrub(text):
    """``text`` (a JSON document) with every remembered secret value replaced in its string values.
    Keys and the document's ``schema`` are kept: a secret that is also a word of them (an API key
    ``flagtrace``) must not make the trace unreadable (it did: "flagtrace/trace@1" was scrubbed)."""
    import json

    secrets = sorted(_SECRET_VALUES, key=len, reverse=True)
    forms = [f for s in secrets for f in dict.fromkeys((s, repr(s)[1:-1])) if len(f) >= _MIN_SECRET]
    if not any(json.dumps(f, ensure_ascii=a)[1:-1] in text for f in forms for a in (True, False)):
        return text  # the usual case: nothing to replace, no second pass over the document
    doc = json.loads(text)

    def clean(value):
        if isinstance(value, str):
            for form in forms:
                if form in value:
                    value = value.replace(form, REDACTED)
            return value
        if isinstance(value, list):
            return [clean(v) for v in value]
        if isinstance(value, dict):
            return {k: (v if k == "schema" and value is doc else clean(v)) for k, v in value.items()}
        return value

    return json.dumps(clean(doc))


def describe(value, name=None, remember=True):
    """{'repr': ..., 'value': ..., 'type': ...} for the trace; secrets redacted by name.
    ``remember``: also scrub the value wherever else it appears (not for a local variable: a
    ``key`` looping over field names would scrub those names out of the trace).
    Never raises: it runs inside the target's own assignments."""
    kind = type(value).__name__
    if name is not None and is_secret_name(name) and not _empty(value):
        if remember:
            remember_secret(value)
        return {"repr": REDACTED, "value": REDACTED, "type": kind}
    try:
        simple = plain(value)
    except Exception:  # a container whose __len__ / __iter__ / __class__ raises
        simple = None
    return {"repr": safe_repr(value), "value": simple, "type": kind}


def _empty(value):
    # identity and exact types: ``value in (None, "", False)`` would call the value's __eq__
    # (an array compares elementwise and refuses to be a bool)
    return value is None or value is False or (type(value) is str and value == "")


def redact_argv(argv):
    """Replace the value of secret options (``--api-key X`` / ``--api-key=X``); remembered for scrub()."""
    return recorded.redact_argv(argv, remember_secret)


def redact_env(env):
    for k, v in env.items():
        if is_secret_name(k) and v:
            remember_secret(v)
    return {k: (REDACTED if is_secret_name(k) and v else v) for k, v in env.items()}
