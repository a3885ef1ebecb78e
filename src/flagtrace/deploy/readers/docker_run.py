"""Reader of ``docker run [OPTIONS] IMAGE [ARGS...]`` lines (``podman run`` too) in shell text: the image's
entrypoint (or ``--entrypoint``) then the args, ``-e``/``--env`` into the environment, the GPU count from
``--gpus``."""
import re

from .. import images
from ..docker_launch import framework_launch
from ..model import Token, unreadable
from ..shell_script import Script
from ..shell_words import expand_vars

# docker run options that take a value (the next word unless written --opt=value); the rest are flags.
_VALUED = set("""-a --attach --add-host --blkio-weight --cap-add --cap-drop --cgroup-parent --cgroupns --cidfile
--cpu-period --cpu-quota --cpu-shares -c --cpus --cpuset-cpus --cpuset-mems --device --device-cgroup-rule
--dns --dns-option --dns-search --domainname --entrypoint -e --env --env-file --expose --gpus --group-add
--health-cmd --health-interval --health-retries --health-start-period --health-timeout -h --hostname --ip
--ip6 --ipc --isolation -l --label --label-file --link --log-driver --log-opt --mac-address -m --memory
--memory-reservation --memory-swap --mount --name --network --net --network-alias --oom-score-adj --pid
--pids-limit --platform -p --publish --pull --restart --runtime --security-opt --shm-size --stop-signal
--stop-timeout --storage-opt --sysctl --tmpfs --ulimit -u --user --userns --uts -v --volume --volumes-from
-w --workdir""".split())


FORM = "docker run lines"


def recognises(artifact):
    """Shell text with a docker (or podman) run in it; a YAML or JSON file is a manifest even so."""
    return re.search(r"\b(docker|podman)\s+(container\s+)?run\b", artifact.text) is not None \
        and not artifact.source.lower().endswith((".yaml", ".yml", ".json"))


def read(artifact):
    launches = []
    for number, words in Script().commands(artifact.text):  # the script's own assignments applied ($IMAGE)
        for i in range(len(words) - 1):
            if words[i].rsplit("/", 1)[-1] in ("docker", "podman") and words[i + 1] == "run" or (
                    words[i + 1] == "container" and i + 2 < len(words) and words[i + 2] == "run"):
                start = i + (3 if words[i + 1] == "container" else 2)
                launch = _run(words[start:], artifact.source, number)
                if launch is not None:
                    launches.append(launch)
                break
    return launches


def _run(words, source, number):
    env, gpus, entry, i = {}, 0, None, 0
    where = "docker run (%s, line %d)" % (source.rsplit("/", 1)[-1], number)
    while i < len(words) and words[i].startswith("-"):
        word = words[i]
        name, has_value, value = word.partition("=") if word.startswith("--") else (word, False, None)
        if not has_value and name in _VALUED:
            if i + 1 >= len(words):
                return unreadable(source, "docker run (line %d)" % number,
                                  "-f %s:%d: docker run %s has no value" % (source, number, name))
            value, i = words[i + 1], i + 1
        if name in ("-e", "--env") and value is not None:
            key, eq, val = value.partition("=")
            env[key] = val if eq else "<from the host environment>"
        elif name == "--gpus" and value is not None:
            gpus = _gpus(value)
        elif name == "--entrypoint" and value is not None:
            entry = value.split()
        i += 1
    if i >= len(words):
        return unreadable(source, "docker run (line %d)" % number, "-f %s:%d: docker run names no image"
                          % (source, number))
    image, args = words[i], words[i + 1:]
    release, note = images.release_of(image)
    if entry is None:
        entry_words, entry_where = images.entrypoint(image, release)
        tokens = [Token(w, entry_where) for w in entry_words]
    else:
        tokens = [Token(w, "--entrypoint (%s)" % where) for w in entry]
    tokens += [Token(expand_vars(a, env), where) for a in args]
    return framework_launch(source, "docker run (line %d)" % number, tokens, env, image, gpus, release, note)


def _gpus(value):
    value = value.strip("'\"")
    if value == "all":
        return 0  # as many as the box has: --gpu's count says
    m = re.match(r"^(?:count=)?(\d+)$", value)
    if m:
        return int(m.group(1))
    m = re.search(r"device=([\d,]+)", value)
    return len(m.group(1).split(",")) if m else 0
