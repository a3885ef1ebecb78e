"""``flagtrace fix`` as text: each problem, then each verified fix with its command and side
effects (terminal, Markdown)."""
import shlex

from .text import cut


# -- terminal -----------------------------------------------------------------------------------
def terminal(doc, sink, options):
    w = sink.write
    w("flagtrace fix  %s\n" % _quoted(doc["command"]))
    if not doc["problems"]:
        w("\nnothing to fix: the command resolves and every explicit request sticks\n")
        return
    for p in doc["problems"]:
        w("  problem: %s\n" % cut(p["text"], 300))
        if p["kind"] == "want" and not p.get("option"):
            w("    %s has no option of its own: only what its deciding code reads can move it\n" % p["field"])
        if not p["fixes"]:
            w("    no verified fix among %d candidates; the deciding code read: %s\n"
              % (doc["candidates_tried"], ", ".join(p["read"]) or "nothing flagtrace could change"))
    w("  %d candidate changes tried, %d verified\n" % (doc["candidates_tried"], doc["verified"]))
    if doc.get("alone"):
        w("  (candidates resolved in processes of their own: %s)\n" % doc["alone"])
    for failure in doc["failures"]:
        w("  could not judge: %s\n" % cut(failure["why"], 200))
    if doc["verified"] > len(doc["fixes"]):
        w("  (the same option set to a nearby number is shown once, nearest the value typed)\n")
    for n, f in enumerate(doc["fixes"], 1):
        w("\nfix %d: %s  → %s\n" % (n, "  +  ".join(f["changes"]), f["outcome"]))
        w("  why tried: %s\n" % cut(f["reason"], 200))
        env = " ".join("%s=%s" % (k, shlex.quote(v)) for k, v in f["env"].items() if v is not None)
        w("  command: %s%s\n" % (env + " " if env else "", _quoted(f["command"])))
        if f["side_effects"]:
            shown = f["side_effects"][:8]
            more = len(f["side_effects"]) - len(shown)
            w("  side effects: %s%s\n" % ("; ".join("%s %s → %s" % (e["field"], cut(e["old"], 40),
                                                                   cut(e["new"], 40)) for e in shown),
                                         " (and %d more)" % more if more > 0 else ""))
        else:
            w("  side effects: none\n")


def _quoted(words):
    return " ".join(shlex.quote(str(a)) for a in words)


def markdown(doc, sink, options):
    from .markdown import code, plain

    w = lambda text="": sink.write(text + "\n")  # noqa: E731
    w("### flagtrace fix: %d verified of %d candidates" % (doc["verified"], doc["candidates_tried"]))
    w()
    w("```sh\n%s\n```" % _quoted(doc["command"]))
    w()
    if not doc["problems"]:
        w("Nothing to fix: the command resolves and every explicit request sticks.")
        return
    for p in doc["problems"]:
        w("- problem: %s" % plain(p["text"]))
        if not p["fixes"]:
            w("  - no verified fix; the deciding code read: %s" % (", ".join(code(r) for r in p["read"]) or "nothing"))
    for n, f in enumerate(doc["fixes"], 1):
        w()
        w("**fix %d**: %s → %s" % (n, " + ".join(code(c) for c in f["changes"]), plain(f["outcome"])))
        w()
        env = " ".join("%s=%s" % (k, shlex.quote(v)) for k, v in f["env"].items() if v is not None)
        w("```sh\n%s%s\n```" % (env + " " if env else "", _quoted(f["command"])))
        w()
        w("side effects: %s" % ("; ".join("%s %s → %s" % (code(e["field"]), code(e["old"], 40), code(e["new"], 40))
                                          for e in f["side_effects"][:8]) or "none"))
