"""Records every change to watched config objects, inside the target interpreter.

Three mechanisms, cheapest first:
- the watched classes' ``__setattr__`` is wrapped: each ordinary assignment is recorded
  with the writing frame;
- while a watched object's own method runs (a "resolution window"), a trace function
  looks at calls that receive a watched object and diffs the object around them, so
  writes through ``object.__setattr__`` and in-place changes (``cfg.paths.append``)
  are attributed to the innermost such function, to the line where it matters;
- nested config objects reachable from a watched object are watched by dotted path.

Standard library only, Python >= 3.9.
"""
import dataclasses
import enum
import functools
import gc
import linecache
import operator
import os
import sys
import threading

from .values import describe

_MISSING = object()
_CONTAINERS = (list, dict, set, bytearray)
# Names in a code object that suggest it changes an object without a plain assignment.
_BYPASS_NAMES = frozenset(
    ("__setattr__", "setattr", "__dict__", "append", "extend", "insert", "pop", "remove",
     "clear", "update", "setdefault", "add", "discard", "sort", "reverse", "popitem",
     "__setitem__", "__delitem__", "__iadd__")
)
_NOT_WINDOWS = frozenset(
    ("__setattr__", "__getattribute__", "__getattr__", "__repr__", "__str__", "__eq__",
     "__hash__", "__del__", "__init_subclass__", "__class_getitem__", "__format__")
)
_PROBE_DIR = os.path.dirname(os.path.abspath(__file__))
# The standard library never holds a config between calls: a write it makes to one (a cached
# property, copy's __dict__ update) shows in the diff of the calling frame, at the calling line.
_STDLIB = tuple({os.path.dirname(os.__file__), os.path.dirname(os.path.realpath(os.__file__))}) + ("<frozen ",)


def code_qualname(code, frame=None):
    qual = getattr(code, "co_qualname", None)
    if qual:
        return qual
    if frame is not None:
        self_ = frame.f_locals.get("self") if code.co_argcount else None
        if self_ is not None and not isinstance(self_, type):
            return "%s.%s" % (type(self_).__name__, code.co_name)
    return code.co_name


def frame_info(frame, with_source=True):
    code = frame.f_code
    info = {
        "func": code_qualname(code, frame),
        "file": code.co_filename,
        "line": frame.f_lineno,
        "first_line": code.co_firstlineno,
    }
    if with_source:
        info["src"] = linecache.getline(code.co_filename, frame.f_lineno).strip()
    return info


def outer_frames(frame, limit=8):
    """The call stack from ``frame`` outwards, without the probe's own frames (its files, and
    the ``python -c`` bootstrap that loads it: the outermost frame, in ``<string>``)."""
    out = []
    while frame is not None and len(out) < limit:
        filename = frame.f_code.co_filename
        if not filename.startswith(_PROBE_DIR) and not (frame.f_back is None and filename == "<string>"):
            out.append(frame_info(frame, with_source=False))
        frame = frame.f_back
    return out


def scalar_locals(frame, limit=24):
    """Simple local values of a frame, for conditions that read locals."""
    out = {}
    try:
        items = list(frame.f_locals.items())
    except Exception:
        return out
    for name, value in items:
        if len(out) >= limit:
            break
        if _is(value, (bool, int, float, type(None))) or (_is(value, str) and len(value) <= 200):
            out[name] = describe(value, name, remember=False)["repr"]
    return out


def field_names(obj):
    d = getattr(obj, "__dict__", None)
    if d is not None:
        return list(d)
    names = []
    for klass in type(obj).__mro__:
        for slot in getattr(klass, "__slots__", ()) or ():
            if slot not in ("__dict__", "__weakref__") and slot not in names:
                names.append(slot)
    return names


def field_items(obj):
    struct_fields = getattr(type(obj), "__struct_fields__", None)
    if struct_fields is not None:  # a msgspec Struct: its fields live outside any __dict__
        return [(name, getattr(obj, name, None)) for name in struct_fields]
    d = getattr(obj, "__dict__", None)
    if d is not None:
        items = list(d.items())
        declared = getattr(type(obj), "__dataclass_fields__", None)
        if declared and not declared.keys() <= d.keys():
            # a field left at its class-level default lives on the class, not in the instance
            for spec in dataclasses.fields(type(obj)):
                if spec.name not in d:
                    value = getattr(obj, spec.name, _MISSING)
                    if value is not _MISSING:
                        items.append((spec.name, value))
        return items
    out = []
    for name in field_names(obj):
        value = getattr(obj, name, _MISSING)
        if value is not _MISSING:
            out.append((name, value))
    return out


def _fields(obj):
    """A watched object's fields as a mapping: its own ``__dict__`` where that holds them all."""
    d = getattr(obj, "__dict__", None)
    if type(d) is dict and getattr(type(obj), "__struct_fields__", None) is None:
        return d
    return dict(field_items(obj))


