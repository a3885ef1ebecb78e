"""The table of docs/fidelity.md from bench/fidelity.py's --out files, one row per release, in release order.

    .venv/bin/python bench/fidelity_table.py /tmp/sweep/*.json
"""
import json
import sys

HEAD = ("| release | options | exercised | refused by the release (compared) | ignored by it | skipped | failing "
        "| combinations (failing) |\n|---|---|---|---|---|---|---|---|")
NAMES = {"sglang": "SGLang", "vllm": "vLLM"}


def _key(summary):
    name, _, version = summary["release"].partition("==")
    return name, [int(p) if p.isdigit() else p for p in version.replace(".post", ".").split(".")]


def main(paths):
    summaries = []
    for path in paths:
        with open(path, encoding="utf-8") as fh:
            doc = json.load(fh)
        summaries += [d["summary"] for d in (doc if isinstance(doc, list) else [doc])]
    print(HEAD)
    for s in sorted(summaries, key=_key):
        name, _, version = s["release"].partition("==")
        print("| %s %s | %d | %d | %d | %d | %d | %d | %d (%d) |" % (
            NAMES.get(name, name), version, s["options"], s["exercised"], s["refused"], s["ignored"], s["skipped"],
            s["failing"], s["combinations"], s["combinations_failing"]))
    keys = ("options", "exercised", "refused", "ignored", "skipped", "failing", "combinations", "combinations_failing")
    total = {k: sum(s[k] for s in summaries) for k in keys}
    print("| **%d releases** | %d | %d | %d | %d | %d | %d | %d (%d) |" % ((len(summaries),) + tuple(total[k] for k in keys)))


if __name__ == "__main__":
    main(sys.argv[1:])
