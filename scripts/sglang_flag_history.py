#!/usr/bin/env python3
"""Generate src/flagtrace/data/sglang_flags.toml (the history of every SGLang server flag) and
sglang_renames.toml (the renames in it).

    python scripts/sglang_flag_history.py [--out FILE] [--renames FILE]

Downloads (once; what is in the cache is reused) the wheel of every SGLang release from 0.4.0
through 0.5.23 and reads each release's argparse definitions statically, from the AST: nothing
of SGLang is imported. Stdlib only.
"""
import argparse
import ast
import json
import os
import re
import subprocess
import sys
import tomllib
import zipfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sglang_pins import releases, vkey, wheel  # noqa: E402  (the wheel cache and version order, shared)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "src", "flagtrace", "data")
OUT = os.path.join(DATA, "sglang_flags.toml")
RENAMES = os.path.join(DATA, "sglang_renames.toml")
FIRST, LAST = "0.4.0", "0.5.23"


# -- reading one release ---------------------------------------------------------------------
def text(node):
    """The text of a help string: constants kept, f-string holes shown as {...}."""
    if isinstance(node, ast.Constant):
        return node.value if isinstance(node.value, str) else ""
    if isinstance(node, ast.JoinedStr):
        return "".join(text(v) if isinstance(v, ast.Constant) else "{...}" for v in node.values)
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Mod)):
        return text(node.left) + (text(node.right) if isinstance(node.op, ast.Add) else "")
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "format":
        return text(node.func.value)
    if isinstance(node, ast.Attribute) and node.attr == "SUPPRESS":
        return "==SUPPRESS=="
    return ""


def name_of(node):
    """'DeprecatedAction' for DeprecatedAction or mod.DeprecatedAction; a constant's value."""
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Constant):
        return str(node.value)
    return None


def action(options, kw):
    """One argparse action, from its option strings and keyword nodes:
    {options, dest, help, action, new_flag}."""
    options = list(options)
    act = name_of(kw["action"]) if "action" in kw else "store"
    if act == "BooleanOptionalAction":
        options += ["--no-" + o[2:] for o in options if o.startswith("--")]
    first_long = next((o for o in options if o.startswith("--")), options[0])  # argparse's dest rule
    new_flag = kw.get("new_flag")
    return {"options": options, "help": text(kw["help"]) if "help" in kw else "", "action": act,
            "dest": (name_of(kw["dest"]) if "dest" in kw else None) or first_long.lstrip("-").replace("-", "_"),
            "new_flag": new_flag.value if isinstance(new_flag, ast.Constant) else None}


