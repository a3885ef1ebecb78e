"""The variant runner (launch/variants.py, probe/variants.py): one import, a fork per variant, each
traced as explain traces the command alone; nothing one variant does reaches the next; a variant
that hangs is killed with what it started, and the others still run."""
import os

from ft_support import PY, example, field, line_of, live_descendants
from flagtrace.analysis.explain import analyse
from flagtrace.launch.command import parse_command
from flagtrace.launch.local import run_probe
from flagtrace.launch.variants import Variant, run_variants

ENV_SCRIPT = "env_config.py"
CLEAN_ENV = {k: v for k, v in os.environ.items() if not k.startswith("APP_")}


def _env_config(variants, timeout=60):
    target = parse_command([PY, example(ENV_SCRIPT)])
    return run_variants(target, {"watch": ["env_config:WorkerConfig"]}, variants, timeout, env=CLEAN_ENV)


def test_an_environment_write_in_one_variant_does_not_reach_the_next(no_leftovers):
    safe, plain, from_env = _env_config([Variant(["--sparse", "--safe", "--workers", "8"]),
                                         Variant(["--sparse", "--workers", "8"]),
                                         Variant(["--sparse"], {"APP_WORKERS": "4"})])
    assert [r.status for r in (safe, plain, from_env)] == ["ran"] * 3
    workers = field(analyse(safe.trace), "workers")
    assert workers["verdict"] == "overridden" and workers["final"]["value"] == 1
    assert workers["changes"][-1]["line"] == line_of(ENV_SCRIPT, "self.workers = 1")
    # --safe wrote APP_SAFE_MODE=1 into the first child's environment: the second never sees it
    workers = field(analyse(plain.trace), "workers")
    assert workers["verdict"] == "honoured" and workers["final"]["value"] == 8
    workers = field(analyse(from_env.trace), "workers")
    assert (workers["verdict"], workers["final"]["value"]) == ("decided", 4)
    [read] = [r for r in workers["changes"][0]["reads"] if r.get("env") == "APP_WORKERS"]
    assert (read["value"], read["origin"]) == ("'4'", "environment")
    assert b'"workers": 4' in from_env.output


def test_a_variant_is_traced_as_the_command_alone(no_leftovers):
    [variant] = _env_config([Variant(["--sparse", "--safe", "--workers", "8"])])
    target = parse_command([PY, example(ENV_SCRIPT), "--sparse", "--safe", "--workers", "8"])
    alone = run_probe(target, {"watch": ["env_config:WorkerConfig"]}, 60, env=CLEAN_ENV).trace
    a, b = analyse(variant.trace), analyse(alone)

    def summary(doc):
        return {f["field"]: (f["verdict"], f["final"]["repr"], [(c["func"], c["line"]) for c in f["changes"]])
                for f in doc["fields"]}

    assert summary(a) == summary(b)
    # the trace names the command the variant is, not the one the session was started with
    assert variant.trace["target"]["command"] == alone["target"]["command"] == [PY, example(ENV_SCRIPT), "--sparse",
                                                                                "--safe", "--workers", "8"]


def test_a_hanging_variant_is_killed_with_what_it_started(no_leftovers):
    target = parse_command([PY, example("hang_config.py")])
    before = live_descendants()
    first, hung, last = run_variants(target, {"watch": ["hang_config:HangConfig"]},
                                     [Variant(["--size", "3"]), Variant(["--hang"]), Variant(["--size", "5"])], 3)
    assert (hung.status, hung.returncode) == ("timeout", None) and 3 <= hung.seconds < 30
    assert [field(analyse(r.trace), "size")["final"]["value"] for r in (first, last)] == [6, 10]
    assert live_descendants() == before
