"""Build, find and prune the environment of a framework release.

Layout under the root (FLAGTRACE_ENVS; default <flagtrace cache>/envs; the repository's Makefile uses .envs):
  sglang/venv/             the shared Python 3.11 venv: torch + data/env/sglang/base.txt, for every framework
  <fw>/overlays/<V>/       a ``--no-deps --target`` install of the release's pin file (a wrapper's pin file, e.g.
                           ai-dynamo's, names with ``#@on NAME==V`` the release whose overlay it sits on, and
                           with ``#@on NAME==V MODULE`` another for the worker module MODULE: dynamo.sglang)
  <fw>/<V>/bin/python      wrapper: the overlay first on PYTHONPATH, then the venv's python
  <fw>/<V>/bin/<script>    the framework's console scripts (``vllm``, ``sglang``), run by bin/python
  <fw>/pins/<V>.txt        pin files generated here for releases flagtrace ships none for
  <fw>/wheels/             wheels the pin generator reads (and pip installs from, where a recipe says so)
  <fw>/logs/               one log per build step
Stamps make it idempotent: the venv's holds a hash of the Python version, the torch pins and base.txt; an
overlay's the hash of its pin file (and, where the recipe says so, of the venv's stamp). Anything stale is
rebuilt whole; a failed build leaves nothing behind (it is built beside, then renamed into place).
"""
import contextlib
import dataclasses
import fcntl
import hashlib
import os
import re
import shutil
import subprocess
import sys
import time

from ..core.cachefiles import cache_folder
from ..core.exitcodes import ExitCode, FlagtraceError
from ..core import pinlib
from ..core.own_env import own_environment
from . import installer
from .release import Recipe, Release, recipes  # noqa: F401 - Recipe: the builder's input

TORCH_PINS = "torch==%s torchvision==%s" % (pinlib.TORCH["torch"], pinlib.TORCH["torchvision"])
SHARED = "sglang"  # the folder the shared venv lives in (it was SGLang's first)


def default_root():
    given = os.environ.get("FLAGTRACE_ENVS")
    if given:
        return os.path.abspath(given)
    return os.path.join(cache_folder() or os.path.join(os.path.expanduser("~"), ".cache", "flagtrace"), "envs")


def _sha(text):
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _read(path):
    try:
        with open(path, encoding="utf-8") as fh:
            return fh.read()
    except OSError:
        return None


def _du(path):
    total = 0
    for folder, _, files in os.walk(path):
        for name in files:
            try:
                st = os.lstat(os.path.join(folder, name))
            except OSError:
                continue
            total += st.st_blocks * 512
    return total


def human(size):
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return "%.1f %s" % (size, unit) if unit != "B" else "%d B" % size
        size /= 1024.0


