"""flagtrace debug: flagtrace about itself, and what a command would get."""
from ft_support import PY, example, run_sub
from flagtrace import __version__
from flagtrace.core import gpus
from flagtrace.core.pinlib import shipped


def test_debug_names_version_data_profiles_and_adapters(tmp_path):
    r = run_sub(["debug"], env={"FLAGTRACE_CACHE_DIR": str(tmp_path), "FLAGTRACE_ENVS": None})
    assert r.rc == 0, r
    lines = r.out.splitlines()
    assert lines[0] == "flagtrace %s" % __version__
    text = r.out
    assert "gpus.toml, images.toml, sglang_flags.toml, sglang_renames.toml" in text
    assert "  releases     %s: 0 built (flagtrace env list; FLAGTRACE_ENVS overrides); installer " % (tmp_path / "envs") \
        in text
    assert "  pin files    " in text and "sglang %d, vllm %d" % (len(shipped("sglang")), len(shipped("vllm"))) in text
    assert "gpu profiles %d: " % len(gpus.load_profiles()) in text and "B200" in text
    assert "stand-ins    " in text and "sgl_kernel" in text
    assert "cache        %s (0 import lists, 0 internal-error tracebacks" % tmp_path in text
    assert any(line.startswith("  adapter      sglang  0.4.0-0.5.23; tested: ") for line in lines)
    assert any(line.startswith("  adapter      vllm    0.11.0-0.34.0; tested: ") for line in lines)


def test_debug_says_what_a_command_would_get():
    r = run_sub(["debug", "--", PY, example("serve_config.py"), "--page-size", "64"])
    assert r.rc == 0, r
    assert "  interpreter  %s (Python " % PY in r.out
    assert "  runs         %s" % example("serve_config.py") in r.out and "  adapter      generic" in r.out
    bad = run_sub(["debug", "--", "python9.99", "x.py"])
    assert bad.rc == 3 and bad.err == "flagtrace: interpreter not found: python9.99\n", bad
