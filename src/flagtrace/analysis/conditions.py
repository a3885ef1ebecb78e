"""The chain of conditions under which a line of a function runs, read from its AST."""
import ast
import dataclasses
import functools

_EXITS = (ast.Return, ast.Raise, ast.Continue, ast.Break)
_NOTHING = object()


@dataclasses.dataclass
class Condition:
    keyword: str  # if | elif | else-of | guard | while | for | except | assert | ternary
    test: str  # source text of the test (for "for": "x in xs")
    holds: object  # True / False / None (unknown)
    line: int
    node: object = dataclasses.field(repr=False, compare=False, default=None)
    choice: object = dataclasses.field(repr=False, compare=False, default=None)  # a ternary's IfExp

    def negated(self):
        """The test as it held when it was false, written the way a person would."""
        node = self.node
        if isinstance(node, (ast.UnaryOp, ast.Compare, ast.BoolOp)):
            text = _negate(node)
            if text is not None:
                return text
        return "not (%s)" % self.test

    def text(self):
        if self.keyword == "for":
            return "for %s" % self.test
        if self.keyword == "except":
            return "except %s" % self.test
        if self.keyword == "assert":
            return "assert %s" % self.test
        if self.keyword == "guard":
            return "%s  [else it returned earlier]" % self.negated()
        if self.holds is False and self.keyword != "assert":
            return self.negated()
        return self.test


def _negate(node):
    """``not (node)`` simplified: ``not a`` → ``a``, an inverted comparison, ``not (a or b)`` →
    ``not a and not b``. None where it stays ``not (...)`` (``not (a and b)``: no single fact)."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return " ".join(ast.unparse(node.operand).split())
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in _INVERSE:
        inverse = _INVERSE[type(node.ops[0])]()
        return " ".join(ast.unparse(ast.Compare(node.left, [inverse], node.comparators)).split())
    if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.Or):  # each part was false: a list of facts
        joiner = " and "
        parts = []
        for value in node.values:
            text = _negate(value)
            if text is None:
                plain = " ".join(ast.unparse(value).split())
                simple = isinstance(value, (ast.Name, ast.Attribute, ast.Call, ast.Subscript))
                text = "not " + plain if simple else "not (%s)" % plain
            elif isinstance(value, ast.BoolOp) or (joiner == " and " and " or " in text):
                text = "(%s)" % text
            parts.append(text)
        return joiner.join(parts)
    return None


_INVERSE = {ast.Eq: ast.NotEq, ast.NotEq: ast.Eq, ast.Is: ast.IsNot, ast.IsNot: ast.Is,
            ast.In: ast.NotIn, ast.NotIn: ast.In, ast.Lt: ast.GtE, ast.GtE: ast.Lt,
            ast.Gt: ast.LtE, ast.LtE: ast.Gt}


class SourceIndex:
    """One parsed file with the lookups the analysis makes many times: innermost def, class
    of a def, defs by name, innermost simple statement at a line. Only statements are
    visited (expressions are most of a tree); a scope's statements are indexed when first asked."""

    def __init__(self, tree, text):
        self.tree = tree
        self.lines = text.splitlines()
        self.functions = []
        self.classes = {}
        self.by_name = {}
        self._scopes = {}
        for node in _statements(tree.body):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.functions.append(node)
                self.by_name.setdefault(node.name, []).append(node)
            elif isinstance(node, ast.ClassDef):
                for item in node.body:
                    self.classes[id(item)] = node

    def function_at(self, line):
        best = None
        for node in self.functions:
            if _contains(node, line) and (best is None or node.lineno > best.lineno):
                best = node
        return best

    def statement_at_line(self, line):
        """Innermost simple statement covering ``line``."""
        scope = self.function_at(line)
        key = id(scope)
        table = self._scopes.get(key)
        if table is None:
            table = self._scopes[key] = {}
            for node in _statements(scope.body if scope is not None else self.tree.body):
                if isinstance(node, ast.stmt) and not isinstance(node, _COMPOUND):
                    for n in range(node.lineno, (node.end_lineno or node.lineno) + 1):
                        best = table.get(n)
                        if best is None or node.lineno >= best.lineno:
                            table[n] = node
        return table.get(line)


