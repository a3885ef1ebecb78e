"""Which config.json stands for a model a command names (src/flagtrace/modelconfigs.py): a local
folder as is; a hub id from the Hugging Face cache, then the bundled catalog (package data), then
the hub (a real HTTP server on 127.0.0.1 here, answering as huggingface.co does); a path that exists
only on the GPU box by its last component; --model-config to say which."""
import glob
import json
import os
import socket
import subprocess
import sys
import time
import zipfile

import pytest

from flagtrace.probe import modelconfigs
from flagtrace.core.exitcodes import ExitCode, FlagtraceError
from ft_support import ROOT, run_cli, run_sub
from hub_support import COMMIT, loopback_hub

MODELS = modelconfigs.MODELS  # the package's models/ (ROOT/models links to it)


def test_catalog_entries_are_real_configs_with_their_sources():
    catalog = modelconfigs.catalog()
    assert len(catalog) >= 20
    sources = open(os.path.join(MODELS, "hub", "SOURCES.md"), encoding="utf-8").read() + \
        open(os.path.join(MODELS, "README.md"), encoding="utf-8").read()
    for model_id, folder in catalog.items():
        with open(os.path.join(folder, "config.json"), encoding="utf-8") as fh:
            config = json.load(fh)
        assert config.get("model_type") and config.get("architectures"), model_id
        assert model_id in sources or os.path.basename(folder) in sources, model_id


def test_local_folder_is_used_as_is():
    assert modelconfigs.locate(os.path.join(MODELS, "qwen3-8b"), "--model-path") is None


def test_hub_id_from_the_catalog_case_insensitively():
    found = modelconfigs.locate("qwen/qwen3.6-27b", "--model-path")
    assert (found.model_id, found.folder) == ("Qwen/Qwen3.6-27B", os.path.join(MODELS, "qwen3.6-27b"))
    assert found.describe() == "--model-path qwen/qwen3.6-27b → bundled Qwen/Qwen3.6-27B config.json"


def test_foreign_path_by_its_last_component():
    found = modelconfigs.locate("/workspace/models/Qwen3.6-27B/", "--model-path")
    assert found.model_id == "Qwen/Qwen3.6-27B" and found.how.endswith("matched by name")
    assert modelconfigs.locate("/mnt/llama-3.1-8b", "--model-path").model_id == "meta-llama/Llama-3.1-8B-Instruct"


def test_hugging_face_cache_comes_before_the_catalog(tmp_path, monkeypatch):
    snapshot = tmp_path / "models--Qwen--Qwen3-8B" / "snapshots" / "abc123"
    snapshot.mkdir(parents=True)
    (snapshot / "config.json").write_text('{"model_type": "qwen3", "architectures": ["Qwen3ForCausalLM"]}')
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    found = modelconfigs.locate("Qwen/Qwen3-8B", "--model-path")
    assert found.folder == str(snapshot) and "local Hugging Face cache" in found.how


@pytest.mark.parametrize("typed, phrase", [
    ("acme/NoSuchModel-7B", "--model-path acme/NoSuchModel-7B: no config.json for this model here"),
    ("/data/no-such-model", "--model-path /data/no-such-model does not exist here and its name matches no bundled"),
])
def test_unknown_model_is_a_usage_error_naming_model_config(typed, phrase):
    with pytest.raises(FlagtraceError) as info:
        modelconfigs.locate(typed, "--model-path")
    assert info.value.code == ExitCode.USAGE and phrase in info.value.message
    assert "--model-config" in info.value.message


def test_model_config_says_which(tmp_path):
    found = modelconfigs.locate("/data/my-finetune", "--model-path", explicit="Qwen/Qwen3-8B")
    assert found.model_id == "Qwen/Qwen3-8B" and found.how.endswith("(--model-config)")
    folder = tmp_path / "cfg"
    folder.mkdir()
    with pytest.raises(FlagtraceError, match="has no config.json"):
        modelconfigs.locate("/data/x", "--model-path", explicit=str(folder))
    (folder / "config.json").write_text("{}")
    assert modelconfigs.locate("/data/x", "--model-path", explicit=str(folder)).folder == str(folder)


