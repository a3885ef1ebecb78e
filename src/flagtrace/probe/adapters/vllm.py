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
import re
import sys

from ..recorder import field_items
from ..values import describe
from .release import installed_version, parse_version
from . import vllm_fields, vllm_sim

FIRST, LAST = (0, 11, 0), (0, 34, 0)
TESTED = ["0.11.2", "0.15.1", "0.25.1", "0.33.0", "0.34.0"]
ARG_UTILS = "vllm.engine.arg_utils"
CONFIG_PACKAGE = "vllm.config"
CREATE = "create_engine_config"
# The API server binds its port before it resolves the config (vLLM's workaround for a race with
# ray): where, by release. A dry run binds an ephemeral loopback port instead; nothing listens.
SERVER_SOCKET = ("vllm.entrypoints.launchers.launcher", "vllm.entrypoints.openai.api_server")
# ``vllm serve --data-parallel-multi-port-external-lb`` (0.25+): the command's process resolves nothing; its DP
# supervisor starts one API server process per local data-parallel rank, each resolving its own engine config.
SERVE_CLI = "vllm.entrypoints.cli.serve"
# The model's own config (``model_config.hf_config``), which vLLM edits in place; a dataclass only
# from transformers 5.
HF_CONFIG = ("transformers.configuration_utils", "PretrainedConfig")


def supported_text():
    return "%s-%s; tested: %s" % (".".join(map(str, FIRST)), ".".join(map(str, LAST)), ", ".join(TESTED))


def setup(probe):
    version = installed_version("vllm")
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
    probe.imports.on_import(HF_CONFIG[0], lambda module: probe.recorder.watch_nested_class(
        getattr(module, HF_CONFIG[1])))
    vllm_sim.setup(probe)
    probe.imports.on_import(SERVE_CLI, functools.partial(_follow_dp_supervisor, probe))
    if not probe.request.get("live"):
        for name in SERVER_SOCKET:
            probe.imports.on_import(name, functools.partial(_no_port, info))


def _no_port(info, module):
    create = getattr(module, "create_server_socket", None)
    if create is None or getattr(create, "_flagtrace_dry", False):
        return

    @functools.wraps(create)
    def create_server_socket(addr, *args, **kwargs):
        info["port_not_bound"] = "%s:%s" % tuple(addr[:2])
        return create(("127.0.0.1", 0), *args, **kwargs)

    create_server_socket._flagtrace_dry = True
    module.create_server_socket = create_server_socket


def _follow_dp_supervisor(probe, module):
    """The DP supervisor's first API server followed in this process, with the arguments the supervisor would
    give it, so that its engine config is the one resolved (and the stop point reached); the supervisor itself
    and the servers of the other ranks never start. Where this release's supervisor lacks the pieces, nothing
    starts and the report says why the stop point was not reached."""
    original = getattr(module, "run_dp_supervisor", None)
    if original is None or getattr(original, "_flagtrace_followed", False):
        return

    @functools.wraps(original)
    def run_dp_supervisor(args):
        supervisor = sys.modules.get(original.__module__)
        build = getattr(supervisor, "_build_vllm_dp_server_args", None)
        run_server = getattr(supervisor, "_run_python_vllm_dp_server", None)
        ranks = getattr(args, "data_parallel_size_local", None)
        if build is None or run_server is None:
            probe.trace.problem("followed", "vLLM's DP supervisor (--data-parallel-multi-port-external-lb) starts an "
                                "API server process per local data-parallel rank (%s), each resolving its own "
                                "config; flagtrace cannot follow them in this release" % ranks)
            return None
        validate = getattr(supervisor, "validate_multi_port_external_lb_args", None)
        if validate is not None:
            validate(args)
        child = build(args, 0)
        given = ", ".join("%s %r -> %r" % (name, value, getattr(child, name, None))
                          for name, value in sorted(vars(args).items()) if getattr(child, name, None) != value)
        probe.trace.problem("followed", "vLLM's DP supervisor (--data-parallel-multi-port-external-lb) starts %s API "
                            "server processes, one per local data-parallel rank, each resolving its own config; "
                            "reported: the first (data_parallel_rank %s, port %s), followed in this process with the "
                            "arguments the supervisor gives it (%s)"
                            % (ranks, getattr(child, "data_parallel_rank", "?"), getattr(child, "port", "?"), given))
        return run_server(child)

    run_dp_supervisor._flagtrace_followed = True
    module.run_dp_supervisor = run_dp_supervisor