_BLOCKS = ("body", "orelse", "finalbody", "handlers", "cases")


def _statements(stmts):
    """Every statement in ``stmts`` and in the blocks nested in them, depth first."""
    for node in stmts:
        yield node
        for attr in _BLOCKS:
            inner = getattr(node, attr, None)
            if inner:
                yield from _statements(inner)


@functools.lru_cache(maxsize=64)
def source_index(text):
    try:
        return SourceIndex(ast.parse(text), text)
    except (SyntaxError, ValueError):
        return None


def parse_source(text):
    index = source_index(text)
    return index.tree if index is not None else None


def _contains(node, line):
    return node.lineno <= line <= (getattr(node, "end_lineno", None) or node.lineno)


def _in_block(stmts, line):
    return bool(stmts) and stmts[0].lineno <= line <= (stmts[-1].end_lineno or stmts[-1].lineno)


def enclosing_function(index, line, first_line=None):
    """Innermost def containing ``line``."""
    return index.function_at(line)


def enclosing_class(index, func):
    return index.classes.get(id(func))


def _src(text, node):
    """Source text of ``node`` on one line (ast.get_source_segment re-splits the file each call)."""
    index = source_index(text)
    segment = None
    if index is not None and getattr(node, "end_lineno", None) is not None:
        lines = index.lines[node.lineno - 1: node.end_lineno]
        if lines:
            encoded = [line.encode("utf-8") for line in lines]
            if len(encoded) == 1:
                encoded[0] = encoded[0][node.col_offset:node.end_col_offset]
            else:
                encoded[0] = encoded[0][node.col_offset:]
                encoded[-1] = encoded[-1][:node.end_col_offset]
            segment = "\n".join(b.decode("utf-8", "replace") for b in encoded)
    if segment is None:
        segment = ast.unparse(node)
    return " ".join(_strip_comments(segment).replace("\\\n", " ").split())


def _strip_comments(segment):
    """A multi-line statement's comments would swallow the rest once it is joined on one line."""
    if "#" not in segment or "\n" not in segment:
        return segment
    import io
    import tokenize

    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(segment).readline))
    except (tokenize.TokenError, SyntaxError):
        return segment
    lines = segment.split("\n")
    for tok in tokens:
        if tok.type == tokenize.COMMENT:
            row, col = tok.start
            lines[row - 1] = lines[row - 1][:col]
    return "\n".join(lines)


def _exits(stmts):
    return bool(stmts) and isinstance(stmts[-1], _EXITS)


@functools.lru_cache(maxsize=4096)  # many writes share a line: parse each (text, line) once
def chain_at(text, line, first_line=None):
    """(function node, [Condition]) leading to ``line``; ([], None) when unknown. The result is
    cached and shared: callers must not modify it."""
    index = source_index(text)
    if index is None:
        return None, []
    func = index.function_at(line)
    body = func.body if func is not None else index.tree.body
    chain = []
    _walk(text, body, line, chain)
    return func, chain


