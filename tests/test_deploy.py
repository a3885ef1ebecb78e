"""Deployment artifacts read as launch commands (flagtrace/deploy/): real public manifests, compose files and
docker run lines (tests/manifests/, sources in SOURCES.md), each framework container one launch with its
argv, env, GPU count, release from the image tag and each token's origin; what the deployment layers did,
checked against the release's flag table. Nothing runs here (tests/frameworks/test_deploy_explain.py does)."""
import json
import os
import sys

import pytest

from ft_support import ROOT, origin, run_sub
from test_bad_input import assert_clear_error

from flagtrace.adapters.sglang import SGLangAdapter
from flagtrace.adapters.vllm import VLLMAdapter
from flagtrace.deploy.kubelet_env import expand
from flagtrace.deploy.launch import read_paths, read_text
from flagtrace.deploy.origins import findings
from flagtrace.core.pinlib import shipped
from flagtrace.core.exitcodes import ExitCode

MANIFESTS = os.path.join(ROOT, "tests", "manifests")


def launches(name):
    [(_, found, _)] = read_paths([os.path.join(MANIFESTS, name)])
    return found


def test_the_production_stack_chart_as_rendered():
    [vllm] = launches("vllm-production-stack.yaml")
    assert vllm.framework == "vllm" and vllm.gpus == 1 and vllm.gpu_vendor == "nvidia"
    assert vllm.argv[:3] == ["vllm", "serve", "meta-llama/Llama-3.1-8B-Instruct"]
    assert "--no-enable-prefix-caching" in vllm.argv  # the chart appends it
    assert vllm.release == "vllm==%s" % shipped("vllm")[-1]
    assert vllm.notes == ["vllm/vllm-openai:latest names no release; taken as vllm %s, the newest flagtrace knows "
                          "(give --release to choose)" % shipped("vllm")[-1]]
    assert origin(vllm, "--max-model-len").startswith("command (vllm-production-stack.yaml:")


def test_a_renamed_flag_on_an_older_release_is_refused_with_its_history():
    """The chart's --disable-log-requests: vLLM dropped it in 0.17 and brought it back in 0.33."""
    [vllm] = launches("vllm-production-stack.yaml")
    said = {f["option"]: f for f in findings(vllm, VLLMAdapter(), "0.25.1")}
    assert said["--disable-log-requests"]["kind"] == "unknown"
    assert said["--disable-log-requests"]["message"].startswith("vLLM 0.25.1 does not know --disable-log-requests: "
                                                                "its parser refuses it; --disable-log-requests existed "
                                                                "in vLLM 0.11.0–0.16.0, 0.33.0–0.34.0")
    assert findings(vllm, VLLMAdapter(), "0.34.0") == []


def test_sglang_lws_leader_and_worker_are_two_launches_with_their_gpus():
    leader, worker = launches("sglang-k8s-lws-pd-decode.yaml")
    assert leader.name.endswith("leader container sglang-leader")
    assert worker.name.endswith("worker container sglang-worker")
    assert (leader.gpus, worker.gpus) == (8, 8) and leader.framework == worker.framework == "sglang"
    said = {f["option"]: f for f in findings(leader, SGLangAdapter(), "0.5.23")}
    # SGLang's own example on :latest: --cuda-graph-max-bs went in 0.5.20 and is now an ambiguous prefix
    assert said["--cuda-graph-max-bs"]["kind"] == "unknown"
    assert "an ambiguous prefix of --cuda-graph-max-bs-decode, --cuda-graph-max-bs-prefill" in \
        said["--cuda-graph-max-bs"]["message"]


def test_an_option_accepted_only_as_an_abbreviation():
    [sglang] = launches("docker-run-sglang-deepseek-v3.sh")
    [tp] = [f for f in findings(sglang, SGLangAdapter(), "0.5.23") if f["option"] == "--tp"]
    assert tp["kind"] == "abbreviation"
    assert "argparse takes it as an abbreviation of --tp-size" in tp["message"]


def test_a_duplicated_flag_names_both_tokens_and_the_winner():
    text = open(os.path.join(MANIFESTS, "vllm-production-stack.yaml")).read()
    # the chart's extraArgs land after its own flags: a user's --max-model-len again
    text = text.replace('          - "bfloat16"\n', '          - "bfloat16"\n          - "--max-model-len"\n'
                        '          - "16384"\n', 1)
    [vllm] = read_text(text, "stack.yaml")
    [dup] = [f for f in findings(vllm, VLLMAdapter(), "0.34.0") if f["kind"] == "duplicate"]
    assert dup["option"] == "--max-model-len" and [t["text"] for t in dup["tokens"]] == ["--max-model-len"] * 2
    assert dup["message"] == ("--max-model-len is given 2 times: --max-model-len 4096 from command (stack.yaml:55); "
                              "--max-model-len 16384 from command (stack.yaml:59); the parser keeps the last, "
                              "--max-model-len 16384")


def test_a_shell_script_inside_the_image_entrypoint_is_found():
    [vllm] = launches("docker-run-vllm-glm5-bash-lc.sh")
    assert vllm.release == "vllm==0.18.0"
    [entry] = findings(vllm, VLLMAdapter(), "0.18.0")[:1]
    assert entry["kind"] == "entrypoint" and entry["message"].startswith(
        "the image's entrypoint vllm serve runs first and gets bash ... as its arguments")


