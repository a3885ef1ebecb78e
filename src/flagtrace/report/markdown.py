"""Markdown report (GitHub-flavoured), for pasting into an issue or a pull request: a summary
line, the command, the error block, a table of overridden fields, and ``<details>`` sections for
the full explanations, decided fields, honoured ones and the simulation. Every framework
file:line links to the source at the analysed release's tag."""
from .. import __version__
from ..core.frameworks import source_url
from .paths import short_path

CELL = 60  # longest value shown in a table cell


def code(text, limit=CELL):
    """``text`` as inline code on one line, safe inside a table cell."""
    text = " ".join(str(text).split())
    if len(text) > limit:
        text = text[:limit - 1] + "…"
    text = text.replace("|", "\\|")
    fence = "``" if "`" in text else "`"
    pad = " " if fence == "``" else ""
    return "%s%s%s%s%s" % (fence, pad, text, pad, fence)


def plain(text):
    return " ".join(str(text).split()).replace("|", "\\|").replace("<", "&lt;")


def where(analysis, path, line):
    """``file:line``, a link to the framework's source where the file is the framework's."""
    if not path:
        return "?"
    rel = short_path(path, analysis)
    label = "%s:%s" % (rel, line)
    url = source_url(analysis, rel, line) if line else None
    return "[%s](%s)" % (label, url) if url else "`%s`" % label


def _val(value):
    return (value or {}).get("repr", "?")


