"""-f on real public manifests, run for real: the release the image tag names (from the builder's cache that
`make vllm-env` / `make sglang-env` filled), the container's env and GPU count, the chart's own flags
honoured; check -f over several commands as a gate; lock and drift."""
import json
import os
import shutil
import tempfile

import pytest

from ft_support import run_sub
from sglang_support import ROOT

from flagtrace.core.pinlib import shipped
from flagtrace.core.exitcodes import ExitCode

MANIFESTS = os.path.join(ROOT, "tests", "manifests")
ENVS = os.path.join(ROOT, ".envs")
VLLM = shipped("vllm")[-1]  # what vllm/vllm-openai:latest is taken as


def built(framework, version):
    return os.path.isfile(os.path.join(ENVS, framework, "overlays", version, ".flagtrace-stamp"))


needs = pytest.mark.skipif(not (built("vllm", VLLM) and built("sglang", "0.5.11")),
                           reason="vllm %s and sglang 0.5.11 are built by make vllm-env / sglang-env" % VLLM)


def flagtrace(argv, **env):
    return run_sub(argv, timeout=900, env=dict({"FLAGTRACE_ENVS": ENVS}, **env))


@needs
def test_the_production_stack_chart_explained_with_its_image_release_and_gpu():
    r = flagtrace(["explain", "-f", os.path.join(MANIFESTS, "vllm-production-stack.yaml"), "--gpu", "H100",
                   "--format", "json"])
    assert r.rc == 0, r
    doc = r.doc
    assert doc["adapter"]["version"] == VLLM
    assert doc["simulation"]["describe"].startswith("H100-80G x1 ")  # nvidia.com/gpu: 1 in the manifest
    deployment = doc["deployment"]
    assert deployment["release"] == "vllm==" + VLLM and deployment["gpus"] == 1
    assert deployment["notes"] == ["vllm/vllm-openai:latest names no release; taken as vllm %s, the newest "
                                   "flagtrace knows (give --release to choose)" % VLLM]
    assert deployment["tokens"][0] == {"text": "vllm", "origin": "command (vllm-production-stack.yaml:46)"}
    fields = {f["field"]: f for f in doc["fields"]}
    prefix = fields["cache_config.enable_prefix_caching"]  # the chart always appends --no-enable-prefix-caching
    assert prefix["verdict"] == "honoured" and prefix["final"]["value"] is False
    assert prefix["requested"]["typed"] == "--no-enable-prefix-caching"
    assert fields["model_config.max_model_len"]["final"]["value"] == 4096


@needs
def test_check_f_with_one_command_is_the_gate_with_its_expectations():
    """check -f FILE naming one command is the gate all the same (``flagtrace/gate@1``, one row): its --expect in
    the row, its exit (issue 38: the document's shape never depends on the number of commands)."""
    manifest = os.path.join(MANIFESTS, "vllm-production-stack.yaml")
    r = flagtrace(["check", "-f", manifest, "--gpu", "H100", "--expect", "model_config.max_model_len=4096",
                   "--expect", "cache_config.enable_prefix_caching=True", "--format", "json"])
    assert r.rc == ExitCode.OVERRIDDEN, r  # the chart appends --no-enable-prefix-caching
    assert r.doc["schema"] == "flagtrace/gate@1"
    [row] = r.doc["rows"]
    assert [(e["field"], e["ok"]) for e in row["expectations"]] == [("model_config.max_model_len", True),
                                                                    ("cache_config.enable_prefix_caching", False)]
    assert row["deployment"]["release"] == "vllm==" + VLLM and row["exit"] == ExitCode.OVERRIDDEN


@needs
def test_release_overrides_the_tag_and_a_refused_flag_is_the_parsers_error():
    """The same chart on vLLM 0.25.1 (--release): --disable-log-requests is gone there; vLLM's own parser
    refuses it (exit 2) and the deployment finding says where it went."""
    if not built("vllm", "0.25.1"):
        pytest.skip("vllm 0.25.1 is built by make vllm-env")
    r = flagtrace(["explain", "-f", os.path.join(MANIFESTS, "vllm-production-stack.yaml"), "--gpu", "H100",
                   "--release", "vllm==0.25.1", "--format", "json"])
    assert r.rc == ExitCode.TARGET_RAISED, r
    assert r.doc["error"]["kind"] == "argparse" and "--disable-log-requests" in r.doc["error"]["message"]
    [finding] = [f for f in r.doc["deployment"]["findings"] if f["option"] == "--disable-log-requests"]
    assert finding["kind"] == "unknown" and "0.11.0–0.16.0, 0.33.0–0.34.0" in finding["message"]


