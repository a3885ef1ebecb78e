"""What ``flagtrace fix`` tries and how it judges the result, read from an explanation alone.

Problems: the resolution error, each field the user asked for and did not get, or a value they
want (``--want FIELD=VALUE``). Candidates come from what the failing check or the overriding
change read — its fields (through helper methods too) and environment variables — each set to
an alternative: its argparse choices, a switch flipped, the constants its conditions compare it
with and their integer neighbours, the user's own option removed (back to the default); for a
command line the parser refused, the option it suggested. Nothing here names a framework.
"""
import ast
import dataclasses
import itertools

from .expect import matches


@dataclasses.dataclass(frozen=True)
class Change:
    kind: str  # "set" (words replace the option if typed), "unset", "env" (key, value), "rename" (old, new)
    words: tuple

    def text(self):
        """The change as a user would type it."""
        if self.kind == "env":
            key, value = self.words
            return "%s=%s" % (key, value) if value is not None else "unset %s" % key
        if self.kind == "unset":
            return "without %s" % self.words[0]
        if self.kind == "rename":
            return "%s instead of %s" % (self.words[1], self.words[0])
        return " ".join(self.words)

    def edit(self):
        """As whatif.apply() takes it."""
        if self.kind == "env":
            return ("env", [self.words[0], self.words[1] or ""])
        return (self.kind, list(self.words))


@dataclasses.dataclass
class Candidate:
    changes: tuple  # of Change
    reason: str  # where it came from ("mamba_scheduler_strategy: a choice of --mamba-scheduler-strategy")


# -- problems ---------------------------------------------------------------------------------
def problems(analysis, wants=()):
    """[{kind, field, text, ...}]: the error (nothing else is judged while the target raises),
    else each ``--want``, else each overridden explicit request."""
    out = []
    for spec in wants:
        field, _, value = spec.partition("=")
        out.append({"kind": "want", "field": field.strip(), "want": value.strip(),
                    "text": "%s = %s wanted" % (field.strip(), value.strip())})
    if analysis.get("error"):
        return [{"kind": "error", "text": _error_text(analysis["error"])}] + out
    if out:
        return out
    for f in analysis.get("fields", []):
        if f.get("verdict") == "overridden":
            out.append({"kind": "overridden", "field": f["field"], "want": f["initial"]["repr"],
                        "text": "%s: asked %s (%s), got %s" % (f["field"], f["initial"]["repr"],
                                                               (f.get("requested") or {}).get("typed"),
                                                               f["final"]["repr"])})
    return out


def _error_text(error):
    message = " ".join(str(error.get("message", "")).split())
    return "%s: %s" % (error.get("type") or "error", message)


def solved(problem, analysis):
    """Whether ``analysis`` (a re-resolution) no longer has ``problem``."""
    if problem["kind"] == "error":
        return analysis.get("status") != "error"
    if analysis.get("error"):
        return False
    report = field(analysis, problem["field"])
    if report is None:
        return False
    final = report["final"] or {}
    if problem["kind"] == "overridden":
        return final.get("repr") == problem["want"]
    return matches(problem["want"], final.get("value"), final.get("repr"))


def progressed(problem, original, other):
    """Whether ``other`` went differently from ``original`` where the problem is (a different
    error, or the field decided elsewhere): a single change worth pairing with another."""
    if problem["kind"] == "error":
        a, b = original.get("error") or {}, other.get("error") or {}
        return (a.get("message"), a.get("site")) != (b.get("message"), b.get("site"))
    before, after = field(original, problem["field"]), field(other, problem["field"])
    if not before or not after:
        return False
    return before["final"]["repr"] != after["final"]["repr"] or _decider(before) != _decider(after)


def _decider(report):
    changes = report.get("changes") or []
    return (changes[-1].get("func"), changes[-1].get("line")) if changes else None


def field(analysis, name):
    for f in analysis.get("fields", []):
        if f["field"] == name:
            return f
    return None


# -- candidates -------------------------------------------------------------------------------
def evidence(problem, analysis):
    """The conditions and reads that decided ``problem``: the failing check's, or every change
    of the field's."""
    if problem["kind"] == "error":
        error = analysis["error"]
        return list(error.get("conditions", [])), list(error.get("reads", []))
    report = field(analysis, problem["field"]) or {}
    conditions, reads = [], []
    for change in report.get("changes", []):
        conditions += change.get("conditions", [])
        reads += change.get("reads", [])
    return conditions, reads


