"""What the readers take and give: a deployment file (Artifact), a framework launch found in it (Launch) and
each word of its command line with where that word came from (Token)."""
import dataclasses
import functools

from .objects import Objects
from .yaml_lines import load_documents


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
    gpu_type: str = ""  # the GPU the file names (SkyPilot's accelerators: H100), for --gpu when it is not given
    release: str = ""  # NAME==VERSION the image tag names ("" unknown)
    notes: list = dataclasses.field(default_factory=list)  # said once in the report (":latest" taken as ...)
    framework: str = ""  # the adapter that recognised the command ("" none)
    wrapper: str = ""  # a wrapper entry point that is not supported (what it is, in words)
    problem: str = ""  # why this command cannot be run as the manifest has it (one line), or ""
    placeholders: list = dataclasses.field(default_factory=list)  # words only known at run time ("$PORT")
    model_configs: list = dataclasses.field(default_factory=list)  # --model-config values the file implies ("DIR=ID")
    files: dict = dataclasses.field(default_factory=dict)  # path as the command names it -> the text the file writes there

    @property
    def argv(self):
        return [t.text for t in self.tokens]

    def describe(self):
        return "%s: %s" % (self.source, self.name)


def unreadable(source, name, problem):
    """A row for what cannot be read (a file, a YAML document): a Launch with only its problem."""
    return Launch(source=source, name=name, tokens=[], env={}, problem=problem)


class Artifact:
    """One file's text as the readers see it: its name, its text, and its YAML documents, parsed on first ask
    (a shell script is never parsed) and once for all readers."""

    def __init__(self, source, text, objects=None):
        self.source = source  # the path as given (or "-")
        self.text = text
        self.objects = objects if objects is not None else Objects()  # every file's objects, for references
        self.skipped = None  # why a reader took nothing from it, said by the reader (else launch.py says why)

    @functools.cached_property
    def documents(self):
        """[document] of the text; one that does not parse is a yaml_lines.BadDocument in its place."""
        return load_documents(self.text, self.source)
