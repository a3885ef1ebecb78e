"""An operator's own object made into the pod templates its controller creates from it, with what the controller
injects, so that the Kubernetes reader reads them as any pod template — one module per operator:
role_based_group.py (RoleBasedGroup), llm_inference_service.py (KServe's LLMInferenceService and its configs),
graph_deployment.py (NVIDIA Dynamo's DynamoGraphDeployment), ome.py (OME's InferenceService, runtimes and models).
Any other object is returned as it is."""
from . import graph_deployment, llm_inference_service, ome, role_based_group
from .common import LEADER_ADDRESS, OPERATOR  # noqa: F401  (what the readers read of an expanded object)


def expand(obj, artifact):
    """``obj`` as the pods its controller makes; ``artifact``: its file, whose documents and ``objects`` (every
    file's) hold what it names (the configs an LLMInferenceService names, an OME service's runtime and model)."""
    kind = obj.get("kind")
    if kind == "RoleBasedGroup":
        return role_based_group.expand(obj)
    if kind == "LLMInferenceService":
        return llm_inference_service.expand(obj, artifact)
    if kind == "InferenceService" and str(obj.get("apiVersion", "")).startswith("ome.io/"):
        return ome.expand(obj, artifact)
    if kind in ("ClusterServingRuntime", "ServingRuntime") and str(obj.get("apiVersion", "")).startswith("ome.io/"):
        return ome.runtime_alone(obj)
    if kind == "DynamoGraphDeployment":
        return graph_deployment.expand(obj)
    if kind == "LLMInferenceServiceConfig":  # alone: a shipped one as it is; one of the user's as a service would be
        name = (obj.get("metadata") or {}).get("name")
        if name in llm_inference_service.kserve_configs():
            return llm_inference_service.render_alone_or_for(obj, None)
        return llm_inference_service.expand(obj, artifact)
    return obj


def used_by(obj, artifact):
    """(the object that names ``obj`` and reads it as part of itself, its file or None), or (None, None): a KServe
    LLMInferenceServiceConfig a service lays under itself, an OME runtime a service runs."""
    kind, name = obj.get("kind"), (obj.get("metadata") or {}).get("name")
    if kind == "LLMInferenceServiceConfig":
        beside = next((d for d in artifact.documents if isinstance(d, dict) and d.get("kind") == "LLMInferenceService"),
                      None)
        if beside is not None or name in llm_inference_service.kserve_configs():  # a shipped one alone: as it is
            return beside, None
        return artifact.objects.naming(lambda d: d.get("kind") == "LLMInferenceService" and name in [
            r.get("name") for r in (d.get("spec") or {}).get("baseRefs") or [] if isinstance(r, dict)])
    from_ome = str(obj.get("apiVersion", "")).startswith("ome.io/")
    for kinds, key in ((("ClusterServingRuntime", "ServingRuntime"), "runtime"), (("ClusterBaseModel", "BaseModel"),
                                                                                  "model")):
        if from_ome and kind in kinds:
            return artifact.objects.naming(lambda d: d.get("kind") == "InferenceService" and (
                (d.get("spec") or {}).get(key) or {}).get("name") == name, own=artifact.documents)
    return None, None