@needs
def test_check_over_a_folder_is_a_gate_with_a_row_per_command(tmp_path):
    if not built("ai-dynamo", "1.6.1"):
        pytest.skip("ai-dynamo 1.6.1 (Dynamo's manifest) is built by make dynamo-env")
    folder = tmp_path / "deploy"
    folder.mkdir()
    for name in ("vllm-production-stack.yaml", "docker-run-vllm-openai-latest.sh", "dynamo-vllm-disagg.yaml"):
        shutil.copy(os.path.join(MANIFESTS, name), folder / name)
    (folder / "sglang.yaml").write_text("""
apiVersion: apps/v1
kind: Deployment
metadata: {name: sglang-llama}
spec:
  template:
    spec:
      containers:
        - name: sglang
          image: lmsysorg/sglang:v0.5.11-cu129
          command: [python3, -m, sglang.launch_server]
          args: [--model-path, $(MODEL), --page-size, "16", --tp, "2"]
          env: [{name: MODEL, value: meta-llama/Meta-Llama-3-8B-Instruct}]
          resources: {limits: {nvidia.com/gpu: 2}}
        - name: sglang-new
          image: lmsysorg/sglang:v0.5.23
          command: [python3, -m, sglang.launch_server]
          args: [--model-path, $(MODEL), --cuda-graph-max-bs, "256"]
          env: [{name: MODEL, value: meta-llama/Meta-Llama-3-8B-Instruct}]
""")
    # nothing lost (issue 38): a chart template, a Secret with a placeholder before a good document, a README
    (folder / "chart-template.yaml").write_text("apiVersion: v1\nkind: Pod\nmetadata:\n  name: {{ .Release.Name }}\n")
    with open(folder / "sglang.yaml", "r+") as fh:
        text = fh.read()
        fh.seek(0)
        fh.write("kind: Secret\nmetadata: {name: hf}\nstringData:\n  token: {{TOKEN}}\n---" + text)
    (folder / "README.md").write_text("# how we deploy\n")
    r = flagtrace(["check", "-f", str(folder), "--gpu", "H100", "--format", "json"])
    rows = {row["name"]: row for row in r.doc["rows"]}
    assert r.rc == ExitCode.USAGE, r  # the worst row: an input one (SGLang 0.5.23's parser refuses a flag: exit 2)
    bad = {(os.path.basename(row["source"]), row["name"]): (row["status"], row["exit"], row["message"])
           for row in r.doc["rows"] if row["status"] == "input"}
    assert bad == {("chart-template.yaml", "document 1 (line 4)"): (
                       "input", 64, "-f %s:4 is not valid YAML: found unhashable key" % (folder / "chart-template.yaml")),
                   ("sglang.yaml", "document 1 (line 4)"): (
                       "input", 64, "-f %s:4 is not valid YAML: found unhashable key" % (folder / "sglang.yaml"))}
    looked = {os.path.basename(f["path"]): f for f in r.doc["looked_at"]}
    assert looked["README.md"]["skipped"].startswith("not a form flagtrace reads")
    assert (looked["sglang.yaml"]["commands"], looked["sglang.yaml"]["unreadable"]) == (2, 1)
    new = rows["Deployment/sglang-llama container sglang-new"]
    assert (new["status"], new["exit"], new["release"]) == ("error", 2, "sglang==0.5.23")
    assert "--cuda-graph-max-bs" in new["message"]
    [finding] = new["deployment"]["findings"]
    assert finding["kind"] == "unknown" and "removed in 0.5.20" in finding["message"]
    assert rows["docker run (line 1)"]["status"] == "resolved"
    stack = rows["Deployment/vllm-llama3-deployment-vllm container vllm"]
    assert (stack["status"], stack["exit"]) == ("resolved", 0)
    sglang = rows["Deployment/sglang-llama container sglang"]
    assert (sglang["status"], sglang["release"]) == ("resolved", "sglang==0.5.11")
    assert [f["kind"] for f in sglang["deployment"]["findings"]] == ["abbreviation"]  # --tp for --tp-size
    # Dynamo's vLLM worker, followed on ai-dynamo 1.6.1 (my-tag taken as the newest): upstream's example
    # decode worker resolves; its prefill worker is refused by Dynamo 1.6.1 itself (args.py), which no longer
    # defaults to NIXL and wants --kv-transfer-config
    dynamo = {name.rsplit(" services ", 1)[-1]: row for name, row in rows.items()
              if name.startswith("DynamoGraphDeployment")}
    assert {k: (row["status"], row["exit"], row["release"]) for k, row in dynamo.items()} == {
        "VllmDecodeWorker container main": ("resolved", 0, "ai-dynamo==1.6.1"),
        "VllmPrefillWorker container main": ("error", 2, "ai-dynamo==1.6.1")}
    prefill = dynamo["VllmPrefillWorker container main"]
    assert "update_dynamo_config_with_engine" in prefill["message"] and "--kv-transfer-config" in prefill["message"]
    assert r.doc["summary"] == {"resolved": 4, "incomplete": 0, "error": 2, "failed": 0, "input": 2, "unsupported": 0}


