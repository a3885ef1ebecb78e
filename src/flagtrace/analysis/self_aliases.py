"""Which config field a ``self.x`` read names in code of a class other than the config's own: a
builder class the adapter maps, or the class of a nested config object."""


class SelfAliases:
    def __init__(self, trace, root, fields):
        self.trace = trace
        self.root = root
        self.fields = fields
        self._nested_by_class = {}

    def for_function(self, func):
        """The adapter's map of a builder class's attributes to the fields they become, for code
        of that class (``EngineArgs._set_default_...`` reading ``self.max_num_seqs``)."""
        aliases = (self.trace.get("adapter") or {}).get("self_aliases") or {}
        owner = (func or "").split(".", 1)[0]
        if not owner:
            return None
        if owner in aliases.get("classes", ()):
            return aliases.get("fields")
        return self._nested(owner)

    def _nested(self, owner):
        """Code of a nested config's class reads ``self.x``: the field is ``<its path>.x``
        (``ParallelConfig.__post_init__`` reading ``self.data_parallel_size`` is
        ``parallel_config.data_parallel_size``), when one object of that class sits in the tree."""
        if owner not in self._nested_by_class:
            paths = {obj["path"] for obj in self.trace.get("objects", [])
                     if obj.get("root") == self.root and obj.get("path")
                     and obj["class"].rsplit(":", 1)[-1].split(".")[0] == owner}
            out = None
            if len(paths) == 1:
                prefix = paths.pop() + "."
                out = {field[len(prefix):]: field for field in self.fields if field.startswith(prefix)}
            self._nested_by_class[owner] = out
        return self._nested_by_class[owner]
