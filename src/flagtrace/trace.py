"""Reading and saving ``flagtrace/trace@1`` documents (the seam between probe and analysis)."""
import json

from .exitcodes import ExitCode, FlagtraceError
from .probe.tracebuild import SCHEMA

REQUIRED = ("schema", "target", "outcome", "objects", "events")


def load(path):
    try:
        with open(path, encoding="utf-8") as fh:
            doc = json.load(fh)
    except FileNotFoundError:
        raise FlagtraceError("trace file not found: %s" % path, ExitCode.USAGE)
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise FlagtraceError("%s is not a flagtrace trace (not JSON)" % path)
    except OSError as exc:
        raise FlagtraceError("cannot read %s: %s" % (path, exc.strerror))
    return check(doc, path)


def check(doc, where="trace"):
    schema = doc.get("schema") if isinstance(doc, dict) else None
    if not isinstance(schema, str) or not schema.startswith("flagtrace/trace@"):
        raise FlagtraceError("%s is not a flagtrace trace (no flagtrace/trace schema)" % where)
    if schema != SCHEMA:
        raise FlagtraceError("%s has schema %s; this flagtrace reads %s" % (where, schema, SCHEMA))
    missing = [k for k in REQUIRED if k not in doc]
    if missing:
        raise FlagtraceError("%s is a damaged flagtrace trace (missing %s)" % (where, ", ".join(missing)))
    return doc


def save(doc, path):
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(doc, fh, indent=1)
