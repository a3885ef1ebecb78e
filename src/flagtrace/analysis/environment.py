"""Environment variables as the target's code saw them: the value of one at a point in time
(seq) and where it came from, and the variables a statement or condition reads."""
from . import conditions as cond
from .recorded import event_site


class EnvironmentHistory:
    """The first read of each variable and every write of it, from the trace's events."""

    def __init__(self, events, sources):
        self.sources = sources
        self.first_read = {}
        self.writes = {}
        for event in events:
            if event["kind"] == "envread":
                self.first_read.setdefault(event["key"], event)
            elif event["kind"] == "env":
                self.writes.setdefault(event["key"], []).append(event)

    def value_at(self, name, seq):
        """An environment variable as code saw it at ``seq``: its value and where it came from
        (the launch environment, code that set it, or unset: the framework's default applies)."""
        writes = self.writes.get(name, [])
        before = [write for write in writes if write["seq"] < seq]
        if before:
            return {"env": name, "value": before[-1]["new"], "origin": "decided", "set_by": event_site(before[-1])}
        value = writes[0]["old"] if writes else self.first_read[name]["value"]
        return {"env": name, "value": value, "origin": "environment" if value is not None else "unset"}

    def reads_of(self, node, seq):
        """The environment variables ``node`` names, as code saw them at ``seq``."""
        names = cond.env_reads(node, self.first_read) if node is not None else ()
        return [self.value_at(name, seq) for name in names]

    def read_by_statement(self, write):
        """The environment variables the statement that made ``write`` read."""
        at = write.get("at") or {}
        text = self.sources.get(at.get("file"))
        if not self.first_read or not text or not at.get("line"):
            return []
        return self.reads_of(cond._statement_node(text, at["line"]), write["seq"])
