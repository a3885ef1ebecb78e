"""A shell script read statically, the way bash would run it as far as that can be known without running it:
the script's own assignments applied in order (``X=...``, ``export``/``local``/``declare``/``readonly``, arrays
``A=(...)`` and ``"${A[@]}"``, ``${X:-default}`` / ``${X:=default}`` / ``${X:+alt}``, ``$((...))`` over known
integers), every simple command found wherever it stands (inside ``if``/``case``/loops/functions, after
``exec``/``nohup``/``srun``/``mpirun``/``numactl``/``ray job submit ... --`` and ``VAR=value`` prefixes, before
``&``), redirections dropped. A value only known at run time (an unset variable, ``$(command)``) stays as typed
and is listed as a placeholder: the framework's parser never receives it as if it were real (probe/hooks.py
stands a value of the option's own type in for it, and says so)."""
import os
import re
import shlex

import collections

from .entry_points import recognise, wrapper_of
from .model import Token
from .shell_words import SHELLS, script_of

SHELL_SUFFIXES = (".sh", ".bash", ".slurm", ".sbatch", ".txt")  # files read as shell text, never as YAML

_NAME = r"[A-Za-z_][A-Za-z0-9_]*"
_ASSIGN = re.compile(r"^(%s)(\[[^\]]*\])?(\+?)=(.*)$" % _NAME, re.S)
_PARAMETER = r"%s|\d+|[@*#]" % _NAME  # a variable, a positional parameter, $@ / $* / $#
_PARAM = re.compile(r"\$\{(#?)(%s)(\[[@*]\])?(?:(:?[-=+?])((?:[^{}]|\{[^{}]*\})*))?\}|\$(%s|\d|[@*#])|\$\(\((.*?)\)\)"
                    r"|\$\(([^()]*)\)" % (_PARAMETER, _NAME))
_ARGUMENT = re.compile(r"\$\{?(OPTARG|\d+|[@*])")  # what the script was given when it was run
_DECLARE = ("export", "local", "declare", "readonly", "typeset")
_SKIP = ("echo", "printf", "cat", "tee", "logger", ":")  # commands whose words are text, not a launch
_REDIRECT = re.compile(r"^\d*(>>?|<<?|&>>?|>&|<&)$")
_REDIRECT_GLUED = re.compile(r"^\d*(>>?|<|&>>?)\S+$")
_PLACEHOLDER = re.compile(r"<[^<>\n]*>")  # what only the cluster knows (kubelet_env.py): a word, never a redirection
_HEREDOC = re.compile(r"<<-?\s*['\"]?(%s)['\"]?" % _NAME)
# A heredoc written to a file: ``cat > F <<EOF``, ``cat <<'EOF' > F``, ``tee F <<EOF`` (the delimiter quoted: the body
# as typed, else expanded).
_HEREDOC_FILE = re.compile(r"^\s*(?:cat\s*(?:>\s*(?P<a>[^\s<>;&|]+)\s*)?|tee\s+(?:-a\s+)?(?P<t>[^\s<>;&|]+)\s*)<<(?P<dash>-?)"
                           r"\s*(?P<q>['\"]?)%s(?P=q)(?:\s*>\s*(?P<b>[^\s<>;&|]+))?\s*$" % _NAME)
HEREDOC = "\x00heredoc"  # the pseudo command _simple_commands gives for a file a heredoc writes


