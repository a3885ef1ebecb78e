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
import sys

_CLASS_NAME = re.compile(r"\b([A-Z]\w*Config)\b")
ROOT = "VllmConfig"


def config_fields(vllm_config_class):
    """Class name -> the ``VllmConfig`` path that holds an instance of it: a field of ``VllmConfig``, or a
    config inside one (``offload_config.uva`` holds a ``UVAOffloadConfig``, built in place by
    ``OffloadConfig(uva=UVAOffloadConfig(cpu_offload_gb=self.cpu_offload_gb))``). The shallowest wins,
    then the first."""
    out = {}
    todo, seen = [(vllm_config_class, "")], {vllm_config_class}
    while todo:
        owner, prefix = todo.pop(0)
        for f in dataclasses.fields(owner):
            text = f.type if isinstance(f.type, str) else getattr(f.type, "__name__", None) or repr(f.type)
            for name in _CLASS_NAME.findall(text):
                if name in out or name == ROOT:
                    continue
                out[name] = prefix + f.name
                inner = _class_named(owner, f.type, name)
                if inner is not None and dataclasses.is_dataclass(inner) and inner not in seen:
                    seen.add(inner)
                    todo.append((inner, prefix + f.name + "."))
    return out


def _class_named(owner, annotation, name):
    """The class ``name`` in a field's annotation: the annotation itself, or the name in the owner's module."""
    if isinstance(annotation, type) and annotation.__name__ == name:
        return annotation
    module = sys.modules.get(getattr(owner, "__module__", None) or "")
    found = getattr(module, name, None)
    return found if isinstance(found, type) else None


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
    out = {}
    for attr, path, _first, _last in engine_arg_copy_sites(source, holders):
        if path not in out.setdefault(attr, []):
            out[attr].append(path)
    return {k: v for k, v in out.items() if v}


def _chain(node):
    """``a.b.c`` -> ("a", ["b", "c"]); (None, None) for anything else."""
    attrs = []
    while isinstance(node, ast.Attribute):
        attrs.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        return node.id, attrs[::-1]
    return None, None


def _read_attr(node):
    """The one ``self.attr`` an expression reads (``self.attr``, ``cast(T, self.attr)``,
    ``Enum[self.attr.upper()]``), or None where it reads none or several."""
    attr = _self_attr(node)
    if attr:
        return attr
    found = _self_reads(node)
    return found.pop() if len(found) == 1 else None


def _config_calls(tree, holders):
    """(call node, the class called, the VllmConfig path of what it builds: "" for VllmConfig itself) for every
    call of a config class ``holders`` knows (class name -> field of VllmConfig)."""
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
        if not name or not _CLASS_NAME.fullmatch(name):
            continue
        prefix = "" if name == ROOT else holders.get(name)
        if prefix is not None:
            yield node, name, prefix
    yield from _replace_calls(tree, holders)


def _replace_calls(tree, holders):
    """``dataclasses.replace(config, log_level=self.log_level)`` in a builder that returns a config
    ``holders`` knows (``def create_logging_config(self) -> LoggingConfig``): a call that builds it."""
    for func in ast.walk(tree):
        if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)) or func.returns is None:
            continue
        returns = func.returns
        name = returns.id if isinstance(returns, ast.Name) else \
            returns.value if isinstance(returns, ast.Constant) and isinstance(returns.value, str) else None
        prefix = holders.get(name) if name and name != ROOT else None
        if prefix is None:
            continue
        for node in ast.walk(func):
            if isinstance(node, ast.Call) and _chain(node.func) in (("dataclasses", ["replace"]), ("replace", [])):
                yield node, name, prefix


def _local_holders(func, holders, held):
    """Local name -> the VllmConfig path of the config it holds, in one builder function: a local
    passed as a keyword to a config's constructor (``VllmConfig(compilation_config=cc)``,
    ``ParallelConfig(eplb_config=e)``), or another name of a held config of the builder
    (``so_config = self.structured_outputs_config``; a deep copy counts only once handed over)."""
    out = {}
    for node, _, prefix in _config_calls(func, holders):
        for kw in node.keywords:
            if kw.arg and isinstance(kw.value, ast.Name):
                out.setdefault(kw.value.id, kw.arg if not prefix else prefix + "." + kw.arg)
    for node in ast.walk(func):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            holder = _self_attr(node.value)
            if holder in held:
                out.setdefault(node.targets[0].id, holder)
    return out


def engine_arg_copy_sites(source, holders):
    """(EngineArgs attribute, config field, first line, last line) for each statement of the builder
    that copies the attribute into a field of a config it hands to ``VllmConfig``: through one of its
    own held configs (``self.structured_outputs_config.reasoning_parser = self.reasoning_parser``) or
    through a local copy of one (``compilation_config = copy.deepcopy(self.compilation_config)``, then
    ``compilation_config.max_cudagraph_capture_size = self.max_cudagraph_capture_size``). The value may
    be converted on the way (``MambaBackendEnum[self.mamba_backend.upper()]``): it still comes from
    that one attribute."""
    tree = parse(source)
    held = set(holders.values())
    out = []
    funcs = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))] \
        if tree is not None else ()
    own = _self_holders(tree, holders, held) if tree is not None else {}
    for func in funcs:
        locals_ = None
        guarded = _guarded_constants(func)
        for node in ast.walk(func):
            if not (isinstance(node, ast.Assign) and len(node.targets) == 1
                    and isinstance(node.targets[0], ast.Attribute)):
                continue
            root, attrs = _chain(node.targets[0])
            if root is None or len(attrs) < (2 if root == "self" else 1):
                continue
            if root == "self":
                if attrs[0] not in own:
                    continue
                path = ".".join([own[attrs[0]]] + attrs[1:])
            else:
                if locals_ is None:
                    locals_ = _local_holders(func, holders, held)
                if root not in locals_:
                    continue
                path = locals_[root] + "." + ".".join(attrs)
            attr = _read_attr(node.value) or guarded.get(id(node))
            if attr and attr not in held:  # not a held config's own field read back
                out.append((attr, path, node.lineno, getattr(node, "end_lineno", None) or node.lineno))
    return out


