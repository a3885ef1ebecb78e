"""Which config.json stands for a model a launch command names.

Resolving server arguments needs a model's config.json and nothing else. A command names the model
as a local directory (used as is), a Hugging Face id (``deepseek-ai/DeepSeek-R1``), or a path that
exists only on the GPU box (``/workspace/models/Qwen3.6-27B``). For the last two this finds a
config: ``--model-config ID|DIR`` when given; else the local Hugging Face cache; else the bundled
catalog (package data: models/catalog.toml and models/hub/<org>/<name>/); else the hub
(config.json only, cached in the Hugging Face cache layout; not with HF_HUB_OFFLINE=1 or --offline).
A foreign path is matched to the catalog by its last component.
"""
import dataclasses
import functools
import json
import os
import threading
import urllib.error
import urllib.parse
import urllib.request

from .exitcodes import ExitCode, FlagtraceError
from .files import write_whole

# Package data beside the probe (src/flagtrace/models); with --via only probe/ travels: the remote side has the
# Hugging Face cache and the hub, not this catalog.
MODELS = os.environ.get("FLAGTRACE_MODELS") or os.path.join(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "models")


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


OTHER_MODEL_HINT = ("give --model-config NAME=ID|DIR (NAME: the model as the command names it, or its last path "
                    "component; a folder holding its config.json, no weights needed, or a bundled model id)")


def split_explicit(values):
    """--model-config, repeatable: (the main model's ID|DIR or None, {NAME: ID|DIR}). ``NAME=ID|DIR`` answers for
    the model the command names as NAME (as typed, or its last path component: a draft model); a value without
    ``=`` (or naming an existing folder) for the main model."""
    if values is None or isinstance(values, str):
        values = [values] if values else []
    main, named = None, {}
    for value in values:
        name, sep, config = value.partition("=")
        if sep and name and config and not os.path.isdir(value):
            named[name.rstrip("/")] = config
        else:
            main = value
    return main, named


def _named_config(typed, named):
    for key in (typed.rstrip("/"), os.path.basename(typed.rstrip("/"))):
        if key in named:
            return named[key]
    return None


def locate(typed, option, explicit=None, offline=False, main=True, named=None):
    """A Found for a model the command names that is not a local folder with config.json; None
    when it is one (nothing to stand in). Raises a usage error when no config can be found.
    ``offline`` (--offline; HF_HUB_OFFLINE=1 does the same): the hub is not asked. ``named``: --model-config
    NAME=ID|DIR, for whichever model the command names NAME."""
    explicit = _named_config(typed, named or {}) or explicit
    if explicit:
        return _explicit(typed, option, explicit, offline)
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
        return _fetch(typed, option, typed, offline, "%s %s" % (option, typed), main)
    match = _by_name(typed)
    if match:
        return Found(option, typed, catalog()[match], match, "bundled %s config.json, matched by name" % match)
    raise FlagtraceError(
        "%s %s does not exist here and its name matches no bundled model; %s" % (option, typed, (
            "give --model-config ID|DIR to say which config.json stands for it (flagtrace needs only that file)"
            if main else OTHER_MODEL_HINT)), ExitCode.USAGE)


def _explicit(typed, option, explicit, offline):
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
    if looks_like_id(explicit):
        return _fetch(explicit, option, typed, offline, "--model-config %s" % explicit)
    raise FlagtraceError("--model-config %s: not a folder holding config.json, nor a bundled model id (%d bundled; "
                         "flagtrace models lists them)" % (explicit, len(catalog())), ExitCode.USAGE)


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


def hub_cache():
    """The Hugging Face hub cache folder, found as huggingface_hub finds it."""
    return os.environ.get("HF_HUB_CACHE") or os.environ.get("HUGGINGFACE_HUB_CACHE") or os.path.join(_hf_home(), "hub")


def _hf_home():
    return os.environ.get("HF_HOME") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "huggingface")


def _repo_cache(model_id):
    return os.path.join(hub_cache(), "models--" + model_id.replace("/", "--"))