def test_substitute_replaces_both_spellings_and_keeps_the_rest():
    args = ["--model-path", "Qwen/Qwen3.6-27B", "--speculative-draft-model-path=/ws/Qwen3-8B", "--tp", "2"]
    out, found = modelconfigs.substitute(args, ("--model-path", "--speculative-draft-model-path"))
    assert out == ["--model-path", os.path.join(MODELS, "qwen3.6-27b"),
                   "--speculative-draft-model-path=" + os.path.join(MODELS, "qwen3-8b"), "--tp", "2"]
    assert [f.option for f in found] == ["--model-path", "--speculative-draft-model-path"]


def test_unknown_hub_id_on_the_command_line_exits_64_before_any_import():
    r = run_cli(["explain", "--adapter", "sglang", "--", "python3", "-m", "sglang.launch_server", "--model-path",
                 "acme/NoSuchModel-7B"])
    assert r.rc == ExitCode.USAGE
    assert r.err.startswith("flagtrace: --model-path acme/NoSuchModel-7B: no config.json") and \
        len(r.err.splitlines()) == 1, r.err


def test_a_renamed_hub_id_finds_the_config_under_its_new_name():
    found = modelconfigs.locate("meta-llama/Meta-Llama-3.1-8B-Instruct", "--model")
    assert found.describe() == ("--model meta-llama/Meta-Llama-3.1-8B-Instruct → bundled "
                                "meta-llama/Llama-3.1-8B-Instruct config.json (its name on the hub now)")


def test_the_catalog_is_package_data_and_the_repository_folder_links_to_it():
    assert MODELS == os.path.join(os.path.dirname(os.path.dirname(modelconfigs.__file__)), "models")
    assert os.path.realpath(os.path.join(ROOT, "models")) == os.path.realpath(MODELS)


def test_the_wheel_carries_the_catalog(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w",
                           str(tmp_path), ROOT], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    (wheel,) = glob.glob(str(tmp_path / "flagtrace-*.whl"))
    names = set(zipfile.ZipFile(wheel).namelist())
    for model_id, folder in modelconfigs.catalog().items():
        assert "flagtrace/models/%s/config.json" % os.path.relpath(folder, MODELS) in names, model_id
    assert {"flagtrace/models/catalog.toml", "flagtrace/models/README.md", "flagtrace/models/hub/SOURCES.md"} <= names


def test_models_lists_the_bundled_ids_and_the_renamed_ones():
    doc = run_cli(["models", "--json"]).doc
    assert doc["catalog"] == MODELS and {m["id"] for m in doc["models"]} == set(modelconfigs.catalog())
    qwen = next(m for m in doc["models"] if m["id"] == "Qwen/Qwen3.6-27B")
    assert qwen["folder"] == "qwen3.6-27b" and qwen["model_type"] and qwen["architectures"]
    assert doc["renamed"]["THUDM/GLM-4.5"] == "zai-org/GLM-4.5"
    r = run_cli(["models"])
    assert r.rc == ExitCode.OK and r.out.startswith("ID ")
    assert "  THUDM/GLM-4.5 -> zai-org/GLM-4.5\n" in r.out
    assert "%d bundled configs in %s" % (len(doc["models"]), MODELS) in r.out
    assert "  models       %s: %d bundled configs" % (MODELS, len(doc["models"])) in run_cli(["debug"]).out


# The hub on 127.0.0.1 (tests/hub_support.py): acme/Tiny-1B is public, acme/Gated-1B answers 401 without the
# token hf_good, anything else 404.
TINY = b'{"model_type": "llama", "architectures": ["LlamaForCausalLM"], "hidden_size": 64}\n'