def test_dynamo_vllm_is_followed_and_kserve_named_not_followed():
    """Dynamo's vLLM worker runs under the vLLM adapter, in the ai-dynamo release its image tag names (my-tag,
    upstream's placeholder: the newest one flagtrace ships); its own flags are not checked against vLLM's
    flag table. KServe's huggingfaceserver stays named: it is not on PyPI, only inside KServe's images."""
    decode, prefill = launches("dynamo-vllm-disagg.yaml")
    assert decode.framework == "vllm" and not decode.wrapper
    assert decode.argv[:3] == ["python3", "-m", "dynamo.vllm"]
    assert decode.release == "ai-dynamo==1.6.1"
    assert decode.notes == ["nvidia/ai-dynamo/vllm-runtime:my-tag names no release; taken as ai-dynamo 1.6.1, the "
                            "newest flagtrace knows (give --release to choose)"]
    assert findings(decode, VLLMAdapter(), "0.25.1") == []  # --disaggregation-mode is Dynamo's, not vLLM's
    isvc, runtime = launches("kserve-huggingfaceserver-llama3.yaml")
    assert isvc.wrapper.startswith("KServe's Hugging Face server") and isvc.gpus == 1
    assert "not on PyPI, only inside KServe's images" in isvc.wrapper


def test_an_operator_crd_finds_its_pod_templates():
    prefill, decode = launches("llm-d-pd-vllm-disaggregatedset.yaml")
    assert "roles prefill worker" in prefill.name and "roles decode worker" in decode.name
    assert (prefill.gpus, decode.gpus) == (1, 4) and prefill.release == ""  # REPLACE_MODEL_SERVER_IMAGE


def test_compose_and_docker_run():
    [service] = launches("compose-sglang.yaml")
    assert service.framework == "sglang" and service.gpus == 1
    [run] = launches("docker-run-vllm-openai-latest.sh")
    assert run.argv[:2] == ["vllm", "serve"] and origin(run, "vllm") == "vllm/vllm-openai image entrypoint"


def test_k8s_env_expansion_as_the_kubelet_does_it():
    env = {"MODEL": "org/m", "N": "2"}
    assert expand("$(MODEL)", env) == ("org/m", ["MODEL"])
    assert expand("--x=$(N)$$(N)", env) == ("--x=2$(N)", ["N"])
    assert expand("$(UNSET)", env) == ("$(UNSET)", [])


def test_a_secret_is_a_placeholder_never_read():
    text = """
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  containers:
    - name: s
      image: lmsysorg/sglang:v0.5.11
      command: [python3, -m, sglang.launch_server, --model-path, x, --api-key, $(KEY)]
      env:
        - name: KEY
          valueFrom: {secretKeyRef: {name: api, key: key}}
"""
    [pod] = read_text(text, "pod.yaml")
    assert pod.argv[-1] == "<secretKeyRef api/key>" and pod.env == {"KEY": "<secretKeyRef api/key>"}
    assert pod.release == "sglang==0.5.11"
    assert origin(pod, "<secretKeyRef api/key>") == "command (pod.yaml:9), $(KEY) from env"


@pytest.mark.parametrize("text, name, phrases", [
    ("kind: Pod\nspec: [unclosed\n", "bad.yaml", ["-f ", "bad.yaml:3 is not valid YAML"]),
    ("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n    - {name: c, image: nginx}\n",
     "nginx.yaml", ["no container runs SGLang or vLLM there"]),
])
def test_bad_manifests_are_one_line_exit_64(tmp_path, text, name, phrases):
    path = tmp_path / name
    path.write_text(text)
    r = run_sub(["explain", "-f", str(path)])
    assert_clear_error(r, ExitCode.USAGE, *phrases)


def test_nothing_is_lost_a_bad_file_or_document_is_a_row_of_its_own(tmp_path):
    """Issue 38: a folder with files that cannot be read (a merge conflict, bytes that are not UTF-8) and a stream
    whose Secret holds a ``{{TOKEN}}`` placeholder: each bad file or document is one launch holding only its
    problem (file:line), and every other document and file is still read. Before, the first bad file stopped
    the whole gate with one line."""
    stack = open(os.path.join(MANIFESTS, "sglang-k8s-lws-pd-decode.yaml")).read()
    (tmp_path / "a-conflict.yaml").write_text("kind: Pod\n<<<<<<< HEAD\nmetadata: {name: a}\n=======\n"
                                              "metadata: {name: b}\n>>>>>>> theirs\n")
    (tmp_path / "b-blob.yaml").write_bytes(b"\x89PNG\x00\x01")
    (tmp_path / "c-stack.yaml").write_text("kind: Secret\nmetadata: {name: hf}\nstringData:\n  token: {{TOKEN}}\n---\n"
                                           + stack)
    (tmp_path / "d-notes.md").write_text("# notes\n")
    (tmp_path / "e-run.sh").write_text("echo hello\n")
    found = {os.path.basename(r.path): r for r in read_paths([str(tmp_path)])}
    assert sorted(found) == ["a-conflict.yaml", "b-blob.yaml", "c-stack.yaml", "d-notes.md", "e-run.sh"]
    [conflict] = found["a-conflict.yaml"].launches
    assert conflict.problem == "-f %s:3 is not valid YAML: could not find expected ':'" % (tmp_path / "a-conflict.yaml")
    [blob] = found["b-blob.yaml"].launches
    assert blob.problem.startswith("-f %s: cannot read it: 'utf-8' codec can't decode" % (tmp_path / "b-blob.yaml"))
    secret, leader, worker = found["c-stack.yaml"].launches
    assert secret.name == "document 1 (line 4)" and "c-stack.yaml:4 is not valid YAML" in secret.problem
    assert leader.name.endswith("leader container sglang-leader") and worker.name.endswith("worker container "
                                                                                            "sglang-worker")
    assert found["d-notes.md"].skipped.startswith("not a form flagtrace reads (.yaml, .yml, .json, .sh, ")
    assert found["e-run.sh"].skipped.startswith("read as a shell script: no container, service or command there "
                                                "runs SGLang or vLLM")
    assert found["c-stack.yaml"].skipped is None


