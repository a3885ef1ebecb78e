"""Terminal report (rich): header, summary, overridden, decided, honoured, error."""
import os

from rich.console import Console

from .paths import short_path  # noqa: F401  (re-exported)
from rich.markup import escape

MAX_DECIDED_DETAIL = 40


def _val(value):
    if value is None:
        return "?"
    return value.get("repr", "?")


def _origin_text(read):
    origin = read.get("origin")
    if origin in ("cli", "config"):
        where = "command line" if origin == "cli" else "config file"
        return "%s (%s)" % (read.get("option"), where)
    if origin == "decided" and read.get("set_by"):
        s = read["set_by"]
        was = " from %s" % _val(read["was"]) if read.get("was") else ""
        asked = ", overriding %s" % read["requested"] if read.get("requested") else ""
        env = "".join(" from $%s=%s (%s)" % (e["env"], _env_val(e), _env_origin(e)) for e in read.get("from_env", ()))
        return "set%s by %s (line %s)%s%s" % (was, s.get("func"), s.get("line"), env, asked)
    if origin == "fallback":
        return "unset: the field's fallback"
    return "default"


def _ends(text, limit):
    """``text`` within ``limit`` characters: its start and its end (where a traceback's error is)."""
    if len(text) <= limit:
        return text
    half = limit // 2
    return text[:half] + " … " + text[-half:]


def _env_val(read):
    return "unset" if read["value"] is None else read["value"]


def _env_origin(read):
    if read["origin"] == "decided":
        s = read["set_by"]
        return "set by %s (%s:%s)" % (s.get("func"), os.path.basename(s.get("file") or "?"), s.get("line"))
    if read["origin"] == "environment":
        return "the launch environment"
    return "not in the environment: the framework's default applies"


def _declared_text(ch, declared):
    """Where a declared value entered the stash and where it was applied, where those differ
    from the code that decided."""
    def at(w):
        return "%s %s:%s" % (w.get("func") or "?", os.path.basename(w.get("file") or "?"), w.get("line"))

    slot, applied = declared["slot"], declared["applied"]
    parts = ["declared" + ("" if declared["source"] == ch.get("func") else " as %s" % declared["source"])]
    here = (ch.get("func"), ch.get("file"), ch.get("line"))
    if (slot.get("func"), slot.get("file"), slot.get("line")) != here:
        parts[0] += " at %s" % at(slot)
    if applied.get("func") and (applied.get("func"), applied.get("line")) != (slot.get("func"), slot.get("line")):
        parts.append("applied by %s" % at(applied))
    return None if parts == ["declared"] else "; ".join(parts)


def _with_skips(changes):
    """(change, number of brief changes skipped just before it) for the fully explained ones."""
    skipped = 0
    for ch in changes:
        if ch.get("brief"):
            skipped += 1
            continue
        yield ch, skipped
        skipped = 0


def _clip(text, limit):
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _host(patched):
    """The simulated host in a few words: its NICs, CPUs and NUMA nodes (from the simulation's
    ``patched`` entries)."""
    parts = []
    for entry in patched:
        if entry.startswith("/sys/class/infiniband"):
            nics = [n for n in entry.split(": ", 1)[-1].split(", ") if n and n != "none"]
            parts.append("%s (%d InfiniBand NIC%s)" % (", ".join(nics) if len(nics) <= 3 else "%s … %s" % (
                nics[0], nics[-1]), len(nics), "" if len(nics) == 1 else "s") if nics else "no InfiniBand NIC")
        elif " NUMA nodes " in entry:
            parts.append(entry.split(" (", 1)[0])
    return " · ".join(parts)


def _stand_ins(entries):
    """'sgl_kernel (not installed)', 'sgl_kernel.ops (parent stood in)' -> 'sgl_kernel (not installed)'."""
    out = []
    for entry in entries:
        name, _, reason = entry.partition(" (")
        if "." in name and any(e.startswith(name.split(".")[0] + " (") for e in entries):
            continue
        out.append(entry)
    return ", ".join(out)


