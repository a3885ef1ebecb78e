"""Fix search: the smallest change to the command that makes it resolve, or makes an overridden
request (or a wanted value) stick, each verified by a real re-resolution (``flagtrace fix`` and
``explain --fix``).

One import of the framework; the command as typed is resolved first, its explanation names the
candidates (analysis/fixes.py), single changes are resolved next, and where none works, pairs of
the singles that got furthest (variants in rounds: launch/variants.py). Only verified changes are
reported, ranked by how many changes, then how many other fields move.
"""
import difflib
import os

from ...analysis import fixes
from ...analysis.compare import error_line
from ...core.exitcodes import ExitCode, FlagtraceError
from ...launch.variants import Variant, VariantSession
from .editing import apply, edited_command
from . import planning
from .planning import gpu_request
from .results import analysis as analysed

SCHEMA = "flagtrace/fix@1"
BEST_SINGLES = 5  # singles that got furthest, paired when no single change works


class _Rounds:
    """The session's rounds, with progress on a terminal and each result analysed."""

    def __init__(self, session, err):
        self.session, self.err = session, err
        self.alone = None  # why candidates had to be resolved in processes of their own

    def resolve(self, variants, what):
        def progress(done, total):
            if self.err.isatty():
                self.err.write("\r\033[K  flagtrace: %s: %d of %d resolved" % (what, done, total))
                self.err.flush()

        results = self.session.run(variants, progress)
        if self.err.isatty():
            self.err.write("\r\033[K")
        return [(r,) + _analysed(r) for r in results]


def _analysed(result):
    """(analysis, None), or (None, why) where the variant could not be analysed (a timeout)."""
    try:
        return analysed(result), None
    except FlagtraceError as exc:
        return None, exc.message


def find(plan, gpu, wants, timeout, limit, err):
    """The fix document (``flagtrace/fix@1``) for ``plan``'s command."""
    args = list(plan.target.args)
    with VariantSession(plan.target, gpu_request(plan, gpu), timeout, env=plan.env,
                        preimport=plan.preimport, parallel=os.cpu_count() or 1) as session:
        rounds = _Rounds(session, err)
        # twice: a field that differs between two resolutions of the same command (a random seed)
        # is no side effect of any change
        (first, original, failure), (_, again, _) = rounds.resolve(
            [Variant(args, label="as typed"), Variant(args, label="as typed, again")], "the command as typed")
        if original is None:
            raise FlagtraceError("the command as typed: %s" % failure)
        unstable = {e["field"] for e in fixes.side_effects(original, again)} if again else set()
        _check_wants(wants, original)
        problems = fixes.problems(original, wants)
        actions = _actions(first.trace)
        for problem in problems:
            if problem["kind"] == "want":
                problem["option"] = fixes.option_of(problem["field"], actions)
        tried = {}  # changes -> (Candidate, analysis or None, failure)
        singles = fixes.unique([c for p in problems for c in fixes.candidates(p, original, actions, args)])
        _try(rounds, plan, args, singles[:limit], tried)
        unsolved = [p for p in problems if not any(_solves(p, a) for _, a, _ in tried.values())]
        if unsolved:
            more = []
            for problem in unsolved:
                best = [c for c, a, _ in tried.values()
                        if a is not None and fixes.progressed(problem, original, a)][:BEST_SINGLES]
                follow = {c.changes: _follow_ups(problem, a, actions, args, c)
                          for c, a, _ in tried.values() if c in best}
                more += fixes.pairs(best, follow)
            _try(rounds, plan, args, [c for c in fixes.unique(more) if c.changes not in tried][:limit], tried)
    doc = _document(plan, gpu, original, problems, tried, unstable)
    doc["alone"] = rounds.alone
    return doc


def _try(rounds, plan, args, candidates, tried):
    if not candidates:
        return
    variants = []
    for c in candidates:
        new_args, env, label = apply(args, [ch.edit() for ch in c.changes])
        variants.append(Variant(new_args, env, label=label))
    for c, (result, analysis, failure) in zip(candidates, rounds.resolve(variants, "%d candidate changes" % len(variants))):
        tried[c.changes] = (c, analysis, failure)
        if result.status == "alone":
            rounds.alone = result.why