def test_several_commands_need_container_or_check(tmp_path):
    r = run_sub(["explain", "-f", os.path.join(MANIFESTS, "sglang-k8s-lws-pd-decode.yaml")])
    assert_clear_error(r, ExitCode.USAGE, "-f: 2 commands there", "pick one with --container NAME")


def test_a_wrapper_is_one_line(tmp_path):
    r = run_sub(["explain", "-f", os.path.join(MANIFESTS, "dynamo-vllm-disagg.yaml"), "--container", "main"])
    assert_clear_error(r, ExitCode.USAGE, "-f: 2 commands there")
    r = run_sub(["explain", "-f", os.path.join(MANIFESTS, "kserve-huggingfaceserver-llama3.yaml"), "--container",
                 "kserve-container"])
    assert_clear_error(r, ExitCode.USAGE, "-f: 2 commands there")


def test_a_file_and_a_command_are_one_or_the_other():
    r = run_sub(["explain", "-f", os.path.join(MANIFESTS, "compose-sglang.yaml"), "--", "python3", "-m", "x"])
    assert_clear_error(r, ExitCode.USAGE, "give -f FILE or a command after --, not both")


def test_check_takes_several_files_after_one_f_as_pre_commit_passes_them(tmp_path):
    """.pre-commit-hooks.yaml runs `flagtrace check --strict -f` with the changed files appended."""
    for name in ("a.yaml", "b.yaml"):
        (tmp_path / name).write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n"
                                     "    - {name: c, image: nginx}\n")
    r = run_sub(["check", "--strict", "-f", str(tmp_path / "a.yaml"), str(tmp_path / "b.yaml")])
    assert_clear_error(r, ExitCode.USAGE, "no container runs SGLang or vLLM there (looked at 2 files: ")


def test_lws_variables_and_a_pods_index_are_known_statically():
    leader, worker = launches("sglang-k8s-lws-pd-decode.yaml")
    assert leader.argv[leader.argv.index("--nnodes") + 1] == "2"  # $(LWS_GROUP_SIZE): leaderWorkerTemplate.size
    assert leader.argv[leader.argv.index("--node-rank") + 1] == "0"
    assert "LWS_WORKER_INDEX (metadata.labels['leaderworkerset.sigs.k8s.io/worker-index']) taken as 0: the first " \
           "pod" in leader.notes
    assert leader.argv[leader.argv.index("--dist-init-addr") + 1] == "<the leader's address>:20102"
    # the worker template is the group's other pods: the first worker's index (issue 38: it got 0, the leader's)
    assert worker.argv[worker.argv.index("--node-rank") + 1] == "1"
    assert "LWS_WORKER_INDEX (metadata.labels['leaderworkerset.sigs.k8s.io/worker-index']) taken as 1: the first " \
           "worker of its group (each worker pod has its own index, 1 to size-1)" in worker.notes


def test_a_slurm_script_is_read_as_bash_would_run_it(tmp_path):
    """Issue 38: a Slurm batch script (the pattern of SGLang's and vLLM's multi-node Slurm examples): #SBATCH
    nodes and GPUs, SLURM_* for node 0, the script's assignments (${X:-default}, $((...)), an array, export), the
    command after `srun` inside an `if`, a redirection and `&`; what only the run knows stays a placeholder."""
    script = tmp_path / "job.slurm"
    script.write_text("""#!/bin/bash
#SBATCH --nodes=2
#SBATCH --gpus-per-node=8

MODEL=${MODEL:-deepseek-ai/DeepSeek-V3}
TP=$((SLURM_NNODES * 8))
HEAD=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n1)
EXTRA=(--mem-fraction-static 0.85 --trust-remote-code)
export NCCL_DEBUG=INFO
if [ "$SLURM_NODEID" -eq 0 ]; then
  srun --nodes=1 --ntasks=1 -w "$HEAD" \\
    python3 -m sglang.launch_server --model-path "$MODEL" --tp "$TP" --dist-init-addr "$HEAD:5000" \\
      --nnodes "$SLURM_NNODES" --node-rank "$SLURM_NODEID" --port "$BOOT" "${EXTRA[@]}" > server.log 2>&1 &
fi
wait
""")
    [(_, [launch], skipped)] = read_paths([str(script)])
    assert skipped is None and launch.name == "line 11 (srun)" and launch.gpus == 8
    assert launch.argv == ["python3", "-m", "sglang.launch_server", "--model-path", "deepseek-ai/DeepSeek-V3",
                           "--tp", "16", "--dist-init-addr", "$HEAD:5000", "--nnodes", "2", "--node-rank", "0",
                           "--port", "$BOOT", "--mem-fraction-static", "0.85", "--trust-remote-code"]
    assert launch.env["NCCL_DEBUG"] == "INFO" and launch.env["SLURM_NODEID"] == "0"
    assert launch.placeholders == ["$HEAD", "$BOOT"]
    assert launch.release.startswith("sglang==") and "the script names no sglang release" in launch.notes[0]
    assert origin(launch, "--tp") == "job.slurm:11"


