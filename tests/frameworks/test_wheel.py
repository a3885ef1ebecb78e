"""What a new user gets: a wheel built from a clean clone, installed (not editable) into a fresh venv, run
from an empty directory, with no repository beside it. The headline command with the hub id
Qwen/Qwen3.6-27B (its config from the catalog inside the wheel) reproduces SGLang's radix-cache error; a hub
id nothing bundles is fetched from a hub on 127.0.0.1 with no flag; offline it is one line, exit 64.
The release comes from the builder's cache that `make sglang-env` filled (FLAGTRACE_ENVS=.envs): building
one on demand is tests/frameworks/test_release_on_demand.py."""
import glob
import json
import os
import subprocess
import sys

import pytest

from hub_support import COMMIT, loopback_hub
from sglang_support import LLAMA3, ROOT

from flagtrace.core.exitcodes import ExitCode

ENVS = os.path.join(ROOT, ".envs")
RELEASE = "0.5.11"
HEADLINE = ["--model-path", "Qwen/Qwen3.6-27B", "--speculative-algorithm", "EAGLE", "--speculative-num-steps", "3",
            "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "4", "--max-mamba-cache-size", "24",
            "--mem-fraction-static", "0.92", "--context-length", "8192", "--trust-remote-code"]

pytestmark = pytest.mark.skipif(not os.path.isfile(os.path.join(ENVS, "sglang", "overlays", RELEASE, ".flagtrace-stamp")),
                                reason="sglang %s is built by make sglang-env" % RELEASE)


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """(flagtrace executable, an empty directory): the wheel of a clean clone of HEAD in a fresh venv."""
    work = tmp_path_factory.mktemp("wheel")
    clone, wheels, venv, empty = (str(work / n) for n in ("clone", "wheels", "venv", "empty"))
    subprocess.run(["git", "clone", "-q", ROOT, clone], check=True)
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", wheels,
                    clone], check=True)
    (wheel,) = glob.glob(os.path.join(wheels, "flagtrace-*.whl"))
    subprocess.run([sys.executable, "-m", "venv", venv], check=True)
    subprocess.run([os.path.join(venv, "bin", "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check",
                    wheel], check=True)
    os.mkdir(empty)
    return os.path.join(venv, "bin", "flagtrace"), empty


def run(installed, argv, **env):
    flagtrace, empty = installed
    full = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "FLAGTRACE_", "HF_", "VIRTUAL_ENV"))}
    full.update(PATH=os.path.dirname(flagtrace) + os.pathsep + "/usr/bin:/bin", FLAGTRACE_ENVS=ENVS,
                HF_HOME=os.path.join(empty, "..", "hf"))
    full.update(env)
    proc = subprocess.run([flagtrace] + argv, cwd=empty, capture_output=True, text=True, env=full, timeout=600)
    return proc


def test_the_wheel_runs_the_headline_from_an_empty_directory(installed):
    flagtrace, empty = installed
    assert not os.path.exists(os.path.join(os.path.dirname(os.path.dirname(flagtrace)), "src"))
    proc = run(installed, ["explain", "--gpu", "B200x7", "--format", "json", "--release", "sglang==" + RELEASE, "--",
                           "python3", "-m", "sglang.launch_server"] + HEADLINE, HF_ENDPOINT="http://127.0.0.1:9")
    assert proc.returncode == ExitCode.TARGET_RAISED, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["inputs"] == ["--model-path Qwen/Qwen3.6-27B → bundled Qwen/Qwen3.6-27B config.json"]
    assert doc["error"]["type"] == "ValueError" and "mamba-scheduler-strategy no_buffer" in doc["error"]["message"]
    reads = {r["field"]: r for r in doc["error"]["reads"] if "field" in r}
    strategy = reads["mamba_scheduler_strategy"]
    assert (strategy["origin"], strategy["was"]["value"], strategy["value"]["value"]) == ("decided", "auto", "no_buffer")
    assert strategy["set_by"]["func"] == "ServerArgs._handle_missing_default_values"
    assert strategy["set_by"]["line"] == 1082  # sglang 0.5.11 (tests/frameworks/test_sglang_headline.py)
    assert os.listdir(empty) == []  # nothing written where it ran


def test_a_hub_id_nothing_bundles_is_fetched_from_the_hub_without_a_flag(installed):
    with open(os.path.join(LLAMA3, "config.json"), "rb") as fh:
        config = fh.read()
    with loopback_hub({("acme/Llama-Copy-8B", "config.json"): config}) as hub:
        proc = run(installed, ["explain", "--gpu", "H100x8", "--format", "json", "--release", "sglang==" + RELEASE,
                               "--", "python3", "-m", "sglang.launch_server", "--model-path", "acme/Llama-Copy-8B",
                               "--page-size", "16"], HF_ENDPOINT=hub.url)
        assert proc.returncode == ExitCode.OK, proc.stderr
        assert hub.asked[0][:2] == ("GET", "/acme/Llama-Copy-8B/resolve/main/config.json")
    doc = json.loads(proc.stdout)
    assert doc["inputs"][0].startswith("--model-path acme/Llama-Copy-8B → acme/Llama-Copy-8B config.json fetched "
                                       "from %s" % hub.url)
    page = next(f for f in doc["fields"] if f["field"] == "page_size")
    assert page["verdict"] == "honoured" and page["final"]["value"] == 16
    hf = os.path.join(installed[1], "..", "hf", "hub", "models--acme--Llama-Copy-8B", "snapshots", COMMIT)
    assert os.path.isfile(os.path.join(hf, "config.json"))


def test_offline_a_hub_id_nothing_has_is_one_line_exit_64(installed):
    proc = run(installed, ["explain", "--gpu", "H100x8", "--release", "sglang==" + RELEASE, "--", "python3", "-m",
                           "sglang.launch_server", "--model-path", "acme/Nowhere-7B"], HF_HUB_OFFLINE="1",
               HF_ENDPOINT="http://127.0.0.1:9")
    assert proc.returncode == ExitCode.USAGE, proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("flagtrace: --model-path acme/Nowhere-7B"), proc.stderr
    assert "--model-config" in lines[0] and "HF_HUB_OFFLINE=1" in lines[0]
