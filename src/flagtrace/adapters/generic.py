"""Any Python program: the user names the config class(es) and, optionally, the stop point."""
from ..exitcodes import ExitCode, FlagtraceError


class GenericAdapter:
    name = "generic"

    @staticmethod
    def matches(target, asked):
        return True

    def request(self, target, asked):
        if not asked.watch:
            raise FlagtraceError(
                "nothing to watch in %s: give --watch MODULE:CLASS (the config class), and "
                "optionally --stop-at MODULE:FUNCTION" % target.describe(), ExitCode.USAGE)
        for spec in asked.watch + asked.stop_at:
            module, sep, name = spec.partition(":")
            if not sep or not module or not name:
                raise FlagtraceError("expected MODULE:NAME, got %r" % spec, ExitCode.USAGE)
        return {"watch": list(asked.watch), "stop_at": list(asked.stop_at), "adapter": self.name,
                "adapter_info": {"name": self.name, "describe": "generic (--watch %s)" % ", ".join(asked.watch)},
                "setup": []}

    def prepare(self, target, asked):
        return target, []

    def environment(self, target, asked):
        return None

    def translate(self, args, version):
        return list(args), []

    def field_aliases(self):
        return {}
