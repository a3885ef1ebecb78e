"""Kubernetes objects as launch commands: the containers of every pod template (Pod, Deployment,
StatefulSet, DaemonSet, ReplicaSet, Job, CronJob, LeaderWorkerSet leader and worker, KServe InferenceService
predictor and ServingRuntime, a List of them), each container's command and args with ``$(VAR)`` expanded
from its env as the kubelet does, the GPU count from resources.limits, and a ``bash -c`` script's framework
command (shell.py). A value only the cluster knows (``valueFrom``) is a named placeholder, never read."""
import os
import re

from ..exitcodes import ExitCode, FlagtraceError
from . import images, shell
from .launch import Launch, Token, recognise

GPU_RESOURCES = {"nvidia.com/gpu": "nvidia", "amd.com/gpu": "amd"}
_VAR_REF = re.compile(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)")


class Line(str):
    """A string from the YAML with the line it stands on (1-based)."""
    line = 0


def load_documents(text, source):
    """Every YAML document of the text, strings carrying their line; one line on a parse error."""
    import yaml

    class Loader(yaml.SafeLoader):
        pass

    def scalar(loader, node):
        value = Line(loader.construct_scalar(node))
        value.line = node.start_mark.line + 1
        return value

    Loader.add_constructor("tag:yaml.org,2002:str", scalar)
    try:
        return [d for d in yaml.load_all(text, Loader=Loader) if d is not None]
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = " line %d" % (mark.line + 1) if mark else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise FlagtraceError("-f %s:%s is not valid YAML: %s" % (source, where, problem), ExitCode.USAGE)


_QUIET = ("spec", "template", "extraPodSpec", "leaderWorkerTemplate")  # path keys that say nothing


def _templates(obj):
    """(name, pod spec) of every pod template in one object, wherever the object's kind keeps it: a walk for
    mappings with a ``containers`` list (Pod, Deployment, StatefulSet, Job, CronJob, LeaderWorkerSet leader and
    worker, ServingRuntime, operators' CRDs: llm-d's DisaggregatedSet roles, ...), Dynamo's ``mainContainer``
    and a KServe predictor's ``model`` (the runtime's container with the model's args and env)."""
    if obj.get("kind") == "List":
        for item in obj.get("items") or []:
            yield from _templates(item)
        return
    owner = "%s/%s" % (obj.get("kind", "?"), (obj.get("metadata") or {}).get("name", "?"))
    for path, pod in _walk(obj.get("spec") or {}, []):
        where = " ".join(p for p in path if p not in _QUIET)
        yield ("%s %s" % (owner, where)).strip(), pod


def _walk(node, path):
    if isinstance(node, list):
        for i, item in enumerate(node):
            name = item.get("name") if isinstance(item, dict) else None
            yield from _walk(item, path + [str(name) if name else "[%d]" % i])
    elif isinstance(node, dict):
        if isinstance(node.get("containers"), list) and any(isinstance(c, dict) for c in node["containers"]):
            yield path, node
            return
        if isinstance(node.get("mainContainer"), dict):
            yield path, {"containers": [dict(node["mainContainer"], name=node["mainContainer"].get("name", "main"))]}
            return
        if isinstance(node.get("model"), dict) and "modelFormat" in node["model"]:
            yield path, {"containers": [dict(node["model"], name=node["model"].get("name") or "kserve-container")]}
            return
        for key, value in node.items():
            if key.endswith("Template") and key not in _QUIET:
                key = key[:-len("Template")]
            yield from _walk(value, path + [key])


def read_objects(documents, source):
    launches = []
    for doc in documents:
        if not isinstance(doc, dict):
            raise FlagtraceError("-f %s: a YAML document that is not a mapping (%s)" % (source, type(doc).__name__),
                                 ExitCode.USAGE)
        injected = _injected(doc)
        for name, pod in _templates(doc):
            for container in list(pod.get("initContainers") or []) + list(pod.get("containers") or []):
                launch = _container(source, name, container, injected)
                if launch is not None:
                    launches.append(launch)
    return launches


def _where(source, value):
    return "%s:%d" % (os.path.basename(source), value.line) if getattr(value, "line", 0) else os.path.basename(source)


def _env(container, source, notes):
    """name -> value; a valueFrom is a placeholder that says where the cluster takes it from, except a pod's
    index in its set or group (a StatefulSet's, a LeaderWorkerSet's), taken as 0: the first pod (said in
    ``notes``)."""
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
                env[name] = "0"
                notes.append("%s (%s) taken as 0: the first pod" % (name, target.get("fieldPath")))
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


def _injected(obj):
    """What a controller puts into every container's env before the kubelet expands $(VAR): LeaderWorkerSet's
    LWS_* variables (the group size from the object; the addresses only the cluster knows, as placeholders)."""
    if obj.get("kind") != "LeaderWorkerSet":
        return {}
    size = ((obj.get("spec") or {}).get("leaderWorkerTemplate") or {}).get("size")
    return {"LWS_LEADER_ADDRESS": "<the leader's address>", "LWS_GROUP_SIZE": str(size or "<group size>"),
            "LWS_WORKER_INDEX": "<the pod's index in its group>", "LWS_NAME": (obj.get("metadata") or {}).get("name", "")}


def _container(source, owner, container, injected=None):
    image = str(container.get("image") or "")
    notes = []
    env = dict(injected or {}, **_env(container, source, notes))
    command, args = list(container.get("command") or []), list(container.get("args") or [])
    release, note = images.release_of(image) if image else ("", "")
    notes = ([note] if note else []) + notes
    tokens = []
    if not command:
        words, where = images.entrypoint(image, release)
        tokens += [Token(w, where) for w in words]
    undefined = []
    for part, values in (("command", command), ("args", args)):
        for value in values:
            text, used = expand(str(value), env)
            undefined += ["$(%s) (%s)" % (n, _where(source, value)) for n in _VAR_REF.findall(text) if n not in env]
            origin = "%s (%s)" % (part, _where(source, value))
            if used:
                origin += ", $(%s) from env" % ", ".join(used)
            tokens.append(Token(text, origin))
    tokens = shell.unwrap(tokens, env) or tokens
    framework = recognise([t.text for t in tokens])
    wrapper = shell.wrapper_of([t.text for t in tokens]) or images.wrapper_image(image, container)
    if not framework and not wrapper:
        return None
    limits = (container.get("resources") or {}).get("limits") or {}
    gpus, vendor = 0, ""
    for resource, who in GPU_RESOURCES.items():
        if resource in limits:
            try:
                gpus, vendor = int(str(limits[resource])), who
            except ValueError:
                pass
    name = "%s container %s" % (owner, container.get("name", "?"))
    problem = ("%s: %s: the container's env does not define %s (Kubernetes passes it on as typed); add it to env:"
               % (source, name, ", ".join(undefined))) if undefined else ""
    return Launch(source=source, name=name, tokens=tokens, env=env, image=image, gpus=gpus, gpu_vendor=vendor,
                  release=release, notes=notes, framework=framework, wrapper=wrapper, problem=problem)