class Script:
    """One script's state while it is read: its variables, arrays and what is only known at run time."""

    def __init__(self, env=None, arguments=()):
        self.env = dict(env or {})
        self.arguments = list(arguments)  # $1, $2, ... ($0 is not one): a script file is read as run with none
        self.exported = set(env or {})  # what the script's commands inherit
        self.arrays = {}
        self.runtime = set()  # variables set from what only the run knows ($(hostname), an unset variable)
        self.placeholders = []
        self.files = {}  # path as the script names it -> (the text a heredoc writes there, its line)

    # ---------------------------------------------------------------- expansion
    def expand(self, word):
        """``word`` with what the script knows substituted; the unknown kept as typed (and noted)."""
        def one(m):
            length, name, index, op, arg, plain, arith, command = m.groups()
            if arith is not None:
                value = self.arithmetic(arith)
                return value if value is not None else self._unknown(m.group(0))
            if command is not None:
                return self._unknown(m.group(0))
            name = name or plain
            if name in ("@", "*"):
                return " ".join(self.arguments)
            if index:
                return " ".join(self.arrays.get(name, [])) if name in self.arrays else self._unknown(m.group(0))
            if name in self.runtime:
                return self._unknown("$" + name)
            value = self._value(name)
            if length:
                return str(len(value)) if value is not None else self._unknown(m.group(0))
            unset = value is None or (op or "").startswith(":") and value == ""
            kind = (op or "").lstrip(":")
            if kind in ("-", "="):
                if unset:
                    value = self.expand(arg or "")
                    if kind == "=":
                        self.env[name] = value
                return value
            if kind == "+":
                return "" if unset else self.expand(arg or "")
            return value if value is not None else self._unknown(m.group(0))
        return _PARAM.sub(one, word)

    def _value(self, name):
        if name == "#":
            return str(len(self.arguments))
        if name.isdigit():
            number = int(name)
            return self.arguments[number - 1] if 0 < number <= len(self.arguments) else None
        return self.env.get(name)

    def words(self, word):
        """A word as the command gets it: ``${A[@]}`` alone is the array's words, ``"$@"`` the arguments'."""
        if word in ("$@", "${@}"):
            return list(self.arguments)
        m = re.fullmatch(r"\$\{(%s)\[[@*]\]\}" % _NAME, word)
        if m and m.group(1) in self.arrays:
            return list(self.arrays[m.group(1)])
        return [self.expand(word)]

    def arithmetic(self, expr):
        """``$((expr))`` over integers the script knows, or None."""
        expr = re.sub(r"\$\{[^{}]*\}", lambda m: self.expand(m.group(0)), expr)  # ${X:-0} as bash expands it
        text = re.sub(r"\$?\{?(%s)\}?" % _NAME, lambda m: self.env.get(m.group(1), "x"), expr)
        if not re.fullmatch(r"[\d\s+\-*/%()]*", text) or not text.strip() or "**" in text:
            return None
        try:
            return str(int(eval(text.replace("/", "//"), {"__builtins__": {}})))  # digits and operators only
        except (ArithmeticError, SyntaxError, ValueError):
            return None

    def environment(self):
        """The variables a command of the script inherits (exported, or given to the script)."""
        return {name: value for name, value in self.env.items() if name in self.exported}

    def _unknown(self, text):
        if text not in self.placeholders:
            self.placeholders.append(text)
        return text

    # ---------------------------------------------------------------- statements
    def assign(self, words):
        """Apply the assignments that make up a whole simple command; True if it was one."""
        body = words[1:] if words and words[0] in _DECLARE else words
        body = [w for w in body if not w.startswith("-")]
        if not body or not all(_ASSIGN.match(w) for w in body):
            if words and words[0] == "export":
                self.exported.update(w for w in body if re.fullmatch(_NAME, w))
            return bool(words) and words[0] in _DECLARE  # ``export X`` of a known variable
        for word in body:
            name, index, append, value = _ASSIGN.match(word).groups()
            if words[0] == "export":
                self.exported.add(name)
            if value.startswith("(") and value.endswith(")"):
                items = [w for item in _split(value[1:-1]) for w in self.words(item)]
                self.arrays[name] = (self.arrays.get(name, []) if append else []) + items
            elif not index and self.env.get(name) and _ARGUMENT.search(value) and not self.arguments:
                continue  # getopts' ``X=$OPTARG``, ``X=$2`` in an argument loop: run with no options, the default stays
            elif not index:
                known = len(self.placeholders)
                value = (self.env.get(name, "") if append else "") + self.expand(value)
                if len(self.placeholders) > known:  # only known at run time: the variable is the placeholder
                    del self.placeholders[known:]
                    self.env.pop(name, None)
                    self.runtime.add(name)
                else:
                    self.env[name] = value
                    self.runtime.discard(name)
        return True

    def commands(self, text):
        """(line, words) of every simple command the script runs, assignments applied on the way (a command's
        own ``VAR=value`` prefixes stay in its words)."""
        for number, raw in _simple_commands(text):
            if raw[:1] == [HEREDOC]:  # a file the script writes: what a command that reads it finds there
                self.files[self.expand(raw[1])] = (raw[2] if raw[3] else self.expand(raw[2]), number)
                continue
            if self.assign(raw):
                continue
            if raw and raw[0] in _SKIP:
                continue
            out = []
            for word in raw:
                out += self.words(word)
            if out[:1] == ["eval"]:  # its arguments joined are the command bash runs
                text = _PLACEHOLDER.sub(lambda m: shlex.quote(m.group(0)), " ".join(out[1:]))  # one word, as it was
                for _, words in self.commands(text):
                    yield number, words
                continue
            yield number, out


