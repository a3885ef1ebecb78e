"""``check -f`` over many launch commands: a row per command (terminal, Markdown; JSON is the document)."""

STATUS = {"resolved": "ok", "incomplete": "INCOMPLETE", "error": "ERROR", "failed": "FAILED", "input": "INPUT", "unsupported": "skipped"}


def _cells(row):
    findings = (row.get("deployment") or {}).get("findings") or []
    said = []
    if row.get("overridden"):
        said.append("overridden: " + ", ".join(row["overridden"]))
    said += list(row.get("notes") or [])
    said += [f["message"] for f in findings]
    said += ["drift: %s %s → %s%s" % (d["field"], d["locked"], d["now"], " (%s)" % d["by"] if d["by"] else "")
             for d in row.get("drift") or []]
    said += ["expected %s=%s, got %s" % (e["field"], e["expected"], e["actual"]) for e in row.get("expectations") or []
             if not e["ok"]]
    if row.get("message"):
        said.append(row["message"])
    status = "DRIFT" if row.get("drift") and row["status"] == "resolved" else STATUS.get(row["status"], row["status"])
    return status, row.get("release") or "-", said


def terminal(doc, sink, options):
    w = sink.write
    for row in doc["rows"]:
        status, release, said = _cells(row)
        w("%-8s %s  [%s, exit %s]\n" % (status, "%s: %s" % (row["source"], row["name"]), release, row.get("exit", 0)))
        for line in said:
            w("         - %s\n" % line)
    s = doc["summary"]
    incomplete = ", %d never reached the stop point" % s["incomplete"] if s.get("incomplete") else ""
    w("\n%d command%s: %d resolved%s, %d raised, %d could not run, %d bad input, %d skipped (wrapper)\n" % (
        len(doc["rows"]), "" if len(doc["rows"]) == 1 else "s", s["resolved"], incomplete, s["error"], s["failed"],
        s["input"], s["unsupported"]))
    for line in skipped_lines(doc):
        w(line + "\n")


def skipped_lines(doc):
    """The files looked at that gave no row, with why (one line each, after a count)."""
    looked = doc.get("looked_at") or []
    skipped = [f for f in looked if f.get("skipped")]
    if not skipped:
        return []
    return ["looked at %d file%s; %d gave no command:" % (len(looked), "" if len(looked) == 1 else "s", len(skipped))] \
        + ["  %s: %s" % (f["path"], f["skipped"]) for f in skipped]


def markdown(doc, sink, options):
    w = sink.write
    w("### flagtrace check: %d launch command%s\n\n" % (len(doc["rows"]), "" if len(doc["rows"]) == 1 else "s"))
    w("| status | command | release | exit | findings |\n|---|---|---|---|---|\n")
    for row in doc["rows"]:
        status, release, said = _cells(row)
        cell = "<br>".join(_escape(s) for s in said) or ""
        w("| %s | `%s`: %s | %s | %s | %s |\n" % (status, _escape(row["source"]), _escape(row["name"]), release,
                                                 row.get("exit", 0), cell))
    lines = skipped_lines(doc)
    if lines:
        w("\n" + lines[0] + "\n\n" + "".join("- `%s`: %s\n" % (f["path"], _escape(f["skipped"]))
                                            for f in doc["looked_at"] if f.get("skipped")))


def _escape(text):
    return str(text).replace("|", "\\|").replace("\n", " ")
