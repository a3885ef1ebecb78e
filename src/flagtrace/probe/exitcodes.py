"""Exit codes, as docs/exit-codes.md lists them. Every exit path uses these, the tool's and the probe's (stdlib only)."""
import enum


class ExitCode(enum.IntEnum):
    OK = 0  # resolved; nothing explicitly requested was overridden (or not asked to care)
    OVERRIDDEN = 1  # check / --strict: an explicit request was overridden or an --expect failed
    TARGET_RAISED = 2  # the target's own resolution raised (or its argument parser refused)
    CANNOT_RUN = 3  # flagtrace could not run the target or read its trace
    NOT_REACHED = 4  # the program ended without reaching its stop point: no resolved config to report
    USAGE = 64  # flagtrace was called wrongly
    INTERNAL = 70  # a flagtrace bug: one line, the traceback saved to a file (never 1: CI reads 1 as "overridden")
    INTERRUPTED = 130


class FlagtraceError(Exception):
    """One clear line for the user, and the exit code that goes with it."""

    def __init__(self, message, code=ExitCode.CANNOT_RUN, detail=None):
        super().__init__(message)
        self.message = message
        self.code = code
        self.detail = detail  # extra lines (e.g. the tail of the target's stderr)
