"""JSON report: the analysis document as it is (``flagtrace/analysis@1``)."""
import json


def dumps(doc):
    return json.dumps(doc, indent=2, sort_keys=False, ensure_ascii=False)


def write(doc, sink):
    sink.write(dumps(doc))
    sink.write("\n")
