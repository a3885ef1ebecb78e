"""Observer effect: a program behaves the same with and without flagtrace, and the trace's final
values are the values the program itself printed."""
import json
import subprocess

import pytest

from ft_support import EXAMPLES, PY, ROOT, example
from flagtrace.adapters.generic import GenericAdapter
from flagtrace.core.asked import Asked
from flagtrace.analysis.explain import analyse
from flagtrace.launch.command import parse_command
from flagtrace.launch.local import run_probe

SECRET_FIELDS = {"api_key", "hub_token"}  # plain_class prints them masked; the trace redacts them

# (example, args, watched class, how to find the printed config in stdout)
RUNS = [
    ("serve_config.py", ["--model", "hybrid-7b", "--page-size", "64"], "serve_config:ServeConfig", "serving with "),
    ("serve_config.py", ["--model", "tiny"], "serve_config:ServeConfig", "serving with "),
    ("serve_config.py", ["--device=cpu", "--speculative-algo", "EAGLE", "--disable-cache", "--max-batch", "8"],
     "serve_config:ServeConfig", "serving with "),
    ("serve_config.py", ["--attention", "flash", "--chatty", "200"], "serve_config:ServeConfig", "serving with "),
    ("frozen_config.py", ["--quantization", "fp8"], "frozen_config:EngineConfig", ""),
    ("frozen_config.py", ["--dtype", "float16", "--path", "/x", "--path", "/y"], "frozen_config:EngineConfig", ""),
    ("plain_class.py", [], "plain_class:Settings", ""),
    ("plain_class.py", ["--verbose", "--retries", "9", "--endpoint", "unix:/run/s.sock"], "plain_class:Settings", ""),
    ("garbage.py", [], "garbage:BlobConfig", ""),
    ("many_writes.py", ["--writes", "2000"], "many_writes:TunedConfig", ""),
]
# Programs that fail or stop early: the same exit status, stdout and stderr.
FAILING = [
    ("serve_config.py", ["--speculative-algo", "EAGLE"], "serve_config:ServeConfig"),
    ("serve_config.py", ["--page-sise", "3"], "serve_config:ServeConfig"),
    ("early_exit.py", [], "early_exit:Config"),
]


@pytest.fixture(autouse=True)
def at_root(monkeypatch):
    monkeypatch.chdir(ROOT)


def bare(script, args):
    proc = subprocess.run([PY, example(script)] + list(args), capture_output=True, timeout=60, cwd=ROOT)
    return proc.returncode, proc.stdout, proc.stderr


def traced(script, args, watch):
    target = parse_command([PY, example(script)] + list(args))
    request = GenericAdapter().request(target, Asked(watch=(watch,))).to_json()
    return run_probe(target, request, 60)


def printed_config(stdout, prefix):
    lines = [line for line in stdout.decode("utf-8", "replace").splitlines() if line.startswith(prefix)]
    assert lines, stdout[-500:]
    return json.loads(lines[-1][len(prefix):])


def flatten(config, prefix=""):
    out = {}
    for key, value in config.items():
        if isinstance(value, dict):
            out.update(flatten(value, prefix + key + "."))
        else:
            out[prefix + key] = value
    return out


@pytest.mark.parametrize("script,args,watch,prefix", RUNS, ids=lambda v: v if isinstance(v, str) else None)
def test_same_output_and_trace_matches(script, args, watch, prefix):
    rc, out, err = bare(script, args)
    result = traced(script, args, watch)
    assert (result.returncode, result.stdout, result.stderr) == (rc, out, err)
    assert rc == 0
    printed = flatten(printed_config(out, prefix))
    analysis = analyse(result.trace)
    assert analysis["status"] == "resolved"
    final = {f["field"]: f["final"]["value"] for f in analysis["fields"]}
    assert set(final) == set(printed)
    for name in set(printed) - SECRET_FIELDS:
        assert final[name] == printed[name], name
    # and the outcome's values are the last values written
    for f in analysis["fields"]:
        if f["changes"]:
            assert f["changes"][-1]["new"] == f["final"], f["field"]


@pytest.mark.parametrize("script,args,watch", FAILING, ids=lambda v: v if isinstance(v, str) else None)
def test_same_failure(script, args, watch):
    rc, out, err = bare(script, args)
    result = traced(script, args, watch)
    assert rc != 0
    assert (result.returncode, result.stdout, result.stderr) == (rc, out, err)


def test_stdin_reaches_the_target_unchanged():
    data = b"abc\x00\xff" * 1000
    args = ["--read-stdin", "--model", "hybrid-7b"]
    proc = subprocess.run([PY, example("serve_config.py")] + args, input=data, capture_output=True, cwd=ROOT)
    under = subprocess.run([PY, "-m", "flagtrace", "explain", "--format", "json", "--show-output",
                            "--watch", "serve_config:ServeConfig", "--", PY, example("serve_config.py")] + args,
                           input=data, capture_output=True, cwd=ROOT)
    assert proc.returncode == under.returncode == 0
    assert proc.stdout.decode() in under.stderr.decode()
    assert "read 5000 bytes from stdin" in proc.stdout.decode()


@pytest.mark.parametrize("mode", ["script", "module"])
def test_program_sees_how_it_was_started_unchanged(mode, monkeypatch):
    # __file__, __doc__, __annotations__, __loader__, sys.argv, sys.path[0], tracer, profiler ...
    if mode == "script":
        command = [PY, example("introspect.py"), "a", "--b=c"]
    else:
        monkeypatch.chdir(EXAMPLES)
        command = [PY, "-m", "introspect", "a", "--b=c"]
    proc = subprocess.run(command, capture_output=True, timeout=60)
    target = parse_command(command)
    request = GenericAdapter().request(target, Asked(watch=("introspect:SeenConfig",))).to_json()
    result = run_probe(target, request, 60)
    assert (result.returncode, result.stdout, result.stderr) == (proc.returncode, proc.stdout, proc.stderr)
    seen = json.loads(proc.stdout)
    assert seen["tracer"] and seen["profiler"] and seen["main_is_this"]
    final = {f["field"]: f["final"]["value"] for f in analyse(result.trace)["fields"]}
    assert final == seen["config"] == {"name": "introspect.py"}


def test_values_hard_to_render_do_not_disturb_the_target():
    rc, out, err = bare("odd_values.py", [])
    result = traced("odd_values.py", [], "odd_values:OddConfig")
    assert (result.returncode, result.stdout, result.stderr) == (rc, out, err) and rc == 0
    analysis = analyse(result.trace)
    assert analysis["status"] == "resolved" and analysis["notes"] == []
    final = {f["field"]: f["final"] for f in analysis["fields"]}
    assert set(final) == {"big", "blob", "key", "loop", "ghost"}
    assert final["key"]["repr"] == "<redacted>"  # a secret name, and an array-like value
    assert final["big"]["value"] is None and final["big"]["type"] == "int"
    assert all(f["verdict"] == "decided" for f in analysis["fields"])
