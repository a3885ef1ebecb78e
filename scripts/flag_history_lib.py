"""Shared by the flag-history generators (scripts/sglang_flag_history.py,
scripts/vllm_flag_history.py): what does not depend on the framework.

* reading argparse definitions from the AST: help text (``text``), names (``name_of``), one
  action from its option strings and keyword nodes (``action``);
* the evidence a definition gives: deprecated (``is_deprecated``), the replacement it names
  (``named_replacement``);
* the history: run-length "present" spans (``runs``), the replacement of a flag that went
  (``replacement``), one record per option string (``history``);
* the output: TOML values, the flag table (``write_flags``), the rename table derived from it
  (``rename_table``, ``write_renames``) and a read-back check (``check_toml``).

Standard library only; nothing of any framework is imported.
"""
import ast
import json
import os
import re
import sys
import tomllib

from flagtrace.core.pinlib import vkey  # noqa: E402  (PEP 440 order, shared with the pin-file generators)


# -- reading argparse definitions ------------------------------------------------------------
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


# -- evidence --------------------------------------------------------------------------------
USE = re.compile(r"(\buse|\bset|alias for|renamed to|replaced by)\s+(['`]?)(--[a-z0-9][\w-]*(?:=[^\s'`,;)]+)?)(.*)",
                 re.I | re.S)


def is_deprecated(act):
    """The definition itself says the option is deprecated (or a removed stub): argparse's own
    deprecated=True (Python 3.13, or a parser that backports it), a Deprecated* action, or the help."""
    h = act["help"]
    return (bool(act.get("deprecated")) or act["action"].startswith("Deprecated")
            or bool(re.match(r"\W*(deprecated|removed)\b", h, re.I))
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


def is_stub(act):
    """Accepted, warns, has no effect: SGLang's DeprecatedAction."""
    return act["action"] == "DeprecatedAction"


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


def replacement(flag, first, last, per_release, named_replacement=named_replacement):
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


def history(releases, per_release, named_replacement=named_replacement, is_stub=is_stub):
    """{flag: record}; per_release[i] maps each option string of releases[i] to its action.
    ``named_replacement`` and ``is_stub`` read a framework's own wording of a definition."""
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
            stub = [i for i in dep if is_stub(per_release[i][flag])]
            if stub and stub == list(range(stub[0], last + 1)):
                rec["ignored"] = releases[stub[0]]  # accepted, warns, has no effect
            note = " ".join(per_release[last][flag]["help"].split())
            if note and note != "==SUPPRESS==":
                rec["note"] = note if len(note) <= 160 else note[:157] + "..."
        repl, how, since = replacement(flag, first, last, per_release, named_replacement)
        if repl:
            rec.update(replaced_by=repl, evidence=how, since=releases[since])
        if last + 1 < len(releases):
            rec["removed"] = releases[last + 1]
        out[flag] = rec
    return out


# -- output ----------------------------------------------------------------------------------
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


def write_flags(path, header, releases, flags, doc=FLAGS_DOC):
    """The flag table: ``header`` (a %s..%s for the first and last release), ``doc``, the releases
    and one line per flag."""
    lines = [header % (releases[0], releases[-1]) + doc, "releases = %s" % toml_value(releases), "",
             "[flags]"]
    lines += ["%s = %s" % (toml_value(flag), toml_value(rec)) for flag, rec in flags.items()]
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("\n".join(lines) + "\n")


def rename_table(flags):
    """[old, new, since, removed] for every flag with a replacement, oldest first."""
    rows = [[f, r["replaced_by"], r["since"], r.get("removed", "")] for f, r in flags.items() if "replaced_by" in r]
    return sorted(rows, key=lambda row: (vkey(row[2]), row[0]))


def write_renames(path, header, comment, releases, flags):
    """The rename table: ``header`` as for write_flags, then ``comment`` (lines), then the rows."""
    lines = [header % (releases[0], releases[-1])] + list(comment) + ["renames = ["]
    lines += ["  %s," % toml_value(row) for row in rename_table(flags)]
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("\n".join(lines) + "\n]\n")


def check_toml(*paths):
    """What was written must read back."""
    for path in paths:
        with open(path, "rb") as fh:
            tomllib.load(fh)


def summary(releases, flags):
    removed = [f for f, r in flags.items() if "removed" in r]
    return ("%d releases, %d flags, %d removed (%d of them with a named replacement), %d replaced while "
            "still accepted, %d deprecated" % (
                len(releases), len(flags), len(removed), sum("replaced_by" in flags[f] for f in removed),
                sum("replaced_by" in r and "removed" not in r for r in flags.values()),
                sum("deprecated" in r for r in flags.values())))
