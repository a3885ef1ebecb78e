"""Image families (data/images.toml): which framework an image runs, its entrypoint (by release), and the
release its tag names (``vllm/vllm-openai:v0.33.0`` -> vllm==0.33.0; ``:latest`` -> the newest release
flagtrace ships pins for, said so)."""
import functools
import os
import re

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

DATA = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data", "images.toml")


@functools.lru_cache(maxsize=1)
def _data():
    with open(DATA, "rb") as fh:
        return tomllib.load(fh)


def families():
    return _data()["image"]


def wrapper_image(image, container):
    """In words, the wrapper a container runs by its image or its KServe model format ("" none)."""
    fmt = ((container.get("modelFormat") or {}).get("name") or "") if isinstance(container, dict) else ""
    data = _data()
    if fmt and fmt in data.get("model_formats", {}):
        return data["wrappers"][data["model_formats"][fmt]]
    repo = image.split("@", 1)[0].rsplit(":", 1)[0] if ":" in image.rsplit("/", 1)[-1] else image.split("@", 1)[0]
    module = data.get("wrapper_images", {}).get(repo.rsplit("/", 1)[-1])
    return data["wrappers"][module] if module else ""


def wrappers():
    """{module: what it is and why flagtrace does not follow it} (``python -m MODULE``)."""
    return _data().get("wrappers", {})


def family(image):
    """(repository, its table) for an image reference (registry and tag aside), or (repository, None)."""
    repo = image.split("@", 1)[0]
    if ":" in repo.rsplit("/", 1)[-1]:
        repo = repo.rsplit(":", 1)[0]
    for name, table in families().items():
        if repo == name or repo.endswith("/" + name) or any(repo == a or repo.endswith("/" + a)
                                                             for a in table.get("aliases", [])):
            return name, table
    last = repo.rsplit("/", 1)[-1]
    for name, table in families().items():  # a rebuild of a known image (lmcache/vllm-openai): its entrypoint
        if "/" in name and last == name.rsplit("/", 1)[-1]:
            return repo, dict(table, derived=name)
    return repo, None


def tag_of(image):
    last = image.split("@", 1)[0].rsplit("/", 1)[-1]
    return last.split(":", 1)[1] if ":" in last else "latest"


def release_of(image):
    """(NAME==VERSION or "", a note for the report or "") for an image reference."""
    from ..core.pinlib import shipped

    name, table = family(image)
    bundled = _bundled(image, name)
    if bundled:
        return bundled
    if table is None or table.get("derived"):
        return _guess(image, name)
    framework, tag = table["framework"], tag_of(image)
    m = re.match(table.get("tag", r"^v?(\d+\.\d+\.\d+(?:\.post\d+)?)"), tag)
    if m:
        return "%s==%s" % (framework, m.group(1)), ""
    newest = shipped(framework)[-1]
    return ("%s==%s" % (framework, newest),
            "%s:%s names no release; taken as %s %s, the newest flagtrace knows (give --release to choose)"
            % (name, tag, framework, newest))


def _bundled(image, repo):
    """(NAME==VERSION, note) for an image of another project that holds a framework (data/images.toml
    ``bundle``: rayproject/ray-llm:2.52.0 -> the vLLM ray 2.52 requires; ghcr.io/llm-d/llm-d-cuda:v0.9.0 -> the vLLM
    llm-d 0.9.0 builds), or None."""
    for name, table in _data().get("bundle", {}).items():
        if repo == name or repo.endswith("/" + name):
            m = _VERSION_IN_TAG.search(tag_of(image))
            tag = m.group(1) if m else ""
            version = tag and (table["versions"].get(tag) or table["versions"].get(".".join(tag.split(".")[:2])))
            if not version:
                return "", ("%s: its tag names no %s release flagtrace maps to %s; give --release %s==VERSION"
                            % (image, table["by"], table["framework"], table["framework"]))
            from ..core.pinlib import vkey

            exact = "exact_since" in table and vkey(tag) >= vkey(table["exact_since"])
            said = table["exact_note"] if exact else table["note"]
            return "%s==%s" % (table["framework"], version), said.format(image=image, version=version, tag=tag)
    return None


_VERSION_IN_TAG = re.compile(r"(?<![\d.])v?(\d+\.\d+\.\d+(?:\.post\d+)?)(?![\d])")


def _guess(image, repo):
    """An image flagtrace does not know whose name says which framework it holds (``<org>/sglang:v0.4.9.post3-cu126``,
    ``<registry>/vllm:0.10.0-xpu``): the version its tag carries, labelled a guess; a tag with none asks for
    --release. ("", "") for any other image."""
    from ..core.frameworks import FRAMEWORKS

    base = repo.rsplit("/", 1)[-1].lower()
    names = [r.name for r in FRAMEWORKS] + [w for r in FRAMEWORKS for w in r.wrapper_releases]
    framework = next((n for n in sorted(names, key=len, reverse=True)
                      if n in base or n.split("-")[-1] in base), None)
    if framework is None:
        return "", ""
    framework = next((n for n in names if n == framework or n.endswith("-" + framework)), framework)
    m = _VERSION_IN_TAG.search(tag_of(image))
    if m:
        return ("%s==%s" % (framework, m.group(1)), "%s: %s %s is a guess from the tag (an image flagtrace does not "
                "know; give --release to choose)" % (image, framework, m.group(1)))
    return "", ("%s: its tag names no %s release flagtrace can read; give --release %s==VERSION"
                % (image, framework, framework))


def entrypoint(image, release):
    """The image's ENTRYPOINT + CMD words for a release ("" none known), and where that comes from."""
    from ..core.pinlib import vkey

    name, table = family(image)
    if table is None:
        return [], ""
    version = release.split("==", 1)[1] if release else ""
    chosen = table.get("entrypoint", [])
    for since, words in sorted(table.get("entrypoint_since", {}).items(), key=lambda kv: vkey(kv[0])):
        if version and vkey(version) >= vkey(since):
            chosen = words
    if table.get("derived"):
        return list(chosen), "%s image entrypoint (taken as %s's: a rebuild of it)" % (name, table["derived"])
    return list(chosen), "%s image entrypoint" % name


def pins_of(text):
    """{framework: version} a script installs (``pip install "sglang[all]==0.5.9"``, ``vllm==0.10.1``)."""
    from ..core.frameworks import FRAMEWORKS

    names = [r.name for r in FRAMEWORKS] + [w for r in FRAMEWORKS for w in r.wrapper_releases]
    pattern = re.compile(r"(?<![\w-])(%s)(?:\[[^\]]*\])?==(\d+\.\d+\.\d+(?:\.post\d+)?)"
                         % "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True)))
    return dict((m.group(1), m.group(2)) for m in pattern.finditer(text))


def release_for(framework, image, pins):
    """The release a script's command runs on: a known image's tag, else the version the script installs, else a
    guess from an unknown image's tag, else the newest flagtrace knows (said so)."""
    release, note = release_of(image) if image else ("", "")
    guessed = bool(release) and (family(image)[1] or {"derived": True}).get("derived")
    if release and not guessed:
        return release, note
    if framework in pins:
        return "%s==%s" % (framework, pins[framework]), ""
    if release:
        return release, note
    if not framework:
        return "", ""
    from ..core.pinlib import shipped

    newest = shipped(framework)[-1]
    return "%s==%s" % (framework, newest), ("the script names no %s release (no image, no pin); taken as %s, "
                                            "the newest flagtrace knows (give --release to choose)"
                                            % (framework, newest))