def candidates(problem, analysis, actions, args):
    """Single changes to try for ``problem``. ``actions``: the target's argparse actions
    ({dest, options, switch?, const?, choices?}); ``args``: the command line as typed."""
    out = []
    error = analysis.get("error") or {}
    if problem["kind"] == "error" and error.get("kind") == "argparse":
        for flag, close in sorted((error.get("suggestions") or {}).items()):
            for other in close:
                out.append(Candidate((Change("rename", (flag, other)),), "%s: the parser suggests %s"
                                     % (flag, other)))
        return out
    conditions, reads = evidence(problem, analysis)
    tests = [c.get("test") or "" for c in conditions]
    by_dest = {}
    for action in actions:
        by_dest[action["dest"]] = action
    typed = set(_typed_options(args))
    seen_fields = set()
    for read in reads:
        if read.get("field"):
            name = read["field"]
            if name in seen_fields or (problem["kind"] == "overridden" and name == problem["field"]):
                continue
            seen_fields.add(name)
            action = _action_of(name, by_dest)
            if action is None:
                continue
            out += _field_candidates(name, read.get("value") or {}, action, typed, _constants(tests, name))
        elif read.get("env"):
            out += _env_candidates(read["env"], read.get("value"), _constants(tests, read["env"]))
    if problem["kind"] == "want":
        name = problem["field"]
        action = _action_of(name, by_dest)
        if action is not None and not action.get("switch"):
            out.insert(0, Candidate((Change("set", (_option(action), problem["want"])),),
                                    "%s: the value wanted, asked for directly" % name))
    return unique(out)


def _action_of(field, by_dest):
    """The option that sets ``field`` (its dest is the field's name, or its last part)."""
    return by_dest.get(field) or by_dest.get(field.rsplit(".", 1)[-1])


def option_of(field, actions):
    """The option as typed that sets ``field`` (None: no option does)."""
    action = _action_of(field, {a["dest"]: a for a in actions})
    return _option(action) if action else None


def reads_named(problem, analysis):
    """The fields and environment variables the deciding code read (for the "no fix" line)."""
    _, reads = evidence(problem, analysis)
    names = []
    for read in reads:
        name = read.get("field") or ("$" + read["env"] if read.get("env") else None)
        if name and name not in names:
            names.append(name)
    return names


def _field_candidates(name, value, action, typed, constants):
    option = _option(action)
    current = value.get("repr")
    out = []
    typed_here = [o for o in action["options"] if o in typed]
    if typed_here:
        out.append(Candidate((Change("unset", (typed_here[0],)),), "%s: %s removed (back to its default)"
                             % (name, typed_here[0])))
    if action.get("switch"):
        for candidate in _switch_options(action, value.get("value")):
            if candidate not in typed:
                out.append(Candidate((Change("set", (candidate,)),), "%s: %s flips it" % (name, candidate)))
        return out
    for choice in action.get("choices", []):
        if repr(choice) != current:
            out.append(Candidate((Change("set", (option, str(choice))),), "%s: a choice of %s" % (name, option)))
    for constant in constants:
        for v in _around(constant):
            if v is None or isinstance(v, bool) or repr(v) == current:
                continue
            out.append(Candidate((Change("set", (option, str(v))),),
                                 "%s: compared with %r in the condition" % (name, constant)))
    return out


def _switch_options(action, current):
    """The spellings of a switch that would change ``current``."""
    if isinstance(action.get("const"), bool):
        return [_option(action)] if action["const"] != bool(current) else []
    negative = [o for o in action["options"] if o.startswith("--no-")]
    positive = [o for o in action["options"] if not o.startswith("--no-")]
    chosen = negative if current else positive
    return [max(chosen, key=len)] if chosen else []


def _env_candidates(key, value, constants):
    """``value``: the variable as the deciding code saw it (None: unset)."""
    values = ["1"] if value in (None, "0", "false", "False", "") else []
    if value in ("1", "true", "True"):
        values.append("0")
    values += [c for c in constants if isinstance(c, str)]
    out = [Candidate((Change("env", (key, v)),), "$%s read by the deciding code" % key)
           for v in unique(values) if v != value]
    if value is not None:
        out.append(Candidate((Change("env", (key, None)),), "$%s unset" % key))
    return out


def _around(constant):
    if isinstance(constant, int) and not isinstance(constant, bool):
        return [constant, constant - 1, constant + 1]
    return [constant]