class Builder:
    def __init__(self, root=None, say=None, offline=False):
        self.root = root or default_root()
        self.say = say or (lambda text: None)
        self.offline = offline
        self.recipes = recipes()

    # ---------------------------------------------------------------- where things are
    def venv(self):
        return os.path.join(self.root, SHARED, "venv")

    def home(self, framework):
        return os.path.join(self.root, framework)

    def python(self, release):
        return os.path.join(self.home(release.framework), release.version, "bin", "python")

    def overlay(self, release):
        return os.path.join(self.home(release.framework), "overlays", release.version)

    def logs(self, framework):
        return os.path.join(self.home(framework), "logs")

    def pin_path(self, release):
        """The release's pin file: shipped with flagtrace, else generated here (None: neither yet)."""
        for path in (os.path.join(pinlib.PINS, release.framework, release.version + ".txt"),
                     os.path.join(self.home(release.framework), "pins", release.version + ".txt")):
            if os.path.isfile(path):
                return path
        return None

    # ---------------------------------------------------------------- stamps
    def venv_key(self, pyver):
        return _sha("python %s\n%s\n%s" % (pyver, TORCH_PINS, _read(pinlib.BASE_TXT)))

    def overlay_key(self, release, pins):
        text = _read(pins)
        if self.recipes[release.framework].venv_in_key:
            text += "venv %s\n" % (_read(os.path.join(self.venv(), ".flagtrace-stamp")) or "").strip()
        base = base_of(pins)
        if base:  # a wrapper's overlay is rebuilt when the overlay it sits on is
            text += "on %s %s\n" % (base, (_read(os.path.join(self.overlay(base), ".flagtrace-stamp")) or "").strip())
        return _sha(text)

    def _venv_ok(self):
        stamp = _read(os.path.join(self.venv(), ".flagtrace-stamp"))
        if not stamp or not os.path.exists(os.path.join(self.venv(), "bin", "python")):
            return False
        pyver = self._version_of(os.path.join(self.venv(), "bin", "python"))
        return pyver is not None and stamp.strip() == self.venv_key(pyver)

    def ready(self, release):
        """Whether the release is built and up to date (no build step would run)."""
        pins = self.pin_path(release)
        stamp = _read(os.path.join(self.overlay(release), ".flagtrace-stamp"))
        return bool(pins and stamp and os.path.exists(self.python(release)) and self._venv_ok()
                    and (not base_of(pins) or self.ready(base_of(pins)))
                    and all(self.ready(b) for b in module_bases(pins).values())
                    and stamp.strip() == self.overlay_key(release, pins))

    # ---------------------------------------------------------------- the one entry point
    def interpreter(self, release):
        """The release's bin/python, built first where it is missing or stale."""
        if not self.ready(release):
            self.build(release)
        self._aliases(release)
        with contextlib.suppress(OSError):
            os.utime(os.path.join(self.overlay(release), ".flagtrace-stamp"))  # last use, for env list/prune
        return self.python(release)

    def build(self, release):
        if self.offline:
            raise FlagtraceError("%s is not built here and --offline forbids the network; run `flagtrace env build "
                                 "%s` where PyPI is reachable (it is cached in %s)" % (release, release, self.root))
        recipe = self.recipes[release.framework]
        started = time.monotonic()
        base = base_of(self.pin_path(release))
        if base and not self.ready(base):  # the release a wrapper sits on, first (it takes the same locks)
            self.say("%s: sits on %s; building that first" % (release, base))
            self.build(base)
        for module, other in sorted(module_bases(self.pin_path(release)).items()):
            if not self.ready(other):
                self.say("%s: python -m %s sits on %s; building that first" % (release, module, other))
                self.build(other)
        os.makedirs(self.logs(release.framework), exist_ok=True)
        os.makedirs(self.logs(SHARED), exist_ok=True)
        with self._lock(SHARED), (self._lock(release.framework) if release.framework != SHARED
                                  else contextlib.nullcontext()):
            self.ensure_venv()
            pins = self.pin_path(release) or self.generate_pins(release)
            stamp = _read(os.path.join(self.overlay(release), ".flagtrace-stamp"))
            if stamp and stamp.strip() == self.overlay_key(release, pins):
                self.say("%s: overlay up to date" % release)
            else:
                self.build_overlay(release, recipe, pins)
            self.write_wrappers(release, recipe)
        self.say("%s: ready in %.0f s: %s (%s)" % (release, time.monotonic() - started, self.python(release),
                                                   human(_du(self.overlay(release)))))

    @contextlib.contextmanager
    def _lock(self, framework):
        os.makedirs(self.home(framework), exist_ok=True)
        with open(os.path.join(self.home(framework), ".lock"), "a") as fh:
            fcntl.flock(fh, fcntl.LOCK_EX)
            yield

    # ---------------------------------------------------------------- steps
    def run(self, log, argv, env=None, progress=None):
        """Run one build step with its output in ``log``; lines ``progress`` picks are said as they come.
        A failure is one line naming the log (its last lines as the detail)."""
        with open(log, "w") as fh:
            fh.write("$ %s\n" % " ".join(argv))
            fh.flush()
            try:
                proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                        env=self._clean_env() if env is None else env, errors="replace")
            except OSError as exc:
                raise FlagtraceError("cannot run %s: %s" % (argv[0], exc))
            for line in proc.stdout:
                fh.write(line)
                said = progress(line) if progress else None
                if said:
                    self.say(said)
            rc = proc.wait()
        if rc:
            tail = "".join((_read(log) or "").splitlines(True)[-25:])
            raise FlagtraceError("%s failed (exit %d); the log is %s" % (_short(argv), rc, log), detail=tail.rstrip())

    def ensure_venv(self):
        if self._venv_ok():
            return
        py = installer.python311()
        pyver = self._version_of(py)
        if not pyver or not pyver.startswith("3.11."):
            raise FlagtraceError("%s is Python %s; the shared venv needs Python 3.11 (set FLAGTRACE_PYTHON)"
                                 % (py, pyver))
        venv, logs = self.venv(), self.logs(SHARED)
        tmp = venv + ".build"
        shutil.rmtree(tmp, ignore_errors=True)
        try:
            npins = sum(1 for line in open(pinlib.BASE_TXT) if re.match(r"[A-Za-z0-9]", line))
            self.say("shared venv: creating with %s (Python %s)" % (py, pyver))
            self.run(os.path.join(logs, "venv-create.log"), [py, "-m", "venv", tmp])
            self.say("shared venv: installing %s + %d pins of base.txt with %s (several GB the first time)"
                     % (TORCH_PINS, npins, installer.describe()))
            self.run(os.path.join(logs, "venv-install.log"),
                     installer.install_command(os.path.join(tmp, "bin", "python"),
                                               TORCH_PINS.split() + ["-r", pinlib.BASE_TXT]),
                     progress=_progress("shared venv"))
            self._check_venv(tmp, logs)
            with open(os.path.join(tmp, ".flagtrace-stamp"), "w") as fh:
                fh.write(self.venv_key(pyver) + "\n")
            shutil.rmtree(venv, ignore_errors=True)
            os.rename(tmp, venv)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        self.say("shared venv: ready (%s)" % human(_du(venv)))

    def _check_venv(self, venv, logs):
        """The venv holds exactly the pinned set (plus pip), and pip check names only transformers (each
        overlay brings its own)."""
        python = os.path.join(venv, "bin", "python")
        freeze = subprocess.run([python, "-m", "pip", "freeze", "--all", "--disable-pip-version-check"],
                                capture_output=True, text=True, env=own_environment()).stdout
        have = sorted(pinlib.norm(l.split("==")[0]) + "==" + l.split("==")[1] for l in freeze.split()
                      if "==" in l and pinlib.norm(l.split("==")[0]) != "pip")
        want = sorted(["%s==%s" % (k, v) for k, v in pinlib.base_versions().items()])
        if have != want:
            extra, missing = sorted(set(have) - set(want)), sorted(set(want) - set(have))
            raise FlagtraceError("the shared venv differs from its pins: %s" % "; ".join(
                filter(None, ["not pinned: " + ", ".join(extra) if extra else "",
                              "missing: " + ", ".join(missing) if missing else ""])))
        check = subprocess.run([python, "-m", "pip", "check", "--disable-pip-version-check"], capture_output=True,
                               text=True, env=own_environment()).stdout
        bad = [l for l in check.splitlines() if l.strip() and "requires transformers, which is not installed" not in l
               and not l.startswith("No broken requirements")]
        if bad:
            raise FlagtraceError("pip check found problems in the shared venv: %s" % "; ".join(bad[:5]))

    def generate_pins(self, release):
        """A pin file for a release flagtrace ships none for, from its METADATA (adapters/*_pins.py)."""
        import importlib

        recipe = self.recipes[release.framework]
        if not recipe.pins_module:
            raise FlagtraceError("%s: flagtrace ships pin files for %s %s only" % (
                release, release.framework, ", ".join(pinlib.shipped(release.framework))), ExitCode.USAGE)
        module = importlib.import_module(recipe.pins_module)
        module.WHEELS = os.path.join(self.home(release.framework), "wheels")
        self.say("%s: no pin file shipped; reading its METADATA from PyPI to write one" % release)
        try:
            text = module.pin_file(release.version)
        except pinlib.PinError as exc:
            raise FlagtraceError("%s: cannot write its pin file: %s" % (release, exc.reason.splitlines()[0]),
                                 pin_error_code(exc)) from exc
        path = os.path.join(self.home(release.framework), "pins", release.version + ".txt")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path + ".partial", "w") as fh:
            fh.write(text)
        os.rename(path + ".partial", path)
        return path

    def build_overlay(self, release, recipe, pins):
        v, logs, dest = release.version, self.logs(release.framework), self.overlay(release)
        python = os.path.join(self.venv(), "bin", "python")
        tmp = os.path.join(os.path.dirname(dest), ".%s.build" % v)
        shutil.rmtree(tmp, ignore_errors=True)
        os.makedirs(tmp)
        try:
            npins = sum(1 for line in open(pins) if re.match(r"[A-Za-z0-9]", line))
            wheels = None
            if recipe.wheel_cache and installer.chosen() == "pip":
                wheels = os.path.join(self.home(release.framework), "wheels")
                self.say("%s: fetching the wheels of %d pins that %s lacks" % (release, npins, wheels))
                self.run(os.path.join(logs, "overlay-%s-fetch.log" % v),
                         [python, "-c",
                          "import sys; from flagtrace.core import pinlib; pinlib.fetch_main(sys.argv[1:])",
                          wheels, pins], env=dict(self._clean_env(), PYTHONPATH=_package_parent()),
                         progress=_progress(str(release)))
            self.say("%s: installing %d pins (%s) with %s" % (release, npins, os.path.basename(pins),
                                                             installer.describe()))
            self.run(os.path.join(logs, "overlay-%s-install.log" % v),
                     installer.install_command(python, ["-r", pins], target=tmp, find_links=wheels),
                     env=self._clean_env(), progress=_progress(str(release)))
            for requirement, folders in _extracts(pins):
                self.say("%s: extracting %s from %s" % (release, ", ".join(folders), requirement))
                self._extract(release, requirement, folders, tmp)
            self.smoke_test(release, recipe, pins, tmp)
            with open(os.path.join(tmp, ".flagtrace-stamp"), "w") as fh:
                fh.write(self.overlay_key(release, pins) + "\n")
            shutil.rmtree(dest, ignore_errors=True)
            os.rename(tmp, dest)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    def _extract(self, release, requirement, folders, dest):
        """``#@extract REQ DIR...``: only these pure-Python packages of a wheel that is not installed."""
        import tempfile
        import zipfile

        python = os.path.join(self.venv(), "bin", "python")
        download = tempfile.mkdtemp(prefix=".dl.", dir=self.home(release.framework))
        try:
            self.run(os.path.join(self.logs(release.framework), "overlay-%s-download.log" % release.version),
                     [python, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "--progress-bar", "off",
                      "--disable-pip-version-check", "-d", download, requirement], env=self._clean_env(),
                     progress=_progress(str(release)))
            (whl,) = [os.path.join(download, f) for f in os.listdir(download) if f.endswith(".whl")]
            with zipfile.ZipFile(whl) as z:
                for folder in folders:
                    members = [n for n in z.namelist() if n.startswith(folder.rstrip("/") + "/")]
                    if not members:
                        raise FlagtraceError("%s: %s has no %s/" % (release, os.path.basename(whl), folder))
                    z.extractall(dest, members)
        finally:
            shutil.rmtree(download, ignore_errors=True)

    def smoke_test(self, release, recipe, pins, tmp):
        """The release imports from the overlay at its version, with its config code, and every pin is the
        version installed; where the recipe says so, pip check names only what the pin file leaves out."""
        python = os.path.join(self.venv(), "bin", "python")
        logs, v = self.logs(release.framework), release.version
        import_only = any(re.fullmatch(r"#@smoke\s+import-only\s*", line.strip()) for line in open(pins))
        package = recipe.package or recipe.framework
        self.say("%s: smoke test (import %s)" % (release, package if import_only else recipe.smoke_module))
        base = base_of(pins)
        env = dict(self._clean_env(), PYTHONPATH=tmp + (os.pathsep + self.overlay(base) if base else ""))
        self.run(os.path.join(logs, "overlay-%s-smoke.log" % v),
                 [python, "-c", _SMOKE, package, v, pins, "" if import_only else recipe.smoke_module], env=env)
        if recipe.pip_check:
            report = subprocess.run([python, "-m", "pip", "check", "--disable-pip-version-check"], env=env,
                                    capture_output=True, text=True).stdout
            bad = _unexpected_pip_check(pins, report)
            if base:  # what the overlay underneath leaves out, it leaves out here too
                bad = [line for line in bad if line in _unexpected_pip_check(self.pin_path(base), report)]
            if bad:
                raise FlagtraceError("%s: pip check names packages the pin file does not leave out: %s"
                                     % (release, "; ".join(bad[:5])))

    def write_wrappers(self, release, recipe):
        home, v = self.home(release.framework), release.version
        venv_rel = os.path.relpath(self.venv(), home)
        base = base_of(self.pin_path(release))
        under = ":$root/%s" % os.path.relpath(self.overlay(base), home) if base else ""
        modules = "".join(_MODULE_BASE % {"module": module, "under": os.path.relpath(self.overlay(base), home),
                                          "other": os.path.relpath(self.overlay(other), home)}
                          for module, other in sorted(module_bases(self.pin_path(release)).items()) if base)
        _write_if_changed(self.python(release), _WRAPPER % {"name": release.framework, "v": v, "venv": venv_rel,
                                                             "under": under, "modules": modules})
        self._aliases(release)
        entry_points = ""
        for name in os.listdir(self.overlay(release)):
            if name.endswith(".dist-info") and pinlib.norm(name.split("-")[0]) == pinlib.norm(recipe.framework):
                entry_points = _read(os.path.join(self.overlay(release), name, "entry_points.txt")) or ""
        for script, target in _console_scripts(entry_points):
            if script in recipe.scripts:
                module, function = target.split(":")
                _write_if_changed(os.path.join(home, v, "bin", script), _SCRIPT % {
                    "bin": os.path.realpath(os.path.dirname(self.python(release))), "name": release.framework,
                    "v": v, "script": script, "target": target, "module": module, "function": function})

    def _aliases(self, release):
        """bin/python3 and bin/python3.11 beside bin/python: what a launch script calls (flagtrace run puts the
        release's bin/ first on PATH)."""
        for alias in ("python3", "python3.11"):
            path = os.path.join(os.path.dirname(self.python(release)), alias)
            if not os.path.islink(path):
                with contextlib.suppress(FileExistsError):
                    os.symlink("python", path)

    # ---------------------------------------------------------------- list / prune
    def built(self):
        """[(Release, overlay folder)] of every release built here."""
        out = []
        for framework in self.recipes:
            folder = os.path.join(self.home(framework), "overlays")
            for v in sorted(os.listdir(folder) if os.path.isdir(folder) else [], key=_vkey_or_last):
                if not v.startswith(".") and os.path.isfile(os.path.join(folder, v, ".flagtrace-stamp")):
                    out.append((Release(framework, v), os.path.join(folder, v)))
        return out

    def remove(self, release):
        shutil.rmtree(self.overlay(release), ignore_errors=True)
        shutil.rmtree(os.path.join(self.home(release.framework), release.version), ignore_errors=True)

    @staticmethod
    def _clean_env():
        """The caller's Python settings kept out of every build step (core/own_env.py, and pip's own)."""
        env = own_environment(("PIP_TARGET", "PIP_PREFIX", "PIP_USER", "PIP_REQUIRE_VIRTUALENV", "VIRTUAL_ENV"))
        env.update(PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_NO_INPUT="1")
        return env

    @staticmethod
    def _version_of(python):
        try:
            return subprocess.run([python, "-c", "import platform; print(platform.python_version())"],
                                  capture_output=True, text=True, timeout=60,
                                  env=own_environment()).stdout.strip() or None
        except (OSError, subprocess.TimeoutExpired):
            return None


