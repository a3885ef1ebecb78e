"""SGLang 0.5.20-0.5.23, inside the target: a sealed record resolved by declarations only.

``ServerArgs`` is a msgspec Struct. ``prepare_server_args`` only parses; the first
``ServerArgs.resolve_once()`` (called by ``run_server``) runs the resolution pipeline, during
which writing a field raises: every decision is an entry ``(source, {field: value})`` added to
``server_args._resolved_overrides`` (``declare_resolution``, a post-process pass, the model hook's
``.extend``), and a field's effective value is ``resolution_result(args, field)``: the last
declaration, else the raw input, else the field's declared fallback.

The probe registers the record when ``prepare_server_args`` returns (its raw input is every
field's initial value), gives it a stash that reports each entry as it is added, and turns each
entry into a declaration plus one ``declared`` write per field (old value: what a resolving view
read just before), credited to the code that decided. It stops when the first ``resolve_once``
returns; the final values are ``resolution_result``'s, and a value that only a fallback supplied
is recorded as a ``fallback`` write at the field's declaration.
Standard library only, Python >= 3.9.
"""
import dataclasses
import functools
import linecache
import re
import sys

from ..recorder import frame_info
from .sglang_declarations import decider, noting_return, outside

RECORD = "sglang.srt.server_args"
DECLARATIONS = "sglang.srt.arg_groups.overrides"
STOP = "sglang.srt.server_args:ServerArgs.resolve_once"


class _Stash(list):
    """``_resolved_overrides`` that reports the entries added to it."""

    __slots__ = ()
    listeners = {}  # id(stash) -> callback(stash, before, frame)

    def append(self, entry):
        before = len(self)
        list.append(self, entry)
        self._added(before)

    def extend(self, entries):
        before = len(self)
        list.extend(self, entries)
        self._added(before)

    def __iadd__(self, entries):
        self.extend(entries)
        return self

    def _added(self, before):
        callback = _Stash.listeners.get(id(self))
        if callback is not None:
            callback(self, before, sys._getframe(2))


