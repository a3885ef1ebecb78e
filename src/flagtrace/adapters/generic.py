"""Any Python program: the user names the config class(es) and, optionally, the stop point."""
from ..exitcodes import ExitCode, FlagtraceError


class GenericAdapter:
    name = "generic"

    @staticmethod
    def matches(target, opts):
        return True

    def request(self, target, opts):
        if not opts.watch:
            raise FlagtraceError(
                "nothing to watch in %s: give --watch MODULE:CLASS (the config class), and "
                "optionally --stop-at MODULE:FUNCTION" % target.describe(), ExitCode.USAGE)
        for spec in opts.watch + opts.stop_at:
            module, sep, name = spec.partition(":")
            if not sep or not module or not name:
                raise FlagtraceError("expected MODULE:NAME, got %r" % spec, ExitCode.USAGE)
        return {"watch": list(opts.watch), "stop_at": list(opts.stop_at), "adapter": self.name,
                "adapter_info": {"name": self.name, "describe": "generic (--watch %s)" % ", ".join(opts.watch)},
                "setup": []}

    def environment(self, target, opts):
        return None

    def translate(self, args, version):
        return list(args), []

    def field_aliases(self):
        return {}
