"""What diff, matrix, fix, explain --fix and check -f share: the command's target and adapter,
resolved once (planning.py); a group of variants per GPU profile (one import of the framework each,
a fork per variant: launch/variants.py), each analysed as ``explain`` would (scheduling.py,
results.py); the edits that make a variant's command line (editing.py); and the search for the
smallest verified fix (fixsearch.py)."""
from .editing import apply, edited_command, edits, without
from .planning import Plan, gpu_request, one_framework, plan, side_command, translating
from .results import analysis, environments, hardware
from .scheduling import resolve

__all__ = ["Plan", "add_arguments", "analysis", "apply", "edited_command", "edits", "environments",
           "gpu_request", "hardware", "one_framework", "plan", "resolve", "side_command", "translating", "without"]


def add_arguments(p, unit, verb):
    """The options diff, matrix and fix share (``unit``: what one resolution is called)."""
    from ..deploycmd import add_file_options
    from ..envcmd import add_release_option
    from ..modelconfigs import add_model_options
    from ..report import formats

    p.add_argument("--watch", action="append", default=[], metavar="MODULE:CLASS",
                   help="config class to watch (repeatable); adapters know their framework's")
    p.add_argument("--stop-at", action="append", default=[], metavar="MODULE:FUNCTION",
                   help="stop the target when it calls this (resolution is over); repeatable")
    p.add_argument("--adapter", default="auto", metavar="NAME", help="auto (default), sglang, vllm or generic")
    p.add_argument("--timeout", type=float, default=300.0, metavar="SECONDS",
                   help="per %s: kill its resolution after this long (default %%(default)s)" % unit)
    p.add_argument("--format", choices=formats(verb), default="terminal")
    add_model_options(p)
    add_release_option(p)
    add_file_options(p)
    p.add_argument("-o", "--output", metavar="FILE", help="write the report to FILE instead of stdout")
