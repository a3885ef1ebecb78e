"""Regenerate the sample outputs of the docs from real runs.

A sample block in a docs page (or the README) is marked::

    <!-- sample: NAME -->
    ```text
    $ flagtrace ...          (the command as a user types it: SAMPLES[NAME].shown)
    ... its output ...
    ```
    <!-- /sample -->

``python scripts/samples.py NAME...`` runs each named sample's command from the repository root (``flagtrace``
is this checkout's ``.venv/bin/flagtrace``; SGLang and vLLM commands name the releases ``make test`` builds under
``.envs/``), trims the output as the sample says, replaces machine paths (this checkout becomes a relative
path, the home folder ``~``) and rewrites every block marked with that name. Without names it lists the
samples and where they are used; ``--all`` runs every one (each SGLang or vLLM run imports torch: 10-20 s).
Run them one at a time: the timings some samples show are the machine's.

``--check`` runs them and rewrites nothing: it prints where a page's block differs from what its command
prints today (pids and timings aside) and exits 1 (tests/test_samples_drift.py, tests/frameworks/test_samples_drift_frameworks.py).
tests/test_readme.py checks that every marked block names a sample listed here and opens with its command.
"""
import argparse
import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PAGES = ["README.md", "docs"]
OPEN = re.compile(r"^<!-- sample: ([A-Za-z0-9_.-]+) -->$")
CLOSE = "<!-- /sample -->"
SEED = ("--model-path models/qwen3.6-27b --speculative-algorithm EAGLE --speculative-num-steps 3 "
        "--speculative-eagle-topk 1 --speculative-num-draft-tokens 4 --max-mamba-cache-size 24 "
        "--mem-fraction-static 0.92 --context-length 8192 --trust-remote-code")


@dataclass
class Sample:
    shown: str                      # the command line as the page shows it after "$ " (may continue with "\")
    args: Optional[List[str]] = None  # what runs, when ``shown`` abbreviates it (default: ``shown`` split)
    env: Dict[str, str] = field(default_factory=dict)
    needs: Optional[str] = None     # a path under the checkout the command needs (a built release)
    start: Optional[str] = None     # the output shown starts at the first line matching this (after "...")
    head: Optional[int] = None      # at most this many lines of output, then "…"
    cut: List[Tuple[str, Optional[str]]] = field(default_factory=list)  # (from, to): the lines from a match
    #                                 of ``from`` up to (not including) the next match of ``to`` (to the end
    #                                 where ``to`` is None) become one "  …" ("…" at the end)
    #                                 (a section's closing blank line is kept)

    def argv(self):
        words = self.args if self.args is not None else shlex.split(self.shown.replace("\\\n", " "))
        env = dict(self.env)
        while words and re.match(r"^[A-Z_][A-Z0-9_]*=", words[0]):
            key, value = words[0].split("=", 1)
            env[key] = value
            words = words[1:]
        if words and words[0] == "flagtrace":
            words = [os.path.join(ROOT, ".venv", "bin", "flagtrace")] + words[1:]
        return words, env


