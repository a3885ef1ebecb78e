"""What diff, matrix, fix, explain --fix and check -f share: the command's target and adapter,
resolved once (planning.py); a group of variants per GPU profile (one import of the framework each,
a fork per variant: launch/variants.py), each analysed as ``explain`` would (scheduling.py,
results.py); the edits that make a variant's command line (editing.py); and the search for the
smallest verified fix (fixsearch.py)."""
from .editing import apply, edited_command, edits, without
from .planning import Plan, gpu_request, one_framework, plan, side_command, translating
from .results import analysis, environments, hardware
from .scheduling import resolve

__all__ = ["Plan", "analysis", "apply", "edited_command", "edits", "environments",
           "gpu_request", "hardware", "one_framework", "plan", "resolve", "side_command", "translating", "without"]

