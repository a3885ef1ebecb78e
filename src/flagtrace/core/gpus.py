"""GPU profiles for hardware simulation: loading, validating and choosing (``--gpu B200x7``)."""
import os
import re

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

from .exitcodes import ExitCode, FlagtraceError

BUILTIN = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data", "gpus.toml")
REQUIRED = {"vendor": str, "device_name": str, "memory_mib": int, "compute_capability": list,
            "sm_count": int, "driver_version": str}
_SPEC = re.compile(r"^(?P<name>.+?)(?:[x:*](?P<count>\d+))?$", re.IGNORECASE)


def load_profiles(path=BUILTIN):
    try:
        with open(path, "rb") as fh:
            data = tomllib.load(fh)
    except FileNotFoundError:
        raise FlagtraceError("GPU profile file not found: %s" % path, ExitCode.USAGE)
    except tomllib.TOMLDecodeError as exc:
        raise FlagtraceError("%s is not valid TOML: %s" % (path, exc), ExitCode.USAGE)
    profiles = {}
    for name, table in data.items():
        if not isinstance(table, dict):
            raise FlagtraceError("%s: [%s] must be a table" % (path, name), ExitCode.USAGE)
        for key, kind in REQUIRED.items():
            if not isinstance(table.get(key), kind):
                raise FlagtraceError("%s: [%s] needs %s (%s)" % (path, name, key, kind.__name__),
                                     ExitCode.USAGE)
        if table["vendor"] not in ("nvidia", "amd"):
            raise FlagtraceError("%s: [%s] vendor must be nvidia or amd" % (path, name), ExitCode.USAGE)
        profiles[name] = dict(table, name=name)
    return profiles


def _key(name):
    return re.sub(r"[\s_\-]", "", name).upper()


def find(profiles, name):
    wanted = _key(name)
    for pname, profile in profiles.items():
        if _key(pname) == wanted or any(_key(a) == wanted for a in profile.get("aliases", [])):
            return profile
    return None


def choose(spec, extra_file=None):
    """``B200x7`` -> a profile dict with ``count``; None when no simulation was asked for."""
    profiles = load_profiles()
    if extra_file:
        user = load_profiles(extra_file)
        profiles.update(user)
        if spec is None and len(user) == 1:
            spec = next(iter(user))
    if spec is None:
        return None
    m = _SPEC.match(spec.strip())
    name, count = m.group("name"), int(m.group("count") or 1)
    profile = find(profiles, name)
    if profile is None and m.group("count") is None:
        profile = find(profiles, spec)
    if profile is None:
        raise FlagtraceError("unknown GPU %r; known: %s (or --gpu-profile FILE.toml)"
                             % (name, ", ".join(profiles)), ExitCode.USAGE)
    if not 1 <= count <= 64:
        raise FlagtraceError("GPU count must be 1..64, got %d" % count, ExitCode.USAGE)
    return dict(profile, count=count)


def describe(profile):
    cc = ".".join(str(x) for x in profile["compute_capability"])
    return "%s x%d (%s, %d MiB, sm_%s, %d SMs)" % (profile["name"], profile.get("count", 1),
                                                    profile["device_name"], profile["memory_mib"],
                                                    cc.replace(".", ""), profile["sm_count"])


def real_gpus_present():
    return os.path.exists("/dev/nvidia0") or os.path.exists("/dev/kfd")
