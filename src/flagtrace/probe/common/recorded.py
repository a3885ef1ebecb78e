"""What of a process's command line and environment is recorded: secrets hidden (the one secret rule),
and only the variables the adapters name (patterns such as ``SGLANG_*`` or ``CUDA_VISIBLE_DEVICES``:
adapters.env_patterns, handed to ``flagtrace run``'s processes as $FLAGTRACE_RUN_ENV)."""

REDACTED = "<redacted>"
_SECRET_PARTS = ("api_key", "apikey", "secret", "password", "passwd", "credential")


def is_secret_name(name):
    """True for names that hold credentials (``api_key``, ``--api-key``, ``HF_TOKEN``, ``*_SECRET``)."""
    if not name or not isinstance(name, str):
        return False
    bare = name.lstrip("-").replace("-", "_").lower()
    if any(part in bare for part in _SECRET_PARTS):
        return True
    return bare in ("key", "token") or bare.endswith(("_key", "_token"))


def is_option_word(tok):
    """A word that argparse reads as an option, not as a value: ``-x``, ``--x``, but not ``-1`` or ``-``."""
    if not tok.startswith("-") or tok == "-":
        return False
    try:
        float(tok)
        return False
    except ValueError:
        return True


def redact_argv(argv, remember=None):
    """``argv`` with the value of ``--api-key X`` / ``--api-key=X`` replaced; ``remember(value)`` is called
    with each value hidden (the probe scrubs it wherever else it appears). The word after a secret-named
    option that is itself an option is not its value: ``--allow-credentials --port 2`` is a switch, then
    ``--port``."""
    out = []
    hide_next = False
    for tok in argv:
        if hide_next and is_option_word(tok):
            hide_next = False
        if hide_next:
            if remember is not None:
                remember(tok)
            out.append(REDACTED)
            hide_next = False
            continue
        if tok.startswith("-") and "=" in tok:
            opt, _, value = tok.partition("=")
            if is_secret_name(opt):
                if remember is not None:
                    remember(value)
                out.append(opt + "=" + REDACTED)
                continue
        elif tok.startswith("--") and is_secret_name(tok):
            hide_next = True
        out.append(tok)
    return out


def env_matcher(patterns):
    """(prefixes, names) of ``patterns``: ``X_*`` is a prefix, anything else a whole name."""
    prefixes = tuple(p[:-1] for p in patterns if p.endswith("*"))
    names = frozenset(p for p in patterns if not p.endswith("*"))
    return prefixes, names


def is_relevant(name, matcher):
    """``matcher``: env_matcher's."""
    return name.startswith(matcher[0]) or name in matcher[1]


def relevant_env(environ, matcher):
    """The variables of ``environ`` that ``matcher`` (env_matcher) keeps, a secret's value redacted."""
    out = {}
    for key, value in environ.items():
        if key.startswith(matcher[0]) or key in matcher[1]:
            out[key] = REDACTED if value and is_secret_name(key) else value
    return out
