"""Bad input around SGLang: one clear line, the documented exit code, no traceback."""
import json
import os
import subprocess
import sys

import pytest

from sglang_support import LLAMA3, MODELS, ROOT, pick, python_for

TOOL_PYTHON = sys.executable  # the tool's own venv: no SGLang in it


def flagtrace(*argv, env=None):
    full = dict(os.environ)
    full.update(env or {})
    proc = subprocess.run([sys.executable, "-m", "flagtrace", *argv], capture_output=True, text=True,
                          cwd=ROOT, env=full, timeout=600)
    return proc


def one_clear_line(proc):
    lines = [line for line in proc.stderr.splitlines() if line.startswith("flagtrace: ")]
    assert lines, proc.stderr
    assert "Traceback" not in proc.stderr, proc.stderr
    return lines[0]


def test_sglang_not_installed_in_target_interpreter():
    proc = flagtrace("explain", "--gpu", "H100", "--", TOOL_PYTHON, "-m", "sglang.launch_server",
                     "--model-path", LLAMA3)
    assert proc.returncode == 3
    assert "SGLang is not installed for %s" % TOOL_PYTHON in one_clear_line(proc)


@pytest.mark.parametrize("version", ["0.3.6.post3", "0.5.24"])
def test_release_outside_supported_range(tmp_path, version):
    """Older than 0.4.0, or newer than the newest release the adapter knows: refused with its version."""
    dist = tmp_path / ("sglang-%s.dist-info" % version)
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: sglang\nVersion: %s\n" % version)
    proc = flagtrace("explain", "--", TOOL_PYTHON, "-m", "sglang.launch_server", "--model-path", LLAMA3,
                     env={"PYTHONPATH": str(tmp_path)})
    assert proc.returncode == 3
    line = one_clear_line(proc)
    assert "SGLang %s is outside the releases" % version in line
    assert "(0.4.0-0.5.23; tested: 0.4.6.post5, 0.4.10.post2," in line
    assert "--adapter generic" in line


def test_release_whose_record_is_not_the_expected_one_is_unsupported(tmp_path):
    """A release in the 0.5.20-0.5.23 range whose ServerArgs lacks the sealed record's shape is
    refused when its server_args module loads, before anything is explained."""
    dist = tmp_path / "sglang-0.5.21.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: sglang\nVersion: 0.5.21\n")
    package = tmp_path / "sglang"
    (package / "srt").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "srt" / "__init__.py").write_text("")
    (package / "srt" / "server_args.py").write_text("class ServerArgs:\n    pass\n")
    (package / "launch_server.py").write_text("import sglang.srt.server_args\nprint('launched')\n")
    proc = flagtrace("explain", "--", TOOL_PYTHON, "-m", "sglang.launch_server", "--model-path", LLAMA3,
                     env={"PYTHONPATH": str(tmp_path)})
    assert proc.returncode == 3, proc.stderr
    line = one_clear_line(proc)
    assert "SGLang 0.5.21: ServerArgs is not a record with resolve_once()" in line
    assert "launched" not in proc.stdout


@pytest.mark.parametrize("args, expected", [
    ([], "has no --model-path"),
    (["--model-path", "/nonexistent/model"], "does not exist"),
    (["--model-path", os.path.join(MODELS)], "has no config.json"),
])
def test_model_path_problems(args, expected):
    proc = flagtrace("explain", "--", TOOL_PYTHON, "-m", "sglang.launch_server", *args)
    assert proc.returncode == 64
    assert expected in one_clear_line(proc)


def test_model_path_with_malformed_json(tmp_path):
    (tmp_path / "config.json").write_text('{"architectures": ["LlamaForCausalLM"],')
    proc = flagtrace("explain", "--", TOOL_PYTHON, "-m", "sglang.launch_server", "--model-path", str(tmp_path))
    assert proc.returncode == 64
    assert "is not valid JSON" in one_clear_line(proc)


def test_unknown_gpu_lists_known_ones():
    proc = flagtrace("explain", "--gpu", "B300x8", "--", TOOL_PYTHON, "-m", "sglang.launch_server",
                     "--model-path", LLAMA3)
    assert proc.returncode == 64
    line = one_clear_line(proc)
    assert "unknown GPU 'B300'" in line and "B200" in line and "MI300X" in line


def test_gpu_on_machine_with_real_gpus_warns(monkeypatch, capsys):
    from flagtrace import cli
    from flagtrace.core import gpus

    monkeypatch.setattr(gpus, "real_gpus_present", lambda: True)
    rc = cli.main(["explain", "--gpu", "H100", "--watch", "serve_config:ServeConfig", "--",
                   sys.executable, os.path.join(ROOT, "tests", "examples", "serve_config.py")])
    err = capsys.readouterr().err
    assert rc == 0
    assert "flagtrace: warning: this machine has real GPUs; --gpu H100 replaces them" in err


