"""The verbs, one module each, one shape: ``HELP`` (its line in ``flagtrace --help``),
``add_arguments(parser)`` and ``run(request) -> exit code`` (a base.Request: the parsed options,
the command after ``--``, where output and messages go); optionally ``preparse(argv)``, the verb's
words rewritten before argparse reads them. cli.py builds its parser from VERBS and dispatches;
the code verbs share lives beside them (options, base, tracing, gating); what they run is the engine's (engine/), never in a verb."""
import importlib

VERBS = ("explain", "why", "gpus", "models", "check", "lock", "diff", "fix", "matrix", "debug", "env", "run")


def verb(name):
    """The module of verb ``name``."""
    return importlib.import_module("%s.%s" % (__name__, name))
