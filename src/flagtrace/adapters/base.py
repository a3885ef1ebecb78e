"""What every adapter is to the tool (the generic one and each framework's): its name, when it takes a
command, the probe request it builds, and the hooks the verbs call. core/frameworks holds the registry."""
from ..core.request import ProbeRequest

class Adapter:
    name = None
    summary = None  # what it follows, in a few words: --adapter's help, `flagtrace debug`
    env = ()  # the environment variables this adapter's programs read (``X_*``: a prefix)
    package = None  # a framework adapter's package (its first import activates the probe under flagtrace run)
    # Modules the variant runner imports once before forking a child per variant: what the entry point imports
    # before it resolves (not the entry module itself, which runs as __main__).
    preimport = ()

    @classmethod
    def matches(cls, target, asked):
        return asked.adapter == cls.name

    def request(self, target, asked, check=True):
        """The probe request for ``target`` (a ProbeRequest without its models: ProbeRequest.build adds them).
        ``check=False``: without the adapter's own input check (deferred until the framework's parser has
        accepted the command: engine/resolve.prepare)."""
        return ProbeRequest(adapter=self.name, adapter_info={"name": self.name, "describe": self.describe(asked)},
                            watch=list(asked.watch), stop_at=list(asked.stop_at), setup=[])

    def describe(self, asked):
        return self.name

    def supported(self):
        """What it supports, in a line (`flagtrace debug`)."""
        return self.summary

    def prepare(self, target, asked):
        """The target as the probe runs it, and the configs standing for its models: (target, [Found])."""
        return target, []

    def check(self, args):
        """Refuse (FlagtraceError) what the framework would refuse only after its import."""

    def environment(self, target, asked):
        return None

    def translate(self, args, version):
        """``args`` for release ``version``, options renamed between releases spelled as that release spells
        them: (args, [note per translated option])."""
        return list(args), []

    def field_aliases(self):
        """{old field name: its name in the newest release} for fields renamed between releases."""
        return {}

    def annotate(self, analysis):
        """Add to an analysis what only the adapter knows (flag renames)."""

    def flag_table(self):
        """The framework's flag history (adapters/flag_history.History) or None."""
        return None
