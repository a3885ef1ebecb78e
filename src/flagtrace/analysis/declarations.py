"""Declarations: values a pass or provider of the framework declared for fields (applied to the
config later): where each was decided, every declaration of a field, and one not applied yet."""
from . import conditions as cond


class Declarations:
    """The trace's ``decl`` events by seq, with the sources that locate the code that decided."""

    def __init__(self, events, sources):
        self.by_seq = {event["seq"]: event for event in events if event["kind"] == "decl"}
        self.sources = sources

    def __bool__(self):
        return bool(self.by_seq)

    def get(self, seq):
        return self.by_seq.get(seq)

    def decision_site(self, decl, field):
        """Where a declaration decided ``field``: for a pass or provider that returned its
        mapping, the line that stored this field's value in it; else the declaring line."""
        decider = decl.get("decider") or decl.get("slot") or {}
        at = {key: decider.get(key) for key in ("func", "file", "line", "src")}
        if decider.get("lines"):
            text = self.sources.get(at["file"])
            stored = cond.key_line(text, at["line"], field, decider["lines"])
            if stored and stored != at["line"]:
                at["line"] = stored
                at["src"] = cond.statement_at(text, stored)
        return at

    def of_field(self, field):
        """Every declaration of ``field`` in order; all but the last were superseded."""
        found = [decl for decl in self.by_seq.values() if field in decl["fields"]]
        return [{"seq": decl["seq"], "source": decl["source"], "value": decl["fields"][field],
                 "decider": self.decision_site(decl, field) if decl.get("decider") else None,
                 "slot": decl.get("slot"), "superseded": index < len(found) - 1}
                for index, decl in enumerate(found)]

    def pending(self, field, seq, history):
        """A declaration of ``field`` made before ``seq`` but not applied yet (``history``: the
        field's writes): code that reads through a resolved view (``view.page_size``) sees this
        value, not the field's own."""
        if not self.by_seq:
            return None
        applied = [write for write in history.by_field.get(field, []) if write.get("decl") and write["seq"] < seq]
        if applied:
            return None
        found = [decl for decl in self.by_seq.values() if decl["seq"] < seq and field in decl["fields"]]
        if not found:
            return None
        decl = found[-1]
        return {"value": decl["fields"][field], "source": decl["source"],
                "decider": self.decision_site(decl, field)}
