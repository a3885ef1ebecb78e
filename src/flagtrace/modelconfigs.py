"""Which config.json stands for a model a launch command names.

Resolving server arguments needs a model's config.json and nothing else. A command names the model
as a local directory (used as is), a Hugging Face id (``deepseek-ai/DeepSeek-R1``), or a path that
exists only on the GPU box (``/workspace/models/Qwen3.6-27B``). For the last two this finds a
config: ``--model-config ID|DIR`` when given; else the local Hugging Face cache; else the bundled
catalog (models/catalog.toml and models/hub/<org>/<name>/); else, with ``--online``, the hub
(config.json only). A foreign path is matched to the catalog by its last component.
"""
import dataclasses
import functools
import json
import os
import urllib.error
import urllib.request

from .exitcodes import ExitCode, FlagtraceError

MODELS = os.environ.get("FLAGTRACE_MODELS") or os.path.join(
    os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "models")


@dataclasses.dataclass(frozen=True)
class Found:
    option: str  # the option (or "model") that named it
    typed: str  # as the command has it
    folder: str  # a local folder holding config.json
    model_id: str  # the Hugging Face id it stands for ("" for a folder given by --model-config)
    how: str  # where it came from, in words

    def describe(self):
        return "%s %s → %s" % (self.option, self.typed, self.how)


@functools.lru_cache(maxsize=1)
def _index():
    """models/catalog.toml, read once ({} where there is none)."""
    index = os.path.join(MODELS, "catalog.toml")
    try:
        import tomllib
    except ModuleNotFoundError:  # Python < 3.11: tomli, where installed (a traced interpreter may lack it)
        try:
            import tomli as tomllib
        except ModuleNotFoundError:
            return {}
    if not os.path.isfile(index):
        return {}
    with open(index, "rb") as fh:
        return tomllib.load(fh)


@functools.lru_cache(maxsize=1)
def catalog():
    """{hub id: folder}: models/catalog.toml's entries and every models/hub/<org>/<name>/."""
    out = {k: os.path.join(MODELS, v) for k, v in _index().get("folders", {}).items()}
    hub = os.path.join(MODELS, "hub")
    if os.path.isdir(hub):
        for org in sorted(os.listdir(hub)):
            if not os.path.isdir(os.path.join(hub, org)):
                continue
            for name in sorted(os.listdir(os.path.join(hub, org))):
                if os.path.isfile(os.path.join(hub, org, name, "config.json")):
                    out["%s/%s" % (org, name)] = os.path.join(hub, org, name)
    return out


def looks_like_id(text):
    return text.count("/") == 1 and not text.startswith((".", "/", "~")) and all(text.split("/"))


def locate(typed, option, explicit=None, online=False):
    """A Found for a model the command names that is not a local folder with config.json; None
    when it is one (nothing to stand in). Raises a usage error when no config can be found."""
    if explicit:
        return _explicit(typed, option, explicit, online)
    if os.path.isdir(typed):
        return None  # a local folder: check_model_dir says whether it holds a config.json
    if looks_like_id(typed):
        cached = _hf_cache(typed)
        if cached:
            return Found(option, typed, cached, typed, "its config.json in the local Hugging Face cache (%s)"
                         % cached)
        match = _by_id(typed)
        if match:
            renamed_now = " (its name on the hub now)" if match.lower() != typed.lower() else ""
            return Found(option, typed, catalog()[match], match, "bundled %s config.json%s" % (match, renamed_now))
        if online:
            return _fetch(typed, option)
        raise FlagtraceError(
            "%s %s: no config.json for this model here (not in the Hugging Face cache, not bundled); give "
            "--model-config DIR (a folder holding the model's config.json, no weights) or --model-config ID "
            "of a bundled model, or --online to fetch its config.json" % (option, typed), ExitCode.USAGE)
    match = _by_name(typed)
    if match:
        return Found(option, typed, catalog()[match], match, "bundled %s config.json, matched by name" % match)
    raise FlagtraceError(
        "%s %s does not exist here and its name matches no bundled model; give --model-config ID|DIR to "
        "say which config.json stands for it (flagtrace needs only that file)" % (option, typed), ExitCode.USAGE)


def _explicit(typed, option, explicit, online):
    if os.path.isdir(explicit):
        if not os.path.isfile(os.path.join(explicit, "config.json")):
            raise FlagtraceError("--model-config %s has no config.json" % explicit, ExitCode.USAGE)
        return Found(option, typed, os.path.abspath(explicit), "", "%s/config.json (--model-config)" % explicit)
    match = _by_id(explicit) or _by_name(explicit)
    if match:
        return Found(option, typed, catalog()[match], match, "bundled %s config.json (--model-config)" % match)
    cached = _hf_cache(explicit) if looks_like_id(explicit) else None
    if cached:
        return Found(option, typed, cached, explicit, "%s from the Hugging Face cache (--model-config)" % explicit)
    if online and looks_like_id(explicit):
        return _fetch(explicit, option, typed)
    raise FlagtraceError("--model-config %s: not a folder holding config.json, nor a bundled model id (%d bundled; "
                         "see models/README.md)" % (explicit, len(catalog())), ExitCode.USAGE)


def renamed():
    """{old hub id: the id the hub serves it as now} (catalog.toml [renamed])."""
    return _index().get("renamed", {})


def _by_id(model_id):
    lowered = model_id.lower()
    found = next((k for k in catalog() if k.lower() == lowered), None)
    if found is None:
        new = next((v for k, v in renamed().items() if k.lower() == lowered), None)
        found = new if new in catalog() else None
    return found


