"""An operator's own object made into the pod templates its controller creates from it, with what the
controller injects, so that the Kubernetes reader reads them as any pod template:

- RoleBasedGroup (sgl-project/rbg, workloads.x-k8s.io): each role's template (``templateRef`` to a
  ``roleTemplates`` entry with its ``patch`` laid over it), a ``leaderWorkerPattern`` role as its leader and its
  first worker (``leaderTemplatePatch`` / ``workerTemplatePatch``), and the RBG_* variables the controller puts
  first in every container's env (api/workloads/constants/env.go at 4acd5a79: RBG_GROUP_NAME, RBG_ROLE_NAME,
  RBG_ROLE_INDEX; RBG_LWP_LEADER_ADDRESS, RBG_LWP_GROUP_SIZE, RBG_LWP_WORKER_INDEX for leader-worker roles).

- KServe LLMInferenceService (serving.kserve.io): the LLMInferenceServiceConfigs KServe's controller chooses for
  it (the ones KServe ships, bundled in data/kserve/ from kserve/kserve at aaac4e29, or one given in the same
  file), then its ``baseRefs``, then its own spec, each laid over the one before (config_merge.go
  combineBaseRefsConfig / mergeSpecs); the configs' Go templates rendered with the service (``.Spec`` is the
  service's own spec); a worker makes a LeaderWorkerSet, whose LWS_* variables are injected. An
  LLMInferenceServiceConfig with no service beside it is read as it is, its templates rendered with what no
  service gives (printed ``$(.Spec.Model.Name)``: a placeholder).

- NVIDIA Dynamo's DynamoGraphDeployment, v1alpha1 (``services``) and v1beta1 (``components``): a multinode
  service as its leader and first worker, with the flags the operator appends (_graph_deployment).

Any other object is returned as it is."""
import glob
import json
import math
import os
import re

from .go_template import TemplateError, render
from .strategic_merge import merge
from .yaml_lines import load_documents

KSERVE_CONFIGS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data", "kserve")
KSERVE_COMMIT = "aaac4e294dae2c7b1aa1886447793f3aa1c30912"

OPERATOR = "x-flagtrace-operator"  # what expand() says of the pods it made: notes, model configs, a problem
LEADER_ADDRESS = "<the leader's address>"  # only the cluster knows it (a placeholder, never parsed as real)


def expand(obj, artifact):
    """``obj`` as the pods its controller makes; ``artifact``: its file, whose documents and ``objects`` (every
    file's) hold what it names (the configs an LLMInferenceService names, an OME service's runtime and model)."""
    kind = obj.get("kind")
    if kind == "RoleBasedGroup":
        return _role_based_group(obj)
    if kind == "LLMInferenceService":
        return _llm_inference_service(obj, artifact)
    if kind == "InferenceService" and str(obj.get("apiVersion", "")).startswith("ome.io/"):
        return _ome_inference_service(obj, artifact)
    if kind in ("ClusterServingRuntime", "ServingRuntime") and str(obj.get("apiVersion", "")).startswith("ome.io/"):
        return _ome_runtime_alone(obj)
    if kind == "DynamoGraphDeployment":
        return _graph_deployment(obj)
    if kind == "LLMInferenceServiceConfig":  # alone: a shipped one as it is; one of the user's as a service would be
        name = (obj.get("metadata") or {}).get("name")
        return _render(obj, None) if name in kserve_configs() else _llm_inference_service(obj, artifact)
    return obj


def _role_based_group(obj):
    spec = obj.get("spec") or {}
    shared = {t.get("name"): t.get("template") or {} for t in spec.get("roleTemplates") or [] if isinstance(t, dict)}
    group = (obj.get("metadata") or {}).get("name", "")
    roles = []
    for role in spec.get("roles") or []:
        if not isinstance(role, dict):
            continue
        name = role.get("name", "?")
        base = {"RBG_GROUP_NAME": group, "RBG_ROLE_NAME": name, "RBG_ROLE_INDEX": "0"}
        out = {"name": name}
        standalone, pair = role.get("standalonePattern"), role.get("leaderWorkerPattern")
        if isinstance(standalone, dict):
            out["pod"] = _with_env(_template(standalone, shared), base)
        elif isinstance(pair, dict):
            template = _template(pair, shared)
            for member, index in (("leader", "0"), ("worker", "1")):
                env = dict(base, RBG_LWP_LEADER_ADDRESS=LEADER_ADDRESS, RBG_LWP_GROUP_SIZE=str(pair.get("size", 1)),
                           RBG_LWP_WORKER_INDEX=index)
                out[member] = _with_env(merge(template, pair.get(member + "TemplatePatch") or {}), env)
        else:  # the role's own template (v1alpha1: role.template)
            out["pod"] = _with_env(_template(role, shared), base)
        roles.append(out)
    return dict(obj, spec={"roles": roles})