def _hf_cache(model_id):
    """The newest snapshot folder of ``model_id`` in the local Hugging Face cache holding config.json."""
    snapshots = os.path.join(_repo_cache(model_id), "snapshots")
    if not os.path.isdir(snapshots):
        return None
    found = [os.path.join(snapshots, s) for s in os.listdir(snapshots)
             if os.path.isfile(os.path.join(snapshots, s, "config.json"))]
    return max(found, key=os.path.getmtime) if found else None


def _fetch(model_id, option, typed, offline, said, main=True):
    """Where nothing here has the model: its config.json from the hub (HF_ENDPOINT, else
    huggingface.co; HF_TOKEN), written into the Hugging Face cache as huggingface_hub lays it out
    (snapshots/<commit>/config.json, refs/main), where the next run and the framework find it
    offline. Nothing else is fetched. Every failure is one usage error naming --model-config."""
    endpoint = (os.environ.get("HF_ENDPOINT") or "https://huggingface.co").rstrip("/")
    url = "%s/%s/resolve/main/config.json" % (endpoint, urllib.parse.quote(model_id))
    repo = _repo_cache(model_id)
    head = "%s: no config.json for this model here (not in the Hugging Face cache %s, not bundled)" % (said, repo)
    tail = ("give --model-config DIR (a folder holding the model's config.json; no weights needed) or "
            "--model-config ID of a bundled model (flagtrace models lists them)") if main else OTHER_MODEL_HINT
    offline = "--offline" if offline else _env_offline()
    if offline:
        raise FlagtraceError("%s and the hub is not asked (%s; without it flagtrace fetches %s): %s"
                             % (head, offline, url, tail), ExitCode.USAGE)
    token = _token()
    try:
        headers, body = _get(url, token)
        config = json.loads(body.decode("utf-8"))
        if not isinstance(config, dict):
            raise ValueError("not a JSON object")
    except urllib.error.HTTPError as exc:
        raise FlagtraceError("%s and %s answered %s: %s; %s" % (head, url, exc.code, _refused(exc, token), tail),
                             ExitCode.USAGE)
    except TimeoutError:
        raise FlagtraceError("%s and %s gave no answer within %g s (FLAGTRACE_HUB_TIMEOUT; HF_ENDPOINT can name a "
                             "mirror): %s" % (head, url, _timeout(), tail), ExitCode.USAGE)
    except (urllib.error.URLError, OSError) as exc:
        raise FlagtraceError("%s and %s could not be fetched (%s; HF_ENDPOINT can name a mirror): %s"
                             % (head, url, getattr(exc, "reason", exc), tail), ExitCode.USAGE)
    except ValueError as exc:  # also a body that is not UTF-8
        raise FlagtraceError("%s and %s is not a JSON config (%s): %s" % (head, url, exc, tail), ExitCode.USAGE)
    commit = headers.get("X-Repo-Commit") or "main"
    if not commit.replace("-", "").replace("_", "").replace(".", "").isalnum():
        commit = "main"
    snapshot = os.path.join(repo, "snapshots", commit)
    try:
        write_whole(os.path.join(snapshot, "config.json"), lambda fh: fh.write(body.decode("utf-8")), make_folder=True)
        write_whole(os.path.join(repo, "refs", "main"), lambda fh: fh.write(commit), make_folder=True)
    except OSError as exc:
        raise FlagtraceError("%s config.json was fetched from %s but cannot be cached: %s (HF_HUB_CACHE names "
                             "a writable folder)" % (model_id, endpoint, exc), ExitCode.USAGE)
    return Found(option, typed, snapshot, model_id, "%s config.json fetched from %s into the Hugging Face cache"
                 % (model_id, endpoint))


def _env_offline():
    value = os.environ.get("HF_HUB_OFFLINE", "")
    return "HF_HUB_OFFLINE=%s" % value if value.strip().upper() in ("1", "ON", "YES", "TRUE") else ""