def _constants(tests, name):
    """Constants the condition texts compare ``name`` with (``self.max_batch > 64`` -> 64;
    ``x in [32, 64]`` -> 32, 64; ``os.getenv("K") == "1"`` -> "1")."""
    short = name.rsplit(".", 1)[-1]
    out = []
    for text in tests:
        try:
            tree = ast.parse(text.strip(), mode="eval")
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if not isinstance(node, ast.Compare):
                continue
            operands = [node.left] + list(node.comparators)
            if not any(_mentions(o, short) for o in operands):
                continue
            for o in operands:
                out += _literal_values(o)
    return unique(out)


def _mentions(node, name):
    for sub in ast.walk(node):
        if isinstance(sub, ast.Attribute) and sub.attr == name:
            return True
        if isinstance(sub, ast.Name) and sub.id == name:
            return True
        if isinstance(sub, ast.Constant) and sub.value == name:  # os.getenv("NAME")
            return True
    return False


def _literal_values(node):
    if isinstance(node, ast.Constant):
        return [node.value] if isinstance(node.value, (str, int, float)) else []
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return [e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, (str, int, float))]
    return []


def _option(action):
    return max(action["options"], key=len)


def _typed_options(args):
    for word in args:
        if word.startswith("-"):
            yield word.split("=", 1)[0]


def unique(items):
    out, seen = [], set()
    for item in items:
        key = item.changes if isinstance(item, Candidate) else (type(item), item)
        if key not in seen:
            seen.add(key)
            out.append(item)
    return out


# -- pairs and ranking ------------------------------------------------------------------------
def pairs(best, follow_ups, limit=40):
    """Two changes at once: the best singles with each other, then each with what its own
    re-resolution suggests (``follow_ups``: {single's changes: [Candidate]})."""
    out = []
    for a, b in itertools.combinations(best, 2):
        if _compatible(a.changes + b.changes):
            out.append(Candidate(a.changes + b.changes, "%s; and %s" % (a.reason, b.reason)))
    for a in best:
        for b in follow_ups.get(a.changes, []):
            if _compatible(a.changes + b.changes):
                out.append(Candidate(a.changes + b.changes, "%s; then %s" % (a.reason, b.reason)))
    return unique(out)[:limit]


def _compatible(changes):
    """No two changes touch the same option or variable."""
    keys = [c.words[0] for c in changes]
    return len(keys) == len(set(keys))


def side_effects(original, fixed, exclude=()):
    """Fields whose final value moved from the original command's: [{field, old, new}]. Where the
    original raised, only fields it had settled (asked for or changed before the error) count —
    the rest never got their turn."""
    before = {f["field"]: f for f in original.get("fields", [])}
    raised = bool(original.get("error"))
    out = []
    for f in fixed.get("fields", []):
        name = f["field"]
        old = before.get(name)
        if name in exclude or old is None or old["final"]["repr"] == f["final"]["repr"]:
            continue
        if raised and not (old.get("requested") or old.get("changes") or f.get("requested")):
            continue
        out.append({"field": name, "old": old["final"]["repr"], "new": f["final"]["repr"]})
    return out


def closest_only(found, args):
    """Of verified fixes that set the same options to different numbers (``--max-batch 64`` and
    ``63``), the one nearest the value typed (else the first)."""
    out, best = [], {}
    for fix in found:
        shape = tuple(_shape(text) for text in fix["changes"])
        if shape in best:
            kept = best[shape]
            if _distance(fix, args) < _distance(out[kept], args):
                out[kept] = fix
            continue
        best[shape] = len(out)
        out.append(fix)
    return out


def _shape(text):
    words = text.split()
    if len(words) == 2 and _number(words[1]) is not None:
        return (words[0], "<number>")
    return tuple(words)


def _distance(fix, args):
    total = 0.0
    for text in fix["changes"]:
        words = text.split()
        if len(words) == 2 and _number(words[1]) is not None:
            typed = _typed_value(args, words[0])
            total += abs(_number(words[1]) - typed) if typed is not None else 0.0
    return total


def _typed_value(args, option):
    for i, word in enumerate(args):
        if word == option and i + 1 < len(args):
            return _number(args[i + 1])
        if word.startswith(option + "="):
            return _number(word.split("=", 1)[1])
    return None


def _number(text):
    try:
        return float(text)
    except ValueError:
        return None
