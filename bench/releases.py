"""Release sweep: run a fixed set of launch commands on every SGLang release and tabulate.

For each release: build its overlay with flagtrace's own release builder (`flagtrace env build
sglang==V`, as --release does: it writes a pin file from the release's METADATA when none is shipped), then run
`flagtrace explain --format json` for 4 models x 2 simulated GPUs and print, per release: how many
commands resolved, how many ended in SGLang's own (explained) error, the median decided and
overridden counts, the stand-ins and compatibility shims used, and any refusal or tool failure.
It is the tool to run on the day a new SGLang release appears.

    .venv/bin/python bench/releases.py                      # the releases in env/sglang/*.txt
    .venv/bin/python bench/releases.py 0.5.13 0.5.14        # these releases
    .venv/bin/python bench/releases.py --all                # every release 0.4.0 .. newest (pip index)
    .venv/bin/python bench/releases.py --markdown --json sweep.json
"""
import argparse
import concurrent.futures
import json
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
from flagtrace.adapters.sglang_pins import releases as pypi_releases, vkey  # noqa: E402
from flagtrace.core.pinlib import shipped  # noqa: E402
FLAGTRACE = [os.path.join(ROOT, ".venv", "bin", "flagtrace")]
MODELS = os.path.join(ROOT, "models")
COMMANDS = {
    "llama-3-8b": ["--model-path", os.path.join(MODELS, "llama-3-8b")],
    "deepseek-v3-fp8 tp8": ["--model-path", os.path.join(MODELS, "deepseek-v3-fp8"), "--tp", "8",
                            "--trust-remote-code"],
    "gpt-oss-20b": ["--model-path", os.path.join(MODELS, "gpt-oss-20b")],
    "qwen3-next tp4": ["--model-path", os.path.join(MODELS, "qwen3-next-80b-a3b"), "--tp", "4"],
}
GPUS = ["H100-80Gx8", "B200x8"]
FIRST = "0.4.0"


def all_releases():
    return pypi_releases(FIRST, "9999")


def pinned_releases():
    return shipped("sglang")


def build(version, log):
    envs = os.path.join(ROOT, ".envs")
    subprocess.run(FLAGTRACE + ["env", "build", "--root", envs, "sglang==" + version], check=True,
                   stdout=log, stderr=log)
    return os.path.join(envs, "sglang", version, "bin", "python")


def run_one(python, gpu, args, timeout):
    argv = FLAGTRACE + ["explain", "--gpu", gpu, "--format", "json", "--timeout", str(timeout), "--",
                        python, "-m", "sglang.launch_server"] + args
    started = time.perf_counter()
    proc = subprocess.run(argv, capture_output=True, text=True, cwd=ROOT)
    seconds = time.perf_counter() - started
    try:
        doc = json.loads(proc.stdout)
    except ValueError:
        doc = None
    return {"rc": proc.returncode, "doc": doc, "seconds": seconds,
            "stderr": (proc.stderr.strip().splitlines() or [""])[-1][:200]}


def classify(run):
    if run["rc"] in (0, 1):
        return "resolved"
    if run["rc"] == 2:
        return "framework error"
    if run["rc"] == 3 and run["stderr"].startswith("flagtrace:") and (
            "outside the releases" in run["stderr"] or "cannot run on a simulated GPU" in run["stderr"]):
        return "refused"
    return "tool failure"


def sweep_release(version, jobs, timeout, log):
    started = time.perf_counter()
    try:
        python = build(version, log)
    except subprocess.CalledProcessError as exc:
        return {"version": version, "build": "failed: %s" % exc, "runs": {}}
    built = time.perf_counter() - started
    cases = [(name, gpu) for name in COMMANDS for gpu in GPUS]
    with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
        futures = {case: pool.submit(run_one, python, case[1], COMMANDS[case[0]], timeout) for case in cases}
        runs = {"%s @ %s" % case: f.result() for case, f in futures.items()}
    return {"version": version, "build": "ok", "build_s": built, "runs": runs}


