"""One policy, for explain, check, run and the what-if verbs: which traces flagtrace refuses to
explain (and why, in one line: gate()), and the exit code of an analysis."""
import collections
import os
import re

from ..core.exitcodes import ExitCode
from ..core.frameworks import release_hint

REFUSED = ("no_target", "no_framework", "unsupported")


Stop = collections.namedtuple("Stop", "status message")


def gate(trace, died=True):
    """The one outcome gate (explain and check, the what-if verbs, each process of ``flagtrace run``):
    None where flagtrace can explain ``trace``, else a Stop(status, message): ``refused`` (the probe
    found no target, no framework, an unsupported release), ``problem`` (a --watch/--stop-at naming
    nothing), or, with ``died``, ``died`` (the target ended before resolution started; a simulation
    gap that explains it is said too)."""
    refused = refusal(trace)
    if refused:
        return Stop("refused" if (trace.get("outcome") or {}).get("status") in REFUSED else "problem", refused)
    how = died_early(trace) if died else None
    if how:
        gap = simulation_gap(trace, how)
        return Stop("died", "the target %s before resolution started%s" % (how, "; " + gap if gap else ""))
    return None


def refusal(trace):
    """Why this trace cannot be explained (the probe found no target, no framework, an unsupported
    release, a --watch/--stop-at naming nothing): one line, or None."""
    outcome = trace.get("outcome") or {}
    if outcome.get("status") == "no_framework":
        return "%s; %s" % (outcome.get("message"), release_hint((trace.get("request") or {}).get("adapter")))
    if outcome.get("status") in REFUSED:
        return outcome.get("message", "target not found")
    for problem in trace.get("problems", []):
        if problem["kind"] == "spec":
            return problem["message"]
    return None


def died_early(trace):
    """How the target ended before resolution started (no config object, no parse error), or None.
    An error the framework's own resolution code raised before its config object existed (a
    missing --config file) is not that: it is explained as the framework's error."""
    outcome = trace.get("outcome") or {}
    status = outcome.get("status")
    if trace.get("objects") or status not in ("exited", "raised") or any(
            p.get("error") for p in trace.get("parses", [])) or framework_raised(trace):
        return None
    if status == "raised":
        return "raised %s: %s" % (outcome["exception"]["type"], outcome["exception"]["message"])
    return "exited with status %s" % outcome.get("exit_code")


def simulation_gap(trace, text):
    """One line when ``text`` (an error) names something the simulation does not provide
    (probe/sim/standins.json ``not_simulated``) and a simulation ran, or the interpreter ran on another build's
    libpython (a loader path meant for the user's interpreter, not flagtrace's); else None."""
    foreign = (trace.get("target") or {}).get("foreign_libpython")
    if foreign and text:
        return ("the interpreter %s ran on %s, not on the libpython it was built with: a loader path in the "
                "environment (LD_LIBRARY_PATH, LD_PRELOAD) meant for the interpreter on the GPU box puts it first, and "
                "the interpreter here is not that one; leave the variable out here, or give --python an "
                "interpreter it fits" % ((trace.get("target") or {}).get("interpreter"), foreign))
    if not trace.get("simulation") or not text:
        return None
    from ..probe.sim.standins import load_not_simulated

    for key, line in load_not_simulated().items():
        if key in text:
            return "%s (--gpu simulates the GPUs, not this)" % line
    missing = _MISSING_MODULE.search(text)
    if missing:
        return ("the module %s is not installed where the command ran: flagtrace's release environments leave out "
                "GPU-only packages and what resolution does not import (the image on the GPU box may have it; "
                "--python names an interpreter that does)" % missing.group(1))
    return None


# An import that failed for a module the environment lacks (not a name missing from a module that exists).
_MISSING_MODULE = re.compile(r"No module named '([\w.]+)'")


def stand_in_gap(trace, text):
    """One line when ``text`` (an error) is about a model's tokenizer and the command's model was
    stood in by a config.json alone (modelconfigs.py), which has no tokenizer files; else None."""
    inputs = (trace.get("request") or {}).get("inputs") or []
    if not inputs or not text or "tokenizer" not in text.lower():
        return None
    return ("the model was stood in by its config.json alone (%s); flagtrace bundles config.json only, not the "
            "tokenizer files this code loads: give --model-config DIR holding the model's config.json and "
            "tokenizer files" % "; ".join(inputs))


# What transformers / huggingface_hub say when a model named by hub id cannot be had offline.
_HUB_UNREACHABLE = ("We couldn't connect to", "offline mode", "is not a valid model identifier")


def hub_unreachable(trace, text):
    """One line when ``text`` (an error) says a model could not be fetched from the Hugging Face
    hub and no config stood in for the command's model; else None."""
    if (trace.get("request") or {}).get("inputs") or not text or not any(k in text for k in _HUB_UNREACHABLE):
        return None
    return ("the model was passed as typed (nothing here stands in for it) and this machine cannot fetch it from "
            "the Hugging Face hub: give a folder holding its config.json (weights are not needed) or --model-config "
            "ID|DIR, or let it reach the hub (HF_ENDPOINT can name a mirror; HF_HUB_OFFLINE unset)")


_NOT_RESOLUTION = ("ImportError", "ModuleNotFoundError", "SyntaxError", "KeyboardInterrupt", "SystemExit")


def framework_raised(trace):
    """Whether the target raised from a function of a watched framework package, called (not
    imported) on the way to resolution: the framework's own error, e.g. SGLang's "Config file not
    found" from prepare_server_args. An import that failed is not one."""
    exception = (trace.get("outcome") or {}).get("exception") or {}
    frames = exception.get("frames") or []
    roots = [os.path.dirname(p["file"]) + os.sep for p in trace.get("packages", []) if p.get("file")]
    if not frames or not roots or exception.get("type") in _NOT_RESOLUTION:
        return False
    if any("importlib" in (f.get("file") or "") for f in frames):
        return False
    inside = lambda f: any((f.get("file") or "").startswith(r) for r in roots)  # noqa: E731
    return inside(frames[-1]) and any(inside(f) and f.get("func") != "<module>" for f in frames)


def exit_code(analysis, strict=False, failed_expectations=0):
    """2 when the target's resolution raised (3 when what it raised is a simulation gap: flagtrace
    could not run it as the hardware would); 4 when it never reached its stop point; 1 when an
    expectation failed, or (strict) an explicit request was overridden; else 0."""
    if analysis["status"] == "error":
        if (analysis.get("error") or {}).get("simulation_gap"):
            return ExitCode.CANNOT_RUN
        return ExitCode.TARGET_RAISED
    if analysis["status"] == "incomplete":
        return ExitCode.NOT_REACHED
    if failed_expectations or (strict and analysis["summary"]["overridden"]):
        return ExitCode.OVERRIDDEN
    return ExitCode.OK
