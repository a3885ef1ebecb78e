"""JSON report: the analysis document as it is (``flagtrace/analysis@1``); for ``why``, its one field
(``flagtrace/why@1``)."""
import json

WHY_SCHEMA = "flagtrace/why@1"


def dumps(doc):
    return json.dumps(doc, indent=2, sort_keys=False, ensure_ascii=False)


def write(doc, sink):
    sink.write(dumps(doc))
    sink.write("\n")


def render(doc, sink, options):
    """why: only the field's history; every other verb: the whole document."""
    if options.get("verb") == "why":
        doc = {"schema": WHY_SCHEMA, "field": doc["field"]}
    write(doc, sink)