def test_a_script_run_without_arguments_keeps_its_defaults(tmp_path):
    """Issue 38: the arguments a script is run with are unknown: getopts' ``X=$OPTARG`` and an argument loop's
    ``X="$2"`` leave the default set before them (open-r1's serve_r1_vllm.slurm, tests/deploy_corpus), ``${4:-N}``
    is N, ``$1`` with no default is a placeholder; ``eval`` runs its words joined; ``bash -lc -- SCRIPT`` (AIBrix's
    RayClusterFleet) and ``bash -c SCRIPT NAME ARGS`` pass ARGS as ``"$@"``."""
    script = tmp_path / "serve.sh"
    script.write_text("""#!/bin/bash
MODEL="deepseek-ai/DeepSeek-R1"
TP=8
while getopts "m:t:" opt; do
  case $opt in
    m) MODEL="$OPTARG" ;;
    t) TP="$OPTARG" ;;
  esac
done
while [[ $# -gt 0 ]]; do case $1 in --tp) TP="$2"; shift 2 ;; esac; done
DRAFT=$1
ARGS="--port ${4:-30000}"
eval "exec vllm serve $MODEL --tensor-parallel-size "$TP" $ARGS --speculative-config.model $DRAFT"
""")
    [(_, [launch], _)] = read_paths([str(script)])
    assert launch.argv == ["vllm", "serve", "deepseek-ai/DeepSeek-R1", "--tensor-parallel-size", "8", "--port",
                           "30000", "--speculative-config.model", "$DRAFT"]
    assert launch.placeholders == ["$DRAFT"] and origin(launch, "--port") == "serve.sh:13"
    pod = tmp_path / "pod.yaml"
    pod.write_text("""apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  containers:
    - name: head
      image: vllm/vllm-openai:v0.11.2
      command: ["/bin/bash", "-lc", "--"]
      args: ["ulimit -n 65536; ray start --head; vllm serve Qwen/Qwen2.5-7B --tensor-parallel-size 2"]
    - name: with-args
      image: vllm/vllm-openai:v0.11.2
      command: ["/bin/bash", "-c", 'exec vllm serve /mnt/models --port 8000 "$@"', "--"]
      args: ["--max-model-len", "8192"]
""")
    head, with_args = read_paths([str(pod)])[0].launches
    assert head.argv == ["vllm", "serve", "Qwen/Qwen2.5-7B", "--tensor-parallel-size", "2"]
    assert origin(head, "--tensor-parallel-size") == "args (pod.yaml:9), line 1 of the script"
    assert with_args.argv == ["vllm", "serve", "/mnt/models", "--port", "8000", "--max-model-len", "8192"]


def test_a_file_the_script_writes_with_a_heredoc_goes_with_the_command_that_names_it(tmp_path):
    """Issue 38: ``cat > F <<EOF`` (expanded), ``cat <<'EOF' > F`` (as typed), ``tee F <<EOF``: the text each file
    holds goes with the command that names it (``--config F`` or ``--config=F``); a file no command names does not."""
    script = tmp_path / "serve.sh"
    script.write_text("""#!/bin/bash
LEN=8192
cat > config.yaml <<EOF
max-model-len: ${LEN}
EOF
cat <<'EOF' > raw.yaml
max-model-len: $LEN
EOF
tee unused.yaml <<EOF
x: 1
EOF
vllm serve Qwen/Qwen2.5-7B-Instruct --config config.yaml
vllm serve Qwen/Qwen2.5-7B-Instruct --config=raw.yaml
""")
    first, second = read_paths([str(script)])[0].launches
    assert first.files == {"config.yaml": "max-model-len: 8192\n"} and second.files == {"raw.yaml": "max-model-len: $LEN\n"}
    assert "raw.yaml: written by the script's heredoc at line 6" in second.notes[-1]


CORPUS = os.path.join(ROOT, "tests", "deploy_corpus")


def corpus(name):
    [read] = read_paths([os.path.join(CORPUS, name)])
    return read.launches


def test_a_role_based_group_role_is_its_template_with_its_patch_and_rbg_variables():
    """Issue 38: RoleBasedGroup (sgl-project/rbg examples, tests/deploy_corpus/rbg): a role's ``templateRef`` is the
    roleTemplates entry with its patch laid over it (the image from the template, the command from the patch), a
    leader-worker role is its leader and first worker with RBG_LWP_* injected, roleTemplates are no pods."""
    prefill, decode = corpus("rbg/vllm-pd-disagg-mooncake-te.yaml")
    assert prefill.name == "RoleBasedGroup/vllm-pd-with-mooncake-te roles prefill container vllm"
    assert prefill.image == "vllm/vllm-openai:latest" and prefill.gpus == 1 and prefill.env["RBG_ROLE_NAME"] == "prefill"
    assert prefill.argv[:3] == ["vllm", "serve", "Qwen/Qwen3-0.6B"] and prefill.argv[-1] == \
        '{"kv_connector":"MooncakeConnector","kv_role":"kv_producer"}'
    assert "kv_consumer" in decode.argv[-1] and origin(prefill, "--kv-transfer-config").startswith(
        "args (vllm-pd-disagg-mooncake-te.yaml:")
    leader, worker = corpus("rbg/sglang-agg-leader-worker.yaml")
    assert leader.argv[-6:] == ["--dist-init-addr", "<the leader's address>:6379", "--nnodes", "2", "--node-rank", "0"]
    assert worker.argv[-1] == "1" and worker.name.endswith("backend worker container sglang")
    assert "RBG_LWP_WORKER_INDEX taken as 1" in worker.notes[-1] and leader.placeholders == ["<the leader's address>:6379"]


