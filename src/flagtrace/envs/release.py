"""What ``--release NAME==VERSION`` names: a framework an adapter knows and a version in its range."""
import dataclasses
import re

from ..exitcodes import ExitCode, FlagtraceError
from ..probe.adapters.release import parse_version

_SPEC = re.compile(r"^([A-Za-z][A-Za-z0-9_-]*)==(\d+(?:\.\d+)*(?:(?:a|b|rc)\d+)?(?:\.post\d+)?(?:\.dev\d+)?)$")


@dataclasses.dataclass(frozen=True)
class Release:
    framework: str  # an adapter's name: sglang, vllm
    version: str

    def __str__(self):
        return "%s==%s" % (self.framework, self.version)


def recipes():
    """{framework: its adapter's Recipe} for every framework adapter, and for each wrapper an adapter builds
    over its framework (ai-dynamo)."""
    from ..adapters import FRAMEWORKS

    out = {}
    for adapter in (a() for a in FRAMEWORKS):
        out[adapter.name] = adapter.release_recipe()
        out.update(adapter.wrapper_recipes())
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
