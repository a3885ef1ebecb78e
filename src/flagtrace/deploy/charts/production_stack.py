"""vLLM production-stack (chart 0.1.12): ``servingEngineSpec.modelSpec[]``, one Deployment per enabled entry, a
RayCluster for ``raySpec.enabled``. What the chart's templates make of the values, written out in Python."""
import json

from ..model import Token
from .common import RELEASE, Chart, Refused, field, go, gpus_of, launch_of, pair, secret, sprig_int

# ---- vLLM production-stack: templates/deployment-vllm-multi.yaml, ray-cluster.yaml, _helpers.tpl ----

DEPLOYMENT, RAY, HELPERS = "deployment-vllm-multi.yaml", "ray-cluster.yaml", "_helpers.tpl"
# vllmConfig key -> flag, in each template's order (the Deployment spells two flags with underscores; the Ray
# script uses hyphens, and it alone passes pipelineParallelSize)
DEPLOYMENT_FLAGS = (("maxModelLen", "--max-model-len"), ("dtype", "--dtype"),
                    ("tensorParallelSize", "--tensor-parallel-size"), ("maxNumSeqs", "--max-num-seqs"),
                    ("gpuMemoryUtilization", "--gpu_memory_utilization"), ("maxLoras", "--max_loras"),
                    ("runner", "--runner"), ("convert", "--convert"))
RAY_FLAGS = (("maxModelLen", "--max-model-len"), ("dtype", "--dtype"), ("tensorParallelSize", "--tensor-parallel-size"),
             ("pipelineParallelSize", "--pipeline-parallel-size"), ("maxNumSeqs", "--max-num-seqs"),
             ("gpuMemoryUtilization", "--gpu-memory-utilization"), ("maxLoras", "--max-loras"))
PD_ENV = (("LMCACHE_LOCAL_CPU", "False"), ("LMCACHE_MAX_LOCAL_CPU_SIZE", "0"), ("LMCACHE_REMOTE_SERDE", "NULL"),
          ("UCX_TLS", "cuda_ipc,cuda_copy,tcp"))
NIXL_ENV = (("enableNixl", "LMCACHE_ENABLE_NIXL"), ("nixlRole", "LMCACHE_NIXL_ROLE"),
            ("nixlPeerHost", "LMCACHE_NIXL_RECEIVER_HOST"), ("nixlPeerPort", "LMCACHE_NIXL_RECEIVER_PORT"),
            ("nixlBufferSize", "LMCACHE_NIXL_BUFFER_SIZE"), ("nixlBufferDevice", "LMCACHE_NIXL_BUFFER_DEVICE"),
            ("nixlEnableGc", "LMCACHE_NIXL_ENABLE_GC"))
WORKER_ENV = (("workerPorts", "LMCACHE_LMCACHE_WORKER_PORTS"), ("p2pHost", "LMCACHE_P2P_HOST"),
              ("p2pInitPorts", "LMCACHE_P2P_INIT_PORTS"),
              ("workerHeartbeatTime", "LMCACHE_LMCACHE_WORKER_HEARTBEAT_TIME"))
TRUE_FALSE = {"enableNixl", "nixlEnableGc", "enableController"}  # written with ternary "True" "False"
STACK_DEFAULTS = {  # helm/values.yaml, what the templates read of it
    "servingEngineSpec": {"enableEngine": True, "containerPort": 8000,
                          "vllmApiKey": {"secretName": "", "secretKey": ""}},
    "sharedPvcStorage": {"enabled": False}, "cacheserverSpec": {"enabled": False, "servicePort": 80}}


def _production_stack(values):
    engine = values.at("servingEngineSpec")
    if not engine("enableEngine"):
        return []
    launches = []
    for i, entry in enumerate(engine("modelSpec") or []):
        spec = engine.at("modelSpec", i)
        if not isinstance(entry, dict) or entry.get("enabled") is False:
            continue
        ray = spec.has("raySpec") and spec("raySpec", "enabled")
        launch = _ray_head(values, spec) if ray else _engine(values, spec)
        if launch is not None:
            launches.append(launch)
    return launches


def _image(spec, template):
    for key in ("repository", "tag"):
        if not spec(key):
            raise Refused("Required value 'modelSpec.%s' must be defined !" % key, template)
    return "%s:%s" % (go(spec("repository")), go(spec("tag")))


