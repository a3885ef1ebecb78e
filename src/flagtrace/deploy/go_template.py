"""Go's text/template, the part operators' config templates use (KServe's LLMInferenceServiceConfig): ``{{ .A.B }}``
over a context, ``if``/``else``/``end``, ``and``/``or``/``not``, string (``"..."``, `` `...` ``) and integer
literals, functions the caller names, ``{{-``/``-}}`` trimming spaces and tabs (KServe renders the JSON text of
the object, where a line break is ``\\n``: a trim never removes one). A field the context lacks is ``None`` (false in
``if``, printed as ``missing(path)``)."""
import re

_ACTION = re.compile(r"\{\{(-?)\s*(.*?)\s*(-?)\}\}", re.S)
_WORD = re.compile(r'`[^`]*`|"(?:\\.|[^"\\])*"|\S+')


class TemplateError(ValueError):
    pass


def render(text, lookup, functions, missing):
    """``text`` rendered: ``lookup(path)`` gives a field's value (path: ["Spec", "Model", "Name"]) or None;
    ``functions``: name -> callable; ``missing(path)`` prints a field that has no value."""
    pieces = []  # text, or (action words)
    pos = 0
    for m in _ACTION.finditer(text):
        before = text[pos:m.start()]
        if m.group(1):
            before = before.rstrip(" \t")
        pieces.append(before)
        pieces.append(_WORD.findall(m.group(2)))
        pos = m.end()
        if m.group(3):
            rest = text[pos:]
            pos += len(rest) - len(rest.lstrip(" \t"))
    pieces.append(text[pos:])
    out, _ = _block(pieces, 0, lookup, functions, missing, emit=True)
    return out


def _block(pieces, i, lookup, functions, missing, emit):
    """Render from pieces[i] to the ``else``/``end`` that closes this block: (text, index of that piece)."""
    out = []
    while i < len(pieces):
        piece = pieces[i]
        if isinstance(piece, str):
            out.append(piece if emit else "")
            i += 1
            continue
        head = piece[0] if piece else ""
        if head in ("end", "else"):
            return "".join(out), i
        if head == "if":
            cond = bool(_eval(piece[1:], lookup, functions)) if emit else False
            body, i = _block(pieces, i + 1, lookup, functions, missing, emit and cond)
            other = ""
            if i < len(pieces) and pieces[i][:1] == ["else"]:
                other, i = _block(pieces, i + 1, lookup, functions, missing, emit and not cond)
            out.append(body + other)
            i += 1  # the end
            continue
        if head in ("range", "with", "define", "template", "block"):
            raise TemplateError("{{ %s }} is not read" % head)
        if emit:
            value = _eval(piece, lookup, functions)
            out.append(missing(piece[0][1:].split(".")) if value is None and piece and piece[0].startswith(".")
                       else _text(value))
        i += 1
    return "".join(out), i


def _eval(words, lookup, functions):
    if not words:
        return None
    head, args = words[0], words[1:]
    if head in ("and", "or", "not", "eq", "ne") or head in functions:
        values = [_eval([a], lookup, functions) for a in args]
        if head == "and":
            return next((v for v in values if not v), values[-1] if values else None)
        if head == "or":
            return next((v for v in values if v), values[-1] if values else None)
        if head == "not":
            return not values[0]
        if head in ("eq", "ne"):
            return (values[0] == values[1]) == (head == "eq")
        return functions[head](*values)
    if args:
        raise TemplateError("{{ %s }} is not read" % " ".join(words))
    if head.startswith("."):
        return lookup([p for p in head[1:].split(".") if p])
    if head[:1] in "`\"":
        return head[1:-1] if head[0] == "`" else head[1:-1].encode().decode("unicode_escape")
    if re.fullmatch(r"-?\d+", head):
        return int(head)
    if head in ("true", "false", "nil"):
        return {"true": True, "false": False, "nil": None}[head]
    raise TemplateError("{{ %s }} is not read" % head)


def _text(value):
    if value is True or value is False:
        return "true" if value else "false"
    return "" if value is None else str(value)