def _follow_ups(problem, analysis, actions, args, single):
    """What a single change's own re-resolution suggests next for the same problem (for an
    error: the error it ran into now)."""
    new_args, _, _ = apply(args, [ch.edit() for ch in single.changes])
    if problem["kind"] == "error":
        if not analysis.get("error"):
            return []
        problem = fixes.problems(analysis)[0]
    return fixes.candidates(problem, analysis, actions, new_args)


def _solves(problem, analysis):
    return analysis is not None and fixes.solved(problem, analysis)


def check_want_syntax(wants):
    for spec in wants:
        name, sep, _ = spec.partition("=")
        if not sep or not name.strip():
            raise FlagtraceError("--want takes FIELD=VALUE, e.g. --want page_size=64; got %r" % spec, ExitCode.USAGE)


def _check_wants(wants, analysis):
    names = [f["field"] for f in analysis.get("fields", [])]
    for spec in wants:
        name = spec.partition("=")[0]
        if name.strip() not in names:
            close = difflib.get_close_matches(name.strip(), names, n=5, cutoff=0.5)
            raise FlagtraceError("%s is not a field of this command's config; closest: %s"
                                 % (name.strip(), ", ".join(close) or "(none)"), ExitCode.USAGE)


def _actions(trace):
    """The target's argparse options ({dest, options, switch?, const?, choices?}), last parse winning."""
    by_dest = {}
    for parse in (trace or {}).get("parses", []):
        for action in parse.get("actions", []):
            by_dest[action["dest"]] = action
    return list(by_dest.values())


def _document(plan, gpu, original, problems, tried, unstable):
    fixes_found = []
    for candidate, analysis, failure in tried.values():
        if analysis is None:
            continue
        solves = [i for i, p in enumerate(problems) if fixes.solved(p, analysis)]
        if not solves:
            continue
        args, env, _ = apply(list(plan.target.args), [ch.edit() for ch in candidate.changes])
        wanted = {problems[i].get("field") for i in solves}
        effects = fixes.side_effects(original, analysis, exclude=wanted | unstable)
        fixes_found.append({
            "changes": [ch.text() for ch in candidate.changes],
            "verified": True,
            "outcome": "resolves" if analysis.get("status") != "error" else error_line(analysis["error"]),
            "solves": solves,
            "reason": candidate.reason,
            "command": edited_command(plan.target, args),
            "env": {k: v for k, v in env.items()},
            "side_effects": effects,
        })
    verified = len(fixes_found)
    fixes_found = fixes.closest_only(fixes_found, plan.target.args)
    fixes_found.sort(key=lambda f: (len(f["changes"]), len(f["side_effects"])))
    return {
        "schema": SCHEMA,
        "command": list(plan.target.command),
        "gpu": gpu,
        "status": original.get("status"),
        "problems": [dict(p, fixes=[i for i, f in enumerate(fixes_found) if n in f["solves"]],
                          read=fixes.reads_named(p, original))
                     for n, p in enumerate(problems)],
        "candidates_tried": len(tried),
        "verified": verified,
        "failures": [{"changes": [ch.text() for ch in c.changes], "why": why}
                     for c, a, why in tried.values() if a is None],
        "unstable": sorted(unstable),
        "fixes": fixes_found,
    }


def add_fixes(opts, asked, command, analysis, err):
    """``explain --fix``: the best verified fix of the error and of each overridden field."""
    if opts.from_trace or opts.via or opts.gpu_profile:
        raise FlagtraceError("--fix resolves the command again: it needs the command itself, here, with "
                             "--gpu (not --from, --via or --gpu-profile)", ExitCode.USAGE)
    if not analysis.get("error") and not analysis["summary"]["overridden"]:
        return
    doc = find(planning.plan(command, asked, "explain --fix"), opts.gpu, (), opts.timeout, 60, err)
    fields = {f["field"]: f for f in analysis["fields"]}
    for problem in doc["problems"]:
        best = doc["fixes"][problem["fixes"][0]] if problem["fixes"] else None
        entry = ({"changes": best["changes"], "outcome": best["outcome"], "side_effects": best["side_effects"]}
                 if best else {"changes": None, "tried": doc["candidates_tried"], "read": problem["read"]})
        if problem["kind"] == "error":
            analysis["error"]["fix"] = entry
        elif problem.get("field") in fields:
            fields[problem["field"]]["fix"] = entry
