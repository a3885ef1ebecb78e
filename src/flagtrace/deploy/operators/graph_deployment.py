"""NVIDIA Dynamo's DynamoGraphDeployment as its operator makes its pods: v1alpha1 (``services``) and v1beta1
(``components``); a multinode service as its leader and first worker with the flags the operator appends (the
framework records' ``multinode_flags``)."""
from .common import LEADER_ADDRESS, OPERATOR, flag_value, to_int


def expand(obj):
    """A DynamoGraphDeployment as the operator makes its pods: v1alpha1 ``services`` (a map; the service's
    ``resources.limits.gpu`` and the graph's ``envs`` given to the main container) or v1beta1 ``components`` (a
    list; the container named ``main``); a multinode service (``multinode.nodeCount`` >= 2) as its leader and first
    worker with the flags the operator appends to their command (the framework records' ``multinode_flags``)."""
    spec = dict(obj.get("spec") or {})
    graph_env = [e for e in spec.get("envs") or spec.get("env") or [] if isinstance(e, dict)]
    if isinstance(spec.get("services"), dict):
        spec["services"] = {name: _graph_service(service, graph_env, alpha=True)
                            for name, service in spec["services"].items() if isinstance(service, dict)}
    if isinstance(spec.get("components"), list):
        spec["components"] = [dict(_graph_service(c, graph_env, alpha=False), name=c.get("name"))
                              for c in spec["components"] if isinstance(c, dict)]
    return dict(obj, spec=spec)


def _graph_service(service, graph_env, alpha):
    service = dict(service)
    if alpha:
        extra = dict(service.get("extraPodSpec") or {})
        if not isinstance(extra.get("mainContainer"), dict):
            return service
        gpu = ((service.get("resources") or {}).get("limits") or {}).get("gpu")
        main = _main_container(extra["mainContainer"], graph_env, gpu)

        def pods(c):
            return dict(service, extraPodSpec=dict(extra, mainContainer=c))
    else:
        template = dict(service.get("podTemplate") or {})
        pod = dict(template.get("spec") or {})
        containers = list(pod.get("containers") or [])
        at = next((i for i, c in enumerate(containers) if isinstance(c, dict) and c.get("name") == "main"), None)
        if at is None:
            return service
        main = _main_container(containers[at], graph_env, None)

        def pods(c):
            return dict(service, podTemplate=dict(template, spec=dict(
                pod, containers=containers[:at] + [c] + containers[at + 1:])))
    nodes = to_int((service.get("multinode") or {}).get("nodeCount"), 1)
    if nodes < 2:
        return pods(main)
    return {"leader": pods(_one_node(main, nodes, 0)), "worker": pods(_one_node(main, nodes, 1))}


def _main_container(container, graph_env, gpu):
    container = dict(container)
    if graph_env:
        own = {e.get("name") for e in container.get("env") or [] if isinstance(e, dict)}
        container["env"] = [e for e in graph_env if e.get("name") not in own] + list(container.get("env") or [])
    if gpu is not None:
        resources = dict(container.get("resources") or {})
        container["resources"] = dict(resources, limits=dict({"nvidia.com/gpu": gpu}, **(resources.get("limits") or {})))
    return container


def _one_node(container, nodes, rank):
    """The main container of one node of a multinode service, with what the operator appends for it."""
    from ...core.frameworks import FRAMEWORKS

    words = [str(w) for w in list(container.get("command") or []) + list(container.get("args") or [])]
    gpus = to_int(((container.get("resources") or {}).get("limits") or {}).get("nvidia.com/gpu"), 1)
    rules = next((rules for record in FRAMEWORKS for module, rules in record.multinode_flags.items()
                  if any(module in w.split() for w in words)), ())
    for rule in rules:
        sizes = {name: to_int(flag_value(words, options), 1) for name, options in rule.get("sizes", {}).items()}
        over = 1
        for name in rule.get("over", ()):
            over *= sizes[name]
        if rule.get("over") and over <= gpus:
            continue
        per_node = sizes.get("tp", 1) * sizes.get("pp", 1)
        local = max(gpus // per_node, 1)
        values = {"leader": LEADER_ADDRESS, "nodes": nodes, "rank": rank, "local": local, "start": local * rank}
        flags = [f.format(**values) for f in rule["flags"]] + (list(rule.get("worker", ())) if rank else [])
        said = {"append": flags, "origin": "appended by " + rule["origin"],
                "notes": ["multinode.nodeCount %d: this is the %s (node rank %d); the flags after the manifest's are "
                          "appended by %s" % (nodes, "leader" if rank == 0 else "first worker", rank, rule["origin"])]}
        return dict(container, **{OPERATOR: said})
    return container
