"""NVIDIA Dynamo's workers (``python -m dynamo.vllm``), inside the target. Dynamo parses its own flags,
hands the rest to the framework's parser and builds the framework's engine arguments itself, so the
framework's adapter follows it as it is and stops where it stops (vLLM: ``create_engine_config``). On
the way Dynamo reaches for the network, which a dry run must not do; each step is stood in for and the
stand-in recorded in the trace (``adapter.stand_ins``) when it is used:

* ``create_runtime`` (dynamo.common.utils.runtime) builds the DistributedRuntime with the in-memory
  discovery backend: etcd and the Kubernetes API are not contacted (the default, etcd, retries
  localhost:2379 without end), and NATS request/event planes become their local ones (tcp, zmq).
  Dynamo's own config keeps what was asked (``discovery_backend`` is reported as parsed).
* ``fetch_model`` (dynamo.common.model_fetch) downloads nothing: it returns the name it is given (a
  hub id has already been replaced by a folder holding the model's config, as for any command).

Dynamo's SGLang worker (``dynamo.sglang.args.parse_args``) sets SGLang's flags on the argparse Namespace its
parser returned (``incremental_streaming_output = True``, the first of a ``--served-model-name`` list, ...)
before ``ServerArgs.from_cli_args`` copies them: no config object exists yet to watch. The writes made by
Dynamo's own code on a Namespace are kept and, when a ServerArgs is built from that Namespace, replayed on it:
the field's initial value is what SGLang's parser gave, followed by Dynamo's write at its function and
file:line (``how: "set"``, ``via: "argparse.Namespace"``). Recorded, never changed: the values are Dynamo's.

``--release ai-dynamo==V`` runs ``python -m dynamo.sglang`` on the SGLang overlay its pin file names for that
module (``#@on sglang==0.5.21 dynamo.sglang``); the release's interpreter names the swap in
FLAGTRACE_WRAPPER_BASES (``MODULE=DEFAULT_OVERLAY=ITS_OVERLAY``) and, the probe's argv not naming the module,
the swap is made here on sys.path before anything is imported (and in PYTHONPATH, for the worker's children).

Nothing is stood in for under ``flagtrace run --live``. Standard library only, Python >= 3.9.
"""
import functools
import os
import sys

from .release import installed_version

DISTRIBUTION = "ai-dynamo"
WORKERS = ("dynamo.vllm", "dynamo.sglang")  # the worker packages (``python -m``)
RUNTIME = "dynamo.common.utils.runtime"
FETCH = "dynamo.common.model_fetch"
# Modules that bind the functions by ``from ... import`` (rebound where they were imported before the probe).
CONSUMERS = ("dynamo.vllm.main", "dynamo.vllm.args", "dynamo.sglang.main", "dynamo.sglang.args")
LOCAL_PLANES = {"request_plane": ("nats", "tcp"), "event_plane": ("nats", "zmq")}


NAMESPACE_WRITERS = {"dynamo.sglang": "dynamo.sglang"}  # worker -> the package whose Namespace writes count
SERVER_ARGS = ("sglang.srt.server_args", "ServerArgs")
BASES_ENV = "FLAGTRACE_WRAPPER_BASES"


def setup(probe):
    _swap_base(probe)
    if probe.request.get("live"):
        return
    for worker in WORKERS:
        probe.imports.on_import(worker, functools.partial(_entry, probe, worker))
    probe.imports.on_import(RUNTIME, functools.partial(_stand_in, probe, "create_runtime", _runtime))
    probe.imports.on_import(FETCH, functools.partial(_stand_in, probe, "fetch_model", _fetch))
    for name in CONSUMERS:
        probe.imports.on_import(name, _rebind)


def _info(probe):
    return probe.trace.request.setdefault("adapter_info", {})


def _note(probe, text):
    info = _info(probe)
    if text not in info.setdefault("stand_ins", []):
        info["stand_ins"].append(text)


def _swap_base(probe):
    """``python -m MODULE`` of a wrapper release whose pin file sits MODULE on another overlay: that overlay
    in place of the default one on sys.path and PYTHONPATH (FLAGTRACE_WRAPPER_BASES, written by the release's
    interpreter)."""
    target = probe.request.get("target") if probe.request.get("mode") == "module" else None
    for item in os.environ.get(BASES_ENV, "").split():
        module, _, paths = item.partition("=")
        default, _, other = paths.partition("=")
        if not target or not other or not (target == module or target.startswith(module + ".")):
            continue
        norm = os.path.normpath(default)
        swapped = [os.path.normpath(other) if os.path.normpath(p) == norm else p for p in sys.path]
        parts = os.environ.get("PYTHONPATH", "").split(os.pathsep)
        if swapped != sys.path:
            sys.path[:] = swapped
            os.environ["PYTHONPATH"] = os.pathsep.join(other if os.path.normpath(p) == norm else p for p in parts)
        # noted when the worker is imported (the framework's set-up, after this one, writes adapter_info anew)
        probe.__dict__["dynamo_base"] = "python -m %s on %s, not %s (the wrapper release's pin file: #@on ... %s)" % (
            module, os.path.normpath(other), norm, module)


def _entry(probe, worker, module):
    """The worker's package: named in the adapter's description (``... via dynamo.vllm (ai-dynamo 1.6.1)``)."""
    info = _info(probe)
    if info.get("wrapper"):
        return
    if probe.__dict__.get("dynamo_base"):
        _note(probe, probe.__dict__["dynamo_base"])
    if worker in NAMESPACE_WRITERS:
        _watch_namespaces(probe, NAMESPACE_WRITERS[worker])
    version = installed_version(DISTRIBUTION) or getattr(module, "__version__", None) or "?"
    info["wrapper"] = {"module": worker, "distribution": DISTRIBUTION, "version": version}
    if info.get("describe"):
        info["describe"] += " via %s (%s %s)" % (worker, DISTRIBUTION, version)


