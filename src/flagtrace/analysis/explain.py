"""Turn a trace into verdicts, changes with their conditions, causal chains and errors.

The result is a plain dict (``flagtrace/analysis@1``): the terminal, JSON and Markdown
reports all render it, and it is what ``--format json`` writes.
"""
import bisect
import dataclasses
import difflib
import re

from . import conditions as cond
from . import verdict

ANALYSIS_SCHEMA = "flagtrace/analysis@1"
VERDICT_ORDER = ("overridden", "decided", "honoured", "default")


class FieldHistory:
    """Every recorded write of one object tree, queryable by field and time (seq)."""

    def __init__(self, writes):
        self.by_field = {}
        for w in writes:
            self.by_field.setdefault(w["field"], []).append(w)
        # Writes that changed something: the initial value and every write whose value differs.
        # A second "init" of a nested field is the first value of the object that replaced its
        # parent: a change when the value differs.
        self.effective = {}
        for f, ws in self.by_field.items():
            kept = []
            for w in ws:
                if w["how"] == "init" and kept:
                    if not _same(kept[-1]["new"], w["new"]):
                        kept.append(dict(w, how="replaced", old=kept[-1]["new"]))
                elif w["how"] == "init" or not _same(w.get("old"), w["new"]):
                    kept.append(w)
            self.effective[f] = kept
        self._seqs = {f: [w["seq"] for w in ws] for f, ws in self.effective.items()}

    def last_before(self, field, seq):
        seqs = self._seqs.get(field)
        if not seqs:
            return None
        i = bisect.bisect_left(seqs, seq)
        return self.effective[field][i - 1] if i else None


def _call_key(event):
    """Which call an event happened in. A frame's id is reused by a later call as soon as the
    frame is freed, so the function is part of the key: a log of one method is never attached
    to a change made by the next method that happens to get the same frame address."""
    at = event.get("at") or {}
    return event.get("frame"), at.get("file"), at.get("func")


FULL_HEAD, FULL_TAIL = 30, 10  # a field changed more often: explain the first and last ones


def _explain_fully(index, total):
    return total <= FULL_HEAD + FULL_TAIL or index < FULL_HEAD or index >= total - FULL_TAIL


def _same(a, b):
    if a is None or b is None:
        return a is b
    return a.get("repr") == b.get("repr")


def _enum_parts(d):
    """(NAME, value) of a recorded enum member (its repr is ``Type.NAME``), else None."""
    kind, text = d.get("type"), d.get("repr")
    if isinstance(kind, str) and isinstance(text, str) and text.startswith(kind + ".") and kind:
        return text[len(kind) + 1:], d.get("value")
    return None


def _same_value(a, b):
    """``_same``, or one is the enum member the other names, as a validator converts it ('3' or 3
    -> OptimizationLevel.O3, 'backed' -> DynamicShapesType.BACKED): the verdict is about the value,
    not its type."""
    if _same(a, b):
        return True
    if a is None or b is None:
        return False
    for member, other in ((a, b), (b, a)):
        parts = _enum_parts(member)
        plain = other.get("value")
        if parts is None or _enum_parts(other) is not None or not isinstance(plain, (str, int)) \
                or isinstance(plain, bool):
            continue
        name, value = parts
        if str(plain) == str(value) or str(plain).lower() == name.lower():
            return True
    return False


def _where(event):
    at = event.get("at") or {}
    return {"func": at.get("func"), "file": at.get("file"), "line": at.get("line"), "src": at.get("src")}


