"""The watched object tree and every recorded write of it: which object is the config, and each
field's writes, queryable by field and time (seq)."""
import bisect

from .recorded import same_repr


def primary_object(trace):
    """The id of the object tree flagtrace explains: the one the stop point caught, else the first
    root object built; None when argument parsing refused before resolution."""
    roots = [obj for obj in trace.get("objects", []) if obj.get("parent") is None]
    stopped = trace.get("outcome", {}).get("objects") or []
    if stopped:
        return stopped[0]
    if any(parse.get("error") for parse in trace.get("parses", [])):
        return None  # refused before resolution: objects built so far are defaults, not the config
    return roots[0]["id"] if roots else None


class FieldHistory:
    """Every recorded write of one object tree, queryable by field and time (seq)."""

    def __init__(self, writes):
        self.by_field = {}
        for write in writes:
            self.by_field.setdefault(write["field"], []).append(write)
        # Writes that changed something: the initial value and every write whose value differs.
        # A second "init" of a nested field is the first value of the object that replaced its
        # parent: a change when the value differs.
        self.effective = {}
        for field, field_writes in self.by_field.items():
            kept = []
            for write in field_writes:
                if write["how"] == "init" and kept:
                    if not same_repr(kept[-1]["new"], write["new"]):
                        kept.append(dict(write, how="replaced", old=kept[-1]["new"]))
                elif write["how"] == "init" or not same_repr(write.get("old"), write["new"]):
                    kept.append(write)
            self.effective[field] = kept
        self._seqs = {field: [write["seq"] for write in kept] for field, kept in self.effective.items()}

    def last_before(self, field, seq):
        """The last effective write of ``field`` before ``seq``, or None."""
        seqs = self._seqs.get(field)
        if not seqs:
            return None
        index = bisect.bisect_left(seqs, seq)
        return self.effective[field][index - 1] if index else None

    def replacing_write(self, write):
        """The write that replaced the object holding ``write``'s (nested) field: the last
        assignment to one of its parent fields before it, or None."""
        field = write["field"]
        parents = [parent for name, parent_writes in self.by_field.items() if field.startswith(name + ".")
                   for parent in parent_writes if parent["how"] != "init" and parent["seq"] < write["seq"]]
        return max(parents, key=lambda parent: parent["seq"]) if parents else None
