"""Why each change of a field happened: the code (or declaration) that made it, the conditions
it ran under and what they read, where a local it assigned came from, and what the call logged."""
from . import conditions as cond
from .recorded import event_site


def _log_lines(events):
    return [{"level": event["level"], "logger": event["logger"], "message": event["message"],
             "line": event["at"]["line"]} for event in events if event["kind"] == "log"]


class ChangeExplainer:
    def __init__(self, sources, history, declarations, line_explainer, self_aliases, call_logs):
        self.sources = sources
        self.history = history
        self.declarations = declarations
        self.line_explainer = line_explainer
        self.self_aliases = self_aliases
        self.call_logs = call_logs

    def explain(self, write):
        """The full explanation of one change (``write``)."""
        if write["how"] == "replaced":
            return self._replaced(write)
        decl = self.declarations.get(write.get("decl"))
        if decl is not None:
            return self._declared(write, decl)
        at = event_site(write)
        report = {"seq": write["seq"], "old": write.get("old"), "new": write["new"],
                  "how": write["how"], **at, "stack": write.get("stack", [])}
        report.update(self.line_explainer.explain(
            at["file"], at["line"], write["seq"], write.get("locals", {}), stack=write.get("stack", ()),
            value=write["new"], self_aliases=self.self_aliases.for_function(at.get("func"))))
        attached = self.call_logs.by_write.get(write["seq"], [])
        report["logs"] = _log_lines(attached)
        report["env"] = [{"key": event["key"], "old": event["old"], "new": event["new"], "line": event["at"]["line"]}
                         for event in attached if event["kind"] == "env"]
        return report

    @staticmethod
    def brief(write):
        """A change in the middle of a long run of changes: what and where, not why."""
        return {"seq": write["seq"], "old": write.get("old"), "new": write["new"], "how": write["how"],
                **event_site(write), "brief": True}

    def _replaced(self, write):
        """A nested field's new value because the object holding it was replaced: explained by
        the write that replaced it."""
        parent = self.history.replacing_write(write)
        if parent is None:
            return self.brief(write)
        report = self.explain(parent)
        report.update({"seq": write["seq"], "old": write.get("old"), "new": write["new"], "how": "replaced",
                       "replaced": parent["field"]})
        return report

    def _declared(self, write, decl):
        """A value applied from a declaration: credited to the code that declared it."""
        decider = decl.get("decider") or decl.get("slot") or {}
        slot = decl.get("slot") or {}
        at = self.declarations.decision_site(decl, write["field"])
        # Declared by the code that decided, while it ran (not a pass that had returned): the
        # write carries that frame's stack and locals.
        direct = all(decider.get(key) == slot.get(key) for key in ("func", "file", "line")) and bool(slot)
        stack = write.get("stack", []) if direct else ([slot] if slot else [])
        decider_locals = write.get("locals", {}) if direct else decider.get("locals", {})
        report = {"seq": write["seq"], "old": write.get("old"), "new": write["new"], "how": "declared",
                  **at, "stack": stack,
                  "declared": {"source": decl["source"], "seq": decl["seq"],
                               "slot": {key: slot.get(key) for key in ("func", "file", "line")},
                               "applied": event_site(write)}}
        report.update(self.line_explainer.explain(at["file"], at["line"], decl["seq"], decider_locals,
                                                  stack=stack, value=write["new"]))
        self._add_local_source(report, at, decider.get("lines") or (), decl["seq"], decider_locals)
        attached = list(self.call_logs.by_write.get(write["seq"], []))
        if decider.get("frame") is not None:  # what the pass or provider logged while it decided
            attached += self.call_logs.by_call.get((decider["frame"], decider.get("file"), decider.get("func")), [])
        report["logs"] = _log_lines(attached)
        report["env"] = []
        return report

    def _add_local_source(self, report, at, ran, seq, locals_):
        """The value came from a local: add the line that assigned it, with that line's own ``if``
        chain (every test held: the line ran) and what those tests read (``from_local``)."""
        text = self.sources.get(at.get("file"))
        found = cond.local_source(text, at.get("line"), ran) if text else None
        if found is None:
            return
        name, line = found
        other_locals = {key: value for key, value in locals_.items() if key != name}
        sub = self.line_explainer.explain(at["file"], line, seq, other_locals)
        for condition in sub["conditions"]:
            condition["holds"] = True
        report["from_local"] = {"local": name, "line": line, "src": cond.statement_at(text, line), **sub}