class TerminalReport:
    def __init__(self, analysis, console=None, width=100, color=None, details=False):
        self.analysis = analysis
        self.details = details
        self.tree = details  # why and --details: follow decided reads back (cause)
        self.console = console or Console(width=width, highlight=False, soft_wrap=False,
                                          color_system="auto" if color is None else ("standard" if color else None),
                                          no_color=(color is False))

    def print(self, markup="", **kw):
        self.console.print(markup, **kw)

    # -- sections -------------------------------------------------------------------
    def header(self, verb="explain"):
        a = self.analysis
        t = a.get("target", {})
        command = " ".join(t.get("command", [])) or " ".join(t.get("argv", []))
        self.print("[bold]flagtrace %s[/bold]  %s" % (verb, escape(command)))
        pkgs = ", ".join("%s %s" % (p["module"], p.get("version") or "?") for p in a.get("packages", [])
                         if p.get("imported"))
        self.print("  interpreter  %s (Python %s)%s" % (escape(t.get("interpreter", "?")), t.get("python", "?"),
                                                  (" · " + escape(pkgs)) if pkgs else ""))
        if a.get("adapter"):
            ad = a["adapter"]
            untested = " · [bold yellow]untested release[/bold yellow] (the suite runs others; see docs/releases.md)" \
                if ad.get("tested") is False else ""
            self.print("  adapter      %s%s" % (escape(ad.get("describe") or ad.get("name", "")), untested))
            for i, s in enumerate(ad.get("stand_ins") or []):  # what a dry run did not contact (Dynamo's runtime)
                self.print("  %s %s" % ("stood in    " if i == 0 else "            ", escape(s)))
        if a.get("object"):
            stop = (" · stopped at %s" % a["stop"]) if a.get("stop") else ""
            self.print("  object       %s%s" % (escape(a["object"]), escape(stop)))
        for i, line in enumerate(a.get("inputs") or []):
            self.print("  %s %s" % ("model       " if i == 0 else "            ", escape(line)))
        for line in deployment_lines(a.get("deployment")):
            self.print("  %s" % escape(line))
        sim = a.get("simulation")
        if sim:
            self.print("  simulated    %s" % escape(sim.get("describe", "")))
            if sim.get("stand_ins"):
                self.print("  stand-ins    %s" % escape(_stand_ins(sim["stand_ins"])))
            for i, shim in enumerate(sim.get("compat") or []):
                self.print("  %s %s" % ("compat      " if i == 0 else "            ", escape(shim)))
            host = _host(sim.get("patched") or [])
            if host:
                self.print("  host         %s" % escape(host))
            for i, u in enumerate(a.get("unanswered") or []):
                self.print("  %s %s → %s  [dim]%s:%s %s[/dim]" % (
                    "not simulated" if i == 0 else "             ", escape(u["query"]), escape(str(u["result"])),
                    escape(short_path(u["file"], a)), u["line"], escape(str(u["func"]))))

    def summary(self):
        s = self.analysis["summary"]
        status = self.analysis["status"]
        head = {"resolved": "[green]Resolved[/green]", "error": "[red bold]Resolution failed[/red bold]",
                "incomplete": "[red bold]Stop point not reached[/red bold]"}.get(
            status, "[yellow]%s[/yellow]" % escape(str(status)))
        parts = ["%d fields" % s["fields"]]
        if s["overridden"]:
            parts.append("[red bold]%d overridden[/red bold]" % s["overridden"])
        else:
            parts.append("0 overridden")
        parts += ["%d decided" % s["decided"], "%d honoured" % s["honoured"], "%d default" % s["default"]]
        self.print()
        self.print("%s: %s" % (head, " · ".join(parts)))
        for note in self.analysis.get("notes", []):
            self.print("[yellow]note:[/yellow] %s" % escape(note))

    def change(self, ch, indent="    "):
        where = "%s:%s" % (short_path(ch.get("file"), self.analysis), ch.get("line"))
        how = {"inplace": " (changed in place)", "bypass": " (object.__setattr__)",
               "declared": " (declared)"}.get(ch["how"], "")
        if ch.get("replaced"):
            how = " (replaced %s)" % ch["replaced"]
        self.print("%s[cyan]%s[/cyan]  %s%s" % (indent, escape(ch.get("func") or "?"), escape(where), how))
        self.print("%s  %s → %s" % (indent, escape(_val(ch.get("old"))), escape(_val(ch.get("new")))))
        if ch.get("statement") or ch.get("src"):
            self.print("%s  [dim]%s[/dim]" % (indent, escape(ch.get("statement") or ch["src"])))
        declared = ch.get("declared")
        text = _declared_text(ch, declared) if declared else None
        if text:
            self.print("%s  [dim]%s[/dim]" % (indent, escape(text)))
        self.explanation(ch, indent + "  ")

    def explanation(self, item, indent, depth=0):
        conds = item.get("conditions") or []
        for i, c in enumerate(conds):
            label = "because" if i == 0 else "       "
            holds = {True: "", False: "", None: ""}[c["holds"]]
            self.print("%s%s %s  [dim](line %s)[/dim]%s" % (indent, label, escape(c["text"]), c["line"], holds))
        reads = item.get("reads") or []
        for i, r in enumerate(reads):
            label = "reads  " if i == 0 else "       "
            if "local" in r:
                self.print("%s%s %s = %s  [dim](local)[/dim]" % (indent, label, escape(r["local"]),
                                                                 escape(_val(r["value"]))))
                continue
            if "env" in r:
                via = " via %s" % r["via"] if r.get("via") else ""
                self.print("%s%s $%s = %s  [dim]← %s%s[/dim]" % (indent, label, escape(r["env"]), escape(_env_val(r)),
                                                           escape(_env_origin(r)), escape(via)))
                continue
            via = " via %s" % r["via"] if r.get("via") else ""
            if r.get("declared"):
                d = r["declared"]
                where = d.get("decider") or {}
                via += "; declared %s by %s (%s:%s), which a resolved view reads" % (
                    _val(d["value"]), d["source"], os.path.basename(where.get("file") or "?"), where.get("line"))
            self.print("%s%s %s = %s  [dim]← %s%s[/dim]" % (indent, label, escape(r["field"]),
                                                            escape(_val(r["value"])), escape(_origin_text(r)),
                                                            escape(via)))
            self.cause(r, item.get("seq"), indent + "         ", depth)
        for i, h in enumerate(item.get("hardware") or []):
            label = "asked  " if i == 0 else "       "
            self.print("%s%s %s → %s  [dim](line %s)[/dim]" % (indent, label, escape(h["query"]), escape(h["result"]),
                                                          h.get("line")))
        for env in item.get("env") or []:
            self.print("%senv     %s=%s  [dim](was %s)[/dim]" % (indent, escape(env["key"]), escape(str(env["new"])),
                                                         escape(str(env["old"]))))
        for log in item.get("logs") or []:
            self.print("%slogged  %s %s" % (indent, log["level"], escape(_ends(log["message"], 300))))
        local = item.get("from_local")
        if local:
            self.print("%s%s came from  %s  [dim](line %s)[/dim]" % (indent, escape(local["local"]),
                                                                     escape(local["src"]), local["line"]))
            self.explanation(dict(local, seq=item.get("seq")), indent + "  ", depth)

    CAUSE_DEPTH = 3  # why: a decided field a condition read is followed back this many levels

    def cause(self, read, seq, indent, depth):
        """``why``: the field a condition read was itself decided: by which change and why, down to
        the user's inputs, defaults, environment and hardware answers (bounded depth)."""
        if not self.tree or depth >= self.CAUSE_DEPTH or read.get("origin") != "decided" or seq is None:
            return
        f = next((x for x in self.analysis.get("fields", []) if x["field"] == read["field"]), None)
        before = [c for c in (f or {}).get("changes", []) if c.get("seq", 0) < seq and not c.get("brief")]
        if not before:
            return
        ch = before[-1]
        self.print("%s[dim]↳ %s was set by %s (%s:%s)[/dim]" % (
            indent, escape(read["field"]), escape(ch.get("func") or "?"),
            escape(short_path(ch.get("file"), self.analysis)), ch.get("line")))
        self.explanation(ch, indent + "  ", depth + 1)

    def field_block(self, f, detail=True):
        req = f.get("requested")
        asked = "  [dim](asked: %s)[/dim]" % escape(req["typed"]) if req else ""
        self.print("  [bold]%s[/bold]  %s → %s%s" % (escape(f["field"]), escape(_val(f["initial"])),
                                                escape(_val(f["final"])), asked))
        if detail:
            for ch, skipped in _with_skips(f["changes"]):
                if skipped:
                    self.print("    [dim]… %d more changes (flagtrace why %s --format json lists them)[/dim]"
                               % (skipped, escape(f["field"])))
                self.change(ch)
            self.fix(f.get("fix"), "    ")

    def fix(self, fix, indent):
        """``explain --fix``: the best verified change, or why there is none."""
        if not fix:
            return
        if not fix.get("changes") and not fix.get("tried"):
            self.print("%s[bold]fix[/bold]     nothing to try: the explanation names no option or variable to change"
                       % indent)
            return
        if not fix.get("changes"):
            self.print("%s[bold]fix[/bold]     none verified among %d candidates (the deciding code read: %s)"
                       % (indent, fix.get("tried", 0), escape(", ".join(fix.get("read") or []) or "nothing")))
            return
        effects = fix.get("side_effects") or []
        moved = "; ".join("%s → %s" % (e["field"], _clip(e["new"], 30)) for e in effects[:4])
        if len(effects) > 4:
            moved += " (and %d more)" % (len(effects) - 4)
        self.print("%s[bold green]fix[/bold green]     %s  [dim](verified: %s%s)[/dim]" % (
            indent, escape("  +  ".join(fix["changes"])), escape(_clip(fix["outcome"], 60)),
            escape("; also moves " + moved) if moved else ""))

    def overridden(self):
        items = [f for f in self.analysis["fields"] if f["verdict"] == "overridden"]
        if not items:
            return
        self.print()
        self.print("[red bold]OVERRIDDEN[/red bold] — you asked for a value and got another")
        for f in items:
            self.field_block(f)

    def decided(self):
        items = [f for f in self.analysis["fields"] if f["verdict"] == "decided"]
        if not items:
            return
        self.print()
        self.print("[yellow bold]DECIDED[/yellow bold] — not asked for; the program replaced the default"
                   + ("" if self.details else "  [dim](flagtrace why FIELD, or --details, for the reasons)[/dim]"))
        if self.details:
            for f in items:
                self.field_block(f)
            return
        width = min(max(len(f["field"]) for f in items), 32)
        for f in items:
            last = f["changes"][-1] if f["changes"] else {}
            func = (last.get("func") or "?").rsplit(".", 1)[-1]
            where = "%s:%s %s" % (os.path.basename(last.get("file") or "?"), last.get("line"), func)
            if len(f["changes"]) > 1:
                where += " (%d changes)" % len(f["changes"])
            change = _clip("%s → %s" % (_val(f["initial"]), _val(f["final"])), 40)
            line = "  %s  %s" % (f["field"].ljust(width), change)
            if len(line) + 2 + len(where) <= self.console.width:
                self.print("[bold]%s[/bold]  [dim]%s[/dim]" % (escape(line), escape(where)))
            else:
                self.print("[bold]%s[/bold]" % escape(line))
                self.print("      [dim]%s[/dim]" % escape(where))

    def honoured(self):
        items = [f for f in self.analysis["fields"] if f["verdict"] == "honoured"]
        if not items:
            return
        self.print()
        names = ", ".join("%s=%s" % (f["field"], _val(f["final"])) for f in items)
        self.print("[green bold]HONOURED[/green bold] (%d): %s" % (len(items), escape(names)))
        for f in self.analysis["fields"]:
            req = f.get("requested") or {}
            if req.get("alias_of"):
                self.print("  [dim]%s was given as %s, an alias of %s[/dim]" % (
                    escape(f["field"]), escape(req["typed"]), escape(req["alias_of"])))

    def later(self):
        """Fields still unset at the stop point that code after it assigns (at model load)."""
        items = [f for f in self.analysis["fields"] if f.get("after_stop") and _val(f["final"]) == "None"]
        if not items:
            return
        self.print()
        self.print("[yellow bold]DECIDED LATER[/yellow bold] — still unset when resolution ends; assigned after the "
                   "stop point")
        width = min(max(len(f["field"]) for f in items), 32)
        for f in items:
            site = f["after_stop"]
            self.print("  [bold]%s[/bold]  [dim]%s:%s %s%s[/dim]" % (
                escape(f["field"].ljust(width)), escape(os.path.basename(site["file"])), site["line"],
                escape(site["func"]), escape(" (%s)" % site["when"] if site.get("when") else "")))

    def error(self):
        e = self.analysis.get("error")
        if not e:
            return
        self.print()
        if e["kind"] == "argparse":
            self.print("[red bold]ERROR[/red bold] the argument parser refused the command line")
            self.print("  %s: error: %s" % (escape(e.get("prog") or ""), escape(e["message"])))
            for flag, close in (e.get("suggestions") or {}).items():
                hint = ("did you mean %s?" % " or ".join(close)) if close else "no similar flag"
                self.print("  %s: %s" % (escape(flag), escape(hint)))
            for flag, hint in (e.get("renamed") or {}).items():
                self.print("  %s: %s" % (escape(flag), escape(hint)))
            self.fix(e.get("fix"), "  ")
            return
        if e.get("simulation_gap"):  # the simulation's limit: not the framework's own error
            self.print("[yellow bold]SIMULATION GAP[/yellow bold] %s" % escape(e["simulation_gap"]))
        self.print("[red bold]ERROR[/red bold] %s: %s" % (escape(e["type"]), escape(e["message"])))
        site = e.get("site")
        if site:
            self.print("  raised in [cyan]%s[/cyan]  %s:%s" % (escape(site.get("func") or "?"),
                                                          escape(short_path(site.get("file"), self.analysis)),
                                                          site.get("line")))
            if e.get("statement") or site.get("src"):
                self.print("    [dim]%s[/dim]" % escape(e.get("statement") or site["src"]))
        self.explanation(e, "  ")
        for i, hint in enumerate(e.get("hints") or []):
            self.print("  %s %s" % ("hint   " if i == 0 else "       ", escape(hint["text"])))
        self.fix(e.get("fix"), "  ")
        mentioned = [m for m in e.get("mentions", [])
                     if not any(r.get("field") == m["field"] for r in e.get("reads", []))]
        for i, m in enumerate(mentioned):
            label = "message names" if i == 0 else "             "
            self.print("  %s %s = %s  [dim]← %s[/dim]" % (label, escape(m["field"]), escape(_val(m["value"])),
                                                       escape(_origin_text(m))))

    def environment(self):
        items = self.analysis.get("env") or []
        if not items:
            return
        self.print()
        self.print("[bold]ENVIRONMENT[/bold] — written by the program while it resolved")
        for e in items:
            where = "%s:%s %s" % (os.path.basename(e.get("file") or "?"), e.get("line"),
                                  (e.get("func") or "?").rsplit(".", 1)[-1])
            self.print("  %s=%s  [dim](was %s)  %s[/dim]" % (escape(e["key"]), escape(str(e["new"])),
                                                       escape(str(e["old"])), escape(where)))

    def render(self, verb="explain"):
        self.header(verb)
        self.summary()
        self.error()
        self.overridden()
        self.decided()
        self.later()
        self.honoured()
        self.environment()

    def render_field(self, f):
        self.tree = True
        self.header("why")
        self.print()
        if f is None:
            return
        req = f.get("requested")
        origin = ("%s (%s)" % (req["typed"], "command line" if f["origin"] == "cli" else "config file")
                  if req else "default")
        if not req and f.get("fallback"):
            fb = f["fallback"]
            origin = "the field's fallback for an unset value (%s:%s)" % (short_path(fb.get("file"), self.analysis),
                                                                           fb.get("line"))
        self.print("[bold]%s[/bold]: %s   %s → %s" % (escape(f["field"]), f["verdict"], escape(_val(f["initial"])),
                                                      escape(_val(f["final"]))))
        self.print("  initial value from %s" % escape(origin))
        if not f["changes"] and not f.get("note"):
            self.print("  never changed after construction")
        for i, ch in enumerate(f["changes"], 1):
            if ch.get("brief"):
                if not f["changes"][i - 2].get("brief"):
                    count = sum(1 for c in f["changes"] if c.get("brief"))
                    self.print("  … %d more changes (in --format json), e.g. %s → %s at %s:%s" % (
                        count, escape(_val(ch.get("old"))), escape(_val(ch["new"])),
                        escape(short_path(ch.get("file"), self.analysis)), ch.get("line")))
                continue
            self.print("  %d." % i)
            self.change(ch, indent="    ")
        self.declarations(f.get("declarations") or [])
        if f.get("note"):
            self.print("  note: %s" % escape(f["note"]))
        site = f.get("after_stop")
        if site:
            self.print("  after the stop point %s also assigns it: %s:%s  [dim]%s[/dim]" % (
                escape(site["func"]), escape(short_path(site["file"], self.analysis)), site["line"],
                escape(site["src"])))

    def declarations(self, decls):
        """Every declaration of the field, where there was more than the one that won."""
        if len(decls) < 2:
            return
        self.print("  declared %d times (the last one wins):" % len(decls))
        for d in decls:
            who = d.get("decider") or d.get("slot") or {}
            self.print("    %s  %s  [dim]%s %s:%s%s[/dim]" % (
                escape(_val(d["value"])), escape(d["source"]), escape(who.get("func") or "?"),
                escape(short_path(who.get("file"), self.analysis)), who.get("line"),
                "  superseded" if d.get("superseded") else ""))


