"""Real public launch commands (bench/corpus/*.toml, a source per entry) through flagtrace explain,
as a new user would paste them: one line per command and the totals per outcome.

Outcomes: resolved (exit 0); framework error explained (exit 2: the framework's own error, or its
parser refusing an option the release lacks); simulation gap (exit 3 naming what the simulation does not
provide: a device type, a module the release's environment lacks, ...); gap shown as the framework's error
(exit 2 whose error names such a thing: a defect, the goal is 0); input (exit 64: the command needs something
this machine cannot have, e.g. a placeholder like $MODEL or a model nothing here knows; or exit 2 where the
resolution loads the model's tokenizer, which a stand-in config.json does not have); stop point not reached
(exit 4); tool failure (anything else: exit 70, a traceback, a timeout). Then every hardware or OS query the
simulation left to this machine, with how many commands made it.

    .venv/bin/python bench/corpus.py                       # SGLang 0.5.23, vLLM 0.34.0, Dynamo 1.6.1
    .venv/bin/python bench/corpus.py --sglang 0.5.11 --only sglang --json out.json
    .venv/bin/python bench/corpus.py --added 2026-12-07    # only the entries added that day
"""
import argparse
import concurrent.futures
import json
import os
import re
import shlex
import subprocess
import sys
import time

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.path.join(ROOT, "bench", "corpus")
FLAGTRACE = [os.path.join(ROOT, ".venv", "bin", "python"), "-m", "flagtrace"]
DEFAULT_GPU = "H100x8"
GAP = re.compile(r"not simulated|infiniband|/sys/class|ib[_ ]device|\bnpu\b|ascend|rdma|mooncake|nvidia-smi|numa", re.I)
STAND_IN = re.compile(r"flagtrace bundles config\.json only")
OUTCOMES = ("resolved", "framework error explained", "simulation gap", "gap shown as the framework's error",
            "input", "stop point not reached", "tool failure")
FRAMEWORKS = ("sglang", "vllm", "dynamo")
PLACEHOLDER = re.compile(r"(value:?|choice:|arguments:) '?(\$\{?\w+|<[\w.-]+>)|Value [^\n]*?(\$\{|<\w)")
TRACEBACK = re.compile(r"Traceback \(most recent call last\)")


def load(framework):
    with open(os.path.join(CORPUS, framework + ".toml"), "rb") as fh:
        return tomllib.load(fh)["command"]


def known_gpus():
    out = subprocess.run(FLAGTRACE + ["gpus"], capture_output=True, text=True, cwd=ROOT).stdout
    names = set()
    for line in out.splitlines()[1:]:
        names.update(w.strip(",").lower() for w in line.split())  # the name and its aliases
    return names


def gpu_for(entry, known):
    gpu = entry.get("gpu") or DEFAULT_GPU
    name, _, count = gpu.rpartition("x")
    if not name or not count.isdigit():
        name, count = gpu, "8"
    return (gpu, None) if name.lower() in known else ("%sx%s" % (DEFAULT_GPU.split("x")[0], count),
                                                     "%s not simulated: %s used" % (gpu, DEFAULT_GPU.split("x")[0]))


def argv_for(entry, framework, release):
    """The published command as this machine runs it: its interpreter or console script replaced
    by the release's (a Dynamo worker: flagtrace's --release does it); leading VAR=value words become the
    environment; a trailing & dropped."""
    words = shlex.split(entry["command"])
    env = {}
    while words and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", words[0]):
        key, _, value = words.pop(0).partition("=")
        env[key] = value
    if words and words[-1] == "&":
        words.pop()
    if framework == "dynamo":
        return words, env
    bindir = os.path.join(ROOT, ".envs", framework, release, "bin")
    head = os.path.basename(words[0]) if words else ""
    if head.startswith("python"):
        words[0] = os.path.join(bindir, "python")
    elif head in ("sglang", "vllm"):
        words[0] = os.path.join(bindir, head)
        overlay = os.path.join(ROOT, ".envs", framework, "overlays", release)
        if not os.path.exists(words[0]) and os.path.exists(os.path.join(overlay, "bin", head)):
            words[0] = os.path.join(overlay, "bin", head)  # an overlay's console script, on its path
            env["PYTHONPATH"] = overlay
    return words, env