SAMPLES = {
    "gpus": Sample("flagtrace gpus"),
    "explain-generic": Sample(
        "flagtrace explain --watch serve_config:ServeConfig --stop-at serve_config:start -- \\\n"
        "      python tests/examples/serve_config.py --model hybrid-7b --page-size 64 --speculative-algo EAGLE \\\n"
        "      --cache-strategy extra_buffer"),
    "explain-seed": Sample(
        "flagtrace explain --gpu B200x7 -- .envs/sglang/0.5.11/bin/python -m sglang.launch_server \\\n"
        "      --model-path models/qwen3.6-27b --speculative-algorithm EAGLE --speculative-num-steps 3 \\\n"
        "      --speculative-eagle-topk 1 --speculative-num-draft-tokens 4 --max-mamba-cache-size 24 \\\n"
        "      --mem-fraction-static 0.92 --context-length 8192 --trust-remote-code",
        needs=".envs/sglang/0.5.11", cut=[(r"^  chunked_prefill_size", r"^HONOURED"), (r"^ENVIRONMENT", None)]),
    "readme-seed": Sample(
        "flagtrace explain --gpu B200x7 --release sglang==0.5.11 -- python3 -m sglang.launch_server \\\n"
        "      --model-path Qwen/Qwen3.6-27B --speculative-algorithm EAGLE ... --trust-remote-code",
        args=["flagtrace", "explain", "--gpu", "B200x7", "--release", "sglang==0.5.11", "--", "python3", "-m",
              "sglang.launch_server"] + SEED.replace("models/qwen3.6-27b", "Qwen/Qwen3.6-27B").split(),
        needs=".envs/sglang/0.5.11", start=r"^Resolution failed",
        cut=[(r"^    raise ValueError", r"^  reads"), (r"^  asked", None)]),
    "why-max-running-requests": Sample(
        "SGLANG_ENABLE_SPEC_V2=1 flagtrace why max_running_requests --gpu B200x7 -- \\\n"
        "      .envs/sglang/0.5.11/bin/python -m sglang.launch_server ... --mamba-scheduler-strategy extra_buffer",
        args=["flagtrace", "why", "max_running_requests", "--gpu", "B200x7", "--",
              ".envs/sglang/0.5.11/bin/python", "-m", "sglang.launch_server"] + SEED.split()
        + ["--mamba-scheduler-strategy", "extra_buffer"],
        env={"SGLANG_ENABLE_SPEC_V2": "1"}, needs=".envs/sglang/0.5.11"),
    "check-expect": Sample(
        "flagtrace check --gpu H100 --expect attention_backend=fa3 --expect page_size=64 --strict -- \\\n"
        "      .envs/sglang/0.5.11/bin/python -m sglang.launch_server --model-path models/llama-3-8b --page-size 64",
        needs=".envs/sglang/0.5.11", cut=[(r"^DECIDED", r"^HONOURED"), (r"^ENVIRONMENT", r"^PASS")]),
    "diff-env": Sample(
        "flagtrace diff --env APP_WORKERS=4 --watch env_config:WorkerConfig -- "
        "python3 tests/examples/env_config.py --sparse"),
    "matrix-qwen": Sample(
        "flagtrace matrix --gpu H100-80Gx8 --gpu B200x7 --flags \"\" --flags \"--page-size 64\" "
        "--flags \"--attention-backend triton\" --fields "
        "page_size,attention_backend,mamba_radix_cache_strategy,chunked_prefill_size -- "
        ".envs/sglang/0.5.23/bin/python -m sglang.launch_server --model-path models/qwen3.6-27b --trust-remote-code",
        needs=".envs/sglang/0.5.23"),
    "run-broken-continuation": Sample(
        "PYTHON=.venv/bin/python flagtrace run --watch serve_config:ServeConfig --stop-at serve_config:start -- \\\n"
        "      bash tests/scripts/broken_continuation.sh"),
}


def sanitize(text):
    """Machine paths out: this checkout becomes relative, the home folder ``~``."""
    home = os.path.expanduser("~")
    text = text.replace(ROOT + "/", "").replace(ROOT, ".")
    if home not in ("", "/"):
        text = text.replace(home + "/", "~/").replace(home, "~")
    return text


def trim(sample, lines):
    for start, stop in sample.cut:
        out, i = [], 0
        while i < len(lines):
            if re.search(start, lines[i]):
                j = i + 1
                while j < len(lines) and (stop is None or not re.search(stop, lines[j])):
                    j += 1
                if j == len(lines):
                    out.append("…")
                else:  # a blank line that ended the cut section stays
                    out += ["  …"] + ([""] if not lines[j - 1].strip() else [])
                i = j
                continue
            out.append(lines[i])
            i += 1
        lines = out
    if sample.start:
        at = next((i for i, l in enumerate(lines) if re.search(sample.start, l)), 0)
        lines = (["..."] if at else []) + lines[at:]
    if sample.head and len(lines) > sample.head:
        lines = lines[:sample.head] + ["…"]
    return lines


def run(name):
    sample = SAMPLES[name]
    if sample.needs and not os.path.exists(os.path.join(ROOT, sample.needs)):
        raise SystemExit("samples: %s needs %s (make sglang-env / make vllm-env builds it)" % (name, sample.needs))
    argv, env = sample.argv()
    # This machine's variables that reports show (HF_*, CUDA_VISIBLE_DEVICES, SGLANG_*, ...) stay out: a sample
    # shows what its own line sets.
    from flagtrace.core.frameworks import env_patterns
    from flagtrace.probe.common.recorded import env_matcher, is_relevant

    matcher = env_matcher(env_patterns())
    environ = {k: v for k, v in os.environ.items() if not is_relevant(k, matcher)}
    environ.update(FLAGTRACE_ENVS=os.environ.get("FLAGTRACE_ENVS", os.path.join(ROOT, ".envs")), **env)
    proc = subprocess.run(argv, cwd=ROOT, env=environ, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True, timeout=900)
    lines = [l.rstrip() for l in sanitize(proc.stdout).rstrip("\n").split("\n")]
    body = "$ " + sample.shown + "\n" + "\n".join(trim(sample, lines))
    return body, proc.returncode


