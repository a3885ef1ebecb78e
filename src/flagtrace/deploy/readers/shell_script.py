"""Reader of shell scripts as files (``.sh``, ``.bash``, ``.slurm``/``.sbatch``, ``.txt``, a file whose ``#!``
line names a shell): every framework command the script runs, found statically wherever it stands
(deploy/shell_script.py), with the script's assignments applied and what is only known at run time kept as a
placeholder. Slurm: ``#SBATCH`` nodes and GPUs per node give the GPU count and ``SLURM_*`` (rank 0: the branch
a node with ``SLURM_NODEID=0`` takes is read like the others, every branch's command is a row). The release:
an image the script runs the command in (``srun --container-image``), else a pin the script installs
(``pip install sglang==0.5.9``), else the newest flagtrace knows, said so."""
import os
import re

from .. import images
from ..model import Launch
from ..shell_script import SHELL_SUFFIXES, Script, found_commands, written_notes

FORM = "a shell script"
_SHEBANG = re.compile(r"#!\S*\b(ba|da|z|k)?sh\b|#!\S*env\s+(ba|da|z)?sh\b")
_SBATCH = re.compile(r"^#SBATCH\s+(.*)$", re.M)


def recognises(artifact):
    return artifact.source.lower().endswith(SHELL_SUFFIXES) or _SHEBANG.match(artifact.text or "") is not None


def read(artifact):
    source, text = artifact.source, artifact.text
    slurm = _slurm(text)
    script = Script(slurm["env"])
    pins = images.pins_of(text)
    where = os.path.basename(source) if source != "-" else "stdin"
    launches = []
    for found in found_commands(script, text, lambda number: "%s:%d" % (where, number)):
        prefix = found.prefix
        image = _image(prefix)
        release, note = images.release_for(found.framework, image, pins)
        gpus = slurm["gpus"] or _visible(found.env)
        name = "line %d%s" % (found.number, " (%s)" % prefix[0] if prefix and "=" not in prefix[0] else "")
        notes = [note] if note else []
        notes += written_notes(found)
        if found.placeholders:
            notes.append("only known when the script runs: %s (a value of each option's own type stands in)"
                         % ", ".join(found.placeholders))
        launches.append(Launch(source=source, name=name, tokens=found.tokens, env=found.env, image=image, gpus=gpus,
                               gpu_vendor="nvidia" if gpus else "", release=release, notes=notes,
                               framework=found.framework, wrapper=found.wrapper, placeholders=found.placeholders,
                               files={path: text for path, (text, _) in found.files.items()}))
    return launches


def _slurm(text):
    """What ``#SBATCH`` lines say: nodes, GPUs per node, and the SLURM_* variables a job step sees (node 0)."""
    nodes, gpus = 1, 0
    for line in _SBATCH.findall(text):
        for m in re.finditer(r"(?:--nodes|-N)[= ]?(\d+)", line):
            nodes = int(m.group(1))
        for m in re.finditer(r"--gpus-per-node[= ](?:\w+:)?(\d+)|--gres[= ]gpu(?::\w+)?:(\d+)", line):
            gpus = int(m.group(1) or m.group(2))
    env = {}
    if _SBATCH.search(text):
        env = {"SLURM_NNODES": str(nodes), "SLURM_JOB_NUM_NODES": str(nodes), "SLURM_NODEID": "0",
               "SLURM_PROCID": "0", "SLURM_LOCALID": "0"}
        if gpus:
            env["SLURM_GPUS_PER_NODE"] = str(gpus)
    return {"env": env, "gpus": gpus}


def _image(prefix):
    for i, word in enumerate(prefix):
        if word.startswith("--container-image="):
            return word.split("=", 1)[1]
        if word == "--container-image" and i + 1 < len(prefix):
            return prefix[i + 1]
    return ""


def _visible(env):
    devices = env.get("CUDA_VISIBLE_DEVICES", "")
    return len([d for d in devices.split(",") if d.strip()]) if re.fullmatch(r"[\d,\s]+", devices or "x") else 0