class MarkdownReport:
    def __init__(self, analysis, sink, verb="explain"):
        self.analysis, self.sink, self.verb = analysis, sink, verb

    def writeln(self, text=""):
        self.sink.write(text + "\n")

    # -- sections -------------------------------------------------------------------------
    def header(self):
        a = self.analysis
        status = {"resolved": "resolved", "error": "resolution failed", "incomplete": "stop point not reached"}.get(a.get("status"), a.get("status"))
        self.writeln("### flagtrace %s: %s" % (self.verb, status))
        self.writeln()
        s = a.get("summary") or {}
        parts = []
        if a.get("adapter"):
            parts.append(code(a["adapter"].get("describe") or a["adapter"].get("name")))
            if a["adapter"].get("tested") is False:
                parts.append("**untested release**")
        sim = a.get("simulation")
        if sim:
            parts.append("simulated %s" % plain(sim.get("describe", "")))
        parts.append("%d fields" % s.get("fields", 0))
        parts.append(("**%d overridden**" if s.get("overridden") else "%d overridden") % s.get("overridden", 0))
        parts += ["%d decided" % s.get("decided", 0), "%d honoured" % s.get("honoured", 0),
                  "%d default" % s.get("default", 0)]
        self.writeln(" · ".join(parts))
        self.writeln()
        t = a.get("target", {})
        command = " ".join(t.get("command", [])) or " ".join(t.get("argv", []))
        self.writeln("```sh\n%s\n```" % command)
        for s in (a.get("adapter") or {}).get("stand_ins") or []:
            self.writeln()
            self.writeln("> stood in: %s" % plain(s))
        for line in a.get("inputs") or []:
            self.writeln()
            self.writeln("> model: %s" % plain(line))
        from .terminal import deployment_lines

        for line in deployment_lines(a.get("deployment")):
            self.writeln()
            self.writeln("> %s" % plain(line.strip()))
        for note in a.get("notes", []):
            self.writeln()
            self.writeln("> note: %s" % plain(note))

    def explanation(self, item, indent=""):
        for i, c in enumerate(item.get("conditions", [])):
            self.writeln("%s- %s %s (line %s)" % (indent, "because" if i == 0 else "and",
                                                  code(c.get("text") or c["test"], 200), c.get("line")))
        for r in item.get("reads", []):
            name = r.get("field") or r.get("local") or ("$" + r["env"] if r.get("env") else "?")
            value = _val(r.get("value")) if isinstance(r.get("value"), dict) else r.get("value")
            self.writeln("%s- reads %s = %s ← %s" % (indent, code(name), code("unset" if value is None else value),
                                              self.origin(r)))
        for h in item.get("hardware", []):
            self.writeln("%s- asked %s → %s (line %s)" % (indent, code(h["query"]), code(h["result"]), h.get("line")))
        local = item.get("from_local")
        if local:
            self.writeln("%s- %s came from %s (line %s)" % (indent, code(local["local"]), code(local["src"]),
                                                            local["line"]))
            self.explanation(local, indent + "  ")

    def origin(self, read):
        origin = read.get("origin")
        if read.get("local"):
            return "local"
        if origin == "cli":
            return "%s (command line)" % code(read.get("option") or "")
        if origin == "decided" and read.get("set_by"):
            by = read["set_by"]
            return "set%s by %s (%s)" % (" from %s" % code(_val(read.get("was"))) if read.get("was") else "",
                                         code(by.get("func")), where(self.analysis, by.get("file"), by.get("line")))
        return plain(origin or "?")

    def fix(self, fix, indent=""):
        if not fix:
            return
        if not fix.get("changes"):
            self.writeln("%s- **fix**: none verified among %d candidates" % (indent, fix.get("tried", 0)))
            return
        self.writeln("%s- **fix**: %s (verified: %s)" % (indent, " + ".join(code(c) for c in fix["changes"]),
                                                    plain(fix.get("outcome"))))

    def error(self):
        e = self.analysis.get("error")
        if not e:
            return
        self.writeln()
        self.writeln("#### Error")
        self.writeln()
        if e.get("kind") == "argparse":
            self.writeln("The argument parser refused the command line: %s" % code(e["message"], 300))
            self.writeln()
            for flag, close in sorted((e.get("suggestions") or {}).items()):
                self.writeln("- %s: %s" % (code(flag), "did you mean %s?" % " or ".join(code(c) for c in close)
                                           if close else "no similar flag"))
            for flag, hint in sorted((e.get("renamed") or {}).items()):
                self.writeln("- %s: %s" % (code(flag), plain(hint)))
            self.fix(e.get("fix"))
            return
        if e.get("simulation_gap"):  # the simulation's limit: not the framework's own error
            self.writeln("**Simulation gap**: %s" % plain(e["simulation_gap"]))
            self.writeln()
        self.writeln("**%s**: %s" % (plain(e.get("type")), plain(e.get("message"))))
        self.writeln()
        site = e.get("site")
        if site:
            self.writeln("raised in %s (%s)" % (code(site.get("func")),
                                                where(self.analysis, site.get("file"), site.get("line"))))
            self.writeln()
        self.explanation(e)
        for hint in e.get("hints") or []:
            self.writeln("- hint: %s" % plain(hint["text"]))
        self.fix(e.get("fix"))

    def overridden(self):
        items = [f for f in self.analysis.get("fields", []) if f["verdict"] == "overridden"]
        if not items:
            return
        self.writeln()
        self.writeln("#### Overridden: asked for one value, got another")
        self.writeln()
        self.writeln("| field | asked | got | who | where |")
        self.writeln("|---|---|---|---|---|")
        for f in items:
            last = (f.get("changes") or [{}])[-1]
            asked = code(_val(f["initial"]))
            if f.get("requested"):
                asked += " (%s)" % code(f["requested"]["typed"])
            self.writeln("| %s | %s | %s | %s | %s |" % (code(f["field"]), asked, code(_val(f["final"])),
                                                  code(last.get("func") or "?"),
                                                  where(self.analysis, last.get("file"), last.get("line"))))
        self.writeln()
        self.writeln("<details><summary>Why each overridden field changed</summary>")
        self.writeln()
        for f in items:
            self.history(f)
        self.writeln("</details>")

    def history(self, f):
        self.writeln("**%s** %s → %s" % (plain(f["field"]), code(_val(f["initial"])), code(_val(f["final"]))))
        self.writeln()
        for c in f.get("changes", []):
            self.writeln("- %s → %s by %s (%s): %s" % (code(_val(c.get("old"))), code(_val(c.get("new"))),
                                                       code(c.get("func")),
                                                       where(self.analysis, c.get("file"), c.get("line")),
                                                       code(c.get("src") or c.get("statement") or "", 120)))
            self.explanation(c, "  ")
        self.fix(f.get("fix"))
        self.writeln()

    def decided(self):
        items = [f for f in self.analysis.get("fields", []) if f["verdict"] == "decided"]
        if not items:
            return
        self.writeln()
        self.writeln("<details><summary>Decided (%d): not asked for; the program replaced the default</summary>"
                     % len(items))
        self.writeln()
        self.writeln("| field | from | to | where |")
        self.writeln("|---|---|---|---|")
        for f in items:
            last = (f.get("changes") or [{}])[-1]
            self.writeln("| %s | %s | %s | %s %s |" % (code(f["field"]), code(_val(f["initial"])),
                                                       code(_val(f["final"])),
                                                       code((last.get("func") or "?").rsplit(".", 1)[-1]),
                                                       where(self.analysis, last.get("file"), last.get("line"))))
        self.writeln()
        self.writeln("</details>")

    def honoured(self):
        items = [f for f in self.analysis.get("fields", []) if f["verdict"] == "honoured"]
        if not items:
            return
        self.writeln()
        self.writeln("<details><summary>Honoured (%d): asked for and kept</summary>" % len(items))
        self.writeln()
        for f in items:
            self.writeln("- %s = %s" % (code(f["field"]), code(_val(f["final"]))))
        self.writeln()
        self.writeln("</details>")

    def simulation(self):
        sim = self.analysis.get("simulation")
        if not sim:
            return
        self.writeln()
        self.writeln("<details><summary>Simulation and stand-ins</summary>")
        self.writeln()
        self.writeln("- GPU: %s" % plain(sim.get("describe", "")))
        if sim.get("patched"):
            self.writeln("- patched: %s" % plain(", ".join(sim["patched"][:12])
                                                 + (" …" if len(sim["patched"]) > 12 else "")))
        for s in sim.get("stand_ins") or []:
            self.writeln("- stand-in: %s" % plain(s))
        for s in sim.get("compat") or []:
            self.writeln("- compatibility: %s" % plain(s))
        for u in self.analysis.get("unanswered") or []:
            self.writeln("- not simulated (this machine answered): %s → %s (%s)" % (
                code(u["query"]), code(u["result"]), where(self.analysis, u["file"], u["line"])))
        self.writeln()
        self.writeln("</details>")

    def expectations(self, results):
        if not results:
            return
        self.writeln()
        self.writeln("#### Expectations")
        self.writeln()
        self.writeln("| | field | expected | got |")
        self.writeln("|---|---|---|---|")
        for e in results:
            self.writeln("| %s | %s | %s | %s |" % ("PASS" if e["ok"] else "**FAIL**", code(e["field"]),
                                                    code(e["expected"]),
                                                    code("no such field" if e["actual"] is None else e["actual"])))

    def footer(self):
        self.writeln()
        self.writeln("<sub>flagtrace %s</sub>" % __version__)