@pytest.fixture
def hub(tmp_path, monkeypatch):
    with loopback_hub({("acme/Tiny-1B", "config.json"): TINY, ("acme/Gated-1B", "config.json"): TINY},
                      gated={"acme/Gated-1B": "hf_good"}) as server:
        server.cache = tmp_path / "hf" / "hub"
        monkeypatch.setenv("HF_ENDPOINT", server.url)
        monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))  # no saved token there
        monkeypatch.delenv("HF_HUB_CACHE", raising=False)
        monkeypatch.delenv("HF_TOKEN", raising=False)
        monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
        yield server


def test_a_hub_id_nothing_here_has_is_fetched_into_the_hugging_face_cache(hub):
    found = modelconfigs.locate("acme/Tiny-1B", "--model-path")
    assert hub.asked == [("GET", "/acme/Tiny-1B/resolve/main/config.json", None)]
    snapshot = hub.cache / "models--acme--Tiny-1B" / "snapshots" / COMMIT
    assert found.folder == str(snapshot) and found.model_id == "acme/Tiny-1B"
    assert (snapshot / "config.json").read_bytes() == TINY
    assert (hub.cache / "models--acme--Tiny-1B" / "refs" / "main").read_text() == COMMIT
    assert found.describe() == ("--model-path acme/Tiny-1B → acme/Tiny-1B config.json fetched from %s into the "
                                "Hugging Face cache" % os.environ["HF_ENDPOINT"])
    again = modelconfigs.locate("acme/Tiny-1B", "--model-path")  # the next run: from the cache, no request
    assert again.folder == str(snapshot) and "local Hugging Face cache" in again.how and len(hub.asked) == 1
    named = modelconfigs.locate("/data/tiny", "--model-path", explicit="acme/Tiny-1B")
    assert named.folder == str(snapshot) and len(hub.asked) == 1


@pytest.mark.parametrize("offline_flag, env, said", [(True, {}, "--offline"),
                                                       (False, {"HF_HUB_OFFLINE": "1"}, "HF_HUB_OFFLINE=1")])
def test_offline_asks_no_hub(hub, monkeypatch, offline_flag, env, said):
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    with pytest.raises(FlagtraceError) as info:
        modelconfigs.locate("acme/Tiny-1B", "--model-path", offline=offline_flag)
    message = info.value.message
    assert info.value.code == ExitCode.USAGE and hub.asked == [] and "\n" not in message
    assert message.startswith("--model-path acme/Tiny-1B: no config.json for this model here (not in the Hugging "
                              "Face cache %s, not bundled) and the hub is not asked (%s;"
                              % (hub.cache / "models--acme--Tiny-1B", said))
    assert "%s/acme/Tiny-1B/resolve/main/config.json" % os.environ["HF_ENDPOINT"] in message
    assert "--model-config DIR" in message


def test_a_gated_repo_names_hf_token_and_never_prints_it(hub, monkeypatch):
    with pytest.raises(FlagtraceError) as info:
        modelconfigs.locate("acme/Gated-1B", "--model-path")
    assert info.value.code == ExitCode.USAGE and "answered 401: a gated or private repo: set HF_TOKEN" in \
        info.value.message and "--model-config" in info.value.message
    monkeypatch.setenv("HF_TOKEN", "hf_wrong_secret_123")
    with pytest.raises(FlagtraceError) as info:
        modelconfigs.locate("acme/Gated-1B", "--model-path")
    assert "HF_TOKEN has no access" in info.value.message and "hf_wrong_secret_123" not in info.value.message
    assert hub.asked[-1][2] == "Bearer hf_wrong_secret_123"
    monkeypatch.setenv("HF_TOKEN", "hf_good")
    assert modelconfigs.locate("acme/Gated-1B", "--model-path").folder.endswith(COMMIT)


