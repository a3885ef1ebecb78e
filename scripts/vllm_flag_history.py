#!/usr/bin/env python3
"""Generate src/flagtrace/data/vllm_flags.toml: the history of every `vllm serve` flag.

    python scripts/vllm_flag_history.py [--out FILE] [--cache DIR] [--first V] [--last V]

Reads every vLLM release from 0.11.0 through 0.34.x on PyPI statically, from the AST: nothing of
vLLM is imported. A release's wheel (~0.25-0.5 GB) is downloaded into a temporary folder under
/tmp (or taken from a wheel cache that already holds it: .envs/vllm/wheels, /tmp/vllm-wheels),
only the .py files the reading needs are extracted into --cache (/tmp/vllm-flag-src/VERSION/), and
the downloaded wheel is deleted before the next one; a rerun reads the cache and downloads nothing.

How vLLM builds the serve parser (what is read): vllm/entrypoints/cli/serve.py calls
make_arg_parser (vllm/entrypoints/{openai,launchers,common}/cli_args.py), which adds a few
options itself and calls FrontendArgs.add_cli_args (one `--kebab-case` option per field of the
FrontendArgs dataclass and its bases, by `f"--{key.replace('_', '-')}"`) and
AsyncEngineArgs.add_cli_args, which calls EngineArgs.add_cli_args (vllm/engine/arg_utils.py):
explicit `group.add_argument("--x", "-x", **xxx_kwargs["field"])` calls, where
`xxx_kwargs = get_kwargs(SomeConfig)` derives the argparse keywords from the config dataclass
field: its attribute docstring is the help and a field typed bool (anywhere in a top-level
Union/Optional) becomes argparse.BooleanOptionalAction, so `--x` also has `--no-x`. Deprecation
is `deprecated=True` (argparse's, backported by FlexibleArgumentParser), a Deprecated* action or
the help text. Stdlib only; needs pip for the downloads.
"""
import argparse
import ast
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from flagtrace.core import pinlib  # noqa: E402  (release list, wheel cache, version order: shared with the pin generators)
from flag_history_lib import (  # noqa: E402
    action, check_toml, history, name_of, summary, text, write_flags)
from flag_history_lib import named_replacement as generic_replacement  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "src", "flagtrace", "data", "vllm_flags.toml")
CACHE = "/tmp/vllm-flag-src"
FIRST, LAST = "0.11.0", "0.34.9999"
# Wheel folders another tool may already fill (scripts/vllm_pins.py's cache, a hand download): read, never emptied.
WHEEL_CACHES = (os.path.join(os.environ.get("VLLM_ENVS_DIR", os.path.join(ROOT, ".envs", "vllm")), "wheels"),
                "/tmp/vllm-wheels")


# -- the source cache ------------------------------------------------------------------------
KEEP_DIRS = ("vllm/config/", "vllm/engine/", "vllm/entrypoints/", "vllm/utils/")


def kept(name, data):
    """The .py files a release's parser is read from: the config, engine, entrypoint and utils
    packages, vllm/*.py, and any other module that defines a config class or adds arguments."""
    return name.endswith(".py") and name.startswith("vllm/") and (
        name.startswith(KEEP_DIRS) or name.count("/") == 1 or b"add_argument" in data or b"@config" in data)


def source(version, cache=CACHE):
    """The folder holding release ``version``'s extracted sources (fetched once)."""
    dest = os.path.join(cache, version)
    if os.path.exists(os.path.join(dest, ".complete")):
        return dest
    whl = next(filter(None, (pinlib.cached(d, "vllm", version) for d in WHEEL_CACHES)), None)
    tmp = None
    if whl is None:
        tmp = tempfile.mkdtemp(prefix="vllm-wheel-", dir="/tmp")
        r = subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:",
                            "--disable-pip-version-check", "-d", tmp, "vllm==%s" % version],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        whl = pinlib.cached(tmp, "vllm", version)
        if whl is None:
            shutil.rmtree(tmp)
            sys.exit("pip download vllm==%s failed:\n%s" % (version, r.stderr))
    try:
        with zipfile.ZipFile(whl) as z:
            names = z.namelist()
            for name in names:
                if name.endswith(".py") and name.startswith("vllm/"):
                    data = z.read(name)
                    if kept(name, data):
                        path = os.path.join(dest, name)
                        os.makedirs(os.path.dirname(path), exist_ok=True)
                        with open(path, "wb") as fh:
                            fh.write(data)
        with open(os.path.join(dest, "FILES"), "w") as fh:  # the wheel's whole listing, for reference
            fh.write("\n".join(sorted(names)) + "\n")
        open(os.path.join(dest, ".complete"), "w").close()
    finally:
        if tmp:
            shutil.rmtree(tmp)
    return dest


