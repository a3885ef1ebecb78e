"""Reading single recorded events and values: whether two recorded values are the same, where an
event happened, and which call it happened in."""


def same_repr(left, right):
    """Two recorded values (``{"repr": ..., ...}`` or None) print the same."""
    if left is None or right is None:
        return left is right
    return left.get("repr") == right.get("repr")


def enum_parts(recorded):
    """(NAME, value) of a recorded enum member (its repr is ``Type.NAME``), else None."""
    kind, text = recorded.get("type"), recorded.get("repr")
    if isinstance(kind, str) and isinstance(text, str) and text.startswith(kind + ".") and kind:
        return text[len(kind) + 1:], recorded.get("value")
    return None


def same_value(left, right):
    """``same_repr``, or one is the enum member the other names, as a validator converts it ('3' or
    3 -> OptimizationLevel.O3, 'backed' -> DynamicShapesType.BACKED): the verdict is about the
    value, not its type."""
    if same_repr(left, right):
        return True
    if left is None or right is None:
        return False
    for member, other in ((left, right), (right, left)):
        parts = enum_parts(member)
        plain = other.get("value")
        if parts is None or enum_parts(other) is not None or not isinstance(plain, (str, int)) \
                or isinstance(plain, bool):
            continue
        name, value = parts
        if str(plain) == str(value) or str(plain).lower() == name.lower():
            return True
    return False


def event_site(event):
    """Where ``event`` happened: its function, file, line and source line."""
    at = event.get("at") or {}
    return {"func": at.get("func"), "file": at.get("file"), "line": at.get("line"), "src": at.get("src")}


def call_key(event):
    """Which call an event happened in. A frame's id is reused by a later call as soon as the
    frame is freed, so the function is part of the key: a log of one method is never attached
    to a change made by the next method that happens to get the same frame address."""
    at = event.get("at") or {}
    return event.get("frame"), at.get("file"), at.get("func")
