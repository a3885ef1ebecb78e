"""Why a line ran: the conditions on the path to it (which way each went), and what they read —
fields with their value and provenance, locals, environment variables, hardware answers."""
import dataclasses

from . import conditions as cond
from .hardware import hardware_read


class LineExplainer:
    """Explains lines of the target's code against what the trace recorded of the watched
    object tree (``history``, ``final`` values, ``fields``)."""

    def __init__(self, sources, fields, history, final, provenance, declarations, environment, hardware):
        self.sources = sources
        self.fields = fields
        self.history = history
        self.final = final
        self.provenance = provenance
        self.declarations = declarations
        self.environment = environment
        self.hardware = hardware

    def explain(self, path, line, seq, locals_, values_at_raise=None, stack=(), value=None, self_aliases=None):
        """Conditions leading to ``path:line``, and the provenance of what they read. ``value``:
        what the line produced (tells which way a ternary on it went)."""
        text = self.sources.get(path)
        if not text or not line:
            return {"conditions": [], "reads": [], "hardware": []}
        tree = cond.source_index(text)
        func, chain = cond.chain_at(text, line)
        statement = cond.statement_at(text, line)
        conditions, reads, seen = [], [], set()
        for condition in chain:
            if condition.keyword == "ternary" and condition.holds is None and condition.choice is not None:
                known = value and (value.get("value") is not None or value.get("repr") == "None")
                produced = value["value"] if known else cond._NOTHING
                condition = dataclasses.replace(condition,
                                                holds=cond.ternary_holds(condition.choice, produced, locals_))
            conditions.append({"keyword": condition.keyword, "test": condition.test, "holds": condition.holds,
                               "line": condition.line, "text": condition.text()})
            if condition.node is None:
                continue
            for field in cond.attribute_reads(condition.node, self.fields, self_aliases):
                self._add_field_read(reads, seen, field, seq, None, values_at_raise)
            for base, method in cond.method_calls(condition.node):
                if method in self.fields:
                    continue
                target = cond.find_method(tree, func, method) if tree is not None else None
                if target is None:
                    continue
                via = "%s.%s()" % (base, method)
                for field in cond.attribute_reads(target, self.fields):
                    self._add_field_read(reads, seen, field, seq, via, values_at_raise)
                self._add_env_reads(reads, seen, target, seq, via)
            for name in cond.names_read(condition.node):
                if name in locals_ and ("local", name) not in seen:
                    seen.add(("local", name))
                    reads.append({"local": name, "value": {"repr": locals_[name]}})
        for node in [condition.node for condition in chain] + [cond._statement_node(text, line)]:
            self._add_env_reads(reads, seen, node, seq)
        hardware = hardware_read(self.hardware, self.sources, path, func, chain, seq, line, stack)
        return {"conditions": conditions, "reads": reads, "hardware": hardware, "statement": statement}

    def _add_field_read(self, reads, seen, field, seq, via, values_at_raise):
        if field in seen:
            return
        seen.add(field)
        if values_at_raise is not None and field in values_at_raise:
            value = values_at_raise[field]
        else:
            last = self.history.last_before(field, seq)
            value = last["new"] if last else self.final.get(field)
        read = {"field": field, "value": value, "via": via, **self.provenance.of(field, seq)}
        pending = self.declarations.pending(field, seq, self.history)
        if pending is not None:
            read["declared"] = pending
        reads.append(read)

    def _add_env_reads(self, reads, seen, node, seq, via=None):
        """The environment variables ``node`` names, each once per explanation."""
        for read in self.environment.reads_of(node, seq):
            if ("env", read["env"]) not in seen:
                seen.add(("env", read["env"]))
                reads.append(dict(read, via=via) if via else read)