# -- modules, classes, fields ----------------------------------------------------------------
class Source:
    """The parsed modules of one release, and name resolution across their imports."""

    def __init__(self, root):
        self.root, self.modules, self.resolved, self.imports, self.fields_of = root, {}, {}, {}, {}
        found = self.resolve("vllm.engine.arg_utils", "_compute_kwargs")
        # 0.2x: `elif type_hints == {bool, str, type(None)}:` makes such a field `type=str, nargs="?"`
        self.optional_valued = bool(found) and "{bool, str, type(None)}" in ast.unparse(found[1])
        # 0.33+: FlexibleArgumentParser registers EnableDisableAction for BooleanOptionalAction, so
        # --enable-x also has --disable-x (and the reverse), besides --no-enable-x
        parser = self.resolve("vllm.engine.arg_utils", "FlexibleArgumentParser")
        self.enable_disable = bool(parser) and any(
            isinstance(n, ast.Call) and name_of(n.func) == "register" and len(n.args) == 3
            and name_of(n.args[2]) == "EnableDisableAction" for n in ast.walk(parser[1]))

    def module(self, dotted):
        """The AST of a module (a package is its __init__), or None when it was not extracted."""
        if dotted not in self.modules:
            base = os.path.join(self.root, *dotted.split("."))
            path = next((p for p in (base + ".py", os.path.join(base, "__init__.py")) if os.path.exists(p)), None)
            self.modules[dotted] = None
            if path:
                with open(path, encoding="utf-8") as fh:
                    self.modules[dotted] = ast.parse(fh.read())
            if path and path.endswith("__init__.py"):
                self.modules[dotted].package = dotted
            elif path:
                self.modules[dotted].package = dotted.rpartition(".")[0]
        return self.modules[dotted]

    def resolve(self, dotted, name, depth=0):
        """(module name, node) of the top-level class, function or assignment ``name`` of module
        ``dotted``, through `from x import name` re-exports; None when it cannot be found."""
        key = (dotted, name)
        if key not in self.resolved:
            self.resolved[key] = None  # while resolving: an import cycle finds nothing
            self.resolved[key] = self._resolve(dotted, name, depth)
        return self.resolved[key]

    def _resolve(self, dotted, name, depth):
        tree = self.module(dotted)
        if tree is None or depth > 8:
            return None
        for st in tree.body:
            if isinstance(st, (ast.ClassDef, ast.FunctionDef)) and st.name == name:
                return dotted, st
            if isinstance(st, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in st.targets):
                return dotted, st
        if dotted not in self.imports:  # local name -> [(module, name)] of every `from x import y`
            self.imports[dotted] = {}
            for st in ast.walk(tree):
                if isinstance(st, ast.ImportFrom):
                    target = st.module or ""
                    if st.level:
                        pkg = tree.package.split(".")
                        pkg = pkg[:len(pkg) - (st.level - 1)]
                        target = ".".join(pkg + ([st.module] if st.module else []))
                    for alias in st.names:
                        self.imports[dotted].setdefault(alias.asname or alias.name, []).append((target, alias.name))
        for target, original in self.imports[dotted].get(name, []):
            found = self.resolve(target, original, depth + 1)
            if found:
                return found
        return None

    def cls(self, dotted, name):
        found = self.resolve(dotted, name)
        return found if found and isinstance(found[1], ast.ClassDef) else None

    def constant(self, dotted, name):
        """The value node of a module-level `NAME = "..."`."""
        found = self.resolve(dotted, name)
        return found[1].value if found and isinstance(found[1], ast.Assign) else None

    def fields(self, dotted, cls, seen=()):
        """{field: {"doc", "bool"}} of a dataclass and its bases, in dataclasses.fields order."""
        key = (dotted, cls.name, cls.lineno)
        if key not in self.fields_of:
            self.fields_of[key] = self._fields(dotted, cls, seen)
        return self.fields_of[key]

    def _fields(self, dotted, cls, seen):
        out = {}
        for base in cls.bases:
            found = self.cls(dotted, name_of(base)) if name_of(base) not in seen else None
            if found:
                out.update(self.fields(found[0], found[1], seen + (cls.name,)))
        body = cls.body
        for i, st in enumerate(body):
            if not (isinstance(st, ast.AnnAssign) and isinstance(st.target, ast.Name)):
                continue
            ann = st.annotation
            if isinstance(ann, ast.Constant) and isinstance(ann.value, str):
                try:
                    ann = ast.parse(ann.value, mode="eval").body
                except SyntaxError:
                    pass
            if name_of(ann.value if isinstance(ann, ast.Subscript) else ann) in ("ClassVar", "InitVar"):
                continue
            nxt = body[i + 1] if i + 1 < len(body) else None
            doc = text(nxt.value) if isinstance(nxt, ast.Expr) and isinstance(nxt.value, ast.Constant) else ""
            field = st.target.id
            out[field] = {"doc": doc, "bool": self.is_bool(dotted, ann)}
        return out

    def is_bool(self, dotted, ann):
        """vLLM's _compute_kwargs rule: a dataclass member wins, else bool anywhere in the union
        (except, where _compute_kwargs says so, `bool | str | None`: a flag with an optional value)."""
        members = union_members(ann)
        names = {ast.unparse(m) for m in members}
        if self.optional_valued and names in ({"bool", "str", "None"}, {"bool", "str", "type(None)"}):
            return False
        for m in members:
            found = isinstance(m, ast.Name) and m.id != "bool" and self.cls(dotted, m.id)
            if found and any(name_of(d.func if isinstance(d, ast.Call) else d) in ("dataclass", "config")
                             for d in found[1].decorator_list):
                return False
        return any(isinstance(m, ast.Name) and m.id == "bool" for m in members)