class SealedRecord:
    def __init__(self, probe):
        self.probe = probe
        self.trace = probe.trace
        self.recorder = probe.recorder
        self.klass = None
        self.fields = ()
        self.plumbing = set()
        self.overrides = None
        self.current_pass = None  # (fn, noted) while a post-process pass runs
        self.providers = []  # (source, decider) of providers that returned a declaration
        self.stopped = False

    # -- hooks ------------------------------------------------------------------
    def install(self):
        imports = self.probe.imports
        imports.on_import(RECORD, self.on_record_module)
        imports.on_import(DECLARATIONS, self.on_declarations_module)
        imports.on_import("sglang.srt.arg_groups.model_override_base", self.on_plumbing_module)

    def on_record_module(self, module):
        klass = getattr(module, "ServerArgs", None)
        fields = _record_fields(klass)
        if klass is None or not hasattr(klass, "resolve_once") or fields is None:
            version = (self.trace.request.get("adapter_info") or {}).get("version")
            self.trace.outcome = {"status": "unsupported", "version": version, "message": (
                "SGLang %s: ServerArgs is not a record with resolve_once() (a msgspec Struct from 0.5.20, "
                "a dataclass in 0.5.19) as flagtrace's adapter expects; not explaining it" % version)}
            self.probe.finish(3, hard=True)
        self.klass = klass
        self.fields = fields
        self._swap_stashes(klass)
        self.recorder.watch_class(klass)
        self.trace.values_of[klass] = self.effective_items
        self._wrap_prepare(module)
        self._wrap_resolve(klass)

    def on_plumbing_module(self, module):
        self.plumbing.add(module.__file__)

    def on_declarations_module(self, module):
        self.overrides = module
        self.plumbing.add(module.__file__)
        orig_pass = getattr(module, "run_post_process_pass", None)
        orig_provider = getattr(module, "_invoke_provider", None)
        if orig_pass is None or getattr(module, "declare_resolution", None) is None:
            self.trace.problem("adapter", "sglang adapter: declaration plumbing not found in %s" % module.__name__)
            return
        state = self

        def run_post_process_pass(server_args, fn, *args, **kwargs):
            noted = {}
            previous, state.current_pass = state.current_pass, (fn, noted)
            try:
                return orig_pass(server_args, noting_return(fn, noted), *args, **kwargs)
            finally:
                state.current_pass = previous

        def _invoke_provider(fn, server_args, hf_config):
            noted = {}
            declared = orig_provider(noting_return(fn, noted), server_args, hf_config)
            if declared:
                state.providers.append((getattr(fn, "__qualname__", None), decider(fn, noted)))
            return declared

        module.run_post_process_pass = functools.update_wrapper(run_post_process_pass, orig_pass)
        if orig_provider is not None:
            module._invoke_provider = functools.update_wrapper(_invoke_provider, orig_provider)

    def _swap_stashes(self, klass):
        """Every stash the record is given (``pipeline.py`` copies it) becomes a reporting one."""
        orig = klass.__setattr__
        state = self

        def __setattr__(obj, name, value, _orig=orig):
            if name == "_resolved_overrides" and type(value) is list:
                value = _Stash(value)
                _Stash.listeners[id(value)] = functools.partial(state.on_entries, obj)
            return _orig(obj, name, value)

        klass.__setattr__ = functools.update_wrapper(__setattr__, orig)

    def _wrap_prepare(self, module):
        orig = getattr(module, "prepare_server_args", None)
        if orig is None:
            return
        state = self

        def prepare_server_args(*args, **kwargs):
            record = orig(*args, **kwargs)
            if isinstance(record, state.klass):
                state.register(record, sys._getframe(1))
            return record

        module.prepare_server_args = functools.update_wrapper(prepare_server_args, orig)

    def _wrap_resolve(self, klass):
        orig = klass.resolve_once
        state = self
        probe = self.probe

        def resolve_once(record, *args, **kwargs):
            if state.stopped or getattr(record, "_resolution_finished", False):
                return orig(record, *args, **kwargs)
            state.register(record, sys._getframe(1))
            state.recorder.resolving += 1
            try:
                result = orig(record, *args, **kwargs)
            except BaseException:
                state.record_fallbacks(record)  # what the failed record would have read
                raise
            finally:
                state.recorder.resolving -= 1
            state.stopped = True
            state.record_fallbacks(record)
            probe.trace.stopped(STOP + " (returned)", [record], {}, sys._getframe(1))
            probe.finish(0, hard=True)
            return result

        klass.resolve_once = functools.update_wrapper(resolve_once, orig)
        probe.request.setdefault("stop_at", []).append(STOP + " (on return)")

    # -- the record ---------------------------------------------------------------
    def register(self, record, frame):
        watched = self.recorder.by_id.get(id(record))
        if watched is not None:
            return watched
        watched = self.recorder.register(record, None, "")
        self.trace.construct(watched, (), {}, frame)
        for name in self.fields:
            self.recorder.on_initial(watched, name, getattr(record, name, None))
        for hook in list(self.probe.__dict__.get("after_register", ())):  # a wrapper's writes made before it
            hook(record)  # existed (probe/adapters/dynamo.py: Dynamo's on the parsed Namespace)
        stash = getattr(record, "_resolved_overrides", None)
        if stash:  # declared before resolution (a launcher stage): nothing to compare with
            self.on_entries(record, stash, 0, frame)
        return watched

    def _before(self, record, stash, index, field):
        """What a resolving view read for ``field`` before entry ``index`` was added."""
        for _source, declared in reversed(list.__getitem__(stash, slice(0, index))):
            if field in declared:
                return declared[field]
        raw = record.__dict__.get("_raw_input")
        if raw is not None and field in raw:
            return raw[field]
        return getattr(record, field, None)

    def on_entries(self, record, stash, before, frame):
        watched = self.recorder.by_id.get(id(record))
        if watched is None or not self.recorder.enabled:
            return
        try:
            slot = outside(frame, self.plumbing)
            for index in range(before, len(stash)):
                self._entry(record, watched, stash, index, slot)
        except Exception as exc:  # the probe's failure must not become the target's
            self.recorder.failed("recording a declaration", exc)

    def _entry(self, record, watched, stash, index, slot):
        source, declared = list.__getitem__(stash, index)
        found = None
        if self.current_pass is not None and getattr(self.current_pass[0], "__qualname__", None) == source:
            fn, noted = self.current_pass
            found = decider(fn, noted)
        else:
            for i, (name, provider) in enumerate(self.providers):
                if name == source:
                    found = provider
                    del self.providers[i]
                    break
        if found is None and slot is not None and not source.startswith("MODEL_OVERRIDES["):
            found = frame_info(slot)  # declared directly by the code that decided
        seq = self.trace.declaration(source, declared, found, slot)
        trace = self.trace
        for field, value in dict(declared).items():
            old = self._before(record, stash, index, field)
            trace.declaring = {field: seq}
            try:
                self.recorder.on_write(watched, field, old, value, slot, "declared")
            finally:
                trace.declaring = None

    def effective_items(self, record):
        """The fields as the runtime will see them: ``resolution_result``, the last declaration of
        each (else its input, else its fallback). Not ``resolved_dict``: it reports a deprecated
        field as derived from its successor (0.5.23: ``enable_dp_attention`` is ``attn_dp_size > 1``
        there, for ``/server_info``), while resolution left the field as declared (False), and a
        declared override of an explicit field must show as one."""
        result = getattr(self.overrides, "resolution_result", None)
        if result is None:
            return [(name, getattr(record, name, None)) for name in self.fields]
        return [(name, result(record, name)) for name in self.fields]

    def record_fallbacks(self, record):
        """A field no one declared, given as None, that ``resolution_result`` fills from its
        ``Arg(fallback=...)``: recorded as such, at the field's declaration."""
        arg_utils = sys.modules.get("sglang.srt.arg_groups.arg_utils")
        watched = self.recorder.by_id.get(id(record))
        if arg_utils is None or watched is None or not hasattr(arg_utils, "fallbacks_of"):
            return
        try:
            fallbacks = arg_utils.fallbacks_of(type(record))
            stash = record.__dict__.get("_resolved_overrides") or ()
            declared = {f for _source, d in stash for f in d}
            namespaces = getattr(type(record), "_NAMESPACES", ()) or ()
            for field, value in fallbacks.items():
                if field in declared or getattr(record, field, None) is not None:
                    continue
                owner = next((ns for ns in namespaces if field in getattr(ns, "__struct_fields__", ())), None)
                self.trace.fallback(watched, field, value, _field_site(owner, field))
        except Exception as exc:
            self.recorder.failed("recording fallbacks", exc)


