"""Values files of two charts read without helm (flagtrace/deploy/readers/chart_values.py): vLLM production-stack
and llm-d-modelservice, each container the chart would render as a Launch with its argv, env, image, GPU count
and each word's origin (the values key and file:line, the chart's default, or the chart template). The llm-d
values are checked against the chart's own renderings committed beside them (helm template output, read by the
Kubernetes reader); the production-stack ones against the argv derived from the chart's templates by hand."""
import os

from ft_support import origin

from flagtrace.core.pinlib import shipped
from flagtrace.deploy.launch import read_paths

HELM = os.path.join(os.path.dirname(os.path.abspath(__file__)), "deploy_corpus", "helm")
STACK = "production-stack 0.1.12"
LLM_D = "llm-d-modelservice 0.4.12"


def read(name):
    [(_, launches, _)] = read_paths([os.path.join(HELM, name)])
    return launches


def test_production_stack_two_models_two_deployments():
    name = "vllm-production-stack-values-04-multiple-models.yaml"
    llama, mistral = read(name)
    assert llama.name == "Deployment/RELEASE-llama3-deployment-vllm container vllm"
    assert llama.argv == ["vllm", "serve", "meta-llama/Llama-3.1-8B-Instruct", "--host", "0.0.0.0", "--port", "8000",
                          "--no-enable-prefix-caching", "--max-model-len", "4096", "--max-num-seqs", "32",
                          "--gpu_memory_utilization", "0.8", "--max_loras", "4"]
    assert mistral.argv == llama.argv[:2] + ["mistralai/Mistral-7B-Instruct-v0.2"] + llama.argv[3:13] + [
        "0.95", "--max_loras", "4"]
    assert (llama.image, llama.gpus, llama.gpu_vendor) == ("vllm/vllm-openai:latest", 1, "nvidia")
    assert llama.framework == "vllm" and llama.release == "vllm==%s" % shipped("vllm")[-1]
    assert origin(llama, "meta-llama/Llama-3.1-8B-Instruct") == \
        "servingEngineSpec.modelSpec[0].modelURL (%s:7)" % name
    assert origin(mistral, "0.95") == "servingEngineSpec.modelSpec[1].vllmConfig.gpuMemoryUtilization (%s:37)" % name
    # the chart writes it whenever enablePrefixCaching is not true, set or not
    assert origin(llama, "--no-enable-prefix-caching") == "chart template deployment-vllm-multi.yaml (%s)" % STACK
    assert origin(llama, "8000") == "servingEngineSpec.containerPort (the chart's values.yaml, %s)" % STACK
    assert llama.env == {"PYTHONHASHSEED": "123", "HF_HOME": "/data", "POD_IP": "<fieldRef status.podIP>",
                         "PROMETHEUS_MULTIPROC_DIR": "/tmp",
                         "HF_TOKEN": "<secretKeyRef RELEASE-secrets/hf_token_llama3>"}
    assert llama.notes[-1] == (
        "rendered by flagtrace from the chart's templates (production-stack chart 0.1.12 at a6c01db), not by helm; "
        "check with: helm template RELEASE vllm/vllm-stack --version 0.1.12 -f %s | flagtrace check -f -"
        % os.path.join(HELM, name))


def test_production_stack_ray_cluster_head_runs_the_entrypoint_scripts_command():
    name = "vllm-production-stack-values-15-pipeline-parallel-raycluster.yaml"
    [head] = read(name)
    assert head.name == "RayCluster/RELEASE-distilgpt2-raycluster-raycluster headGroupSpec container vllm-ray-head"
    # the ConfigMap's vllm-entrypoint.sh: --distributed-executor-backend ray, and pipelineParallelSize, which the
    # Deployment's template ignores
    assert head.argv == ["vllm", "serve", "distilbert/distilgpt2", "--host", "0.0.0.0", "--port", "8000",
                         "--distributed-executor-backend", "ray", "--tensor-parallel-size", "1",
                         "--pipeline-parallel-size", "2"]
    assert (head.image, head.gpus, head.gpu_vendor) == ("lmcache/vllm-openai:latest", 1, "nvidia")
    assert origin(head, "--pipeline-parallel-size") == \
        "servingEngineSpec.modelSpec[0].vllmConfig.pipelineParallelSize (%s:17)" % name
    assert origin(head, "ray") == "chart template ray-cluster.yaml (%s)" % STACK
    assert head.env == {"VLLM_HOST_IP": "<fieldRef status.podIP>", "EXPECTED_NODES": "2", "HF_HOME": "/tmp",
                        "VLLM_USE_V1": "0"}
    assert any("the Ray cluster has 2 GPU(s): 1 on the head, 1 on 1 worker(s)" in n for n in head.notes)