def classify(rc, doc, err):
    text = err + json.dumps((doc or {}).get("error") or {})
    if TRACEBACK.search(err) and not (doc or {}).get("error") and rc not in (0, 2, 3, 64):
        return "tool failure"  # flagtrace's own traceback
    if rc == 0:
        return "resolved"
    if rc == 3 and ((doc or {}).get("simulation_gap") or "SIMULATION GAP" in err or GAP.search(text)
                    or "not installed where the command ran" in text):
        return "simulation gap"
    if STAND_IN.search(text) and rc == 2:
        return "input"  # the model's own files beyond config.json (its tokenizer) are needed
    if rc == 2 and PLACEHOLDER.search(text) and "refused the command line" in err:
        return "input"  # the published text's placeholder (<port>, ${VAR}) handed to the parser as typed
    if rc == 2 and GAP.search(text):
        return "gap shown as the framework's error"
    if rc == 2:
        return "framework error explained"
    if rc == 64:
        return "input"
    if rc == 4:
        return "stop point not reached"
    return "tool failure"


def run_one(entry, framework, release, known, timeout):
    argv, env = argv_for(entry, framework, release)
    gpu, gpu_note = gpu_for(entry, known)
    full = dict(os.environ, **env)
    started = time.monotonic()
    release_opt = ["--release", "ai-dynamo==" + release] if framework == "dynamo" else []
    try:
        proc = subprocess.run(FLAGTRACE + ["explain", "--format", "json", "--gpu", gpu, "--timeout", str(timeout)]
                              + release_opt + ["--", *argv], capture_output=True, text=True, cwd=ROOT, env=full,
                              timeout=timeout + 60)
        rc, out, err = proc.returncode, proc.stdout, proc.stderr
    except subprocess.TimeoutExpired:
        rc, out, err = 124, "", "timed out"
    try:
        doc = json.loads(out) if out.strip() else None
    except ValueError:
        doc = None
    line = next((l for l in err.splitlines() if l.startswith("flagtrace: ") and "note:" not in l), "")
    return {"id": entry["id"], "framework": framework, "release": release, "gpu": gpu, "gpu_note": gpu_note,
            "rc": rc, "outcome": classify(rc, doc, err), "seconds": round(time.monotonic() - started, 1),
            "error": ((doc or {}).get("error") or {}).get("message", "")[:300],
            "line": line[len("flagtrace: "):][:200], "source": entry["source"],
            "inputs": (doc or {}).get("inputs", []),
            "unanswered": ["%s at %s:%s" % (u["query"], os.path.basename(u["file"] or "?"), u["line"])
                           for u in (doc or {}).get("unanswered", [])]}


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sglang", default="0.5.23", help="SGLang release (.envs/sglang/V)")
    p.add_argument("--vllm", default="0.34.0", help="vLLM release (.envs/vllm/V)")
    p.add_argument("--dynamo", default="1.6.1", help="ai-dynamo release (flagtrace --release ai-dynamo==V)")
    p.add_argument("--only", choices=FRAMEWORKS)
    p.add_argument("--added", metavar="DATE", help="only the entries whose `added` is DATE")
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--timeout", type=float, default=240)
    p.add_argument("--json", metavar="FILE")
    opts = p.parse_args()
    known = known_gpus()
    work = [(e, fw, getattr(opts, fw)) for fw in FRAMEWORKS if opts.only in (None, fw) for e in load(fw)
            if opts.added in (None, e.get("added"))]
    results = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=opts.jobs) as pool:
        futures = [pool.submit(run_one, e, fw, rel, known, opts.timeout) for e, fw, rel in work]
        for future in futures:
            r = future.result()
            results.append(r)
            print("%-26s %-55s rc=%-3s %5.1fs  %s" % (r["outcome"], r["id"][:55], r["rc"], r["seconds"],
                                                     r["line"] or r["error"] or "; ".join(r["inputs"])), flush=True)
    print()
    for fw in FRAMEWORKS:
        mine = [r for r in results if r["framework"] == fw]
        if not mine:
            continue
        counts = {o: sum(1 for r in mine if r["outcome"] == o) for o in OUTCOMES}
        print("%s %s: %d commands · %s" % (fw, getattr(opts, fw), len(mine),
                                          " · ".join("%s %d (%.0f%%)" % (o, n, 100.0 * n / len(mine))
                                                     for o, n in counts.items())))
    asked = {}
    for r in results:
        for query in r["unanswered"]:
            asked.setdefault(query, []).append(r["id"])
    if asked:
        print("\nasked of this machine, not simulated (commands):")
        for query, ids in sorted(asked.items(), key=lambda kv: -len(kv[1])):
            print("  %3d  %s" % (len(ids), query))
    if opts.json:
        with open(opts.json, "w", encoding="utf-8") as fh:
            json.dump(results, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