def _template(pattern, shared):
    """A pattern's pod template: its own, or the roleTemplates entry it names with its patch laid over it."""
    ref = pattern.get("templateRef")
    if isinstance(ref, dict):
        return merge(shared.get(ref.get("name"), {}), ref.get("patch") or {})
    return pattern.get("template") or {}


def _with_env(template, env):
    """The template with ``env`` first in every container's env: the controller's variables before the user's,
    and over a user's variable of the same name (the controller's env merge: pkg/utils/env.go's tests)."""
    spec = template.get("spec") or {}
    containers = []
    for container in spec.get("containers") or []:
        own = [e for e in container.get("env") or [] if isinstance(e, dict) and e.get("name") not in env]
        containers.append(dict(container, env=[{"name": k, "value": v} for k, v in env.items()] + own))
    return dict(template, spec=dict(spec, containers=containers))


# ------------------------------------------------------------------ KServe LLMInferenceService
def kserve_configs():
    """{name: the LLMInferenceServiceConfig} KServe ships (data/kserve/)."""
    out = {}
    for path in sorted(glob.glob(os.path.join(KSERVE_CONFIGS, "*.yaml"))):
        with open(path, encoding="utf-8") as fh:
            for doc in load_documents(fh.read(), path):
                if isinstance(doc, dict):
                    out[(doc.get("metadata") or {}).get("name")] = doc
    return out


def _chosen_configs(spec):
    """The configs KServe's controller lays under a service (config_merge.go combineBaseRefsConfig)."""
    def parallel(part):
        p = (part or {}).get("parallelism") or {}
        return "data-parallel" if (p.get("data") or 0) > 0 or (p.get("dataLocal") or 0) > 0 else \
            "pipeline-parallel" if (p.get("pipeline") or 0) > 0 else None
    names = []
    prefill = spec.get("prefill")
    sides = [("prefill-", prefill), ("decode-", spec)] if isinstance(prefill, dict) else [("", spec)]
    for prefix, part in sides:
        if part.get("worker") is None:
            names.append("kserve-config-llm-%stemplate" % prefix)
        elif parallel(part):
            names.append("kserve-config-llm-%sworker-%s" % (prefix, parallel(part)))
    return names


def _llm_inference_service(obj, artifact):
    spec = obj.get("spec") or {}
    shipped = kserve_configs()
    merged, missing = {}, []
    refs = _chosen_configs(spec) + [r.get("name") for r in spec.get("baseRefs") or [] if isinstance(r, dict)]
    for name in refs:
        config = artifact.objects.find(("LLMInferenceServiceConfig",), name, own=artifact.documents)[0] \
            or shipped.get(name)
        if config is None:
            missing.append(name)
            continue
        merged = merge(merged, config.get("spec") or {})
    merged = merge(merged, {k: v for k, v in spec.items() if k != "baseRefs"})
    out = _render(dict(obj, spec=merged), obj)
    used = [n for n in refs if n not in missing]
    notes = ["the command of KServe's %s (shipped configs bundled from kserve/kserve at %s), the service's spec laid "
             "over it; flags the config's script adds by the vLLM version it finds at run time are taken for the "
             "newest" % (" + ".join(used), KSERVE_COMMIT[:8])]
    model = spec.get("model") or {}
    uri = str(model.get("uri") or "")
    configs = []
    if uri.startswith("hf://"):
        configs = ["/mnt/models=" + uri[len("hf://"):]]
        notes.append("/mnt/models holds %s (spec.model.uri): its config.json stands for it" % uri)
    elif "/" in str(model.get("name") or ""):
        configs = ["/mnt/models=%s" % model["name"]]
        notes.append("/mnt/models holds %s (spec.model.uri); taken as the model spec.model.name names, %s "
                     "(give --model-config /mnt/models=ID|DIR to choose)" % (uri or "the model", model["name"]))
    problem = ("LLMInferenceService/%s names %s, which is in none of the files given nor one KServe ships; give it "
               "with -f" % ((obj.get("metadata") or {}).get("name"), ", ".join(missing))) if missing else ""
    out[OPERATOR] = {"notes": notes, "model_configs": configs, "problem": problem}
    return out


