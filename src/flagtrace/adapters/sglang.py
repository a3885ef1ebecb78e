"""SGLang (tool side): recognise its entry points and check what can be checked before
starting a multi-second import. Release-specific knowledge lives in probe/adapters/sglang.py,
which runs where SGLang is installed and reads the release there."""
import functools
import os

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

from ..core.exitcodes import ExitCode, FlagtraceError
from ..core.frameworks.sglang import RECORD
from .framework import FrameworkAdapter
from .modelpath import check_model_dir, option_value


class SGLangAdapter(FrameworkAdapter):
    record = RECORD

    def check(self, args):
        check_model_path(args)

    def flag_table(self):
        from .sglang_flags import HISTORY

        return HISTORY

    def translate(self, args, version):
        return translate_flags(args, version)

    def annotate(self, analysis):
        annotate(analysis)

    def field_aliases(self):
        return field_aliases()


def check_model_path(args):
    if "--config" in args or any(a.startswith("--config=") for a in args):
        return  # the model path may come from the config file
    path = option_value(args, ("--model-path", "--model"))
    if path is None:
        if any(a in ("-h", "--help") for a in args):
            return
        raise FlagtraceError("the SGLang command has no --model-path; give a directory holding the "
                             "model's config.json (weights are not needed)", ExitCode.USAGE)
    check_model_dir(path, "--model-path")


RENAMES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data", "sglang_renames.toml")


@functools.lru_cache(maxsize=1)
def renames():
    """[old, new, since, removed_in] rows, generated with data/sglang_flags.toml from the releases'
    argparse definitions by scripts/sglang_flag_history.py."""
    with open(RENAMES, "rb") as fh:
        return tomllib.load(fh)["renames"]


def rename_hints(flags, version):
    """flag -> help for flags this release refused that another release knows: the rename, or
    else the flag's history (where it existed, what replaced it)."""
    from . import sglang_flags as history

    known, v = history.flags(), history.version_key(version)
    out = {}
    for flag in flags:
        name = flag.split("=", 1)[0]
        if name in known and history.present(known[name], version):
            continue  # this release accepts it
        hint = None
        for old, new, since, removed_in in renames() if v else ():
            target = known.get(history.base_flag(new))
            if (name == old and removed_in and v >= history.version_key(removed_in)
                    and "ignored" not in known.get(old, {})  # a no-op stub was not a rename
                    and (target is None or history.present(target, version))):
                hint = "renamed to %s in %s (the old name was removed in %s)" % (new, since, removed_in)
        olds = [old for old, new, _, _ in renames()
                if new == name and name in known and old in known and history.present(known[old], version)]
        if hint is None and olds:
            hint = "%s is the %s+ name of %s; SGLang %s knows only %s" % (
                name, known[name]["present"][0][0], " / ".join(olds), version, " / ".join(olds))
        hint = hint or history.flag_history(name, version)
        if hint:
            out[flag] = hint
    return out


def _simple(replacement):
    """A replacement that is one flag, without a value or alternatives ('--ep-size')."""
    return replacement.startswith("--") and not any(c in replacement for c in " ={,}")


def translate_flags(args, version):
    """Options of another release spelled as SGLang ``version`` spells them: a renamed flag it
    no longer has becomes its replacement (a switch may become ``--flag value``), a newer name
    it does not have yet becomes the old one. Options this release has are left alone."""
    from . import sglang_flags as history

    known = history.flags()
    if history.version_key(version) is None:
        return list(args), []
    out, notes = [], []
    for i, word in enumerate(args):
        name, eq, value = word.partition("=")
        if not name.startswith("--") or (name in known and history.present(known[name], version) is not False):
            out.append(word)
            continue
        takes_value = bool(eq) or (i + 1 < len(args) and not args[i + 1].startswith("-"))
        new = _forward(name, version, takes_value) or _backward(name, version)
        if new is None:
            out.append(word)
            continue
        words = new.replace("=", " ").split()
        out += [words[0] + eq + value] if eq else words
        notes.append("%s → %s (SGLang %s's name)" % (name, new, version))
    return out, notes


def _forward(name, version, takes_value):
    from . import sglang_flags as history

    for old, new, _, _ in renames():
        target = history.flags().get(history.base_flag(new))
        if old != name or target is None or not history.present(target, version):
            continue
        if _simple(new) or not takes_value and "{" not in new and "," not in new:
            return new
    return None


def _backward(name, version):
    from . import sglang_flags as history

    for old, new, _, _ in renames():
        if new == name and _simple(new) and old in history.flags() and history.present(history.flags()[old], version):
            return old
    return None


@functools.lru_cache(maxsize=1)
def field_aliases():
    """{old field: newest field} for flags renamed one to one (their dests are the field names)."""
    simple = {old: new for old, new, _, _ in renames() if _simple(new)}
    out = {}
    for old in simple:
        new, seen = simple[old], {old}
        while new in simple and new not in seen:  # renamed again later
            seen.add(new)
            new = simple[new]
        out[_dest(old)] = _dest(new)
    return out


def _dest(flag):
    return flag.lstrip("-").replace("-", "_")


def annotate(analysis):
    """Release-specific help the generic analysis cannot give (flag renames)."""
    error = analysis.get("error") or {}
    adapter = analysis.get("adapter") or {}
    if error.get("kind") == "argparse" and adapter.get("name") == "sglang":
        hints = rename_hints(error.get("unknown", []), adapter.get("version"))
        if hints:
            error["renamed"] = hints