# flagtrace's exit code for each kind of pinlib.PinError a pin generator raises (the first class that matches).
PIN_ERROR_CODES = (
    (pinlib.NoWheel, ExitCode.USAGE),  # PyPI has no wheel of the release (or of what it pins): ask for another
    (pinlib.PipFailed, ExitCode.CANNOT_RUN),  # network, index or pip itself
    (pinlib.Unresolved, ExitCode.CANNOT_RUN),  # the generator's tables need an entry for this release
    (pinlib.BadVersion, ExitCode.CANNOT_RUN),  # a version in METADATA or on PyPI (--release is checked before)
    (pinlib.PinError, ExitCode.CANNOT_RUN),
)


def pin_error_code(exc):
    """The ExitCode for a pin generator's PinError, by its kind (PIN_ERROR_CODES)."""
    return next(code for kind, code in PIN_ERROR_CODES if isinstance(exc, kind))


def _vkey_or_last(v):
    try:
        return pinlib.vkey(v)
    except pinlib.BadVersion:
        return ((9999,), (9, 0), -1, float("inf"))


def _package_parent():
    return os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _short(argv):
    words = [os.path.basename(argv[0])] + argv[1:4]
    return " ".join(words) + (" ..." if len(argv) > 4 else "")


def _progress(label):
    """What of an installer's output is worth a line while it runs: what is fetched (and its size) and what
    is done, from uv and pip alike."""
    pattern = re.compile(r"^\s*(Downloading \S+.*|Downloaded \S+.*|Prepared \d+ packages?.*|Installed \d+ packages?.*|"
                         r"Successfully installed.*|Saved .*)$")

    def pick(line):
        m = pattern.match(line.rstrip())
        if not m:
            return None
        text = m.group(1)
        if text.startswith("Successfully installed"):
            text = "installed %d packages" % (len(text.split()) - 2)
        return "%s: %s" % (label, text[:160])
    return pick


