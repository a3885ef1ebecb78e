"""Which config.json stands for a model a command names (src/flagtrace/modelconfigs.py): a local
folder as is; a hub id from the Hugging Face cache, then the bundled catalog, then (--online) the
hub; a path that exists only on the GPU box by its last component; --model-config to say which."""
import http.server
import json
import os
import threading

import pytest

from flagtrace import modelconfigs
from flagtrace.exitcodes import ExitCode, FlagtraceError
from ft_support import ROOT, run_cli

MODELS = os.path.join(ROOT, "models")


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


def test_online_fetches_config_json_only(tmp_path, monkeypatch):
    asked = []

    class Hub(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802
            asked.append(self.path)
            body = b'{"model_type": "llama", "architectures": ["LlamaForCausalLM"]}'
            self.send_response(200 if self.path == "/acme/Tiny-1B/resolve/main/config.json" else 404)
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Hub)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:%d" % server.server_port)
        monkeypatch.setenv("FLAGTRACE_CACHE_DIR", str(tmp_path))
        monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "empty"))
        found = modelconfigs.locate("acme/Tiny-1B", "--model-path", online=True)
        assert asked == ["/acme/Tiny-1B/resolve/main/config.json"]
        assert json.load(open(os.path.join(found.folder, "config.json")))["model_type"] == "llama"
        assert "fetched from http://127.0.0.1" in found.how
        with pytest.raises(FlagtraceError, match="answered 404"):
            modelconfigs.locate("acme/Missing-1B", "--model-path", online=True)
    finally:
        server.shutdown()


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
