"""What the command line asked of the target, typed: built once by the CLI (commands/base.asked_of), the
only thing launch/ and adapters/ read of its options (the argparse Namespace stops at the CLI)."""
import dataclasses


@dataclasses.dataclass(frozen=True)
class Asked:
    adapter: str = "auto"  # auto, generic, or a framework adapter's name
    watch: tuple = ()  # MODULE:CLASS specs
    stop_at: tuple = ()  # MODULE:FUNCTION specs
    via: object = None  # the --via prefix (a string), None: this machine
    python: object = None  # with via: the remote interpreter
    from_trace: object = None  # --from FILE: nothing runs
    model_config: object = None  # --model-config [NAME=]ID|DIR values (modelconfigs.split_explicit): what stands for a model
    offline: bool = False  # --offline: a model's config.json is not fetched from the hub

    def here(self):
        """The same, on this machine (the what-if verbs resolve locally; --via is a side)."""
        return dataclasses.replace(self, via=None, python=None)
