"""Turn a run document (``flagtrace/run@1``: what every process of a launch command recorded,
what /proc showed, the traces of the probed ones) into a process tree with verdicts.

Per process: pid/ppid, interpreter, venv, Python version, argv exactly as received, the relevant
environment, the framework and where it came from, and, for those that resolved a config, the
full analysis (analysis.explain.analyse). Python processes that could not be probed are listed
with the reason; nothing is silently missing. Works offline on a saved run document.
"""
import json
import os

from ..core import trace as tracefile
from ..core.exitcodes import ExitCode, FlagtraceError
from ..core.frameworks import with_tested
from . import verdict
from ..probe.bootstrap.proctable import is_python_path, shebang_python
from ..probe.common.cmdline import python_options
from ..probe.common.recorded import env_matcher, relevant_env
from .explain import analyse
from .script import check_script, command_matches

RUN_ANALYSIS_SCHEMA = "flagtrace/run-analysis@1"

# status -> what it means for the exit code (docs/exit-codes.md)
NOT_PROBED = "not probed"


def analyse_run(doc, strict=False):
    """The process tree of a run document, with each process's verdict and the exit code."""
    records = {}
    for rec in doc.get("records", []):
        records.setdefault(rec["pid"], []).append(rec)
    scanned = {m["pid"]: m for m in doc.get("scanned", [])}
    traces = {int(pid): t for pid, t in doc.get("traces", {}).items()}
    missing = {}
    for item in doc.get("missing", []):
        missing.setdefault(item["pid"], []).append(item["module"])
    errors = {}
    for item in doc.get("errors", []):
        errors.setdefault(item["pid"], []).append(item)
    site_dir = doc.get("site_dir")
    names = (doc.get("request") or {}).get("names") or []

    nodes = {}
    probe_dir = (doc.get("request") or {}).get("probe_dir")
    for pid, recs in records.items():
        if _own_tool(recs[-1].get("argv"), probe_dir):
            continue
        nodes[pid] = _probed_node(pid, recs, scanned.get(pid), traces.get(pid), missing.get(pid, []),
                                  errors.get(pid, []), site_dir, names, strict)
    for pid, member in scanned.items():
        parent = scanned.get(member["ppid"]) or {}
        if (parent.get("argv") == member.get("argv") and parent.get("exe") == member.get("exe")) or \
                _own_tool(member.get("argv"), probe_dir):
            continue  # between fork and exec (not a program of its own), or flagtrace's simulated tools
        if member.get("python") and pid not in nodes and member.get("argv"):
            nodes[pid] = _unprobed_node(pid, member["ppid"], member["argv"], member.get("env"), site_dir,
                                        exe=member.get("exe"), history=member.get("history"))
    for spawn in doc.get("spawns", []):
        pid = spawn.get("pid")
        if spawn.get("kind") in ("execv", "execve") and pid in nodes:
            _exec_note(nodes[pid], spawn, records.get(pid, []), site_dir)
            continue
        if pid is None or pid in nodes or spawn.get("error"):
            continue
        argv = spawn.get("argv") or []
        if not _python_command(argv, spawn.get("executable")):
            continue
        env = {"PYTHONPATH": spawn.get("pythonpath")} if spawn.get("env_given") or spawn.get("pythonpath") else None
        node = _unprobed_node(pid, spawn["parent"], argv, env, site_dir)
        node["spawned_by"] = spawn["parent"]
        nodes[pid] = node
    root = doc.get("root_pid")
    _add_structure(nodes, scanned, root, doc.get("command") or [])
    for node in nodes.values():  # a child seen between fork and exec still shows its parent's argv
        parent = scanned.get(node["ppid"]) or {}
        node["started_as"] = [h for h in node["started_as"] if h and h != parent.get("argv")
                              and h not in (parent.get("history") or [])]
    findings = _script_findings(doc, nodes)
    leftovers = [{"pid": m["pid"], "argv": m.get("argv") or [], "python": bool(m.get("python"))}
                 for m in doc.get("leftovers", [])]
    pythons = [n for n in nodes.values() if n["kind"] == "python"]
    summary = {
        "processes": len(nodes), "python": len(pythons),
        "probed": sum(1 for n in pythons if n["probed"]),
        "not_probed": sum(1 for n in pythons if not n["probed"]),
        "resolved": sum(1 for n in pythons if n["status"] == "resolved"),
        "errors": sum(1 for n in pythons if n["status"] == "error"),
    }
    result = {
        "schema": RUN_ANALYSIS_SCHEMA, "command": doc.get("command"), "cwd": doc.get("cwd"),
        "exit_status": doc.get("exit_status"), "timed_out": doc.get("timed_out", False),
        "interrupted": doc.get("interrupted", False), "live": doc.get("live", False),
        "duration_s": doc.get("duration_s"), "timeout": doc.get("timeout"), "root_pid": root, "watched": names,
        "simulation": _simulation(doc), "summary": summary,
        "processes": [nodes[pid] for pid in _tree_order(nodes, root)],
        "script": {"path": (doc.get("script") or {}).get("path"), "findings": findings} if doc.get("script") else None,
        "leftovers": leftovers, "stderr": doc.get("stderr", ""), "via": doc.get("via"),
    }
    result["exit_code"], result["message"] = _exit(result, pythons, leftovers, names)
    return result


