"""The environment flagtrace's own subprocesses run with (the release builder, its interpreter and pip checks,
`flagtrace debug`'s questions): this process's, less what would make an interpreter load another Python's
library or modules. A command's own variables (``LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu`` from a CPU
deployment's docs) reach the target, never these: a venv's Python asked its version through the system's
libpython answered 3.11.2 for 3.11.7, and the builder recreated the shared venv for it."""
import os

# Variables of the dynamic loader and of the interpreter that change which library or modules a Python loads.
INTERPRETER_VARIABLES = ("LD_LIBRARY_PATH", "LD_PRELOAD", "LD_AUDIT", "DYLD_LIBRARY_PATH", "DYLD_INSERT_LIBRARIES",
                         "PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "PYTHONUSERBASE", "PYTHONEXECUTABLE",
                         "PYTHONPLATLIBDIR", "PYTHONSAFEPATH", "PYTHONINSPECT")


def own_environment(extra=()):
    """os.environ without INTERPRETER_VARIABLES (and the names in ``extra``)."""
    drop = set(INTERPRETER_VARIABLES) | set(extra)
    return {k: v for k, v in os.environ.items() if k not in drop}
