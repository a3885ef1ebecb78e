"""A framework launch found in a deployment artifact, and reading files and folders into launches."""
import dataclasses
import os
import sys

from ..exitcodes import ExitCode, FlagtraceError


@dataclasses.dataclass(frozen=True)
class Token:
    text: str
    origin: str  # in words: "args (deploy.yaml:31)", "image entrypoint (vllm/vllm-openai)", "$(MODEL) from env"


@dataclasses.dataclass
class Launch:
    source: str  # the file (or "-")
    name: str  # "Deployment/vllm container vllm", "service sglang", "docker run (line 3)"
    tokens: list  # [Token]: the container's command line, entrypoint first
    env: dict  # the container's environment: name -> value (a placeholder for what cannot be known here)
    image: str = ""
    gpus: int = 0  # GPUs the container asks for (resources.limits, --gpus, compose reservations); 0: unknown
    gpu_vendor: str = ""  # nvidia, amd
    release: str = ""  # NAME==VERSION the image tag names ("" unknown)
    notes: list = dataclasses.field(default_factory=list)  # said once in the report (":latest" taken as ...)
    framework: str = ""  # the adapter that recognised the command ("" none)
    wrapper: str = ""  # a wrapper entry point that is not supported (what it is, in words)
    problem: str = ""  # why this command cannot be run as the manifest has it (one line), or ""

    @property
    def argv(self):
        return [t.text for t in self.tokens]

    def describe(self):
        return "%s: %s" % (self.source, self.name)


def recognise(argv):
    """The framework adapter whose entry point the command runs (its console script, or ``python -m``
    of one of its modules or of a wrapper module it follows: dynamo.vllm), or ""."""
    from ..adapters import FRAMEWORKS
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


def read_paths(paths, stdin=None):
    """Every launch the files (folders: their *.yaml, *.yml, *.json, *.sh, *.txt files) hold, in order:
    [(path, [Launch])], a file with none included (its list empty)."""
    out = []
    for path in paths:
        if path == "-":
            out.append(("-", read_text((stdin or sys.stdin).read(), "-")))
            continue
        if os.path.isdir(path):
            found = sorted(os.path.join(folder, name) for folder, _, names in os.walk(path) for name in names
                           if name.lower().endswith((".yaml", ".yml", ".json", ".sh", ".txt")))
            if not found:
                raise FlagtraceError("-f %s: a folder with no .yaml/.yml/.json/.sh file" % path, ExitCode.USAGE)
            out += [(p, read_file(p)) for p in found]
        elif os.path.isfile(path):
            out.append((path, read_file(path)))
        else:
            raise FlagtraceError("-f %s: no such file or folder" % path, ExitCode.USAGE)
    return out


def read_file(path):
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except (OSError, UnicodeDecodeError) as exc:
        raise FlagtraceError("-f %s: cannot read it: %s" % (path, exc), ExitCode.USAGE)
    return read_text(text, path)


def read_text(text, source):
    """The launches of one file's text: a docker run line (shell text), a compose file (a mapping with
    ``services``) or Kubernetes objects (one document or many)."""
    from . import docker, kube

    if docker.has_docker_run(text) and not source.lower().endswith((".yaml", ".yml", ".json")):
        return docker.read_run_lines(text, source)
    documents = kube.load_documents(text, source)
    if len(documents) == 1 and isinstance(documents[0], dict) and "services" in documents[0] \
            and "kind" not in documents[0]:
        return docker.read_compose(documents[0], source)
    return kube.read_objects(documents, source)
