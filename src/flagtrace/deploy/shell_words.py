"""Shell words beneath every reader: which token of ``SHELL [-opts] -c SCRIPT ...`` is the script (read by
shell_script.py), and ``$VAR`` / ``${VAR}`` expanded from a known environment (an unknown one stays as typed)."""
import re

SHELLS = ("sh", "bash", "dash", "zsh")
_VAR = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))")


def script_of(tokens):
    """(the script token, the tokens after it) for ``SHELL [-opts] -c SCRIPT ...``, else (None, None)."""
    words = [t.text for t in tokens]
    if not words or words[0].rsplit("/", 1)[-1] not in SHELLS:
        return None, None
    for i, word in enumerate(words[1:], 1):
        if word.startswith("-") and "c" in word[1:] and not word.startswith("--"):
            j = i + 1 + (words[i + 1:i + 2] == ["--"])  # bash -lc -- SCRIPT: ``--`` ends the options
            return (tokens[j], tokens[j + 1:]) if j < len(tokens) else (None, None)
        if not word.startswith("-"):
            break
    return None, None


def expand_vars(word, env):
    return _VAR.sub(lambda m: env.get(m.group(1) or m.group(2), m.group(0)), word)
