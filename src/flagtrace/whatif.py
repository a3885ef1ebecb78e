"""What diff and matrix share: the command's target and adapter, resolved once; a group of variants
per GPU profile (one import of the framework each, a fork per variant: launch/variants.py), each
analysed as ``explain`` would; and the edits that make a variant's command line."""
import ast
import concurrent.futures
import dataclasses
import json
import os
import shlex

from . import gpus, modelconfigs
from . import trace as tracefile
from .cachefiles import write_whole
from .modelconfigs import add_model_options
from .envcmd import add_release_option
from .deploycmd import add_file_options
from .adapters import annotate, choose_adapter
from .analysis import verdict
from .analysis.explain import analyse
from .exitcodes import ExitCode, FlagtraceError
from .launch.command import Target, is_python_name, parse_command
from .launch.local import stderr_tail
from .launch.variants import VariantSession, imports_cache


def add_arguments(p, unit, verb):
    """The options diff, matrix and fix share (``unit``: what one resolution is called)."""
    from .report import formats

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


@dataclasses.dataclass
class Plan:
    target: Target
    request: dict
    env: object  # the target's environment (None: this process's)
    preimport: tuple
    adapter: object


def plan(command, asked, example):
    """The command resolved here (``asked``: launch.asked.Asked; a --via is another side's)."""
    if not command:
        raise FlagtraceError("nothing to run: put the launch command after --, e.g. flagtrace %s -- "
                             "python -m sglang.launch_server --model-path DIR" % example, ExitCode.USAGE)
    asked = asked.here()
    target = parse_command(command)
    adapter = choose_adapter(target, asked)
    target, models = adapter.prepare(target, asked)
    request = modelconfigs.into_request(adapter.request(target, asked), models)
    return Plan(target, request, adapter.environment(target, asked),
                tuple(getattr(adapter, "preimport", ())), adapter)


def resolve(groups, timeout, err, noun, again=None, tolerant=False):
    """[(plan, gpu or None, [Variant])] -> [(VariantResult, analysis)], in order.

    Groups of one plan under simulated GPUs share one import: the variants of the other GPUs
    are forked with their profile, where nothing the simulation answered at import differs
    (probe/variants.py); those that cannot share run in an import of their own. Children run as
    many at once as there are cores. ``again(plan, result, analysis)`` may return a Variant to
    resolve instead, in the same import (a flag translated). ``tolerant``: a variant flagtrace cannot explain
    (refused, timed out, no trace) is ``{"status": "refused", "message": ...}`` instead of ending all."""
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
        with VariantSession(plan.target, gpu_request(plan, gpu), timeout, env=plan.env, preimport=plan.preimport,
                            expected=2 * len(variants), parallel=parallel) as session:
            results = session.run(variants, lambda count, _total: progress(key, count))
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


def side_command(command, python):
    """``command`` run by interpreter ``python``: a Python command line gets that interpreter; a
    console script (``sglang serve``) the script of the same name beside it."""
    if not command:
        return command
    if is_python_name(command[0]) or os.path.basename(command[0]).startswith("python"):
        return [python] + list(command[1:])
    script = os.path.join(os.path.dirname(python), os.path.basename(command[0]))
    if not os.path.exists(script):
        raise FlagtraceError("%s is a console script and %s has none beside it; write the command as "
                             "python -m MODULE ... to compare interpreters" % (command[0], python), ExitCode.USAGE)
    return [script] + list(command[1:])


def one_framework(plans):
    names = [p.adapter.name for p in plans]
    if len(set(names)) > 1:
        raise FlagtraceError("the interpreters run different frameworks (%s): nothing to compare field by field"
                             % " vs ".join(names), ExitCode.USAGE)


def translating(notes):
    """An ``again`` for resolve(): a variant whose release refused an option another release
    spells differently is resolved again, translated by its adapter; ``notes[label]`` says how."""
    def again(plan, result, analysis):
        error = analysis.get("error") or {}
        if error.get("kind") != "argparse":
            return None
        version = (analysis.get("adapter") or {}).get("version")
        args, translated = plan.adapter.translate(result.variant.args, version)
        if not translated:
            return None
        notes[result.variant.label] = translated
        return dataclasses.replace(result.variant, args=args)

    return again


def gpu_request(plan, gpu):
    """The plan's request, simulating ``gpu`` (None: the real hardware)."""
    request = dict(plan.request)
    if gpu is not None:
        request["gpu"] = gpus.choose(gpu)
        request["setup"] = ["sim.gpu"] + list(request.get("setup", []))
    return request


