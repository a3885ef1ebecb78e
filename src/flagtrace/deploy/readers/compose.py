"""Reader of docker compose files (one mapping with ``services`` and no ``kind``): each service's image
entrypoint (or ``entrypoint``) then its ``command``, a ``bash -c`` script's framework command, the
environment, the GPU count from the service's device reservations."""
import shlex

from .. import images
from ..docker_launch import framework_launch
from ..model import Token
from ..shell_words import expand_vars, unwrap


FORM = "a compose file"


def recognises(artifact):
    documents = artifact.documents
    return len(documents) == 1 and isinstance(documents[0], dict) and "services" in documents[0] \
        and "kind" not in documents[0]


def read(artifact):
    doc, source = artifact.documents[0], artifact.source
    launches = []
    for service, spec in (doc.get("services") or {}).items():
        spec = spec or {}
        image = str(spec.get("image") or "")
        env = _compose_env(spec.get("environment"))
        release, note = images.release_of(image) if image else ("", "")
        entry, command = _words(spec.get("entrypoint")), _words(spec.get("command"))
        where = "compose service %s" % service
        if entry is None:
            entry_words, entry_where = images.entrypoint(image, release)
            tokens = [Token(w, entry_where) for w in entry_words]
        else:
            tokens = [Token(w, "entrypoint (%s)" % where) for w in entry]
        tokens += [Token(expand_vars(w, env), "command (%s, %s)" % (where, _line(source, spec.get("command"))))
                   for w in command or []]
        tokens = unwrap(tokens, env) or tokens
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
            launches.append(launch)
    return launches


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
