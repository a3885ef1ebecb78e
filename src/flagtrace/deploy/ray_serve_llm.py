"""A KubeRay RayService whose Serve config runs Ray Serve LLM (``import_path: ray.serve.llm:build_openai_app``):
each ``llm_configs`` entry is a vLLM engine, read as the command line of the same engine. Ray does not build a
command line: each replica calls ``AsyncEngineArgs(**engine_kwargs)`` with what Ray sets itself (ray 2.52
``llm/_internal/serve/engines/vllm/vllm_models.py`` ``get_initialization_kwargs``: ``model`` from
``model_loading_config.model_source`` (else ``model_id``), ``served_model_name`` = [model_id],
``distributed_executor_backend`` = "ray"), so each key is given as the flag of the same name (a dict as JSON) and
the report says so."""
import json
import os

from . import images
from .model import Launch, Token
from .yaml_lines import BadDocument, load_documents

RAY_SERVE_LLM = "ray.serve.llm:"
NOTE = ("Ray Serve LLM passes engine_kwargs to vLLM's AsyncEngineArgs(**kwargs), not to its command-line parser; "
        "flagtrace gives each as the flag of the same name")


def launches(obj, source):
    """[Launch] of every Ray Serve LLM engine a RayService (or a RayJob's serve config) runs; [] for any other."""
    spec = obj.get("spec") or {}
    text = spec.get("serveConfigV2")
    if not isinstance(text, str) or RAY_SERVE_LLM not in text:
        return []
    first = getattr(text, "line", 0)
    name = "%s/%s" % (obj.get("kind"), (obj.get("metadata") or {}).get("name", "?"))
    docs = load_documents(text, source)
    if not docs or isinstance(docs[0], BadDocument) or not isinstance(docs[0], dict):
        return []
    image = _engine_image(spec.get("rayClusterConfig") or {})
    out = []
    for app in docs[0].get("applications") or []:
        if not isinstance(app, dict) or not str(app.get("import_path", "")).startswith(RAY_SERVE_LLM):
            continue
        for i, config in enumerate((app.get("args") or {}).get("llm_configs") or []):
            if isinstance(config, dict):
                out.append(_engine(source, "%s %s llm_configs[%d]" % (name, app.get("name", "app"), i), config, image,
                                   lambda value: _where(source, value, first)))
    return out


def _engine(source, name, config, image, where):
    loading = config.get("model_loading_config") or {}
    model_id = loading.get("model_id")
    model = loading.get("model_source") if isinstance(loading.get("model_source"), str) else model_id
    ray = "Ray Serve LLM (%s)" % where(model_id)
    tokens = [Token("vllm", ray), Token("serve", ray),
              Token(str(model), "model_loading_config.%s (%s)" % (
                  "model_source" if model is not model_id else "model_id", where(model)))]
    tokens += [Token("--served-model-name", ray), Token(str(model_id), "model_loading_config.model_id (%s)"
                                                        % where(model_id))]
    kwargs = config.get("engine_kwargs") or {}
    for key, value in kwargs.items():
        if key in ("model", "served_model_name", "distributed_executor_backend"):
            continue  # Ray refuses or overrides them (vllm_models.py)
        flag = "--" + str(key).replace("_", "-")
        origin = "engine_kwargs.%s (%s)" % (key, where(key))
        if value is True:
            tokens.append(Token(flag, origin))
        elif value is False:
            tokens.append(Token("--no-" + flag[2:], origin))
        elif value is not None:
            tokens += [Token(flag, origin), Token(json.dumps(value) if isinstance(value, (dict, list)) else str(value),
                                                  origin)]
    tokens += [Token("--distributed-executor-backend", ray + ", always"), Token("ray", ray + ", always")]
    env = {str(k): str(v) for k, v in ((config.get("runtime_env") or {}).get("env_vars") or {}).items()}
    release, note = images.release_of(image) if image else ("", "")
    gpus = _int(kwargs.get("tensor_parallel_size")) * _int(kwargs.get("pipeline_parallel_size"))
    return Launch(source=source, name=name, tokens=tokens, env=env, image=image, gpus=gpus, gpu_vendor="nvidia",
                  gpu_type=str(config.get("accelerator_type") or ""), release=release,
                  notes=[NOTE] + ([note] if note else []), framework="vllm")


def _engine_image(cluster):
    """The image of the Ray workers that hold GPUs (where the engines run), else the head's."""
    groups = list(cluster.get("workerGroupSpecs") or []) + [cluster.get("headGroupSpec") or {}]
    for group in groups:
        for container in ((group.get("template") or {}).get("spec") or {}).get("containers") or []:
            if container.get("image"):
                return str(container["image"])
    return ""


def _int(value):
    try:
        return max(int(value), 1)
    except (TypeError, ValueError):
        return 1


def _where(source, value, first):
    line = getattr(value, "line", 0)
    return "%s:%d" % (os.path.basename(source), first + line) if line else os.path.basename(source)
