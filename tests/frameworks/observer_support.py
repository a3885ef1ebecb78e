"""Observer-effect runs in batches: one interpreter per release imports SGLang once, then forks a
fresh child per command, so a command costs its resolution, not the 8 s import. A batch serves
several simulated GPUs from that import where the simulation allows it (as ``flagtrace diff``'s
variants do: nothing it answered at import would differ under the other GPU, ``sim/gpu.py``'s
``conflict``); each child switches to its command's GPU. A GPU the import cannot stand for gets an
import of its own.

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

from flagtrace.core import gpus
from flagtrace.adapters.sglang import SGLangAdapter
from flagtrace.core.asked import Asked
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

def learn_imports(work):  # what work() imports, learnt in a throwaway child (a line MODULES <json>)
    def imported():
        before = set(sys.modules)
        work()
        return [name for name in sys.modules if name not in before]
    modules = in_child(imported)
    modules = modules if isinstance(modules, list) else []
    print("MODULES " + json.dumps(modules), flush=True)
    return modules

# work(group, index, argv, env) for every command of every group ([profile, [[argv, env]]]) whose GPU
# this process can stand for (nothing it was asked while importing would differ there), each group in
# a fork switched to its GPU that first imports ``modules`` (what resolution imports lazily, which may
# ask the GPU at import), then a fork per command: a line RESULT <group> <index> <json> each;
# UNSHARED <group> <why> for a group it cannot stand for.
def each_command(groups, modules, work):
    import _flagtrace_probe.main as probe_main
    sim = probe_main.CURRENT.simulation
    for number, (profile, commands) in enumerate(groups):
        why = None if profile == sim.profile else sim.conflict(profile)
        if why:
            print("UNSHARED %d %s" % (number, json.dumps(why)), flush=True)
            continue

        def group():
            sim.switch(profile)
            preimport(modules)
            for index, (argv, env) in enumerate(commands):
                result = in_child(lambda: work(number, index, argv, env))
                print("RESULT %d %d %s" % (number, index, json.dumps(result)), flush=True)
            return {}
        in_child(group)
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
    args = sa.prepare_server_args(argv)
    if sys.argv[2] == "vars":  # every attribute as prepare_server_args left it, on any release
        return {"fields": {k: describe(v, k)["repr"] for k, v in vars(args).items()}}
    return {"fields": effective(args)}

groups = json.loads(sys.argv[1])
modules = learn_imports(lambda: resolve(*groups[0][1][0]))
each_command(groups, modules, lambda number, index, argv, env: resolve(argv, env))
"""

TRACED = _FORK + r"""
import runpy
import _flagtrace_probe.main as probe_main

def launch(number, index, argv, env, outdir):
    probe = probe_main.CURRENT
    os.environ.update(env)
    probe.trace_path = os.path.join(outdir, "%d-%d.json" % (number, index))
    probe.trace.argv0 = ["sglang.launch_server"] + list(argv)
    sys.argv = ["sglang.launch_server"] + list(argv)
    try:
        runpy.run_module("sglang.launch_server", run_name="__main__", alter_sys=True)
    except BaseException as exc:  # the stop point ends the process; anything else is recorded
        probe.trace.raised(exc)
        probe.write()
        return {"error": "%s: %s" % (type(exc).__name__, exc)}
    return {"error": "the stop point was never reached"}

groups, modules, outdir = json.loads(sys.argv[1]), json.loads(sys.argv[2]), sys.argv[3]
import sglang.srt.server_args
each_command(groups, modules, lambda number, index, argv, env: launch(number, index, argv, env, outdir))
"""

NONDETERMINISTIC = {"random_seed", "instance_id"}  # fresh per run: SGLang's seed unless --random-seed is given, vLLM's instance id
ADDRESS = re.compile(r" at 0x[0-9a-f]+")


def _payload(groups):
    return json.dumps([[gpus.choose(gpu), [[list(args), dict(env)] for args, env in commands]]
                       for gpu, commands in groups])


def _results(result, groups):
    """{gpu: [result per command]} for each group the batch served (the first always)."""
    got, unshared = {}, set()
    for line in result.stdout.decode("utf-8", "replace").splitlines():
        if line.startswith("RESULT "):
            _, number, index, data = line.split(" ", 3)
            got.setdefault(int(number), {})[int(index)] = json.loads(data)
        elif line.startswith("UNSHARED "):
            unshared.add(int(line.split(" ", 2)[1]))
    out = {}
    for number, (gpu, commands) in enumerate(groups):
        if number not in unshared:
            assert len(got.get(number, ())) == len(commands), result.stderr.decode("utf-8", "replace")[-3000:]
            out[gpu] = [got[number][i] for i in range(len(commands))]
    assert groups[0][0] in out, result.stderr.decode("utf-8", "replace")[-3000:]
    return out


