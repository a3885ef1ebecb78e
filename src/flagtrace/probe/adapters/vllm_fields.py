"""vLLM, inside the target: which ``VllmConfig`` field each ``EngineArgs`` field becomes.

``create_engine_config`` builds every sub-config from ``EngineArgs`` attributes
(``SchedulerConfig(max_num_seqs=self.max_num_seqs, ...)``, ``AttentionConfig(backend=self.attention_backend)``).
The map is read from that source, not kept as a table: ``self.<attr>`` passed as keyword ``k`` to
``<Class>(...)`` makes ``attr`` the field ``<field of VllmConfig holding a Class>.k``.
Standard library only, Python >= 3.9.
"""
import ast
import dataclasses
import re

_CLASS_NAME = re.compile(r"\b([A-Z]\w*Config)\b")
ROOT = "VllmConfig"


def config_fields(vllm_config_class):
    """Class name -> the ``VllmConfig`` field that holds an instance of it (first one wins)."""
    out = {}
    for f in dataclasses.fields(vllm_config_class):
        text = f.type if isinstance(f.type, str) else getattr(f.type, "__name__", None) or repr(f.type)
        for name in _CLASS_NAME.findall(text):
            out.setdefault(name, f.name)
    return out


def _self_attr(node):
    """``self.attr`` (also inside ``cast(T, self.attr)`` or ``x if c else self.attr``) -> attr."""
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
        return node.attr
    if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "cast" and len(node.args) == 2:
        return _self_attr(node.args[1])
    return None


def parse(source):
    """The builder's module tree (None where it does not parse); a tree is returned as it is."""
    if source is None or isinstance(source, ast.AST):
        return source
    try:
        return ast.parse(source)
    except (SyntaxError, ValueError):
        return None


def engine_arg_copies(source, holders):
    """EngineArgs attribute -> the fields of configs the builder holds that it is copied into
    (``self.structured_outputs_config.reasoning_parser = self.reasoning_parser``): the option
    of that attribute decides those fields too."""
    tree = parse(source)
    held = set(holders.values())
    out = {}
    for node in ast.walk(tree) if tree is not None else ():
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Attribute):
            target, attr = node.targets[0], _self_attr(node.value)
            holder = _self_attr(target.value)
            path = "%s.%s" % (holder, target.attr)
            if attr and holder in held and path not in out.setdefault(attr, []):
                out[attr].append(path)
    return {k: v for k, v in out.items() if v}


def engine_arg_paths(source, holders, groups=None):
    """EngineArgs attribute -> dotted ``VllmConfig`` path, from the builder's source (text or tree).

    ``holders``: class name -> field of VllmConfig (``config_fields``). ``groups``: attribute ->
    the argparse group title its option was defined in (the config class it documents); it breaks
    ties when one attribute is passed to several configs."""
    tree = parse(source)
    if tree is None:
        return {}
    found = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
        if not name or not _CLASS_NAME.fullmatch(name):
            continue
        prefix = "" if name == ROOT else holders.get(name)
        if prefix is None:
            continue
        for kw in node.keywords:
            attr = _self_attr(kw.value) if kw.arg else None
            if attr:
                path = kw.arg if not prefix else prefix + "." + kw.arg
                found.setdefault(attr, []).append((name, path))
    out = {}
    for attr, places in found.items():
        group = (groups or {}).get(attr)
        chosen = next((path for cls, path in places if cls == group), places[0][1])
        out[attr] = chosen
    return out
