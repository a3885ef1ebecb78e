"""llm-d-modelservice (chart 0.4.12): ``modelArtifacts`` with the ``decode``/``prefill`` containers,
``modelCommand`` vllmServe / imageDefault / custom. What the chart's templates make of the values, written out in
Python."""
import re

from .. import images
from ..kubelet_env import injected
from ..model import Token
from .common import RELEASE, Chart, Refused, go, gpus_of, launch_of, pair, secret, sprig_int, yaml_text

# ---- llm-d-modelservice: templates/_helpers.tpl, _helpers-dra.tpl, {decode,prefill}-{deployment,lws}.yaml ----

LLM_D_HELPERS = "_helpers.tpl"
_VALUES_REF = re.compile(r"\{\{-?\s*\.Values\.([A-Za-z0-9_.]+?)\s*-?\}\}")
DEFAULT_CONTAINER = {"name": "vllm", "image": "ghcr.io/llm-d/llm-d-inference-sim:latest",
                     "modelCommand": "imageDefault", "mountModelVolume": True, "command": [], "args": [], "env": [],
                     "resources": {"limits": {}, "requests": {}}}
PARALLELISM = {"tensor": 1, "data": 1, "dataLocal": 1, "workers": 1}
CLAIM_TEMPLATES = {kind: {"name": "%s-claim-template" % name} for kind, name in (
    ("nvidia", "nvidia"), ("intel", "intel"), ("intel-i915", "intel"), ("intel-xe", "intel"),
    ("intel-gaudi", "intel-gaudi"), ("amd", "amd"), ("google", "google"))}
LLM_D_DEFAULTS = {  # charts/llm-d-modelservice/values.yaml, what the templates read of it
    "modelArtifacts": {"name": "random/model", "uri": "hf://{{ .Values.modelArtifacts.name }}", "authSecretName": "",
                       "mountPath": "/model-cache"},
    "routing": {"servicePort": 8000, "proxy": {"enabled": True, "targetPort": 8200,
                                               "image": "ghcr.io/llm-d/llm-d-routing-sidecar:latest"}},
    "accelerator": {"type": "nvidia", "dra": False, "resourceClaimTemplates": CLAIM_TEMPLATES,
                    "resources": {"nvidia": "nvidia.com/gpu", "intel-i915": "gpu.intel.com/i915",
                                  "intel-xe": "gpu.intel.com/xe", "intel-gaudi": "habana.ai/gaudi",
                                  "amd": "amd.com/gpu", "google": "google.com/tpu",
                                  "rebellions-atom": "rebellions.ai/ATOM"},
                    "env": {"intel-i915": [pair("VLLM_USE_V1", "1"), pair("TORCH_LLM_ALLREDUCE", "1"),
                                           pair("VLLM_WORKER_MULTIPROC_METHOD", "spawn")],
                            "intel-xe": [pair("VLLM_WORKER_MULTIPROC_METHOD", "spawn")]}},
    "tracing": {"enabled": False, "otlpEndpoint": "http://otel-collector:4317",
                "sampling": {"sampler": "parentbased_traceidratio", "samplerArg": "1.0"},
                "serviceNames": {"vllmDecode": "vllm-decode", "vllmPrefill": "vllm-prefill"},
                "vllm": {"collectDetailedTraces": "all"}},
    "multinode": False, "requester": {"enable": False},
    "decode": {"create": True, "replicas": 1, "parallelism": PARALLELISM, "containers": [DEFAULT_CONTAINER]},
    "prefill": {"create": True, "replicas": 0, "parallelism": PARALLELISM, "containers": [DEFAULT_CONTAINER]}}


