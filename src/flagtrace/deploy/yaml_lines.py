"""YAML documents whose strings remember the line they stand on, so that a token's origin can say
``deploy.yaml:31``. Each document of a stream is parsed on its own: one that does not parse (a chart template's
``{{ ... }}``, a merge conflict, a Secret holding a ``{{TOKEN}}`` placeholder) is a BadDocument in its place, and
the documents around it are read as usual."""
import re

_SEPARATOR = re.compile(r"^---(\s|$)")


class Line(str):
    """A string from the YAML with the line it stands on (1-based)."""
    line = 0


class BadDocument:
    """A document of the stream that is not valid YAML: where (1-based line) and why, in one line."""

    def __init__(self, source, line, problem):
        self.source, self.line, self.problem = source, line, problem

    def message(self):
        return "-f %s:%s is not valid YAML: %s" % (self.source, self.line, self.problem)


def load_documents(text, source):
    """Every YAML document of the text, strings carrying their line; a document that does not parse is a
    BadDocument (its line, YAML's one-line reason)."""
    out = []
    for first, chunk in _chunks(text):
        out += _load(chunk, source, first)
    return out


def _chunks(text):
    """(first line, text) of each document: split at ``---`` lines, each chunk keeping the lines above it blank
    so that marks count from the file's top."""
    lines = text.splitlines(keepends=True)
    start = 0
    for i, line in enumerate(lines):
        if _SEPARATOR.match(line) and i > start:
            yield start + 1, "\n" * start + "".join(lines[start:i])
            start = i
    yield start + 1, "\n" * start + "".join(lines[start:])


def _load(chunk, source, first):
    import yaml

    class Loader(yaml.SafeLoader):
        pass

    def scalar(loader, node):
        value = Line(loader.construct_scalar(node))
        value.line = node.start_mark.line + 1
        return value

    Loader.add_constructor("tag:yaml.org,2002:str", scalar)
    try:
        return [d for d in yaml.load_all(chunk, Loader=Loader) if d is not None]
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        return [BadDocument(source, mark.line + 1 if mark else first, problem)]


def value_lines(text):
    """{path: line} for every value of the text's first YAML document, numbers and booleans included (they carry
    no line of their own): a path is the tuple of mapping keys and list indices down to the value; the line
    (1-based) is the key's for a mapping or a list, the value's for anything else. {} where the YAML does not
    parse."""
    import yaml

    try:
        root = next((node for node in yaml.compose_all(text, Loader=yaml.SafeLoader) if node is not None), None)
    except yaml.YAMLError:
        return {}
    lines = {}
    stack = [((), root, 1)] if root is not None else []
    while stack:
        path, node, line = stack.pop()
        lines[path] = line if isinstance(node, (yaml.MappingNode, yaml.SequenceNode)) else node.start_mark.line + 1
        if isinstance(node, yaml.MappingNode):
            stack += [(path + (key.value,), value, key.start_mark.line + 1) for key, value in node.value]
        elif isinstance(node, yaml.SequenceNode):
            stack += [(path + (i,), item, item.start_mark.line + 1) for i, item in enumerate(node.value)]
    return lines