def _token():
    """HF_TOKEN, else the token ``hf auth login`` saved (HF_TOKEN_PATH, else HF_HOME/token); None."""
    token = os.environ.get("HF_TOKEN")
    if token is None:
        try:
            with open(os.environ.get("HF_TOKEN_PATH") or os.path.join(_hf_home(), "token"), encoding="utf-8") as fh:
                token = fh.read()
        except OSError:
            return None
    return token.strip() or None


def _timeout():
    text = os.environ.get("FLAGTRACE_HUB_TIMEOUT") or "5"
    try:
        return float(text)
    except ValueError:
        raise FlagtraceError("FLAGTRACE_HUB_TIMEOUT=%s: not a number of seconds" % text, ExitCode.USAGE)


def _refused(exc, token):
    """Why the hub refused, in words (its X-Error-Code where it sends one, as huggingface_hub reads it)."""
    code = exc.headers.get("X-Error-Code") if exc.headers else None
    if code == "EntryNotFound":
        return "the repo has no config.json"
    if code == "RepoNotFound" or (exc.code == 404 and code != "GatedRepo"):
        return "no such repo (a private one needs HF_TOKEN)" if not token else "no such repo that HF_TOKEN can see"
    if exc.code in (401, 403):
        return ("a gated or private repo: set HF_TOKEN to a token that has access" if not token else
                "a gated or private repo that HF_TOKEN has no access to (accept its terms on the model's page)")
    return "refused"