def edited_command(target, args):
    """The command as typed, with the target's arguments replaced by ``args``."""
    head = target.command[:len(target.command) - len(target.args)] if target.args else list(target.command)
    return list(head) + list(args)


def _analysis(result, tolerant):
    try:
        return analysis(result)
    except FlagtraceError as exc:
        if not tolerant:
            raise
        return {"status": "refused", "message": exc.message}


def analysis(result):
    label = result.variant.label
    if result.status == "timeout":
        raise FlagtraceError("%s did not finish within %gs (--timeout); it and its children were killed"
                             % (label, result.seconds))
    if result.trace is None:
        raise FlagtraceError("%s ended before flagtrace could record anything (exit status %s)"
                             % (label, result.returncode), detail=stderr_tail(result.output))
    trace = tracefile.check(result.trace)
    refused = verdict.refusal(trace)
    if refused:
        raise FlagtraceError(refused)
    return annotate(analyse(trace))


def environments(results, env):
    """Per variant, the environment as the target saw it: each variable it read (the value at its
    first read; None: unset), and the launch value of every variable some variant changed."""
    launch = os.environ if env is None else env
    keys = {k for r in results for k in r.variant.env}
    out = []
    for r in results:
        seen = {}
        for event in (r.trace or {}).get("events", []):
            if event.get("kind") == "envread" and event["key"] not in seen:
                seen[event["key"]] = _unrepr(event.get("value"))
        seen.update({k: r.variant.env[k] if k in r.variant.env else launch.get(k) for k in keys})
        out.append(seen)
    return out


def _unrepr(text):
    """A value the trace keeps as its repr ("'4'"), as the value itself."""
    try:
        return ast.literal_eval(text) if text is not None else None
    except (ValueError, SyntaxError):
        return text


def hardware(trace):
    """Each hardware question the target asked, with its first answer."""
    out = {}
    for event in trace.get("events", []):
        if event.get("kind") == "hw":
            out.setdefault(event["query"], event["result"])
    return out





# -- a variant's command line ------------------------------------------------------------------
def edits(sets=(), unsets=(), envs=()):
    """``--set "--flag v"``, ``--unset --flag``, ``--env K=V`` as [(kind, words)]; usage errors here."""
    out = []
    for text in sets:
        words = shlex.split(text)
        if not words or not words[0].startswith("-"):
            raise FlagtraceError("--set takes an option and its value, e.g. --set \"--page-size 64\"; got %r"
                                 % text, ExitCode.USAGE)
        out.append(("set", words))
    for flag in unsets:
        if not flag.startswith("-"):
            raise FlagtraceError("--unset takes an option name, e.g. --unset --page-size; got %r" % flag,
                                 ExitCode.USAGE)
        out.append(("unset", [flag]))
    for item in envs:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise FlagtraceError("--env takes KEY=VALUE (KEY= to remove it); got %r" % item, ExitCode.USAGE)
        out.append(("env", [key, value]))
    return out


def apply(args, changes):
    """(args, env changes, label) of the command with ``changes`` (from edits()) applied: a set
    option replaces the one typed, an unset one goes back to its default."""
    env, label = {}, []
    for kind, words in changes:
        if kind == "env":
            key, value = words
            env[key] = value or None
            label.append("%s=%s" % (key, value) if value else "without $%s" % key)
            continue
        if kind == "rename":  # an option the parser refused, spelled as it suggested
            old, new = words
            args = [new + w[len(old):] if w == old or w.startswith(old + "=") else w for w in args]
            label.append("%s instead of %s" % (new, old))
            continue
        args = without(args, words[0].split("=", 1)[0])
        if kind == "set":
            args = args + words
            label.append(" ".join(words))
        else:
            label.append("without %s" % words[0])
    return args, env, "with " + ", ".join(label) if label else "as typed"


def without(args, flag):
    """``args`` without ``flag`` (``--flag v``, ``--flag=v``, or a bare switch)."""
    out, skip = [], False
    for i, word in enumerate(args):
        if skip:
            skip = False
            continue
        if word == flag:
            nxt = args[i + 1] if i + 1 < len(args) else None
            skip = nxt is not None and not nxt.startswith("-")
            continue
        if word.startswith(flag + "="):
            continue
        out.append(word)
    return out