def _walk(text, stmts, line, chain):
    for stmt in stmts:
        if not _contains(stmt, line):
            if stmt.lineno < line and isinstance(stmt, ast.If) and not stmt.orelse and _exits(stmt.body):
                chain.append(Condition("guard", _src(text, stmt.test), False, stmt.lineno, stmt.test))
            continue
        if isinstance(stmt, ast.If):
            _walk_if(text, stmt, line, chain, "if")
        elif isinstance(stmt, (ast.For, ast.AsyncFor)):
            if _in_block(stmt.body, line):
                chain.append(Condition("for", "%s in %s" % (_src(text, stmt.target), _src(text, stmt.iter)),
                                       None, stmt.lineno, stmt.iter))
                _walk(text, stmt.body, line, chain)
            else:
                _walk(text, stmt.orelse, line, chain)
        elif isinstance(stmt, ast.While):
            if _in_block(stmt.body, line):
                chain.append(Condition("while", _src(text, stmt.test), True, stmt.lineno, stmt.test))
                _walk(text, stmt.body, line, chain)
            else:
                _walk(text, stmt.orelse, line, chain)
        elif isinstance(stmt, ast.Try) or type(stmt).__name__ == "TryStar":
            for handler in stmt.handlers:
                if _contains(handler, line):
                    test = _src(text, handler.type) if handler.type is not None else "(any)"
                    chain.append(Condition("except", test, True, handler.lineno, handler.type))
                    _walk(text, handler.body, line, chain)
                    break
            else:
                for block in (stmt.body, stmt.orelse, stmt.finalbody):
                    if _in_block(block, line):
                        _walk(text, block, line, chain)
        elif isinstance(stmt, (ast.With, ast.AsyncWith)):
            _walk(text, stmt.body, line, chain)
        elif type(stmt).__name__ == "Match":
            for case in stmt.cases:
                if _in_block(case.body, line):
                    chain.append(Condition("case", _src(text, case.pattern), True, case.pattern.lineno,
                                           case.pattern))
                    _walk(text, case.body, line, chain)
        elif isinstance(stmt, ast.Assert):
            chain.append(Condition("assert", _src(text, stmt.test), False, stmt.lineno, stmt.test))
        else:
            for node in ast.walk(stmt):
                if isinstance(node, ast.IfExp) and _contains(node, line):
                    chain.append(Condition("ternary", _src(text, node.test), None, node.lineno, node.test, node))
                    break
        return


def _walk_if(text, stmt, line, chain, keyword):
    test = _src(text, stmt.test)
    if _in_block(stmt.body, line):
        chain.append(Condition(keyword, test, True, stmt.lineno, stmt.test))
        _walk(text, stmt.body, line, chain)
        return
    if _in_block(stmt.orelse, line):
        chain.append(Condition(keyword, test, False, stmt.lineno, stmt.test))
        first = stmt.orelse[0]
        if len(stmt.orelse) == 1 and isinstance(first, ast.If) and _is_elif(text, first):
            _walk_if(text, first, line, chain, "elif")
        else:
            _walk(text, stmt.orelse, line, chain)
        return
    # The line is in the test itself (a multi-line condition): no condition yet.


def _is_elif(text, node):
    lines = text.splitlines()
    return 0 < node.lineno <= len(lines) and lines[node.lineno - 1].lstrip().startswith("elif")


@functools.lru_cache(maxsize=4096)
def _statement_node(text, line):
    index = source_index(text)
    return index.statement_at_line(line) if index is not None else None


def statement_lines(text, line):
    node = _statement_node(text, line) if text else None
    if node is None:
        return {line}
    return set(range(node.lineno, (node.end_lineno or node.lineno) + 1))


def statement_at(text, line, limit=240):
    """The whole (possibly multi-line) innermost simple statement at ``line``, on one line."""
    best = _statement_node(text, line)
    if best is None:
        return None
    src = _src(text, best)
    return src if len(src) <= limit else src[: limit - 3] + "..."


_COMPOUND = (ast.If, ast.For, ast.AsyncFor, ast.While, ast.Try, ast.With, ast.AsyncWith,
             ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


# -- what a condition reads ---------------------------------------------------------------
def attribute_reads(node, fields, self_aliases=None):
    """``obj.a`` / ``obj.a.b`` reads in ``node`` whose dotted name is a known field.
    ``self_aliases``: ``self.attr`` in code of an object whose attributes become other fields (a
    builder: ``EngineArgs.max_num_seqs`` is ``scheduler_config.max_num_seqs``)."""
    out = []
    for sub in ast.walk(node):
        if isinstance(sub, ast.Attribute) and isinstance(sub.ctx, ast.Load):
            dotted = _dotted_after_base(sub)
            if self_aliases and dotted in self_aliases and _base_name(sub) == "self":
                dotted = self_aliases[dotted]
            if dotted and dotted in fields and dotted not in out:
                out.append(dotted)
    # keep the longest: "a.b" beats "a" when both are fields
    return [f for f in out if not any(o != f and o.startswith(f + ".") for o in out)]


def env_reads(node, variables):
    """Environment variables ``node`` names, of those the process read (``variables``): an
    attribute of an env module (``envs.VLLM_DP_SIZE``) or a string (``os.getenv("RANK")``)."""
    out = []
    for sub in ast.walk(node):
        if isinstance(sub, ast.Attribute):
            name = sub.attr
        elif isinstance(sub, ast.Constant) and isinstance(sub.value, str):
            name = sub.value
        else:
            continue
        if name in variables and name not in out:
            out.append(name)
    return out


def _base_name(node):
    while isinstance(node, ast.Attribute):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _dotted_after_base(node):
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name) or not parts:
        return None
    return ".".join(reversed(parts))


