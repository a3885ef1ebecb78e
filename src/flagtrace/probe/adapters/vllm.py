"""vLLM, inside the target: watch the engine arguments and every config class, stop when the API
server's ``EngineArgs.create_engine_config()`` returns (before an engine-core process starts or a
weight file is opened), and report every field under its dotted ``VllmConfig`` path.

Releases 0.11 - 0.34: ``EngineArgs`` (a dataclass) is filled from argparse, adjusted in place, then
copied into pydantic config dataclasses (``ModelConfig``, ``SchedulerConfig``, ...) whose
``__post_init__`` resolve further, and ``VllmConfig.__post_init__`` last. Each config is watched
from its construction; when resolution ends they are mounted at the field of ``VllmConfig`` that
holds them, and ``EngineArgs`` writes are mounted at the field each attribute is copied into.
Standard library only, Python >= 3.9.
"""
import dataclasses
import functools
import importlib.util
import json
import sys

from ..recorder import field_items
from ..values import describe
from . import vllm_fields

FIRST, LAST = (0, 11, 0), (0, 34, 0)
TESTED = ["0.11.2", "0.15.1", "0.25.1", "0.33.0", "0.34.0"]
ARG_UTILS = "vllm.engine.arg_utils"
CONFIG_PACKAGE = "vllm.config"
CREATE = "create_engine_config"
# vLLM reads the GPU through its own copy of pynvml.
PYNVML_MODULES = ("vllm.third_party.pynvml",)
# Capability queries vLLM asks its compiled ops (torch.ops._C), by compute capability (major*10+minor),
# answered under simulation when the real extension could not load. The rules are the ops' C++ ones.
EXTENSIONS = ("vllm._C", "vllm._C_stable_libtorch")  # the ones that register torch.ops._C
CAPABILITY_OPS = {
    "cutlass_scaled_mm_supports_fp8": lambda cap: cap >= 89,
    "cutlass_scaled_mm_supports_block_fp8": lambda cap: cap >= 90,
    "cutlass_scaled_mm_supports_fp4": lambda cap: cap >= 100,
    "mxfp4_experts_quant_supported": lambda cap: 100 <= cap < 110,
    "cutlass_group_gemm_supported": lambda cap: 90 <= cap < 110,
}


def parse_version(text):
    parts = []
    for piece in text.split(".")[:3]:
        digits = "".join(ch for ch in piece if ch.isdigit())
        parts.append(int(digits) if digits else 0)
    return tuple(parts)


def installed_version():
    try:
        from importlib import metadata

        return metadata.version("vllm")
    except Exception:
        return None


def supported_text():
    return "%s-%s; tested: %s" % (".".join(map(str, FIRST)), ".".join(map(str, LAST)), ", ".join(TESTED))


def setup(probe):
    version = installed_version()
    trace = probe.trace
    if version is None or importlib.util.find_spec("vllm") is None:
        trace.outcome = {"status": "no_framework", "message": "vLLM is not installed for %s" % sys.executable}
        probe.finish(3)
    supported = FIRST <= parse_version(version) <= LAST
    info = {"name": "vllm", "version": version,
            "describe": "vllm %s (%s)" % (version, "EngineArgs -> VllmConfig" if supported else "unsupported")}
    trace.request["adapter_info"] = info
    if not supported:
        trace.outcome = {"status": "unsupported", "version": version, "message": (
            "vLLM %s is outside the releases flagtrace's vLLM adapter supports (%s); generic mode still "
            "works: --adapter generic --watch vllm.engine.arg_utils:EngineArgs --stop-at MODULE:FUNCTION"
            % (version, supported_text()))}
        probe.finish(3)
    probe.recorder.discover_copies = True  # vLLM deep-copies configs before resolving them further
    state = Resolution(probe)
    probe.imports.on_import(CONFIG_PACKAGE, state.watch_configs)
    probe.imports.on_import(ARG_UTILS, state.hook_engine_args)
    simulation = getattr(probe, "simulation", None)
    if simulation is not None:
        for name in PYNVML_MODULES:
            simulation.patch_pynvml_module(name)
        probe.imports.on_import("torch", functools.partial(_compiled_ops, probe))


