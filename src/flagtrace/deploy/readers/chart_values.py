"""Reader of the values files of two charts, rendered here without helm: what the chart's templates make of the
values, written out in Python (no template engine). vLLM production-stack (``servingEngineSpec.modelSpec[]``:
one Deployment per enabled entry, a RayCluster for ``raySpec.enabled``) and llm-d-modelservice
(``modelArtifacts`` with the ``decode``/``prefill`` containers, ``modelCommand`` vllmServe / imageDefault /
custom). Each container that runs a framework is a Launch: its command and args as the chart renders them,
each word's origin the values key and file:line it came from (or the chart's default, or the chart template
that writes it), its env, the image's release, its GPU count. The values are the chart's defaults merged with
the file as helm merges them (a map key by key; a list replaces the whole list) and print as helm prints them
(every number a float64: 1000000 is 1e+06). A values file of any other chart is not recognised (launch.py
gives it one row with the helm command)."""
import collections
import decimal
import json
import os
import re

from .. import images
from ..entry_points import recognise, wrapper_of
from ..kubelet_env import container_env, expand, injected
from ..model import Launch, Token, unreadable
from ..shell_script import SHELL_SUFFIXES, unwrap
from ..strategic_merge import merge
from ..yaml_lines import value_lines

FORM = "a Helm values file of vLLM production-stack or llm-d-modelservice (rendered by flagtrace)"
RELEASE = "RELEASE"  # the release name, only known to helm install (as in `helm template RELEASE ...`)
GPU_RESOURCES = {"nvidia.com/gpu": "nvidia", "amd.com/gpu": "amd"}  # counted as the Kubernetes reader counts them
_VAR_REF = re.compile(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)")
_PLACEHOLDER = re.compile(r"<[^<>]+>")  # what only the cluster knows (kubelet_env.py)
_VALUES_REF = re.compile(r"\{\{-?\s*\.Values\.([A-Za-z0-9_.]+?)\s*-?\}\}")


def recognises(artifact):
    """A single mapping, no ``kind``, shaped as one of the two charts' values."""
    return not artifact.source.lower().endswith(SHELL_SUFFIXES) and _chart_of(artifact) is not None


def read(artifact):
    chart = _chart_of(artifact)
    values = _Values.of(chart, artifact)
    try:
        launches = chart.render(values)
    except _Refused as refused:
        return [unreadable(artifact.source, "the values file", "-f %s: helm template fails on these values: %s (chart "
                           "template %s, %s %s)" % (artifact.source, refused.args[0], refused.args[1], chart.label,
                                                    chart.version))]
    for launch in launches:
        launch.notes.append("rendered by flagtrace from the chart's templates (%s chart %s at %s), not by helm; check "
                            "with: helm template %s %s -f %s | flagtrace check -f -" % (
                                chart.label, chart.version, chart.commit, RELEASE, chart.reference, artifact.source))
    return launches


def _chart_of(artifact):
    documents = artifact.documents
    if len(documents) != 1 or not isinstance(documents[0], dict) or {"kind", "apiVersion"} & set(documents[0]):
        return None
    return next((chart for chart in CHARTS if chart.recognise(documents[0])), None)


class _Refused(Exception):
    """What the chart's ``required`` or ``fail`` says: helm template renders nothing. (message, template)"""


