"""Reader of SkyPilot task YAML (a mapping with ``run`` and ``resources``/``setup``/``envs``/``num_nodes``, no
``kind``): ``resources.accelerators`` gives the GPU type and count (``H100:8``, ``{H100: 8}``, a list: the
first), ``num_nodes`` the nodes, ``envs`` the variables, ``setup``'s pins the release (``pip install
sglang==0.5.9``), and ``run`` is read as a script (deploy/shell_script.py) with the ``SKYPILOT_*`` variables a
task sees on its first node (``SKYPILOT_NODE_RANK=0``; the node IPs only known at run time)."""
from .. import images
from ..model import Launch
from ..shell_script import SHELL_SUFFIXES, Script, found_commands, written_notes

FORM = "a SkyPilot task"
_TASK_KEYS = ("resources", "setup", "envs", "num_nodes", "workdir", "file_mounts")


def recognises(artifact):
    if artifact.source.lower().endswith(SHELL_SUFFIXES):
        return False
    docs = artifact.documents
    return len(docs) == 1 and isinstance(docs[0], dict) and isinstance(docs[0].get("run"), str) \
        and any(k in docs[0] for k in _TASK_KEYS) and "kind" not in docs[0] and "services" not in docs[0]


def read(artifact):
    task, source = artifact.documents[0], artifact.source
    gpu_type, per_node = _accelerators((task.get("resources") or {}).get("accelerators"))
    nodes = int(task.get("num_nodes") or 1) if str(task.get("num_nodes") or 1).isdigit() else 1
    env = {str(k): "" if v is None else str(v) for k, v in (task.get("envs") or {}).items()}
    env.update({"SKYPILOT_NODE_RANK": "0", "SKYPILOT_NUM_NODES": str(nodes),
                "SKYPILOT_NUM_GPUS_PER_NODE": str(per_node or 0), "SKYPILOT_TASK_ID": "<the task id>"})
    script = Script(env)
    script.runtime.add("SKYPILOT_NODE_IPS")
    pins = images.pins_of(str(task.get("setup") or "") + "\n" + task["run"])
    image = str((task.get("resources") or {}).get("image_id") or "")
    image = image[len("docker:"):] if image.startswith("docker:") else ""
    first = getattr(task["run"], "line", 0)
    launches = []
    where = lambda number: "run (%s:%d)" % (_base(source), first + number if first else number)  # noqa: E731
    for found in found_commands(script, task["run"], where):
        release, note = images.release_for(found.framework, image, pins)
        notes = ([note] if note else []) + (["resources.accelerators: %s x%d per node, the GPU simulated unless --gpu "
                                             "names another" % (gpu_type, per_node)] if gpu_type else [])
        notes += written_notes(found)
        if found.placeholders:
            notes.append("only known when the task runs: %s (a value of each option's own type stands in)"
                         % ", ".join(found.placeholders))
        launches.append(Launch(source=source, name="run line %d" % found.number, tokens=found.tokens, env=found.env,
                               image=image, gpus=per_node, gpu_vendor="nvidia" if per_node else "", release=release,
                               notes=notes, framework=found.framework, wrapper=found.wrapper,
                               placeholders=found.placeholders,
                               files={path: text for path, (text, _) in found.files.items()}, gpu_type=gpu_type))
    return launches


def _accelerators(value):
    """(GPU type, count per node) of ``resources.accelerators``: ``H100:8``, ``{H100: 8}``, or a list/set of
    such (the first)."""
    if isinstance(value, (list, tuple)) and value:
        value = value[0]
    if isinstance(value, dict) and value:
        name, count = next(iter(value.items()))
        name, _, inline = str(name).partition(":")  # {L4:1, A100:1}: flow keys with the count in them
        count = inline if count is None else count
        return name.strip(), int(count) if str(count).strip().isdigit() else 1
    if isinstance(value, str) and value:
        name, _, count = value.partition(":")
        return name.strip(), int(count) if count.strip().isdigit() else 1
    return "", 0


def _base(source):
    return source.rsplit("/", 1)[-1] if source != "-" else "stdin"