def _llm_d(values):
    multinode = bool(values("multinode"))
    roles = [role for role in ("decode", "prefill") if values(role, "create")]
    if "decode" in roles and values("requester", "enable") and not multinode:
        roles.remove("decode")  # a ReplicaSet of the requester; the vLLM container is only in an annotation's patch
    if "decode" in roles and values("routing", "proxy", "enabled") is True and not values("routing", "proxy", "image"):
        raise Refused("routing.proxy.image must be specified", LLM_D_HELPERS)
    launches = []
    for role in roles:
        for i in range(len(values(role, "containers") or [])):
            launch = _llm_d_container(values, role, values.at(role, "containers", i), multinode)
            if launch is not None:
                launches.append(launch)
    return launches


def _fullname(values):
    if values("fullnameOverride"):
        name = go(values("fullnameOverride"))[:55]
    else:
        chart = go(values("nameOverride")) or "llm-d-modelservice"
        name = (RELEASE if chart in RELEASE else "%s-%s" % (RELEASE, chart))[:55]
    return name[:-1] if name.endswith("-") else name


def _llm_d_container(values, role, container, multinode):
    """One container of the role's pods (llm-d-modelservice.container); the routing proxy the decode pods also run
    is no framework, so no Launch."""
    image = go(container("image"))
    if not image:
        raise Refused("image of container is required", LLM_D_HELPERS)
    sizes = _parallelism(values.at(role, "parallelism"))
    count, vendor, note = _llm_d_gpus(values, role, container, image, sizes[0][0] * sizes[2][0])
    owner = "%s-%s" % (_fullname(values), role)
    given, index = _leader_worker_set(values, role, owner) if multinode else ({}, ("0", "the first pod"))
    name = "%s/%s %scontainer %s" % ("LeaderWorkerSet" if multinode else "Deployment", owner,
                                     "worker " if multinode else "", go(container("name")) or "vllm")
    return launch_of(values, name, image, _llm_d_words(values, role, container, image, sizes),
                   _llm_d_env(values, role, container, sizes), (count, vendor), [note] if note else [], given, index)


def _llm_d_words(values, role, container, image, sizes):
    """The container's command + args by its modelCommand (llm-d-modelservice.command)."""
    t = values.template(LLM_D_HELPERS)
    mode = go(container("modelCommand")) or "custom"
    if mode == "vllmServe":
        return [Token("vllm", t), Token("serve", t)] + _llm_d_args(values, role, container, sizes, False)
    if mode == "imageDefault":
        words, where = images.entrypoint(image, images.release_of(image)[0])
        return [Token(w, where) for w in words] + _llm_d_args(values, role, container, sizes, True)
    if mode != "custom":
        raise Refused(".container.modelCommand is not as expected. Valid values are `vllmServe`, `imageDefault` and "
                       "`custom`.", LLM_D_HELPERS)
    if not container("command"):
        raise Refused("When .container.modelCommand not set or `custom`, a `command` is required.", LLM_D_HELPERS)
    return _listed(container, "command") + _listed(container, "args")


def _leader_worker_set(values, role, owner):
    """(what the LeaderWorkerSet injects, the pod's index) with multinode: the chart writes only a worker
    template, taken as worker 1 as the Kubernetes reader takes one."""
    obj = {"kind": "LeaderWorkerSet", "metadata": {"name": owner},
           "spec": {"leaderWorkerTemplate": {"size": _workers(values.at(role, "parallelism"))}}}
    return (dict(injected(obj), LWS_WORKER_INDEX="1"),
            ("1", "the first worker of its group (each worker pod has its own index, 1 to size-1)"))


def _listed(view, key):
    items = view(key) if isinstance(view(key), list) else []
    return [Token(yaml_text(item), view.origin(key, i)) for i, item in enumerate(items)]


