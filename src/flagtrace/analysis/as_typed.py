"""What the user wrote, in every value a report shows. flagtrace runs a command with a folder holding a
config.json in place of a model it cannot have here (a hub id, a path on the GPU box: probe/modelconfigs.py);
the framework then carries that folder into its fields (``model_path``, ``served_model_name``, a tokenizer
path, a draft's JSON) and messages. The report puts back what the command named (the request's
``model_typed``, one per ``model_folders``); only ``inputs`` says which folder stood in for what."""
import os
import re


def typed_names(trace):
    """[(pattern matching a stand-in folder, what the command named)], the longest folder first."""
    request = trace.get("request") or {}
    pairs = [(os.path.normpath(folder), typed) for folder, typed in zip(request.get("model_folders") or [],
                                                                         request.get("model_typed") or [])
             if folder and typed and os.path.normpath(folder) != os.path.normpath(typed)]
    pairs.sort(key=lambda pair: -len(pair[0]))
    return [(re.compile(re.escape(folder) + r"/?(?![\w.-])"), typed) for folder, typed in pairs]


def as_typed(doc, names, keep=("inputs",)):
    """``doc`` with every stand-in folder (in any string, list or mapping; not under the keys ``keep``) replaced
    by what the command named."""
    if not names:
        return doc

    def fix(value):
        if isinstance(value, str):
            for pattern, typed in names:
                value = pattern.sub(typed.replace("\\", "\\\\"), value)
            return value
        if isinstance(value, list):
            return [fix(item) for item in value]
        if isinstance(value, tuple):
            return tuple(fix(item) for item in value)
        if isinstance(value, dict):
            return {key: item if key in keep else fix(item) for key, item in value.items()}
        return value

    return fix(doc)