def summarise(result):
    runs = result["runs"].values()
    docs = [r["doc"] for r in runs if r["doc"]]
    kinds = [classify(r) for r in runs]
    counts = {k: kinds.count(k) for k in ("resolved", "framework error", "refused", "tool failure")}
    summaries = [d.get("summary") or {} for d in docs if d.get("status") == "resolved"]
    stand_ins, shims, mechanism = set(), set(), ""
    for d in docs:
        sim = d.get("simulation") or {}
        stand_ins.update(s.split(" ", 1)[0].split(".", 1)[0] for s in sim.get("stand_ins") or [])
        shims.update(s.split(" ", 1)[0] for s in sim.get("compat") or [])
        describe = (d.get("adapter") or {}).get("describe") or ""
        mechanism = mechanism or describe.partition(" (")[2][:-1]
    failures = sorted({"%s: %s" % (case, r["stderr"]) for case, r in result["runs"].items()
                       if classify(r) in ("refused", "tool failure")})
    errors = sorted({"%s: %s: %s" % (case, ((r["doc"] or {}).get("error") or {}).get("type", "?"),
                                      (((r["doc"] or {}).get("error") or {}).get("message") or "")[:100])
                     for case, r in result["runs"].items() if classify(r) == "framework error"})
    med = lambda key: statistics.median(s.get(key, 0) for s in summaries) if summaries else "-"  # noqa: E731
    return {"version": result["version"], "build": result["build"], "mechanism": mechanism, **counts,
            "decided": med("decided"), "overridden": med("overridden"), "stand_ins": sorted(stand_ins),
            "compat": sorted(shims), "errors": errors, "failures": failures,
            "seconds": round(max((r["seconds"] for r in runs), default=0), 1)}


def table(rows, markdown):
    head = ["release", "mechanism", "resolved", "SGLang error", "refused", "tool failure", "decided",
            "overridden", "stand-ins", "compat shims"]
    lines = []
    for row in rows:
        if row["build"] != "ok":
            lines.append([row["version"], row["build"]] + [""] * 8)
            continue
        lines.append([row["version"], row["mechanism"], row["resolved"], row["framework error"], row["refused"],
                      row["tool failure"], row["decided"], row["overridden"], ", ".join(row["stand_ins"]) or "-",
                      ", ".join(row["compat"]) or "-"])
    if markdown:
        out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        out += ["| " + " | ".join(str(c) for c in line) + " |" for line in lines]
        return "\n".join(out)
    widths = [max(len(str(x)) for x in col) for col in zip(head, *lines)]
    return "\n".join("  ".join(str(c).ljust(w) for c, w in zip(line, widths)) for line in [head] + lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("releases", nargs="*")
    ap.add_argument("--all", action="store_true", help="every release from 0.4.0 on (pip index)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=int, default=300, help="seconds per command")
    ap.add_argument("--json", help="write every run's summary here")
    ap.add_argument("--markdown", action="store_true")
    opts = ap.parse_args()
    releases = opts.releases or (all_releases() if opts.all else pinned_releases())
    os.makedirs(os.path.join(ROOT, ".envs", "sglang", "logs"), exist_ok=True)
    rows = []
    with open(os.path.join(ROOT, ".envs", "sglang", "logs", "releases-sweep.log"), "a") as log:
        for version in releases:
            result = sweep_release(version, opts.jobs, opts.timeout, log)
            row = summarise(result)
            rows.append(row)
            print("%-14s %s" % (version, {k: row[k] for k in ("build", "resolved", "framework error", "refused",
                                                              "tool failure")}), file=sys.stderr, flush=True)
            for failure in row["failures"] + row["errors"]:
                print("    " + failure, file=sys.stderr)
    print(table(rows, opts.markdown))
    print("\ncommands per release: %d (%s) x GPUs %s" % (len(COMMANDS) * len(GPUS), "; ".join(COMMANDS),
                                                       ", ".join(GPUS)))
    if opts.json:
        with open(opts.json, "w") as fh:
            json.dump(rows, fh, indent=1)


if __name__ == "__main__":
    main()
