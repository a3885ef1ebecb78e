"""The explanation of an error the target ended with: where it was raised, the conditions on the
path there and the fields they read, the fields whose values the message names, what the user
could set, and when the simulation (not the framework) is the likely cause. A command line
argparse refused gets its unknown options and close matches instead."""
import difflib
import re

from . import verdict
from .hardware import unanswered

END_OF_RUN = 10**12  # the seq of "after everything": a trace without the raise's own seq


def names_in(value, message):
    """``value`` appears in ``message`` as a word of its own: not inside another word ('cpu' in
    'numa_bind_cpus'), nor inside a URL, path or dotted name ('huggingface' in
    'https://huggingface.co/...', 'auto' in 'transformers.models.auto')."""
    return re.search(r"(?<![\w./:-])%s(?![\w/:-]|\.\w)" % re.escape(value), message) is not None


def parse_error_report(parse):
    """A command line argparse refused: the options it did not know and the closest known ones."""
    message = parse["error"]
    options = sorted({option for action in parse.get("actions", []) for option in action["options"]})
    unknown = []
    for word in message.replace(",", " ").replace("/", " ").split():
        word = word.split("=", 1)[0].rstrip(":.;")
        if word.startswith("--") and word not in options:
            unknown.append(word)
    suggestions = {option: difflib.get_close_matches(option, options, n=3, cutoff=0.6) for option in unknown}
    return {"kind": "argparse", "type": "SystemExit", "message": message, "prog": parse.get("prog"),
            "unknown": unknown, "suggestions": suggestions,
            "site": parse.get("at"), "conditions": [], "reads": [], "hardware": []}


def longest_options(trace):
    """dest -> its longest option string, from the first parse that has it."""
    options = {}
    for parse in trace.get("parses", []):
        for action in parse.get("actions", []):
            if action.get("options"):
                options.setdefault(action["dest"], max(action["options"], key=len))
    return options


def option_hints(trace, reads):
    """Fields the failing check read that the user never set, but could have."""
    options = longest_options(trace)
    out, seen = [], set()
    for read in reads:
        field = read.get("field")
        if not field or field in seen or read.get("origin") in ("cli", "config") or field not in options:
            continue
        seen.add(field)
        how = "decided by the program" if read.get("origin") == "decided" else "left at its default"
        out.append({"field": field, "option": options[field],
                    "text": "%s was %s; you can set it yourself with %s" % (field, how, options[field])})
    return out


def unanswered_hints(unanswered_queries, frames):
    """An error raised by code that asked something the simulation did not answer."""
    funcs = {frame.get("func") for frame in frames}
    files = {frame.get("file") for frame in frames}
    return [{"text": "%s was answered by this machine, not simulated, in %s (%s:%s) before the error: "
                     "the error may come from the simulation" % (query["query"], query["func"], query["file"],
                                                                  query["line"])}
            for query in unanswered_queries if query["func"] in funcs and query["file"] in files]


def mentioned_values(final, message, provenance, seq):
    """Fields whose final value (``final``) appears in the error message, with their provenance
    as of ``seq``."""
    out = []
    for field, value in sorted(final.items()):
        text = value.get("value")
        if isinstance(text, str) and len(text) >= 3 and names_in(text, message):
            out.append({"field": field, "value": value, **provenance.of(field, seq)})
    return out


def error_report(trace, final, line_explainer, self_aliases, provenance, hardware):
    """The error of ``trace`` explained (None when it ended without one). ``final``: the watched
    object's final values; ``line_explainer``, ``self_aliases``, ``provenance``: what
    explains the raising line; ``hardware``: the trace's hardware queries."""
    outcome = trace.get("outcome", {})
    status = outcome.get("status")
    parse_error = next((parse for parse in trace.get("parses", []) if parse.get("error")), None)
    if parse_error is not None and status == "exited":
        return parse_error_report(parse_error)
    if status != "raised":
        return None
    exc = outcome["exception"]
    frames = exc.get("frames", [])
    sources = trace.get("sources", {})
    site = next((frame for frame in reversed(frames) if frame.get("file") in sources),
                frames[-1] if frames else None)
    report = {"kind": "exception", "type": exc["type"], "message": exc["message"],
              "site": site and {key: site.get(key) for key in ("func", "file", "line", "src")},
              "frames": [{key: frame.get(key) for key in ("func", "file", "line")} for frame in frames[-6:]],
              "chain": exc.get("chain", [])}
    if site is not None:
        report.update(line_explainer.explain(site["file"], site["line"], outcome.get("seq", END_OF_RUN),
                                             site.get("locals", {}), values_at_raise=final,
                                             self_aliases=self_aliases.for_function(site.get("func"))))
    # "Please check the logs": what it logged as an error on the way
    report["logs"] = [{"level": event["level"], "message": event["message"]} for event in trace.get("events", [])
                      if event["kind"] == "log" and event["level"] in ("ERROR", "CRITICAL")][-3:]
    report["mentions"] = mentioned_values(final, exc["message"], provenance, outcome.get("seq", END_OF_RUN))
    report["hints"] = option_hints(trace, report.get("reads", []) + report["mentions"]) \
        + unanswered_hints(unanswered(trace, hardware), frames)
    text = "%s: %s" % (exc["type"], exc["message"])
    # The cause may hide behind the framework's own error ("failed to be inspected. Please check the
    # logs"): in the exceptions it chained, or in what it logged as an error on the way.
    causes = "\n".join([text] + [cause.get("message") or "" for cause in exc.get("chain", [])]
                       + [log["message"] for log in report["logs"]])
    gap = verdict.simulation_gap(trace, causes)
    if gap:  # the simulation's limit, not the framework's own error (exit 3, verdict.exit_code)
        report["simulation_gap"] = gap
    for hint in (gap, verdict.stand_in_gap(trace, text), verdict.hub_unreachable(trace, text)):
        if hint:
            report["hints"].append({"text": hint})
    return report