def _parallelism(p):
    """((size, origin) of tensor, data, data-local) as the chart derives them: a size not set falls back to the
    others (data = dataLocal x workers, data-local = data / workers), then to 1."""
    tensor, data, local, workers = (sprig_int(p(key)) if p(key) else 0
                                    for key in ("tensor", "data", "dataLocal", "workers"))
    if data and workers and not local and data % workers:
        raise Refused("parallelism.data must be a multiple of parallelism.workers", LLM_D_HELPERS)
    dp = data or (local * workers if local and workers else local) or 1
    dpl = local or (data // workers if data and workers else data) or 1
    return ((tensor or 1, p.origin("tensor") if tensor else p.origin()),
            (dp, p.origin("data") if data else p.origin()),
            (dpl, p.origin("dataLocal") if local else p.origin()))


def _workers(p):
    workers, data, local = (sprig_int(p(key)) if p(key) else 0 for key in ("workers", "data", "dataLocal"))
    return workers or (data // local if data and local else 0) or 1


def _llm_d_args(values, role, container, sizes, model_arg):
    """vllmServe's args (imageDefault's: ``--model`` before the model): the model, the port, the parallel sizes
    above 1, the served name, tracing, then the container's args."""
    t = values.template(LLM_D_HELPERS)
    tokens = _model(values, model_arg) + [Token("--port", t), _server_port(values, role)]
    for flag, (size, origin) in zip(("--tensor-parallel-size", "--data-parallel-size", "--data-parallel-size-local"),
                                    sizes):
        tokens += [Token(flag, origin), Token(str(size), origin)] if size > 1 else []
    tokens += [Token("--served-model-name", t), values.word("modelArtifacts", "name")]
    if values("tracing", "enabled"):
        tokens += [Token("--otlp-traces-endpoint", t), values.word("tracing", "otlpEndpoint"),
                   Token("--collect-detailed-traces", t), values.word("tracing", "vllm", "collectDetailedTraces")]
    return tokens + _listed(container, "args")


def _uri(values):
    parts = go(values("modelArtifacts", "uri")).split("://")
    return parts[0], parts[-1]


def _model(values, model_arg):
    """The model word(s) modelArtifacts.uri gives (argsByProtocol): hf://ID (its ``{{ .Values.* }}`` rendered),
    pvc://CLAIM/PATH (the path under mountPath), pvc+hf://CLAIM/.../ORG/NAME (ORG/NAME)."""
    protocol, rest = _uri(values)
    origin = values.origin("modelArtifacts", "uri")
    if protocol == "hf":
        model, used = _tpl(values, rest)
        origin += used
    elif protocol == "pvc":
        model = "%s/%s" % (go(values("modelArtifacts", "mountPath")), rest.split("/", 1)[-1])
    elif protocol == "pvc+hf" and "/" in rest:
        model = "/".join(rest.split("/")[-2:])
    elif protocol == "oci":
        raise Refused("arguments for oci:// not implemented", LLM_D_HELPERS)
    else:
        return []
    model = _scalar(model)  # the chart writes it unquoted into the YAML: hf://"{{ ... }}" reads as the bare name
    return ([Token("--model", values.template(LLM_D_HELPERS))] if model_arg else []) + [Token(model, origin)]


def _scalar(text):
    import yaml

    try:
        value = yaml.safe_load(text)
    except yaml.YAMLError:
        return text
    return value if isinstance(value, str) else text


def _tpl(values, text):
    """``tpl`` of a value as far as ``{{ .Values.a.b }}`` goes (any other action stays as typed): (the text,
    ", {{ ... }} from <origin>" for each value put in)."""
    used = []

    def put(match):
        keys = tuple(match.group(1).split("."))
        used.append(", %s from %s" % (match.group(0), values.root().origin(*keys)))
        return go(values.root()(*keys))

    return _VALUES_REF.sub(put, text), "".join(used)


def _tpl_all(values, node):
    if isinstance(node, str):
        return _tpl(values, node)[0]
    if isinstance(node, dict):
        return {key: _tpl_all(values, value) for key, value in node.items()}
    if isinstance(node, list):
        return [_tpl_all(values, item) for item in node]
    return node


def _server_port(values, role):
    if role == "prefill" or values("routing", "proxy", "enabled") is False:
        return values.word("routing", "servicePort")
    return values.word("routing", "proxy", "targetPort")


def _accelerator(values, role, key):
    """The role's accelerator.<key>, else the chart-wide one."""
    return values(role, "accelerator", key) if values.at(role, "accelerator").has(key) else values("accelerator", key)


def _llm_d_env(values, role, container, sizes):
    entries = _tpl_all(values, list(container("env") or []))
    entries += [pair("DP_SIZE", str(sizes[1][0])), pair("TP_SIZE", str(sizes[0][0])),
                pair("DP_SIZE_LOCAL", str(sizes[2][0]))]
    protocol, rest = _uri(values)
    if protocol == "hf" and container("mountModelVolume"):
        entries.append(pair("HF_HOME", go(values("modelArtifacts", "mountPath"))))
    if protocol == "pvc+hf" and container("mountModelVolume"):
        entries.append(pair("HF_HUB_CACHE", "/model-cache/" + "/".join(rest.split("/")[1:-2])))
    if values("modelArtifacts", "authSecretName"):
        entries.append(secret("HF_TOKEN", go(values("modelArtifacts", "authSecretName")), "HF_TOKEN"))
    kind = go(_accelerator(values, role, "type")) or "nvidia"
    if kind != "cpu":
        entries += [pair(go(e.get("name")), go(e.get("value")))
                    for e in (values("accelerator", "env") or {}).get(kind) or [] if isinstance(e, dict)]
    if values("tracing", "enabled"):
        tracing = values.at("tracing")
        entries += [pair("OTEL_SERVICE_NAME", go(tracing("serviceNames", "vllmDecode" if role == "decode" else
                                                           "vllmPrefill"))),
                    pair("OTEL_EXPORTER_OTLP_ENDPOINT", go(tracing("otlpEndpoint"))),
                    pair("OTEL_TRACES_EXPORTER", "otlp"),
                    pair("OTEL_TRACES_SAMPLER", go(tracing("sampling", "sampler"))),
                    pair("OTEL_TRACES_SAMPLER_ARG", go(tracing("sampling", "samplerArg")))]
    return entries


def _llm_d_gpus(values, role, container, image, per_worker):
    """(count, vendor, note): with DRA the ResourceClaimTemplate's count (its ``count``, else data-local x
    tensor); else resources.limits, where the chart adds the accelerator's resource as data-local x tensor when
    the user did not set it (none for type cpu or the inference simulator's image)."""
    kind = go(_accelerator(values, role, "type")) or "nvidia"
    vendor = {"nvidia": "nvidia", "amd": "amd"}.get(kind, "")
    if _accelerator(values, role, "dra"):
        template = (values("accelerator", "resourceClaimTemplates") or {}).get(kind)
        count = sprig_int(template["count"]) if isinstance(template, dict) and "count" in template else per_worker
        claim = "%s-%s" % (template["name"], role) if isinstance(template, dict) and template.get("name") else \
            "%s-%s-claim-template" % (kind, role)
        return (count if vendor else 0), vendor, ("GPUs by DRA: the chart's ResourceClaimTemplate %s asks for %d %s "
                                                   "device(s), not resources.limits" % (claim, count, kind))
    limits = dict((container("resources") or {}).get("limits") or {})
    resources = values("accelerator", "resources") or {}
    simulated = kind == "cpu" or "llm-d-inference-sim" in image
    resource = "" if simulated else go(resources.get(kind, "nvidia.com/gpu"))
    if resource and per_worker >= 1:
        limits.setdefault(resource, str(per_worker))
    count, vendor = gpus_of(limits)
    return count, vendor, ""


# helm repo add llm-d-modelservice https://llm-d-incubation.github.io/llm-d-modelservice/ (at 3051935)
LLM_D = Chart("llm-d-modelservice", "0.4.12", "3051935", "llm-d-modelservice/llm-d-modelservice --version v0.4.12",
              LLM_D_DEFAULTS, lambda doc: isinstance(doc.get("modelArtifacts"), dict)
              and any(isinstance(doc.get(role), dict) for role in ("decode", "prefill")), _llm_d)
