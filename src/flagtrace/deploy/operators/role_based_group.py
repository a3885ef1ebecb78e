"""RoleBasedGroup (sgl-project/rbg, workloads.x-k8s.io): each role's template (``templateRef`` to a ``roleTemplates``
entry with its ``patch`` laid over it), a ``leaderWorkerPattern`` role as its leader and its first worker
(``leaderTemplatePatch`` / ``workerTemplatePatch``), and the RBG_* variables the controller puts first in every
container's env (api/workloads/constants/env.go at 4acd5a79: RBG_GROUP_NAME, RBG_ROLE_NAME, RBG_ROLE_INDEX;
RBG_LWP_LEADER_ADDRESS, RBG_LWP_GROUP_SIZE, RBG_LWP_WORKER_INDEX for leader-worker roles)."""
from ..strategic_merge import merge
from .common import LEADER_ADDRESS, with_env


def expand(obj):
    spec = obj.get("spec") or {}
    shared = {t.get("name"): t.get("template") or {} for t in spec.get("roleTemplates") or [] if isinstance(t, dict)}
    group = (obj.get("metadata") or {}).get("name", "")
    roles = []
    for role in spec.get("roles") or []:
        if not isinstance(role, dict):
            continue
        name = role.get("name", "?")
        base = {"RBG_GROUP_NAME": group, "RBG_ROLE_NAME": name, "RBG_ROLE_INDEX": "0"}
        out = {"name": name}
        standalone, pair = role.get("standalonePattern"), role.get("leaderWorkerPattern")
        if isinstance(standalone, dict):
            out["pod"] = with_env(_template(standalone, shared), base)
        elif isinstance(pair, dict):
            template = _template(pair, shared)
            for member, index in (("leader", "0"), ("worker", "1")):
                env = dict(base, RBG_LWP_LEADER_ADDRESS=LEADER_ADDRESS, RBG_LWP_GROUP_SIZE=str(pair.get("size", 1)),
                           RBG_LWP_WORKER_INDEX=index)
                out[member] = with_env(merge(template, pair.get(member + "TemplatePatch") or {}), env)
        else:  # the role's own template (v1alpha1: role.template)
            out["pod"] = with_env(_template(role, shared), base)
        roles.append(out)
    return dict(obj, spec={"roles": roles})


def _template(pattern, shared):
    """A pattern's pod template: its own, or the roleTemplates entry it names with its patch laid over it."""
    ref = pattern.get("templateRef")
    if isinstance(ref, dict):
        return merge(shared.get(ref.get("name"), {}), ref.get("patch") or {})
    return pattern.get("template") or {}
