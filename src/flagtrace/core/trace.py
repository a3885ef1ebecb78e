"""Reading and saving ``flagtrace/trace@2`` documents (the seam between probe and analysis)."""
import json

from .cachefiles import write_whole
from .exitcodes import ExitCode, FlagtraceError
from ..probe.tracebuild import SCHEMA

REQUIRED = ("schema", "target", "outcome", "objects", "events")


def read_json(path, what="flagtrace trace"):
    """The JSON document in ``path``, or one clear error saying why it is not a ``what``."""
    try:
        with open(path, encoding="utf-8") as fh:
            return json.load(fh)
    except FileNotFoundError:
        raise FlagtraceError("%s file not found: %s" % (what.split()[-1], path), ExitCode.USAGE)
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise FlagtraceError("%s is not a %s (not JSON)" % (path, what))
    except OSError as exc:
        raise FlagtraceError("cannot read %s: %s" % (path, exc.strerror))


def load(path):
    return check(read_json(path), path)


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
    """A trace (or a run's document) to ``path`` (--save-trace), written whole or not at all."""
    try:
        write_whole(path, lambda fh: json.dump(doc, fh, indent=1))
    except OSError as exc:
        raise FlagtraceError("cannot write %s: %s" % (path, exc.strerror or exc), ExitCode.USAGE)
