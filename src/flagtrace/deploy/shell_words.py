"""Shell text as words, read statically, beneath every reader: a script cut into simple commands with their
line numbers (continuations joined; cut at newlines, ``;``, ``&&``, ``||``, ``|`` and ``&``), ``$VAR`` /
``${VAR}`` expanded from the container's environment (an unknown one stays as typed), and the framework
command inside a shell script a container runs (``bash -c "ray start ...; exec vllm serve ..."``: ``exec``
and ``VAR=value`` prefixes dropped, each word's origin the script's line)."""
import re
import shlex

from .entry_points import recognise, wrapper_of
from .model import Token

_VAR = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))")


def _script_of(tokens):
    """(the script token, the tokens after it) for ``SHELL [-opts] -c SCRIPT ...``, else (None, None)."""
    words = [t.text for t in tokens]
    if not words or words[0].rsplit("/", 1)[-1] not in ("sh", "bash", "dash", "zsh"):
        return None, None
    for i, word in enumerate(words[1:], 1):
        if word.startswith("-") and "c" in word[1:] and not word.startswith("--"):
            return (tokens[i + 1], tokens[i + 2:]) if i + 1 < len(tokens) else (None, None)
        if not word.startswith("-"):
            break
    return None, None


def commands(script):
    """The simple commands of a script: [(its line number in the script, [words])]."""
    text = script.replace("\\\r\n", " ").replace("\\\n", " ")
    out = []
    for number, line in enumerate(text.split("\n"), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        try:
            lexer = shlex.shlex(line, posix=True, punctuation_chars=";&|")
            lexer.whitespace_split = True
            lexer.commenters = "#"
            words = list(lexer)
        except ValueError:  # an unclosed quote: this line is not one we can read
            continue
        current = []
        for word in words:
            if word and set(word) <= set(";&|"):
                if current:
                    out.append((number, current))
                current = []
            else:
                current.append(word)
        if current:
            out.append((number, current))
    return out


def expand_vars(word, env):
    return _VAR.sub(lambda m: env.get(m.group(1) or m.group(2), m.group(0)), word)


def unwrap(tokens, env):
    """The framework command a ``SHELL -c SCRIPT`` runs, as tokens whose origin names the script's line;
    None when the tokens are not a shell script or it runs no framework."""
    script, _ = _script_of(tokens)
    if script is None:
        return None
    for number, words in commands(script.text):
        while words and (words[0] == "exec" or re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", words[0])):
            words = words[1:]
        if words[:1] == ["eval"] and len(words) == 2:  # eval "exec vllm serve ...": the string is the command
            try:
                words = shlex.split(words[1])
            except ValueError:
                continue
            while words and words[0] == "exec":
                words = words[1:]
        words = [expand_vars(w, env) for w in words]
        if recognise(words) or wrapper_of(words):
            origin = "%s, line %d of the script" % (script.origin, number)
            return [Token(w, origin) for w in words]
    return None