def test_production_stack_disaggregated_prefill_lmcache_and_no_gpu():
    name = "vllm-production-stack-values-16-disagg-prefill.yaml"
    prefill, decode = read(name)
    assert prefill.argv == [
        "/opt/venv/bin/vllm", "serve", "meta-llama/Llama-3.1-8B-Instruct", "--host", "0.0.0.0", "--port", "8000",
        "--enable-prefix-caching", "--max-model-len", "32000", "--kv-transfer-config",
        '{"kv_connector":"LMCacheConnectorV1","kv_role":"kv_producer","kv_connector_extra_config":'
        '{"discard_partial_chunks": false, "lmcache_rpc_port": "sender"}}']
    assert decode.argv[-1] == ('{"kv_connector":"LMCacheConnectorV1","kv_role":"kv_consumer",'
                               '"kv_connector_extra_config":{"discard_partial_chunks": false, '
                               '"lmcache_rpc_port": "receiver"}}')
    # requestGPU is commented out: the chart asks for no GPU
    assert (prefill.image, prefill.gpus, prefill.gpu_vendor) == ("lmcache/vllm-openai:2025-05-27-v1", 0, "")
    assert "servingEngineSpec.modelSpec[0] sets no requestGPU: the chart asks for no GPU" in prefill.notes
    assert origin(prefill, "/opt/venv/bin/vllm") == "chart template deployment-vllm-multi.yaml (%s)" % STACK
    assert origin(decode, "32000") == "servingEngineSpec.modelSpec[1].vllmConfig.maxModelLen (%s:48)" % name
    assert list(prefill.env) == [
        "PYTHONHASHSEED", "HF_HOME", "POD_IP", "PROMETHEUS_MULTIPROC_DIR", "HF_TOKEN", "LMCACHE_USE_EXPERIMENTAL",
        "VLLM_RPC_TIMEOUT", "LMCACHE_LOG_LEVEL", "CUDA_VISIBLE_DEVICES", "LMCACHE_LOCAL_CPU",
        "LMCACHE_MAX_LOCAL_CPU_SIZE", "LMCACHE_REMOTE_SERDE", "UCX_TLS", "LMCACHE_ENABLE_NIXL", "LMCACHE_NIXL_ROLE",
        "LMCACHE_NIXL_RECEIVER_HOST", "LMCACHE_NIXL_RECEIVER_PORT", "LMCACHE_NIXL_BUFFER_SIZE",
        "LMCACHE_NIXL_BUFFER_DEVICE", "LMCACHE_NIXL_ENABLE_GC", "LMCACHE_LMCACHE_INSTANCE_ID"]
    assert (prefill.env["CUDA_VISIBLE_DEVICES"], decode.env["CUDA_VISIBLE_DEVICES"]) == ("0", "1")
    assert (prefill.env["LMCACHE_NIXL_ENABLE_GC"], decode.env["LMCACHE_NIXL_RECEIVER_HOST"]) == ("True", "0.0.0.0")
    assert prefill.env["LMCACHE_LMCACHE_INSTANCE_ID"] == "<fieldRef metadata.name>"


def test_llm_d_pd_exact_and_as_the_charts_own_rendering():
    name = "llm-d-modelservice-values-pd.yaml"
    decode, prefill = read(name)
    assert decode.argv == ["vllm", "serve", "facebook/opt-125m", "--port", "8200", "--served-model-name",
                           "facebook/opt-125m", "--enforce-eager", "--kv-transfer-config",
                           '{"kv_connector":"NixlConnector", "kv_role":"kv_both"}']
    assert prefill.argv == decode.argv[:4] + ["8000"] + decode.argv[5:]  # only decode sits behind the routing proxy
    assert (decode.image, decode.gpus, decode.gpu_vendor) == ("ghcr.io/llm-d/llm-d-cuda:latest", 1, "nvidia")
    assert origin(decode, "--enforce-eager") == "decode.containers[0].args (%s:35)" % name
    assert origin(decode, "8200") == "routing.proxy.targetPort (the chart's values.yaml, %s)" % LLM_D
    assert origin(decode, "--served-model-name") == "chart template _helpers.tpl (%s)" % LLM_D
    # hf://"{{ .Values.modelArtifacts.name }}": the template renders it, and YAML reads the quotes away
    assert origin(decode, "facebook/opt-125m") == (
        "modelArtifacts.uri (%s:14), {{ .Values.modelArtifacts.name }} from modelArtifacts.name (%s:10)" % (name, name))
    assert_as_rendered([decode, prefill], "llm-d-modelservice-output-pd.yaml", "pd")


