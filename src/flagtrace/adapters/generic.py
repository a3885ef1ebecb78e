"""Any Python program: the user names the config class(es) and, optionally, the stop point."""
from ..core.exitcodes import ExitCode, FlagtraceError
from .base import Adapter


def check_specs(specs):
    """--watch / --stop-at as typed: MODULE:NAME each."""
    for spec in specs:
        module, sep, name = spec.partition(":")
        if not sep or not module or not name:
            raise FlagtraceError("expected MODULE:NAME, got %r" % spec, ExitCode.USAGE)


class GenericAdapter(Adapter):
    name = "generic"
    summary = "any Python program: --watch MODULE:CLASS [--stop-at MODULE:FUNCTION]"

    @classmethod
    def matches(cls, target, asked):
        return asked.adapter in ("auto", cls.name)  # last in the registry: what no framework took

    def request(self, target, asked, check=True):
        if not asked.watch:
            raise FlagtraceError(
                "nothing to watch in %s: give --watch MODULE:CLASS (the config class), and "
                "optionally --stop-at MODULE:FUNCTION" % target.describe(), ExitCode.USAGE)
        check_specs(asked.watch + asked.stop_at)
        return super().request(target, asked, check)

    def describe(self, asked):
        return "generic (--watch %s)" % ", ".join(asked.watch)
