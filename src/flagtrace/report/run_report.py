"""``flagtrace run`` report: the process tree (terminal or JSON), then the full explanation of
every process that resolved a config (report.terminal, as ``explain`` prints it)."""
import json
import os
import shlex

from rich.markup import escape

from ..core.frameworks import env_patterns
from . import terminal

_STATUS = {
    "resolved": "[green]resolved[/green]", "error": "[red bold]resolution failed[/red bold]",
    "not probed": "[yellow bold]NOT PROBED[/yellow bold]", "refused": "[red]refused[/red]",
    "problem": "[red]problem[/red]", "no config": "[yellow]no config[/yellow]",
    "not watched": "[dim]no watched import[/dim]", "process": "",
}


def short_argv(argv, limit=160):
    text = " ".join(shlex.quote(a) for a in argv)
    return text if len(text) <= limit else text[:limit - 1] + "…"


def _rel(path, cwd):
    if path and cwd and path.startswith(cwd.rstrip(os.sep) + os.sep):
        return os.path.relpath(path, cwd)
    return path


class TreeReport:
    def __init__(self, result, console, details=False):
        self.result = result
        self.console = console
        self.details = details

    def print(self, markup="", **kw):
        self.console.print(markup, **kw)

    def render(self):
        self.header()
        self.tree()
        self.script()
        self.leftovers()
        self.explanations()

    def header(self):
        r = self.result
        s = r["summary"]
        self.print("[bold]flagtrace run[/bold]  %s" % escape(short_argv(r["command"] or [], 400)))
        mode = "live: processes ran until they exited" if r.get("live") else \
            "dry: framework processes stopped at their stop point"
        status = "timed out" if r.get("timed_out") else "interrupted" if r.get("interrupted") else \
            "exit status %s" % r.get("exit_status")
        self.print("  command      %s · %.1fs · %s" % (status, r.get("duration_s") or 0, mode))
        self.print("  processes    %d Python (%d probed, %d resolved a config, %d failed, %d not probed)%s" % (
            s["python"], s["probed"], s["resolved"], s["errors"], s["not_probed"],
            (" · %d other" % (s["processes"] - s["python"])) if s["processes"] > s["python"] else ""))
        if r.get("via"):
            via = r["via"]
            self.print("  host         %s via %s · cwd %s" % (
                escape(str(via.get("host"))), escape(str(via.get("transport"))), escape(str(r.get("cwd")))))
            self.print("  agent        %s (Python %s)" % (
                escape(str(via.get("executable"))), via.get("python")))
        if r.get("simulation"):
            self.print("  simulated    %s" % escape(r["simulation"]))

    # -- the tree -----------------------------------------------------------------------
    def tree(self):
        self.print()
        self.print("[bold]PROCESS TREE[/bold]")
        procs = self.result["processes"]
        children = {}
        for n in procs:
            children.setdefault(n.get("parent"), []).append(n)

        def walk(n, lead, last, top):
            prefix = "" if top else lead + ("└─ " if last else "├─ ")
            below = "" if top else lead + ("   " if last else "│  ")
            self._node(n, prefix, below + ("│    " if children.get(n["pid"]) else "     "))
            kids = children.get(n["pid"], [])
            for i, kid in enumerate(kids):
                walk(kid, below, i == len(kids) - 1, False)

        for n in children.get(None, []):
            walk(n, "", True, True)

    def _node(self, n, prefix, indent):
        cwd = self.result.get("cwd")
        argv = list(n["argv"] or [])
        if argv and n["kind"] == "python":
            argv[0] = os.path.basename(argv[0])
        title = short_argv(argv, 120) if argv else "?"
        status = _STATUS.get(n["status"], escape(str(n["status"])))
        ppid = (" · ppid %s" % n["ppid"]) if n.get("ppid") and n.get("parent") is not None else ""
        self.print(("%s[bold]%s[/bold]  [dim]pid %s%s[/dim]" % (escape(prefix), escape(title), n["pid"], ppid))
                   + ("  " + status if status else ""))
        line = lambda label, text: self.print("%s[dim]%-11s[/dim] %s" % (indent, label, text))  # noqa: E731
        for earlier in n.get("started_as") or []:
            line("started as", escape(short_argv(earlier)) + "  [dim](then exec'd)[/dim]")
        if n["kind"] != "python":
            return
        if n.get("spawned_by"):
            line("started by", "pid %s (noted by its bootstrap)" % n["spawned_by"])
        if n.get("reparented"):
            line("parent", "pid %s left the tree; shown under the command" % n["ppid"])
        if n.get("forked_from"):
            line("forked", "from pid %s (fork without exec: same program)" % n["forked_from"])
        if n["status"] == "not probed":
            line("reason", "[yellow]%s[/yellow]" % escape(n["reason"] or "?"))
        if n.get("interpreter"):
            venv = (" · venv %s" % escape(n["venv"])) if n.get("venv") else ""
            version = (" (Python %s)" % n["python"]) if n.get("python") else ""
            line("interpreter", "%s%s%s" % (escape(n["interpreter"]), version, venv))
        line("argv", escape(json.dumps(n["argv"], ensure_ascii=False)))
        if n.get("env") is not None:
            env = n["env"]
            line("env", escape("  ".join("%s=%s" % kv for kv in env.items())) if env else
                 "[dim](none of %s)[/dim]" % ", ".join(env_patterns()))
        for fw in n.get("frameworks") or []:
            version = (" " + fw["version"]) if fw.get("version") else ""
            line("framework", "%s%s from %s" % (escape(fw["module"]), escape(version),
                                                escape(_rel(fw.get("file") or "?", cwd))))
        for module in n.get("missing_imports") or []:
            line("import", "[yellow]%s is not installed for this interpreter[/yellow]" % escape(module))
        result = self._result(n)
        if result:
            line("result", result)
        if n.get("after"):
            after = n["after"]
            what = ("raised %s: %s" % (after.get("type"), after.get("message"))) if after.get("status") == "raised" \
                else "exited with status %s" % after.get("exit_code")
            line("after", escape("after resolution it %s" % what[:200]))
        for f in n.get("findings") or []:
            for i, text in enumerate(self._finding_for(f, n)):
                line("script" if i == 0 else "", text)
        for ex in n.get("execd") or []:
            line("then exec'd", escape(short_argv(ex["argv"])) + (
                "  [yellow](Python, NOT PROBED: %s)[/yellow]" % escape(ex["reason"]) if ex.get("reason") else ""))
        for h in n.get("hints") or []:
            line("argv hint", "[yellow]%s[/yellow]" % escape(h["text"]))
        for err in n.get("bootstrap_errors") or []:
            line("bootstrap", "[dim]%s (swallowed; the process went on)[/dim]" % escape(err))

    def _result(self, n):
        a = n.get("analysis")
        if n["status"] in ("resolved", "error") and a:
            s = a["summary"]
            parts = "%d fields · %s · %d decided · %d honoured" % (
                s["fields"], ("[red bold]%d overridden[/red bold]" % s["overridden"]) if s["overridden"]
                else "0 overridden", s["decided"], s["honoured"])
            obj = escape(a.get("object") or "?")
            if n["status"] == "error":
                err = a.get("error") or {}
                msg = " ".join(str(err.get("message", "")).split())[:160]
                if err.get("kind") == "argparse":
                    return "[red]the argument parser refused the command line: %s[/red]" % escape(msg)
                return "[red]%s: %s[/red]  [dim](%s)[/dim]" % (escape(str(err.get("type"))), escape(msg), obj)
            stop = (" · stopped at %s" % escape(a["stop"])) if a.get("stop") else ""
            return "%s · %s%s  [dim](full explanation below)[/dim]" % (obj, parts, stop)
        if n.get("message"):
            return escape(n["message"])
        return None

    def _finding_for(self, f, n):
        script = os.path.basename((self.result.get("script") or {}).get("path") or "script")
        if f["kind"] == "broken-continuation":
            lost = (f.get("never_reached") or {}).get(str(n["pid"]), f["flags"])
            out = ["[yellow]%s:%d ends with a space after the backslash: the command ended there[/yellow]"
                   % (escape(script), f["line"])]
            if lost:
                out.append("[yellow]never reached this process: %s[/yellow]" % escape(" ".join(lost)))
            out.append("line %d ran as a command of its own%s" % (
                f["orphan_line"], (": " + escape(f["shell_said"])) if f.get("shell_said") else ""))
            return out
        if f["kind"] == "unexported":
            return ["[yellow]%s is set on %s:%d but never exported: this process did not get it[/yellow]"
                    % (escape(f["name"]), escape(script), f["line"])]
        return []

    # -- the rest ------------------------------------------------------------------------
    def script(self):
        sc = self.result.get("script")
        if not sc or not sc.get("findings"):
            return
        self.print()
        self.print("[bold]SCRIPT[/bold] %s" % escape(_rel(sc["path"], self.result.get("cwd")) or "?"))
        for f in sc["findings"]:
            if f["kind"] == "broken-continuation":
                pids = ", ".join(str(p) for p in f.get("pids") or []) or "no process matched"
                text = f["text"].rstrip(" \t")
                self.print("  line %d: %s" % (f["line"], escape(text + "␣" * (len(f["text"]) - len(text)))))
                self.print("    a space or tab after the backslash ends the command (pid %s); line %d ran as a "
                           "command of its own: %s" % (escape(pids), f["orphan_line"], escape(" ".join(f["orphan"]))))
                lost = sorted({w for words in (f.get("never_reached") or {}).values() for w in words},
                              key=f["orphan"].index)
                if f["flags"] and lost:
                    self.print("    [yellow]never reached the process: %s[/yellow]" % escape(" ".join(lost)))
            elif f["kind"] == "unexported":
                pids = ", ".join(str(p) for p in f.get("pids") or [])
                self.print("  line %d: %s" % (f["line"], escape(f["text"])))
                self.print("    %s is assigned but never exported%s" % (
                    escape(f["name"]), (": not in the environment of pid %s" % pids) if pids else ""))
            elif f["kind"] == "quoted-heredoc":
                self.print("  line %d: %s" % (f["line"], escape(f["text"])))
                one = len(f["names"]) == 1
                self.print("    the heredoc delimiter is quoted (%s), so %s %s whatever reads it unexpanded, "
                           "where %s %s not set (never exported)" % (
                           escape(f["delimiter"]), escape(", ".join("$" + n for n in f["names"])),
                           "reaches" if one else "reach", escape(", ".join(f["names"])), "is" if one else "are"))

    def leftovers(self):
        left = self.result.get("leftovers") or []
        if not left:
            return
        self.print()
        self.print("[bold]STILL RUNNING WHEN THE COMMAND EXITED[/bold] (killed)")
        for item in left:
            self.print("  pid %d  %s%s" % (item["pid"], escape(short_argv(item["argv"])),
                                      "  [yellow](Python)[/yellow]" if item["python"] else ""))

    def explanations(self):
        for n in self.result["processes"]:
            a = n.get("analysis")
            if not a or n["status"] not in ("resolved", "error"):
                continue
            self.print()
            self.console.rule("pid %s · %s" % (n["pid"], short_argv(n["argv"], 80)), style="dim")
            terminal.render(a, verb="run", console=self.console, details=self.details)


def render(result, console, details=False):
    TreeReport(result, console, details=details).render()


def render_doc(result, sink, options):
    """The registry's entry (report/__init__.py) for flagtrace run."""
    render(result, terminal.console_for(sink, options), details=options.get("details"))