# -- nodes ---------------------------------------------------------------------------------
def _base(pid, ppid, argv):
    return {"pid": pid, "ppid": ppid, "parent": ppid, "kind": "python", "probed": False, "reason": None,
            "interpreter": None, "venv": None, "python": None, "argv": list(argv), "env": None,
            "cwd": None, "started_as": [], "spawned_by": None, "forked_from": None, "frameworks": [],
            "status": None, "message": None, "analysis": None, "exit_code": 0, "hints": argv_hints(argv),
            "findings": [], "bootstrap_errors": [], "missing_imports": []}


def _probed_node(pid, recs, member, trace, missing, errors, site_dir, names, strict):
    rec = recs[-1]
    node = _base(pid, rec["ppid"], rec.get("argv") or [])
    node.update({"probed": True, "interpreter": rec.get("executable"), "venv": rec.get("venv"),
                 "python": rec.get("python"), "env": _display_env(rec.get("env") or {}, site_dir),
                 "cwd": rec.get("cwd"), "forked_from": rec.get("forked_from"),
                 "started_as": [r.get("argv") for r in recs[:-1]],
                 "missing_imports": sorted(set(missing)),
                 "bootstrap_errors": [e.get("where") + ": " + (e.get("error") or "").strip().splitlines()[-1]
                                      for e in errors if e.get("error")]})
    if member and member.get("history"):
        earlier = [h for h in member["history"] if h != node["argv"] and h not in node["started_as"]]
        node["started_as"] = earlier + node["started_as"]
    if rec.get("unsupported"):
        node.update(probed=False, status=NOT_PROBED, reason=rec["unsupported"])
        return node
    if trace is None:
        node["status"] = "not watched"
        if rec.get("forked_from"):
            node["message"] = "a fork of pid %s without exec: the same program, reported through its parent" \
                % rec["forked_from"]
        elif missing:
            node["message"] = "imported %s, which is not installed for %s" % (
                ", ".join(sorted(set(missing))), rec.get("executable"))
        else:
            node["message"] = "did not import %s" % (" or ".join(names) or "a watched package")
        return node
    _with_trace(node, trace, strict)
    return node