def test_unknown_flag_is_explained_with_closest_flags():
    version = pick()
    proc = flagtrace("explain", "--format", "json", "--gpu", "H100", "--", python_for(version), "-m",
                     "sglang.launch_server", "--model-path", LLAMA3, "--page-sise", "64")
    assert proc.returncode == 2, proc.stderr
    import json

    error = json.loads(proc.stdout)["error"]
    assert error["kind"] == "argparse"
    assert "unrecognized arguments: --page-sise 64" in error["message"]
    assert "--page-size" in error["suggestions"]["--page-sise"]


def test_new_flag_name_on_an_older_release_is_explained_with_the_rename():
    version = pick()
    proc = flagtrace("explain", "--format", "json", "--gpu", "H100", "--", python_for(version), "-m",
                     "sglang.launch_server", "--model-path", LLAMA3, "--mamba-radix-cache-strategy", "extra_buffer")
    assert proc.returncode == 2, proc.stderr
    import json

    error = json.loads(proc.stdout)["error"]
    assert error["renamed"]["--mamba-radix-cache-strategy"] == (
        "--mamba-radix-cache-strategy is the 0.5.14+ name of --mamba-scheduler-strategy; "
        "SGLang %s knows only --mamba-scheduler-strategy" % version)


def test_rename_table_for_a_release_that_rejects_the_old_flag():
    from flagtrace.adapters.sglang import rename_hints

    assert rename_hints(["--mamba-scheduler-strategy"], "0.5.23") == {
        "--mamba-scheduler-strategy": "renamed to --mamba-radix-cache-strategy in 0.5.14 "
                                      "(the old name was removed in 0.5.20)"}
    assert rename_hints(["--mamba-scheduler-strategy"], "0.5.15") == {}  # still an accepted alias
    assert rename_hints(["--page-sise"], "0.5.23") == {}


def test_release_that_cannot_run_under_simulation_is_refused_with_why(tmp_path):
    """0.4.0's entry point imports the whole server (vllm 0.6 included) before parsing: refused
    under --gpu before anything runs."""
    dist = tmp_path / "sglang-0.4.0.post2.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: sglang\nVersion: 0.4.0.post2\n")
    proc = flagtrace("explain", "--gpu", "H100x8", "--", TOOL_PYTHON, "-m", "sglang.launch_server",
                     "--model-path", LLAMA3, env={"PYTHONPATH": str(tmp_path)})
    assert proc.returncode == 3, proc.stderr
    line = one_clear_line(proc)
    assert line.startswith("flagtrace: SGLang 0.4.0.post2 cannot run on a simulated GPU: its launch_server imports")
    assert "--via PREFIX" in line


def test_release_whose_wheel_cannot_import_names_the_missing_piece(tmp_path):
    """A release in range whose entry point needs a module nothing provides (not a stand-in's)."""
    dist = tmp_path / "sglang-0.5.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: sglang\nVersion: 0.5.1\n")
    package = tmp_path / "sglang"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "launch_server.py").write_text("import interegular_missing_piece\n")
    proc = flagtrace("explain", "--gpu", "H100x8", "--", TOOL_PYTHON, "-m", "sglang.launch_server",
                     "--model-path", LLAMA3, env={"PYTHONPATH": str(tmp_path)})
    assert proc.returncode == 3, proc.stderr
    first = proc.stderr.splitlines()[0]
    assert first == ("flagtrace: the target raised ModuleNotFoundError: No module named "
                     "'interegular_missing_piece' before resolution started; the module interegular_missing_piece is "
                     "not installed where the command ran: flagtrace's release environments leave out GPU-only "
                     "packages and what resolution does not import (the image on the GPU box may have it; --python "
                     "names an interpreter that does)")  # a simulation gap, named (issue 37)
    assert "flagtrace/" not in proc.stderr.split("--- last lines of the target's stderr ---")[0]


def test_missing_config_file_is_the_frameworks_error_explained(tmp_path):
    """`--config` naming no file: SGLang's own ValueError from its config merger, raised before
    ServerArgs exists. Explained like any resolution error (exit 2, the raise site and its `if`),
    not a raw traceback with exit 3."""
    missing = str(tmp_path / "my_config.yaml")
    proc = flagtrace("explain", "--gpu", "H100x8", "--format", "json", "--", python_for("0.5.23"), "-m",
                     "sglang.launch_server", "--config", missing)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.splitlines()
    assert "Traceback" not in proc.stderr and len(lines) == 2, proc.stderr
    assert lines[0] == "flagtrace: note: the error came before any instance of a watched class existed: no field " \
                       "was resolved"
    assert lines[1] == ("flagtrace: the target raised ValueError in ConfigArgumentMerger._validate_yaml_file "
                        "(sglang/srt/utils/server_args_config_parser.py:162): Config file not found: %s" % missing)
    doc = json.loads(proc.stdout)
    error = doc["error"]
    assert (error["type"], error["message"]) == ("ValueError", "Config file not found: %s" % missing)
    assert error["site"]["file"].endswith(os.path.join("srt", "utils", "server_args_config_parser.py"))
    assert error["site"]["func"].endswith("_validate_yaml_file")
    assert any(c["test"] == "not path.exists()" and c["holds"] for c in error["conditions"]), error["conditions"]
    assert doc["status"] == "error" and doc["summary"]["fields"] == 0
