"""Observer-effect runs in batches: one interpreter per (release, GPU) imports SGLang once, then
forks a fresh child per command, so a command costs its resolution, not the 8 s import.

- ``untraced``: SGLang's own resolution without flagtrace's recording, under the same hardware
  simulation (the probe with ``observe: False``); each child prints its effective config.
- ``traced``: the probe exactly as ``flagtrace explain`` sets it up (the SGLang adapter's request,
  its hooks installed when SGLang is imported); each child runs ``sglang.launch_server`` under it
  and writes its own trace at the stop point.

A child resolves as a fresh process would: nothing is left by an earlier resolution (SGLang's
caches, its os.environ writes) because every resolution runs in a fork of a parent that never
resolved. The parent first imports what resolution imports lazily (learnt from a throwaway
child), which is what makes a child cheap. tests/frameworks/test_sglang_observer_matrix.py checks
the batches against the real ``flagtrace explain`` on shared commands.
"""
import json
import os
import re
import tempfile

from flagtrace import gpus
from flagtrace.adapters.sglang import SGLangAdapter
from flagtrace.launch.asked import Asked
from flagtrace.launch.command import Target
from flagtrace.launch.local import run_probe
from sglang_support import LLAMA3, python_for

# The effective config as the runtime gets it: 0.4.0-0.5.18 the fields after prepare_server_args
# (every attribute, as flagtrace reports them); 0.5.19+ resolution_result per field after
# resolve_once() (not resolved_dict(), which reports enable_dp_attention as attn_dp_size > 1 for
# /server_info on 0.5.23 while resolution leaves the field as declared).
_FORK = r"""
import json, os, sys

def in_child(work):  # work() in a fork of this interpreter; its JSON-able result
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        try:
            result = work()
        except BaseException as exc:
            result = {"error": "%s: %s" % (type(exc).__name__, exc)}
        with os.fdopen(write, "w") as fh:
            fh.write(json.dumps(result))
        os._exit(0)
    os.close(write)
    with os.fdopen(read) as fh:
        data = fh.read()
    os.waitpid(pid, 0)
    return json.loads(data or '{"error": "the child died"}')

def preimport(names):
    for name in names:
        try:
            __import__(name)
        except BaseException:
            pass
"""

UNTRACED = _FORK + r"""
import dataclasses
from _flagtrace_probe.values import describe
import sglang.srt.server_args as sa


def effective(args):
    if not hasattr(type(args), "resolve_once"):
        return {k: describe(v, k)["repr"] for k, v in vars(args).items()}
    args.resolve_once()
    from sglang.srt.arg_groups.overrides import resolution_result
    out = {}
    names = getattr(type(args), "__struct_fields__", None) or [f.name for f in dataclasses.fields(args)]
    for name in names:
        out[name] = describe(resolution_result(args, name), name)["repr"]
    return out

def resolve(argv, env):
    os.environ.update(env)
    return {"fields": effective(sa.prepare_server_args(argv))}

def modules_resolution_imports(argv, env):
    before = set(sys.modules)
    resolve(argv, env)
    return [name for name in sys.modules if name not in before]

commands = json.loads(sys.argv[1])
modules = in_child(lambda: modules_resolution_imports(*commands[0]))
print("MODULES " + json.dumps(modules), flush=True)
preimport(modules)
for index, (argv, env) in enumerate(commands):
    print("RESULT %d %s" % (index, json.dumps(in_child(lambda: resolve(argv, env)))), flush=True)
"""

TRACED = _FORK + r"""
import runpy
import _flagtrace_probe.main as probe_main

def launch(index, argv, env, outdir):
    probe = probe_main.CURRENT
    os.environ.update(env)
    probe.trace_path = os.path.join(outdir, "%d.json" % index)
    probe.trace.argv0 = ["sglang.launch_server"] + list(argv)
    sys.argv = ["sglang.launch_server"] + list(argv)
    try:
        runpy.run_module("sglang.launch_server", run_name="__main__", alter_sys=True)
    except BaseException as exc:  # the stop point ends the process; anything else is recorded
        probe.trace.raised(exc)
        probe.write()
        return {"error": "%s: %s" % (type(exc).__name__, exc)}
    return {"error": "the stop point was never reached"}

commands, modules, outdir = json.loads(sys.argv[1]), json.loads(sys.argv[2]), sys.argv[3]
import sglang.srt.server_args
preimport(modules)
for index, (argv, env) in enumerate(commands):
    print("RESULT %d %s" % (index, json.dumps(in_child(lambda: launch(index, argv, env, outdir)))), flush=True)
"""

NONDETERMINISTIC = {"random_seed", "instance_id"}  # fresh per run: SGLang's seed unless --random-seed is given, vLLM's instance id
ADDRESS = re.compile(r" at 0x[0-9a-f]+")


def _results(result, count):
    out = {}
    for line in result.stdout.decode("utf-8", "replace").splitlines():
        if line.startswith("RESULT "):
            _, index, data = line.split(" ", 2)
            out[int(index)] = json.loads(data)
    assert len(out) == count, result.stderr.decode("utf-8", "replace")[-3000:]
    return [out[i] for i in range(count)]


def _payload(commands):
    return json.dumps([[list(args), dict(env)] for args, env in commands])


def untraced(version, gpu, commands, timeout=1200):
    """[(args, env)] -> ([{"fields": {field: repr}} or {"error": text}], modules resolution imported)."""
    python = python_for(version)
    target = Target([python, "-c", "..."], python, [], "code", UNTRACED, [_payload(commands)])
    result = run_probe(target, {"observe": False, "gpu": gpus.choose(gpu), "setup": ["sim.gpu", "adapters.sglang_compat"]},
                       timeout=timeout)
    modules = next((json.loads(line.split(" ", 1)[1]) for line in result.stdout.decode().splitlines()
                    if line.startswith("MODULES ")), [])
    return _results(result, len(commands)), modules


def traced(version, gpu, commands, modules, timeout=1200):
    """[(args, env)] -> the trace of each command (None where it wrote none), in order."""
    python = python_for(version)
    opts = Asked(adapter="sglang")
    request = SGLangAdapter().request(Target([python], python, [], "module", "sglang.launch_server",
                                             ["--model-path", LLAMA3]), opts)
    request.update(gpu=gpus.choose(gpu), setup=["sim.gpu"] + request["setup"])
    return run_traced(python, TRACED, request, commands, [json.dumps(modules)], timeout)


def run_traced(python, script, request, commands, args, timeout):
    """Run a batch script (``script`` gets the commands, ``args``, then the folder to write each
    command's trace ``<index>.json`` in) under the probe; the traces, in order (None where none)."""
    with tempfile.TemporaryDirectory(prefix="flagtrace-observer-") as outdir:
        target = Target([python, "-c", "..."], python, [], "code", script, [_payload(commands), *args, outdir])
        result = run_probe(target, request, timeout=timeout)
        _results(result, len(commands))
        traces = []
        for index in range(len(commands)):
            path = os.path.join(outdir, "%d.json" % index)
            traces.append(json.load(open(path)) if os.path.exists(path) else None)
        return traces


def differences(reported, bare):
    """Fields whose reported value differs from the untraced one (object addresses aside)."""
    def norm(text):
        return ADDRESS.sub(" at 0x?", text)

    keys = set(reported) | set(bare)
    return {k: (reported.get(k), bare.get(k)) for k in sorted(keys)
            if k not in NONDETERMINISTIC and norm(str(reported.get(k))) != norm(str(bare.get(k)))}