def _compiled_ops(probe, torch):
    """``torch.ops._C`` when vLLM's extension could not load: the capability queries answer from
    the simulated GPU; a name vLLM tests with ``hasattr`` stays absent (it picks kernels by it);
    any other name (a module-level ``torch.ops._C.rotary_embedding.default``) is a placeholder op."""
    import linecache

    from ..sim.standins import _Stub

    namespace = torch.ops._C
    base = type(namespace)

    class CompiledOps(base):
        def __getattr__(self, name):
            try:
                return base.__getattr__(self, name)
            except AttributeError:
                if name.startswith("__") or not _extension_missing():
                    raise
            caller = sys._getframe(1)
            if name in CAPABILITY_OPS:
                def op(capability, _name=name, _rule=CAPABILITY_OPS[name]):
                    result = bool(_rule(int(capability)))
                    probe.trace.hardware("torch.ops._C.%s(%s)" % (_name, capability), result, sys._getframe(2))
                    return result

                return op
            if "hasattr(" in linecache.getline(caller.f_code.co_filename, caller.f_lineno):
                raise AttributeError(name)
            probe.simulation.standins.note("torch.ops._C.%s" % name, "placeholder op: vLLM's extension is stood in")
            return _Stub("torch.ops._C." + name)

    try:
        namespace.__class__ = CompiledOps
    except TypeError as exc:
        probe.recorder.failed("simulating torch.ops._C", exc)


def _extension_missing():
    return any(getattr(sys.modules.get(name), "__flagtrace_stand_in__", False) for name in EXTENSIONS)


