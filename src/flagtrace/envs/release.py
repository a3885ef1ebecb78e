"""What ``--release NAME==VERSION`` names: a framework an adapter knows and a version in its range."""
import dataclasses
import importlib
import re

from ..core.exitcodes import ExitCode, FlagtraceError
from ..core.frameworks import FRAMEWORKS
from ..probe.adapters.release import parse_version

_SPEC = re.compile(r"^([A-Za-z][A-Za-z0-9_-]*)==(\d+(?:\.\d+)*(?:(?:a|b|rc)\d+)?(?:\.post\d+)?(?:\.dev\d+)?)$")


@dataclasses.dataclass(frozen=True)
class Release:
    framework: str  # an adapter's name: sglang, vllm
    version: str

    def __str__(self):
        return "%s==%s" % (self.framework, self.version)


@dataclasses.dataclass(frozen=True)
class Recipe:
    """How the builder makes a framework's releases (from its record's ``release_env``, recipes())."""
    framework: str
    smoke_module: str  # imported after the install: the release's config code loads
    pins_module: str  # generates a pin file: pin_file(version) -> text, WHEELS the wheel cache it reads
    first: tuple  # the supported range (probe adapter)
    last: tuple
    scripts: tuple = ()  # console scripts written beside bin/python
    wheel_cache: bool = False  # overlays installed from <fw>/wheels only (the pin generator's cache)
    venv_in_key: bool = False  # an overlay is rebuilt when the venv changes (its pins lean on base.txt)
    pip_check: bool = False  # after the install, pip check may name only what the pin file leaves out
    package: str = ""  # the module whose __version__ the smoke test checks ("": the framework's name)


def recipes():
    """{framework: its Recipe} for every framework of the registry (its record's ``release_env``, the range its
    probe adapter supports), and for each wrapper built over a framework's release (ai-dynamo)."""
    out = {}
    for record in FRAMEWORKS:
        first, last = importlib.import_module("flagtrace.probe.adapters." + record.name).supported_range()
        out[record.name] = Recipe(framework=record.name, first=first, last=last, scripts=tuple(record.scripts),
                                  **record.release_env)
        out.update({name: Recipe(framework=name, **kw) for name, kw in record.wrapper_releases.items()})
    return out


def parse_release(text):
    """A Release for ``text`` (``sglang==0.5.11``); a usage error for anything else."""
    known = recipes()
    m = _SPEC.match((text or "").strip())
    if not m:
        raise FlagtraceError("--release %s: write it as NAME==VERSION, e.g. --release sglang==0.5.11 (frameworks: %s)"
                             % (text, ", ".join(known)), ExitCode.USAGE)
    name, version = m.group(1).lower(), m.group(2)
    recipe = known.get(name)
    if recipe is None:
        names = list(known)
        raise FlagtraceError("--release %s: flagtrace builds releases of %s and %s, not %s"
                             % (text, ", ".join(names[:-1]), names[-1], name), ExitCode.USAGE)
    if not recipe.first <= parse_version(version) <= recipe.last:
        raise FlagtraceError("--release %s: %s %s is outside the releases flagtrace supports (%s-%s)"
                             % (text, name, version, _dotted(recipe.first), _dotted(recipe.last)), ExitCode.USAGE)
    return Release(name, version)


def _dotted(parts):
    return ".".join(map(str, parts))