def _engine(values, spec):
    """The Deployment's container ``vllm``."""
    t = spec.template(DEPLOYMENT)
    image = _image(spec, DEPLOYMENT)
    entry = "/opt/venv/bin/vllm" if spec("repository") == "lmcache/vllm-openai" else "vllm"
    tokens = [Token(entry, t), Token("serve", t), spec.word("modelURL"), Token("--host", t), Token("0.0.0.0", t),
              Token("--port", t), _port(values)] + _serve_options(spec)
    if spec("vllmConfig"):
        tokens += _config_flags(spec.at("vllmConfig"), DEPLOYMENT_FLAGS, t)
    tokens += spec.flag("--revision", "modelRevision") if spec("modelRevision") else []
    tokens += _kv_transfer(spec)
    if spec("chatTemplate"):
        tokens += [Token("--chat-template", spec.origin("chatTemplate")),
                   Token("/templates/" + go(spec("chatTemplate")), spec.origin("chatTemplate"))]
    gpus = gpus_of(_stack_limits(spec, DEPLOYMENT))
    notes = [] if gpus[0] or spec("resources") else ["%s sets no requestGPU: the chart asks for no GPU" % spec.key()]
    if spec.at("vllmConfig").has("pipelineParallelSize"):
        notes.append("%s is not passed on: the chart's Deployment has no --pipeline-parallel-size (only its Ray "
                     "cluster, raySpec.enabled, does)" % spec.key("vllmConfig", "pipelineParallelSize"))
    return launch_of(values, "Deployment/%s-%s-deployment-vllm container vllm" % (RELEASE, go(spec("name"))), image,
                   tokens, _engine_env(values, spec), gpus, notes)


def _port(values):
    if values("servingEngineSpec", "containerPort"):
        return values.word("servingEngineSpec", "containerPort")
    return Token("8000", values.template(HELPERS))


def _serve_options(spec):
    tokens = [Token("--enable-lora", spec.origin("enableLoRA"))] if spec("enableLoRA") else []
    tokens += [Token("--enable-auto-tool-choice", spec.origin("enableTool"))] if spec("enableTool") else []
    return tokens + (spec.flag("--tool-call-parser", "toolCallParser") if spec("toolCallParser") else [])


def _config_flags(config, flags, template=None):
    """vllmConfig's flags; ``template`` (the Deployment's) also writes --no-enable-prefix-caching when it is not
    true, set or not."""
    tokens = []
    if config.has("enableChunkedPrefill"):
        chunked = "--enable-chunked-prefill" if config("enableChunkedPrefill") else "--no-enable-chunked-prefill"
        tokens.append(Token(chunked, config.origin("enableChunkedPrefill")))
    if config("enablePrefixCaching"):
        tokens.append(Token("--enable-prefix-caching", config.origin("enablePrefixCaching")))
    elif template is not None:
        where = config.origin("enablePrefixCaching") if config.has("enablePrefixCaching") else template
        tokens.append(Token("--no-enable-prefix-caching", where))
    for key, flag in flags:
        tokens += config.flag(flag, key) if config.has(key) else []
    extra = config("extraArgs")
    return tokens + [config.word("extraArgs", i) for i in range(len(extra))] if isinstance(extra, list) else tokens


def _kv_transfer(spec):
    cache = spec.at("lmcacheConfig")
    if not (cache() and cache("enabled")):
        return []
    role = go(cache("kvRole")) or "kv_both"
    if cache.has("enablePD"):
        role_port = json.dumps(go(cache("nixlRole"))) if cache("nixlRole") is not None else ""
        text = ('{"kv_connector":"LMCacheConnectorV1","kv_role":"%s","kv_connector_extra_config":{'
                '"discard_partial_chunks": false, "lmcache_rpc_port": %s}}' % (role, role_port))
    elif spec.at("vllmConfig").has("v0") and go(spec("vllmConfig", "v0")) == "1":
        text = '{"kv_connector":"LMCacheConnector","kv_role":"%s"}' % role
    else:
        text = '{"kv_connector":"LMCacheConnectorV1","kv_role":"%s"}' % role
    return [Token("--kv-transfer-config", cache.origin("enabled")), Token(text, cache.origin())]


def _stack_limits(spec, template):
    """The container's resources.limits: ``resources`` as given, else the chart's from requestGPU (as
    requestGPUType, else nvidia.com/gpu); requestCPU and requestMemory are required then."""
    if spec("resources"):
        return (spec("resources") or {}).get("limits") or {}
    for key in ("requestMemory", "requestCPU"):
        if spec(key) is None or spec(key) == "":
            raise Refused("Value 'modelSpec.%s' must be defined !" % key, HELPERS)
    gpus = sprig_int(spec("requestGPU"))
    return {go(spec("requestGPUType")) or "nvidia.com/gpu": gpus} if gpus > 0 else {}