def union_members(ann):
    """The top-level members of an annotation: X | Y, Optional[X], Union[X, Y], Annotated[X, ...]."""
    if isinstance(ann, ast.BinOp) and isinstance(ann.op, ast.BitOr):
        return union_members(ann.left) + union_members(ann.right)
    if isinstance(ann, ast.Subscript):
        head = name_of(ann.value)
        args = ann.slice.elts if isinstance(ann.slice, ast.Tuple) else [ann.slice]
        if head in ("Optional", "Union"):
            return [m for a in args for m in union_members(a)]
        if head == "Annotated":
            return union_members(args[0])
    return [ann]


# -- reading one release ---------------------------------------------------------------------
def method(src, dotted, cls, name, seen=()):
    """(module, FunctionDef) of method ``name`` of class ``cls`` or its first base that has it."""
    for st in cls.body:
        if isinstance(st, ast.FunctionDef) and st.name == name:
            return dotted, st
    for base in cls.bases:
        found = src.cls(dotted, name_of(base)) if name_of(base) not in seen else None
        if found:
            hit = method(src, found[0], found[1], name, seen + (cls.name,))
            if hit:
                return hit
    return None


class Reader:
    """Follows make_arg_parser and the add_cli_args it calls, collecting their actions."""

    def __init__(self, src):
        self.src, self.actions, self.skipped, self.walked = src, [], [], set()

    def walk(self, dotted, fn, cls_name=None, cls_module=None):
        key = (dotted, fn.name, fn.lineno, cls_name)
        if key in self.walked:
            return
        self.walked.add(key)
        kwargs = {}  # local name -> (module, class name) of `name = get_kwargs(Class)`
        local = {}  # local name -> the value node of `name = <expr>` (the last one)
        dropped = {}  # local name -> fields deleted from it (`del d["x"]`, `d.pop("x")`)
        overrides = {}  # (local name, field or None) -> {keyword: node} of `d["f"]["k"] = v` / `d["k"] = v`
        loops = {}  # id(add_argument call) -> its enclosing for loops, innermost last
        for node in ast.walk(fn):
            if isinstance(node, ast.Assign) and len(node.targets) == 1:
                target, v = node.targets[0], node.value
                if isinstance(target, ast.Name):
                    local[target.id] = v
                    if isinstance(v, ast.Call) and name_of(v.func) == "get_kwargs" and v.args:
                        arg = name_of(v.args[0])
                        kwargs[target.id] = (cls_module, cls_name) if arg == "cls" else (dotted, arg)
                    elif isinstance(v, ast.Call) and isinstance(v.func, ast.Attribute) and v.args \
                            and name_of(v.args[0]) in kwargs and v.func.attr.startswith("_customize"):
                        kwargs[target.id] = kwargs[name_of(v.args[0])]  # d = cls._customize_cli_kwargs(d)
                elif isinstance(target, ast.Subscript) and isinstance(target.slice, ast.Constant):
                    inner = target.value
                    if isinstance(inner, ast.Name):  # d["k"] = v
                        overrides.setdefault((inner.id, None), {})[target.slice.value] = v
                    elif (isinstance(inner, ast.Subscript) and isinstance(inner.value, ast.Name)
                          and isinstance(inner.slice, ast.Constant)):  # d["field"]["k"] = v
                        overrides.setdefault((inner.value.id, inner.slice.value), {})[target.slice.value] = v
            if isinstance(node, ast.Delete):
                for t in node.targets:
                    if isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name) and isinstance(t.slice, ast.Constant):
                        dropped.setdefault(t.value.id, set()).add(t.slice.value)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "pop" \
                    and isinstance(node.func.value, ast.Name) and node.args and isinstance(node.args[0], ast.Constant):
                dropped.setdefault(node.func.value.id, set()).add(node.args[0].value)
            if isinstance(node, ast.For):
                for inner in ast.walk(node):
                    loops.setdefault(id(inner), []).append(node)
        self.scope = {"kwargs": kwargs, "local": local, "overrides": overrides, "dotted": dotted}
        for node in ast.walk(fn):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
                continue
            if node.func.attr == "add_argument":
                self.add_argument(dotted, node, kwargs, dropped, loops.get(id(node), []))
            elif node.func.attr == "add_cli_args" and isinstance(node.func.value, ast.Name):
                found = self.src.cls(dotted, node.func.value.id)
                hit = found and method(self.src, found[0], found[1], "add_cli_args")
                if hit:
                    scope = self.scope
                    self.walk(hit[0], hit[1], found[1].name, found[0])
                    self.scope = scope

    def field_kw(self, where, field):
        """Keyword nodes of a config field's get_kwargs entry: its docstring as help,
        BooleanOptionalAction for a bool; None when the class has no such field."""
        info = self.field_info(where).get(field)
        if info is None:
            return None
        kw = {"help": ast.Constant(info["doc"])}
        if info["bool"]:
            kw["action"] = ast.Name("BooleanOptionalAction")
        return kw

    def eval_kw(self, node, depth=0):
        """The keyword nodes a `**expr` passes: `d["field"]` of `d = get_kwargs(C)`,
        `get_kwargs(C)["field"]`, `{**d["field"], "default": None}`, or a local bound to one of
        those (with its `x["k"] = v` edits). None when it cannot be read."""
        sc = self.scope
        if depth > 5:
            return None
        if isinstance(node, ast.Dict):
            out = {}
            for k, v in zip(node.keys, node.values):
                if k is None:
                    sub = self.eval_kw(v, depth + 1)
                    if sub is None:
                        return None
                    out.update(sub)
                elif isinstance(k, ast.Constant):
                    out[k.value] = v
            return out
        if isinstance(node, ast.Name) and node.id in sc["local"]:
            out = self.eval_kw(sc["local"][node.id], depth + 1)
            return None if out is None else out | sc["overrides"].get((node.id, None), {})
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
            base, field = node.value, node.slice.value
            if isinstance(base, ast.Name) and base.id in sc["kwargs"]:
                out = self.field_kw(sc["kwargs"][base.id], field)
                return None if out is None else out | sc["overrides"].get((base.id, field), {})
            if isinstance(base, ast.Call) and name_of(base.func) == "get_kwargs" and base.args:
                return self.field_kw((sc["dotted"], name_of(base.args[0])), field)
        return None

    def field_info(self, where):
        dotted, name = where
        found = self.src.cls(dotted, name)
        return self.src.fields(found[0], found[1]) if found else {}

    def add_argument(self, dotted, call, kwargs, dropped, loops):
        kw = {}
        for k in call.keywords:
            if k.arg is not None:
                kw[k.arg] = k.value
                continue
            sub = self.eval_kw(k.value)  # **model_kwargs["field"] and the like
            if sub is None:
                if not loops:
                    self.skipped.append(ast.unparse(call)[:120])
                continue
            kw.update(sub)
        if isinstance(kw.get("help"), ast.Name):
            kw["help"] = self.src.constant(dotted, kw["help"].id) or kw["help"]
        options = [a.value for a in call.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
        if len(options) == len(call.args) and options:
            return self.record(options, kw)
        loop = loops[-1] if loops else None
        if loop is None:
            return self.skipped.append(ast.unparse(call)[:120])
        # for arg, type in [("--x", str), ...]: add_argument(arg, ...)
        if isinstance(loop.iter, (ast.List, ast.Tuple)) and len(call.args) == 1 and isinstance(call.args[0], ast.Name):
            var = call.args[0].id
            names = [t.id for t in (loop.target.elts if isinstance(loop.target, ast.Tuple) else [loop.target])]
            for item in loop.iter.elts:
                values = item.elts if isinstance(item, ast.Tuple) else [item]
                value = dict(zip(names, values)).get(var)
                if isinstance(value, ast.Constant) and isinstance(value.value, str):
                    self.record([value.value], kw, subst={var: value.value})
                else:
                    self.skipped.append(ast.unparse(call)[:120])
            return
        # for key, value in frontend_kwargs.items(): add_argument(*extra, f"--{key.replace('_', '-')}", **value)
        it = loop.iter
        if (isinstance(it, ast.Call) and isinstance(it.func, ast.Attribute) and it.func.attr == "items"
                and isinstance(it.func.value, ast.Name) and it.func.value.id in kwargs
                and any(isinstance(a, ast.JoinedStr) for a in call.args)):
            name = it.func.value.id
            for field in self.field_info(kwargs[name]):
                if field in dropped.get(name, ()):
                    continue
                fkw = self.field_kw(kwargs[name], field) | self.scope["overrides"].get((name, field), {})
                self.record(["--" + field.replace("_", "-")], fkw | kw)
            return
        self.skipped.append(ast.unparse(call)[:120])

    def record(self, options, kw, subst=None):
        if subst and isinstance(kw.get("help"), ast.JoinedStr):  # f"[DEPRECATED] {arg} ...", arg a loop variable
            kw = dict(kw, help=ast.Constant("".join(
                v.value if isinstance(v, ast.Constant) else subst.get(name_of(v.value), "{...}")
                for v in kw["help"].values)))
        if not options[0].startswith("-"):
            return  # a positional (model_tag)
        act = action(options, kw)
        if act["action"] == "BooleanOptionalAction" and self.src.enable_disable:
            inverse = {"--enable-": "--disable-", "--disable-": "--enable-"}
            act["options"] += [inverse[p] + o[len(p):] for o in options for p in inverse if o.startswith(p)]
        dep = kw.get("deprecated")
        act["deprecated"] = isinstance(dep, ast.Constant) and dep.value is True
        self.actions.append(act)


def serve_module(src):
    """The module vllm/entrypoints/cli/serve.py takes make_arg_parser from."""
    found = src.resolve("vllm.entrypoints.cli.serve", "make_arg_parser")
    if not found:
        sys.exit("%s: no make_arg_parser reachable from vllm/entrypoints/cli/serve.py" % src.root)
    return found


def rewritten_O(src):
    """From 0.12.0 `-O` is no option string: FlexibleArgumentParser.parse_args rewrites `-O <n>` /
    `-O3` to `--optimization-level` before argparse sees it. The action it stands for, when the
    parser's source compares an argument with "-O" and names --optimization-level."""
    found = src.resolve("vllm.engine.arg_utils", "FlexibleArgumentParser")
    if not found or not isinstance(found[1], ast.ClassDef):
        return None
    for fn in ast.walk(found[1]):
        if isinstance(fn, ast.FunctionDef) and fn.name == "parse_args":
            consts = {n.value for n in ast.walk(fn) if isinstance(n, ast.Constant)}
            if "-O" in consts and "--optimization-level" in consts:
                return action(["-O"], {"dest": ast.Constant("optimization_level"), "help": ast.Constant(
                    "-O <n> / -O<n>: rewritten to --optimization-level by FlexibleArgumentParser.parse_args")})
    return None


def deprecation_messages(root):
    """The strings of vllm/engine/arg_utils.py and vllm/config/ that say "deprecated": the warnings
    vLLM logs for a deprecated option, which often name what to use instead."""
    out = []
    paths = [os.path.join(root, "vllm", "engine", "arg_utils.py")]
    for folder, _, files in os.walk(os.path.join(root, "vllm", "config")):
        paths += [os.path.join(folder, f) for f in sorted(files) if f.endswith(".py")]
    for path in paths:
        if os.path.exists(path):
            with open(path, encoding="utf-8") as fh:
                tree = ast.parse(fh.read())
            for node in ast.walk(tree):
                if isinstance(node, (ast.Constant, ast.JoinedStr)) and re.search(r"deprecated", text(node), re.I):
                    out.append(" ".join(text(node).split()))
    return out


def read_release(root):
    """The argparse actions of one release's `vllm serve` parser, and the calls that could not be read.
    Each action also has `warnings` (the deprecation messages naming one of its options or its
    dest as `dest`) and `known` (every option string of the release)."""
    src = Source(root)
    dotted, fn = serve_module(src)
    reader = Reader(src)
    reader.walk(dotted, fn)
    unique = {tuple(a["options"]): a for a in reader.actions}
    actions = list(unique.values())
    o_flag = rewritten_O(src)
    if o_flag and not any("-O" in a["options"] for a in actions):
        actions.append(o_flag | {"deprecated": False})
    messages = deprecation_messages(root)
    known = frozenset(o for a in actions for o in a["options"])
    for a in actions:
        a["known"] = known
        a["warnings"] = [m for m in messages if "`%s`" % a["dest"] in m
                         or any(re.search(re.escape(o) + r"(?![\w-])", m) for o in a["options"] if o.startswith("--"))]
    return actions, reader.skipped


# -- vLLM's wording --------------------------------------------------------------------------
FIELD = re.compile(r"\b(?:use|set|replaced (?:with|by))\s+`([a-z][a-z0-9_]*(?:\.[a-z0-9_]+)*)`", re.I)


def field_replacement(act, message):
    """vLLM's habit of naming the field ("Please use `pooler_config` instead", "has been replaced
    with `eplb_config.num_redundant_experts`"): that field's option (--pooler-config,
    --eplb-config.num_redundant_experts), when the release has it."""
    for m in FIELD.finditer(message):
        head, _, sub = m.group(1).partition(".")
        flag = "--" + head.replace("_", "-")
        if flag in act.get("known", ()) and flag not in act["options"]:
            return flag + ("." + sub if sub else "")
    return None


def dotted_key(flag, message):
    """'--logging-config' named as '--logging-config.pylogging_config_file': the key kept."""
    m = re.search(re.escape(flag) + r"(\.[A-Za-z_][\w.]*[\w])", message)
    return flag + m.group(1) if m and " " not in flag and "=" not in flag else flag


def named_replacement(act):
    """What a deprecated option's definition names (the generic rules on its help: "use --x
    instead", else the field its help names), else what a deprecation warning naming it says."""
    for message, how in [(act["help"], "help")] + [(w, "warning") for w in act.get("warnings", ())]:
        repl, _ = generic_replacement({"new_flag": act["new_flag"] if how == "help" else None, "help": message})
        if repl and repl.split(" ")[0].split("=")[0] not in act["options"]:
            return dotted_key(repl, message), ("new_flag" if act["new_flag"] and how == "help" else how)
        repl = field_replacement(act, message)
        if repl:
            return repl, how
    return None, None


def is_stub(act):
    """Accepted but has no effect, in the definition's own words."""
    return bool(re.search(r"\b(has|have) no effect\b|\bno longer has any effect\b|\bis ignored\b", act["help"], re.I))


# -- output ----------------------------------------------------------------------------------
HEADER = """\
# GENERATED by `python scripts/vllm_flag_history.py`: do not edit by hand, rerun it.
# The `vllm serve` flags of every vLLM release %s..%s (.post releases included, if any), read
# statically from each release's wheel: the add_argument calls of make_arg_parser
# (vllm/entrypoints/{openai,launchers,common}/cli_args.py), FrontendArgs' dataclass fields (one
# --kebab-case option each) and EngineArgs/AsyncEngineArgs.add_cli_args (vllm/engine/arg_utils.py),
# whose `**get_kwargs(SomeConfig)["field"]` options take the config field's docstring as help and
# get a --no-X twin when the field is a bool. Nothing of vLLM is imported.
"""
DOC = """\
#
# releases: every release read, oldest first. [flags]: one line per option string.
#   present      runs of consecutive releases that accept it: [first, last], ...
#   aliases      other option strings of the same argparse action, in any release (-tp, --no-x)
#   deprecated   first release from which its definition says deprecated (until it goes):
#                deprecated=True, a Deprecated* action, or the help text
#   ignored      first release from which its help says it has no effect (accepted, ignored)
#   replaced_by  what replaced it, with `evidence`: help (its help text: "use --x instead", or
#                the field it names: "use `pooler_config`" -> --pooler-config), warning (a
#                deprecation message in vllm/engine/arg_utils.py or vllm/config/ naming the flag
#                or its field, while the definition says deprecated), alias (an option string of
#                its action that outlived it) or dest (an option that took over its dest when it
#                went); and `since`, the first release with that evidence. `--x.key`: a key of
#                the JSON option --x
#   removed      the first release without it (after its last run)
#   note         its help text while deprecated
"""


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=OUT, help="flag history to write (default: %(default)s)")
    ap.add_argument("--cache", default=CACHE, help="extracted sources, one folder per release (default: %(default)s)")
    ap.add_argument("--first", default=FIRST, help="oldest release (default: %(default)s)")
    ap.add_argument("--last", default=LAST, help="newest release (default: %(default)s)")
    args = ap.parse_args(argv)
    releases = pinlib.releases("vllm", args.first, args.last)
    per_release = []
    for version in releases:
        actions, skipped = read_release(source(version, args.cache))
        for call in skipped:
            print("%s: not read: %s" % (version, call), file=sys.stderr)
        per_release.append({option: act for act in actions for option in act["options"]})
        print("%-8s %4d options" % (version, len(per_release[-1])), file=sys.stderr)
    flags = history(releases, per_release, named_replacement=named_replacement, is_stub=is_stub)
    write_flags(args.out, HEADER, releases, flags, doc=DOC)
    check_toml(args.out)
    print(summary(releases, flags))


if __name__ == "__main__":
    main()
