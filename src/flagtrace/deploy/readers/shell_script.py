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
from ..entry_points import recognise, wrapper_of
from ..model import Launch, Token
from ..shell_script import Script, launch_start
from ..shell_words import unwrap

FORM = "a shell script"
SUFFIXES = (".sh", ".bash", ".slurm", ".sbatch", ".txt")
_SHEBANG = re.compile(r"#!\S*\b(ba|da|z|k)?sh\b|#!\S*env\s+(ba|da|z)?sh\b")
_SBATCH = re.compile(r"^#SBATCH\s+(.*)$", re.M)


def recognises(artifact):
    return artifact.source.lower().endswith(SUFFIXES) or _SHEBANG.match(artifact.text or "") is not None


def read(artifact):
    source, text = artifact.source, artifact.text
    slurm = _slurm(text)
    script = Script(slurm["env"])
    pins = images.pins_of(text)
    where = os.path.basename(source) if source != "-" else "stdin"
    launches = []
    for number, words in script.commands(text):
        start = launch_start(words)
        if start is None:
            continue
        prefix, command = words[:start], words[start:]
        env = dict(script.environment())
        for word in prefix:
            name, eq, value = word.partition("=")
            if eq and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
                env[name] = value
        tokens = [Token(w, "%s:%d" % (where, number)) for w in command]
        tokens = unwrap(tokens, env) or tokens
        argv = [t.text for t in tokens]
        framework, wrapper = recognise(argv), wrapper_of(argv)
        image = _image(prefix)
        release, note = images.release_for(framework, image, pins)
        gpus = slurm["gpus"] or _visible(env)
        name = "line %d%s" % (number, " (%s)" % " ".join(prefix[:1]) if prefix and not "=" in prefix[0] else "")
        notes = [note] if note else []
        held = [p for p in script.placeholders if any(p in w for w in argv)]
        if held:
            notes.append("only known when the script runs: %s (a value of each option's own type stands in)"
                         % ", ".join(held))
        launches.append(Launch(source=source, name=name, tokens=tokens, env=env, image=image, gpus=gpus,
                               gpu_vendor="nvidia" if gpus else "", release=release, notes=notes,
                               framework=framework, wrapper=wrapper, placeholders=held))
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