@needs
def test_lock_then_check_fails_on_drift_and_says_what_set_the_new_value(tmp_path):
    manifest = tmp_path / "stack.yaml"
    shutil.copy(os.path.join(MANIFESTS, "vllm-production-stack.yaml"), manifest)
    lock = tmp_path / "flagtrace.lock.json"
    r = flagtrace(["lock", "-f", str(manifest), "--gpu", "H100", "-o", str(lock)])
    assert r.rc == 0 and "flagtrace: wrote %s: 1 command" % lock in r.err, r
    entry = json.loads(lock.read_text())["commands"]["%s: Deployment/vllm-llama3-deployment-vllm container vllm"
                                                      % manifest]
    assert entry["release"] == "vllm==" + VLLM and entry["values"]["model_config.max_model_len"] == "4096"
    same = flagtrace(["check", "-f", str(manifest), "--gpu", "H100", "--lock", str(lock), "--format", "json"])
    assert same.rc == 0 and "drift" not in same.doc["rows"][0], same
    manifest.write_text(manifest.read_text().replace('"4096"', '"8192"', 1))
    moved = flagtrace(["check", "-f", str(manifest), "--gpu", "H100", "--lock", str(lock), "--format", "json"])
    assert moved.rc == ExitCode.OVERRIDDEN, moved
    drift = {d["field"]: d for d in moved.doc["rows"][0]["drift"]}
    assert drift["model_config.max_model_len"] == {"field": "model_config.max_model_len", "locked": "4096",
                                                   "now": "8192", "by": "asked for with --max-model-len"}


@pytest.mark.skipif(not (built("sglang", "0.5.23") and built("sglang", "0.5.15")),
                    reason="sglang 0.5.15 and 0.5.23 are built by make sglang-env")
def test_sglangs_own_lws_pd_example_leader_and_worker():
    """SGLang's LeaderWorkerSet P/D decode example (DeepSeek-R1-0528, 2 x 8 GPUs): on its :latest image (0.5.23)
    both commands are refused (--cuda-graph-max-bs went in 0.5.20); on 0.5.15 both resolve, env expanded
    ($(LWS_GROUP_SIZE) -> --nnodes 2) and the GPU count taken from the manifest."""
    manifest = os.path.join(MANIFESTS, "sglang-k8s-lws-pd-decode.yaml")
    common = ["check", "-f", manifest, "--gpu", "H200", "--model-config", "deepseek-ai/DeepSeek-R1", "--format", "json"]
    latest = flagtrace(common, HF_HUB_OFFLINE="1")
    assert latest.rc == ExitCode.TARGET_RAISED, latest
    assert [(r["status"], r["release"]) for r in latest.doc["rows"]] == [("error", "sglang==0.5.23")] * 2
    assert all("ambiguous option: --cuda-graph-max-bs" in r["message"] for r in latest.doc["rows"])
    older = flagtrace(common + ["--release", "sglang==0.5.15"], HF_HUB_OFFLINE="1")
    assert older.rc == 0, older
    leader, worker = older.doc["rows"]
    assert (leader["status"], leader["release"]) == ("resolved", "sglang==0.5.15")
    assert leader["name"].endswith("leader container sglang-leader") and worker["name"].endswith(
        "worker container sglang-worker")
    tokens = [t["text"] for t in worker["deployment"]["tokens"]]
    assert tokens[tokens.index("--nnodes") + 1] == "2" and worker["deployment"]["gpus"] == 8


@needs
def test_commands_sharing_an_import_each_stand_in_their_own_model(tmp_path):
    """check -f resolves commands on one release in one import; the second names another model, whose bundled
    config's auto_map names remote code: that model's own folder is stood in for (it was the first's)."""
    script = tmp_path / "two.sh"
    script.write_text("docker run --gpus all vllm/vllm-openai:latest --model meta-llama/Llama-3.1-8B-Instruct\n"
                      "docker run --gpus all vllm/vllm-openai:latest --model nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16"
                      " --max-model-len 8192 --trust-remote-code\n")
    r = flagtrace(["check", "-f", str(script), "--gpu", "H100", "--format", "json"])
    assert r.rc == 0, r
    assert [(row["name"], row["status"]) for row in r.doc["rows"]] == [
        ("docker run (line 1)", "resolved"), ("docker run (line 2)", "resolved")]


