"""The ``flagtrace run`` bootstrap (probe/bootstrap/sitecustomize.py) in real interpreters: it
records every process, stays inert until a watched import, chains to the sitecustomize it
shadows, runs once per process, and never breaks a process."""
import glob
import os
import subprocess
import sys

import pytest

from ft_support import PY, ROOT
from flagtrace.probe.bootstrap.supervise import collect, environment, prepare
from flagtrace.probe import values
from flagtrace.probe.common.cmdline import python_options
from flagtrace.core.frameworks import env_patterns, run_frameworks

EXAMPLES = os.path.join(ROOT, "tests", "examples")


@pytest.fixture
def run_dir(tmp_path):
    d = tmp_path / "run"
    d.mkdir()
    request = {"watch": ["serve_config:ServeConfig"], "stop_at": ["serve_config:start"], "user_specs": [],
               "frameworks": run_frameworks(), "names": ["sglang", "serve_config"], "env": env_patterns(), "live": False,
               "probe_dir": os.path.join(ROOT, "src", "flagtrace", "probe"), "flagtrace_version": "test"}
    site = prepare(str(d), request)
    return str(d), site, request


def python(run_dir, code_or_args, env_extra=None, pythonpath=None, interpreter=PY, **kw):
    d, site, request = run_dir
    base = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHONPATH", "FLAGTRACE_"))}
    env = environment(d, site, request, base=base)
    if pythonpath is not None:
        env["PYTHONPATH"] = pythonpath
    env.update(env_extra or {})
    args = ["-c", code_or_args] if isinstance(code_or_args, str) else list(code_or_args)
    return subprocess.run([interpreter] + args, env=env, capture_output=True, text=True, cwd=ROOT, timeout=60, **kw)


def test_records_the_process_and_stays_inert(run_dir):
    out = python(run_dir, "import sys, json; print('_flagtrace_probe' in sys.modules, "
                          "any(type(f).__name__ == 'Boot' for f in sys.meta_path))", env_extra={"HF_TOKEN": "hf_abcdefgh",
                                                                                               "SGLANG_X": "1"})
    assert out.returncode == 0 and out.stderr == ""
    assert out.stdout.split() == ["False", "True"]  # no probe loaded; only the tiny finder
    doc = collect(run_dir[0])
    [rec] = doc["records"]
    assert rec["pid"] > 0 and rec["ppid"] == os.getpid()
    assert rec["argv"][:2] == [PY, "-c"] and rec["executable"] == PY
    assert rec["python"] == "%d.%d.%d" % sys.version_info[:3]
    assert rec["env"]["HF_TOKEN"] == "<redacted>" and rec["env"]["SGLANG_X"] == "1"
    assert "hf_abcdefgh" not in open(glob.glob(os.path.join(run_dir[0], "proc-*"))[0]).read()
    assert doc["traces"] == {} and doc["errors"] == []


def test_a_watched_import_loads_the_probe(run_dir):
    out = python(run_dir, [os.path.join(EXAMPLES, "serve_config.py"), "--model", "hybrid-7b", "--page-size", "64"])
    assert out.returncode == 0, out.stderr
    assert "serving with" not in out.stdout  # dry: stopped at serve_config:start
    doc = collect(run_dir[0])
    [trace] = doc["traces"].values()
    assert trace["outcome"]["status"] == "stopped"
    assert trace["target"]["argv"] == [os.path.join(EXAMPLES, "serve_config.py"), "--model", "hybrid-7b",
                                       "--page-size", "64"]


def test_a_missing_framework_is_noted_not_loaded(run_dir):
    out = python(run_dir, "import sys\ntry:\n import sglang\nexcept ImportError as e:\n print(type(e).__name__)\n"
                          "print('_flagtrace_probe' in sys.modules)")
    assert out.stdout.split() == ["ModuleNotFoundError", "False"]  # as without flagtrace
    [missing] = collect(run_dir[0])["missing"]
    assert missing["module"] == "sglang"


def test_chains_to_the_sitecustomize_it_shadows(run_dir, tmp_path):
    other = tmp_path / "other"
    other.mkdir()
    marker = tmp_path / "marker"
    (other / "sitecustomize.py").write_text("import os\nCHAINED = 42\nopen(%r, 'w').write(str(os.getpid()))\n"
                                            % str(marker))
    out = python(run_dir, "import os, sitecustomize; print(sitecustomize.CHAINED, os.getpid())",
                 pythonpath=run_dir[1] + os.pathsep + str(other))
    assert out.returncode == 0, out.stderr
    value, pid = out.stdout.split()
    assert value == "42" and marker.read_text() == pid
    assert len(collect(run_dir[0])["records"]) == 1  # and ours ran too