def _with_trace(node, trace, strict):
    try:
        trace = tracefile.check(trace, "the trace of pid %s" % node["pid"])
    except FlagtraceError as exc:
        node.update(status="problem", message=exc.message, exit_code=int(ExitCode.CANNOT_RUN))
        return
    node["frameworks"] = [{"module": p["module"], "version": p.get("version"), "file": p.get("file")}
                          for p in trace.get("packages", []) if p.get("imported")]
    node["adapter"] = with_tested(trace.get("adapter"))
    outcome = trace["outcome"]
    status = outcome.get("status")
    stop = verdict.gate(trace, died=False)  # a process that died early: "no config", below
    if stop:
        node.update(status=stop.status, message=stop.message, exit_code=int(ExitCode.CANNOT_RUN))
        return
    try:
        analysis = analyse(trace)
    except Exception as exc:  # a damaged trace must not hide the rest of the tree
        node.update(status="problem", message="could not analyse its trace: %s: %s" % (type(exc).__name__, exc),
                    exit_code=int(ExitCode.CANNOT_RUN))
        return
    node["analysis"] = analysis
    if analysis.get("object") is None and not analysis.get("error"):
        what = {"raised": "raised %s" % (outcome.get("exception") or {}).get("type"),
                "exited": "exited with status %s" % outcome.get("exit_code")}.get(status, "ended")
        node.update(status="no config", message="%s before creating %s" % (
            what, ", ".join((trace.get("request") or {}).get("watch") or []) or "a watched object"))
        if status in ("raised", "exited"):  # as explain: it died before resolution started
            node["exit_code"] = int(ExitCode.CANNOT_RUN)
        return
    node.update(status=analysis["status"] if analysis["status"] in ("error", "incomplete") else "resolved",
                exit_code=int(verdict.exit_code(analysis, strict)))
    after = outcome.get("after")
    if after:
        node["after"] = after


def _unprobed_node(pid, ppid, argv, env, site_dir, exe=None, history=None):
    node = _base(pid, ppid, argv)
    node.update(status=NOT_PROBED, interpreter=exe or (argv[0] if argv else None),
                reason=unprobed_reason(argv, env, site_dir),
                env=_display_env(_relevant_only(env), site_dir) if env is not None else None)
    if history:
        node["started_as"] = [h for h in history if h != argv]
    return node


def _exec_note(node, spawn, recs, site_dir):
    """A probed process replaced itself (os.exec*): say with what, and whether that was probed."""
    argv = spawn.get("argv") or []
    if recs and recs[-1].get("argv") == argv:
        return  # the new program recorded itself: it is this node
    note = {"argv": argv}
    if _python_command(argv, spawn.get("executable")):
        env = {"PYTHONPATH": spawn.get("pythonpath")} if spawn.get("env_given") else None
        note["reason"] = unprobed_reason(argv, env, site_dir)
    node.setdefault("execd", []).append(note)


def _own_tool(argv, probe_dir):
    """flagtrace's own simulated GPU tools (nvidia-smi & co. run a probe script)."""
    return bool(probe_dir and argv and len(argv) > 1 and argv[1].startswith(probe_dir + os.sep))


def unprobed_reason(argv, env, site_dir):
    """Why a Python process never ran the bootstrap, from its argv and environment."""
    options = python_options(argv) if argv else {"flags": []}
    flags = options.get("flags", [])
    if "I" in flags:
        return "-I (isolated mode) ignores PYTHONPATH, so flagtrace's bootstrap was never imported"
    if "E" in flags:
        return "-E ignores PYTHON* environment variables, PYTHONPATH included, so flagtrace's bootstrap " \
               "was never imported"
    if "S" in flags:
        return "-S skips the site module, so no sitecustomize (flagtrace's bootstrap) ran"
    if env is not None:
        pythonpath = env.get("PYTHONPATH")
        if pythonpath is None:
            return "PYTHONPATH was removed from its environment by whatever started it"
        if site_dir and site_dir not in pythonpath.split(os.pathsep):
            return "its launcher reset PYTHONPATH (to %r), dropping flagtrace's bootstrap" % pythonpath
    if options.get("mode") == "info":
        return "it only printed %s" % options.get("target")
    return "it wrote no record: it ended before site ran, or another sitecustomize came first on sys.path"