_PLAIN = frozenset((str, int, float, bool, type(None)))
_is_same = operator.is_


def _is(value, types):
    """isinstance() for the target's values: it asks ``__class__``, which an object may make
    raise; the real type cannot."""
    return issubclass(type(value), types)


def _is_config_object(value, root_class, nested_classes=()):
    klass = type(value)
    # An enum member is a value, not a config: its __dict__ holds the enum's internals (_value_,
    # _name_), which would be reported as its fields and the field itself dropped.
    if issubclass(klass, (type, enum.Enum)):
        return False
    if dataclasses.is_dataclass(klass) or (nested_classes and issubclass(klass, nested_classes)):
        return True
    try:
        return klass.__module__ == root_class.__module__ and hasattr(value, "__dict__")
    except Exception:
        return False


def _copy_container(value):
    try:
        return type(value)(value) if not _is(value, dict) else dict(value)
    except Exception:
        return _MISSING


class Watched:
    __slots__ = ("oid", "obj", "root", "path", "klass")

    def __init__(self, oid, obj, root, path):
        self.oid = oid
        self.obj = obj
        self.root = root if root is not None else self
        self.path = path
        self.klass = type(obj)

    def dotted(self, name):
        return self.path + "." + name if self.path else name


class _FrameEntry:
    __slots__ = ("frame", "roots", "snap", "line")

    def __init__(self, frame, roots, snap):
        self.frame = frame
        self.roots = roots
        self.snap = snap
        self.line = frame.f_lineno


