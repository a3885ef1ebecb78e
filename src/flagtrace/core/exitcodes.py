"""Exit codes, as docs/exit-codes.md lists them: defined in probe/exitcodes.py, which the probe's own code
(the model catalog, probe/modelconfigs.py) raises with too."""
from ..probe.exitcodes import ExitCode, FlagtraceError

__all__ = ["ExitCode", "FlagtraceError"]