class Resolution:
    def __init__(self, probe):
        self.probe = probe
        self.trace = probe.trace
        self.recorder = probe.recorder
        self.config_module = None
        self.arg_utils = None
        self.depth = 0

    # -- watching --------------------------------------------------------------------
    def watch_configs(self, module):
        self.config_module = module
        for name in dir(module):
            klass = getattr(module, name, None)
            if isinstance(klass, type) and dataclasses.is_dataclass(klass) \
                    and klass.__module__.startswith(CONFIG_PACKAGE + "."):
                self.recorder.watch_root_class(klass)

    def hook_engine_args(self, module):
        self.arg_utils = module
        base = module.EngineArgs
        for klass in [base] + [v for v in vars(module).values()
                               if isinstance(v, type) and issubclass(v, base) and v is not base]:
            self.recorder.watch_root_class(klass)
        self.trace.request.setdefault("watch", []).append(ARG_UTILS + ":EngineArgs")
        self.trace.request.setdefault("stop_at", []).append(ARG_UTILS + ":EngineArgs.%s (on return)" % CREATE)
        func = base.__dict__[CREATE]
        resolution = self

        @functools.wraps(func)
        def create_engine_config(engine_args, *args, **kwargs):
            resolution.depth += 1
            try:
                config = func(engine_args, *args, **kwargs)
            except BaseException:
                resolution.depth -= 1
                if resolution.depth == 0:
                    resolution.mount(None, engine_args)
                raise
            resolution.depth -= 1
            if resolution.depth:
                return config
            resolution.mount(config, engine_args)
            resolution.trace.stopped("%s:EngineArgs.%s (returned)" % (ARG_UTILS, CREATE), [config], {},
                                     sys._getframe(1))
            resolution.probe.finish(0, hard=True)

        setattr(base, CREATE, create_engine_config)

    # -- naming ------------------------------------------------------------------------
    def mount(self, config, engine_args):
        """Name every watched object by its path under ``VllmConfig`` (see trace.mount)."""
        try:
            self._mount(config, engine_args)
        except Exception as exc:  # the probe's failure must not become the target's
            self.recorder.failed("naming vLLM fields", exc)

    def _mount(self, config, engine_args):
        rec = self.recorder
        vllm_config_class = getattr(self.config_module, "VllmConfig", None)
        holders = vllm_fields.config_fields(vllm_config_class) if vllm_config_class else {}
        ea = rec.by_id.get(id(engine_args))
        into = rec.by_id.get(id(config)) if config is not None else ea
        if into is None:
            return
        mounted = {into.oid}
        if config is not None:  # everything reachable from the resolved config, breadth first
            todo = [(config, "")]
            while todo:
                obj, prefix = todo.pop(0)
                for name, value in field_items(obj):
                    w = rec.by_id.get(id(value))
                    if w is None or w.root is not w or w.oid in mounted:
                        continue
                    path = prefix + name
                    self.trace.mount(w.oid, into.oid, prefix=path)
                    mounted.add(w.oid)
                    todo.append((value, path + "."))
        else:  # resolution failed before VllmConfig existed: name each config by its class
            for w in rec.objects:
                if w.root is w and w.oid not in mounted and type(w.obj).__name__ in holders \
                        and not w.klass.__module__.startswith(ARG_UTILS):
                    self.trace.mount(w.oid, into.oid, prefix=holders[type(w.obj).__name__])
                    mounted.add(w.oid)
        heads = self.engine_arg_paths(holders)
        if ea is not None and heads:
            self.trace.mount(ea.oid, into.oid, heads=heads)
        self.trace.primary = into.oid
        self.name_requests(heads, set(holders.values()))

    def engine_arg_paths(self, holders):
        source_file = getattr(self.arg_utils, "__file__", None)
        if not source_file:
            return {}
        self.trace.files.add(source_file)
        with open(source_file, encoding="utf-8") as fh:
            source = fh.read()
        groups = {}
        for parse in self.trace.parses:
            for action in parse.get("actions", []):
                if action.get("group"):
                    groups[action["dest"]] = action["group"]
        return vllm_fields.engine_arg_paths(source, holders, groups)

    def name_requests(self, heads, config_fields):
        """Each explicit option names the config field it becomes; a JSON option
        (``--compilation-config '{"mode": 3}'``, ``-cc.mode=3``) requests each nested key
        instead of the whole config."""
        argv = [a for a in self.trace.argv0[1:] if isinstance(a, str)]
        for parse in self.trace.parses:
            named = []
            for ex in parse.get("explicit", []):
                path = heads.get(ex["dest"]) or (ex["dest"] if ex["dest"] in config_fields else None)
                if path is None:
                    named.append(ex)
                    continue
                ex["field"] = path
                value = _option_value(parse.get("args") or [], ex)
                keys = _json_keys(value)
                if not keys:
                    named.append(ex)
                for key, leaf in keys:
                    typed = next((a.split("=", 1)[0] for a in argv
                                  if a.split("=", 1)[0].replace("_", "-") in
                                  ("%s.%s" % (opt, key) for opt in _option_names(parse, ex))), ex["typed"])
                    named.append(dict(ex, field=path + "." + key, typed=typed, value=describe(leaf, key)))
            parse["explicit"] = named


def _option_names(parse, ex):
    for action in parse.get("actions", []):
        if action["dest"] == ex["dest"]:
            return action["options"]
    return [ex["typed"]]


def _option_value(args, ex):
    index = ex.get("index")
    if index is None or index >= len(args):
        return None
    token = args[index]
    if ex.get("inline"):
        return token.split("=", 1)[1]
    return args[index + 1] if index + 1 < len(args) else None


def _json_keys(text, prefix=""):
    """Dotted keys and leaf values of a JSON object option value."""
    if isinstance(text, str):
        if not text.lstrip().startswith("{"):
            return []
        try:
            text = json.loads(text)
        except ValueError:
            return []
    if not isinstance(text, dict):
        return []
    out = []
    for key, value in text.items():
        if isinstance(value, dict) and value:
            out += _json_keys(value, prefix + key + ".")
        else:
            out.append((prefix + key, value))
    return out