def _by_name(path):
    """The catalog id whose name (or older folder name) is the path's last component."""
    name = os.path.basename(path.rstrip("/")).lower()
    if not name:
        return None
    for model_id, folder in catalog().items():
        if name in (model_id.split("/")[1].lower(), os.path.basename(folder).lower()):
            return model_id
    return None


def _hf_cache(model_id):
    """The newest snapshot folder of ``model_id`` in the local Hugging Face cache holding config.json."""
    hub = os.environ.get("HF_HUB_CACHE") or os.path.join(
        os.environ.get("HF_HOME") or os.path.join(os.path.expanduser("~"), ".cache", "huggingface"), "hub")
    snapshots = os.path.join(hub, "models--" + model_id.replace("/", "--"), "snapshots")
    if not os.path.isdir(snapshots):
        return None
    found = [os.path.join(snapshots, s) for s in os.listdir(snapshots)
             if os.path.isfile(os.path.join(snapshots, s, "config.json"))]
    return max(found, key=os.path.getmtime) if found else None


def _fetch(model_id, option, typed=None):
    """--online: the model's config.json from the hub (HF_ENDPOINT, else huggingface.co) into
    flagtrace's cache folder; nothing else is fetched."""
    from .cachefiles import cache_folder, write_whole

    endpoint = (os.environ.get("HF_ENDPOINT") or "https://huggingface.co").rstrip("/")
    url = "%s/%s/resolve/main/config.json" % (endpoint, model_id)
    request = urllib.request.Request(url)
    token = os.environ.get("HF_TOKEN")
    if token:
        request.add_header("Authorization", "Bearer " + token)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            text = response.read().decode("utf-8")
        json.loads(text)
    except urllib.error.HTTPError as exc:
        raise FlagtraceError("--online: %s answered %s for %s's config.json" % (endpoint, exc.code, model_id),
                             ExitCode.USAGE)
    except (urllib.error.URLError, OSError, ValueError) as exc:
        raise FlagtraceError("--online: could not fetch %s's config.json from %s: %s"
                             % (model_id, endpoint, getattr(exc, "reason", exc)), ExitCode.USAGE)
    folder = os.path.join(cache_folder() or os.path.join(os.path.expanduser("~"), ".cache", "flagtrace"),
                          "models", model_id.replace("/", "--"))
    write_whole(os.path.join(folder, "config.json"), lambda fh: fh.write(text), make_folder=True)
    return Found(option, typed or model_id, folder, model_id, "%s config.json fetched from %s (--online)"
                 % (model_id, endpoint))


def into_request(request, found):
    """A probe request with the configs that stand for the command's models: ``inputs`` (in
    words), and their folders, where the probe stands in for the remote configuration code
    their auto_map may name (probe/remote_code.py)."""
    request = dict(request, inputs=[m.describe() for m in found])
    if found:
        request["model_folders"] = [m.folder for m in found]
        request["setup"] = list(request.get("setup", [])) + ["remote_code"]
    return request


def add_model_options(parser):
    parser.add_argument("--model-config", metavar="ID|DIR",
                        help="the config.json that stands for the command's model: a bundled model id or a folder "
                             "holding config.json (default: the local Hugging Face cache, then the bundled catalog, "
                             "by id or by the path's last component)")
    parser.add_argument("--online", action="store_true",
                        help="fetch a model's config.json from the Hugging Face hub when nothing here has it "
                             "(config.json only; HF_ENDPOINT, HF_TOKEN honoured)")


def substitute_command(args, spec, explicit=None, online=False):
    """``args`` (a framework command's arguments) with the config that stands for each model they
    name in place of a hub id or a path that exists only on the GPU box: (args, [Found]).
    ``spec`` (an adapter's ``model_spec()``, plain data: it also travels to ``flagtrace run``'s
    probes): ``options`` naming a model, ``first_only`` the main one (--model-config answers for
    it), ``optional`` ones used only where a config is found, ``positional``: the word after which
    a positional model comes (``vllm serve MODEL``)."""
    args, found = list(args), []
    word = spec.get("positional")
    if word and args[:1] == [word] and len(args) > 1 and not args[1].startswith("-"):
        head, found = substitute(["--model", args[1]], ("--model",), explicit, online, first_only=("--model",))
        found = [dataclasses.replace(f, option=word) for f in found]
        args = [word, head[1]] + args[2:]
    options = tuple(spec.get("options", ()))
    args, more = substitute(args, options, explicit, online, first_only=tuple(spec.get("first_only", ())))
    found += more
    for option in spec.get("optional", ()):
        try:
            args, more = substitute(args, (option,), online=online)
        except FlagtraceError:  # not found: the framework reads it as typed
            continue
        found += more
    return args, found


def substitute(args, options, explicit=None, online=False, first_only=()):
    """``args`` with every model the options name (``--opt V`` or ``--opt=V``) that is not a local
    folder replaced by the folder of the config that stands for it: (new args, [Found]).
    ``explicit`` (--model-config) applies to the options in ``first_only`` (the main model)."""
    out, found = list(args), []
    for i, word in enumerate(out):
        for option in options:
            if word == option and i + 1 < len(out):
                index, value = i + 1, out[i + 1]
            elif word.startswith(option + "="):
                index, value = i, word.split("=", 1)[1]
            else:
                continue
            hit = locate(value, option, explicit if option in first_only else None, online)
            if hit:
                found.append(hit)
                out[index] = hit.folder if index != i else option + "=" + hit.folder
    return out, found
