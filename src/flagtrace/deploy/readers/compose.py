"""Reader of docker compose files (one mapping with ``services`` and no ``kind``): each service's image
entrypoint (or ``entrypoint``) then its ``command``, a ``bash -c`` script's framework command, the
environment, the GPU count from the service's device reservations."""
import os
import shlex

from .. import images
from ..docker_launch import framework_launch
from ..model import Token
from ..shell_script import Script, unwrap


FORM = "a compose file"


def recognises(artifact):
    documents = artifact.documents
    return len(documents) == 1 and isinstance(documents[0], dict) and "services" in documents[0] \
        and "kind" not in documents[0]


def read(artifact):
    doc, source = artifact.documents[0], artifact.source
    project = Script(_dotenv(source))  # compose interpolates ${VAR:-default} from the project's .env, as a shell
    launches = []
    for service, spec in (doc.get("services") or {}).items():
        spec = spec or {}
        image = _interpolate(project, str(spec.get("image") or ""))
        env = {k: _interpolate(project, v) for k, v in _compose_env(spec.get("environment")).items()}
        release, note = images.release_of(image) if image else ("", "")
        entry, command = _words(spec.get("entrypoint")), _words(spec.get("command"))
        entry = None if entry is None else [_interpolate(project, w) for w in entry]
        command = None if command is None else [_interpolate(project, w) for w in command]
        where = "compose service %s" % service
        if entry is None:
            entry_words, entry_where = images.entrypoint(image, release)
            tokens = [Token(w, entry_where) for w in entry_words]
        else:
            tokens = [Token(w, "entrypoint (%s)" % where) for w in entry]
        tokens += [Token(w, "command (%s, %s)" % (where, _line(source, spec.get("command")))) for w in command or []]
        inner = unwrap(tokens, env)
        tokens = inner.tokens if inner else tokens
        devices = (((spec.get("deploy") or {}).get("resources") or {}).get("reservations") or {}).get("devices") or []
        gpus = 0
        for device in devices:
            count = device.get("count")
            if isinstance(count, int):
                gpus += count
            elif device.get("device_ids"):
                gpus += len(device["device_ids"])
        launch = framework_launch(source, "service %s" % service, tokens, env, image, gpus, release, note)
        if launch is not None:
            launch.placeholders = [p for p in project.placeholders if any(p in t.text for t in tokens)] \
                + [p for p in (inner.placeholders if inner else []) if p not in project.placeholders]
            if launch.placeholders:
                launch.notes.append("not set in the project's .env: %s (a value of each option's own type stands in)"
                                    % ", ".join(launch.placeholders))
            launches.append(launch)
    return launches


def _interpolate(project, text):
    """Compose's interpolation of one value: ``$$`` is a literal ``$`` (left for the container's shell)."""
    return project.expand(text.replace("$$", "\x00")).replace("\x00", "$")


def _dotenv(source):
    """The ``.env`` beside the compose file (KEY=VALUE lines), as compose reads it; {} where there is none."""
    path = os.path.join(os.path.dirname(os.path.abspath(source)), ".env") if source != "-" else ""
    env = {}
    try:
        with open(path, encoding="utf-8") as fh:
            for line in fh:
                key, eq, value = line.strip().partition("=")
                if eq and key and not key.startswith("#"):
                    env[key.strip()] = value.strip().strip("'\"")
    except OSError:
        pass
    return env


def _line(source, value):
    line = getattr(value, "line", 0) or getattr((value or [None])[0] if isinstance(value, list) else None, "line", 0)
    return "%s:%d" % (source.rsplit("/", 1)[-1], line) if line else source.rsplit("/", 1)[-1]


def _words(value):
    if value is None:
        return None
    if isinstance(value, str):
        return shlex.split(value)
    return [str(v) for v in value]


def _compose_env(value):
    if isinstance(value, dict):
        return {str(k): "" if v is None else str(v) for k, v in value.items()}
    env = {}
    for item in value or []:
        key, eq, val = str(item).partition("=")
        env[key] = val if eq else "<from the host environment>"
    return env
