"""KServe LLMInferenceService (serving.kserve.io): the LLMInferenceServiceConfigs KServe's controller chooses for it
(the ones KServe ships, bundled in data/kserve/ from kserve/kserve at aaac4e29, or one of the files given), then its
``baseRefs``, then its own spec, each laid over the one before (config_merge.go combineBaseRefsConfig / mergeSpecs);
the configs' Go templates rendered with the service (``.Spec`` is the service's own spec); a worker makes a
LeaderWorkerSet, whose LWS_* variables are injected. An LLMInferenceServiceConfig with no service beside it is read
as it is, its templates rendered with what no service gives (printed ``$(.Spec.Model.Name)``: a placeholder)."""
import functools
import glob
import json
import math
import os
import re

from ..go_template import TemplateError, render
from ..strategic_merge import merge
from ..yaml_lines import load_documents
from .common import LEADER_ADDRESS, OPERATOR, with_env

KSERVE_CONFIGS = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "data",
                              "kserve")
KSERVE_COMMIT = "aaac4e294dae2c7b1aa1886447793f3aa1c30912"


@functools.lru_cache(maxsize=1)
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


def expand(obj, artifact):
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
    out = render_alone_or_for(dict(obj, spec=merged), obj)
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


def render_alone_or_for(obj, service):
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
            part[key] = with_env({"spec": part[key]}, {"LWS_LEADER_ADDRESS": LEADER_ADDRESS,
                                                        "LWS_GROUP_SIZE": str(size), "LWS_WORKER_INDEX": index})["spec"]
