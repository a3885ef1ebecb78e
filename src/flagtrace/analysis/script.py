"""Read a shell launch script for the ways flags get lost before a process receives them, and
check each against what the processes really received (``flagtrace run``).

- a backslash followed by a space or tab at the end of a line: the command ends there and the
  next lines run as a command of their own (their flags never reach the process);
- ``NAME=value`` alone on a line and never exported: the processes the script starts do not
  get NAME (only variables a framework reads from its environment are checked);
- a heredoc with a quoted delimiter (``<<'EOF'``): ``$NAME`` inside it is not expanded by the
  script but by whatever reads it, where an unexported NAME is empty.

Best effort on plain scripts: it does not run a shell parser, and it never guesses silently —
every finding quotes the script line it is about.
"""
import re
import shlex

from ..core.frameworks import env_patterns
from ..probe.common.recorded import env_matcher, is_relevant

_ASSIGN = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)=(.*)$")
_EXPORTED = re.compile(r"^\s*(export|declare\s+-[a-zA-Z]*x[a-zA-Z]*|typeset\s+-x)\s+(.*)$")
_ALLEXPORT = re.compile(r"^\s*set\s+(-[a-zA-Z]*a[a-zA-Z]*|-o\s+allexport)\b")
_HEREDOC = re.compile(r"<<(-?)\s*(?:'([^']+)'|\"([^\"]+)\"|\\(\w+)|(\w+))")
_VAR = re.compile(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)")


def _relevant(name):
    return is_relevant(name, env_matcher(env_patterns()))


def _ends_continued(line):
    """'ok' for a proper trailing backslash, 'broken' for backslash + blanks, else None."""
    stripped = line.rstrip(" \t")
    count = len(stripped) - len(stripped.rstrip("\\"))
    if count % 2 == 0:
        return None
    return "ok" if stripped == line else "broken"


def _words(text):
    try:
        return shlex.split(text, comments=True)
    except ValueError:
        return text.split()


def _heredoc_bodies(lines):
    """{line index: (start index, quoted, delimiter)} for every line inside a heredoc body."""
    inside = {}
    i = 0
    while i < len(lines):
        line = lines[i]
        found = [m for m in _HEREDOC.finditer(line) if not line[:m.start()].lstrip().startswith("#")]
        if not found:
            i += 1
            continue
        start = i
        for m in found:
            strip_tabs = bool(m.group(1))
            quoted = m.group(5) is None
            delim = next(g for g in m.groups()[1:] if g)
            i += 1
            while i < len(lines):
                body = lines[i].lstrip("\t") if strip_tabs else lines[i]
                if body == delim:
                    break
                inside[i] = (start, quoted, delim)
                i += 1
        i += 1
    return inside


def check_script(text):
    """Findings for one script text; each names its line (1-based)."""
    lines = text.splitlines()
    bodies = _heredoc_bodies(lines)
    findings = []
    assigned, exported, allexport = {}, set(), False
    for i, line in enumerate(lines):
        if i in bodies or line.lstrip().startswith("#"):
            continue
        if _ALLEXPORT.match(line):
            allexport = True
        m = _EXPORTED.match(line)
        if m:
            for word in m.group(2).split():
                exported.add(word.split("=", 1)[0])
            continue
        m = _ASSIGN.match(line)
        if m and not _words(m.group(2))[1:]:  # an assignment alone, not NAME=v command
            assigned.setdefault(m.group(1), i + 1)
    findings += _continuations(lines, bodies)
    if not allexport:
        for name, lineno in sorted(assigned.items(), key=lambda kv: kv[1]):
            if name not in exported and _relevant(name):
                findings.append({"kind": "unexported", "line": lineno, "name": name,
                                 "text": lines[lineno - 1].strip()})
    findings += _quoted_heredocs(lines, bodies, assigned, exported, allexport)
    return findings


def _continuations(lines, bodies):
    out = []
    i = 0
    command_start = 0
    while i < len(lines):
        if i in bodies:
            i += 1
            command_start = i
            continue
        state = _ends_continued(lines[i])
        if state == "ok":
            i += 1
            continue
        if state == "broken":
            head = " ".join(l.rstrip(" \t").rstrip("\\") for l in lines[command_start:i + 1])
            j = i + 1
            orphan = []
            while j < len(lines) and j not in bodies:
                orphan.append(lines[j].rstrip(" \t").rstrip("\\"))
                if _ends_continued(lines[j]) is None:
                    break
                j += 1
            words = _words(" ".join(orphan))
            out.append({
                "kind": "broken-continuation", "line": i + 1, "text": lines[i],
                "command": _words(head), "orphan_line": i + 2, "orphan": words,
                "flags": [w for w in words if w.startswith("-")],
            })
            i = j + 1
            command_start = i
            continue
        i += 1
        command_start = i
    return out


def _quoted_heredocs(lines, bodies, assigned, exported, allexport):
    out = []
    seen = set()
    for index, (start, quoted, delim) in sorted(bodies.items()):
        if not quoted or (start, delim) in seen:
            continue
        seen.add((start, delim))
        body = [lines[k] for k, v in sorted(bodies.items()) if v[0] == start and v[2] == delim]
        names = []
        for text in body:
            for name in _VAR.findall(text):
                if name not in names:
                    names.append(name)
        unset = [n for n in names if n in assigned and n not in exported and not allexport]
        if unset:
            out.append({"kind": "quoted-heredoc", "line": start + 1, "text": lines[start].strip(),
                        "delimiter": delim, "names": unset})
    return out


def literal_words(words):
    """The words of a script command whose value the script itself fixes (no expansion)."""
    return [w for w in words if not any(c in w for c in "$`*?[")]


def command_matches(words, argv):
    """True if a process with ``argv`` plausibly ran the script command ``words``: every literal
    word after the program name is one of its arguments."""
    literal = literal_words(words[1:])
    if not literal:
        return False
    args = set(argv[1:])
    return all(w in args for w in literal)