class Recorder:
    def __init__(self, trace):
        self.trace = trace
        self.by_id = {}  # id(obj) -> Watched
        self.objects = []  # Watched, in order of discovery
        self.classes = set()
        self.root_classes = set()
        self.depth = 0  # nesting of resolution windows (watched methods running)
        self.resolving = 0  # an adapter's resolution is running (no window: nothing to diff)
        self.stack = []  # _FrameEntry of traced frames that received a watched object
        self._saved_trace = None
        self._froze = False
        self._line_codes = {}
        self._skip_codes = {}
        self._not_configs = set()  # (type, root class) that _adopt_nested found not to be a config
        self._thread = threading.get_ident()
        self.enabled = True
        # Register an instance of a root class at its first write when no constructor ran for it
        # (``copy.deepcopy`` / ``dataclasses.replace`` of a config): set by adapters that need it.
        self.discover_copies = False
        # Classes watched as nested configs wherever a watched object holds one, besides
        # dataclasses and the root class's module (a model's own config class): set by adapters.
        self.nested_classes = ()

    # -- classes -----------------------------------------------------------------
    def watch_root_class(self, klass):
        """A class whose instances are resolved configs: constructors register them and
        its methods open resolution windows."""
        if klass in self.root_classes:
            return
        self.root_classes.add(klass)
        self.watch_class(klass)
        for name, attr in list(vars(klass).items()):
            if name in _NOT_WINDOWS:
                continue
            if isinstance(attr, (staticmethod, classmethod)):
                func = attr.__func__
                if hasattr(func, "__code__"):
                    setattr(klass, name, type(attr)(self._window(func)))
            elif hasattr(attr, "__code__"):
                setattr(klass, name, self._window(attr, constructor=(name == "__init__")))
        if "__init__" not in vars(klass):
            # Inherited constructor: wrap it here so instances are registered.
            klass.__init__ = self._window(klass.__init__, constructor=True)

    def watch_nested_class(self, klass):
        """Watch instances of ``klass`` (and its subclasses) that a watched object holds."""
        if klass not in self.nested_classes:
            self.nested_classes += (klass,)
            self._not_configs.clear()

    def watch_class(self, klass):
        """Record assignments to instances of ``klass`` that are being watched."""
        if klass in self.classes:
            return
        self.classes.add(klass)
        recorder = self
        orig_setattr = klass.__setattr__
        if not getattr(orig_setattr, "_flagtrace_wrapped", False):
            code = getattr(orig_setattr, "__code__", None)
            if code is not None:  # whatever it is called (huggingface_hub: __strict_setattr__)
                self._skip_codes[code] = True

            def __setattr__(self, name, value, _orig=orig_setattr):
                w = recorder.by_id.get(id(self))
                if w is None and recorder.discover_copies and recorder.enabled:
                    w = recorder.discover(self)
                if w is None or not recorder.enabled:
                    return _orig(self, name, value)
                d = getattr(self, "__dict__", None)
                if d is not None and name not in getattr(type(self), "__struct_fields__", ()):
                    old = d.get(name, _MISSING)
                else:  # slots, or a msgspec Struct's fields (outside its __dict__)
                    old = getattr(self, name, _MISSING)
                _orig(self, name, value)
                try:
                    recorder.on_write(w, name, old, value, sys._getframe(1), "setattr")
                except Exception as exc:  # the probe's failure must not become the target's
                    recorder.failed("recording %s" % name, exc)

            __setattr__._flagtrace_wrapped = True
            klass.__setattr__ = __setattr__

    def _window(self, func, constructor=False):
        recorder = self

        @functools.wraps(func)
        def window(*args, **kwargs):
            if constructor and args and recorder.enabled:
                obj = args[0]
                if isinstance(obj, tuple(recorder.root_classes)):
                    if id(obj) not in recorder.by_id:
                        w = recorder.register(obj, None, "")
                        recorder.trace.construct(w, args[1:], kwargs, sys._getframe(1))
            recorder.enter_window()
            try:
                return func(*args, **kwargs)
            except Exception as exc:
                recorder.trace.escaped(exc)
                raise
            finally:
                recorder.exit_window()

        window._flagtrace_window = True
        return window

    def failed(self, what, exc):
        """Note (once per kind) that recording failed; the target carries on untouched."""
        self.trace.problem("probe", "probe: %s failed: %s: %s" % (what, type(exc).__name__, exc))

    def discover(self, obj):
        """A root-class instance written before anything registered it: a copy. Its current
        values are its initial ones."""
        if not isinstance(obj, tuple(self.root_classes)):
            return None
        try:
            w = self.register(obj, None, "")
            for name, value in field_items(obj):
                self.on_initial(w, name, value)
        except Exception as exc:
            self.failed("registering a copy", exc)
            return None
        return w

    # -- objects -----------------------------------------------------------------
    def register(self, obj, parent, path):
        w = Watched(len(self.objects) + 1, obj, parent.root if parent else None, path)
        self.by_id[id(obj)] = w
        self.objects.append(w)
        self.trace.object_registered(w, parent)
        return w

    def _adopt_nested(self, parent, name, value):
        """Watch ``value`` as ``parent.name`` if it is a config object; False if it is not."""
        if id(value) in self.by_id:
            return True
        if not _is_config_object(value, parent.root.klass, self.nested_classes):
            return False
        self.watch_class(type(value))
        child = self.register(value, parent, parent.dotted(name))
        for cname, cvalue in field_items(value):
            self.on_initial(child, cname, cvalue)
        return True

    def on_initial(self, w, name, value):
        self.trace.write(w, name, _MISSING, value, None, "init", None)
        self._adopt_nested(w, name, value)

    # -- writes ------------------------------------------------------------------
    def on_write(self, w, name, old, new, frame, how, line=None):
        if old is _MISSING:
            how = "init"
        if frame is not None and frame.f_code.co_filename.startswith(_PROBE_DIR):
            frame = None
        self.trace.write(w, name, old, new, frame, how, line)
        if self.stack:
            self._refresh_snapshots(w, name, new)
        if not _is(new, (str, int, float, bool, type(None))):
            self._adopt_nested(w, name, new)

    def _refresh_snapshots(self, w, name, new):
        copy = _copy_container(new) if _is(new, _CONTAINERS) else _MISSING
        for entry in self.stack:
            if w.root.oid in entry.roots:
                shot = entry.snap.get(w.oid)
                if shot is None:
                    shot = entry.snap[w.oid] = ({}, {})
                shot[0][name] = new
                if copy is _MISSING:
                    shot[1].pop(name, None)
                else:
                    shot[1][name] = copy

    # -- resolution windows --------------------------------------------------------
    def enter_window(self):
        if threading.get_ident() != self._thread:
            return
        if self.depth == 0:
            self._saved_trace = sys.gettrace()
            # The snapshots allocate; left alone, that sets off full collections of the whole
            # heap (0.4 s with torch and vLLM loaded). Objects older than the window are left out
            # of collections until it closes: collected later, never kept.
            self._froze = not gc.get_freeze_count()
            if self._froze:
                gc.freeze()
            sys.settrace(self._on_call)
        self.depth += 1

    def exit_window(self):
        if threading.get_ident() != self._thread:
            return
        self.depth -= 1
        if self.depth == 0:
            sys.settrace(self._saved_trace)
            if self._froze:
                gc.unfreeze()
                self._froze = False
            self._saved_trace = None
            self.stack = []

    def _roots_in_args(self, frame):
        code = frame.f_code
        n = code.co_argcount + code.co_kwonlyargcount
        if not n or not self.by_id:
            return None
        names = code.co_varnames[: min(n, 6)]
        f_locals = frame.f_locals
        roots = None
        for name in names:
            w = self.by_id.get(id(f_locals.get(name)))
            if w is not None:
                if roots is None:
                    roots = {}
                roots[w.root.oid] = w.root
        return roots

    def _snapshot(self, roots):
        """Fields of every object under ``roots``, per object: a copy of its fields and a copy
        of each container among them. A registered object that one of them holds but that has
        a root of its own (a sub-config built apart, a deep copy) joins ``roots``:
        ``self.sub.items.append(x)`` edits it through the object the frame received."""
        snap = {}
        pending = set(roots)
        while pending:
            added = set()
            for w in self.objects:
                if w.root.oid not in pending:
                    continue
                fields = dict(_fields(w.obj))
                containers = {}
                snap[w.oid] = (fields, containers)
                for name, value in fields.items():
                    kind = type(value)
                    if kind in _PLAIN:
                        continue
                    if issubclass(kind, _CONTAINERS):
                        copy = _copy_container(value)
                        if copy is not _MISSING:
                            containers[name] = copy
                            continue
                    held = self.by_id.get(id(value))
                    if held is None:
                        key = (kind, w.root.klass)
                        if kind.__module__ != "builtins" and key not in self._not_configs:
                            # set by a validator that has not returned yet (pydantic runs
                            # __post_init__ inside it): adopted now, as it would be when the
                            # validator returns (appended to self.objects: this loop reaches it)
                            if not self._adopt_nested(w, name, value):
                                self._not_configs.add(key)
                    elif held.root.oid not in roots:
                        roots[held.root.oid] = held.root
                        added.add(held.root.oid)
            pending = added
        return snap

    def _wants_lines(self, code):
        lines = self._line_codes.get(code)
        if lines is None:
            lines = bool(_BYPASS_NAMES.intersection(code.co_names))
            self._line_codes[code] = lines
        return lines

    def _skipped(self, code):
        """Code never diffed: the probe's, the standard library's, ``__setattr__`` methods, and code
        without arguments."""
        skip = self._skip_codes.get(code)
        if skip is None:
            name = code.co_filename
            # A class's own __setattr__ is where the hook's write happens: the hook records it
            # (diffed as well, it would show twice: once inside __setattr__, once at the caller).
            # watch_class marks the wrapped one itself, whatever its name.
            skip = (not (code.co_argcount + code.co_kwonlyargcount) or name.startswith(_PROBE_DIR)
                    or (name.startswith(_STDLIB) and "-packages" not in name) or code.co_name == "__setattr__")
            self._skip_codes[code] = skip
        return skip

    def _on_call(self, frame, event, arg):
        if event != "call" or not self.enabled or self._skipped(frame.f_code):
            return None
        try:
            roots = self._roots_in_args(frame)
            if roots is None:
                return None
            snap = self._snapshot(roots)
        except Exception as exc:  # an exception here would unset the tracer inside the target
            self.failed("snapshot", exc)
            return None
        self.stack.append(_FrameEntry(frame, roots, snap))
        frame.f_trace_lines = self._wants_lines(frame.f_code)
        return self._on_local

    def _on_local(self, frame, event, arg):
        if not self.stack or self.stack[-1].frame is not frame:
            return self._on_local
        entry = self.stack[-1]
        if event == "line":
            self._safe_diff(entry, frame, entry.line)
            entry.line = frame.f_lineno
        elif event == "return":
            self._safe_diff(entry, frame, entry.line)
            self.stack.pop()
        return self._on_local

    def _safe_diff(self, entry, frame, line):
        try:
            self._diff(entry, frame, line)
        except Exception as exc:
            self.failed("diff", exc)

    def _diff(self, entry, frame, line):
        snap = entry.snap
        changes = []
        for w in self.objects:
            if w.root.oid not in entry.roots:
                continue
            fields = _fields(w.obj)
            shot = snap.get(w.oid)
            if shot is None:
                shot = ({}, {})
            before, containers = shot
            # Nothing reassigned (the common case, checked at C speed): only containers can differ.
            if not (len(fields) == len(before) and all(map(_is_same, fields.values(), before.values()))
                    and all(map(_is_same, fields, before))):
                for name, value in fields.items():
                    old = before.get(name, _MISSING)
                    if old is not value:
                        changes.append((w, name, old, value, "bypass"))
            for name, copy in containers.items():
                value = fields.get(name, _MISSING)
                if value is not before.get(name, _MISSING):
                    continue  # reassigned: reported above
                try:
                    same = copy == value
                except Exception:
                    same = True
                if not same:
                    changes.append((w, name, copy, value, "inplace"))
        for w, name, old, new, how in changes:
            if old is _MISSING and how == "bypass":
                # First assignment through object.__setattr__: a constructor's initial value.
                self.trace.write(w, name, _MISSING, new, frame, "init", line)
                self._refresh_snapshots(w, name, new)
                self._adopt_nested(w, name, new)
            else:
                self.on_write(w, name, old, new, frame, how, line)
