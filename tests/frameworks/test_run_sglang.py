"""``flagtrace run`` through real SGLang 0.5.11: a bash launch script starts the release's wrapper
interpreter (an sh script that puts the overlay first on PYTHONPATH and execs the shared venv),
on a simulated H100; the server process is probed at any depth and stops before weights load."""
import json
import os
import subprocess
import sys
import tempfile

from flagtrace.probe import modelconfigs
from sglang_support import ROOT, python_for

VERSION = "0.5.11"


def test_run_a_launch_script_through_real_sglang():
    python_for(VERSION)  # fails with the make target when the environment is missing
    with tempfile.TemporaryDirectory() as tmp:
        saved = os.path.join(tmp, "run.json")
        argv = [sys.executable, "-m", "flagtrace", "run", "--gpu", "H100", "--save-trace", saved, "--width", "200",
                "--", "bash", "tests/scripts/sglang_launch.sh"]
        proc = subprocess.run(argv, capture_output=True, text=True, cwd=ROOT, timeout=600)
        assert proc.returncode == 0, proc.stderr[-3000:]
        report = subprocess.run([sys.executable, "-m", "flagtrace", "run", "--from", saved, "--format", "json"],
                                capture_output=True, text=True, cwd=ROOT, timeout=120)
        doc = json.loads(report.stdout)
        with open(saved) as fh:
            run = json.load(fh)
    text = " ".join(proc.stdout.split())
    [server] = [p for p in doc["processes"] if p["kind"] == "python" and "sglang.launch_server" in p["argv"]]
    # what the server process received, recorded inside it
    assert server["argv"][1:] == ["-m", "sglang.launch_server", "--model-path", "models/llama-3-8b", "--page-size", "64"]
    assert server["venv"] == os.path.join(ROOT, ".envs", "sglang", "venv")
    assert server["env"]["CUDA_VISIBLE_DEVICES"] == "0"
    assert server["env"]["HF_TOKEN"] == "<redacted>"
    assert server["env"]["PYTHONPATH"] == os.path.join(ROOT, ".envs", "sglang", "overlays", VERSION)
    assert "hf_not_a_real_token_0123" not in json.dumps(run)  # redacted inside the process
    [sglang] = [f for f in server["frameworks"] if f["module"] == "sglang"]
    assert sglang["version"] == VERSION
    assert sglang["file"].startswith(os.path.join(ROOT, ".envs", "sglang", "overlays", VERSION))
    # resolved through the real entry point, stopped before weights load
    analysis = server["analysis"]
    assert server["status"] == "resolved" and analysis["stop"].startswith("sglang.srt.server_args:prepare_server_args")
    fields = {f["field"]: f for f in analysis["fields"]}
    assert fields["page_size"]["verdict"] == "honoured" and fields["page_size"]["final"]["value"] == 64
    assert fields["attention_backend"]["verdict"] == "decided"
    assert fields["attention_backend"]["final"]["value"] == "fa3"  # H100, as explain decides it
    assert doc["simulation"].startswith("H100")
    # flagtrace's own simulated nvidia-smi never shows up as a process of the script
    assert not any("tools.py" in " ".join(p["argv"]) for p in doc["processes"])
    assert "sglang %s from .envs/sglang/overlays/%s/sglang/__init__.py" % (VERSION, VERSION) in text
    assert "HONOURED (2): model_path='models/llama-3-8b', page_size=64" in text
    assert "env CUDA_VISIBLE_DEVICES=0 HF_ENDPOINT=%s HF_TOKEN=<redacted> PYTHONPATH=%s" % (  # tests/conftest.py's
        os.environ["HF_ENDPOINT"], os.path.join(ROOT, ".envs", "sglang", "overlays", VERSION)) in text