def _render(obj, service):
    """Every string of ``obj`` with KServe's Go templates rendered for ``service`` (None: a config alone)."""
    user = (service or {}).get("spec") or {}
    meta = dict((service or obj).get("metadata") or {})
    meta.setdefault("namespace", "default")  # where kubectl applies an object that names none
    model = dict(user.get("model") or {})
    model.setdefault("name", meta.get("name"))  # the defaulting webhook: the service's name
    context = {"Spec": dict(user, model=model) if service else None, "ObjectMeta": meta if service else None,
               "GlobalConfig": {"enableTLS": False, "systemNamespace": "kserve"}}

    def lookup(path):
        value = context
        for part in path:
            if not isinstance(value, dict):
                return None
            value = value.get(_json_name(part))
        return value

    functions = {"ChildName": lambda parent, suffix: "%s%s" % (parent or _missing(["ObjectMeta", "Name"]), suffix),
                 "shutdownTimeout": _shutdown_timeout, "kvTransferConfig": _kv_transfer_config}

    def walk(node):
        if isinstance(node, dict):
            return {k: walk(v) for k, v in node.items()}
        if isinstance(node, list):
            return [walk(v) for v in node]
        if isinstance(node, str) and "{{" in node:
            try:
                text = render(node, lookup, functions, _missing)
            except TemplateError:
                return node
            return _same_line(text, node)
        return node
    out = walk(dict(obj, spec=obj.get("spec") or {}))
    if service and (out["spec"].get("worker") or (out["spec"].get("prefill") or {}).get("worker")):
        _lws_env(out["spec"], user)
        _lws_env(out["spec"].get("prefill") or {}, user.get("prefill") or {})
    return out


def _missing(path):
    """What no service gives, as a command substitution: a script keeps it as a placeholder (shell_script.py), and
    unlike ``<...>`` it is no redirection when the config's ``eval`` reads it again."""
    return "$(.%s)" % ".".join(path)


_GO_NAMES = {"ObjectMeta": "metadata", "KVCacheOffloading": "kvCacheOffloading", "DataRPCPort": "dataRPCPort",
             "EnableTLS": "enableTLS"}


def _json_name(field):
    return field if field in ("Spec", "ObjectMeta", "GlobalConfig") else _GO_NAMES.get(field) or field[:1].lower() + field[1:]


def _same_line(text, original):
    line = getattr(original, "line", 0)
    if not line:
        return text
    out = type(original)(text)
    out.line = line
    return out


def _shutdown_timeout(podspec, pre_stop):
    grace = (podspec or {}).get("terminationGracePeriodSeconds") if isinstance(podspec, dict) else None
    grace = 60 if grace is None else int(grace)
    return max(0, grace - int(pre_stop) - min(5, grace))


def _kv_transfer_config(kv):
    if not isinstance(kv, dict):
        return ""
    extra = {"spec_name": "TieringOffloadingSpec", "cpu_bytes_to_use": _bytes(kv.get("cpu"))}
    if kv.get("evictionPolicy"):
        extra["eviction_policy"] = kv["evictionPolicy"]
    tiers = [{"type": "fs", "root_dir": "/mnt/kv-cache-%d" % i} for i, tier in enumerate(kv.get("secondary") or [])
             if isinstance(tier, dict) and tier.get("fileSystem")]
    if tiers:
        extra["secondary_tiers"] = tiers
    text = json.dumps({"kv_connector": "OffloadingConnector", "kv_role": "kv_both", "kv_connector_extra_config": extra},
                      sort_keys=True, separators=(",", ":"))
    return "--kv-transfer-config '%s'" % text.replace('"', '\\"')


