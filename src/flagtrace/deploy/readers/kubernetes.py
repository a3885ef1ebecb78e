"""Reader of Kubernetes objects (and ``helm template`` output; any YAML or JSON no other reader took): the
containers of every pod template (Pod, Deployment, StatefulSet, DaemonSet, ReplicaSet, Job, CronJob,
LeaderWorkerSet leader and worker, KServe InferenceService predictor and ServingRuntime, a List of them), each
container's command and args with ``$(VAR)`` expanded from its env as the kubelet does (kubelet_env.py), the
GPU count from resources.limits, and a ``bash -c`` script's framework command (shell_script.py)."""
import os

from .. import images, operators, ray_serve_llm
from ..entry_points import recognise, wrapper_of
from ..kubelet_env import GPU_RESOURCES, PLACEHOLDER, VAR_REF, container_env, expand, injected
from ..model import Launch, Token, unreadable
from ..shell_script import SHELL_SUFFIXES, unwrap
from ..yaml_lines import BadDocument

_INDEX_VARIABLES = ("LWS_WORKER_INDEX", "RBG_LWP_WORKER_INDEX")  # a pod's index in its group, set per pod
_QUIET = ("spec", "template", "extraPodSpec", "leaderWorkerTemplate", "pod")  # path keys that say nothing


FORM = "Kubernetes objects"


def recognises(artifact):
    """Every file the readers before it left but shell text: its YAML documents are read as objects (one that is
    not is a row of its own)."""
    return not artifact.source.lower().endswith(SHELL_SUFFIXES)


def read(artifact):
    source = artifact.source
    launches = []
    for number, doc in enumerate(artifact.documents, 1):
        if isinstance(doc, BadDocument):  # its own row; the documents around it are read
            launches.append(unreadable(source, "document %d (line %d)" % (number, doc.line), doc.message()))
            continue
        if not isinstance(doc, dict):
            launches.append(unreadable(source, "document %d" % number, "-f %s: document %d is not a mapping (%s)"
                                       % (source, number, type(doc).__name__)))
            continue
        launches += ray_serve_llm.launches(doc, source)
        user, where = operators.used_by(doc, artifact)
        if user is not None:  # read under the object that names it
            artifact.skipped = "read under %s/%s%s, which names it" % (
                user.get("kind"), (user.get("metadata") or {}).get("name", "?"), " (%s)" % where if where else "")
            continue
        doc = operators.expand(doc, artifact)
        before = len(launches)
        from_controller = injected(doc)
        for name, pod in _templates(doc):
            index = _pod_index(doc, name)
            given = dict(from_controller, LWS_WORKER_INDEX=index[0]) if "LWS_WORKER_INDEX" in from_controller \
                else from_controller
            for container in list(pod.get("initContainers") or []) + list(pod.get("containers") or []):
                launch = _container(source, name, container, given, index)
                for variable in _INDEX_VARIABLES:
                    if launch is not None and index[0] != "0" and launch.env.get(variable) == index[0] \
                            and any("$(%s) from env" % variable in t.origin for t in launch.tokens):
                        launch.notes.append("%s taken as %s: %s" % ((variable,) + index))
                if launch is not None:
                    said = doc.get(operators.OPERATOR) or {}
                    launch.notes += said.get("notes", [])
                    launch.model_configs += said.get("model_configs", [])
                    launch.problem = said.get("problem") or launch.problem  # the operator's reason says more
                    launches.append(launch)
        problem = (doc.get(operators.OPERATOR) or {}).get("problem")
        if problem and len(launches) == before:  # what it names is missing: no pod to read, one row saying so
            launches.append(unreadable(source, "%s/%s" % (doc.get("kind"), (doc.get("metadata") or {}).get("name")),
                                       problem))
    return launches


def _pod_index(obj, name):
    """The index a pod of this template has in its set or group, as (value, why): a LeaderWorkerSet's (or a
    RoleBasedGroup leader-worker role's) worker template runs indices 1 to size-1 (the first worker: 1); any other
    pod is taken as the first (0)."""
    if obj.get("kind") in ("LeaderWorkerSet", "RoleBasedGroup", "LLMInferenceService", "InferenceService") \
            and name.split()[-1:] == ["worker"]:
        return "1", "the first worker of its group (each worker pod has its own index, 1 to size-1)"
    return "0", "the first pod"


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
        runners = [(key, node[key]) for key in ("runner",) if _container_like(node.get(key))]
        if runners:  # OME's engineConfig/decoderConfig/leader/worker ``runner``: one container
            yield path, {"containers": [dict(c, name=c.get("name") or key) for key, c in runners]}
            for key, value in node.items():
                if key != "runner":
                    yield from _walk(value, path + [key])
            return
        if isinstance(node.get("model"), dict) and "modelFormat" in node["model"]:
            yield path, {"containers": [dict(node["model"], name=node["model"].get("name") or "kserve-container")]}
            return
        for key, value in node.items():
            if key.endswith("Template") and key not in _QUIET:
                key = key[:-len("Template")]
            yield from _walk(value, path + [key])


def _container_like(node):
    return isinstance(node, dict) and "image" in node and ("command" in node or "args" in node)


def _where(source, value):
    return "%s:%d" % (os.path.basename(source), value.line) if getattr(value, "line", 0) else os.path.basename(source)


def _container(source, owner, container, from_controller, index=("0", "the first pod")):
    image = str(container.get("image") or "")
    notes = []
    env = dict(from_controller, **container_env(container, notes, index))
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
            undefined += ["$(%s) (%s)" % (n, _where(source, value)) for n in VAR_REF.findall(text) if n not in env]
            origin = "%s (%s)" % (part, _where(source, value))
            if used:
                origin += ", $(%s) from env" % ", ".join(used)
            tokens.append(Token(text, origin))
    inner = unwrap(tokens, env)
    tokens = inner.tokens if inner else tokens
    said = container.get(operators.OPERATOR) or {}  # what an operator appends to this container's command
    tokens = tokens + [Token(str(w), said["origin"]) for w in said.get("append", [])]
    notes += said.get("notes", [])
    framework = recognise([t.text for t in tokens])
    wrapper = wrapper_of([t.text for t in tokens]) or images.wrapper_image(image, container)
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
    held = [t.text for t in tokens if PLACEHOLDER.search(t.text)] + list(inner.placeholders if inner else [])
    return Launch(source=source, name=name, tokens=tokens, env=env, image=image, gpus=gpus, gpu_vendor=vendor,
                  release=release, notes=notes, framework=framework, wrapper=wrapper, problem=problem,
                  placeholders=list(dict.fromkeys(held)))