@pytest.mark.skipif(not built("sglang", "0.5.11"), reason="sglang 0.5.11 is built by make sglang-env")
def test_a_script_gate_never_hands_a_placeholder_to_an_integer_flag(tmp_path):
    """Issue 38: a launch script whose port is only known at run time (``--port "$PORT"``, PORT never set in the
    script) and whose release is the one it installs. The parser never receives "$PORT": SGLang's own default for
    --port stands in, and the row says so; --host keeps its placeholder text (a string option takes any text).
    Before, a shell script was "not valid YAML" or, pasted, "argument --port: invalid int value: '$PORT'"."""
    script = tmp_path / "serve.sh"
    script.write_text('#!/usr/bin/env bash\nset -euo pipefail\npip install "sglang[all]==0.5.11"\n'
                      'MODEL_PATH=${MODEL_PATH:-meta-llama/Meta-Llama-3-8B-Instruct}\n'
                      'exec python3 -m sglang.launch_server --model-path "$MODEL_PATH" --host "$HOST_IP" '
                      '--port "$PORT" --page-size 16\n')
    r = flagtrace(["check", "-f", str(script), "--gpu", "H100", "--format", "json"], HF_HUB_OFFLINE="1")
    assert r.rc == 0, r
    [row] = r.doc["rows"]
    assert (row["status"], row["release"], row["name"]) == ("resolved", "sglang==0.5.11", "line 5")
    assert "--port $PORT: only known when the deployment runs; 30000 stood in (the option's default)" in row["notes"]
    assert "only known when the script runs: $HOST_IP, $PORT (a value of each option's own type stands in)" \
        in row["notes"]


@needs
def test_a_config_file_the_script_writes_with_a_heredoc_is_the_one_the_command_reads(tmp_path):
    """Issue 38: a job script that writes vLLM's ``--config`` YAML with a heredoc (its ``${LEN}`` expanded, as bash
    does for an unquoted delimiter) and passes it: vLLM's own parser reads that text (max_model_len 8192 from
    the config file, origin "config"); the copy flagtrace writes for the run is gone when it exits."""
    script = tmp_path / "serve.slurm"
    script.write_text("#!/bin/bash\n#SBATCH --gpus-per-node=1\nLEN=8192\ncat > config.yaml <<EOF\n"
                      "max-model-len: ${LEN}\ngpu-memory-utilization: 0.85\nEOF\n"
                      "srun vllm serve Qwen/Qwen2.5-7B-Instruct --config config.yaml --port 8000\n")
    before = set(os.listdir(tempfile.gettempdir()))
    r = flagtrace(["explain", "-f", str(script), "--gpu", "H100", "--format", "json"], HF_HUB_OFFLINE="1")
    assert r.rc == 0, r
    fields = {f["field"]: f for f in r.doc["fields"]}
    assert fields["model_config.max_model_len"]["final"]["value"] == 8192
    assert fields["model_config.max_model_len"]["origin"] == "config"
    assert fields["cache_config.gpu_memory_utilization"]["final"]["value"] == 0.85
    assert "config.yaml: written by the script's heredoc at line 4; the command reads it as written there" \
        in r.doc["deployment"]["notes"]
    assert not {n for n in set(os.listdir(tempfile.gettempdir())) - before if n.startswith("flagtrace-written-")}


@needs
def test_a_kserve_service_resolves_on_the_model_its_uri_names(tmp_path):
    """Issue 38: a KServe LLMInferenceService (no command: KServe's bundled kserve-config-llm-template gives
    ``vllm serve /mnt/models ...``) whose ``spec.model.uri`` is ``hf://ID``: the gate stands ID's config.json in for
    /mnt/models, in the plan of its import group as in each row (before, the first command's plan looked for
    /mnt/models itself and the row said "does not exist here"); the service's tensor parallel size and
    VLLM_ADDITIONAL_ARGS reach vLLM's parser."""
    service = tmp_path / "svc.yaml"
    service.write_text("apiVersion: serving.kserve.io/v1alpha2\nkind: LLMInferenceService\nmetadata: {name: qwen}\n"
                       "spec:\n  model: {uri: 'hf://Qwen/Qwen2.5-7B-Instruct', name: qwen}\n"
                       "  parallelism: {tensor: 2}\n  template:\n    containers:\n    - name: main\n      env:\n"
                       "      - {name: VLLM_ADDITIONAL_ARGS, value: '--max-model-len 8192'}\n"
                       "      resources: {limits: {nvidia.com/gpu: '2'}}\n")
    r = flagtrace(["check", "-f", str(service), "--release", "vllm==" + VLLM, "--gpu", "H100", "--format", "json"],
                  HF_HUB_OFFLINE="1")
    [row] = r.doc["rows"]
    assert row["status"] == "resolved", row
    assert "/mnt/models holds hf://Qwen/Qwen2.5-7B-Instruct (spec.model.uri)" in " ".join(row["notes"])
