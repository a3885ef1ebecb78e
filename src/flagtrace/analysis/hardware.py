"""Hardware and OS queries the target made: those a decision read (through the lines of its
conditions, its statement and what computed their locals), and those a simulation left to this
machine to answer."""
from . import conditions as cond


def hardware_events(events):
    return [event for event in events if event["kind"] == "hw"]


def _caller_lines(sources, func, names, stack):
    """A parameter a test read (``gpu_mem``) was computed by the caller: where."""
    params = {arg.arg for arg in func.args.args + func.args.kwonlyargs}
    wanted = names & params
    if not wanted or not stack:
        return set(), None
    caller = stack[0]
    text = sources.get(caller.get("file"))
    if not text:
        return set(), None
    outer, _ = cond.chain_at(text, caller["line"])
    return cond.assignment_lines(outer, wanted), caller.get("file")


def hardware_read(hardware, sources, path, func, chain, seq, line, stack=()):
    """Hardware queries the decision at ``path:line`` (in ``func``, under the conditions
    ``chain``) read: asked (directly or through calls) from the lines of its conditions or from
    the statement itself, before ``seq``."""
    if func is None or not hardware:  # (the line sets below cost an AST walk per change)
        return []
    lines = set()
    for condition in chain:
        end = getattr(condition.node, "end_lineno", None) or condition.line
        lines.update(range(condition.line, end + 1))
    lines.update(cond.statement_lines(sources.get(path, ""), line))
    local_names = {name for condition in chain if condition.node is not None
                   for name in cond.names_read(condition.node)}
    statement = cond._statement_node(sources.get(path, ""), line)
    if statement is not None:  # ``return {"x": backend}``: where backend was computed
        local_names.update(name for name in cond.names_read(statement) if name not in ("self", "cls"))
    lines.update(cond.assignment_lines(func, local_names))
    wanted = {(path, number) for number in lines}
    caller_lines, caller_file = _caller_lines(sources, func, local_names, stack)
    wanted.update((caller_file, number) for number in caller_lines)
    out, seen = [], set()
    for event in hardware:
        if event["seq"] > seq:
            continue
        frames = [event.get("at") or {}] + event.get("stack", [])
        for frame in frames:
            if (frame.get("file"), frame.get("line")) in wanted:
                key = (event["query"], event["result"], frame.get("line"))
                if key not in seen:
                    seen.add(key)
                    out.append({"query": event["query"], "result": event["result"],
                                "line": frame.get("line"),
                                "via": (event.get("at") or {}).get("func")})
                break
    return out


def unanswered(trace, hardware):
    """Hardware / OS queries a simulation was running for but did not answer (this machine did)."""
    if not trace.get("simulation"):
        return []
    return [{"query": event["query"], "result": event["result"], "func": (event.get("at") or {}).get("func"),
             "file": (event.get("at") or {}).get("file"), "line": (event.get("at") or {}).get("line")}
            for event in hardware if event.get("unanswered")]