def test_a_ray_serve_llm_engine_is_its_engine_kwargs_as_flags():
    """Issue 38: a KubeRay RayService running Ray Serve LLM (ray-project/kuberay's sample): each llm_configs entry
    is a vLLM engine; Ray sets the model (model_source), served_model_name (model_id) and the ray executor;
    engine_kwargs are the flags of the same names; the vLLM release is the one ray 2.52's ray[llm] requires."""
    [engine] = corpus("kuberay/rayservice-ray-serve-llm-deepseek-r1.yaml")
    assert engine.argv[:5] == ["vllm", "serve", "deepseek-ai/DeepSeek-R1", "--served-model-name", "deepseek"]
    assert engine.argv[5:9] == ["--tensor-parallel-size", "8", "--pipeline-parallel-size", "2"]
    assert "--enable-prefix-caching" in engine.argv and engine.argv[-2:] == ["--distributed-executor-backend", "ray"]
    assert engine.gpus == 16 and engine.gpu_type == "H100" and engine.env == {"VLLM_USE_V1": "1"}
    assert engine.release == "vllm==0.11.0" and "the lowest release ray 2.52.0 accepts" in engine.notes[1]
    assert origin(engine, "--max-num-seqs") == "engine_kwargs.max_num_seqs (rayservice-ray-serve-llm-deepseek-r1.yaml:26)"
    [fleet] = corpus("aibrix/rayclusterfleet-vllm-qwen-coder-7b.yaml")  # bash -lc -- "...; vllm serve ..."
    assert fleet.argv[:3] == ["vllm", "serve", "Qwen/Qwen2.5-Coder-7B-Instruct"] and fleet.release == "vllm==0.7.1"


def test_a_kserve_llm_inference_service_runs_the_config_kserve_chooses():
    """Issue 38: KServe's LLMInferenceService (kserve/kserve's DeepSeek-R1 DP+EP sample) has no command: the
    controller lays it over kserve-config-llm-worker-data-parallel (bundled), renders the Go templates with the
    service (parallelism, model name), runs it as a LeaderWorkerSet; the script's eval puts VLLM_ADDITIONAL_ARGS
    last; the worker's start rank is its LWS index times dataLocal."""
    leader, worker = corpus("kserve/llmisvc-deepseek-r1-dp-ep-deepep-ht.yaml")
    assert leader.image == "ghcr.io/llm-d/llm-d-cuda:v0.9.0" and leader.gpus == 8
    argv = leader.argv
    assert argv[:5] == ["vllm", "serve", "/mnt/models", "--served-model-name", "deepseek-ai/DeepSeek-R1-0528"]
    assert argv[argv.index("--data-parallel-size") + 1] == "32" and "--enable-expert-parallel" in argv
    assert argv[argv.index("--data-parallel-start-rank") + 1] == "0" and "--headless" not in argv
    assert argv[-5:] == ["--gpu-memory-utilization", "0.95", "--max-model-len", "8192", "--enforce-eager"]
    assert worker.argv[worker.argv.index("--data-parallel-start-rank") + 1] == "8" and "--headless" in worker.argv
    assert leader.model_configs == ["/mnt/models=deepseek-ai/DeepSeek-R1-0528"]
    assert leader.release == "vllm==0.26.0" and "kserve-config-llm-worker-data-parallel" in leader.notes[1]
    assert origin(leader, "--enforce-eager").endswith("of the script")
    [alone] = corpus("kserve/kserve-config-llm-template.yaml")  # a shipped config alone: what no service gives
    assert "$(.Spec.Model.Name)" in alone.placeholders


def test_a_dynamo_graph_of_either_schema_and_a_multinode_services_leader_and_worker():
    """Issue 38: DynamoGraphDeployment v1beta1 (``components``, the container named main) reads as v1alpha1
    (``services``); a multinode service is its leader and first worker with the flags the operator appends (SGLang:
    --dist-init-addr/--nnodes/--node-rank, backend_sglang.go; vLLM with TP*PP over a node's GPUs: mp,
    backend_vllm.go), named as the operator's; the v1alpha1 service's resources.limits.gpu is the pod's GPUs."""
    decode_leader, decode_worker = corpus("dynamo/dynamo-v1beta1-sglang-disagg-multinode.yaml")[:2]
    assert decode_leader.name.endswith("components decode leader container main") and decode_leader.gpus == 4
    assert decode_leader.argv[-6:] == ["--dist-init-addr", "<the leader's address>:29500", "--nnodes", "2",
                                       "--node-rank", "0"]
    assert decode_worker.argv[-1] == "1" and origin(decode_worker, "--nnodes").startswith(
        "appended by the Dynamo operator (ai-dynamo/dynamo deploy/operator internal/dynamo/backend_sglang.go getMultinodeFlags)")
    alpha = corpus("dynamo/dgd-sglang-disagg-multinode.yaml")
    assert [l.argv[-6:] for l in alpha[:2]] == [decode_leader.argv[-6:], decode_worker.argv[-6:]]
    assert alpha[0].gpus == 4 and alpha[0].env["GLOO_SOCKET_IFNAME"] == "eth0"  # the graph's envs
    worker = corpus("dynamo/dynamo-v1beta1-vllm-disagg-multinode.yaml")[1]
    assert worker.argv[-11:] == ["--distributed-executor-backend", "mp", "--nnodes", "2", "--master-addr",
                                 "<the leader's address>", "--master-port", "29500", "--node-rank", "1", "--headless"]
    decode, prefill = corpus("dynamo/dynamo-v1beta1-vllm-disagg.yaml")
    assert decode.argv == ["python3", "-m", "dynamo.vllm", "--model", "Qwen/Qwen3-0.6B", "--disaggregation-mode",
                           "decode"] and decode.release == "ai-dynamo==1.2.0"