def _engine_env(values, spec):
    home = "/data/shared-pvc-storage" if values("sharedPvcStorage", "enabled") else "/data" if spec.has(
        "pvcStorage") else "/tmp"
    entries = [pair("PYTHONHASHSEED", "123"), pair("HF_HOME", home), field("POD_IP", "status.podIP")]
    config = spec("vllmConfig")
    if config:
        entries.append(pair("VLLM_USE_V1", "0") if "v0" in config and go(config["v0"]) == "1" else
                       pair("PROMETHEUS_MULTIPROC_DIR", go(config.get("prometheusMultiprocDir") or "/tmp")))
    entries += _hf_token(spec) + _api_key(values)
    entries += list(values("servingEngineSpec", "env") or []) + list(spec("env") or [])
    return entries + _lmcache_env(values, spec)


def _hf_token(spec):
    token = spec("hf_token")
    if not token:
        return []
    if isinstance(token, str):
        return [secret("HF_TOKEN", "%s-secrets" % RELEASE, "hf_token_%s" % go(spec("name")))]
    return [secret("HF_TOKEN", go(token.get("secretName")), go(token.get("secretKey")))]


def _api_key(values):
    key = values("servingEngineSpec", "vllmApiKey")
    if isinstance(key, str) and key:
        return [secret("VLLM_API_KEY", "%s-secrets" % RELEASE, "vllmApiKey")]
    if isinstance(key, dict) and key.get("secretName") and key.get("secretKey"):
        return [secret("VLLM_API_KEY", go(key["secretName"]), go(key["secretKey"]))]
    return []


def _present(cache, table):
    """``KEY=value`` for each key of the table the map has (hasKey)."""
    return [pair(name, ("True" if cache(key) else "False") if key in TRUE_FALSE else go(cache(key)))
            for key, name in table if cache.has(key)]


def _lmcache_env(values, spec):
    cache = spec.at("lmcacheConfig")
    if not cache():
        return []
    entries = _lmcache_enabled(cache) + _present(cache, (("cudaVisibleDevices", "CUDA_VISIBLE_DEVICES"),))
    if cache("enablePD"):
        entries += [pair(name, value) for name, value in PD_ENV] + _present(cache, NIXL_ENV)
    if cache.has("cpuOffloadingBufferSize") and sprig_int(cache("cpuOffloadingBufferSize")) > 0:
        entries += [pair("LMCACHE_LOCAL_CPU", "True"),
                    pair("LMCACHE_MAX_LOCAL_CPU_SIZE", go(cache("cpuOffloadingBufferSize")))]
    entries += _present(cache, (("diskOffloadingBufferSize", "LMCACHE_MAX_LOCAL_DISK_SIZE"),))
    entries += _cache_server(values) + _present(cache, (("enableController", "LMCACHE_ENABLE_CONTROLLER"),))
    entries.append(pair("LMCACHE_LMCACHE_INSTANCE_ID", go(cache("instanceId"))) if cache.has("instanceId")
                   else field("LMCACHE_LMCACHE_INSTANCE_ID", "metadata.name"))
    router = "%s-router-service" % RELEASE
    entries += [pair(name, "%s:%s" % (router, go(cache(key)))) for key, name in (
        ("controllerPort", "LMCACHE_CONTROLLER_PULL_URL"), ("controllerReplyPort", "LMCACHE_CONTROLLER_REPLY_URL"))
        if cache.has(key)]
    return entries + _present(cache, WORKER_ENV)


def _lmcache_enabled(cache):
    if not cache("enabled"):
        return []
    return [pair("LMCACHE_USE_EXPERIMENTAL", "True"), pair("VLLM_RPC_TIMEOUT", "1000000"),
            pair("LMCACHE_LOG_LEVEL", go(cache("logLevel")) or "INFO")]


def _cache_server(values):
    server = values.at("cacheserverSpec")
    if not server("enabled"):
        return []
    url = pair("LMCACHE_REMOTE_URL", "lm://%s-cache-server-service:%s" % (RELEASE, go(server("servicePort"))))
    return [url] + ([pair("LMCACHE_REMOTE_SERDE", go(server("serde")))] if server("serde") else [])


