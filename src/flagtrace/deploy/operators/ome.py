"""OME (sgl-project/ome, ome.io/v1beta1): an InferenceService runs its runtime with its model (see expand)."""
from ..strategic_merge import merge
from .common import LEADER_ADDRESS, said, to_int

OME_COMMIT = "17b77edad23bae262e0c9adb7f12039397a5d33d"


def expand(obj, artifact):
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
        return said(obj, problem="InferenceService/%s names no spec.runtime.name: OME chooses a runtime from the "
                                  "model's format at run time; give spec.runtime.name" % name)
    runtime, where = artifact.objects.find(("ServingRuntime", "ClusterServingRuntime"), runtime_name,
                                           own=artifact.documents)
    if runtime is None:
        return said(obj, problem="InferenceService/%s runs the runtime %s, which is in none of the files given; "
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
        size = to_int((merged.get("worker") or {}).get("size"), 0)
        for key, index in (("runner", None), ("leader", "0"), ("worker", "1")):
            holder = merged if key == "runner" else merged.get(key)
            if isinstance(holder, dict) and isinstance(holder.get("runner"), dict):
                holder = merged[key] = dict(holder) if key != "runner" else holder
                holder["runner"] = _runner_env(holder["runner"], path, annotations, size, index)
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
    return said(dict(obj, spec=out), notes=notes, model_configs=configs, problem=problem)


def _runner_env(runner, path, annotations, size, index):
    """A runner with what OME's controller (and, for a leader or worker, the LeaderWorkerSet's webhook) puts in its
    env: LWS_* first, MODEL_PATH appended if absent, PARALLELISM_SIZE set."""
    env = [e for e in runner.get("env") or [] if isinstance(e, dict)]
    names = {e.get("name") for e in env}
    if path and "MODEL_PATH" not in names and annotations.get("ome.io/inject-model-init") != "true":
        env.append({"name": "MODEL_PATH", "value": str(path)})
    limits = ((runner.get("resources") or {}).get("limits") or (runner.get("resources") or {}).get("requests") or {})
    gpus = to_int(limits.get("nvidia.com/gpu"), 0)
    if gpus:
        env = [e for e in env if e.get("name") != "PARALLELISM_SIZE"] + [
            {"name": "PARALLELISM_SIZE", "value": str(gpus * (1 + size))}]
    if index is not None:
        lws = {"LWS_LEADER_ADDRESS": LEADER_ADDRESS, "LWS_GROUP_SIZE": str(size + 1), "LWS_WORKER_INDEX": index}
        env = [{"name": k, "value": v} for k, v in lws.items()] + [e for e in env if e.get("name") not in lws]
    return dict(runner, env=env)


def runtime_alone(obj):
    """A runtime read on its own: its command reads what OME sets from the service and model that use it."""
    text = str(obj.get("spec"))
    if "$(MODEL_PATH)" not in text and "$(PARALLELISM_SIZE)" not in text:
        return obj
    return said(obj, problem="%s/%s: OME sets $(MODEL_PATH) (and $(PARALLELISM_SIZE)) from the InferenceService that "
                              "runs it and that service's model; give them with -f"
                 % (obj.get("kind"), (obj.get("metadata") or {}).get("name", "?")))