def test_an_ome_inference_service_runs_its_runtime_with_its_models_path(tmp_path):
    """Issue 38: OME's DeepSeek-V3 PD sample (sgl-project/ome config/samples, with its ClusterBaseModel and the
    srt-deepseek-rdma-pd runtime, in tests/deploy_corpus/ome): the service's engine and decoder over the runtime's
    engineConfig/decoderConfig, leader and worker each; $(MODEL_PATH) is the model's storage.path, whose hub id
    stands for it; the runtime's file is read under the service. The runtime alone is one line naming what it
    lacks."""
    folder = os.path.join(CORPUS, "ome")
    reads = {os.path.basename(r.path): r for r in read_paths([folder])}
    rows = reads["isvc-deepseek-v3-pd.yaml"].launches
    assert [r.name.split(" ", 1)[1] for r in rows] == ["engine leader container ome-container",
                                                      "engine worker container ome-container",
                                                      "decoder leader container ome-container",
                                                      "decoder worker container ome-container"]
    leader = rows[0]
    argv = leader.argv
    assert argv[argv.index("--model-path") + 1] == "/raid/models/deepseek-ai/deepseek-v3"
    assert argv[argv.index("--node-rank") + 1] == "0" and rows[1].argv[rows[1].argv.index("--node-rank") + 1] == "1"
    assert leader.env["PARALLELISM_SIZE"] == "16" and leader.gpus == 8
    assert leader.model_configs == ["/raid/models/deepseek-ai/deepseek-v3=deepseek-ai/DeepSeek-V3"]
    assert "--disaggregation-mode" in argv and argv[argv.index("--disaggregation-mode") + 1] == "prefill"
    assert rows[2].argv[rows[2].argv.index("--disaggregation-mode") + 1] == "decode"
    assert reads["srt-deepseek-rdma-pd-clusterservingruntime.yaml"].skipped.startswith(
        "read under InferenceService/deepseek-v3")
    [alone] = read_paths([os.path.join(folder, "srt-deepseek-v3-0324-clusterservingruntime.yaml")])[0].launches
    assert alone.problem == ("ClusterServingRuntime/srt-deepseek-v3-0324: OME sets $(MODEL_PATH) (and "
                             "$(PARALLELISM_SIZE)) from the InferenceService that runs it and that service's model; "
                             "give them with -f")
    missing = tmp_path / "isvc.yaml"
    missing.write_text("apiVersion: ome.io/v1beta1\nkind: InferenceService\nmetadata: {name: x}\n"
                       "spec: {model: {name: m}, runtime: {name: r}, engine: {minReplicas: 1}}\n")
    [row] = read_paths([str(missing)])[0].launches
    assert row.problem.startswith("InferenceService/x runs the runtime r, which is in none of the files given")


def test_an_undefined_variable_is_one_line_exit_64(tmp_path):
    path = tmp_path / "pod.yaml"
    path.write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n    - name: s\n"
                    "      image: lmsysorg/sglang:v0.5.11\n"
                    "      command: [python3, -m, sglang.launch_server, --model-path, $(MODEL_DIR)]\n")
    r = run_sub(["explain", "-f", str(path)])
    assert_clear_error(r, ExitCode.USAGE, "Pod/p container s: the container's env does not define $(MODEL_DIR) "
                                          "(pod.yaml:8) (Kubernetes passes it on as typed)")


def test_a_gate_whose_interpreter_lacks_the_framework_fails_each_row_and_builds_nothing(tmp_path):
    """check -f --python PY, where PY has no SGLang: a failed row per command with explain's reason (was: the
    whole gate ended, 'the variant runner ended after 0 of 2 resolutions'), and no release built for the tags."""
    for name in ("a", "b"):
        (tmp_path / ("%s.yaml" % name)).write_text(
            "apiVersion: v1\nkind: Pod\nmetadata: {name: %s}\nspec:\n  containers:\n    - name: srv\n"
            "      image: lmsysorg/sglang:v0.5.11\n"
            "      command: [python3, -m, sglang.launch_server, --model-path, models/llama-3-8b]\n" % name)
    envs = tmp_path / "envs"
    r = run_sub(["check", "--python", sys.executable, "--format", "json", "-f", str(tmp_path / "a.yaml"),
                 str(tmp_path / "b.yaml")], timeout=300, env={"FLAGTRACE_ENVS": str(envs)})
    assert r.rc == ExitCode.CANNOT_RUN, r
    doc = json.loads(r.out)
    assert [row["status"] for row in doc["rows"]] == ["failed", "failed"]
    assert doc["rows"][0]["message"].startswith("SGLang is not installed for %s; add --release sglang==" % sys.executable)
    assert not envs.exists()


@pytest.mark.parametrize("image, release, said", [
    ("myorg/sglang:v0.4.9.post3-cu126-srt", "sglang==0.4.9.post3", "sglang 0.4.9.post3 is a guess from the tag"),
    ("registry.example.com/ai/vllm:0.10.0-xpu", "vllm==0.10.0", "vllm 0.10.0 is a guess from the tag"),
    ("ghcr.io/acme/vllm:v0.7.0-cuda-12.1-ubuntu22.04", "vllm==0.7.0", "vllm 0.7.0 is a guess from the tag"),
    ("myorg/sglang:2025-11-03", "", "its tag names no sglang release flagtrace can read; give --release "
                                    "sglang==VERSION"),
    ("vllm/vllm-openai:v0.9.2", "vllm==0.9.2", ""),
    ("nginx:1.27.0", "", ""),
])
def test_the_release_an_image_tag_states_whatever_the_registry(image, release, said):
    """Issue 38: images nobody here listed whose tags state the version were "unknown"."""
    from flagtrace.deploy.images import release_of

    got, note = release_of(image)
    assert got == release and said in note and (note == "") == (said == "")


