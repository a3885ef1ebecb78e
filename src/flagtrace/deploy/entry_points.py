"""Which framework (the records of core.frameworks) or unsupported wrapper (data/images.toml [wrappers]) a
command line runs, from its first words."""
import os

from .images import wrappers


def recognise(argv):
    """The framework adapter whose entry point the command runs (its console script, or ``python -m``
    of one of its modules or of a wrapper module it follows: dynamo.vllm), or ""."""
    from ..core.frameworks import FRAMEWORKS
    from ..probe.bootstrap.proctable import is_python_path

    words = list(argv)
    while words and (words[0] == "env" or "=" in words[0] and not words[0].startswith("-")):
        words = words[1:]  # env K=V ... COMMAND
    if not words:
        return ""
    first = os.path.basename(words[0])
    for adapter in FRAMEWORKS:
        if first in adapter.scripts:
            return adapter.name
        if is_python_path(first) and "-m" in words[1:3]:
            module = words[words.index("-m") + 1] if words.index("-m") + 1 < len(words) else ""
            if module.startswith(adapter.name + ".") or module in adapter.wrapper_modules:
                return adapter.name
    return ""


def known_frameworks():
    """The frameworks -f recognises, in words: "SGLang or vLLM (and their wrapper modules: dynamo.sglang, ...)"."""
    from ..core.frameworks import FRAMEWORKS

    wrapped = [m for record in FRAMEWORKS for m in record.wrapper_modules]
    return "%s%s" % (" or ".join(record.label for record in FRAMEWORKS),
                     " (or python -m %s)" % ", ".join(wrapped) if wrapped else "")


def wrapper_of(argv):
    """In words, a wrapper entry point (data/images.toml [wrappers]) the command runs, or ""."""
    words = list(argv)
    if "-m" in words[1:3]:
        i = words.index("-m")
        module = words[i + 1] if i + 1 < len(words) else ""
        return wrappers().get(module, "")
    return ""
