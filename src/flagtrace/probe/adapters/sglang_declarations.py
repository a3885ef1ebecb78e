"""SGLang declarations, inside the target: what both declaring generations share, and 0.5.15-0.5.18.

From 0.5.15 on, many decisions are ``(source, {field: value})`` entries in a stash
(``server_args._resolved_overrides``). A post-process pass or a model-override provider returns
its entry and has returned before the plumbing stores it, so the deciding line is noted while it
runs (``noting_return``); the code that asked is the first frame outside the plumbing (``outside``).

0.5.15-0.5.18 (``install``): ``ServerArgs`` is still a dataclass that ``__post_init__`` mutates, but many decisions are
``(source, {field: value})`` entries that a post-process pass (``run_post_process_pass``) or a
model-override provider (``_invoke_provider``) returns, and that ``materialize_declarations``
applies with ``setattr`` at the end. Each declaration is recorded with the function that decided
(its return line) and the handler that asked; each applied write is linked to its declaration.
Standard library only, Python >= 3.9.
"""
import functools
import os
import sys

from ..recorder import scalar_locals

_PROBE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def noting_return(func, noted):
    """``func`` wrapped so that ``noted`` gets the lines its own frame ran (``lines``) and the
    line it returned from (``line``): a pass or provider has returned before the plumbing records
    its declaration, and which line stored each value is the decision. Other frames keep the
    tracer they had (the recorder's, on releases that write fields)."""
    code = getattr(func, "__code__", None)

    def noting(*args, **kwargs):
        lines = noted.setdefault("lines", [])
        previous = sys.gettrace()

        def local(frame, event, arg):
            if event == "line":
                lines.append(frame.f_lineno)
            elif event == "return":
                noted["line"] = frame.f_lineno
                noted["locals"] = scalar_locals(frame)
                noted["frame"] = id(frame)  # groups what it logged
            return local

        def calls(frame, event, arg):
            if frame.f_code is code:
                return local
            return previous(frame, event, arg) if previous is not None else None

        sys.settrace(calls)
        try:
            return func(*args, **kwargs)
        finally:
            sys.settrace(previous)

    return functools.update_wrapper(noting, func)


def decider(func, noted):
    """The deciding function, the line it returned from and the lines it ran."""
    code = getattr(func, "__code__", None)
    if code is None:
        return None
    out = {"func": getattr(func, "__qualname__", code.co_name), "file": code.co_filename,
           "line": noted.get("line") or code.co_firstlineno}
    if noted.get("lines"):
        out["lines"] = list(dict.fromkeys(reversed(noted["lines"])))[::-1]  # in the order they last ran
    if noted.get("locals"):
        out["locals"] = noted["locals"]
    if noted.get("frame") is not None:
        out["frame"] = noted["frame"]
    return out


def outside(frame, plumbing_files):
    """The first frame from ``frame`` outwards that is neither plumbing nor the probe's own."""
    while frame is not None and (frame.f_code.co_filename in plumbing_files
                                 or frame.f_code.co_filename.startswith(_PROBE_DIR)):
        frame = frame.f_back
    return frame


def install(probe, module):
    trace = probe.trace
    plumbing = (module.__file__,)
    orig_pass = getattr(module, "run_post_process_pass", None)
    orig_provider = getattr(module, "_invoke_provider", None)
    orig_materialize = getattr(module, "materialize_declarations", None)
    if orig_pass is None or orig_materialize is None:
        trace.problem("adapter", "sglang adapter: declaration plumbing not found in %s" % module.__name__)
        return

    def run_post_process_pass(server_args, fn, *args, **kwargs):
        noted = {}
        stash = getattr(server_args, "_resolved_overrides", None)
        before = len(stash) if isinstance(stash, list) else 0
        result = orig_pass(server_args, noting_return(fn, noted), *args, **kwargs)
        stash = getattr(server_args, "_resolved_overrides", None)
        if isinstance(stash, list) and len(stash) > before:
            source, declared = stash[-1]
            trace.declaration(source, declared, decider(fn, noted), outside(sys._getframe(1), plumbing))
        return result

    def _invoke_provider(fn, server_args, hf_config):
        noted = {}
        declared = orig_provider(noting_return(fn, noted), server_args, hf_config)
        if declared:
            trace.declaration(getattr(fn, "__qualname__", repr(fn)), declared,
                              decider(fn, noted), outside(sys._getframe(1), plumbing))
        return declared

    def materialize_declarations(server_args):
        applied = {}
        for source, declared in getattr(server_args, "_resolved_overrides", None) or ():
            for field in declared:
                applied[field] = trace.find_declaration(source, declared)
        trace.declaring = applied
        try:
            return orig_materialize(server_args)
        finally:
            trace.declaring = None

    module.run_post_process_pass = run_post_process_pass
    module.materialize_declarations = materialize_declarations
    if orig_provider is not None:
        module._invoke_provider = _invoke_provider