def test_a_failing_shadowed_sitecustomize_fails_as_it_would_alone(run_dir, tmp_path):
    other = tmp_path / "other"
    other.mkdir()
    (other / "sitecustomize.py").write_text("raise RuntimeError('theirs')\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHONPATH", "FLAGTRACE_"))}
    alone = subprocess.run([PY, "-c", "print('ran')"], env=dict(env, PYTHONPATH=str(other)),
                           capture_output=True, text=True)
    ours = python(run_dir, "print('ran')", pythonpath=run_dir[1] + os.pathsep + str(other))
    assert (ours.returncode, ours.stdout, ours.stderr) == (alone.returncode, alone.stdout, alone.stderr)
    assert "Error in sitecustomize" in ours.stderr
    assert len(collect(run_dir[0])["records"]) == 1


def test_idempotent(run_dir):
    d, site, _ = run_dir
    code = ("import sys, importlib\n"
            "del sys.modules['sitecustomize']\n"
            "import sitecustomize\n"
            "exec(open(sitecustomize.__file__.replace('.pyc', '.py')).read(), {'__name__': 'sitecustomize',"
            " '__file__': sitecustomize.__file__})\n"
            "print(sum(1 for f in sys.meta_path if type(f).__name__ == 'Boot'))")
    out = python(run_dir, code, pythonpath=site + os.pathsep + site)  # the site dir seen twice
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "1"
    assert len(collect(d)["records"]) == 1


def test_never_breaks_a_process(run_dir, tmp_path):
    d, site, _ = run_dir
    # the run directory is gone: nothing can be written
    gone = python(run_dir, "print('fine')", env_extra={"FLAGTRACE_RUN_DIR": str(tmp_path / "gone")})
    assert (gone.returncode, gone.stdout, gone.stderr) == (0, "fine\n", "")
    # the request is damaged: the watched import still works, the failure is noted
    with open(os.path.join(d, "request.json"), "w") as fh:
        fh.write("{not json")
    out = python(run_dir, [os.path.join(EXAMPLES, "serve_config.py"), "--page-size", "8"])
    assert out.returncode == 0 and "serving with" in out.stdout and out.stderr == ""
    [error] = collect(d)["errors"]
    assert error["where"] == "activation for serve_config" and "JSONDecodeError" in error["error"]


def test_forked_children_are_recorded(run_dir):
    out = python(run_dir, "import os\npid = os.fork()\nif pid == 0:\n    os._exit(0)\nos.waitpid(pid, 0)\n"
                          "print(pid)")
    assert out.returncode == 0, out.stderr
    child = int(out.stdout)
    recs = {r["pid"]: r for r in collect(run_dir[0])["records"]}
    assert recs[child]["forked_from"] == min(recs)  # the parent
    assert recs[child]["argv"] == recs[min(recs)]["argv"]


def test_children_are_noted(run_dir):
    code = ("import os, subprocess, sys\n"
            "subprocess.run([sys.executable, '-I', '-c', 'pass'])\n"
            "subprocess.run('true', shell=True)\n"
            "pid = os.posix_spawn(sys.executable, [sys.executable, '-S', '-c', 'pass'], os.environ)\n"
            "os.waitpid(pid, 0)\n"
            "os.execv(sys.executable, [sys.executable, '-E', '-c', 'pass'])\n")
    out = python(run_dir, code)
    assert out.returncode == 0, out.stderr
    spawns = collect(run_dir[0])["spawns"]
    assert [(s["kind"], s["argv"][1:]) for s in spawns] == [
        ("subprocess", ["-I", "-c", "pass"]), ("subprocess", ["-c", "true"]),
        ("posix_spawn", ["-S", "-c", "pass"]), ("execv", ["-E", "-c", "pass"])]
    assert all(s["pid"] for s in spawns)


def test_bytecode_written_once_per_interpreter(run_dir):
    d, site, _ = run_dir
    cache = os.path.join(site, "__pycache__")
    tag = sys.implementation.cache_tag
    assert os.listdir(cache) == ["sitecustomize.%s.pyc" % tag]  # the launcher's own
    others = [p for p in sorted(glob.glob("/root/.pyenv/versions/3.*/bin/python")) if "3.%d." % sys.version_info[1]
              not in p and tuple(int(x) for x in p.split("/versions/")[1].split(".")[:2]) >= (3, 9)]
    if not others:
        pytest.skip("no other Python >= 3.9 installed")
    out = python(run_dir, "pass", interpreter=others[0], env_extra={"PYTHONDONTWRITEBYTECODE": "1"})
    assert out.returncode == 0, out.stderr
    assert len(os.listdir(cache)) == 2  # written by the bootstrap itself, despite the setting