def test_a_skypilot_task_gives_its_gpus_release_and_run_command(tmp_path):
    """Issue 38: a SkyPilot task (the pattern of SkyPilot's own llm/sglang and llm/vllm examples): accelerators ->
    GPU type and count, num_nodes and the SKYPILOT_* a task sees on node 0, envs, setup's pin -> the release, run
    read as a script; the head's address only known when the task runs."""
    task = tmp_path / "serve.yaml"
    task.write_text("""resources:
  accelerators: H100:8
  ports: 30000
num_nodes: 2
envs:
  MODEL_NAME: deepseek-ai/DeepSeek-V3
  HF_TOKEN: null
setup: |
  pip install "sglang[all]==0.5.11"
run: |
  MASTER_ADDR=$(echo "$SKYPILOT_NODE_IPS" | head -n1)
  python -m sglang.launch_server --model-path $MODEL_NAME --tp $(($SKYPILOT_NUM_GPUS_PER_NODE * $SKYPILOT_NUM_NODES)) \\
    --nnodes $SKYPILOT_NUM_NODES --node-rank $SKYPILOT_NODE_RANK --dist-init-addr $MASTER_ADDR:5000 --port 30000
""")
    [(_, [launch], _)] = read_paths([str(task)])
    assert launch.argv == ["python", "-m", "sglang.launch_server", "--model-path", "deepseek-ai/DeepSeek-V3", "--tp",
                           "16", "--nnodes", "2", "--node-rank", "0", "--dist-init-addr", "$MASTER_ADDR:5000",
                           "--port", "30000"]
    assert (launch.gpu_type, launch.gpus, launch.release) == ("H100", 8, "sglang==0.5.11")
    assert launch.placeholders == ["$MASTER_ADDR"] and origin(launch, "--tp") == "run (serve.yaml:12)"
    assert launch.env["MODEL_NAME"] == "deepseek-ai/DeepSeek-V3" and launch.env["SKYPILOT_NODE_RANK"] == "0"


def test_shards_split_the_rows_every_one_in_exactly_one(tmp_path):
    """Issue 38: --shard K/N (check -f, lock -f) for a repository larger than one runner: every row in exactly one
    shard, whatever N; a K or N out of range is a usage line."""
    from flagtrace.engine.deployment import shard_of

    for i in range(5):
        (tmp_path / ("p%d.yaml" % i)).write_text(
            "apiVersion: v1\nkind: Pod\nmetadata: {name: p%d}\nspec:\n  containers:\n    - name: srv\n"
            "      image: lmsysorg/sglang:v0.5.%d\n"
            "      command: [python3, -m, sglang.launch_server, --model-path, models/llama-3-8b]\n" % (i, 9 + i % 3))
    everything = [l for read in read_paths([str(tmp_path)]) for l in read.launches]
    for n in range(1, 8):
        parts = [shard_of(everything, k, n) for k in range(1, n + 1)]
        assert sorted(l.describe() for part in parts for l in part) == sorted(l.describe() for l in everything)
        assert max(map(len, parts)) - min(map(len, parts)) <= 1
    rows = []
    for k in (1, 2):  # the gate itself, with an interpreter that has no SGLang: a failed row each, nothing built
        r = run_sub(["check", "--python", sys.executable, "--format", "json", "-f", str(tmp_path), "--shard",
                     "%d/2" % k], timeout=300, env={"FLAGTRACE_ENVS": str(tmp_path / "envs")})
        doc = json.loads(r.out)
        assert doc["shard"] == "%d/2" % k
        rows += [row["name"] for row in doc["rows"]]
    assert sorted(rows) == sorted(l.name for l in everything)
    r = run_sub(["check", "--python", sys.executable, "-f", str(tmp_path), "--shard", "3/2"])
    assert_clear_error(r, ExitCode.USAGE, "--shard takes K/N with 1 <= K <= N", lines=None)


def test_lock_merge_joins_every_shard_and_refuses_a_gap_or_a_repeat(tmp_path):
    from flagtrace.engine import lock

    entry = {"release": "sglang==0.5.11", "image": "", "values": {"tp_size": 1}, "unstable": []}
    lock.write(str(tmp_path / "1.json"), {"a.yaml: Pod/a container srv": entry}, "1/2")
    lock.write(str(tmp_path / "2.json"), {"b.yaml: Pod/b container srv": entry}, "2/2")
    r = run_sub(["lock", "--merge", str(tmp_path / "1.json"), str(tmp_path / "2.json"), "-o", str(tmp_path / "all.json")])
    assert r.rc == 0 and "wrote %s: 2 commands from 2 parts" % (tmp_path / "all.json") in r.err, r
    assert lock.read(str(tmp_path / "all.json")) == {"a.yaml: Pod/a container srv": entry,
                                                     "b.yaml: Pod/b container srv": entry}
    r = run_sub(["lock", "--merge", str(tmp_path / "1.json"), "-o", str(tmp_path / "x.json")])
    assert_clear_error(r, ExitCode.USAGE, "--merge: shard 2 of 2 missing")
    lock.write(str(tmp_path / "2b.json"), {"a.yaml: Pod/a container srv": entry}, "2/2")
    r = run_sub(["lock", "--merge", str(tmp_path / "1.json"), str(tmp_path / "2b.json"), "-o", str(tmp_path / "x.json")])
    assert_clear_error(r, ExitCode.USAGE, "--merge: a.yaml: Pod/a container srv is in two parts")
    assert not (tmp_path / "x.json").exists()