def test_run_stops_a_0_5_23_server_when_its_first_resolution_returns():
    """0.5.23 resolves in resolve_once(), not in prepare_server_args: `run` stops there too."""
    version = "0.5.23"
    argv = [sys.executable, "-m", "flagtrace", "run", "--gpu", "H100", "--format", "json", "--",
            python_for(version), "-m", "sglang.launch_server", "--model-path", "models/llama-3-8b", "--page-size", "64"]
    proc = subprocess.run(argv, capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    doc = json.loads(proc.stdout)
    [server] = [p for p in doc["processes"] if p["kind"] == "python" and "sglang.launch_server" in p["argv"]]
    assert server["status"] == "resolved"
    assert server["analysis"]["stop"] == "sglang.srt.server_args:ServerArgs.resolve_once (returned)"
    fields = {f["field"]: f for f in server["analysis"]["fields"]}
    assert fields["page_size"]["verdict"] == "honoured" and fields["page_size"]["final"]["value"] == 64
    assert fields["attention_backend"]["final"]["value"] == "fa3"
    assert fields["attention_backend"]["changes"][-1]["how"] == "declared"


def _run_hub_script(model):
    python_for(VERSION)
    proc = subprocess.run([sys.executable, "-m", "flagtrace", "run", "--gpu", "H100", "--format", "json", "--",
                           "bash", "tests/scripts/sglang_launch_hub_id.sh", model],
                          capture_output=True, text=True, cwd=ROOT, timeout=600)
    doc = json.loads(proc.stdout)
    [server] = [p for p in doc["processes"] if p["kind"] == "python" and "sglang.launch_server" in p["argv"]]
    return proc, server


def test_run_stands_in_the_config_of_a_hub_id_a_script_names():
    proc, server = _run_hub_script("meta-llama/Meta-Llama-3-8B-Instruct")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert server["argv"][-4:] == ["--model-path", "meta-llama/Meta-Llama-3-8B-Instruct", "--page-size", "64"]
    analysis = server["analysis"]
    assert server["status"] == "resolved" and analysis["error"] is None
    assert analysis["inputs"] == ["--model-path meta-llama/Meta-Llama-3-8B-Instruct → bundled "
                                  "meta-llama/Meta-Llama-3-8B-Instruct config.json"]
    fields = {f["field"]: f for f in analysis["fields"]}
    assert fields["page_size"]["final"]["value"] == 64
    assert fields["model_path"]["final"]["value"] == "meta-llama/Meta-Llama-3-8B-Instruct"  # as typed (issue 38)


def test_run_a_script_naming_a_model_nothing_here_has_says_what_to_give():
    proc, server = _run_hub_script("acme/NoSuchModel-7B")
    assert server["argv"][-4:] == ["--model-path", "acme/NoSuchModel-7B", "--page-size", "64"]
    error = server["analysis"]["error"]
    assert error["type"] == "OSError" and server["analysis"]["inputs"] == []
    assert {"text": "the model was passed as typed (nothing here stands in for it) and this machine cannot fetch it "
                    "from the Hugging Face hub: give a folder holding its config.json (weights are not needed) or "
                    "--model-config ID|DIR, or let it reach the hub (HF_ENDPOINT can name a mirror; HF_HUB_OFFLINE "
                    "unset)"} in error["hints"]


def test_run_via_stands_in_a_model_from_the_remote_hugging_face_cache(tmp_path):
    """--via ships the probe with its model stand-ins (probe/modelconfigs.py): the remote host's own
    Hugging Face cache answers for a hub id its launch script names ('env' is the transport, as
    docker exec passes argv on; the catalog stays on this machine)."""
    python_for(VERSION)
    snapshot = tmp_path / "hf" / "hub" / "models--acme--Llama-8B" / "snapshots" / "0123abc"
    snapshot.mkdir(parents=True)
    with open(os.path.join(modelconfigs.MODELS, "llama-3-8b", "config.json"), "rb") as fh:
        (snapshot / "config.json").write_bytes(fh.read())
    proc = subprocess.run([sys.executable, "-m", "flagtrace", "run", "--gpu", "H100", "--format", "json",
                           "--via", "env HF_HOME=%s" % (tmp_path / "hf"), "--",
                           "bash", os.path.join(ROOT, "tests/scripts/sglang_launch_hub_id.sh"), "acme/Llama-8B"],
                          capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    [server] = [p for p in json.loads(proc.stdout)["processes"]
                if p["kind"] == "python" and "sglang.launch_server" in p["argv"]]
    analysis = server["analysis"]
    assert server["status"] == "resolved" and analysis["error"] is None
    assert analysis["inputs"] == ["--model-path acme/Llama-8B → its config.json in the local Hugging Face cache (%s)"
                                  % snapshot]
    fields = {f["field"]: f for f in analysis["fields"]}
    assert fields["model_path"]["final"]["value"] == "acme/Llama-8B"  # as typed, not the snapshot (issue 38)
    assert fields["page_size"]["final"]["value"] == 64