def _stand_in(probe, name, make, module):
    original = module.__dict__.get(name)
    if original is None or getattr(original, "_flagtrace_stand_in", False):
        return
    replacement = functools.wraps(original)(make(probe, original, "%s.%s" % (module.__name__, name)))
    replacement._flagtrace_stand_in = True
    setattr(module, name, replacement)


def _rebind(module):
    """A consumer imported before the probe holds the original: give it the stand-in."""
    for origin, name in ((RUNTIME, "create_runtime"), (FETCH, "fetch_model")):
        held, current = module.__dict__.get(name), getattr(sys.modules.get(origin), name, None)
        if held is not None and getattr(current, "_flagtrace_stand_in", False) and current.__wrapped__ is held:
            setattr(module, name, current)


def _runtime(probe, original, qualname):
    def create_runtime(discovery_backend, request_plane, *args, **kwargs):
        asked = {"discovery_backend": discovery_backend, "request_plane": request_plane}
        names = ("event_plane", "use_kv_events", "response_plane")
        asked.update(zip(names, args))
        asked.update(kwargs)
        used = dict(asked, discovery_backend="mem")
        for key, (remote, local) in LOCAL_PLANES.items():
            if used.get(key) == remote:
                used[key] = local
        changed = ", ".join("%s %r -> %r" % (k, asked[k], used[k]) for k in sorted(used) if used[k] != asked.get(k))
        _note(probe, "%s (no cluster contacted: %s; Dynamo's config keeps what was asked)"
              % (qualname, changed or "the in-memory discovery backend was asked for"))
        return original(**used)
    return create_runtime


def _fetch(probe, original, qualname):
    async def fetch_model(remote_name, *args, **kwargs):
        _note(probe, "%s (nothing downloaded: %r returned as given)" % (qualname, remote_name))
        return remote_name
    return fetch_model


def _watch_namespaces(probe, package):
    """Keep the writes ``package``'s own code makes on argparse Namespaces, and replay them on the ServerArgs
    built from one (``ServerArgs.from_cli_args``)."""
    import argparse

    from ..recorder import frame_info, outer_frames

    if getattr(argparse.Namespace.__setattr__, "_flagtrace_dynamo", False):
        return
    folder = os.sep + package.replace(".", os.sep) + os.sep
    writes = {}  # id(namespace) -> (namespace, [(name, old, new, at, stack)])
    original = argparse.Namespace.__setattr__

    def __setattr__(self, name, value):
        caller = sys._getframe(1)
        if folder in caller.f_code.co_filename and caller.f_code.co_name != "__init__":
            kept = writes.setdefault(id(self), (self, []))[1]
            kept.append((name, self.__dict__.get(name, _UNSET), value, frame_info(caller),
                         outer_frames(caller.f_back, 6)))
        original(self, name, value)
    __setattr__._flagtrace_dynamo = True
    argparse.Namespace.__setattr__ = __setattr__
    probe.imports.on_import(SERVER_ARGS[0], functools.partial(_replay_on, probe, writes))


_UNSET = object()


def _replay_on(probe, writes, module):
    klass = getattr(module, SERVER_ARGS[1], None)
    held = getattr(klass, "__dict__", {}).get("from_cli_args")
    if not isinstance(held, classmethod) or getattr(held.__func__, "_flagtrace_dynamo", False):
        return
    func = held.__func__

    def from_cli_args(cls, args, *rest, **kw):
        built = func(cls, args, *rest, **kw)
        kept = writes.pop(id(args), (None, []))[1]
        if kept and probe.recorder.by_id.get(id(built)) is not None:  # registered by its constructor
            _replay(probe, built, kept)
        elif kept:  # a record registered later (SGLang 0.5.20+: at resolve_once; probe/adapters/sglang_sealed.py)
            pending[id(built)] = (built, kept)
            hooks = probe.__dict__.setdefault("after_register", [])
            if after_register not in hooks:
                hooks.append(after_register)
        return built

    def after_register(record):
        held = pending.pop(id(record), None)
        if held is not None:
            _replay(probe, record, held[1])
    pending = {}
    from_cli_args = functools.wraps(func)(from_cli_args)
    from_cli_args._flagtrace_dynamo = True
    setattr(klass, "from_cli_args", classmethod(from_cli_args))


def _replay(probe, built, kept):
    from ..values import describe

    trace, watched = probe.trace, probe.recorder.by_id.get(id(built))
    if watched is None:
        return
    oid = watched.root.oid
    inits = {e["field"]: e for e in trace.events
             if e.get("kind") == "write" and e.get("obj") == oid and e.get("how") == "init"}
    fields = set(inits)
    for name, old, new, at, stack in kept:
        if name not in fields:
            continue  # not a ServerArgs field (a Dynamo-only attribute of the Namespace)
        init = inits.pop(name, None)  # the first write's old value is the initial one
        if init is not None and old is not _UNSET:
            init["new"] = describe(old, name)  # the initial value: what SGLang's parser gave
        event = {"kind": "write", "seq": trace._next(), "obj": oid, "field": name, "how": "set",
                 "via": "argparse.Namespace", "new": describe(new, name), "at": at, "stack": stack}
        if old is not _UNSET:
            event["old"] = describe(old, name)
        trace._add(event)
        trace.files.add(at["file"])