def in_imports(groups, batch):
    """{gpu: [(args, env)]} -> {gpu: [result per command]}, from as few imports as the simulation
    allows: ``batch([(gpu, commands)])`` imports once under the first GPU and serves every group it
    can stand for; the rest go to the next import."""
    out, todo = {}, list(groups.items())
    while todo:
        out.update(batch(todo))
        todo = [(gpu, commands) for gpu, commands in todo if gpu not in out]
    return out


def untraced(version, groups, timeout=1200, fields="effective"):
    """{gpu: [(args, env)]} -> ({gpu: [{"fields": {field: repr}} or {"error": text}]}, modules the
    first resolution imported). ``fields="vars"``: every attribute after prepare_server_args."""
    return untraced_batches(python_for(version), UNTRACED, ["sim.gpu", "adapters.sglang_compat"], groups, [fields], timeout)


def untraced_batches(python, script, setup, groups, args, timeout):
    """Run an untraced batch script (the groups, then ``args``) under the simulation only, as few
    times as it allows: ({gpu: results}, the modules the first resolution imported)."""
    modules = []

    def batch(todo):
        target = Target([python, "-c", "..."], python, [], "code", script, [_payload(todo), *args])
        result = run_probe(target, {"observe": False, "gpu": gpus.choose(todo[0][0]), "setup": setup}, timeout=timeout)
        modules[:] = modules or next((json.loads(line.split(" ", 1)[1]) for line in result.stdout.decode().splitlines()
                                      if line.startswith("MODULES ")), [])
        return _results(result, todo)

    return in_imports(groups, batch), modules


def traced(version, groups, modules, timeout=1200):
    """{gpu: [(args, env)]} -> {gpu: [the trace of each command (None where it wrote none)]}."""
    python = python_for(version)
    opts = Asked(adapter="sglang")
    request = SGLangAdapter().request(Target([python], python, [], "module", "sglang.launch_server",
                                             ["--model-path", LLAMA3]), opts).simulating({}).to_json()
    return run_traced(python, TRACED, request, groups, [json.dumps(modules)], timeout)


def run_traced(python, script, request, groups, args, timeout):
    """Run a batch script (``script`` gets the groups, ``args``, then the folder to write each
    command's trace ``<group>-<index>.json`` in) under the probe, as few times as the simulation
    allows (in_imports); {gpu: the traces, in order (None where none)}."""
    def batch(todo):
        with tempfile.TemporaryDirectory(prefix="flagtrace-observer-") as outdir:
            target = Target([python, "-c", "..."], python, [], "code", script, [_payload(todo), *args, outdir])
            result = run_probe(target, dict(request, gpu=gpus.choose(todo[0][0])), timeout=timeout)
            served = _results(result, todo)
            out = {}
            for number, (gpu, commands) in enumerate(todo):
                if gpu in served:
                    paths = [os.path.join(outdir, "%d-%d.json" % (number, i)) for i in range(len(commands))]
                    out[gpu] = [json.load(open(p)) if os.path.exists(p) else None for p in paths]
            return out

    return in_imports(groups, batch)


def differences(reported, bare):
    """Fields whose reported value differs from the untraced one (object addresses aside)."""
    def norm(text):
        return ADDRESS.sub(" at 0x?", text)

    keys = set(reported) | set(bare)
    return {k: (reported.get(k), bare.get(k)) for k in sorted(keys)
            if k not in NONDETERMINISTIC and norm(str(reported.get(k))) != norm(str(bare.get(k)))}


def tier(everything, ci):
    """The releases an observer test runs: ``ci`` in ``make test`` (one per age band: a batch costs minutes),
    ``everything`` with FLAGTRACE_OBSERVER=all (``make test-all``); FLAGTRACE_SGLANG=V picks one either way."""
    import os

    chosen = everything if os.environ.get("FLAGTRACE_OBSERVER") == "all" else ci
    one = os.environ.get("FLAGTRACE_SGLANG")
    return tuple(v for v in (everything if one else chosen) if one in (None, v))
