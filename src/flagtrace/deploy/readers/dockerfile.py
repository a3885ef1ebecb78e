"""Reader of Dockerfiles (``Dockerfile``, ``*.Dockerfile``, ``Dockerfile.*``): the command the image runs —
``ENTRYPOINT`` then ``CMD`` (exec form ``["a", "b"]`` or shell form), of the last stage — with the stage's
``ENV``/``ARG`` defaults as its environment; the release from the ``FROM`` image's tag (a known image, or a
guess from the tag), else a pin a ``RUN pip install`` line names, else the newest flagtrace knows (said so)."""
import json
import os
import re
import shlex

from .. import images
from ..entry_points import recognise, wrapper_of
from ..model import Launch, Token, unreadable
from ..shell_script import Script, unwrap

FORM = "a Dockerfile"
_INSTRUCTION = re.compile(r"^\s*([A-Za-z]+)\s+(.*)$")


def recognises(artifact):
    name = os.path.basename(artifact.source)
    return name == "Dockerfile" or name.endswith(".Dockerfile") or name.startswith("Dockerfile.")


def read(artifact):
    source, where = artifact.source, os.path.basename(artifact.source)
    stage, stages = {"image": "", "env": {}, "entrypoint": None, "cmd": None, "lines": {}}, {}
    for number, keyword, rest in _instructions(artifact.text):
        if keyword == "FROM":
            words = [w for w in rest.split() if not w.startswith("--")]
            base = words[0] if words else ""
            stage = _copy(stages[base]) if base in stages else {"image": base, "env": {}, "entrypoint": None,
                                                                "cmd": None, "lines": {}}
            if len(words) >= 3 and words[1].upper() == "AS":
                stages[words[2]] = stage
        elif keyword == "ENV":
            stage["env"].update(_pairs(rest, dict(stage.get("args", {}), **stage["env"])))
        elif keyword == "ARG":  # build time only: known to the lines after it, not the container's environment
            stage["args"] = dict(stage.get("args", {}), **_pairs(rest, dict(stage.get("args", {}), **stage["env"])))
        elif keyword in ("ENTRYPOINT", "CMD"):
            stage[keyword.lower()] = _words(rest)
            stage["lines"][keyword.lower()] = number
    tokens = [Token(w, "ENTRYPOINT (%s:%d)" % (where, stage["lines"]["entrypoint"])) for w in stage["entrypoint"] or []]
    tokens += [Token(w, "CMD (%s:%d)" % (where, stage["lines"]["cmd"])) for w in stage["cmd"] or []]
    inner = unwrap(tokens, stage["env"])
    tokens = inner.tokens if inner else tokens
    argv = [t.text for t in tokens]
    framework, wrapper = recognise(argv), wrapper_of(argv)
    if not framework and not wrapper:
        return []
    release, note = images.release_for(framework, stage["image"], images.pins_of(artifact.text))
    if framework and stage["entrypoint"] and not stage["cmd"]:  # ENTRYPOINT ["vllm", "serve"]: the args come later
        return [unreadable(source, "the image's command", "-f %s:%d: the image's ENTRYPOINT (%s) takes its arguments "
                           "where the image runs (docker run IMAGE ARGS, a pod's args, a compose command); give that "
                           "file to -f" % (source, stage["lines"]["entrypoint"], " ".join(argv)))]
    return [Launch(source=source, name="the image's command", tokens=tokens, env=stage["env"], image=stage["image"],
                   release=release, notes=[note] if note else [], framework=framework, wrapper=wrapper,
                   placeholders=list(inner.placeholders) if inner else [])]


def _copy(stage):
    """A stage built FROM another (``FROM base``): what it inherits (image, environment, command)."""
    return dict(stage, env=dict(stage["env"]), lines=dict(stage["lines"]), args={})


def _instructions(text):
    """(first line, KEYWORD, the rest) of each instruction, continuations joined, comments left out."""
    pending, start = "", None
    for number, line in enumerate(text.splitlines(), 1):
        if not pending and (not line.strip() or line.lstrip().startswith("#")):
            continue
        start = start or number
        if line.rstrip().endswith("\\"):
            pending += line.rstrip()[:-1] + " "
            continue
        m = _INSTRUCTION.match(pending + line)
        pending, first, start = "", start, None
        if m:
            yield first, m.group(1).upper(), m.group(2).strip()


def _words(rest):
    if rest.startswith("["):
        try:
            words = json.loads(rest)
            if isinstance(words, list):
                return [str(w) for w in words]
        except ValueError:
            pass
    return ["/bin/sh", "-c", rest]


def _pairs(rest, known):
    script = Script(known)
    if "=" not in rest.split()[0]:
        name, _, value = rest.partition(" ")
        return {name: script.expand(value.strip())} if value.strip() else {}
    out = {}
    for word in shlex.split(rest):
        name, eq, value = word.partition("=")
        if eq:
            out[name] = script.expand(value)
    return out