def test_llm_d_heterogeneous_pd_dra_gpus_and_as_the_charts_own_rendering():
    name = "llm-d-modelservice-values-heterogeneous-pd.yaml"
    decode, prefill = read(name)
    assert decode.argv == ["vllm", "serve", "facebook/opt-125m", "--port", "8200", "--tensor-parallel-size", "2",
                           "--served-model-name", "facebook/opt-125m", "--enforce-eager", "--kv-transfer-config",
                           '{"kv_connector":"NixlConnector", "kv_role":"kv_both"}']
    assert origin(decode, "2") == "decode.parallelism.tensor (%s:43)" % name
    assert (decode.image, decode.gpus, decode.gpu_vendor) == ("ghcr.io/llm-d/llm-d:v0.2.0", 2, "nvidia")
    assert "GPUs by DRA: the chart's ResourceClaimTemplate nvidia-claim-template-decode asks for 2 nvidia device(s), " \
           "not resources.limits" in decode.notes
    # the Gaudi image, yet nvidia.com/gpu: prefill's accelerator override is commented out, the type is nvidia
    assert prefill.image.startswith("vault.habana.ai/gaudi-docker/") and (prefill.gpus, prefill.gpu_vendor) == \
        (1, "nvidia")
    assert prefill.env["TP_SIZE"] == "1" and decode.env["TP_SIZE"] == "2"
    rendered = assert_as_rendered([decode, prefill], "llm-d-modelservice-output-heterogeneous-pd.yaml",
                                  "heterogeneous-pd")
    # The one difference: with DRA the rendering asks for the decode GPUs through a ResourceClaim (count 2 in the
    # ResourceClaimTemplate), not resources.limits, and the Kubernetes reader counts only resources.limits.
    assert (rendered[0].gpus, rendered[0].gpu_vendor) == (0, "")


def assert_as_rendered(launches, output, release):
    """Each Launch equals the Kubernetes reader's of the same container in helm template's output (the release
    name the output was rendered with in place of RELEASE); the GPU count too, except under DRA."""
    [(_, rendered, _)] = read_paths([os.path.join(HELM, output)])
    assert [l.name.replace("RELEASE", release) for l in launches] == [r.name for r in rendered]
    for mine, theirs in zip(launches, rendered):
        assert (mine.argv, mine.env, mine.image, mine.release, mine.framework) == \
            (theirs.argv, theirs.env, theirs.image, theirs.release, theirs.framework), mine.name
        if not any(n.startswith("GPUs by DRA") for n in mine.notes):
            assert (mine.gpus, mine.gpu_vendor) == (theirs.gpus, theirs.gpu_vendor), mine.name
    return rendered


def test_values_the_chart_would_refuse_and_numbers_as_helm_prints_them(tmp_path):
    """helm reads every number as a float64 and prints it with Go's %v (1000000 is 1e+06); a ``required`` value
    that is missing fails helm template, so it is one row with the chart's message."""
    values = tmp_path / "values.yaml"
    values.write_text("servingEngineSpec:\n  modelSpec:\n  - name: a\n    repository: vllm/vllm-openai\n"
                      "    tag: v0.10.1\n    modelURL: m/n\n    requestCPU: 1\n    requestMemory: 1Gi\n"
                      "    requestGPU: 2\n    vllmConfig:\n      maxModelLen: 1000000\n      v0: 1\n"
                      "  - name: off\n    enabled: false\n")
    [launch] = read_paths([str(values)])[0].launches
    assert launch.argv[launch.argv.index("--max-model-len") + 1] == "1e+06"
    assert launch.gpus == 2 and launch.env["VLLM_USE_V1"] == "0" and launch.release == "vllm==0.10.1"
    values.write_text("modelArtifacts:\n  uri: oci://registry/model\ndecode:\n  containers:\n"
                      "  - image: vllm/vllm-openai:v0.10.1\n    modelCommand: vllmServe\n")
    [row] = read_paths([str(values)])[0].launches
    assert row.problem == ("-f %s: helm template fails on these values: arguments for oci:// not implemented (chart "
                           "template _helpers.tpl, %s)" % (values, LLM_D))


def test_a_values_file_of_any_other_chart_is_still_one_row(tmp_path):
    values = tmp_path / "values-prod.yaml"
    values.write_text("replicaCount: 2\nimage:\n  repository: vllm/vllm-openai\n  tag: v0.10.1\n")
    [(_, [row], _)] = read_paths([str(values)])
    assert not row.tokens and row.problem == (
        "-f %s: a Helm values file: flagtrace reads what its chart renders with it; run: helm template RELEASE CHART "
        "-f %s | flagtrace check -f -" % (values, values))