class _SameHostAuth(urllib.request.HTTPRedirectHandler):
    """Follows the hub's redirects (a renamed repo), sending Authorization only to the same host."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):
        new = super().redirect_request(req, fp, code, msg, headers, newurl)
        if new is not None and urllib.parse.urlsplit(newurl).netloc != urllib.parse.urlsplit(req.full_url).netloc:
            new.remove_header("Authorization")
        return new


def _get(url, token):
    """(headers, body) of a GET of ``url``; raises what urllib raises, or TimeoutError when the
    whole exchange (a name lookup included, which has no timeout of its own) takes longer than
    FLAGTRACE_HUB_TIMEOUT (default 5 s)."""
    timeout = _timeout()
    request = urllib.request.Request(url, headers={"User-Agent": "flagtrace", "Accept-Encoding": "identity"})
    if token:
        request.add_header("Authorization", "Bearer " + token)
    done = {}

    def work():
        try:
            with urllib.request.build_opener(_SameHostAuth).open(request, timeout=timeout) as response:
                done["answer"] = (response.headers, response.read())
        except Exception as exc:  # noqa: BLE001 - raised again in the caller's thread
            done["error"] = exc

    worker = threading.Thread(target=work, name="flagtrace-hub", daemon=True)
    worker.start()
    worker.join(timeout)
    if "error" in done:
        error = done["error"]
        if isinstance(getattr(error, "reason", None), TimeoutError):
            raise TimeoutError(str(error))
        raise error
    if "answer" not in done:
        raise TimeoutError(url)
    return done["answer"]


def model_inputs(found):
    """The request's keys naming the configs that stand for a command's models (a variant's too)."""
    return {"inputs": [m.describe() for m in found], "model_folders": [m.folder for m in found],
            "model_typed": [m.typed for m in found]}


def into_request(request, found):
    """A probe request with the configs that stand for the command's models: ``inputs`` (in
    words), and their folders, where the probe stands in for the remote configuration code
    their auto_map may name (probe/remote_code.py)."""
    request = dict(request, **model_inputs(found))
    if found:
        request["setup"] = list(request.get("setup", [])) + ["remote_code"]
    return request


def substitute_command(args, spec, explicit=None, offline=False):
    """``args`` (a framework command's arguments) with the config that stands for each model they
    name in place of a hub id or a path that exists only on the GPU box: (args, [Found]).
    ``spec`` (an adapter's ``model_spec()``, plain data: it also travels to ``flagtrace run``'s
    probes): ``options`` naming a model, ``first_only`` the main one (--model-config answers for
    it), ``optional`` ones (a tokenizer) used only where a config is found here, never fetched
    (a config.json alone has no tokenizer files: the framework fetches those itself),
    ``positional``: the word after which a positional model comes (``vllm serve MODEL``). ``explicit``: the
    --model-config values (split_explicit)."""
    explicit, named = split_explicit(explicit)
    args, found = list(args), []
    word = spec.get("positional")
    at = positional_index(args, word, spec.get("switches", ())) if word else None
    if at is not None:
        head, found = substitute(["--model", args[at]], ("--model",), explicit, offline, first_only=("--model",),
                                 named=named)
        found = [dataclasses.replace(f, option=word) for f in found]
        args[at] = head[1]
    options = tuple(spec.get("options", ()))
    args, more = substitute(args, options, explicit, offline, first_only=tuple(spec.get("first_only", ())),
                            named=named)
    found += more
    for option, key in (spec.get("json") or {}).items():
        args, more = substitute_json(args, option, key, offline, named)
        found += more
    for option in spec.get("optional", ()):
        try:
            args, more = substitute(args, (option,), offline=True)
        except FlagtraceError:  # not found: the framework reads it as typed
            continue
        found += more
    return args, found


def positional_index(args, word, switches=()):
    """Where the parser of ``WORD [options] MODEL [options]`` (``vllm serve``) finds the positional model: the
    first word after ``word`` that is neither an option nor an option's value (``switches``: options that take
    no value); None when there is none."""
    if args[:1] != [word]:
        return None
    switches, i = set(switches), 1
    while i < len(args):
        token = args[i]
        if token == "--":
            return i + 1 if i + 1 < len(args) else None
        if token.startswith("-") and token != "-":
            i += 1 if "=" in token or token in switches else 2
            continue
        return i
    return None


def substitute_json(args, option, key, offline=False, named=None):
    """``args`` with the model a JSON option names at ``key`` (``--speculative-config '{"model": ID}'``, or
    ``--speculative-config.model ID``) replaced by the folder of the config that stands for it, looked up as
    the main model is (--model-config NAME=ID|DIR where NAME is that model): (new args, [Found])."""
    out, found = list(args), []
    dotted = "%s.%s" % (option, key)
    for i, word in enumerate(out):
        if word in (option, dotted) and i + 1 < len(out):
            index, value, prefix = i + 1, out[i + 1], ""
        elif word.startswith(option + "=") or word.startswith(dotted + "="):
            index, (prefix, value) = i, (word.split("=", 1)[0] + "=", word.split("=", 1)[1])
        else:
            continue
        if word.split("=", 1)[0] == dotted:
            hit = locate(value, dotted, None, offline, main=False, named=named)
            if hit:
                found.append(hit)
                out[index] = prefix + hit.folder
            continue
        try:
            doc = json.loads(value)
        except ValueError:
            continue  # not JSON: the framework's parser says what it thinks of it
        if not isinstance(doc, dict) or not isinstance(doc.get(key), str):
            continue
        hit = locate(doc[key], dotted, None, offline, main=False, named=named)
        if hit:
            found.append(hit)
            out[index] = prefix + json.dumps(dict(doc, **{key: hit.folder}))
    return out, found


def substitute(args, options, explicit=None, offline=False, first_only=(), named=None):
    """``args`` with every model the options name (``--opt V`` or ``--opt=V``) that is not a local
    folder replaced by the folder of the config that stands for it: (new args, [Found]).
    ``explicit`` (--model-config) applies to the options in ``first_only`` (the main model), ``named``
    (--model-config NAME=ID|DIR) to any model named NAME."""
    out, found = list(args), []
    for i, word in enumerate(out):
        for option in options:
            if word == option and i + 1 < len(out):
                index, value = i + 1, out[i + 1]
            elif word.startswith(option + "="):
                index, value = i, word.split("=", 1)[1]
            else:
                continue
            hit = locate(value, option, explicit if option in first_only else None, offline, main=option in first_only,
                         named=named)
            if hit:
                found.append(hit)
                out[index] = hit.folder if index != i else option + "=" + hit.folder
    return out, found
