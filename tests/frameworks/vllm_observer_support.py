"""Observer-effect runs for vLLM, in batches like observer_support.py: one interpreter per release
(and per GPU it cannot stand for) imports vLLM once, then forks a fresh child per command (an env var one resolution writes
changes the next one in the same process, and log-once caches leak: a fork of a parent that never
resolved has neither).

- ``untraced``: ``vllm serve`` through vLLM's real CLI under the same hardware simulation (the probe
  with ``observe: False``), with ``EngineArgs.create_engine_config`` wrapped to print the config it
  returns, every field of every nested config by dotted path, and end the child.
- ``traced``: the probe exactly as ``flagtrace explain`` sets it up for vLLM; each child runs the CLI
  under it and writes its own trace at the stop point.
"""
import json

from flagtrace.adapters.vllm import VLLMAdapter
from flagtrace.core.asked import Asked
from flagtrace.launch.command import Target
from observer_support import _FORK, differences, run_traced, untraced_batches  # noqa: F401  (differences: tests)
from vllm_support import LLAMA31, model_info_cache, python_for

_CLI = r"""
import runpy

def serve(argv, env):
    os.environ.update(env)
    sys.argv = ["vllm", "serve"] + list(argv)
    runpy.run_module("vllm.entrypoints.cli.main", run_name="__main__", alter_sys=True)
"""

UNTRACED = _FORK + _CLI + r"""
import dataclasses
from _flagtrace_probe.values import describe

def flatten(obj, prefix, out, seen):
    for f in dataclasses.fields(obj):
        value = getattr(obj, f.name, None)
        if dataclasses.is_dataclass(value) and not isinstance(value, type) and id(value) not in seen:
            seen.add(id(value))
            out[prefix + f.name] = describe(value, f.name)["repr"]
            flatten(value, prefix + f.name + ".", out, seen)
        else:
            out[prefix + f.name] = describe(value, f.name)["repr"]
    return out

def resolve(argv, env):
    from vllm.engine import arg_utils
    create = arg_utils.EngineArgs.create_engine_config
    result = {}

    class Done(BaseException):
        pass

    def stop(self, *args, **kwargs):
        config = create(self, *args, **kwargs)
        result["fields"] = flatten(config, "", {}, {id(config)})
        raise Done()

    arg_utils.EngineArgs.create_engine_config = stop
    try:
        serve(argv, env)
    except Done:
        return result
    except BaseException as exc:
        if "fields" in result:
            return result
        return {"error": "%s: %s" % (type(exc).__name__, str(exc).splitlines()[0] if str(exc) else "")}
    return {"error": "create_engine_config was never called"}

groups = json.loads(sys.argv[1])
import vllm.entrypoints.cli.main
modules = learn_imports(lambda: resolve(*groups[0][1][0]))
each_command(groups, modules, lambda number, index, argv, env: resolve(argv, env))
"""

TRACED = _FORK + _CLI + r"""
import _flagtrace_probe.main as probe_main

def launch(number, index, argv, env, outdir):
    probe = probe_main.CURRENT
    probe.trace_path = os.path.join(outdir, "%d-%d.json" % (number, index))
    probe.trace.argv0 = ["vllm", "serve"] + list(argv)
    try:
        serve(argv, env)
    except BaseException as exc:  # the stop point ends the process; anything else is recorded
        probe.trace.raised(exc)
        probe.write()
        return {"error": "%s: %s" % (type(exc).__name__, exc)}
    return {"error": "the stop point was never reached"}

groups, modules, outdir = json.loads(sys.argv[1]), json.loads(sys.argv[2]), sys.argv[3]
import vllm.entrypoints.cli.main
each_command(groups, modules, lambda number, index, argv, env: launch(number, index, argv, env, outdir))
"""


def untraced(version, groups, timeout=1800):
    """{gpu: [(args, env)]} -> ({gpu: [{"fields": {dotted field: repr}} or {"error": text}]}, the modules
    the first resolution imported lazily: each child then costs its resolution, not those imports)."""
    with model_info_cache(version):
        return untraced_batches(python_for(version), UNTRACED, ["sim.gpu", "adapters.vllm_sim"], groups, [], timeout)


def traced(version, groups, modules=(), timeout=1800):
    """{gpu: [(args, env)]} -> {gpu: [the trace of each command (None where it wrote none)]}; ``modules``
    (untraced's) are imported before the forks."""
    python = python_for(version)
    opts = Asked(adapter="vllm")
    request = VLLMAdapter().request(Target([python], python, [], "module", "vllm.entrypoints.cli.main",
                                           ["serve", LLAMA31]), opts).simulating({}).to_json()
    with model_info_cache(version):
        return run_traced(python, TRACED, request, groups, [json.dumps(list(modules))], timeout)


def reported(trace):
    """The final config flagtrace reports: every field of the resolved VllmConfig, by dotted path."""
    primary = (trace["outcome"].get("objects") or [None])[0]
    return trace["outcome"].get("fields", {}).get(str(primary), {})