def _self_holders(tree, holders, held):
    """EngineArgs attribute -> the VllmConfig path of the config it holds: one of VllmConfig's own names
    (``self.structured_outputs_config``), or one handed to a config's constructor
    (``ParallelConfig(eplb_config=self.eplb_config)``: ``self.eplb_config.window_size = self.eplb_window_size``
    writes ``parallel_config.eplb_config.window_size``, vLLM 0.11.2)."""
    out = {path: path for path in held}
    for node, _, prefix in _config_calls(tree, holders):
        for kw in node.keywords:
            attr = _self_attr(kw.value) if kw.arg else None
            path = kw.arg if not prefix else prefix + "." + kw.arg if kw.arg else None
            if attr and path in held:
                out.setdefault(attr, path)
    return out


def _guarded_constants(func):
    """id(statement) -> the EngineArgs attribute it stands for: a constant written under that attribute alone
    (``if self.monokernel: kernel_config.monokernel = True``): the option decides the field."""
    out = {}
    for node in ast.walk(func):
        attr = _self_attr(node.test) if isinstance(node, ast.If) else None
        for stmt in node.body if attr else ():
            if isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Constant):
                out[id(stmt)] = attr
    return out


def _derived_locals(func):
    """Local name -> the one EngineArgs attribute its value comes from, in one builder function: its first
    assignment that is not a constant reads that attribute (``name = convert(self.attr, model_config)``),
    and no later one reads another.
    A later constant or a value read from elsewhere is a decision about it, not another source
    (``n = self.num_lookahead_slots``, then ``if spec: n = speculative_config.num_lookahead_slots``, vLLM
    0.11.2). A name assigned from two attributes, first from none, or augmented is left out."""
    assigned = {}
    for node in ast.walk(func):
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if len(targets) == 1 and isinstance(targets[0], ast.Name):
                name = targets[0].id
                if isinstance(node.value, ast.Constant):
                    attr = "="  # a decision (``x = True``)
                else:
                    attr = _read_attr(node.value)
                    if attr is None and name in _self_reads(node.value):
                        # named after the attribute it falls back from: name = (self.name or self.rank is not None)
                        attr = name
                assigned.setdefault(name, []).append((node.lineno, attr))
        elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
            assigned.setdefault(node.target.id, []).append((0, "+="))
    out = {}
    for name, sites in assigned.items():
        reads = [attr for _, attr in sorted(sites, key=lambda site: site[0]) if attr != "="]
        if reads and reads[0] not in ("+=", None) and not set(reads[1:]) - {None, reads[0]}:
            out[name] = reads[0]
    return out


def _self_reads(node):
    return {n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute)
            and isinstance(n.value, ast.Name) and n.value.id == "self"}


def _called(func):
    """The attributes of ``self`` a builder calls (``self.create_model_config()``): methods, not fields."""
    return {n.func.attr for n in ast.walk(func) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
            and isinstance(n.func.value, ast.Name) and n.func.value.id == "self"}


def engine_arg_paths(source, holders, groups=None):
    """EngineArgs attribute -> dotted ``VllmConfig`` path, from the builder's source (text or tree).

    ``holders``: class name -> field of VllmConfig (``config_fields``). ``groups``: attribute ->
    the argparse group title its option was defined in (the config class it documents); it breaks
    ties when one attribute is passed to several configs."""
    tree = parse(source)
    if tree is None:
        return {}
    held = set(holders.values())
    found, through_locals = {}, {}
    for node, name, prefix in _config_calls(tree, holders):
        for kw in node.keywords:
            attr = _self_attr(kw.value) if kw.arg else None
            if attr:
                path = kw.arg if not prefix else prefix + "." + kw.arg
                found.setdefault(attr, []).append((name, path))
    for func in (n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))):
        called = _called(func)
        derived = {k: a for k, a in _derived_locals(func).items() if a not in held and a not in called}
        for node, name, prefix in _config_calls(func, holders):
            for kw in node.keywords:
                # cache_dtype=resolved_cache_dtype, where resolved_cache_dtype =
                # resolve_kv_cache_dtype_string(self.kv_cache_dtype, model_config); or the attribute
                # with a fallback: attr=(self.attr if self.attr is not None else ParallelConfig.attr)
                if not kw.arg:
                    continue
                attr = None
                if isinstance(kw.value, ast.Name):
                    attr = derived.get(kw.value.id)
                elif isinstance(kw.value, (ast.IfExp, ast.BoolOp)):
                    attr = _read_attr(kw.value)
                    if isinstance(kw.value, ast.IfExp) and attr not in (_read_attr(kw.value.body),
                                                                        _read_attr(kw.value.orelse)):
                        attr = None  # read by the condition only: device="cpu" if f(self.other) else None
                    attr = attr if attr not in held and attr not in called else None
                if attr:
                    path = kw.arg if not prefix else prefix + "." + kw.arg
                    through_locals.setdefault(attr, []).append((name, path))
    for attr, places in through_locals.items():
        found.setdefault(attr, places)  # a direct copy of the attribute wins
    out = {}
    for attr, places in found.items():
        group = (groups or {}).get(attr)
        chosen = next((path for cls, path in places if cls == group), places[0][1])
        out[attr] = chosen
    return out
