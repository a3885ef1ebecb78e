"""The install commands the release builder runs: uv where it is there (it links files from its cache and
installs in seconds), else pip. Both get exact pins with ``--no-deps --only-binary :all:``, so no resolver
runs and torch is never re-resolved.

uv does not read pip's configuration, so the indexes and wheel folders pip is configured with (pip.conf,
PIP_* variables: a CPU torch index, a local wheel folder) are handed to it as options.
FLAGTRACE_INSTALLER=pip|uv chooses; the default is uv when it is found.
"""
import functools
import os
import shutil
import subprocess
import sys

from ..core.exitcodes import ExitCode, FlagtraceError
from ..core.own_env import own_environment


@functools.lru_cache(maxsize=1)
def uv_binary():
    """The uv executable (the ``uv`` package's, else one on PATH), or None."""
    try:
        from uv import find_uv_bin

        return find_uv_bin()
    except Exception:  # noqa: BLE001 - not installed, or its binary missing: look on PATH
        return shutil.which("uv")


def chosen():
    """"uv" or "pip"."""
    wanted = os.environ.get("FLAGTRACE_INSTALLER", "").strip().lower()
    if wanted not in ("", "uv", "pip"):
        raise FlagtraceError("FLAGTRACE_INSTALLER=%s: use uv or pip" % wanted, ExitCode.USAGE)
    if wanted == "pip":
        return "pip"
    if uv_binary():
        return "uv"
    if wanted == "uv":
        raise FlagtraceError("FLAGTRACE_INSTALLER=uv, but uv is not installed (pip install uv)", ExitCode.USAGE)
    return "pip"


@functools.lru_cache(maxsize=4)
def pip_sources(python):
    """pip's configured indexes and wheel folders as options (for uv): index-url, extra-index-url, find-links."""
    try:
        out = subprocess.run([python, "-m", "pip", "config", "list"], capture_output=True, text=True,
                             timeout=60, env=own_environment()).stdout
    except (OSError, subprocess.TimeoutExpired):
        return ()
    options = {"index-url": "--index-url", "extra-index-url": "--extra-index-url", "find-links": "--find-links"}
    found = {}
    for line in out.splitlines():
        key, _, value = line.partition("=")
        name = key.rsplit(".", 1)[-1]
        if name in options:
            found[name] = value.strip().strip("'\"")  # the last scope pip lists wins, as in pip
    args = []
    for name, option in options.items():
        for value in found.get(name, "").split():
            args += [option, value]
    return tuple(args)


def install_command(python, requirements, target=None, find_links=None):
    """The command that installs ``requirements`` (words for the command line: ``-r FILE``, ``name==v``)
    into ``python``'s environment, or into the folder ``target``; ``find_links``: only from that folder."""
    common = ["--no-deps", "--only-binary", ":all:"]
    if find_links:
        common += ["--no-index", "--find-links", find_links]
    if target:
        common += ["--target", target]
    if chosen() == "uv":
        sources = () if find_links else pip_sources(python)
        # pip takes each pin from whichever index has it; uv, by default, only from the first index that
        # knows the name
        strategy = ["--index-strategy", "unsafe-best-match"] if sources else []
        return [uv_binary(), "pip", "install", "--python", python] + common + strategy + list(sources) \
            + list(requirements)
    return [python, "-m", "pip", "install", "--disable-pip-version-check", "--progress-bar", "off"] + common \
        + list(requirements)


def describe():
    return "uv %s" % uv_binary() if chosen() == "uv" else "pip"


def python311():
    """The Python 3.11 the shared venv is made with: FLAGTRACE_PYTHON, else python3.11 on PATH, else this
    interpreter when it is 3.11 (the pinned wheels are CPython 3.11's)."""
    given = os.environ.get("FLAGTRACE_PYTHON")
    if given:
        return given
    found = shutil.which("python3.11")
    if found:
        return found
    if sys.version_info[:2] == (3, 11):
        return sys.executable
    raise FlagtraceError("building a release needs Python 3.11 (its pinned wheels are CPython 3.11's): install "
                         "python3.11 or set FLAGTRACE_PYTHON=/path/to/python3.11")