def _python_command(argv, executable=None):
    first = executable or (argv[0] if argv else None)
    if not first:
        return False
    return is_python_path(first) or shebang_python(first, which=None) is not None


def _relevant_only(env):
    from ..core.frameworks import env_patterns

    return relevant_env(env or {}, env_matcher(env_patterns()))


def _display_env(env, site_dir):
    """The relevant environment as the user set it: flagtrace's own entry taken out of
    PYTHONPATH (and PYTHONPATH left out when it held only that)."""
    out = dict(env)
    value = out.get("PYTHONPATH")
    if value is not None and site_dir:
        parts = [p for p in value.split(os.pathsep) if p != site_dir]
        if parts:
            out["PYTHONPATH"] = os.pathsep.join(parts)
        else:
            del out["PYTHONPATH"]
    return dict(sorted(out.items()))


def _add_structure(nodes, scanned, root, command):
    """The processes between the command and its Python processes (the shell, a wrapper)."""
    def add(pid):
        member = scanned.get(pid)
        if pid in nodes or member is None:
            return
        node = _base(pid, member["ppid"], member.get("argv") or [])
        node.update(kind="process", status="process", hints=[], started_as=[
            h for h in member.get("history") or [] if h != member.get("argv")])
        nodes[pid] = node

    if root is not None:
        add(root)
        if root not in nodes:
            node = _base(root, None, command)
            node.update(kind="process", status="process", hints=[])
            nodes[root] = node
    for pid in list(nodes):
        seen = set()
        parent = nodes[pid]["ppid"]
        while parent is not None and parent not in seen and parent in scanned and parent != root:
            seen.add(parent)
            add(parent)
            parent = scanned[parent]["ppid"]
    for pid, node in nodes.items():
        if pid == root:
            node["parent"] = None
        elif node["parent"] not in nodes:
            node["parent"] = root if root in nodes else None
            node["reparented"] = node["ppid"] is not None


def _tree_order(nodes, root):
    children = {}
    for pid, node in nodes.items():
        children.setdefault(node["parent"], []).append(pid)
    out = []

    def walk(pid, depth):
        nodes[pid]["depth"] = depth
        out.append(pid)
        for child in sorted(children.get(pid, [])):
            walk(child, depth + 1)

    for top in sorted(children.get(None, [])):
        walk(top, 0)
    for pid in nodes:  # cycles cannot happen with real pids; never drop one anyway
        if pid not in out:
            nodes[pid]["depth"] = 0
            out.append(pid)
    return out


# -- hints -----------------------------------------------------------------------------------
def argv_hints(argv):
    """Arguments that look like a launch script's quoting went wrong."""
    hints = []
    for i, arg in enumerate(argv[1:], 1):
        if not isinstance(arg, str):
            continue
        prev = argv[i - 1] if i > 1 else None
        if arg and not arg.strip():
            hints.append({"index": i, "kind": "blank",
                          "text": "argument %d is %r, only blanks: a backslash followed by a space at the end of "
                                  "a script line passes an escaped space and ends the command" % (i, arg)})
        elif arg == "":
            hints.append({"index": i, "kind": "empty",
                          "text": "argument %d is empty%s: an unset or unexported variable?" % (
                              i, (" (the value of %s)" % prev) if prev and prev.startswith("-") else "")})
        elif arg.startswith("-") and len(arg) > 1 and any(c.isspace() for c in arg):
            flag = arg.split(None, 1)[0]
            hints.append({"index": i, "kind": "joined",
                          "text": "argument %d %r is ONE argument holding a flag and its value (quoted "
                                  "together in the script?): the program does not see %s" % (i, arg, flag)})
        elif _quoted(arg):
            hints.append({"index": i, "kind": "quotes",
                          "text": "argument %d %r carries quote characters: quotes inside a variable or "
                                  "a re-quoted string reach the program literally" % (i, arg)})
        elif arg[:1] in "{[" and not _json_ok(arg):
            hints.append({"index": i, "kind": "json",
                          "text": "argument %d starts like JSON but is not valid JSON: %r" % (i, arg[:120])})
    return hints