def test_a_missing_repo_is_one_line_naming_model_config(hub):
    with pytest.raises(FlagtraceError) as info:
        modelconfigs.locate("acme/Missing-1B", "--model-path")
    assert info.value.code == ExitCode.USAGE and "\n" not in info.value.message
    assert "resolve/main/config.json answered 404: no such repo" in info.value.message
    assert "--model-config DIR" in info.value.message
    assert not (hub.cache / "models--acme--Missing-1B").exists()


def test_a_hub_that_never_answers_fails_within_the_timeout(tmp_path, monkeypatch):
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(8)  # the kernel accepts the connection; nobody ever answers
    try:
        monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:%d" % silent.getsockname()[1])
        monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
        monkeypatch.setenv("FLAGTRACE_HUB_TIMEOUT", "1")
        monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
        began = time.monotonic()
        with pytest.raises(FlagtraceError) as info:
            modelconfigs.locate("acme/Slow-1B", "--model-path")
        assert time.monotonic() - began < 2.5
        assert info.value.code == ExitCode.USAGE and "gave no answer within 1 s (FLAGTRACE_HUB_TIMEOUT" in \
            info.value.message and "--model-config" in info.value.message
    finally:
        silent.close()


def test_an_unknown_id_offline_is_one_flagtrace_line_exit_64():
    r = run_sub(["explain", "--adapter", "sglang", "--", "python3", "-m", "sglang.launch_server",
                 "--model-path", "acme/NoSuchModel-7B"], env={"HF_HUB_OFFLINE": "1"})
    assert r.rc == ExitCode.USAGE, r
    assert r.err.startswith("flagtrace: --model-path acme/NoSuchModel-7B: no config.json for this model here") \
        and len(r.err.splitlines()) == 1, r.err
    assert "HF_HUB_OFFLINE=1" in r.err and "Traceback" not in r.err


@pytest.mark.parametrize("flag", ["--offline", "--online"])  # --online: the default now, still accepted
def test_offline_and_the_old_online_flag_on_the_command_line(flag):
    r = run_cli(["explain", flag, "--adapter", "sglang", "--", "python3", "-m", "sglang.launch_server",
                 "--model-path", "acme/NoSuchModel-7B"])
    assert r.rc == ExitCode.USAGE and len(r.err.splitlines()) == 1, r.err
    assert ("(--offline;" in r.err) == (flag == "--offline")


def test_a_tokenizer_nothing_here_has_is_left_to_the_framework(hub):
    spec = {"options": ["--model-path"], "first_only": ["--model-path"], "optional": ["--tokenizer-path"]}
    args, found = modelconfigs.substitute_command(["--model-path", "acme/Tiny-1B", "--tokenizer-path", "acme/Tok"],
                                                  spec)
    assert args[2:] == ["--tokenizer-path", "acme/Tok"] and [f.option for f in found] == ["--model-path"]
    assert [path for _, path, _ in hub.asked] == ["/acme/Tiny-1B/resolve/main/config.json"]


# -- issue 37: every model the command names, where the framework's parser finds it ---------------------
def test_a_positional_model_after_options_is_found_where_the_parser_finds_it():
    from flagtrace.core.frameworks import VLLM

    spec = VLLM.model_spec()
    args = ["serve", "--speculative-config", '{"method": "ngram"}', "--enforce-eager", "Qwen/Qwen3-8B", "--tp", "2"]
    out, found = modelconfigs.substitute_command(args, spec, offline=True)
    assert out[:4] == args[:4] and out[4] == os.path.join(MODELS, "qwen3-8b") and out[5:] == args[5:]
    assert [(f.option, f.typed) for f in found] == [("serve", "Qwen/Qwen3-8B")]
    # a switch (a --x/--no-x pair) takes no value; an option followed by a word takes it as its value
    assert modelconfigs.positional_index(["serve", "--enforce-eager", "M"], "serve", spec["switches"]) == 2
    assert modelconfigs.positional_index(["serve", "--max-model-len", "4096", "M"], "serve", spec["switches"]) == 3
    assert modelconfigs.positional_index(["serve", "--tp", "2"], "serve", spec["switches"]) is None