def _record_fields(klass):
    """The record's field names: a msgspec Struct's (0.5.20+) or a dataclass's (0.5.19)."""
    if klass is None:
        return None
    if hasattr(klass, "__struct_fields__"):
        return tuple(klass.__struct_fields__)
    if dataclasses.is_dataclass(klass):
        return tuple(f.name for f in dataclasses.fields(klass))
    return None


def _field_site(namespace, field):
    """Where a namespace Struct declares ``field`` (``fields/schedule.py:160``)."""
    module = sys.modules.get(getattr(namespace, "__module__", None) or "")
    path = getattr(module, "__file__", None)
    if not path:
        return None
    pattern = re.compile(r"^\s+%s\s*:" % re.escape(field))
    lines = linecache.getlines(path)
    for number, text in enumerate(lines, 1):
        if pattern.match(text):
            # the ``fallback=`` line of its Arg(...), if it is near (before the next field)
            for offset, more in enumerate(lines[number:number + 20], 1):
                if re.match(r"^\s+\w+\s*:\s*A\[", more):
                    break
                if "fallback" in more:
                    number, text = number + offset, more
                    break
            return {"func": "%s.%s" % (namespace.__qualname__, field), "file": path, "line": number,
                    "src": text.strip()}
    return None


def setup(probe):
    SealedRecord(probe).install()