def base_of(pins):
    """The Release a wrapper's pin file sits on (``#@on vllm==0.25.1``), or None."""
    from .release import Release

    for line in open(pins) if pins else ():
        words = line.split()
        if words[:1] == ["#@on"] and len(words) == 2 and "==" in words[1]:
            return Release(*words[1].split("==", 1))
    return None


def module_bases(pins):
    """{worker module: the Release its ``python -m`` sits on instead} (``#@on sglang==0.5.21 dynamo.sglang``)."""
    from .release import Release

    out = {}
    for line in open(pins) if pins else ():
        words = line.split()
        if words[:1] == ["#@on"] and len(words) == 3 and "==" in words[1]:
            out[words[2]] = Release(*words[1].split("==", 1))
    return out


def _extracts(pins):
    out = []
    for line in open(pins):
        words = line.split()
        if words[:1] == ["#@extract"] and len(words) >= 3:
            out.append((words[1], words[2:]))
    return out


def _console_scripts(entry_points):
    section, out = None, []
    for line in entry_points.splitlines():
        line = line.strip()
        if line.startswith("["):
            section = line
        elif section == "[console_scripts]" and "=" in line:
            name, _, target = line.partition("=")
            if re.fullmatch(r"[A-Za-z_][\w.]*:[A-Za-z_]\w*", target.strip()):
                out.append((name.strip(), target.strip()))
    return out