# Programs that run the command they are given (their own options first): the framework command may follow them.
LAUNCHERS = ("srun", "mpirun", "mpiexec", "nohup", "exec", "env", "time", "numactl", "taskset", "stdbuf", "timeout",
             "ray", "torchrun", "sudo", "nice", "ionice", "setsid", "chrt", "uv", "apptainer", "singularity")


Found = collections.namedtuple("Found", "number prefix tokens env framework wrapper placeholders files")


def found_commands(script, text, origin):
    """Each framework (or wrapper) command ``text`` runs under ``script``'s state: Found(its line number, the words
    before it, its tokens (each token's origin ``origin(number)``, a ``SHELL -c`` script unwrapped), the
    environment it inherits with its own ``VAR=value`` prefixes, framework, wrapper, the placeholders it holds, the
    files it names that the script wrote with a heredoc: {path: (text, line)})."""
    for number, words in script.commands(text):
        start = launch_start(words)
        if start is None:
            continue
        prefix, command = words[:start], words[start:]
        env = dict(script.environment())
        env.update(w.split("=", 1) for w in prefix if re.match(r"^%s=" % _NAME, w))
        tokens = [Token(w, origin(number)) for w in command]
        inner = unwrap(tokens, env)
        held = list(inner.placeholders) if inner else []
        tokens = inner.tokens if inner else tokens
        argv = [t.text for t in tokens]
        held += [p for p in script.placeholders if any(p in w for w in argv) and p not in held]
        files = {w.split("=", 1)[-1]: script.files[w.split("=", 1)[-1]] for w in argv
                 if w.split("=", 1)[-1] in script.files}
        yield Found(number, prefix, tokens, env, recognise(argv), wrapper_of(argv), held, files)


def written_notes(found):
    """What the report says of each file the command names that the script writes."""
    return ["%s: written by the script's heredoc at line %d; the command reads it as written there" % (path, line)
            for path, (_, line) in found.files.items()]


def unwrap(tokens, env):
    """The framework (or wrapper) command ``SHELL [-opts] -c SCRIPT [NAME ARG...]`` runs, read as a script whose
    arguments are the words after NAME: its Found (each token's origin the script's line), or None when the
    tokens are not such a shell or its script runs no framework."""
    script, rest = script_of(tokens)
    if script is None:
        return None
    state = Script(env, arguments=[t.text for t in rest[1:]])
    for found in found_commands(state, script.text, lambda n: "%s, line %d of the script" % (script.origin, n)):
        if found.framework or found.wrapper:
            return found
    return None


def launch_start(words):
    """Where the framework (or a wrapper) command begins in ``words``: first, after ``VAR=value`` prefixes, or
    after a launcher and its options (srun, mpirun, nohup, ``ray job submit ... --``, ...); None otherwise (a word
    that merely ends in a framework's name, ``rm -rf ~/.config/vllm``, is not a launch)."""
    i = 0
    while i < len(words) and _ASSIGN.match(words[i]):
        i += 1
    if i < len(words) and _starts(words[i:]):
        return i
    if i >= len(words) or os.path.basename(words[i]) not in LAUNCHERS:
        return None
    for j in range(i + 1, len(words)):
        if _starts(words[j:]):
            while j > 0 and words[j - 1] == "env":
                j -= 1
            return j
    return None


def _starts(words):
    """Whether ``words`` run a framework (or a wrapper), directly or as ``SHELL -c SCRIPT`` whose script does."""
    if recognise(words) or wrapper_of(words):
        return True
    if os.path.basename(words[0]) in SHELLS and "-c" in words[1:3]:
        script = words[words.index("-c") + 1] if words.index("-c") + 1 < len(words) else ""
        return any(launch_start(w) is not None for _, w in _simple_commands(script))
    return False