def test_a_draft_model_in_a_json_option_is_looked_up_like_the_main_model():
    from flagtrace.core.frameworks import VLLM

    draft = {"model": "meta-llama/Llama-3.1-8B-Instruct", "num_speculative_tokens": 3, "method": "draft_model"}
    args = ["serve", "Qwen/Qwen3-8B", "--speculative-config", json.dumps(draft)]
    out, found = modelconfigs.substitute_command(args, VLLM.model_spec(), offline=True)
    rewritten = json.loads(out[3])
    assert rewritten == dict(draft, model=os.path.join(MODELS, "llama-3.1-8b"))
    assert [(f.option, f.typed) for f in found] == [("serve", "Qwen/Qwen3-8B"), ("--speculative-config.model",
                                                                                 "meta-llama/Llama-3.1-8B-Instruct")]
    dotted, found = modelconfigs.substitute_command(["serve", "Qwen/Qwen3-8B", "--speculative-config.model=openai/"
                                                     "gpt-oss-20b"], VLLM.model_spec(), offline=True)
    assert dotted[2] == "--speculative-config.model=" + os.path.join(MODELS, "gpt-oss-20b")
    with pytest.raises(FlagtraceError) as refused:  # a draft nothing here knows: a usage error naming its option
        modelconfigs.substitute_command(["serve", "Qwen/Qwen3-8B", "--speculative-config", '{"model": "no/such"}'],
                                        VLLM.model_spec(), offline=True)
    assert refused.value.code == ExitCode.USAGE and "--speculative-config.model no/such" in refused.value.message
    assert "--model-config NAME=ID|DIR" in refused.value.message  # the hint that applies to a draft


def test_model_config_name_answers_for_the_model_the_command_names_so():
    """--model-config NAME=ID|DIR (repeatable) answers for the model the command names NAME (as typed or by its
    last path component): the main model, a draft in a JSON option or in its own option; a value without NAME
    still answers for the main model only."""
    from flagtrace.core.frameworks import SGLANG, VLLM

    args = ["serve", "acme/private-base", "--speculative-config", '{"model": "/mnt/ckpt/acme-draft", "method": "eagle"}']
    out, found = modelconfigs.substitute_command(
        args, VLLM.model_spec(), ["acme-draft=meta-llama/Llama-3.1-8B-Instruct", os.path.join(MODELS, "qwen3-8b")],
        offline=True)
    assert out[1] == os.path.join(MODELS, "qwen3-8b")
    assert json.loads(out[3]) == {"model": os.path.join(MODELS, "llama-3.1-8b"), "method": "eagle"}
    assert [(f.option, f.typed, f.how) for f in found] == [
        ("serve", "acme/private-base", "%s/config.json (--model-config)" % os.path.join(MODELS, "qwen3-8b")),
        ("--speculative-config.model", "/mnt/ckpt/acme-draft", "bundled meta-llama/Llama-3.1-8B-Instruct config.json "
                                                               "(--model-config)")]
    sglang = ["--model-path", "acme/private-base", "--speculative-draft-model-path", "acme/private-draft"]
    out, _ = modelconfigs.substitute_command(sglang, SGLANG.model_spec(), [
        "acme/private-base=Qwen/Qwen3-8B", "acme/private-draft=Qwen/Qwen3-0.6B"], offline=True)
    assert out[1] == os.path.join(MODELS, "qwen3-8b") and out[3].endswith(os.path.join("hub", "Qwen", "Qwen3-0.6B"))
    assert modelconfigs.split_explicit(None) == (None, {})
    assert modelconfigs.split_explicit("Qwen/Qwen3-8B") == ("Qwen/Qwen3-8B", {})