def _unexpected_pip_check(pins, report):
    """pip check lines that name a package the pin file does not say it leaves out (EXCLUDE, no wheel, IGNORE)."""
    allowed = set()
    for line in open(pins):
        m = (re.match(r"#   (\S+) \(required by ", line) or re.match(r"# (\S+?)==\S+ \(.*\) is NOT installed", line)
             or re.match(r"# Not honoured \(IGNORE\): \S+ requires ([A-Za-z0-9._-]+)", line))
        if m:
            allowed.add(pinlib.norm(m.group(1)))
    bad = []
    for line in report.splitlines():
        m = re.search(r" requires ([A-Za-z0-9._-]+), which is not installed|, but you have ([A-Za-z0-9._-]+) ", line)
        if line.strip() and not line.startswith("No broken requirements") and not (
                m and pinlib.norm(m.group(1) or m.group(2)) in allowed):
            bad.append(line.rstrip())
    return bad


def _write_if_changed(path, text):
    if _read(path) == text:
        return
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path + ".partial", "w") as fh:
        fh.write(text)
    os.chmod(path + ".partial", 0o755)
    os.replace(path + ".partial", path)


_SMOKE = r"""
import importlib, importlib.metadata as md, re, sys
package, ver, pinfile, module = sys.argv[1:]
imported = importlib.import_module(package)
assert imported.__version__ == ver, (imported.__version__, ver)
if module:
    importlib.import_module(module)
for line in open(pinfile):
    m = re.match(r"^([A-Za-z0-9_.-]+)==(\S+)", line)
    if m:
        got = md.version(m.group(1))
        assert got == m.group(2), (m.group(1), got, m.group(2))
print("ok", ver)
"""