class Resolution:
    def __init__(self, probe):
        self.probe = probe
        self.trace = probe.trace
        self.recorder = probe.recorder
        self.config_module = None
        self.arg_utils = None
        self.depth = 0
        self.first = 0  # objects registered before the outermost create_engine_config began

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
            if resolution.depth == 0:
                resolution.first = len(resolution.recorder.objects)
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
        configs = set(holders.values())  # the paths that hold a config (a JSON option's keys are its fields)
        if config is not None:  # everything reachable from the resolved config, breadth first
            todo = [(config, "")]
            while todo:
                obj, prefix = todo.pop(0)
                for name, value in field_items(obj):
                    w = rec.by_id.get(id(value))
                    if w is None or w.oid in mounted:
                        continue
                    path = prefix + name
                    configs.add(path)
                    if w.root is w:  # resolved on its own: its history moves under the config
                        self.trace.mount(w.oid, into.oid, prefix=path)
                    elif w.root is not into:  # built inside EngineArgs and handed over as it is
                        w.root, w.path = into, path
                        self.trace.reroot(w.oid, into.oid, path)
                    mounted.add(w.oid)
                    todo.append((value, path + "."))
        else:  # resolution failed before VllmConfig existed: each config it built, by its class
            latest = {}
            for w in rec.objects[self.first:]:
                if w.root is w and type(w.obj).__name__ in holders:
                    latest[type(w.obj).__name__] = w
            for name, w in latest.items():
                self.trace.mount(w.oid, into.oid, prefix=holders[name])
                mounted.add(w.oid)
        heads, copies = self.engine_arg_paths(holders)
        if ea is not None and heads:
            self.trace.mount(ea.oid, into.oid, heads=heads)
            # a condition in an EngineArgs method reading self.max_num_seqs reads that field
            classes = sorted({k.__name__ for k in self.recorder.root_classes if issubclass(k, self.arg_utils.EngineArgs)})
            self.trace.request["adapter_info"]["self_aliases"] = {"classes": classes, "fields": heads}
        self.trace.primary = into.oid
        self.name_requests(heads, set(holders.values()), copies, configs)

    def engine_arg_paths(self, holders):
        """(EngineArgs attribute -> the field it becomes, attribute -> fields it is copied into)."""
        source_file = getattr(self.arg_utils, "__file__", None)
        if not source_file:
            return {}, {}
        self.trace.files.add(source_file)
        with open(source_file, encoding="utf-8") as fh:
            source = vllm_fields.parse(fh.read())
        groups = {}
        for parse in self.trace.parses:
            for action in parse.get("actions", []):
                if action.get("group"):
                    groups[action["dest"]] = action["group"]
        sites = vllm_fields.engine_arg_copy_sites(source, holders)
        return vllm_fields.engine_arg_paths(source, holders, groups), self.copied_values(source_file, sites)

    def copied_values(self, source_file, sites):
        """EngineArgs attribute -> [(field, the value the copying statement wrote, or None where it
        did not run)]: the option asked for that value of the field, converted or not."""
        at_line = {}
        for attr, path, first, last in sites:
            for line in range(first, last + 1):
                at_line.setdefault(line, []).append(path)
        written = {}
        for event in self.trace.events:
            at = event.get("at")
            if event.get("kind") != "write" or event.get("how") == "init" or not at \
                    or at.get("line") not in at_line or at.get("file") != source_file:
                continue
            leaf = event["field"].rsplit(".", 1)[-1]
            for path in at_line[at["line"]]:
                if path.rsplit(".", 1)[-1] == leaf:
                    written[path] = event["new"]  # the latest resolution's
        out = {}
        for attr, path, _first, _last in sites:
            if all(path != p for p, _ in out.get(attr, ())):
                out.setdefault(attr, []).append((path, written.get(path)))
        return out

    def name_requests(self, heads, config_fields, copies=None, configs=None):
        """Each explicit option names the config field it becomes, and the fields the builder
        copies it into; a JSON option (``--compilation-config '{"mode": 3}'``, ``-cc.mode=3``)
        requests each nested key instead of the whole config. ``configs``: the paths that hold a
        config (default: ``config_fields``); a JSON option of any other field (a dict:
        ``--override-generation-config '{"temperature": 0.5}'``) requests that field whole."""
        configs = config_fields if configs is None else configs
        argv = [a for a in self.trace.argv0[1:] if isinstance(a, str)]
        for parse in self.trace.parses:
            named = []
            renamed = _renames(parse)  # the serve command's ``args.model = args.model_tag``
            for ex in parse.get("explicit", []):
                if ex["dest"] not in heads and heads.get(renamed.get(ex["dest"])):
                    ex = dict(ex, dest=renamed[ex["dest"]])
                typed = _as_typed(argv, ex)
                if typed != ex["typed"]:
                    ex = dict(ex, typed=typed)
                for p, value in (copies or {}).get(ex["dest"], ()):
                    if p != heads.get(ex["dest"]):  # copied into another config's field: asked for there too
                        named.append(dict(ex, field=p, value=value) if value is not None else dict(ex, field=p))
                path = heads.get(ex["dest"]) or (ex["dest"] if ex["dest"] in config_fields else None)
                if path is None:
                    named.append(ex)
                    continue
                ex["field"] = path
                value = _option_value(parse.get("args") or [], ex)
                keys = _json_keys(value) if path in configs else []
                if not keys:
                    named.append(ex)
                for key, leaf in keys:
                    typed = next((a.split("=", 1)[0] for a in argv
                                  if a.split("=", 1)[0].replace("_", "-") in
                                  (("%s.%s" % (opt, key)).replace("_", "-") for opt in _option_names(parse, ex))),
                                 ex["typed"])
                    named.append(dict(ex, field=path + "." + key, typed=typed, value=describe(leaf, key)))
            parse["explicit"] = named