def render(analysis, verb="explain", width=100, color=None, console=None, details=False):
    TerminalReport(analysis, console=console, width=width, color=color, details=details).render(verb)


def console_for(sink, options):
    color = False if (options.get("no_color") or not sink.isatty()) else None
    return Console(file=sink, width=options.get("width") or (None if sink.isatty() else 100), highlight=False,
                   no_color=color is False, color_system=None if color is False else "auto", soft_wrap=False)


def deployment_lines(deployment):
    """The deployment a command came from (-f), and what its layers did, in lines (shared with Markdown)."""
    if not deployment:
        return []
    image = " · image %s%s" % (deployment["image"], " → " + deployment["release"] if deployment.get("release") else "") \
        if deployment.get("image") else ""
    lines = ["deployed     %s: %s%s" % (deployment["source"], deployment["name"], image)]
    lines += ["             %s" % note for note in deployment.get("notes", [])]
    lines += ["  from       %s: %s" % (origin, words) for origin, words in _runs(deployment.get("tokens", []))]
    lines += ["  ! %-9s %s" % (f["kind"], f["message"]) for f in deployment.get("findings", [])]
    return lines


def _runs(tokens):
    """[(origin, words)]: consecutive tokens of one origin together, and of consecutive lines of one file as
    one origin with a line range (args (x.yaml:13-17))."""
    import re

    out = []  # [prefix, first line, last line, suffix, words] or [origin, None, None, None, words]
    for token in tokens:
        m = re.match(r"^(.*\(\S+:)(\d+)(\).*)$", token["origin"])
        last = out[-1] if out else None
        if m and last and last[1] is not None and (last[0], last[3]) == (m.group(1), m.group(3)) \
                and int(m.group(2)) in (last[2], last[2] + 1):
            last[2] = int(m.group(2))
            last[4].append(token["text"])
        elif not m and last and last[1] is None and last[0] == token["origin"]:
            last[4].append(token["text"])
        elif m:
            out.append([m.group(1), int(m.group(2)), int(m.group(2)), m.group(3), [token["text"]]])
        else:
            out.append([token["origin"], None, None, None, [token["text"]]])
    return [(r[0] if r[1] is None else "%s%d%s%s" % (r[0], r[1], "" if r[1] == r[2] else "-%d" % r[2], r[3]),
             " ".join(r[4])) for r in out]


def render_doc(doc, sink, options):
    """The registry's entry (report/__init__.py): explain, check (with its PASS/FAIL lines), why."""
    console = console_for(sink, options)
    verb = options.get("verb", "explain")
    if verb == "why":
        TerminalReport(doc, console=console).render_field(doc["field"])
        return
    render(doc, verb=verb, console=console, details=options.get("details"))
    results = doc.get("expectations") or []
    if results:
        console.print()
    for e in results:
        mark = "[green]PASS[/green]" if e["ok"] else "[red bold]FAIL[/red bold]"
        actual = "no such field" if e["actual"] is None else e["actual"]
        console.print("%s %s: expected %s, got %s" % (mark, e["field"], e["expected"], actual), markup=True)
