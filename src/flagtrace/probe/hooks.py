"""Process-wide observers: argparse, logging, warnings and os.environ writes.

Each wrapper records and then does exactly what the original did.
Standard library only, Python >= 3.9.
"""
import _collections_abc
import argparse
import logging
import os
import sys
import warnings

from .recorder import frame_info

_SKIP_FILES = (os.path.dirname(logging.__file__), warnings.__file__.rsplit(".", 1)[0], "<frozen os>",
               os.__file__.rsplit(".", 1)[0], os.path.dirname(os.path.abspath(__file__)),
               "<frozen _collections_abc>", _collections_abc.__file__.rsplit(".", 1)[0])


def caller(depth=2):
    """The first frame outside logging / warnings / os / the probe."""
    frame = sys._getframe(depth)
    while frame is not None and frame.f_code.co_filename.startswith(_SKIP_FILES):
        frame = frame.f_back
    return frame


# -- argparse -----------------------------------------------------------------------
def explicit_options(parser, args):
    """Options present in ``args``: exact, ``--flag=value`` and unique prefix abbreviations."""
    known = parser._option_string_actions
    prefixes = tuple(parser.prefix_chars)
    found = []
    for index, tok in enumerate(args):
        if not isinstance(tok, str) or tok == "--":
            if tok == "--":
                break
            continue
        if len(tok) < 2 or not tok.startswith(prefixes):
            continue
        if parser._negative_number_matcher.match(tok) and not parser._has_negative_number_optionals:
            continue
        name, eq, _ = tok.partition("=")
        action = known.get(tok) or (known.get(name) if eq else None)
        typed = tok if tok in known else name
        # the option string argparse matched: the one typed, or the one an abbreviation stands for
        # (never another of the action's strings: --no-X and --disable-X mean the opposite)
        matched = typed
        if action is None and getattr(parser, "allow_abbrev", True) and tok[:2] == prefixes[0] * 2:
            options = sorted((o for o in known if o.startswith(name)), key=len)
            if len({known[o] for o in options}) == 1:
                action, matched = known[options[0]], options[0]
        if action is None and tok[:1] in prefixes and tok[1:2] not in prefixes and tok[:2] in known:
            action = known[tok[:2]]  # a short option with its value attached (-O3, -tp4 is not one)
            typed = matched = tok[:2]
        if action is None or action.dest in (argparse.SUPPRESS, "help"):
            continue
        found.append({"dest": action.dest, "typed": typed, "option": matched, "index": index,
                      "inline": bool(eq) or len(tok) > len(typed)})
    return found


def _subcommand(parser, args):
    """The sub-parser ``args`` select (``vllm serve ...``) and the index of its name, or (None, None)."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for index, tok in enumerate(args):
                if isinstance(tok, str) and not tok.startswith(tuple(parser.prefix_chars)):
                    chosen = action.choices.get(tok)
                    return (chosen, index) if chosen is not None else (None, None)
    return None, None


def command_options(parser, args, namespace=None):
    """Explicit options and the actions of a parser and of the sub-command ``args`` select; with
    the parsed ``namespace``, the positionals the command line gave too."""
    sub, index = _subcommand(parser, args)
    if sub is None:
        return explicit_options(parser, args) + _positionals(parser, args, namespace), parser_actions(parser)
    explicit, actions = command_options(sub, args[index + 1:], namespace)
    for ex in explicit:
        ex["index"] += index + 1
    head = args[:index]
    return (explicit_options(parser, head) + _positionals(parser, head, namespace) + explicit,
            parser_actions(parser) + actions)


def _positionals(parser, args, namespace):
    """Positional arguments the command line gave (``vllm serve MODEL``): requests as much as
    options are. ``typed`` is the token itself."""
    out = []
    if namespace is None:
        return out
    for action in parser._actions:
        if action.option_strings or action.dest in (argparse.SUPPRESS, "help") or action.nargs not in (None, "?"):
            continue
        value = getattr(namespace, action.dest, None)
        if isinstance(value, str) and value != action.default and value in args:
            out.append({"dest": action.dest, "typed": value, "option": action.metavar or action.dest,
                        "index": args.index(value), "inline": False, "positional": True})
    return out


def parser_actions(parser):
    groups = {}
    for group in getattr(parser, "_action_groups", ()):
        for action in getattr(group, "_group_actions", ()):
            groups[id(action)] = group.title
    out = []
    for action in parser._actions:
        if action.dest in (argparse.SUPPRESS, "help") or not action.option_strings:
            continue
        entry = {"dest": action.dest, "options": list(action.option_strings)}
        if action.nargs == 0:  # a switch: what typing it stores (store_true, store_false, --no-X)
            entry["switch"] = True
            if isinstance(action.const, bool):
                entry["const"] = action.const
        choices = _plain_choices(action.choices)
        if choices:
            entry["choices"] = choices
        if groups.get(id(action)) not in (None, "options", "optional arguments", "positional arguments"):
            entry["group"] = groups[id(action)]
        out.append(entry)
    return out


def _plain_choices(choices, limit=64):
    """An option's choices as JSON values (what ``flagtrace fix`` may try), if they are plain."""
    if not choices or isinstance(choices, (str, bytes)):
        return None
    try:
        values = list(choices)
    except TypeError:
        return None
    if len(values) > limit or not all(isinstance(v, (str, int, float)) for v in values):
        return None
    return values