def test_a_chart_is_one_row_with_the_command_that_renders_it_or_what_helm_renders(tmp_path, monkeypatch):
    """Issue 38: a chart's templates are not YAML until rendered (they were "line N is not valid YAML", one per
    template). Without helm: one row for the chart and one for a values file alone, each with the exact command;
    with a helm on PATH (here a stand-in script printing what `helm template` would), the rendering is read."""
    chart = tmp_path / "charts" / "llm"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: llm\nversion: 0.1.0\n")
    (chart / "values.yaml").write_text("image: vllm/vllm-openai:v0.34.0\n")
    (chart / "templates" / "deploy.yaml").write_text("kind: Deployment\nmetadata:\n  name: {{ .Release.Name }}\n")
    (tmp_path / "values-prod.yaml").write_text("replicaCount: 2\n")
    monkeypatch.setenv("PATH", str(tmp_path / "no-helm-here"))
    found = {os.path.basename(r.path): r for r in read_paths([str(tmp_path)])}
    assert sorted(found) == ["llm", "values-prod.yaml"]
    [row] = found["llm"].launches
    assert row.problem == ("-f %s: a Helm chart (Chart.yaml): flagtrace reads what it renders and no helm is on PATH "
                           "here; run: helm template RELEASE %s | flagtrace check -f -" % (chart, chart))
    [values] = found["values-prod.yaml"].launches
    assert "a Helm values file: flagtrace reads what its chart renders with it; run: helm template RELEASE CHART " \
           "-f %s | flagtrace check -f -" % (tmp_path / "values-prod.yaml") in values.problem
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    helm = bin_dir / "helm"
    helm.write_text("#!/bin/sh\ncat %s\n" % os.path.join(MANIFESTS, "vllm-production-stack.yaml"))
    helm.chmod(0o755)
    monkeypatch.setenv("PATH", "%s:/usr/bin:/bin" % bin_dir)
    [(path, [vllm], _)] = read_paths([str(chart)])
    assert path == str(chart) and vllm.source == "%s (helm template)" % chart and vllm.argv[:2] == ["vllm", "serve"]


def test_a_dockerfile_gives_its_images_command_environment_and_release(tmp_path):
    """Issue 38: a Dockerfile's ENTRYPOINT + CMD of its last stage (a stage FROM another inherits), ENV (not
    ARG, which is build time only), the FROM image's tag for the release."""
    (tmp_path / "Dockerfile").write_text(
        'FROM lmsysorg/sglang:v0.5.9-cu126 AS base\nARG MODEL=Qwen/Qwen3-8B\nENV SGLANG_ENABLE_JIT_DEEPGEMM=0 \\\n'
        '    HF_HOME=/models\nFROM base\nENV PORT=30000\nENTRYPOINT ["python3", "-m", "sglang.launch_server"]\n'
        'CMD ["--model-path", "Qwen/Qwen3-8B", "--port", "30000", "--tp", "2"]\n')
    [(_, [launch], _)] = read_paths([str(tmp_path)])
    assert launch.argv == ["python3", "-m", "sglang.launch_server", "--model-path", "Qwen/Qwen3-8B", "--port",
                           "30000", "--tp", "2"]
    assert launch.env == {"SGLANG_ENABLE_JIT_DEEPGEMM": "0", "HF_HOME": "/models", "PORT": "30000"}
    assert (launch.image, launch.release) == ("lmsysorg/sglang:v0.5.9-cu126", "sglang==0.5.9")
    assert origin(launch, "--tp") == "CMD (Dockerfile:8)" and origin(launch, "python3") == "ENTRYPOINT (Dockerfile:7)"


def test_compose_interpolates_like_compose(tmp_path):
    """Issue 38: ${VAR:-default} and ${VAR} from the project's .env, $$ a literal $ (for the container), in the image,
    the command and the environment; what .env does not set is a placeholder."""
    (tmp_path / ".env").write_text("PORT=30000\n")
    (tmp_path / "compose.yaml").write_text(
        "services:\n  sglang:\n    image: lmsysorg/sglang:${SGLANG_TAG:-v0.5.9}\n"
        "    command: python3 -m sglang.launch_server --model-path ${MODEL:-Qwen/Qwen3-8B} --port ${PORT}"
        " --host $${HOST} --max-running-requests ${MAX_RUNNING}\n")
    [(_, [launch], _)] = read_paths([str(tmp_path / "compose.yaml")])
    assert launch.argv == ["python3", "-m", "sglang.launch_server", "--model-path", "Qwen/Qwen3-8B", "--port", "30000",
                           "--host", "${HOST}", "--max-running-requests", "${MAX_RUNNING}"]
    assert (launch.image, launch.release) == ("lmsysorg/sglang:v0.5.9", "sglang==0.5.9")
    assert launch.placeholders == ["${MAX_RUNNING}"]


def test_a_release_that_cannot_be_had_is_its_rows_not_the_whole_gate(tmp_path):
    """Issue 38 (found by tests/deploy_corpus): one image tag outside the supported range, one release not built
    under --offline: before, the first stopped the whole gate (exit 3, one line); now each is its own rows'
    answer (input 64, failed 3) and every other release is still built and run."""
    for name, image in (("old", "vllm/vllm-openai:v0.8.5"), ("unbuilt", "lmsysorg/sglang:v0.5.11"),
                        ("other", "lmsysorg/sglang:v0.5.9")):
        command = "[vllm, serve, x]" if "vllm" in image else "[python3, -m, sglang.launch_server, --model-path, x]"
        (tmp_path / ("%s.yaml" % name)).write_text(
            "apiVersion: v1\nkind: Pod\nmetadata: {name: %s}\nspec:\n  containers:\n    - name: srv\n"
            "      image: %s\n      command: %s\n" % (name, image, command))
    r = run_sub(["check", "--offline", "--format", "json", "-f", str(tmp_path)], timeout=300,
                env={"FLAGTRACE_ENVS": str(tmp_path / "envs")})
    rows = {row["name"].split()[0]: row for row in json.loads(r.out)["rows"]}
    assert r.rc == ExitCode.USAGE, r
    assert (rows["Pod/old"]["status"], rows["Pod/old"]["exit"]) == ("input", 64)
    assert "vllm 0.8.5 is outside the releases flagtrace supports" in rows["Pod/old"]["message"]
    for name, release in (("Pod/unbuilt", "sglang==0.5.11"), ("Pod/other", "sglang==0.5.9")):
        assert (rows[name]["status"], rows[name]["exit"]) == ("failed", 3)
        assert rows[name]["message"].startswith("%s is not built here and --offline forbids the network" % release)
