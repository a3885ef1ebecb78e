"""One framework as data (core/frameworks/<name>.py holds each framework's record)."""
import dataclasses
import functools


@dataclasses.dataclass(frozen=True)
class Framework:
    name: str  # the adapter's name, the package's and the probe adapter's (probe/adapters/<name>.py)
    label: str  # how messages name it: "SGLang"
    summary: str  # the entry points it follows, in a few words (--adapter's help, `flagtrace debug`)
    adapter: str  # "module:Class" of its tool-side adapter
    scripts: tuple = ()  # console scripts (``sglang``, ``vllm``)
    # Other programs' modules whose ``python -m`` runs this framework's resolution (NVIDIA Dynamo's worker
    # ``dynamo.vllm``): followed through their own code as any entry point is.
    wrapper_modules: tuple = ()
    env: tuple = ()  # the environment variables its programs read (``X_*``: a prefix)
    # Modules the variant runner imports once before forking a child per variant: what the entry point
    # imports before it resolves (not the entry module itself, which runs as __main__).
    preimport: tuple = ()
    setup: tuple = ()  # probe modules its first import sets up (probe/adapters/...)
    # Where its source lives, for links in reports: (repository URL, the folder that holds the package in
    # it); a release's tag is "v" + its version.
    source: tuple = None
    # Options that name a model: the main one (--model-config answers for it), others looked up the same
    # way (a draft model), and some only where a config is found (a tokenizer path).
    model_options: tuple = ()
    other_model_options: tuple = ()
    optional_model_options: tuple = ()
    positional_model: str = None  # the word after which a positional model comes (``serve``)
    # JSON options naming a model at a key (a draft model: ``--speculative-config '{"model": ...}'``): looked up
    # like the main model, the option's JSON rewritten with the config that stands for it.
    json_model_options: dict = dataclasses.field(default_factory=dict)
    device_options: tuple = ()  # options naming network devices (comma-separated): the simulated box has them
    # (option, value) pairs that make the command target the CPU (SGLang's Xeon backend: ``--device cpu``). Without
    # --gpu such a run gets the native-kernel stand-ins and nothing else (probe/sim/cpu.py).
    cpu_target: tuple = ()
    # How ``--release NAME==VERSION`` builds it (envs/build.Recipe keywords beyond the name, the range and the
    # console scripts), and the releases of a wrapper built as an overlay over one of its releases.
    release_env: dict = dataclasses.field(default_factory=dict)
    wrapper_releases: dict = dataclasses.field(default_factory=dict)
    # What an operator appends to the command of one node of a multinode service running a wrapper module (the
    # Dynamo operator's leader and workers): {module: (rule, ...)}, the first rule that applies; a rule's
    # ``over``: the parallel sizes whose product must exceed the node's GPUs (none: always); ``sizes``: the
    # options giving each size; ``flags`` with {leader} {nodes} {rank} {local} {start}; ``worker``: a worker's
    # extra flags; ``origin``: whose code appends them (deploy/operators/graph_deployment.py reads this).
    multinode_flags: dict = dataclasses.field(default_factory=dict)
    # The releases the test suite runs (the Makefile builds them; a test keeps the two lists equal). Any other
    # release resolves as well, and every output says it is untested.
    tested: tuple = ()

    @property
    def package(self):
        return self.name

    def model_spec(self):
        """Which arguments name a model (probe/modelconfigs.substitute_command), as plain data. With a
        positional model, ``switches``: the options that take no value in any release (the flag table's boolean
        twins), so that the model is found after options as the release's parser finds it."""
        return {"options": list(self.model_options + self.other_model_options), "first_only": list(self.model_options),
                "optional": list(self.optional_model_options), "positional": self.positional_model,
                "json": dict(self.json_model_options), "switches": self.switches() if self.positional_model else []}

    def switches(self):
        """The options of the flag table (data/<name>_flags.toml) that are one of a ``--x`` / ``--no-x`` pair."""
        return list(_switches(self.name))

    def source_url(self, relpath, line, version):
        """A link to ``relpath`` (relative to the package's parent folder: "sglang/srt/x.py") at the release's
        tag, or None for a file that is not the framework's."""
        if not self.source or not version or not relpath.startswith(self.name + "/"):
            return None
        repo, folder = self.source
        return "%s/blob/v%s/%s%s#L%s" % (repo, version, folder + "/" if folder else "", relpath, line)


@functools.lru_cache(maxsize=None)
def _switches(name):
    from ..flag_history import History

    return tuple(sorted(flag for flag, record in History(name).flags().items()
                        if any(alias.startswith("--no-") or flag.startswith("--no-") for alias in record.get("aliases", ()))))