class Explainer:
    def __init__(self, trace):
        self.trace = trace
        self.sources = trace.get("sources", {})
        self.events = trace.get("events", [])
        self.outcome = trace.get("outcome", {})
        self.root = self._primary_object()
        writes = [e for e in self.events if e["kind"] == "write" and e["obj"] == self.root]
        self.history = FieldHistory(writes)
        self.final = (self.outcome.get("fields") or {}).get(str(self.root), {})
        self.fields = set(self.history.by_field) | set(self.final)
        self.requests = self._explicit_requests()
        self.logs_by_frame = {}
        for e in self.events:
            if e["kind"] in ("log", "env") and "frame" in e:
                self.logs_by_frame.setdefault(_call_key(e), []).append(e)
        self.logs_by_write = self._attach_logs(writes)
        self.hardware = [e for e in self.events if e["kind"] == "hw"]
        self.env_first_read = {}
        self.env_writes = {}
        for e in self.events:
            if e["kind"] == "envread":
                self.env_first_read.setdefault(e["key"], e)
            elif e["kind"] == "env":
                self.env_writes.setdefault(e["key"], []).append(e)
        self.decls = {e["seq"]: e for e in self.events if e["kind"] == "decl"}
        self._provenance_cache = {}
        self._nested_cache = {}
        self.after_stop = self._after_stop()

    def _after_stop(self):
        """field -> the code after the stop point that assigns it (the adapter names those
        functions: a value still unset here may be decided there, at model load)."""
        out = {}
        for site in (self.trace.get("adapter") or {}).get("after_stop") or []:
            text = self.sources.get(site["file"])
            lines = text.splitlines() if text else []
            for field, line in cond.attribute_assignments(text, site["func"], site["receiver"]).items():
                out.setdefault(field, {"func": site["func"], "file": site["file"], "line": line,
                                       "src": lines[line - 1].strip(), "when": site.get("when")})
        return out

    def _attach_logs(self, writes):
        """Each log line of a call goes with the change it announces: the change of the same call
        nearest to it in time (code warns then assigns, or assigns then reports)."""
        changes_by_call = {}
        for w in writes:
            if w["how"] != "init" and "frame" in w and not _same(w.get("old"), w["new"]):
                changes_by_call.setdefault(_call_key(w), []).append(w)
        owner = {}
        for key, logs in self.logs_by_frame.items():
            changes = changes_by_call.get(key)
            if not changes:
                continue
            for log in logs:
                # the nearest change of the same call; on a tie the one after (warn, then assign)
                target = min(changes, key=lambda w: (abs(w["seq"] - log["seq"]), w["seq"] < log["seq"]))
                owner.setdefault(target["seq"], []).append(log)
        return owner

    # -- inputs --------------------------------------------------------------------
    def _primary_object(self):
        roots = [o for o in self.trace.get("objects", []) if o.get("parent") is None]
        stopped = self.outcome.get("objects") or []
        if stopped:
            return stopped[0]
        if any(p.get("error") for p in self.trace.get("parses", [])):
            return None  # refused before resolution: objects built so far are defaults, not the config
        return roots[0]["id"] if roots else None

    def _explicit_requests(self):
        """field -> {option, typed, source}; the last parse that mentions it wins."""
        out = {}
        argv = self.trace.get("target", {}).get("argv", [])[1:]
        for parse in self.trace.get("parses", []):
            if parse.get("error"):
                continue
            on_command_line = set(a.split("=", 1)[0] for a in argv if isinstance(a, str))
            for ex in parse.get("explicit", []):
                source = "cli" if ex["typed"] in on_command_line else "config"
                value = ex["value"] if "value" in ex else (parse.get("namespace") or {}).get(ex["dest"])
                field = ex.get("field") or ex["dest"]  # an adapter names the config field a dest becomes
                out[field] = {"option": ex["option"], "typed": ex["typed"], "source": source, "value": value}
                # another option writing the same field: the flag typed is an alias of it
                others = [max(a["options"], key=len) for a in parse.get("actions", [])
                          if a["dest"] == ex["dest"] and ex["option"] not in a["options"] and a["options"]]
                if others:
                    out[field]["alias_of"] = others[0]
            for write in parse.get("namespace_writes", []):
                source = cond.copied_attribute(write["at"].get("src"), out)
                if source is not None:  # args.tp_size = args.tensor_parallel_size: the request moves along
                    out[write["name"]] = dict(out[source], renamed_from=source)
        return out

    # -- per field -----------------------------------------------------------------
    def field_report(self, field):
        writes = self.history.by_field.get(field, [])
        initial = next((w for w in writes if w["how"] == "init"), None)
        fallback = next((w for w in writes if w["how"] == "fallback"), None)
        changes = [w for w in self.history.effective.get(field, []) if w["how"] not in ("init", "fallback")]
        final = self.final.get(field) or (writes[-1]["new"] if writes else None)
        start = initial["new"] if initial else (changes[0].get("old") if changes else final)
        if fallback is not None and not changes:
            start = fallback["new"]  # no code decided it: the field's own fallback for "unset"
        request = self.requests.get(field)
        if request is not None:
            # a config built first and given the request afterwards (a copy) starts elsewhere
            verdict = "honoured" if _same_value(start, final) or _same_value(request.get("value"), final) \
                else "overridden"
        else:
            verdict = "default" if _same_value(start, final) else "decided"
        if request is not None:
            origin = request["source"]
        else:
            origin = "fallback" if fallback is not None else "default"
        report = {
            "field": field, "verdict": verdict, "origin": origin,
            "initial": start, "final": final,
            "changes": [self.change_report(w) if _explain_fully(i, len(changes)) else self.brief_change(w)
                        for i, w in enumerate(changes)],
        }
        if request is not None:
            report["requested"] = {"option": request["option"], "typed": request["typed"]}
            for key in ("alias_of", "renamed_from"):
                if request.get(key):
                    report["requested"][key] = request[key]
        if self.decls:  # a release that declares: every field says what was declared of it, if anything
            report["declarations"] = self.declarations_of(field)
        if fallback is not None:
            report["fallback"] = {"value": fallback["new"], **_where(fallback)}
        if changes and _same(start, final):
            report["note"] = "changed and changed back"
        elif not changes and not _same(start, final):
            report["note"] = ("changed without an assignment flagtrace saw: edited in place (a list "
                              "appended to, a dict updated) by code it was not watching")
        if field in self.after_stop:
            report["after_stop"] = self.after_stop[field]
        return report

    def declared_change(self, write, decl):
        """A value applied from a declaration: credited to the code that declared it."""
        decider = decl.get("decider") or decl.get("slot") or {}
        slot = decl.get("slot") or {}
        at = self.decision_site(decl, write["field"])
        # Declared by the code that decided, while it ran (not a pass that had returned): the
        # write carries that frame's stack and locals.
        direct = all(decider.get(k) == slot.get(k) for k in ("func", "file", "line")) and bool(slot)
        stack = write.get("stack", []) if direct else ([slot] if slot else [])
        report = {"seq": write["seq"], "old": write.get("old"), "new": write["new"], "how": "declared",
                  **at, "stack": stack,
                  "declared": {"source": decl["source"], "seq": decl["seq"],
                               "slot": {k: slot.get(k) for k in ("func", "file", "line")},
                               "applied": _where(write)}}
        report.update(self.explain_line(at["file"], at["line"], decl["seq"],
                                         write.get("locals", {}) if direct else decider.get("locals", {}),
                                         stack=stack, value=write["new"]))
        self._local_source(report, at, decider.get("lines") or (), decl["seq"],
                           write.get("locals", {}) if direct else decider.get("locals", {}))
        attached = list(self.logs_by_write.get(write["seq"], []))
        if decider.get("frame") is not None:  # what the pass or provider logged while it decided
            attached += self.logs_by_frame.get((decider["frame"], decider.get("file"), decider.get("func")), [])
        report["logs"] = [{"level": e["level"], "logger": e["logger"], "message": e["message"],
                           "line": e["at"]["line"]} for e in attached if e["kind"] == "log"]
        report["env"] = []
        return report

    def _local_source(self, report, at, ran, seq, locals_):
        """The value came from a local: add the line that assigned it, with that line's own ``if``
        chain (every test held: the line ran) and what those tests read (``from_local``)."""
        text = self.sources.get(at.get("file"))
        found = cond.local_source(text, at.get("line"), ran) if text else None
        if found is None:
            return
        name, line = found
        sub = self.explain_line(at["file"], line, seq, {k: v for k, v in locals_.items() if k != name})
        for c in sub["conditions"]:
            c["holds"] = True
        report["from_local"] = {"local": name, "line": line, "src": cond.statement_at(text, line), **sub}

    def decision_site(self, decl, field):
        """Where a declaration decided ``field``: for a pass or provider that returned its
        mapping, the line that stored this field's value in it; else the declaring line."""
        decider = decl.get("decider") or decl.get("slot") or {}
        at = {k: decider.get(k) for k in ("func", "file", "line", "src")}
        if decider.get("lines"):
            text = self.sources.get(at["file"])
            stored = cond.key_line(text, at["line"], field, decider["lines"])
            if stored and stored != at["line"]:
                at["line"] = stored
                at["src"] = cond.statement_at(text, stored)
        return at

    def declarations_of(self, field):
        """Every declaration of ``field`` in order; all but the last were superseded."""
        found = [d for d in self.decls.values() if field in d["fields"]]
        return [{"seq": d["seq"], "source": d["source"], "value": d["fields"][field],
                 "decider": self.decision_site(d, field) if d.get("decider") else None, "slot": d.get("slot"),
                 "superseded": i < len(found) - 1}
                for i, d in enumerate(found)]

    def brief_change(self, write):
        """A change in the middle of a long run of changes: what and where, not why."""
        return {"seq": write["seq"], "old": write.get("old"), "new": write["new"], "how": write["how"],
                **_where(write), "brief": True}

    def replaced_change(self, write):
        """A nested field's new value because the object holding it was replaced: explained by
        the write that replaced it."""
        parent = self._replacing_write(write)
        if parent is None:
            return self.brief_change(write)
        report = self.change_report(parent)
        report.update({"seq": write["seq"], "old": write.get("old"), "new": write["new"], "how": "replaced",
                       "replaced": parent["field"]})
        return report

    def _replacing_write(self, write):
        field = write["field"]
        parents = [w for f, ws in self.history.by_field.items() if field.startswith(f + ".")
                   for w in ws if w["how"] != "init" and w["seq"] < write["seq"]]
        return max(parents, key=lambda w: w["seq"]) if parents else None

    def change_report(self, write):
        if write["how"] == "replaced":
            return self.replaced_change(write)
        decl = self.decls.get(write.get("decl"))
        if decl is not None:
            return self.declared_change(write, decl)
        at = _where(write)
        report = {"seq": write["seq"], "old": write.get("old"), "new": write["new"],
                  "how": write["how"], **at, "stack": write.get("stack", [])}
        report.update(self.explain_line(at["file"], at["line"], write["seq"], write.get("locals", {}),
                                         write.get("frame"), stack=write.get("stack", ()), value=write["new"],
                                         self_aliases=self._self_aliases(at.get("func"))))
        attached = self.logs_by_write.get(write["seq"], [])
        report["logs"] = [
            {"level": e["level"], "logger": e["logger"], "message": e["message"], "line": e["at"]["line"]}
            for e in attached if e["kind"] == "log"
        ]
        report["env"] = [{"key": e["key"], "old": e["old"], "new": e["new"], "line": e["at"]["line"]}
                         for e in attached if e["kind"] == "env"]
        return report

    def _self_aliases(self, func):
        """The adapter's map of a builder class's attributes to the fields they become, for code
        of that class (``EngineArgs._set_default_...`` reading ``self.max_num_seqs``)."""
        aliases = (self.trace.get("adapter") or {}).get("self_aliases") or {}
        owner = (func or "").split(".", 1)[0]
        if not owner:
            return None
        if owner in aliases.get("classes", ()):
            return aliases.get("fields")
        return self._nested_self(owner)

    def _nested_self(self, owner):
        """Code of a nested config's class reads ``self.x``: the field is ``<its path>.x``
        (``ParallelConfig.__post_init__`` reading ``self.data_parallel_size`` is
        ``parallel_config.data_parallel_size``), when one object of that class sits in the tree."""
        if owner not in self._nested_cache:
            paths = {o["path"] for o in self.trace.get("objects", [])
                     if o.get("root") == self.root and o.get("path")
                     and o["class"].rsplit(":", 1)[-1].split(".")[0] == owner}
            out = None
            if len(paths) == 1:
                prefix = paths.pop() + "."
                out = {f[len(prefix):]: f for f in self.fields if f.startswith(prefix)}
            self._nested_cache[owner] = out
        return self._nested_cache[owner]

    def explain_line(self, path, line, seq, locals_, frame=None, values_at_raise=None, stack=(), value=None,
                     self_aliases=None):
        """Conditions leading to ``path:line``, and the provenance of what they read. ``value``:
        what the line produced (tells which way a ternary on it went)."""
        text = self.sources.get(path)
        if not text or not line:
            return {"conditions": [], "reads": [], "hardware": []}
        tree = cond.source_index(text)
        func, chain = cond.chain_at(text, line)
        statement = cond.statement_at(text, line)
        conditions, reads, seen = [], [], set()
        for c in chain:
            if c.keyword == "ternary" and c.holds is None and c.choice is not None:
                known = value and (value.get("value") is not None or value.get("repr") == "None")
                produced = value["value"] if known else cond._NOTHING
                c = dataclasses.replace(c, holds=cond.ternary_holds(c.choice, produced, locals_))
            conditions.append({"keyword": c.keyword, "test": c.test, "holds": c.holds, "line": c.line,
                               "text": c.text()})
            if c.node is None:
                continue
            for field in cond.attribute_reads(c.node, self.fields, self_aliases):
                self._add_read(reads, seen, field, seq, None, values_at_raise)
            for base, meth in cond.method_calls(c.node):
                if meth in self.fields:
                    continue
                target = cond.find_method(tree, func, meth) if tree is not None else None
                if target is None:
                    continue
                for field in cond.attribute_reads(target, self.fields):
                    self._add_read(reads, seen, field, seq, "%s.%s()" % (base, meth), values_at_raise)
                self._add_env_reads(reads, seen, target, seq, "%s.%s()" % (base, meth))
            for name in cond.names_read(c.node):
                if name in locals_ and ("local", name) not in seen:
                    seen.add(("local", name))
                    reads.append({"local": name, "value": {"repr": locals_[name]}})
        for node in [c.node for c in chain] + [cond._statement_node(text, line)]:
            self._add_env_reads(reads, seen, node, seq)
        hardware = self._hardware_for(path, func, chain, seq, line, stack)
        return {"conditions": conditions, "reads": reads, "hardware": hardware, "statement": statement}

    def _add_read(self, reads, seen, field, seq, via, values_at_raise):
        if field in seen:
            return
        seen.add(field)
        if values_at_raise is not None and field in values_at_raise:
            value = values_at_raise[field]
        else:
            last = self.history.last_before(field, seq)
            value = last["new"] if last else self.final.get(field)
        read = {"field": field, "value": value, "via": via, **self.provenance(field, seq)}
        pending = self._pending_declaration(field, seq)
        if pending is not None:
            read["declared"] = pending
        reads.append(read)

    def _add_env_reads(self, reads, seen, node, seq, via=None):
        """The environment variables ``node`` names, each once per explanation."""
        for read in self._env_reads_of(node, seq):
            if ("env", read["env"]) not in seen:
                seen.add(("env", read["env"]))
                reads.append(dict(read, via=via) if via else read)

    def _env_reads_of(self, node, seq):
        """The environment variables ``node`` names, as code saw them at ``seq``."""
        names = cond.env_reads(node, self.env_first_read) if node is not None else ()
        return [self.env_value(name, seq) for name in names]

    def env_value(self, name, seq):
        """An environment variable as code saw it at ``seq``: its value and where it came from
        (the launch environment, code that set it, or unset: the framework's default applies)."""
        writes = self.env_writes.get(name, [])
        before = [w for w in writes if w["seq"] < seq]
        if before:
            return {"env": name, "value": before[-1]["new"], "origin": "decided", "set_by": _where(before[-1])}
        value = writes[0]["old"] if writes else self.env_first_read[name]["value"]
        return {"env": name, "value": value, "origin": "environment" if value is not None else "unset"}

    def _statement_env(self, write):
        at = write.get("at") or {}
        text = self.sources.get(at.get("file"))
        if not self.env_first_read or not text or not at.get("line"):
            return []
        return self._env_reads_of(cond._statement_node(text, at["line"]), write["seq"])

    def _pending_declaration(self, field, seq):
        """A declaration of ``field`` made before ``seq`` but not applied yet: code that reads
        through a resolved view (``view.page_size``) sees this value, not the field's own."""
        if not self.decls:
            return None
        applied = [w for w in self.history.by_field.get(field, []) if w.get("decl") and w["seq"] < seq]
        if applied:
            return None
        found = [d for d in self.decls.values() if d["seq"] < seq and field in d["fields"]]
        if not found:
            return None
        d = found[-1]
        return {"value": d["fields"][field], "source": d["source"], "decider": self.decision_site(d, field)}

    def provenance(self, field, seq):
        """Where the value of ``field`` as of ``seq`` came from."""
        last = self.history.last_before(field, seq)
        request = self.requests.get(field)
        if last is None or last["how"] in ("init", "fallback"):
            if request is not None:
                return {"origin": request["source"], "option": request["typed"], "set_by": None}
            return {"origin": "fallback" if last and last["how"] == "fallback" else "default", "set_by": None}
        if last["how"] == "replaced":
            last = dict(self._replacing_write(last) or last, old=last.get("old"))
        out = {"origin": "decided", "set_by": _where(last),
               "was": last.get("old"), "requested": request["typed"] if request else None}
        env = self._statement_env(last)
        if env:  # ``self.data_parallel_size = envs.VLLM_DP_SIZE``: the value came from there
            out["from_env"] = env
        decl = self.decls.get(last.get("decl"))
        if decl is not None:  # applied from a declaration: the code that declared it set it
            out["set_by"] = self.decision_site(decl, field)
            out["declared_as"] = decl["source"]
        return out

    def _caller_lines(self, func, names, stack):
        """A parameter a test read (``gpu_mem``) was computed by the caller: where."""
        params = {a.arg for a in func.args.args + func.args.kwonlyargs}
        wanted = names & params
        if not wanted or not stack:
            return set(), None
        caller = stack[0]
        text = self.sources.get(caller.get("file"))
        if not text:
            return set(), None
        outer, _ = cond.chain_at(text, caller["line"])
        return cond.assignment_lines(outer, wanted), caller.get("file")

    def _hardware_for(self, path, func, chain, seq, line, stack=()):
        """Hardware queries the decision read: asked (directly or through calls) from the
        lines of its conditions or from the statement itself, before ``seq``."""
        if func is None or not self.hardware:  # (the line sets below cost an AST walk per change)
            return []
        lines = set()
        for c in chain:
            node = c.node
            end = getattr(node, "end_lineno", None) or c.line
            lines.update(range(c.line, end + 1))
        lines.update(cond.statement_lines(self.sources.get(path, ""), line))
        local_names = {n for c in chain if c.node is not None for n in cond.names_read(c.node)}
        statement = cond._statement_node(self.sources.get(path, ""), line)
        if statement is not None:  # ``return {"x": backend}``: where backend was computed
            local_names.update(n for n in cond.names_read(statement) if n not in ("self", "cls"))
        lines.update(cond.assignment_lines(func, local_names))
        wanted = {(path, n) for n in lines}
        caller_lines, caller_file = self._caller_lines(func, local_names, stack)
        wanted.update((caller_file, n) for n in caller_lines)
        out, seen = [], set()
        for event in self.hardware:
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

    # -- errors --------------------------------------------------------------------
    def error_report(self):
        status = self.outcome.get("status")
        parse_error = next((p for p in self.trace.get("parses", []) if p.get("error")), None)
        if parse_error is not None and status == "exited":
            return self._parse_error_report(parse_error)
        if status != "raised":
            return None
        exc = self.outcome["exception"]
        frames = exc.get("frames", [])
        site = next((f for f in reversed(frames) if f.get("file") in self.sources), frames[-1] if frames else None)
        report = {"kind": "exception", "type": exc["type"], "message": exc["message"],
                  "site": site and {k: site.get(k) for k in ("func", "file", "line", "src")},
                  "frames": [{k: f.get(k) for k in ("func", "file", "line")} for f in frames[-6:]],
                  "chain": exc.get("chain", [])}
        if site is not None:
            values = self.final
            report.update(self.explain_line(site["file"], site["line"], self.outcome.get("seq", 10**12),
                                            site.get("locals", {}), values_at_raise=values,
                                            self_aliases=self._self_aliases(site.get("func"))))
        # "Please check the logs": what it logged as an error on the way
        report["logs"] = [{"level": e["level"], "message": e["message"]} for e in self.events
                          if e["kind"] == "log" and e["level"] in ("ERROR", "CRITICAL")][-3:]
        report["mentions"] = self._mentioned_values(exc["message"])
        report["hints"] = self._hints(report.get("reads", []) + report["mentions"]) + self._unanswered_hints(frames)
        text = "%s: %s" % (exc["type"], exc["message"])
        # The cause may hide behind the framework's own error ("failed to be inspected. Please check the
        # logs"): in the exceptions it chained, or in what it logged as an error on the way.
        causes = "\n".join([text] + [c.get("message") or "" for c in exc.get("chain", [])]
                           + [log["message"] for log in report["logs"]])
        gap = verdict.simulation_gap(self.trace, causes)
        if gap:  # the simulation's limit, not the framework's own error (exit 3, verdict.exit_code)
            report["simulation_gap"] = gap
        for hint in (gap, verdict.stand_in_gap(self.trace, text), verdict.hub_unreachable(self.trace, text)):
            if hint:
                report["hints"].append({"text": hint})
        return report

    def unanswered(self):
        """Hardware / OS queries a simulation was running for but did not answer (this machine did)."""
        if not self.trace.get("simulation"):
            return []
        return [{"query": e["query"], "result": e["result"], "func": (e.get("at") or {}).get("func"),
                 "file": (e.get("at") or {}).get("file"), "line": (e.get("at") or {}).get("line")}
                for e in self.hardware if e.get("unanswered")]

    def _unanswered_hints(self, frames):
        """An error raised by code that asked something the simulation did not answer."""
        funcs = {f.get("func") for f in frames}
        files = {f.get("file") for f in frames}
        return [{"text": "%s was answered by this machine, not simulated, in %s (%s:%s) before the error: "
                         "the error may come from the simulation" % (u["query"], u["func"], u["file"], u["line"])}
                for u in self.unanswered() if u["func"] in funcs and u["file"] in files]

    def _options(self):
        options = {}
        for parse in self.trace.get("parses", []):
            for action in parse.get("actions", []):
                if action.get("options"):
                    options.setdefault(action["dest"], max(action["options"], key=len))
        return options

    def _hints(self, reads):
        """Fields the failing check read that the user never set, but could have."""
        options = self._options()
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

    def _mentioned_values(self, message):
        """Fields whose current value appears in the error message, with their provenance."""
        out = []
        for field, value in sorted(self.final.items()):
            v = value.get("value")
            if isinstance(v, str) and len(v) >= 3 and _names(v, message):
                out.append({"field": field, "value": value,
                            **self.provenance(field, self.outcome.get("seq", 10**12))})
        return out

    def _parse_error_report(self, parse):
        message = parse["error"]
        options = sorted({o for a in parse.get("actions", []) for o in a["options"]})
        unknown = []
        for word in message.replace(",", " ").replace("/", " ").split():
            word = word.split("=", 1)[0].rstrip(":.;")
            if word.startswith("--") and word not in options:
                unknown.append(word)
        suggestions = {u: difflib.get_close_matches(u, options, n=3, cutoff=0.6) for u in unknown}
        return {"kind": "argparse", "type": "SystemExit", "message": message, "prog": parse.get("prog"),
                "unknown": unknown, "suggestions": suggestions,
                "site": parse.get("at"), "conditions": [], "reads": [], "hardware": []}

    # -- all -----------------------------------------------------------------------
    def analyse(self):
        # A nested config object is reported through its own fields ("graph.backend"), not as
        # a whole, unless it was replaced.
        nested = {o["path"] for o in self.trace.get("objects", [])
                  if o.get("root") == self.root and o.get("parent") is not None}
        # Private attributes (``_resolved_overrides``) are the program's plumbing, not its config.
        names = [f for f in sorted(self.fields) if not f.startswith("_") and ("._" not in f)
                 and (f not in nested or any(w["how"] != "init" for w in self.history.by_field.get(f, [])))]
        fields = [self.field_report(f) for f in names]
        fields.sort(key=lambda r: (VERDICT_ORDER.index(r["verdict"]), r["field"]))
        counts = {v: sum(1 for r in fields if r["verdict"] == v) for v in VERDICT_ORDER}
        objects = self.trace.get("objects", [])
        obj = next((o for o in objects if o["id"] == self.root), None)
        error = self.error_report()
        notes = [p["message"] for p in self.trace.get("problems", [])]
        status = self.outcome.get("status")
        if self.trace.get("request", {}).get("stop_at") and status not in ("stopped", "raised"):
            notes.append("the stop point (%s) was never reached; what ran before is reported"
                         % ", ".join(self.trace["request"]["stop_at"]))
        if obj is None and status != "no_target" and not (error and error["kind"] == "argparse"):
            watched = ", ".join(self.trace.get("request", {}).get("watch") or []) or "a watched class"
            notes.append("the error came before any instance of %s existed: no field was resolved" % watched
                         if error else "no instance of %s was created" % watched)
        return {
            "schema": ANALYSIS_SCHEMA,
            "target": self.trace.get("target", {}),
            "packages": self.trace.get("packages", []),
            "adapter": self.trace.get("adapter"),
            "simulation": self.trace.get("simulation"),
            "inputs": list(self.trace.get("request", {}).get("inputs") or []),
            "unanswered": self.unanswered(),
            "object": obj["class"] if obj else None,
            "status": _status(status, error),
            "stop": self.outcome.get("stop"),
            "summary": {**counts, "fields": len(fields)},
            "fields": fields,
            "error": error,
            "env": [{"key": e["key"], "old": e["old"], "new": e["new"], "how": e.get("how"), **_where(e)}
                    for e in self.events if e["kind"] == "env" and e["old"] != e["new"]],
            "logs": [{"level": e["level"], "logger": e["logger"], "message": e["message"], **_where(e)}
                     for e in self.events if e["kind"] == "log" and e["level"] in ("WARNING", "ERROR", "CRITICAL")],
            "notes": notes,
        }


def _names(value, message):
    """``value`` appears in ``message`` as a word of its own: not inside another word ('cpu' in
    'numa_bind_cpus'), nor inside a URL, path or dotted name ('huggingface' in
    'https://huggingface.co/...', 'auto' in 'transformers.models.auto')."""
    return re.search(r"(?<![\w./:-])%s(?![\w/:-]|\.\w)" % re.escape(value), message) is not None


def _status(status, error):
    if error is not None:
        return "error"
    return {"stopped": "resolved", "completed": "resolved"}.get(status, status)


def analyse(trace):
    return Explainer(trace).analyse()


def field_history(analysis, field):
    for report in analysis["fields"]:
        if report["field"] == field:
            return report
    return None