def method_calls(node):
    """Names of ``self.method(...)``-style calls (any base name) in ``node``."""
    out = []
    for sub in ast.walk(node):
        if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute) and isinstance(
            sub.func.value, ast.Name
        ):
            out.append((sub.func.value.id, sub.func.attr))
    return out


def plain_calls(node):
    out = []
    for sub in ast.walk(node):
        if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Name):
            out.append(sub.func.id)
    return out


def names_read(node):
    return [sub.id for sub in ast.walk(node) if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Load)]


def find_method(index, near_func, name):
    """``def name`` in the class around ``near_func``, else the first one in the module."""
    klass = enclosing_class(index, near_func) if near_func is not None else None
    if klass is not None:
        for node in klass.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
                return node
    found = index.by_name.get(name)
    return found[0] if found else None


def assignment_lines(func, names):
    """Lines of the statements in ``func`` that assign any of ``names`` (locals a test read)."""
    lines = set()
    if func is None or not names:
        return lines
    assigned = _assigned_lines(func)
    for name in names:
        lines.update(assigned.get(name, ()))
    return lines


def _assigned_lines(func):
    """name -> lines of the statements in ``func`` that bind it (computed once per def, kept on it)."""
    out = getattr(func, "_flagtrace_assigned", None)
    if out is None:
        out = {}
        for node, target in _assignments(func):
            for t in _bound_names(target):
                out.setdefault(t.id, set()).update(range(node.lineno, (node.end_lineno or node.lineno) + 1))
        func._flagtrace_assigned = out
    return out


def _assignments(func):
    """(statement, target) for every assignment in ``func``: ``=``, annotated and augmented."""
    for node in ast.walk(func):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                yield node, target
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
            yield node, node.target


def _bound_names(target):
    """Names bound by an assignment target (``a``, ``a, (b, c)``), not ``obj.a`` or ``x[i]``."""
    if isinstance(target, ast.Name):
        return [target]
    if isinstance(target, (ast.Tuple, ast.List)):
        return [n for elt in target.elts for n in _bound_names(elt)]
    if isinstance(target, ast.Starred):
        return _bound_names(target.value)
    return []


def key_line(text, line, key, ran=()):
    """The line that stored ``key`` in the mapping a function returned from ``line``: a
    ``d["key"] = v`` assignment, a ``"key": v`` entry of a dict literal or a ``key=v`` keyword.
    Among several, the one whose statement ran last (``ran``: the lines the call executed, in
    order); without them, the last one before ``line``. None when the function stores no such key."""
    index = source_index(text) if text else None
    func = index.function_at(line) if index is not None else None
    if func is None:
        return None
    found = []
    for node in ast.walk(func):
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if (isinstance(target, ast.Subscript) and isinstance(target.slice, ast.Constant)
                        and target.slice.value == key):
                    found.append(node.lineno)
        elif isinstance(node, ast.Dict):
            for k, v in zip(node.keys, node.values):
                if isinstance(k, ast.Constant) and k.value == key:
                    found.append(v.lineno)
        elif isinstance(node, ast.Call):
            for kw in node.keywords:
                if kw.arg == key:
                    found.append(kw.value.lineno)
    if not found:
        return None
    order = {}
    for i, n in enumerate(ran):
        order[n] = i
    if order:
        def last_run(n):
            return max((order[m] for m in statement_lines(text, n) | {n} if m in order), default=-1)

        best = max(found, key=last_run)
        if last_run(best) >= 0:
            return best
    end = max(statement_lines(text, line))  # a multi-line ``return {...}`` holds its keys
    before = [n for n in found if n <= end]
    return max(before) if before else None