def _protect(line):
    """``$(...)`` and ``$((...))`` as one word: their spaces, pipes and semicolons hidden from the splitter."""
    out, depth, i = [], 0, 0
    while i < len(line):
        if line.startswith("$(", i):
            depth += 1
            out.append("$(")
            i += 2
            continue
        ch = line[i]
        if depth and ch == "(":
            depth += 1
        elif depth and ch == ")":
            depth -= 1
        out.append({" ": "\x00", "|": "\x01", ";": "\x02", "&": "\x03"}.get(ch, ch) if depth else ch)
        i += 1
    return "".join(out)


def _unprotect(word):
    return word.replace("\x00", " ").replace("\x01", "|").replace("\x02", ";").replace("\x03", "&")


def _logical_lines(text):
    """(first physical line number, the line with its backslash-newline continuations joined)."""
    pending, start = [], None
    for number, line in enumerate(text.replace("\r\n", "\n").split("\n"), 1):
        if start is None:
            start = number
        if line.endswith("\\") and not line.endswith("\\\\"):
            pending.append(line[:-1] + " ")
            continue
        yield start, "".join(pending) + line
        pending, start = [], None
    if pending:
        yield start, "".join(pending)


def _simple_commands(text):
    """(line number, [words]) of each simple command: continuations joined, heredoc bodies skipped, cut at
    newlines, ``;``, ``&&``, ``||``, ``|`` and ``&``; redirections and shell keywords dropped; array
    assignments kept whole (``A=(x y)``)."""
    skip_until, body, writes = None, [], None
    for number, line in _logical_lines(text):
        if skip_until is not None:
            if line.strip() == skip_until:
                if writes is not None:
                    yield writes[0], [HEREDOC, writes[1], "\n".join(body) + "\n", writes[2]]
                skip_until, body, writes = None, [], None
            else:
                body.append(line.lstrip("\t") if writes and writes[3] else line)
            continue
        heredoc = _HEREDOC.search(line)
        if heredoc:
            skip_until = heredoc.group(1)
            target = _HEREDOC_FILE.match(line)
            if target and (target.group("a") or target.group("b") or target.group("t")):
                writes = (number, target.group("a") or target.group("b") or target.group("t"),
                          "quoted" if target.group("q") else "", bool(target.group("dash")))
            line = line[:heredoc.start()]
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        line = re.sub(r"\s\d*>&-?\d*|\s&>>?", " >", line)  # 2>&1, &>file: plain redirections
        line = re.sub(r"(\b%s\+?=)\(([^()]*)\)" % _NAME, lambda m: m.group(1) + "(" + m.group(2).replace(" ", "\x00") + ")",
                      _protect(line))  # A=(x y): one word
        try:
            lexer = shlex.shlex(line, posix=True, punctuation_chars=";&|")
            lexer.whitespace_split = True
            lexer.commenters = "#"
            words = [_unprotect(w) for w in lexer]
        except ValueError:  # an unclosed quote: not a line this can read
            continue
        current = []
        for word in words + [";"]:
            if word and set(word) <= set(";&|"):
                current = _clean(current)
                if current:
                    yield number, current
                current = []
            else:
                current.append(word)


_KEYWORDS = ("then", "else", "do", "{", "(", "!", "time", "nohup", "exec", "if", "elif", "while", "until")


def _clean(words):
    out, skip = [], False
    for word in words:
        if skip:
            skip = False
            continue
        if _REDIRECT.match(word):
            skip = True
            continue
        if _REDIRECT_GLUED.match(word) and not _PLACEHOLDER.fullmatch(word):
            continue
        out.append(word)
    while out and (out[0] in _KEYWORDS or out[0] in ("[", "[[", "test")):
        if out[0] in ("[", "[[", "test"):
            return []  # a test: no command
        out = out[1:]
    if out and out[0] in ("fi", "done", "esac", "}", ")", ";;") or out and re.fullmatch(r"[^\s()]+\)", out[0]):
        out = out[1:] if len(out) > 1 and not out[0] in ("fi", "done", "esac") else []
    return out


def _split(text):
    try:
        return shlex.split(text)
    except ValueError:
        return text.split()