def add_argument_calls(tree, skipped):
    """Actions registered by ServerArgs.add_cli_args with parser.add_argument("--x", ...)."""
    out = []
    for fn in ast.walk(tree):
        if not (isinstance(fn, ast.FunctionDef) and fn.name == "add_cli_args"):
            continue
        for call in ast.walk(fn):
            if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
                    and call.func.attr == "add_argument"):
                continue
            options = [a.value for a in call.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
            if len(options) != len(call.args) or not options:
                skipped.append(ast.unparse(call)[:120])
                continue
            out.append(action(options, {k.arg: k.value for k in call.keywords if k.arg}))
    return out


def annotated_fields(tree):
    """Actions derived from `field: A[T, "help"]` / `A[T, Arg(...)]` class fields (0.5.14+), the
    way arg_utils.add_cli_args_from_dataclass derives them."""
    out = []
    for cls in ast.walk(tree):
        if not isinstance(cls, ast.ClassDef):
            continue
        for st in cls.body:
            if not (isinstance(st, ast.AnnAssign) and isinstance(st.target, ast.Name)
                    and isinstance(st.annotation, ast.Subscript)
                    and ast.unparse(st.annotation.value) in ("A", "Annotated", "typing.Annotated")):
                continue
            meta = st.annotation.slice.elts[1:] if isinstance(st.annotation.slice, ast.Tuple) else []
            kw = None
            for m in meta:  # the first Arg(...) or bare string wins
                if isinstance(m, ast.Call) and name_of(m.func) == "Arg":
                    kw = {k.arg: k.value for k in m.keywords if k.arg}
                    break
                if isinstance(m, (ast.Constant, ast.JoinedStr, ast.BinOp)) and text(m):
                    kw = {"help": m}
                    break
            if kw is None or (isinstance(kw.get("no_cli"), ast.Constant) and kw["no_cli"].value is True):
                continue
            field = st.target.id
            cli = kw["cli_name"].value if "cli_name" in kw else "--" + field.replace("_", "-")
            aliases = ast.literal_eval(kw["aliases"]) if "aliases" in kw else []
            out.append(action([cli] + list(aliases), kw) | {"dest": field})
    return out


def read_release(path):
    """The argparse actions of one wheel's ServerArgs, and the calls that could not be read."""
    actions, skipped = [], []
    with zipfile.ZipFile(path) as whl:
        for name in sorted(whl.namelist()):
            if name == "sglang/srt/server_args.py" or (
                    name.startswith("sglang/srt/arg_groups/fields/") and name.endswith(".py")):
                tree = ast.parse(whl.read(name))
                actions += add_argument_calls(tree, skipped) + annotated_fields(tree)
    # A field declared twice in one class body (0.5.15: dcp_size) is one field: the last wins.
    unique = {tuple(a["options"]): a for a in actions}
    return list(unique.values()), skipped


# -- evidence --------------------------------------------------------------------------------
USE = re.compile(r"(\buse|\bset|alias for|renamed to|replaced by)\s+(['`]?)(--[a-z0-9][\w-]*(?:=[^\s'`,;)]+)?)(.*)",
                 re.I | re.S)


def is_deprecated(act):
    """The definition itself says the option is deprecated (or a removed stub)."""
    h = act["help"]
    return (act["action"].startswith("Deprecated") or bool(re.match(r"\W*(deprecated|removed)\b", h, re.I))
            or any(re.search(re.escape(o) + r"\W{0,2} is deprecated", h) for o in act["options"]))


def named_replacement(act):
    """The replacement a deprecated option's definition names: new_flag=, else its help text
    ("use --x instead", "alias for --x v", "set `--x` to 'v'")."""
    if act["new_flag"]:
        return act["new_flag"], "new_flag"
    m = USE.search(act["help"])
    if not m:
        return None, None
    verb, quote, flag, rest = m.groups()
    flag = flag.rstrip(".")
    if verb.lower() == "use" and re.match(r"['`]? to ", rest):
        return None, None  # "use --x to do y": advice, not a replacement
    value = ((quote and re.match(r" ([^'`\s]+)" + quote, rest))  # '--x value'
             or re.match(r"['`]? to '([^']+)'", rest)  # `--x` to 'value'
             or re.match(r" (?!instead\b)(\w[\w-]*)\.?\s*$", rest))  # --x value.
    return (flag + " " + value.group(1) if value else flag), "help"


# -- history ---------------------------------------------------------------------------------
def runs(indices):
    """[0, 1, 2, 5, 6] -> [(0, 2), (5, 6)]"""
    out = []
    for i in indices:
        if out and out[-1][1] == i - 1:
            out[-1][1] = i
        else:
            out.append([i, i])
    return [tuple(r) for r in out]


def replacement(flag, first, last, per_release):
    """(replacement, evidence, since) for a flag whose final presence is first..last, from its
    definitions only: a new_flag= or a help text naming it while deprecated, an option sharing its
    action that outlived it, or an option that took over its dest when it disappeared."""
    named = [(i,) + named_replacement(per_release[i][flag]) for i in range(first, last + 1)
             if is_deprecated(per_release[i][flag])]
    named = [n for n in named if n[1]]
    if named:  # the latest one named (--nsa-prefill-cp-mode: --dsa-prefill-cp-mode, then --cp-strategy)
        _, repl, how = named[-1]
        return repl, how, next(i for i, r, _ in named if r == repl)
    if last + 1 == len(per_release):
        return None, None, None
    gone = per_release[last + 1]
    act = per_release[last][flag]
    mates = [o for o in act["options"] if o != flag and o in gone]
    if mates:
        since = next(i for i in range(first, last + 1) if mates[0] in per_release[i][flag]["options"])
        return mates[0], "alias", since
    before = {o for o, a in per_release[last].items() if a["dest"] == act["dest"]}
    after = sorted({o for o, a in gone.items() if a["dest"] == act["dest"]} - before)
    if after:
        return after[0], "dest", last + 1
    return None, None, None


def history(releases, per_release):
    """{flag: record}; per_release[i] maps each option string of releases[i] to its action."""
    out = {}
    for flag in sorted({o for r in per_release for o in r}):
        present = runs([i for i, r in enumerate(per_release) if flag in r])
        rec = {"present": [[releases[a], releases[b]] for a, b in present]}
        aliases = sorted({o for r in per_release if flag in r for o in r[flag]["options"]} - {flag})
        if aliases:
            rec["aliases"] = aliases
        first, last = present[-1]
        dep = [i for i in range(first, last + 1) if is_deprecated(per_release[i][flag])]
        if dep and dep == list(range(dep[0], last + 1)):  # deprecated until its last release
            rec["deprecated"] = releases[dep[0]]
            stub = [i for i in dep if per_release[i][flag]["action"] == "DeprecatedAction"]
            if stub and stub == list(range(stub[0], last + 1)):
                rec["ignored"] = releases[stub[0]]  # accepted, warns, has no effect
            note = " ".join(per_release[last][flag]["help"].split())
            if note and note != "==SUPPRESS==":
                rec["note"] = note if len(note) <= 160 else note[:157] + "..."
        repl, how, since = replacement(flag, first, last, per_release)
        if repl:
            rec.update(replaced_by=repl, evidence=how, since=releases[since])
        if last + 1 < len(releases):
            rec["removed"] = releases[last + 1]
        out[flag] = rec
    return out


# -- output ----------------------------------------------------------------------------------
HEADER = """\
# GENERATED by `python scripts/sglang_flag_history.py`: do not edit by hand, rerun it.
# The server flags of every SGLang release %s..%s (.post releases included), read statically
# from each release's wheel: the parser.add_argument calls of ServerArgs.add_cli_args
# (sglang/srt/server_args.py) and, from 0.5.14 on, the `field: A[T, "help"]` /
# `A[T, Arg(cli_name=, aliases=, no_cli=)]` declarations (server_args.py, later
# sglang/srt/arg_groups/fields/*.py). Nothing of SGLang is imported.
"""
FLAGS_DOC = """\
#
# releases: every release read, oldest first. [flags]: one line per option string.
#   present      runs of consecutive releases that accept it: [first, last], ...
#   aliases      other option strings of the same argparse action, in any release
#   deprecated   first release from which its definition says deprecated (until it goes)
#   ignored      first release from which it is a DeprecatedAction: accepted, warns, no effect
#   replaced_by  what replaced it, with `evidence`: new_flag (the action's new_flag=), help (its
#                help text: "use --x instead"), alias (an option string of its action that
#                outlived it) or dest (an option that took over its dest when it went); and
#                `since`, the first release with that evidence
#   removed      the first release without it (after its last run)
#   note         its help text while deprecated
"""


def toml_value(value):
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    return "{" + ", ".join("%s = %s" % (k, toml_value(v)) for k, v in value.items()) + "}"


def write_flags(path, releases, flags):
    lines = [HEADER % (releases[0], releases[-1]) + FLAGS_DOC, "releases = %s" % toml_value(releases), "",
             "[flags]"]
    lines += ["%s = %s" % (toml_value(flag), toml_value(rec)) for flag, rec in flags.items()]
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("\n".join(lines) + "\n")


def rename_table(flags):
    """[old, new, since, removed] for every flag with a replacement, oldest first."""
    rows = [[f, r["replaced_by"], r["since"], r.get("removed", "")] for f, r in flags.items() if "replaced_by" in r]
    return sorted(rows, key=lambda row: (vkey(row[2]), row[0]))


def write_renames(path, releases, flags):
    lines = [HEADER % (releases[0], releases[-1]),
             "# SGLang flag renames: old flag, what replaced it, the first release whose definition of the",
             "# old flag names the replacement, and the first release that rejects the old one (\"\" = not",
             "# yet). A derived view of sglang_flags.toml, which has the evidence and the full history.",
             "renames = ["]
    lines += ["  %s," % toml_value(row) for row in rename_table(flags)]
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("\n".join(lines) + "\n]\n")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=OUT, help="flag history to write (default: %(default)s)")
    ap.add_argument("--renames", default=RENAMES, help="rename table to write (default: %(default)s)")
    args = ap.parse_args(argv)
    releases_read, per_release = releases(FIRST, LAST), []
    for version in releases_read:
        actions, skipped = read_release(wheel("sglang", version))
        for call in skipped:
            print("%s: not read: %s" % (version, call), file=sys.stderr)
        per_release.append({option: act for act in actions for option in act["options"]})
        print("%-14s %4d options" % (version, len(per_release[-1])), file=sys.stderr)
    flags = history(releases_read, per_release)
    write_flags(args.out, releases_read, flags)
    write_renames(args.renames, releases_read, flags)
    for path in (args.out, args.renames):  # what was written must read back
        with open(path, "rb") as fh:
            tomllib.load(fh)
    removed = [f for f, r in flags.items() if "removed" in r]
    print("%d releases, %d flags, %d removed (%d of them with a named replacement), %d replaced while "
          "still accepted, %d deprecated" % (
              len(releases_read), len(flags), len(removed), sum("replaced_by" in flags[f] for f in removed),
              sum("replaced_by" in r and "removed" not in r for r in flags.values()),
              sum("deprecated" in r for r in flags.values())))


if __name__ == "__main__":
    main()