_UNITS = {"": 1, "k": 1000, "M": 1000 ** 2, "G": 1000 ** 3, "T": 1000 ** 4, "Ki": 1024, "Mi": 1024 ** 2,
          "Gi": 1024 ** 3, "Ti": 1024 ** 4}


def _bytes(quantity):
    m = re.fullmatch(r"([\d.]+)([A-Za-z]*)", str(quantity or "0"))
    return int(math.ceil(float(m.group(1)) * _UNITS.get(m.group(2), 1))) if m else 0


def _lws_env(part, user):
    """A service with a worker runs as a LeaderWorkerSet: its LWS_* variables (the leader 0, the first worker 1)."""
    p = user.get("parallelism") or {}
    size = max(max(p.get("data") or 1, 1) // max(p.get("dataLocal") or 1, 1), 1)
    for key, index in (("template", "0"), ("worker", "1")):
        if isinstance(part.get(key), dict):
            part[key] = _with_env({"spec": part[key]}, {"LWS_LEADER_ADDRESS": LEADER_ADDRESS,
                                                        "LWS_GROUP_SIZE": str(size), "LWS_WORKER_INDEX": index})["spec"]


# ------------------------------------------------------------------ graph deployments (the Dynamo operator's)
def _graph_deployment(obj):
    """A DynamoGraphDeployment as the operator makes its pods: v1alpha1 ``services`` (a map; the service's
    ``resources.limits.gpu`` and the graph's ``envs`` given to the main container) or v1beta1 ``components`` (a
    list; the container named ``main``); a multinode service (``multinode.nodeCount`` >= 2) as its leader and first
    worker with the flags the operator appends to their command (the framework records' ``multinode_flags``)."""
    spec = dict(obj.get("spec") or {})
    graph_env = [e for e in spec.get("envs") or spec.get("env") or [] if isinstance(e, dict)]
    if isinstance(spec.get("services"), dict):
        spec["services"] = {name: _graph_service(service, graph_env, alpha=True)
                            for name, service in spec["services"].items() if isinstance(service, dict)}
    if isinstance(spec.get("components"), list):
        spec["components"] = [dict(_graph_service(c, graph_env, alpha=False), name=c.get("name"))
                              for c in spec["components"] if isinstance(c, dict)]
    return dict(obj, spec=spec)


def _graph_service(service, graph_env, alpha):
    service = dict(service)
    if alpha:
        extra = dict(service.get("extraPodSpec") or {})
        if not isinstance(extra.get("mainContainer"), dict):
            return service
        gpu = ((service.get("resources") or {}).get("limits") or {}).get("gpu")
        main = _main_container(extra["mainContainer"], graph_env, gpu)

        def pods(c):
            return dict(service, extraPodSpec=dict(extra, mainContainer=c))
    else:
        template = dict(service.get("podTemplate") or {})
        pod = dict(template.get("spec") or {})
        containers = list(pod.get("containers") or [])
        at = next((i for i, c in enumerate(containers) if isinstance(c, dict) and c.get("name") == "main"), None)
        if at is None:
            return service
        main = _main_container(containers[at], graph_env, None)

        def pods(c):
            return dict(service, podTemplate=dict(template, spec=dict(
                pod, containers=containers[:at] + [c] + containers[at + 1:])))
    nodes = _int((service.get("multinode") or {}).get("nodeCount"), 1)
    if nodes < 2:
        return pods(main)
    return {"leader": pods(_one_node(main, nodes, 0)), "worker": pods(_one_node(main, nodes, 1))}


def _main_container(container, graph_env, gpu):
    container = dict(container)
    if graph_env:
        own = {e.get("name") for e in container.get("env") or [] if isinstance(e, dict)}
        container["env"] = [e for e in graph_env if e.get("name") not in own] + list(container.get("env") or [])
    if gpu is not None:
        resources = dict(container.get("resources") or {})
        container["resources"] = dict(resources, limits=dict({"nvidia.com/gpu": gpu}, **(resources.get("limits") or {})))
    return container


def _one_node(container, nodes, rank):
    """The main container of one node of a multinode service, with what the operator appends for it."""
    from ..core.frameworks import FRAMEWORKS

    words = [str(w) for w in list(container.get("command") or []) + list(container.get("args") or [])]
    gpus = _int(((container.get("resources") or {}).get("limits") or {}).get("nvidia.com/gpu"), 1)
    rules = next((rules for record in FRAMEWORKS for module, rules in record.multinode_flags.items()
                  if any(module in w.split() for w in words)), ())
    for rule in rules:
        sizes = {name: _int(_flag_value(words, options), 1) for name, options in rule.get("sizes", {}).items()}
        over = 1
        for name in rule.get("over", ()):
            over *= sizes[name]
        if rule.get("over") and over <= gpus:
            continue
        per_node = sizes.get("tp", 1) * sizes.get("pp", 1)
        local = max(gpus // per_node, 1)
        values = {"leader": LEADER_ADDRESS, "nodes": nodes, "rank": rank, "local": local, "start": local * rank}
        flags = [f.format(**values) for f in rule["flags"]] + (list(rule.get("worker", ())) if rank else [])
        said = {"append": flags, "origin": "appended by " + rule["origin"],
                "notes": ["multinode.nodeCount %d: this is the %s (node rank %d); the flags after the manifest's are "
                          "appended by %s" % (nodes, "leader" if rank == 0 else "first worker", rank, rule["origin"])]}
        return dict(container, **{OPERATOR: said})
    return container


def _flag_value(words, names):
    for i, word in enumerate(words):
        option, eq, value = word.partition("=")
        if option in names:
            return value if eq else (words[i + 1] if i + 1 < len(words) else None)
    return None


def _int(value, default):
    try:
        return int(str(value))
    except (TypeError, ValueError):
        return default


# ------------------------------------------------------------------ OME (sgl-project/ome, ome.io/v1beta1)
OME_COMMIT = "17b77edad23bae262e0c9adb7f12039397a5d33d"


def _ome_inference_service(obj, artifact):
    """An OME InferenceService: its runtime (``spec.runtime.name``: a ServingRuntime, else a
    ClusterServingRuntime) and model (a BaseModel, else a ClusterBaseModel) from the files given; each component it
    lists (engine, decoder) laid over the runtime's engineConfig/decoderConfig (utils/merging.go: a strategic merge,
    the service's args replacing the runtime's); what the controller injects: MODEL_PATH (the model's
    storage.path, if the container has none), PARALLELISM_SIZE (GPUs x (1 + worker size)), and for a leader and
    workers the LeaderWorkerSet's LWS_* variables."""
    spec = obj.get("spec") or {}
    name = (obj.get("metadata") or {}).get("name", "?")
    runtime_name = (spec.get("runtime") or {}).get("name")
    model_name = (spec.get("model") or {}).get("name")
    if not runtime_name:
        return _said(obj, problem="InferenceService/%s names no spec.runtime.name: OME chooses a runtime from the "
                                  "model's format at run time; give spec.runtime.name" % name)
    runtime, where = artifact.objects.find(("ServingRuntime", "ClusterServingRuntime"), runtime_name,
                                           own=artifact.documents)
    if runtime is None:
        return _said(obj, problem="InferenceService/%s runs the runtime %s, which is in none of the files given; "
                                  "give its ClusterServingRuntime (or ServingRuntime) with -f" % (name, runtime_name))
    model, _ = artifact.objects.find(("BaseModel", "ClusterBaseModel"), model_name, own=artifact.documents)
    storage = ((model or {}).get("spec") or {}).get("storage") or {}
    path, uri = storage.get("path"), str(storage.get("storageUri") or "")
    annotations = dict((obj.get("metadata") or {}).get("annotations") or {})
    runtime_spec = runtime.get("spec") or {}
    out = {}
    for part in ("engine", "decoder"):
        if spec.get(part) is None:
            continue
        merged = merge(runtime_spec.get(part + "Config") or {}, spec[part])
        if merged.get("leader") or merged.get("worker"):
            merged.pop("runner", None)  # a leader and workers: the top-level runner is not used (engine.go)
        size = _int((merged.get("worker") or {}).get("size"), 0)
        for key, index in (("runner", None), ("leader", "0"), ("worker", "1")):
            holder = merged if key == "runner" else merged.get(key)
            if isinstance(holder, dict) and isinstance(holder.get("runner"), dict):
                holder = merged[key] = dict(holder) if key != "runner" else holder
                holder["runner"] = _ome_env(holder["runner"], path, annotations, size, index)
        out[part] = merged
    notes = ["the command of OME's runtime %s%s, the service's %s laid over it (sgl-project/ome utils/merging.go at "
             "%s)" % (runtime_name, " (%s)" % where if where else "", " and ".join(out) or "spec", OME_COMMIT[:8])]
    configs = []
    if path and uri.startswith("hf://"):
        configs = ["%s=%s" % (path, uri[len("hf://"):])]
        notes.append("MODEL_PATH %s holds %s (the model %s): its config.json stands for it" % (path, uri, model_name))
    problem = "" if model is not None else (
        "InferenceService/%s serves the model %s, which is in none of the files given; give its ClusterBaseModel "
        "(or BaseModel) with -f (OME sets MODEL_PATH from it)" % (name, model_name))
    return _said(dict(obj, spec=out), notes=notes, model_configs=configs, problem=problem)


def _ome_env(runner, path, annotations, size, index):
    """A runner with what OME's controller (and, for a leader or worker, the LeaderWorkerSet's webhook) puts in its
    env: LWS_* first, MODEL_PATH appended if absent, PARALLELISM_SIZE set."""
    env = [e for e in runner.get("env") or [] if isinstance(e, dict)]
    names = {e.get("name") for e in env}
    if path and "MODEL_PATH" not in names and annotations.get("ome.io/inject-model-init") != "true":
        env.append({"name": "MODEL_PATH", "value": str(path)})
    limits = ((runner.get("resources") or {}).get("limits") or (runner.get("resources") or {}).get("requests") or {})
    gpus = _int(limits.get("nvidia.com/gpu"), 0)
    if gpus:
        env = [e for e in env if e.get("name") != "PARALLELISM_SIZE"] + [
            {"name": "PARALLELISM_SIZE", "value": str(gpus * (1 + size))}]
    if index is not None:
        lws = {"LWS_LEADER_ADDRESS": LEADER_ADDRESS, "LWS_GROUP_SIZE": str(size + 1), "LWS_WORKER_INDEX": index}
        env = [{"name": k, "value": v} for k, v in lws.items()] + [e for e in env if e.get("name") not in lws]
    return dict(runner, env=env)


def _ome_runtime_alone(obj):
    """A runtime read on its own: its command reads what OME sets from the service and model that use it."""
    text = str(obj.get("spec"))
    if "$(MODEL_PATH)" not in text and "$(PARALLELISM_SIZE)" not in text:
        return obj
    return _said(obj, problem="%s/%s: OME sets $(MODEL_PATH) (and $(PARALLELISM_SIZE)) from the InferenceService that "
                              "runs it and that service's model; give them with -f"
                 % (obj.get("kind"), (obj.get("metadata") or {}).get("name", "?")))


def _said(obj, notes=(), model_configs=(), problem=""):
    return dict(obj, **{OPERATOR: {"notes": list(notes), "model_configs": list(model_configs), "problem": problem}})


def used_by(obj, artifact):
    """(the object that names ``obj`` and reads it as part of itself, its file or None), or (None, None): a KServe
    LLMInferenceServiceConfig a service lays under itself, an OME runtime a service runs."""
    kind, name = obj.get("kind"), (obj.get("metadata") or {}).get("name")
    if kind == "LLMInferenceServiceConfig":
        beside = next((d for d in artifact.documents if isinstance(d, dict) and d.get("kind") == "LLMInferenceService"),
                      None)
        if beside is not None or name in kserve_configs():  # a shipped one alone is read as it is
            return beside, None
        return artifact.objects.naming(lambda d: d.get("kind") == "LLMInferenceService" and name in [
            r.get("name") for r in (d.get("spec") or {}).get("baseRefs") or [] if isinstance(r, dict)])
    ome = str(obj.get("apiVersion", "")).startswith("ome.io/")
    for kinds, key in ((("ClusterServingRuntime", "ServingRuntime"), "runtime"), (("ClusterBaseModel", "BaseModel"),
                                                                                  "model")):
        if ome and kind in kinds:
            return artifact.objects.naming(lambda d: d.get("kind") == "InferenceService" and (
                (d.get("spec") or {}).get(key) or {}).get("name") == name, own=artifact.documents)
    return None, None
