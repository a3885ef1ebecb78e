"""SGLang (tool side): recognise its entry points and check what can be checked before
starting a multi-second import. Release-specific knowledge lives in probe/adapters/sglang.py,
which runs where SGLang is installed and reads the release there."""
import functools
import json
import os

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

from ..exitcodes import ExitCode, FlagtraceError

MODULES = ("sglang.launch_server", "sglang.cli.main", "sglang.launch_server_grpc")
SCRIPTS = ("sglang",)


class SGLangAdapter:
    name = "sglang"

    @staticmethod
    def matches(target, opts):
        if opts.adapter == "sglang":
            return True
        if opts.adapter != "auto":
            return False
        if target.mode == "module":
            return target.target in MODULES or target.target.startswith("sglang.")
        if target.mode == "script":
            return os.path.basename(target.target) in SCRIPTS
        return False

    def request(self, target, opts):
        if not getattr(opts, "via", None):  # a remote model path is checked there, by SGLang
            check_model_path(target.args)
        return {"watch": list(opts.watch), "stop_at": list(opts.stop_at), "adapter": self.name,
                "adapter_info": {"name": self.name, "describe": "sglang"},
                "setup": ["adapters.sglang"]}

    def environment(self, target, opts):
        return None


def option_value(args, names):
    """The value of the last occurrence of an option (``--x v`` or ``--x=v``)."""
    value = None
    for i, tok in enumerate(args):
        for name in names:
            if tok == name and i + 1 < len(args):
                value = args[i + 1]
            elif tok.startswith(name + "="):
                value = tok.split("=", 1)[1]
    return value


def check_model_path(args):
    if "--config" in args or any(a.startswith("--config=") for a in args):
        return  # the model path may come from the config file
    path = option_value(args, ("--model-path", "--model"))
    if path is None:
        if any(a in ("-h", "--help") for a in args):
            return
        raise FlagtraceError("the SGLang command has no --model-path; give a directory holding the "
                             "model's config.json (weights are not needed)", ExitCode.USAGE)
    if not os.path.exists(path):
        if path.startswith((".", "/", "~")) or path.count("/") != 1:
            raise FlagtraceError("--model-path %s does not exist" % path, ExitCode.USAGE)
        return  # a hub id: SGLang will fetch config.json itself
    config = os.path.join(path, "config.json")
    if not os.path.isfile(config):
        raise FlagtraceError("--model-path %s has no config.json (flagtrace needs only that file, no "
                             "weights)" % path, ExitCode.USAGE)
    try:
        with open(config, encoding="utf-8") as fh:
            json.load(fh)
    except (ValueError, UnicodeDecodeError) as exc:
        raise FlagtraceError("%s is not valid JSON: %s" % (config, exc), ExitCode.USAGE)


RENAMES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data", "sglang_renames.toml")


@functools.lru_cache(maxsize=1)
def renames():
    with open(RENAMES, "rb") as fh:
        return tomllib.load(fh)["renames"]


def _version(text):
    parts = []
    for piece in (text or "0").split(".")[:3]:
        digits = "".join(ch for ch in piece if ch.isdigit())
        parts.append(int(digits) if digits else 0)
    return tuple(parts + [0] * (3 - len(parts)))


def rename_hints(flags, version):
    """flag -> help for flags this release refused that another release knows under a new name."""
    v = _version(version)
    out = {}
    for flag in flags:
        for old, new, alias_from, removed_in in renames():
            new_flag = new.split("=", 1)[0]
            if flag == old and removed_in and v >= _version(removed_in):
                out[flag] = "renamed to %s in %s (the old name was removed in %s)" % (new, alias_from, removed_in)
            elif flag == new_flag and v < _version(alias_from):
                out[flag] = ("%s is the %s+ name of %s; SGLang %s knows only %s"
                             % (new_flag, alias_from, old, version, old))
    return out


def annotate(analysis):
    """Release-specific help the generic analysis cannot give (flag renames)."""
    error = analysis.get("error") or {}
    adapter = analysis.get("adapter") or {}
    if error.get("kind") == "argparse" and adapter.get("name") == "sglang":
        hints = rename_hints(error.get("unknown", []), adapter.get("version"))
        if hints:
            error["renamed"] = hints