def _quoted(arg):
    return arg[:1] in "'\"" or arg[-1:] in "'\"" or '\\"' in arg or "\\'" in arg


def _json_ok(arg):
    try:
        json.loads(arg)
        return True
    except ValueError:
        return False


def _script_findings(doc, nodes):
    script = doc.get("script")
    if not script:
        return []
    findings = check_script(script.get("text") or "")
    pythons = [n for n in nodes.values() if n["kind"] == "python"]
    stderr = doc.get("stderr") or ""
    for f in findings:
        if f["kind"] == "broken-continuation":
            ran = [n for n in pythons if command_matches(f["command"], n["argv"])]
            f["pids"] = [n["pid"] for n in ran]
            f["never_reached"] = {str(n["pid"]): [w for w in f["orphan"] if w not in n["argv"][1:]] for n in ran}
            first = f["orphan"][0] if f["orphan"] else None
            if first:
                f["shell_said"] = next((l.strip() for l in stderr.splitlines()
                                        if "%s: command not found" % first in l
                                        or "%s: not found" % first in l), None)
            for n in ran:
                n["findings"].append(f)
        elif f["kind"] == "unexported":
            f["pids"] = [n["pid"] for n in pythons if n["probed"] and n["env"] is not None
                         and f["name"] not in n["env"]]
            for n in pythons:
                if n["pid"] in f["pids"]:
                    n["findings"].append(f)
    return findings


# -- run level -------------------------------------------------------------------------------
def _simulation(doc):
    for trace in (doc.get("traces") or {}).values():
        if trace.get("simulation"):
            return trace["simulation"].get("describe")
    gpu = (doc.get("request") or {}).get("gpu")
    return gpu.get("name") if gpu else None


def _exit(result, pythons, leftovers, names):
    """(exit code, one-line message or None), per docs/exit-codes.md: the worst process decides."""
    command = " ".join(result.get("command") or [])
    if result["timed_out"]:
        return int(ExitCode.CANNOT_RUN), ("%s did not finish within %gs (--timeout); it and its children "
                                          "were killed" % (command, result.get("timeout") or 0))
    if result["interrupted"]:
        return int(ExitCode.INTERRUPTED), "interrupted: %s and its children were killed" % command
    stuck = [l for l in leftovers if l["python"]]
    if stuck:
        first = stuck[0]
        return int(ExitCode.CANNOT_RUN), (
            "a Python process was still running when %s exited: pid %d (%s); it was killed%s" % (
                command, first["pid"], " ".join(first["argv"])[:200],
                (" with %d more" % (len(leftovers) - 1)) if len(leftovers) > 1 else ""))
    if not pythons:
        return int(ExitCode.CANNOT_RUN), "%s exited with status %s before starting any Python process" % (
            command, result.get("exit_status"))
    explained = [n for n in pythons if n["status"] in ("resolved", "error", "no config", "refused", "problem")]
    if not explained:
        unprobed = [n for n in pythons if not n["probed"]]
        if unprobed and len(unprobed) == len(pythons):
            return int(ExitCode.CANNOT_RUN), "no Python process under %s could be probed (%s)" % (
                command, unprobed[0]["reason"])
        missing = [n for n in pythons if n["missing_imports"] and n["status"] == "not watched"]
        if missing:  # the framework is not installed where the command ran
            return int(ExitCode.CANNOT_RUN), "pid %d: %s" % (missing[0]["pid"], missing[0]["message"])
        return int(ExitCode.CANNOT_RUN), "no Python process under %s imported %s (%d ran; see the tree)" % (
            command, " or ".join(names) or "a watched package", len(pythons))
    code = max(n["exit_code"] for n in pythons)
    if code == ExitCode.CANNOT_RUN:
        bad = next(n for n in pythons if n["exit_code"] == code)
        return code, "pid %d: %s" % (bad["pid"], bad["message"])
    return code, None
