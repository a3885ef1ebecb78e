"""Fixtures for the core tests (helpers live in ft_support.py)."""
import tempfile

import pytest

from ft_support import flagtrace_tmpdirs, live_descendants


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
