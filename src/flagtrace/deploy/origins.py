"""What the layers of a deployment did to the command line, checked against the release's flag table
(adapters' flag_table(): the option strings each release accepts): an option given twice (a chart default
and the user's extraArgs; argparse keeps the last), an option the release's parser does not know (it refuses
it, or a wrapper's parse_known_args drops it), and one accepted only as an abbreviation of a longer flag
(argparse's prefix matching: it breaks on the release that adds a flag sharing the prefix)."""
from ..core.flag_history import present


def _options(tokens, option_name):
    """[(index, option name as the parser looks it up, value or None)] of the tokens after the entry point."""
    out = []
    for i, token in enumerate(tokens):
        text = token.text
        if not text.startswith("--") or text == "--":
            continue
        _, eq, value = text.partition("=")
        name = option_name(text)
        if not eq:
            nxt = tokens[i + 1].text if i + 1 < len(tokens) else None
            value = nxt if nxt is not None and not nxt.startswith("-") else None
        out.append((i, name, value))
    return out


def findings(launch, adapter, version):
    """[{kind, option, message, tokens: [{text, origin}]}] for the launch's command on this release."""
    from ..core.flag_history import version_key

    table = adapter.flag_table() if adapter is not None else None
    if adapter is not None and _runs_wrapper(launch.argv, adapter):
        table = None  # a wrapper's own flags (Dynamo's --discovery-backend) are not in the framework's table
    known = table.releases() if table is not None else []
    inside = bool(known) and version_key(known[0]) <= (version_key(version) or (0,)) <= version_key(known[-1]) + (9,)
    flags = table.flags() if table is not None and inside else {}  # a release the table does not cover: no claims
    out = _entrypoint(launch)
    groups = {}  # canonical option -> [(index, name, value)]
    option_name = adapter.option_name if adapter is not None else (lambda w: w.split("=", 1)[0])
    for index, name, value in _options(launch.tokens, option_name):
        record = flags.get(name)
        known = record is not None and present(record, version) is not False
        canonical = name
        if flags and not known:
            matches = table.prefix_of(name, version)
            if len(matches) == 1:
                out.append(_finding("abbreviation", name, [launch.tokens[index]],
                                    "%s is not an option of %s %s: argparse takes it as an abbreviation of %s, which "
                                    "breaks on the release that adds another option starting with %s"
                                    % (name, table.label, version, matches[0], name)))
                canonical, record = matches[0], flags[matches[0]]
            else:
                why = table.flag_history(name, version)
                ambiguous = " (an ambiguous prefix of %s)" % ", ".join(matches) if len(matches) > 1 else ""
                out.append(_finding("unknown", name, [launch.tokens[index]],
                                    "%s %s does not know %s%s: its parser refuses it%s" % (
                                        table.label, version, name, ambiguous, "; " + why if why else "")))
                continue
        if record is not None:
            canonical = min([canonical] + [a for a in record.get("aliases", []) if a.startswith("--")])
        groups.setdefault(canonical, []).append((index, name, value))
    for canonical, seen in groups.items():
        if len(seen) < 2:
            continue
        parts = ["%s%s from %s" % (name, " " + value if value is not None else "", launch.tokens[i].origin)
                 for i, name, value in seen]
        index, name, value = seen[-1]
        out.append(_finding("duplicate", canonical, [launch.tokens[i] for i, _, _ in seen],
                            "%s is given %d times: %s; the parser keeps the last, %s%s" % (
                                canonical, len(seen), "; ".join(parts), name, " " + value if value is not None else "")))
    return out


def _runs_wrapper(argv, adapter):
    """Whether the command is ``python -m`` of a wrapper module the adapter follows (dynamo.vllm)."""
    return "-m" in argv[1:3] and argv.index("-m") + 1 < len(argv) and argv[argv.index("-m") + 1] in \
        adapter.wrapper_modules


def _entrypoint(launch):
    """The image's entrypoint runs first: a shell the args name (``IMAGE bash -lc '...'``) becomes its argument."""
    entry = [t for t in launch.tokens if t.origin.endswith("image entrypoint")]
    rest = launch.tokens[len(entry):]
    if entry and rest and rest[0].text.rsplit("/", 1)[-1] in ("bash", "sh", "dash", "zsh"):
        return [_finding("entrypoint", rest[0].text, entry + rest[:1],
                         "the image's entrypoint %s runs first and gets %s %s as its arguments (a script for a shell "
                         "needs --entrypoint %s, or command: in Kubernetes)" % (
                             " ".join(t.text for t in entry), rest[0].text, "..." if len(rest) > 1 else "",
                             rest[0].text))]
    return []


def _finding(kind, option, tokens, message):
    return {"kind": kind, "option": option, "message": message,
            "tokens": [{"text": t.text, "origin": t.origin} for t in tokens]}
