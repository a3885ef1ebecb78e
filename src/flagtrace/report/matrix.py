"""``flagtrace matrix`` as a table: terminal columns, CSV, Markdown."""
import csv as _csv

from .text import cut


def csv(doc, stream, options):
    writer = _csv.writer(stream)
    writer.writerow(["python", "gpu", "flags", "status"] + doc["fields"])
    for cell in doc["cells"]:
        writer.writerow([cell["python"] or "", cell["gpu"] or "", cell["flags"], cell["status"]]
                        + [(cell["values"][f] or {}).get("value", "") for f in doc["fields"]])


def terminal(doc, stream, options):
    fields = doc["fields"]
    pythons = any(c["python"] for c in doc["cells"])
    head = (["python"] if pythons else []) + ["gpu", "flags"] + fields
    rows = []
    for cell in doc["cells"]:
        values = []
        for name in fields:
            v = cell["values"][name]
            values.append("-" if v is None else cut(v["value"], 28) + ("*" if v["verdict"] == "overridden" else ""))
        if cell["error"]:
            values = [cell["error"]] + [""] * (len(fields) - 1) if fields else [cell["error"]]
        rows.append(([cell["python"]] if pythons else []) + [cell["gpu"] or "(this machine)",
                                                             cell["flags"] or "(as typed)"] + values)
    widths = [max(len(str(r[i])) for r in [head] + rows) for i in range(len(head))]
    stream.write("flagtrace matrix  %s\n\n" % " ".join(doc["command"]))
    for row in [head] + rows:
        stream.write("  ".join(str(v).ljust(w) for v, w in zip(row, widths)).rstrip() + "\n")
    if not fields:
        stream.write("\nno field differs between the cells\n")
    for note in sorted({n for c in doc["cells"] for n in c.get("translated", [])}):
        stream.write("\ntranslated: %s\n" % note)
    alone = [c for c in doc["cells"] if c.get("alone")]
    if alone:
        stream.write("\n%d cells were resolved in processes of their own: %s\n" % (len(alone), alone[0]["alone"]))
    if any((v or {}).get("verdict") == "overridden" for c in doc["cells"] for v in c["values"].values()):
        stream.write("\n* overridden: the command line asked for another value\n")



def markdown(doc, stream, options):
    from .markdown import code, plain

    fields = doc["fields"]
    pythons = any(c["python"] for c in doc["cells"])
    head = (["python"] if pythons else []) + ["gpu", "flags"] + fields
    stream.write("### flagtrace matrix: %d cells\n\n```sh\n%s\n```\n\n" % (len(doc["cells"]), " ".join(doc["command"])))
    stream.write("| %s |\n|%s\n" % (" | ".join(head), "---|" * len(head)))
    for cell in doc["cells"]:
        values = [plain(cell["error"])] + [""] * (len(fields) - 1) if cell["error"] and fields else [
            "-" if cell["values"][n] is None else code(cell["values"][n]["value"], 40)
            + ("\\*" if cell["values"][n]["verdict"] == "overridden" else "") for n in fields]
        row = ([code(cell["python"])] if pythons else []) + [cell["gpu"] or "(this machine)",
                                                            code(cell["flags"]) if cell["flags"] else "(as typed)"]
        stream.write("| %s |\n" % " | ".join(row + values))
    if any((v or {}).get("verdict") == "overridden" for c in doc["cells"] for v in c["values"].values()):
        stream.write("\n\\* overridden: the command line asked for another value\n")