def render(doc, sink, options):
    """explain / check (``doc``: the analysis, with ``expectations`` for check) and why (``doc``
    with ``field``: that field's history only)."""
    report = MarkdownReport(doc, sink, options.get("verb", "explain"))
    report.header()
    if doc.get("field") and options.get("verb") == "why":
        report.writeln()
        report.history(doc["field"])
        report.footer()
        return
    report.error()
    report.overridden()
    report.expectations(doc.get("expectations"))
    report.decided()
    report.honoured()
    report.simulation()
    report.footer()


def render_run(result, sink, options):
    """flagtrace run: the command's outcome, a table of its processes, what the script did wrong,
    then each process that resolved a config as explain reports it (in ``<details>`` when there
    are several)."""
    import shlex

    w = lambda text="": sink.write(text + "\n")  # noqa: E731
    s = result["summary"]
    w("### flagtrace run: %d Python process%s, %d resolved a config, %d failed" % (
        s["python"], "" if s["python"] == 1 else "es", s["resolved"], s["errors"]))
    w()
    w("```sh\n%s\n```" % " ".join(shlex.quote(a) for a in result.get("command") or []))
    w()
    status = "timed out" if result.get("timed_out") else "interrupted" if result.get("interrupted") else \
        "exit status %s" % result.get("exit_status")
    w("%s · %s%s" % (status, "live" if result.get("live") else "dry: framework processes stopped at their stop point",
                     " · simulated %s" % plain(result["simulation"]) if result.get("simulation") else ""))
    if result.get("message"):
        w()
        w("> %s" % plain(result["message"]))
    w()
    w("| pid | parent | process | status | result |")
    w("|---|---|---|---|---|")
    for n in result["processes"]:
        w("| %s | %s | %s | %s | %s |" % (n["pid"], n.get("parent") or "", code(" ".join(n.get("argv") or ["?"]), 80),
                                          plain(n["status"]), plain(_process_result(n))))
    findings = (result.get("script") or {}).get("findings") or []
    if findings:
        w()
        w("#### Script")
        w()
        for f in findings:
            w("- line %s: %s — %s" % (f["line"], code(f.get("text", ""), 120), plain(_finding(f))))
    left = result.get("leftovers") or []
    if left:
        w()
        w("#### Still running when the command exited (killed)")
        w()
        for item in left:
            w("- pid %s %s" % (item["pid"], code(" ".join(item["argv"]), 120)))
    shown = [n for n in result["processes"] if n.get("analysis") and n["status"] in ("resolved", "error")]
    for n in shown:
        w()
        w("<details%s><summary>pid %s · %s</summary>" % (" open" if len(shown) == 1 else "", n["pid"],
                                                         plain(" ".join(n.get("argv") or [])[:100])))
        w()
        report = MarkdownReport(n["analysis"], sink, "run")
        report.error()
        report.overridden()
        report.decided()
        report.honoured()
        report.simulation()
        w()
        w("</details>")
    w()
    w("<sub>flagtrace %s</sub>" % __version__)


def _process_result(n):
    a = n.get("analysis")
    if a and n["status"] == "error":
        err = a.get("error") or {}
        message = " ".join(str(err.get("message", "")).split())[:160]
        if err.get("kind") == "argparse":
            return "the argument parser refused the command line: %s" % message
        return "%s: %s" % (err.get("type"), message)
    if a and n["status"] == "resolved":
        s = a["summary"]
        return "%s · %d fields · %d overridden · %d decided" % (a.get("object") or "?", s["fields"], s["overridden"],
                                                                s["decided"])
    return n.get("reason") or n.get("message") or ""


def _finding(f):
    if f["kind"] == "broken-continuation":
        lost = sorted({w for words in (f.get("never_reached") or {}).values() for w in words}, key=f["orphan"].index)
        return ("a space after the backslash ended the command; line %s ran as a command of its own%s"
                % (f["orphan_line"], "; never reached the process: %s" % " ".join(lost) if lost else ""))
    if f["kind"] == "unexported":
        return "%s is assigned but never exported" % f["name"]
    if f["kind"] == "quoted-heredoc":
        return "the heredoc delimiter is quoted, so %s reach whatever reads it unexpanded" % (
            ", ".join("$" + n for n in f["names"]))
    return f["kind"]