def install_argparse(trace, on_parsed=None):
    """``on_parsed()``: called after each outermost parse that succeeded with nothing left over (the
    probe stops there when flagtrace's own input check refused the command: the framework's parser
    had its say first)."""
    orig_parse = argparse.ArgumentParser.parse_known_args
    orig_error = argparse.ArgumentParser.error
    state = {"depth": 0}

    def parse_known_args(self, args=None, namespace=None):
        if state["depth"] == 0:
            args = stand_in_placeholders(self, args, trace)
        state["depth"] += 1
        try:
            result = orig_parse(self, args, namespace)
        finally:
            state["depth"] -= 1
        if state["depth"] == 0:
            used = list(sys.argv[1:] if args is None else args)
            explicit, actions = command_options(self, used, result[0])
            parse = trace.parsed(self, used, result[0], explicit, actions, caller(2))
            _follow_namespace(trace, result[0], parse)
            if on_parsed is not None and not result[1]:  # leftovers: parse_args refuses them next
                on_parsed()
        return result

    def error(self, message):
        used = list(sys.argv[1:])
        explicit, actions = command_options(self, used)
        trace.parse_error(self, message, actions, explicit, caller(2))
        return orig_error(self, message)

    argparse.ArgumentParser.parse_known_args = parse_known_args
    argparse.ArgumentParser.error = error


PLACEHOLDERS_ENV = "FLAGTRACE_PLACEHOLDERS"  # JSON list of words a deployment file only knows at run time
PLACEHOLDER_NOTE = "only known when the deployment runs"


def stand_in_placeholders(parser, args, trace):
    """``args`` with each placeholder (a word only known when the deployment runs: ``$PORT``,
    ``$(hostname -i)``; FLAGTRACE_PLACEHOLDERS, written by the -f readers) that an option with a type or choices
    takes replaced by a value that option accepts (its default, else 1, else 0, else its first choice), and a
    note saying so; an option of plain text keeps the placeholder's text. None: sys.argv's words."""
    raw = os.environb.get(PLACEHOLDERS_ENV.encode())  # not os.environ: flagtrace's own read is not the target's
    if not raw:
        return args
    try:
        import json

        held = set(json.loads(raw.decode("utf-8", "replace")))
    except ValueError:
        return args
    words = list(sys.argv[1:] if args is None else args)
    actions = _option_actions(parser)
    changed = False
    for i, word in enumerate(words):
        option, eq, value = word.partition("=")
        if not (eq and option.startswith("-") and value in held):
            option, value = (words[i - 1] if i else ""), word
            if value not in held:
                continue
        action = actions.get(option)
        plausible = _plausible(action) if action is not None else None
        if plausible is None:
            continue
        words[i] = option + "=" + plausible if eq and words[i].startswith(option + "=") else plausible
        trace.problem("placeholder", "%s %s: %s; %s stood in (%s)"
                      % (option, value, PLACEHOLDER_NOTE, plausible, plausible_why(action, plausible)))
        changed = True
    return words if changed else args


def _option_actions(parser, seen=None):
    """{option string: action} of a parser and its subcommands' parsers (``vllm serve``)."""
    seen = seen if seen is not None else set()
    if id(parser) in seen:
        return {}
    seen.add(id(parser))
    out = dict(getattr(parser, "_option_string_actions", {}))
    for action in getattr(parser, "_actions", []):
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                for option, act in _option_actions(sub, seen).items():
                    out.setdefault(option, act)
    return out


def _plausible(action):
    if action.nargs == 0 or (action.type in (None, str) and not action.choices):
        return None  # a switch, or plain text: the placeholder's text is as good as any
    candidates = ([str(action.default)] if action.default is not None and not isinstance(action.default, bool)
                  else []) + ["1", "0"] + [str(c) for c in (action.choices or [])][:1]
    for candidate in candidates:
        try:
            value = action.type(candidate) if callable(action.type) else candidate
        except Exception:  # noqa: BLE001  (the option's own type refuses it: the next one)
            continue
        if not action.choices or value in action.choices or candidate in action.choices:
            return candidate
    return None


def plausible_why(action, value):
    if action.default is not None and str(action.default) == value:
        return "the option's default"
    if action.choices:
        return "one of the option's choices"
    return "a value the option's type accepts"


_ARGPARSE_FILE = argparse.__file__.rsplit(".", 1)[0]
_MAX_NAMESPACE_WRITES = 200
_RECORDING = {}  # namespace class -> its recording subclass