class _Values:
    """The chart's values.yaml merged with the file's, seen from a path (``at``): a value (``values(*keys)``),
    whether its map has a key (``has``, helm's hasKey) and where it came from (``origin``)."""

    def __init__(self, chart, source, tree, lines, path=()):
        self.chart, self.source, self.tree, self.lines, self.path = chart, source, tree, lines, path
        self.file = os.path.basename(source)

    @classmethod
    def of(cls, chart, artifact):
        tree = merge(chart.defaults, artifact.documents[0], merge_keys={})  # as helm merges a values file
        return cls(chart, artifact.source, tree, value_lines(artifact.text))

    def at(self, *keys):
        return _Values(self.chart, self.source, self.tree, self.lines, self.path + keys)

    def root(self):
        return _Values(self.chart, self.source, self.tree, self.lines)

    def __call__(self, *keys):
        node = self.tree
        for key in self.path + keys:
            if isinstance(node, dict):
                node = node.get(key)
            elif isinstance(node, list) and isinstance(key, int) and key < len(node):
                node = node[key]
            else:
                return None
        return node

    def has(self, key):
        return isinstance(self(), dict) and key in self()

    def key(self, *keys):
        """The dotted name of a value (an item of a list in ``keys``: the list's name)."""
        keys = list(keys)
        while keys and isinstance(keys[-1], int):
            keys.pop()
        named = self.path + tuple(keys)
        return "".join("[%d]" % k if isinstance(k, int) else ("." if i else "") + str(k) for i, k in enumerate(named))

    def origin(self, *keys):
        """``key (file:line)`` for a value the file sets (a list's item: its own line), else the chart's default."""
        line = self.lines.get(self.path + keys)
        if line:
            return "%s (%s:%d)" % (self.key(*keys), self.file, line)
        return "%s (the chart's values.yaml, %s %s)" % (self.key(*keys), self.chart.label, self.chart.version)

    def template(self, name):
        return "chart template %s (%s %s)" % (name, self.chart.label, self.chart.version)

    def word(self, *keys):
        return Token(_go(self(*keys)), self.origin(*keys))

    def flag(self, flag, key):
        """The flag and the key's value, both from the key."""
        return [Token(flag, self.origin(key)), self.word(key)]


def _go(value):
    """A value as a template prints it (``{{ x }}``, ``quote``): helm reads every number as a float64, printed
    by Go's %v (4096, 0.8, 1e+06); booleans true/false; null nothing."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        number = decimal.Decimal(repr(float(value))).normalize()
        exponent = number.adjusted()
        if -4 <= exponent < 6 or not number:  # %v's shortest form: plain from 1e-4 to below 1e+06
            return format(number, "f")
        digits = "".join(map(str, number.as_tuple().digits))
        return "%s%s%se%s%02d" % ("-" if number < 0 else "", digits[0], "." + digits[1:] if digits[1:] else "",
                                  "-" if exponent < 0 else "+", abs(exponent))
    return str(value)


def _yaml_text(value):
    """A list item as ``toYaml`` writes it and the API server reads it back (a number as JSON writes it)."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e21:
        return str(int(value))
    return _go(value) if isinstance(value, bool) or value is None else str(value)


def _int(value):
    """sprig's ``int``: a number truncated, a numeric string parsed, anything else 0."""
    if isinstance(value, (bool, int, float)):
        return int(value)
    try:
        return int(float(str(value).strip()))
    except (TypeError, ValueError):
        return 0


def _pair(name, value):
    return {"name": name, "value": value}


def _field(name, path):
    return {"name": name, "valueFrom": {"fieldRef": {"fieldPath": path}}}


def _secret(name, secret, key):
    return {"name": name, "valueFrom": {"secretKeyRef": {"name": secret, "key": key}}}


def _gpus(limits):
    """(count, vendor) of a container's resources.limits."""
    for resource, vendor in GPU_RESOURCES.items():
        if resource in limits:
            return _int(limits[resource]), vendor
    return 0, ""


def _launch(values, name, image, tokens, entries, gpus, notes=(), given=None, index=("0", "the first pod")):
    """The Launch of one rendered container as the kubelet runs it: its env (``entries`` as a pod spec lists
    them, after what a controller injects: ``given``), its words with ``$(VAR)`` expanded and a ``bash -c``
    script's framework command; None when it runs no framework."""
    notes = list(notes)
    env = dict(given or {}, **container_env({"env": entries}, notes, index))
    words, undefined = _expanded(tokens, env)
    argv = [t.text for t in words]
    framework, wrapper = recognise(argv), wrapper_of(argv) or images.wrapper_image(image, {})
    if not framework and not wrapper:
        return None
    release, note = images.release_of(image) if image else ("", "")
    problem = ("%s: %s: the container's env does not define %s (Kubernetes passes it on as typed); add it to env:"
               % (values.source, name, ", ".join(undefined))) if undefined else ""
    held = [t for t in argv if _PLACEHOLDER.fullmatch(t)]
    return Launch(source=values.source, name=name, tokens=words, env=env, image=image, gpus=gpus[0],
                  gpu_vendor=gpus[1], release=release, notes=([note] if note else []) + notes, framework=framework,
                  wrapper=wrapper, problem=problem, placeholders=list(dict.fromkeys(held)))