# What differs from one run to the next: process ids, durations, and the rules whose width follows them.
VOLATILE = re.compile(r"(?<=\bpid )\d+|(?<=\bppid )\d+|\b\d+(?:\.\d+)? ?(?:ms|s|min)\b|─{2,}")


def drift(name, body):
    """[(page, first differing line of the page's block, today's line)] where a page's block of
    ``name`` is not ``body`` (VOLATILE masked)."""
    def masked(lines):
        return [VOLATILE.sub("#", l).rstrip() for l in lines]

    today = body.split("\n")
    out = []
    for path in pages():
        for block, first, _, shown in blocks(open(path, encoding="utf-8").read()):
            a, b = masked(shown), masked(today)
            if block != name or a == b:
                continue
            i = next((i for i in range(min(len(a), len(b))) if a[i] != b[i]), min(len(a), len(b)))
            out.append(("%s:%d" % (os.path.relpath(path, ROOT), first + 3 + i),
                        shown[i] if i < len(shown) else "(the block ends)",
                        today[i] if i < len(today) else "(the output ends)"))
    return out


def pages():
    for top in PAGES:
        path = os.path.join(ROOT, top)
        if os.path.isfile(path):
            yield path
        for folder, _, files in sorted(os.walk(path)) if os.path.isdir(path) else []:
            for f in sorted(files):
                if f.endswith(".md"):
                    yield os.path.join(folder, f)


def blocks(text):
    """[(name, first line index, last line index, body lines)] of the marked blocks; ValueError when a marker
    is malformed (no closing marker, a block that is not one ```text fence)."""
    lines, out, i = text.split("\n"), [], 0
    while i < len(lines):
        m = OPEN.match(lines[i].strip())
        if not m:
            if lines[i].strip().startswith("<!-- sample") or lines[i].strip() == CLOSE:
                raise ValueError("line %d: a sample marker out of place: %s" % (i + 1, lines[i]))
            i += 1
            continue
        try:
            end = next(j for j in range(i + 1, len(lines)) if lines[j].strip() == CLOSE)
        except StopIteration:
            raise ValueError("line %d: sample %s has no %s" % (i + 1, m.group(1), CLOSE))
        inner = lines[i + 1:end]
        if len(inner) < 3 or inner[0] != "```text" or inner[-1] != "```" or "```" in inner[1:-1]:
            raise ValueError("line %d: sample %s must hold one ```text block and nothing else" % (i + 1, m.group(1)))
        out.append((m.group(1), i, end, inner[1:-1]))
        i = end + 1
    return out


def shown_command(body):
    """The command a block shows: its first line after "$ ", with its "\\" continuations."""
    if not body or not body[0].startswith("$ "):
        return None
    cmd, i = [body[0][2:]], 0
    while cmd[-1].endswith("\\") and i + 1 < len(body):
        i += 1
        cmd.append(body[i])
    return "\n".join(cmd)


def rewrite(name, body):
    changed = []
    for path in pages():
        text = open(path, encoding="utf-8").read()
        found = [b for b in blocks(text) if b[0] == name]
        if not found:
            continue
        lines = text.split("\n")
        for _, first, last, _ in reversed(found):
            lines[first + 1:last] = ["```text"] + body.split("\n") + ["```"]
        with open(path, "w", encoding="utf-8") as fh:
            fh.write("\n".join(lines))
        changed.append(os.path.relpath(path, ROOT))
    return changed


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("names", nargs="*", help="the samples to regenerate")
    p.add_argument("--all", action="store_true", help="regenerate every sample")
    p.add_argument("--check", action="store_true", help="rewrite nothing; exit 1 where a page differs from today's run")
    opts = p.parse_args(argv)
    names = list(SAMPLES) if opts.all else opts.names
    unknown = [n for n in names if n not in SAMPLES]
    if unknown:
        p.error("unknown sample(s) %s; known: %s" % (", ".join(unknown), ", ".join(SAMPLES)))
    if not names:
        used = {}
        for path in pages():
            for name, *_ in blocks(open(path, encoding="utf-8").read()):
                used.setdefault(name, []).append(os.path.relpath(path, ROOT))
        for name in SAMPLES:
            print("%-26s %s" % (name, ", ".join(used.get(name, ["(not used)"]))))
        return 0
    drifted = 0
    for name in names:
        body, code = run(name)
        if opts.check:
            for where, shown, today in drift(name, body):
                drifted += 1
                print("samples: %s drifted at %s\n  page:  %s\n  today: %s" % (name, where, shown, today))
            continue
        where = rewrite(name, body)
        print("samples: %s (exit %d) -> %s" % (name, code, ", ".join(where) or "no page marks it"))
    return 1 if drifted else 0


if __name__ == "__main__":
    sys.exit(main())
