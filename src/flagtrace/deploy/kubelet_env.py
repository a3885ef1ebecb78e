"""A Kubernetes container's environment as the kubelet builds it: each ``env`` entry with ``$(VAR)`` expanded
from those before it, a value only the cluster knows (``valueFrom``) as a named placeholder, never read, and
what a controller injects (LeaderWorkerSet's LWS_* variables)."""
import re

GPU_RESOURCES = {"nvidia.com/gpu": "nvidia", "amd.com/gpu": "amd"}  # resources.limits that count GPUs
VAR_REF = re.compile(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)")  # a $(VAR) the kubelet expands
PLACEHOLDER = re.compile(r"<[^<>]+>")  # what only the cluster knows (a valueFrom, a leader's address)


def container_env(container, notes, index=("0", "the first pod")):
    """name -> value; a valueFrom is a placeholder that says where the cluster takes it from, except a pod's
    index in its set or group (a StatefulSet's, a LeaderWorkerSet's), taken as ``index`` (value, why: 0, the
    first pod; 1 in a LeaderWorkerSet's worker template), said in ``notes``."""
    env = {}
    for item in container.get("env") or []:
        name = item.get("name")
        if not name:
            continue
        if "value" in item:
            env[name] = expand(str(item["value"]), env)[0]
        elif "valueFrom" in item:
            ref = item["valueFrom"] or {}
            kind = next(iter(ref), "valueFrom")
            target = ref.get(kind) or {}
            env[name] = "<%s %s>" % (kind, "/".join(str(target.get(k)) for k in ("name", "key", "fieldPath",
                                                                                 "resource") if target.get(k)))
            if kind == "fieldRef" and "index" in str(target.get("fieldPath", "")):
                env[name] = index[0]
                notes.append("%s (%s) taken as %s: %s" % (name, target.get("fieldPath"), index[0], index[1]))
        else:
            env[name] = ""
    return env


def expand(text, env):
    """``$(VAR)`` replaced from env as the kubelet does (``$$`` is a literal ``$``; an unknown name stays as
    typed): (text, [the names expanded])."""
    out, used, i = [], [], 0
    while i < len(text):
        if text.startswith("$$", i):
            out.append("$")
            i += 2
        elif text.startswith("$(", i) and ")" in text[i:]:
            end = text.index(")", i)
            name = text[i + 2:end]
            if name in env:
                out.append(env[name])
                used.append(name)
            else:
                out.append(text[i:end + 1])
            i = end + 1
        else:
            out.append(text[i])
            i += 1
    return "".join(out), used


def injected(obj):
    """What a controller puts into every container's env before the kubelet expands $(VAR): LeaderWorkerSet's
    LWS_* variables (the group size from the object; the addresses only the cluster knows, as placeholders)."""
    if obj.get("kind") != "LeaderWorkerSet":
        return {}
    size = ((obj.get("spec") or {}).get("leaderWorkerTemplate") or {}).get("size")
    return {"LWS_LEADER_ADDRESS": "<the leader's address>", "LWS_GROUP_SIZE": str(size or "<group size>"),
            "LWS_WORKER_INDEX": "0", "LWS_NAME": (obj.get("metadata") or {}).get("name", "")}