def _ray_head(values, spec):
    """The RayCluster's head container (``raySpec.enabled``): the chart's vllm-entrypoint.sh runs the vLLM command
    there (the workers run only ``ray start``)."""
    head = gpus_of(_stack_limits(spec.at("raySpec", "headNode"), RAY))
    replicas = sprig_int(spec("replicaCount"))
    workers = replicas * gpus_of(_stack_limits(spec, RAY))[0]
    name = go(spec("name"))
    notes = ["vllm serve is the last line of the chart's vllm-entrypoint.sh (ConfigMap %s-vllm-start-script), which "
             "the head's command starts in the background once KubeRay's ray start --head has run; the Ray cluster "
             "has %d GPU(s): %d on the head, %d on %d worker(s)" % (name, head[0] + workers, head[0], workers,
                                                                    replicas)]
    return launch_of(values, "RayCluster/%s-%s-raycluster headGroupSpec container vllm-ray-head" % (RELEASE, name),
                   _image(spec, RAY), _ray_words(values, spec), _ray_env(values, spec), head, notes)


def _ray_words(values, spec):
    """vllm-entrypoint.sh's ``ARGS``, which it ends by running (``exec "${ARGS[@]}"``)."""
    t = spec.template(RAY)
    tokens = [Token("vllm", t), Token("serve", t), spec.word("modelURL"), Token("--host", t), Token("0.0.0.0", t),
              Token("--port", t), _port(values), Token("--distributed-executor-backend", t), Token("ray", t)]
    tokens += _serve_options(spec)
    tokens += _config_flags(spec.at("vllmConfig"), RAY_FLAGS) if spec("vllmConfig") else []
    tokens += spec.flag("--revision", "modelRevision") if spec("modelRevision") else []
    if spec("lmcacheConfig") and spec("lmcacheConfig", "enabled"):
        v1 = spec.at("vllmConfig").has("v1") and go(spec("vllmConfig", "v1")) == "1"
        origin = spec.origin("lmcacheConfig", "enabled")
        tokens += [Token("--kv-transfer-config", origin), Token('{"kv_connector":"%s","kv_role":"kv_both"}' % (
            "LMCacheConnectorV1" if v1 else "LMCacheConnector"), origin)]
    return tokens + (spec.flag("--chat-template", "chatTemplate") if spec("chatTemplate") else [])


def _ray_env(values, spec):
    entries = [field("VLLM_HOST_IP", "status.podIP"), pair("EXPECTED_NODES", str(sprig_int(spec("replicaCount")) + 1)),
               pair("HF_HOME", "/data" if spec.has("pvcStorage") else "/tmp")]
    config = spec("vllmConfig")
    if config:
        entries.append(pair("VLLM_USE_V1", go(config["v1"]) if "v1" in config else "0"))
    entries += _hf_token(spec) + _api_key(values) + list(spec("env") or [])
    return entries + _ray_lmcache_env(values, spec)


def _ray_lmcache_env(values, spec):
    """The head's lmcacheConfig env: ray-cluster.yaml's own list, not the Deployment's."""
    cache = spec.at("lmcacheConfig")
    if not cache():
        return []
    entries = _lmcache_enabled(cache)
    if cache("cpuOffloadingBufferSize"):
        entries += [pair("LMCACHE_LOCAL_CPU", "True"),
                    pair("LMCACHE_MAX_LOCAL_CPU_SIZE", go(cache("cpuOffloadingBufferSize")))]
    if cache("diskOffloadingBufferSize"):
        entries += [pair("LMCACHE_LOCAL_DISK", "True"),
                    pair("LMCACHE_MAX_LOCAL_DISK_SIZE", go(cache("diskOffloadingBufferSize")))]
    entries += _cache_server(values) + _present(cache, (("enableController", "LMCACHE_ENABLE_CONTROLLER"),
                                                        ("instanceId", "LMCACHE_INSTANCE_ID")))
    service = "%s-%s-service" % (RELEASE, go(spec("name")))
    entries += [pair(name, "%s:%s" % (service, go(cache(key)))) for key, name in (
        ("controllerPort", "LMCACHE_CONTROLLER_URL"), ("controllerReplyPort", "LMCACHE_CONTROLLER_REPLY_URL"))
        if cache.has(key)]
    if cache.has("workerPort"):
        entries.append(pair("LMCACHE_WORKER_PORT", "%s-service:%s" % (RELEASE, go(cache("workerPort")))))
    return entries + _present(cache, (("workerHeartbeatTime", "LMCACHE_LMCACHE_WORKER_HEARTBEAT_TIME"),))


# helm repo add vllm https://vllm-project.github.io/production-stack (helm/, at a6c01db)
STACK = Chart("production-stack", "0.1.12", "a6c01db", "vllm/vllm-stack --version 0.1.12", STACK_DEFAULTS,
              lambda doc: isinstance(doc.get("servingEngineSpec"), dict)
              and isinstance(doc["servingEngineSpec"].get("modelSpec"), list), _production_stack)