@pytest.mark.parametrize("version", ["2.7", "3.6", "3.8"])
def test_older_pythons_are_recorded_and_undisturbed(run_dir, version):
    found = sorted(glob.glob("/root/.pyenv/versions/%s.*/bin/python" % version))
    if not found:
        pytest.skip("Python %s not installed" % version)
    out = python(run_dir, "print('hello')", interpreter=found[0])
    assert (out.returncode, out.stdout, out.stderr) == (0, "hello\n", "")
    [rec] = collect(run_dir[0])["records"]
    assert rec["unsupported"].startswith("Python %s is older than 3.9" % version)


SECRET = ["api_key", "API_KEY", "--api-key", "HF_TOKEN", "token", "key", "SGLANG_SECRET", "db_password", "passwd",
          "aws_credentials", "my_apikey_file", "SGL_KEY", "secret_sauce"]
NOT_SECRET = ["hf_home", "HF_HUB_CACHE", "keyboard", "monkey", "tokenizer", "page_size", "KEY_PATH",
              "cache_token_count", "", None]


@pytest.mark.parametrize("name", SECRET + NOT_SECRET)
def test_the_secret_rule(name):
    assert values.is_secret_name(name) is (name in SECRET)


@pytest.mark.parametrize("argv, expected", [
    (["py", "x.py", "-a"], ("script", "x.py", [], ["-a"])),
    (["py", "-u", "-X", "dev", "-m", "sglang.launch_server", "--x"], ("module", "sglang.launch_server", ["u"], ["--x"])),
    (["py", "-msglang.launch_server"], ("module", "sglang.launch_server", [], [])),
    (["py", "-IS", "-c", "pass", "a"], ("code", "pass", ["I", "S"], ["a"])),
    (["py", "-uc", "pass"], ("code", "pass", ["u"], [])),
    (["py", "-Wignore", "-E", "s.py"], ("script", "s.py", ["E"], [])),
    (["py", "-"], ("stdin", "-", [], [])),
    (["py"], ("interactive", None, [], [])),
    (["py", "--check-hash-based-pycs", "always", "-s", "--", "-x.py"], ("script", "-x.py", ["s"], [])),
])
def test_python_options(argv, expected):
    got = python_options(argv)
    assert (got["mode"], got["target"], got["flags"], got["args"]) == expected


@pytest.mark.parametrize("argv, expected", [
    (["py", "-m", "x", "--api-key", "sk-123456789", "--page-size", "64"],
     ["py", "-m", "x", "--api-key", "<redacted>", "--page-size", "64"]),
    (["py", "x.py", "--api-key=sk-123456789", "--hf-token", "hf_abcdefgh", "--token-limit", "5"],
     ["py", "x.py", "--api-key=<redacted>", "--hf-token", "<redacted>", "--token-limit", "5"]),
    (["py", "x.py", "--model", "m", "--api-key"], ["py", "x.py", "--model", "m", "--api-key"]),
    # a secret-named switch: the option after it is no value (it was hidden, and scrubbed wherever it appeared)
    (["vllm", "serve", "M", "--allow-credentials", "--data-parallel-rpc-port", "2"],
     ["vllm", "serve", "M", "--allow-credentials", "--data-parallel-rpc-port", "2"]),
    (["py", "x.py", "--api-key", "-", "--x"], ["py", "x.py", "--api-key", "<redacted>", "--x"]),
])
def test_argv_redaction(argv, expected):
    assert values.redact_argv(argv) == expected


def test_the_bootstrap_is_one_file_of_its_own(run_dir):
    """What site imports is the written file alone: probe/common's text, then the bootstrap's; it needs no
    flagtrace package (a process under flagtrace run has none), and records the variables the adapters name."""
    site = os.path.join(run_dir[1], "sitecustomize.py")
    text = open(site).read()
    assert text.startswith("# flagtrace-bootstrap") and "def python_options(" in text and "def redact_argv(" in text
    out = python(run_dir, ["-c", "import sitecustomize, sys; print(sitecustomize.__file__, 'flagtrace' in sys.modules)"],
                 env_extra={"VLLM_X": "2", "OTHER": "3"})
    assert out.stdout.split() == [site, "False"], out.stderr
    [rec] = collect(run_dir[0])["records"]
    assert rec["env"]["VLLM_X"] == "2" and "OTHER" not in rec["env"]
