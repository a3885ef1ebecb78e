"""What every operator module here shares: how an expanded object says what its controller did (OPERATOR), the
placeholder for a leader's address, the controller's variables put into a template's containers."""

OPERATOR = "x-flagtrace-operator"  # what expand() says of the pods it made: notes, model configs, a problem
LEADER_ADDRESS = "<the leader's address>"  # only the cluster knows it (a placeholder, never parsed as real)


def with_env(template, env):
    """The template with ``env`` first in every container's env: the controller's variables before the user's,
    and over a user's variable of the same name (the controller's env merge: pkg/utils/env.go's tests)."""
    spec = template.get("spec") or {}
    containers = []
    for container in spec.get("containers") or []:
        own = [e for e in container.get("env") or [] if isinstance(e, dict) and e.get("name") not in env]
        containers.append(dict(container, env=[{"name": k, "value": v} for k, v in env.items()] + own))
    return dict(template, spec=dict(spec, containers=containers))


def said(obj, notes=(), model_configs=(), problem=""):
    return dict(obj, **{OPERATOR: {"notes": list(notes), "model_configs": list(model_configs), "problem": problem}})


def flag_value(words, names):
    for i, word in enumerate(words):
        option, eq, value = word.partition("=")
        if option in names:
            return value if eq else (words[i + 1] if i + 1 < len(words) else None)
    return None


def to_int(value, default):
    try:
        return int(str(value))
    except (TypeError, ValueError):
        return default
