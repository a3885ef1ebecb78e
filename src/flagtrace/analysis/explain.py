"""The analysis document (``flagtrace/analysis@1``) of a trace: the verdict of every field with
its changes and their conditions, the error explained, and what the target logged and set in the
environment. ``analyse`` builds the pieces from the modules beside this one and assembles them.

The document is a plain dict: the terminal, JSON and Markdown reports all render it, and it is
what ``--format json`` writes.
"""
from ..core.frameworks import with_tested
from .after_stop import after_stop_assignments
from .as_typed import as_typed, typed_names
from .call_logs import CallLogs
from .changes import ChangeExplainer
from .declarations import Declarations
from .environment import EnvironmentHistory
from .error_report import error_report
from .field_history import FieldHistory, primary_object
from .field_report import FieldReporter
from .hardware import hardware_events, unanswered
from .line_explanation import LineExplainer
from .provenance import Provenance
from .recorded import event_site
from .requested import explicit_requests
from .self_aliases import SelfAliases

ANALYSIS_SCHEMA = "flagtrace/analysis@1"
VERDICT_ORDER = ("overridden", "decided", "honoured", "default")


def analyse(trace):
    """The analysis document of ``trace``."""
    sources = trace.get("sources", {})
    events = trace.get("events", [])
    outcome = trace.get("outcome", {})
    root = primary_object(trace)
    writes = [event for event in events if event["kind"] == "write" and event["obj"] == root]
    history = FieldHistory(writes)
    final = (outcome.get("fields") or {}).get(str(root), {})
    fields = set(history.by_field) | set(final)
    requests = explicit_requests(trace)
    call_logs = CallLogs(events, writes)
    hardware = hardware_events(events)
    environment = EnvironmentHistory(events, sources)
    declarations = Declarations(events, sources)
    provenance = Provenance(history, requests, environment, declarations)
    line_explainer = LineExplainer(sources, fields, history, final, provenance, declarations, environment, hardware)
    self_aliases = SelfAliases(trace, root, fields)
    changes = ChangeExplainer(sources, history, declarations, line_explainer, self_aliases, call_logs)
    reporter = FieldReporter(history, final, requests, declarations, after_stop_assignments(trace), changes)

    reports = [reporter.report(field) for field in reported_fields(trace, root, fields, history)]
    reports.sort(key=lambda report: (VERDICT_ORDER.index(report["verdict"]), report["field"]))
    counts = {name: sum(1 for report in reports if report["verdict"] == name) for name in VERDICT_ORDER}
    obj = next((obj for obj in trace.get("objects", []) if obj["id"] == root), None)
    error = error_report(trace, final, line_explainer, self_aliases, provenance, hardware)
    status = outcome.get("status")
    return as_typed({
        "schema": ANALYSIS_SCHEMA,
        "target": trace.get("target", {}),
        "packages": trace.get("packages", []),
        "adapter": with_tested(trace.get("adapter")),
        "simulation": trace.get("simulation"),
        "inputs": list(trace.get("request", {}).get("inputs") or []),
        "unanswered": unanswered(trace, hardware),
        "object": obj["class"] if obj else None,
        "status": document_status(status, error, trace),
        "stop": outcome.get("stop"),
        "summary": {**counts, "fields": len(reports)},
        "fields": reports,
        "error": error,
        "env": [{"key": event["key"], "old": event["old"], "new": event["new"], "how": event.get("how"),
                 **event_site(event)}
                for event in events if event["kind"] == "env" and event["old"] != event["new"]],
        "logs": [{"level": event["level"], "logger": event["logger"], "message": event["message"],
                  **event_site(event)}
                 for event in events if event["kind"] == "log" and event["level"] in ("WARNING", "ERROR", "CRITICAL")],
        "notes": notes(trace, status, obj, error),
    }, typed_names(trace))


def reported_fields(trace, root, fields, history):
    """The fields the document reports, sorted. A nested config object is reported through its
    own fields ("graph.backend"), not as a whole, unless it was replaced; private attributes
    (``_resolved_overrides``) are the program's plumbing, not its config."""
    nested = {obj["path"] for obj in trace.get("objects", [])
              if obj.get("root") == root and obj.get("parent") is not None}
    return [field for field in sorted(fields) if not field.startswith("_") and ("._" not in field)
            and (field not in nested or any(write["how"] != "init" for write in history.by_field.get(field, [])))]


def notes(trace, status, obj, error):
    """The trace's problems, and why nothing (or not everything) was resolved."""
    out = [problem["message"] for problem in trace.get("problems", [])]
    if trace.get("request", {}).get("stop_at") and status not in ("stopped", "raised"):
        outcome = trace.get("outcome") or {}
        how = {"completed": "the program ended", "exited": "the program exited with status %s"
               % outcome.get("exit_code")}.get(status, "the program ended (%s)" % status)
        out.append("the stop point (%s) was never reached: %s without it, so no resolved config is reported "
                   "(what ran before is shown)" % (", ".join(trace["request"]["stop_at"]), how))
    if obj is None and status != "no_target" and not (error and error["kind"] == "argparse"):
        watched = ", ".join(trace.get("request", {}).get("watch") or []) or "a watched class"
        out.append("the error came before any instance of %s existed: no field was resolved" % watched
                   if error else "no instance of %s was created" % watched)
    return out


def document_status(status, error, trace):
    """The document's status: error; incomplete (a stop point was set and the program ended without reaching
    it and without an error: what it made is not the config it would run with); resolved; or the trace's
    own."""
    if error is not None:
        return "error"
    if (trace.get("request") or {}).get("stop_at") and status in ("completed", "exited"):
        return "incomplete"
    return {"stopped": "resolved", "completed": "resolved"}.get(status, status)


def field_history(analysis, field):
    """The report of ``field`` in an analysis document, or None."""
    for report in analysis["fields"]:
        if report["field"] == field:
            return report
    return None
