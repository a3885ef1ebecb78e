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

Nothing is stood in for under ``flagtrace run --live``. Standard library only, Python >= 3.9.
"""
import functools
import sys

from .release import installed_version

DISTRIBUTION = "ai-dynamo"
WORKERS = ("dynamo.vllm", "dynamo.sglang")  # the worker packages (``python -m``)
RUNTIME = "dynamo.common.utils.runtime"
FETCH = "dynamo.common.model_fetch"
# Modules that bind the functions by ``from ... import`` (rebound where they were imported before the probe).
CONSUMERS = ("dynamo.vllm.main", "dynamo.vllm.args", "dynamo.sglang.main", "dynamo.sglang.args")
LOCAL_PLANES = {"request_plane": ("nats", "tcp"), "event_plane": ("nats", "zmq")}


def setup(probe):
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


def _entry(probe, worker, module):
    """The worker's package: named in the adapter's description (``... via dynamo.vllm (ai-dynamo 1.6.1)``)."""
    info = _info(probe)
    if info.get("wrapper"):
        return
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
