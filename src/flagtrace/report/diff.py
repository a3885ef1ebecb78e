"""``flagtrace diff`` as text: the sides, then each field that differs with its deciders and the
cause (terminal), or a table (Markdown). ``doc["sources"]``: per side, what paths and source links
need (report/paths.py)."""
import shlex

from .paths import short_path
from .text import cut


# -- terminal -----------------------------------------------------------------------------------
def terminal(doc, sink, options):
    analyses = doc["sources"]
    w = sink.write
    sides = doc["sides"]
    w("flagtrace diff  %s\n" % " ".join(shlex.quote(a) for a in doc["command"]))
    for i, label in enumerate(sides):
        status = doc["statuses"][i]
        error = doc["errors"][i]
        release = doc["releases"][i]
        w("  side %d  %s%s  (%s%s)\n" % (i + 1, label, "  [%s]" % release if release else "",
                                         status, ": " + error if error else ""))
        for note in doc["translated"][i]:
            w("          translated: %s\n" % note)
        if doc["alone"][i]:
            w("          resolved in a process of its own: %s\n" % doc["alone"][i])
    diffs = doc["differences"]
    w("\n%d of %d fields differ\n" % (len(diffs), doc["fields_compared"]))
    # a field one side lacks and the other leaves at its default, a random one: listed, not detailed
    quiet = [d for d in diffs if d["cause"]["kind"] == "absent" and set(d["verdicts"]) <= {None, "default"}]
    random = [d for d in diffs if d["cause"]["kind"] == "random"]
    quiet += random
    for d in diffs:
        if d in quiet:
            continue
        w("\n%s%s\n" % (d["field"], "  (named %s)" % " / ".join(d["names"]) if d.get("names") else ""))
        for i, label in enumerate(sides):
            decider = d["deciders"][i]
            where = ("  %s  %s:%s" % (decider["func"], short_path(decider["file"], analyses[i]), decider["line"])
                     if decider else "")
            w("  %d  %-24s %-10s%s\n" % (i + 1, cut(d["values"][i], 40), d["verdicts"][i] or "-", where))
        w("  cause: %s\n" % cut(d["cause"]["text"], 300))
        for read in d["cause"].get("reads", []):
            w("         %s = %s\n" % (read["field"], " vs ".join(read["values"])))
    if random:
        w("\nrandom (they differ between two resolutions of the same command): %s\n"
          % ", ".join(d["field"] for d in random))
    for i, label in enumerate(sides):
        only = [d["field"] for d in quiet if d not in random and d["values"][i] != "(no such field)" and
                all(v == "(no such field)" for j, v in enumerate(d["values"]) if j != i)]
        if only:
            w("\nonly side %d has (at their defaults): %s\n" % (i + 1, cut(", ".join(only), 1200)))




# -- markdown -----------------------------------------------------------------------------------
def markdown(doc, sink, options):
    from .markdown import code, plain, where

    analyses = doc["sources"]
    w = lambda text="": sink.write(text + "\n")  # noqa: E731
    sides = doc["sides"]
    shown = [d for d in doc["differences"] if d["cause"]["kind"] not in ("absent", "random")]
    w("### flagtrace diff: %d of %d fields differ" % (len(doc["differences"]), doc["fields_compared"]))
    w()
    w("```sh\n%s\n```" % " ".join(shlex.quote(a) for a in doc["command"]))
    w()
    for i, label in enumerate(sides):
        error = doc["errors"][i]
        w("- side %d: %s%s: %s%s" % (i + 1, code(label), " (%s)" % doc["releases"][i] if doc["releases"][i] else "",
                                      doc["statuses"][i], " — %s" % plain(error) if error else ""))
        for note in doc["translated"][i]:
            w("  - translated: %s" % plain(note))
    w()
    if shown:
        w("| field | %s | cause |" % " | ".join("side %d" % (i + 1) for i in range(len(sides))))
        w("|---|%s---|" % ("---|" * len(sides)))
        for d in shown:
            cells = []
            for i, value in enumerate(d["values"]):
                decider = d["deciders"][i]
                at = " %s" % where(analyses[i], decider["file"], decider["line"]) if decider else ""
                cells.append("%s %s%s" % (code(value, 40), d["verdicts"][i] or "", at))
            w("| %s | %s | %s |" % (code(d["field"]), " | ".join(cells), plain(cut(d["cause"]["text"], 200))))
    rest = [d["field"] for d in doc["differences"] if d not in shown]
    if rest:
        w()
        w("<details><summary>%d more: random, or a field one side lacks</summary>" % len(rest))
        w()
        w(plain(", ".join(rest)))
        w()
        w("</details>")