_WRAPPER = """#!/bin/sh
# %(name)s %(v)s interpreter (written by flagtrace's release builder): overlay first on PYTHONPATH, then the shared venv.
root=$(CDPATH= cd -- "$(dirname -- "$0")/../.." && pwd)
PYTHONPATH="$root/overlays/%(v)s%(under)s${PYTHONPATH:+:$PYTHONPATH}"
export PYTHONPATH
%(modules)sexec "$root/%(venv)s/bin/python" "$@"
"""

# A wrapper's worker module that sits on another overlay (``#@on NAME==V MODULE``): FLAGTRACE_WRAPPER_BASES names
# it (``MODULE=DEFAULT_OVERLAY=ITS_OVERLAY``, space-separated); ``python -m MODULE`` gets that overlay in place of
# the default one here, and under the probe (whose argv does not name the module) the probe's Dynamo adapter
# swaps the two on sys.path before anything is imported (probe/adapters/dynamo.py).
_MODULE_BASE = """FLAGTRACE_WRAPPER_BASES="${FLAGTRACE_WRAPPER_BASES:+$FLAGTRACE_WRAPPER_BASES }%(module)s=$root/%(under)s=$root/%(other)s"
export FLAGTRACE_WRAPPER_BASES
case "$1 $2" in "-m %(module)s"|"-m %(module)s."*)
  PYTHONPATH=$(printf %%s "$PYTHONPATH" | sed "s|$root/%(under)s|$root/%(other)s|");;
esac
"""

_SCRIPT = """#!%(bin)s/python
# %(name)s %(v)s command (written by flagtrace's release builder): the console script '%(script)s = %(target)s'
# of %(name)s's entry_points.txt, run by bin/python (overlay first on PYTHONPATH, then the shared venv).
import sys
from %(module)s import %(function)s
sys.exit(%(function)s())
"""


def builder_for(say_stream=None, offline=False, root=None):
    """A Builder that says its progress on ``say_stream`` (stderr) as ``flagtrace: ...`` lines."""
    stream = say_stream or sys.stderr

    def say(text):
        stream.write("flagtrace: %s\n" % text)
        stream.flush()
    return Builder(root=root, say=say, offline=offline)
