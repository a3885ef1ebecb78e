"""Fixtures for the core tests (helpers live in ft_support.py)."""
import os
import shutil
import tempfile

import pytest

from ft_support import flagtrace_tmpdirs, live_descendants

# The suite never reaches the real Hugging Face hub: a model nothing here has is fetched (flagtrace's
# modelconfigs, a framework's own loading, in this process and every subprocess) from a closed loopback
# port, refused at once; a test that serves a hub of its own sets HF_ENDPOINT itself (monkeypatch).
os.environ["HF_ENDPOINT"] = "http://127.0.0.1:9"


@pytest.fixture
def private_tmp(tmp_path, monkeypatch):
    """A temp dir of this test's own for flagtrace's work dirs (other runs on the machine
    cannot disturb the before/after count), also passed to subprocesses as TMPDIR."""
    where = tmp_path / "tmp"
    where.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(where))
    monkeypatch.setenv("TMPDIR", str(where))
    return str(where)


@pytest.fixture
def no_leftovers(private_tmp):
    """Asserts that the test left no flagtrace-* temp dir and no live child process."""
    before_dirs = flagtrace_tmpdirs(private_tmp)
    before_procs = live_descendants()
    yield
    assert flagtrace_tmpdirs(private_tmp) == before_dirs
    assert live_descendants() == before_procs


# make test runs `pytest -n 2 --dist loadfile --no-loadscope-reorder`: a worker takes a file whole, in
# this order. The longest files go first (per-file sums of --durations, 2026-12-03, 2 cores), so that
# no long file is left to run alone at the end; the rest keep their collection order.
LONGEST_FIRST = (
    "frameworks/test_vllm_decisions.py",  # ~30 vLLM resolutions, ~25 s each
    "frameworks/test_vllm_observer.py",  # two releases' batches: 379 s alone
    "frameworks/test_sglang_releases.py",
    "frameworks/test_sglang_observer.py",  # one batch per release, then the pool: 263 s alone
    "frameworks/test_sglang_releases_observer.py",  # its batches: 175 s alone
    "frameworks/test_vllm_env.py",
    "frameworks/test_sglang_observer_matrix.py",  # its batches: 124 s alone
    "frameworks/test_deploy_explain.py",  # gates over real manifests: ~4 min
    "frameworks/test_release_on_demand.py",  # builds an overlay, then explain/diff/run: ~1.5 min
)


def pytest_configure(config):
    """One folder for the framework runs every pytest worker shares (tests/frameworks/framework_support.py);
    made by the first process (the controller under -n), inherited by the workers, removed by its maker."""
    if not os.environ.get("FLAGTRACE_TEST_RUNS"):
        os.environ["FLAGTRACE_TEST_RUNS"] = config._flagtrace_runs = tempfile.mkdtemp(prefix="ft-test-runs-")


def pytest_unconfigure(config):
    made = getattr(config, "_flagtrace_runs", None)
    if made:
        shutil.rmtree(made, ignore_errors=True)
        del os.environ["FLAGTRACE_TEST_RUNS"]


def pytest_collection_modifyitems(config, items):
    rank = {name: i for i, name in enumerate(LONGEST_FIRST)}

    def key(item):
        path = item.nodeid.split("::")[0]
        return rank.get(path[len("tests/"):] if path.startswith("tests/") else path, len(rank))

    def session(item):  # within a file, a release's tests together, by GPU: framework_support's pool reuses
        params = getattr(getattr(item, "callspec", None), "params", {})  # one import per release and GPU
        return str(params.get("version", "")), str(params.get("gpu", ""))

    items.sort(key=lambda item: (key(item), item.nodeid.split("::")[0], session(item)))  # stable otherwise