def _expanded(tokens, env):
    """(the words as the kubelet passes them, ``$(VAR)`` the env does not define)."""
    words, undefined = [], []
    for token in tokens:
        text, used = expand(token.text, env)
        undefined += ["$(%s) (%s)" % (n, token.origin) for n in _VAR_REF.findall(text) if n not in env]
        words.append(Token(text, token.origin + (", $(%s) from env" % ", ".join(used) if used else "")))
    inner = unwrap(words, env)
    return (inner.tokens if inner else words), undefined


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
            raise _Refused("Required value 'modelSpec.%s' must be defined !" % key, template)
    return "%s:%s" % (_go(spec("repository")), _go(spec("tag")))


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
                   Token("/templates/" + _go(spec("chatTemplate")), spec.origin("chatTemplate"))]
    gpus = _gpus(_stack_limits(spec, DEPLOYMENT))
    notes = [] if gpus[0] or spec("resources") else ["%s sets no requestGPU: the chart asks for no GPU" % spec.key()]
    if spec.at("vllmConfig").has("pipelineParallelSize"):
        notes.append("%s is not passed on: the chart's Deployment has no --pipeline-parallel-size (only its Ray "
                     "cluster, raySpec.enabled, does)" % spec.key("vllmConfig", "pipelineParallelSize"))
    return _launch(values, "Deployment/%s-%s-deployment-vllm container vllm" % (RELEASE, _go(spec("name"))), image,
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
    role = _go(cache("kvRole")) or "kv_both"
    if cache.has("enablePD"):
        role_port = json.dumps(_go(cache("nixlRole"))) if cache("nixlRole") is not None else ""
        text = ('{"kv_connector":"LMCacheConnectorV1","kv_role":"%s","kv_connector_extra_config":{'
                '"discard_partial_chunks": false, "lmcache_rpc_port": %s}}' % (role, role_port))
    elif spec.at("vllmConfig").has("v0") and _go(spec("vllmConfig", "v0")) == "1":
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
            raise _Refused("Value 'modelSpec.%s' must be defined !" % key, HELPERS)
    gpus = _int(spec("requestGPU"))
    return {_go(spec("requestGPUType")) or "nvidia.com/gpu": gpus} if gpus > 0 else {}


def _engine_env(values, spec):
    home = "/data/shared-pvc-storage" if values("sharedPvcStorage", "enabled") else "/data" if spec.has(
        "pvcStorage") else "/tmp"
    entries = [_pair("PYTHONHASHSEED", "123"), _pair("HF_HOME", home), _field("POD_IP", "status.podIP")]
    config = spec("vllmConfig")
    if config:
        entries.append(_pair("VLLM_USE_V1", "0") if "v0" in config and _go(config["v0"]) == "1" else
                       _pair("PROMETHEUS_MULTIPROC_DIR", _go(config.get("prometheusMultiprocDir") or "/tmp")))
    entries += _hf_token(spec) + _api_key(values)
    entries += list(values("servingEngineSpec", "env") or []) + list(spec("env") or [])
    return entries + _lmcache_env(values, spec)


def _hf_token(spec):
    token = spec("hf_token")
    if not token:
        return []
    if isinstance(token, str):
        return [_secret("HF_TOKEN", "%s-secrets" % RELEASE, "hf_token_%s" % _go(spec("name")))]
    return [_secret("HF_TOKEN", _go(token.get("secretName")), _go(token.get("secretKey")))]


def _api_key(values):
    key = values("servingEngineSpec", "vllmApiKey")
    if isinstance(key, str) and key:
        return [_secret("VLLM_API_KEY", "%s-secrets" % RELEASE, "vllmApiKey")]
    if isinstance(key, dict) and key.get("secretName") and key.get("secretKey"):
        return [_secret("VLLM_API_KEY", _go(key["secretName"]), _go(key["secretKey"]))]
    return []


def _present(cache, table):
    """``KEY=value`` for each key of the table the map has (hasKey)."""
    return [_pair(name, ("True" if cache(key) else "False") if key in TRUE_FALSE else _go(cache(key)))
            for key, name in table if cache.has(key)]


def _lmcache_env(values, spec):
    cache = spec.at("lmcacheConfig")
    if not cache():
        return []
    entries = _lmcache_enabled(cache) + _present(cache, (("cudaVisibleDevices", "CUDA_VISIBLE_DEVICES"),))
    if cache("enablePD"):
        entries += [_pair(name, value) for name, value in PD_ENV] + _present(cache, NIXL_ENV)
    if cache.has("cpuOffloadingBufferSize") and _int(cache("cpuOffloadingBufferSize")) > 0:
        entries += [_pair("LMCACHE_LOCAL_CPU", "True"),
                    _pair("LMCACHE_MAX_LOCAL_CPU_SIZE", _go(cache("cpuOffloadingBufferSize")))]
    entries += _present(cache, (("diskOffloadingBufferSize", "LMCACHE_MAX_LOCAL_DISK_SIZE"),))
    entries += _cache_server(values) + _present(cache, (("enableController", "LMCACHE_ENABLE_CONTROLLER"),))
    entries.append(_pair("LMCACHE_LMCACHE_INSTANCE_ID", _go(cache("instanceId"))) if cache.has("instanceId")
                   else _field("LMCACHE_LMCACHE_INSTANCE_ID", "metadata.name"))
    router = "%s-router-service" % RELEASE
    entries += [_pair(name, "%s:%s" % (router, _go(cache(key)))) for key, name in (
        ("controllerPort", "LMCACHE_CONTROLLER_PULL_URL"), ("controllerReplyPort", "LMCACHE_CONTROLLER_REPLY_URL"))
        if cache.has(key)]
    return entries + _present(cache, WORKER_ENV)


def _lmcache_enabled(cache):
    if not cache("enabled"):
        return []
    return [_pair("LMCACHE_USE_EXPERIMENTAL", "True"), _pair("VLLM_RPC_TIMEOUT", "1000000"),
            _pair("LMCACHE_LOG_LEVEL", _go(cache("logLevel")) or "INFO")]


def _cache_server(values):
    server = values.at("cacheserverSpec")
    if not server("enabled"):
        return []
    url = _pair("LMCACHE_REMOTE_URL", "lm://%s-cache-server-service:%s" % (RELEASE, _go(server("servicePort"))))
    return [url] + ([_pair("LMCACHE_REMOTE_SERDE", _go(server("serde")))] if server("serde") else [])


def _ray_head(values, spec):
    """The RayCluster's head container (``raySpec.enabled``): the chart's vllm-entrypoint.sh runs the vLLM command
    there (the workers run only ``ray start``)."""
    head = _gpus(_stack_limits(spec.at("raySpec", "headNode"), RAY))
    replicas = _int(spec("replicaCount"))
    workers = replicas * _gpus(_stack_limits(spec, RAY))[0]
    name = _go(spec("name"))
    notes = ["vllm serve is the last line of the chart's vllm-entrypoint.sh (ConfigMap %s-vllm-start-script), which "
             "the head's command starts in the background once KubeRay's ray start --head has run; the Ray cluster "
             "has %d GPU(s): %d on the head, %d on %d worker(s)" % (name, head[0] + workers, head[0], workers,
                                                                    replicas)]
    return _launch(values, "RayCluster/%s-%s-raycluster headGroupSpec container vllm-ray-head" % (RELEASE, name),
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
        v1 = spec.at("vllmConfig").has("v1") and _go(spec("vllmConfig", "v1")) == "1"
        origin = spec.origin("lmcacheConfig", "enabled")
        tokens += [Token("--kv-transfer-config", origin), Token('{"kv_connector":"%s","kv_role":"kv_both"}' % (
            "LMCacheConnectorV1" if v1 else "LMCacheConnector"), origin)]
    return tokens + (spec.flag("--chat-template", "chatTemplate") if spec("chatTemplate") else [])


def _ray_env(values, spec):
    entries = [_field("VLLM_HOST_IP", "status.podIP"), _pair("EXPECTED_NODES", str(_int(spec("replicaCount")) + 1)),
               _pair("HF_HOME", "/data" if spec.has("pvcStorage") else "/tmp")]
    config = spec("vllmConfig")
    if config:
        entries.append(_pair("VLLM_USE_V1", _go(config["v1"]) if "v1" in config else "0"))
    entries += _hf_token(spec) + _api_key(values) + list(spec("env") or [])
    return entries + _ray_lmcache_env(values, spec)


def _ray_lmcache_env(values, spec):
    """The head's lmcacheConfig env: ray-cluster.yaml's own list, not the Deployment's."""
    cache = spec.at("lmcacheConfig")
    if not cache():
        return []
    entries = _lmcache_enabled(cache)
    if cache("cpuOffloadingBufferSize"):
        entries += [_pair("LMCACHE_LOCAL_CPU", "True"),
                    _pair("LMCACHE_MAX_LOCAL_CPU_SIZE", _go(cache("cpuOffloadingBufferSize")))]
    if cache("diskOffloadingBufferSize"):
        entries += [_pair("LMCACHE_LOCAL_DISK", "True"),
                    _pair("LMCACHE_MAX_LOCAL_DISK_SIZE", _go(cache("diskOffloadingBufferSize")))]
    entries += _cache_server(values) + _present(cache, (("enableController", "LMCACHE_ENABLE_CONTROLLER"),
                                                        ("instanceId", "LMCACHE_INSTANCE_ID")))
    service = "%s-%s-service" % (RELEASE, _go(spec("name")))
    entries += [_pair(name, "%s:%s" % (service, _go(cache(key)))) for key, name in (
        ("controllerPort", "LMCACHE_CONTROLLER_URL"), ("controllerReplyPort", "LMCACHE_CONTROLLER_REPLY_URL"))
        if cache.has(key)]
    if cache.has("workerPort"):
        entries.append(_pair("LMCACHE_WORKER_PORT", "%s-service:%s" % (RELEASE, _go(cache("workerPort")))))
    return entries + _present(cache, (("workerHeartbeatTime", "LMCACHE_LMCACHE_WORKER_HEARTBEAT_TIME"),))


# ---- llm-d-modelservice: templates/_helpers.tpl, _helpers-dra.tpl, {decode,prefill}-{deployment,lws}.yaml ----

LLM_D_HELPERS = "_helpers.tpl"
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
                    "env": {"intel-i915": [_pair("VLLM_USE_V1", "1"), _pair("TORCH_LLM_ALLREDUCE", "1"),
                                           _pair("VLLM_WORKER_MULTIPROC_METHOD", "spawn")],
                            "intel-xe": [_pair("VLLM_WORKER_MULTIPROC_METHOD", "spawn")]}},
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
        raise _Refused("routing.proxy.image must be specified", LLM_D_HELPERS)
    launches = []
    for role in roles:
        for i in range(len(values(role, "containers") or [])):
            launch = _llm_d_container(values, role, values.at(role, "containers", i), multinode)
            if launch is not None:
                launches.append(launch)
    return launches


def _fullname(values):
    if values("fullnameOverride"):
        name = _go(values("fullnameOverride"))[:55]
    else:
        chart = _go(values("nameOverride")) or "llm-d-modelservice"
        name = (RELEASE if chart in RELEASE else "%s-%s" % (RELEASE, chart))[:55]
    return name[:-1] if name.endswith("-") else name


def _llm_d_container(values, role, container, multinode):
    """One container of the role's pods (llm-d-modelservice.container); the routing proxy the decode pods also run
    is no framework, so no Launch."""
    image = _go(container("image"))
    if not image:
        raise _Refused("image of container is required", LLM_D_HELPERS)
    sizes = _parallelism(values.at(role, "parallelism"))
    count, vendor, note = _llm_d_gpus(values, role, container, image, sizes[0][0] * sizes[2][0])
    owner = "%s-%s" % (_fullname(values), role)
    given, index = _leader_worker_set(values, role, owner) if multinode else ({}, ("0", "the first pod"))
    name = "%s/%s %scontainer %s" % ("LeaderWorkerSet" if multinode else "Deployment", owner,
                                     "worker " if multinode else "", _go(container("name")) or "vllm")
    return _launch(values, name, image, _llm_d_words(values, role, container, image, sizes),
                   _llm_d_env(values, role, container, sizes), (count, vendor), [note] if note else [], given, index)


def _llm_d_words(values, role, container, image, sizes):
    """The container's command + args by its modelCommand (llm-d-modelservice.command)."""
    t = values.template(LLM_D_HELPERS)
    mode = _go(container("modelCommand")) or "custom"
    if mode == "vllmServe":
        return [Token("vllm", t), Token("serve", t)] + _llm_d_args(values, role, container, sizes, False)
    if mode == "imageDefault":
        words, where = images.entrypoint(image, images.release_of(image)[0])
        return [Token(w, where) for w in words] + _llm_d_args(values, role, container, sizes, True)
    if mode != "custom":
        raise _Refused(".container.modelCommand is not as expected. Valid values are `vllmServe`, `imageDefault` and "
                       "`custom`.", LLM_D_HELPERS)
    if not container("command"):
        raise _Refused("When .container.modelCommand not set or `custom`, a `command` is required.", LLM_D_HELPERS)
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
    return [Token(_yaml_text(item), view.origin(key, i)) for i, item in enumerate(items)]


def _parallelism(p):
    """((size, origin) of tensor, data, data-local) as the chart derives them: a size not set falls back to the
    others (data = dataLocal x workers, data-local = data / workers), then to 1."""
    tensor, data, local, workers = (_int(p(key)) if p(key) else 0
                                    for key in ("tensor", "data", "dataLocal", "workers"))
    if data and workers and not local and data % workers:
        raise _Refused("parallelism.data must be a multiple of parallelism.workers", LLM_D_HELPERS)
    dp = data or (local * workers if local and workers else local) or 1
    dpl = local or (data // workers if data and workers else data) or 1
    return ((tensor or 1, p.origin("tensor") if tensor else p.origin()),
            (dp, p.origin("data") if data else p.origin()),
            (dpl, p.origin("dataLocal") if local else p.origin()))


def _workers(p):
    workers, data, local = (_int(p(key)) if p(key) else 0 for key in ("workers", "data", "dataLocal"))
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
    parts = _go(values("modelArtifacts", "uri")).split("://")
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
        model = "%s/%s" % (_go(values("modelArtifacts", "mountPath")), rest.split("/", 1)[-1])
    elif protocol == "pvc+hf" and "/" in rest:
        model = "/".join(rest.split("/")[-2:])
    elif protocol == "oci":
        raise _Refused("arguments for oci:// not implemented", LLM_D_HELPERS)
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
        return _go(values.root()(*keys))

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
    entries += [_pair("DP_SIZE", str(sizes[1][0])), _pair("TP_SIZE", str(sizes[0][0])),
                _pair("DP_SIZE_LOCAL", str(sizes[2][0]))]
    protocol, rest = _uri(values)
    if protocol == "hf" and container("mountModelVolume"):
        entries.append(_pair("HF_HOME", _go(values("modelArtifacts", "mountPath"))))
    if protocol == "pvc+hf" and container("mountModelVolume"):
        entries.append(_pair("HF_HUB_CACHE", "/model-cache/" + "/".join(rest.split("/")[1:-2])))
    if values("modelArtifacts", "authSecretName"):
        entries.append(_secret("HF_TOKEN", _go(values("modelArtifacts", "authSecretName")), "HF_TOKEN"))
    kind = _go(_accelerator(values, role, "type")) or "nvidia"
    if kind != "cpu":
        entries += [_pair(_go(e.get("name")), _go(e.get("value")))
                    for e in (values("accelerator", "env") or {}).get(kind) or [] if isinstance(e, dict)]
    if values("tracing", "enabled"):
        tracing = values.at("tracing")
        entries += [_pair("OTEL_SERVICE_NAME", _go(tracing("serviceNames", "vllmDecode" if role == "decode" else
                                                           "vllmPrefill"))),
                    _pair("OTEL_EXPORTER_OTLP_ENDPOINT", _go(tracing("otlpEndpoint"))),
                    _pair("OTEL_TRACES_EXPORTER", "otlp"),
                    _pair("OTEL_TRACES_SAMPLER", _go(tracing("sampling", "sampler"))),
                    _pair("OTEL_TRACES_SAMPLER_ARG", _go(tracing("sampling", "samplerArg")))]
    return entries


def _llm_d_gpus(values, role, container, image, per_worker):
    """(count, vendor, note): with DRA the ResourceClaimTemplate's count (its ``count``, else data-local x
    tensor); else resources.limits, where the chart adds the accelerator's resource as data-local x tensor when
    the user did not set it (none for type cpu or the inference simulator's image)."""
    kind = _go(_accelerator(values, role, "type")) or "nvidia"
    vendor = {"nvidia": "nvidia", "amd": "amd"}.get(kind, "")
    if _accelerator(values, role, "dra"):
        template = (values("accelerator", "resourceClaimTemplates") or {}).get(kind)
        count = _int(template["count"]) if isinstance(template, dict) and "count" in template else per_worker
        claim = "%s-%s" % (template["name"], role) if isinstance(template, dict) and template.get("name") else \
            "%s-%s-claim-template" % (kind, role)
        return (count if vendor else 0), vendor, ("GPUs by DRA: the chart's ResourceClaimTemplate %s asks for %d %s "
                                                   "device(s), not resources.limits" % (claim, count, kind))
    limits = dict((container("resources") or {}).get("limits") or {})
    resources = values("accelerator", "resources") or {}
    simulated = kind == "cpu" or "llm-d-inference-sim" in image
    resource = "" if simulated else _go(resources.get(kind, "nvidia.com/gpu"))
    if resource and per_worker >= 1:
        limits.setdefault(resource, str(per_worker))
    count, vendor = _gpus(limits)
    return count, vendor, ""


Chart = collections.namedtuple("Chart", "label version commit reference defaults recognise render")

# helm repo add vllm https://vllm-project.github.io/production-stack (helm/, at a6c01db)
STACK = Chart("production-stack", "0.1.12", "a6c01db", "vllm/vllm-stack --version 0.1.12", STACK_DEFAULTS,
              lambda doc: isinstance(doc.get("servingEngineSpec"), dict)
              and isinstance(doc["servingEngineSpec"].get("modelSpec"), list), _production_stack)
# helm repo add llm-d-modelservice https://llm-d-incubation.github.io/llm-d-modelservice/ (at 3051935)
LLM_D = Chart("llm-d-modelservice", "0.4.12", "3051935", "llm-d-modelservice/llm-d-modelservice --version v0.4.12",
              LLM_D_DEFAULTS, lambda doc: isinstance(doc.get("modelArtifacts"), dict)
              and any(isinstance(doc.get(role), dict) for role in ("decode", "prefill")), _llm_d)
CHARTS = (STACK, LLM_D)
