"""What a Python interpreter makes of its command line."""

# interpreter options that take a value (attached or the next word); -c / -m end the options
_VALUE_OPTIONS = "XW"
_LONG_WITH_VALUE = ("--check-hash-based-pycs",)


def python_options(argv):
    """What an interpreter makes of its command line (``argv[0]`` is the interpreter):
    {'flags': single-letter options, 'options': the interpreter's options as separate words
    (``-u``, ``-X``, ``dev``), 'mode': script|module|code|stdin|interactive|info, 'target':
    script / module / code, 'args': what follows it}. The one parser of Python command lines:
    flagtrace's launch side (launch/command.py) and analysis of a process tree use it too."""
    flags, options = [], []
    i = 1
    while i < len(argv):
        tok = argv[i]
        if tok == "--":
            i += 1
            break
        if tok == "-" or not tok.startswith("-"):
            break
        if tok.startswith("--"):
            if tok in ("--help", "--version", "--help-env", "--help-xoptions", "--help-all"):
                return {"flags": flags, "options": options, "mode": "info", "target": tok, "args": list(argv[i + 1:])}
            options.append(tok)
            if tok in _LONG_WITH_VALUE and i + 1 < len(argv):
                i += 1
                options.append(argv[i])
            i += 1
            continue
        j = 1
        while j < len(tok):
            ch = tok[j]
            if ch in "cm" or ch in _VALUE_OPTIONS:
                value = tok[j + 1:]
                if not value:
                    i += 1
                    value = argv[i] if i < len(argv) else ""
                if ch in "cm":
                    return {"flags": flags, "options": options, "mode": "code" if ch == "c" else "module",
                            "target": value, "args": list(argv[i + 1:])}
                options += ["-" + ch, value]
                break
            flags.append(ch)
            options.append("-" + ch)
            j += 1
        i += 1
    if i >= len(argv):
        return {"flags": flags, "options": options, "mode": "interactive", "target": None, "args": []}
    if argv[i] == "-":
        return {"flags": flags, "options": options, "mode": "stdin", "target": "-", "args": list(argv[i + 1:])}
    return {"flags": flags, "options": options, "mode": "script", "target": argv[i], "args": list(argv[i + 1:])}