_COPY = re.compile(r"^\w+\.(\w+)\s*=\s*\w+\.(\w+)$")


def _renames(parse):
    """Namespace attribute -> the attribute code copied it into after parsing."""
    out = {}
    for write in parse.get("namespace_writes", []):
        m = _COPY.match(((write.get("at") or {}).get("src") or "").strip())
        if m and m.group(1) == write.get("name"):
            out[m.group(2)] = m.group(1)
    return out


def _as_typed(argv, ex):
    """The token the user typed for an option argparse saw: vLLM's parser rewrites the command
    line first (``--max_num_seqs`` -> ``--max-num-seqs``, ``-O3`` / ``-O 3`` -> ``--optimization-level 3``)."""
    typed = ex.get("typed")
    if ex.get("positional") or not isinstance(typed, str) or not typed.startswith("--"):
        return typed
    heads = [a.split("=", 1)[0] for a in argv]
    if typed in heads:
        return typed
    for head in heads:
        if head.startswith("--") and head.replace("_", "-") == typed:
            return head
    if typed == "--optimization-level":
        for token in argv:
            if token.startswith("-O") and not token.startswith("--"):
                return token.split("=", 1)[0]
    return typed


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
    if ex.get("inline"):  # --x=V, or a short option with its value attached (-O3)
        return token.split("=", 1)[1] if "=" in token else token[len(ex.get("typed") or ""):]
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


def supported_range():
    """(first, last) release numbers the adapter supports (--release checks against it)."""
    return FIRST, LAST
