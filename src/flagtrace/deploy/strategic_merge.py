"""A patch applied to a pod template the way Kubernetes' strategic merge patch does it (what operators use to lay
a role's patch over a shared template: RoleBasedGroup's ``templateRef.patch``, KServe's configs under an
LLMInferenceService): mappings merged key by key, the lists Kubernetes merges by a key (containers by name, env
by name, ...) merged item by item, any other list or value replaced, a ``null`` deleting the key."""

MERGE_KEYS = {"containers": "name", "initContainers": "name", "env": "name", "volumes": "name",
              "volumeMounts": "mountPath", "ports": "containerPort", "imagePullSecrets": "name"}


def merge(base, patch, merge_keys=MERGE_KEYS):
    """``patch`` laid over ``base``. ``merge_keys={}``: every list replaced, as helm merges a values file over a
    chart's values.yaml."""
    if not (isinstance(base, dict) and isinstance(patch, dict)):
        return patch
    out = dict(base)
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        elif key in merge_keys and isinstance(value, list) and isinstance(out.get(key), list):
            out[key] = _merge_list(out[key], value, merge_keys[key], merge_keys)
        elif key in out:
            out[key] = merge(out[key], value, merge_keys)
        else:
            out[key] = value
    return out


def _merge_list(base, patch, key, merge_keys):
    out = list(base)
    for item in patch:
        at = next((i for i, old in enumerate(out) if isinstance(old, dict) and isinstance(item, dict)
                   and key in item and old.get(key) == item.get(key)), None)
        if at is None:
            out.append(item)
        else:
            out[at] = merge(out[at], item, merge_keys)
    return out