def ternary_holds(ifexp, value=_NOTHING, local_reprs=None):
    """Which way ``a if test else b`` went: from the value it produced when exactly one branch
    is a constant equal to it, else from a comparison of a local with a constant. None: unknown."""
    if value is not _NOTHING:
        def matches(node):
            return isinstance(node, ast.Constant) and type(node.value) is type(value) and node.value == value

        body, orelse = matches(ifexp.body), matches(ifexp.orelse)
        if body != orelse:
            return body
    test = ifexp.test
    if (local_reprs and isinstance(test, ast.Compare) and len(test.ops) == 1
            and isinstance(test.left, ast.Name) and test.left.id in local_reprs
            and isinstance(test.comparators[0], ast.Constant)
            and isinstance(test.ops[0], (ast.Eq, ast.NotEq, ast.Is, ast.IsNot))):
        try:
            left = ast.literal_eval(local_reprs[test.left.id])
        except (ValueError, SyntaxError):
            return None
        right = test.comparators[0].value
        same = left is right if isinstance(test.ops[0], (ast.Is, ast.IsNot)) else left == right
        return same if isinstance(test.ops[0], (ast.Eq, ast.Is)) else not same
    return None


def copied_attribute(line_text, names):
    """For ``base.x = base.y`` where ``y`` is in ``names``: ``y`` (an attribute copied to another name)."""
    try:
        stmt = ast.parse((line_text or "").strip()).body
    except SyntaxError:
        return None
    if len(stmt) != 1 or not isinstance(stmt[0], ast.Assign) or len(stmt[0].targets) != 1:
        return None
    target, value = stmt[0].targets[0], stmt[0].value
    if not (isinstance(target, ast.Attribute) and isinstance(value, ast.Attribute)
            and isinstance(target.value, ast.Name) and isinstance(value.value, ast.Name)
            and target.value.id == value.value.id):
        return None
    return value.attr if value.attr in names else None


def attribute_assignments(text, func_name, receiver):
    """{field: first line} of ``receiver.field = ...`` / ``self.receiver.field = ...`` in the def
    ``func_name`` (``Class.method`` or ``method``) of a source file."""
    index = source_index(text or "")
    if index is None:
        return {}
    name = func_name.rsplit(".", 1)[-1]
    owner = func_name.rsplit(".", 1)[0] if "." in func_name else None
    funcs = [f for f in index.by_name.get(name, [])
             if owner is None or getattr(index.classes.get(id(f)), "name", None) == owner]
    out = {}
    for func in funcs:
        for node, target in _assignments(func):
            if isinstance(target, ast.Attribute) and _names(target.value, receiver):
                line = out.get(target.attr)
                out[target.attr] = node.lineno if line is None else min(line, node.lineno)
    return out


def _names(node, name):
    return (isinstance(node, ast.Name) and node.id == name) or \
        (isinstance(node, ast.Attribute) and node.attr == name)


def local_source(text, line, ran, value_of=None):
    """The assignment a value stored at ``line`` came from, when that statement stores a local
    (``return {"page_size": page_size}``): (local, line of its last assignment that ran before
    ``line``), or None. ``ran``: the lines the call executed, in order; ``value_of``: the
    expression stored (default: every local the statement reads, the first that has one)."""
    index = source_index(text) if text else None
    func = index.function_at(line) if index is not None else None
    statement = _statement_node(text, line)
    if func is None or statement is None or not ran:
        return None
    order = {}
    for i, n in enumerate(ran):
        order[n] = i
    stop = max((order[n] for n in statement_lines(text, line) if n in order), default=None)
    if stop is None:
        return None
    args = {a.arg for a in func.args.args + func.args.kwonlyargs}
    if value_of is None:  # what the statement stores or returns, not where (``d[k] = v``: v)
        value_of = getattr(statement, "value", None)
        if value_of is None:
            return None
    for name in dict.fromkeys(names_read(value_of)):
        if name in args:
            continue
        assigned = []
        for node in ast.walk(func):
            if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)) and node.lineno != line:
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                if any(isinstance(t, ast.Name) and t.id == name for t in targets):
                    assigned.append(node.lineno)
        runs = [(max(order[m] for m in statement_lines(text, n) | {n} if m in order), n) for n in assigned
                if any(m in order and order[m] < stop for m in statement_lines(text, n) | {n})]
        if runs:
            return name, max(runs)[1]
    return None