def _follow_namespace(trace, namespace, parse):
    """Record what code writes to a parsed namespace afterwards: an explicit option can reach the
    config under another name (``args.tp_size = args.tensor_parallel_size``). The namespace keeps
    its class name, repr, pickling and copying; only its attribute writes are observed."""
    cls = type(namespace)
    if parse is None or cls.__setattr__ not in (object.__setattr__, argparse.Namespace.__setattr__):
        return
    recording = _RECORDING.get(cls)
    if recording is None:
        def __setattr__(self, name, value):
            frame = sys._getframe(1)
            writes = parse_of.get(id(self))
            if writes is not None and len(writes) < _MAX_NAMESPACE_WRITES \
                    and not frame.f_code.co_filename.startswith(_ARGPARSE_FILE):
                writes.append(trace.namespace_write(name, value, frame))
            object.__setattr__(self, name, value)

        def __reduce_ex__(self, protocol):
            return (cls, (), dict(self.__dict__))

        parse_of = {}
        recording = type(cls.__name__, (cls,), {"__setattr__": __setattr__, "__reduce_ex__": __reduce_ex__,
                                                 "__module__": cls.__module__, "__qualname__": cls.__qualname__,
                                                 "_flagtrace_writes": parse_of})
        _RECORDING[cls] = recording
    recording._flagtrace_writes[id(namespace)] = parse.setdefault("namespace_writes", [])
    try:
        namespace.__class__ = recording
    except TypeError:
        pass


# -- logging and warnings ----------------------------------------------------------------
_LEVEL_METHODS = {
    # Logger.warn and Logger.exception delegate to warning / error: not wrapped twice.
    "debug": logging.DEBUG, "info": logging.INFO, "warning": logging.WARNING,
    "error": logging.ERROR, "critical": logging.CRITICAL,
}


def _format(msg, args):
    try:
        text = str(msg)
        if args:
            text = text % args
        return text
    except Exception:
        return str(msg)


def _exception_text(exc_info):
    """What ``logger.exception`` / ``exc_info=`` adds to a record: the exception, without its traceback."""
    if not exc_info:
        return ""
    try:
        exc = exc_info if isinstance(exc_info, BaseException) else (
            exc_info[1] if isinstance(exc_info, tuple) else sys.exc_info()[1])
        if exc is None:
            return ""
        return "\n%s: %s" % (type(exc).__name__, exc)
    except Exception:
        return ""


def install_logging(trace):
    def wrap(name, level):
        orig = getattr(logging.Logger, name)

        def method(self, msg, *args, **kwargs):
            if trace.logging_on:
                text = _format(msg, args) + _exception_text(kwargs.get("exc_info"))
                trace.log(self.name, logging.getLevelName(level), text, caller(2))
            return orig(self, msg, *args, **kwargs)

        method.__name__ = name
        return method

    for name, level in _LEVEL_METHODS.items():
        if hasattr(logging.Logger, name):
            setattr(logging.Logger, name, wrap(name, level))
    orig_log = logging.Logger.log

    def log(self, level, msg, *args, **kwargs):
        if trace.logging_on and isinstance(level, int):
            trace.log(self.name, logging.getLevelName(level), _format(msg, args), caller(2))
        return orig_log(self, level, msg, *args, **kwargs)

    logging.Logger.log = log
    orig_warn = warnings.warn

    def warn(message, category=None, stacklevel=1, *args, **kwargs):
        if trace.logging_on:
            name = getattr(category, "__name__", None) or type(message).__name__
            trace.log("warnings", "WARNING", "%s: %s" % (name, message), caller(2))
        return orig_warn(message, category, stacklevel + 1, *args, **kwargs)

    warnings.warn = warn


# -- os.environ ------------------------------------------------------------------------
def install_environ(trace):
    """Writes to os.environ, and the first read of each variable (``os.getenv``, ``.get``,
    ``in``: all go through ``__getitem__``), so a decision that read one can say its value."""
    klass = type(os.environ)
    orig_set = klass.__setitem__
    orig_del = klass.__delitem__
    orig_get = klass.__getitem__
    seen = trace.env_seen

    def __getitem__(self, key):
        try:
            value = orig_get(self, key)
        except KeyError:
            value = None
            raise
        finally:
            if key not in seen and self is os.environ and trace.env_on and isinstance(key, str):
                seen.add(key)
                trace.env_read(key, value, caller(2))
        return value

    def __setitem__(self, key, value):
        old = self.get(key) if self is os.environ else None
        orig_set(self, key, value)
        if self is os.environ and trace.env_on:
            trace.env(key, old, value, caller(2))

    def __delitem__(self, key):
        old = self.get(key) if self is os.environ else None
        orig_del(self, key)
        if self is os.environ and trace.env_on:
            trace.env(key, old, None, caller(2))

    klass.__setitem__ = __setitem__
    klass.__delitem__ = __delitem__
    klass.__getitem__ = __getitem__


def at(frame):
    return frame_info(frame) if frame is not None else None
