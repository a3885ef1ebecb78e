"""Scheduling: groups of variants per GPU profile, one import of the framework each and a fork per
variant (launch/variants.py), as many children at once as there are cores; each result analysed
as ``explain`` would (results.py)."""
import concurrent.futures
import dataclasses
import json
import os

from ...core import gpus
from ...analysis import verdict
from ...core.cachefiles import write_whole
from ...core.exitcodes import FlagtraceError
from ...launch.variants import VariantResult, VariantSession, imports_cache
from .planning import gpu_request
from .results import _analysis, analysis


def resolve(groups, timeout, err, noun, again=None, tolerant=False):
    """[(plan, gpu or None, [Variant])] -> [(VariantResult, analysis)], in order.

    Groups of one plan under simulated GPUs share one import: the variants of the other GPUs
    are forked with their profile, where nothing the simulation answered at import differs
    (probe/variants.py); those that cannot share run in an import of their own. Children run as
    many at once as there are cores. ``again(plan, result, analysis)`` may return a Variant to
    resolve instead, in the same import (a flag translated). ``tolerant``: a variant flagtrace cannot explain
    (refused, timed out, no trace, an import that failed) is ``{"status": "refused", "message": ...}`` instead of
    ending all."""
    for _, gpu, _ in groups:  # an unknown profile is a usage error before anything starts
        if gpu is not None:
            gpus.choose(gpu)
    total = sum(len(v) for _, _, v in groups)
    done = {}
    cores = os.cpu_count() or 1

    def progress(key, count):
        done[key] = count
        if err.isatty():
            err.write("\r  flagtrace: %d of %d %s resolved" % (sum(done.values()), total, noun))
            err.flush()

    def run(key, plan, gpu, variants, parallel):
        try:
            return resolve_job(key, plan, gpu, variants, parallel)
        except FlagtraceError as exc:  # the import itself failed (no framework there, ...): every variant of it
            if not tolerant:
                raise
            last = [line.strip() for line in (exc.detail or "").splitlines() if line.strip()]
            message = exc.message + (": %s" % last[-1] if last else "")
            return [(VariantResult(v, "failed", None, 0.0, None, b"", why=message),
                     {"status": "refused", "message": message}) for v in variants]

    def resolve_job(key, plan, gpu, variants, parallel):
        with VariantSession(plan.target, gpu_request(plan, gpu), timeout, env=plan.env, preimport=plan.preimport,
                            expected=2 * len(variants), parallel=parallel) as session:
            try:
                results = session.run(variants, lambda count, _total: progress(key, count))
            except FlagtraceError as exc:
                raise _why_ended(session) or exc
            out = []
            for result in results:
                if result.status == "unshared":
                    out.append((result, None))
                    continue
                outcome = _analysis(result, tolerant)
                redo = again(plan, result, outcome) if again else None
                if redo is not None:
                    [result] = session.run([redo])
                    outcome = analysis(result)
                out.append((result, outcome))
            return out

    # One job per plan (its first GPU the import's), joined by the groups of other GPUs an earlier
    # run did not find apart from it; a plan without simulation: a job per group.
    apart = _Apart(groups)
    jobs, slots = [], []  # jobs: [plan, gpu, [Variant]]; slots: (job, position, gpu) per variant, in order
    for plan, gpu, variants in groups:
        found = [i for i, j in enumerate(jobs) if j[0] is plan and gpu is not None and j[1] is not None
                 and not apart.known(plan, j[1], gpu)]
        if not found:
            jobs.append([plan, gpu, []])
        job = found[0] if found else len(jobs) - 1
        for variant in variants:
            slots.append((job, len(jobs[job][2]), gpu))
            jobs[job][2].append(variant if gpu == jobs[job][1] else dataclasses.replace(variant, gpu=gpus.choose(gpu)))
    outcomes = _parallel([(run, (i, plan, gpu, variants, max(1, cores // len(jobs))))
                          for i, (plan, gpu, variants) in enumerate(jobs)])
    # variants whose GPU could not share an import: an import per GPU
    unshared = {}
    for job, position, gpu in slots:
        result = outcomes[job][position][0]
        if result.status == "unshared":
            unshared.setdefault(gpu, []).append((job, position))
            apart.learn(jobs[job][0], jobs[job][1], gpu, result.why)
    apart.save()
    keys = list(unshared)
    reruns = _parallel([(run, ("again-%s" % gpu, jobs[unshared[gpu][0][0]][0], gpu,
                               [dataclasses.replace(jobs[j][2][p], gpu=None) for j, p in unshared[gpu]],
                               max(1, cores // len(keys))))
                        for gpu in keys])
    for gpu, rerun in zip(keys, reruns):
        for (j, p), pair in zip(unshared[gpu], rerun):
            outcomes[j][p] = pair
    if err.isatty():
        err.write("\r\033[K")
    return [outcomes[job][position] for job, position, _ in slots]


def _why_ended(session):
    """Why the import every variant forks from ended, where its trace says (no framework for that
    interpreter, an unsupported release), as ``explain`` says it (verdict.gate); else None."""
    result = (session.outcome or (None, None))[0]
    stop = verdict.gate(result.trace, died=False) if result is not None and isinstance(result.trace, dict) else None
    return FlagtraceError(stop.message) if stop else None


class _Apart:
    """Pairs of GPU profiles one import could not stand for together (an import-time hardware
    read differs), remembered beside the imports cache (launch/variants.py) so that the next run
    starts them side by side at once instead of after the shared import found out. Only a
    schedule: the probe checks every pair itself."""

    def __init__(self, groups):
        self.pairs = {}  # cache file -> set of "A>B" (sorted)
        self.answers = {}  # (cache file, (base, question)) -> {gpu: its answer}, this run
        self.changed = set()
        for plan, _, _ in groups:
            path = self._path(plan)
            if path and path not in self.pairs:
                try:
                    with open(path, encoding="utf-8") as fh:
                        self.pairs[path] = set(json.load(fh))
                except (OSError, ValueError, TypeError):
                    self.pairs[path] = set()

    @staticmethod
    def _path(plan):
        cache = imports_cache(plan.target, plan.env)
        return cache + ".apart.json" if cache else None

    def known(self, plan, base, other):
        return "%s>%s" % tuple(sorted((base, other))) in self.pairs.get(self._path(plan), ())

    def learn(self, plan, base, other, why):
        """``other`` could not share ``base``'s import because of ``why`` ("Q was asked at import,
        in F (A here, B there)"): apart from ``base``, and from every GPU that got another answer
        to the same question in this run."""
        path = self._path(plan)
        if not path:
            return
        pairs = self.pairs.setdefault(path, set())
        pairs.add("%s>%s" % tuple(sorted((base, other))))
        question, _, answer = (why or "").partition(" there)")[0].rpartition(" here, ")
        key = (base, question.rpartition("(")[0] if question else why)
        for seen, there in self.answers.setdefault((path, key), {}).items():
            if there != answer:
                pairs.add("%s>%s" % tuple(sorted((seen, other))))
        self.answers[(path, key)][other] = answer
        self.changed.add(path)

    def save(self):
        for path in self.changed:
            write_whole(path, lambda fh: json.dump(sorted(self.pairs[path]), fh), quiet=True, make_folder=True)


def _parallel(calls):
    """[(function, args)] -> their results, in order; side by side, as many as there are cores."""
    if not calls:
        return []
    workers = max(1, min(len(calls), os.cpu_count() or 1))
    with concurrent.futures.ThreadPoolExecutor(max_workers=workers) as pool:
        futures = [pool.submit(fn, *args) for fn, args in calls]
        return [f.result() for f in futures]
