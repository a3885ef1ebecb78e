"""What the user asked for explicitly: for each field, the option typed on the command line or
in a config file, and the value it asked for."""
from . import conditions as cond


def explicit_requests(trace):
    """field -> {option, typed, source, value[, alias_of, renamed_from]}; the last parse that
    mentions it wins."""
    out = {}
    argv = trace.get("target", {}).get("argv", [])[1:]
    for parse in trace.get("parses", []):
        if parse.get("error"):
            continue
        on_command_line = set(arg.split("=", 1)[0] for arg in argv if isinstance(arg, str))
        for explicit in parse.get("explicit", []):
            source = "cli" if explicit["typed"] in on_command_line else "config"
            value = explicit["value"] if "value" in explicit \
                else (parse.get("namespace") or {}).get(explicit["dest"])
            field = explicit.get("field") or explicit["dest"]  # an adapter names the config field a dest becomes
            out[field] = {"option": explicit["option"], "typed": explicit["typed"], "source": source,
                          "value": value}
            # another option writing the same field: the flag typed is an alias of it
            others = [max(action["options"], key=len) for action in parse.get("actions", [])
                      if action["dest"] == explicit["dest"] and explicit["option"] not in action["options"]
                      and action["options"]]
            if others:
                out[field]["alias_of"] = others[0]
        for write in parse.get("namespace_writes", []):
            source = cond.copied_attribute(write["at"].get("src"), out)
            if source is not None:  # args.tp_size = args.tensor_parallel_size: the request moves along
                out[write["name"]] = dict(out[source], renamed_from=source)
    return out
