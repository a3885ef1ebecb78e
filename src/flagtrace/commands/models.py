"""``flagtrace models [--json]``: the bundled model configs (package data, modelconfigs.MODELS):
each hub id, its folder, its model_type and architecture, and the old ids the hub renamed."""
import json
import os

from ..probe import modelconfigs
from ..core.exitcodes import ExitCode

HELP = "list the bundled model configs a hub id or foreign path finds"


def add_arguments(p):
    p.add_argument("--json", action="store_true", help="print the list as JSON")


def listing():
    """{"catalog": folder, "models": [{id, folder, model_type, architectures}], "renamed": {old: new}}."""
    models = []
    for model_id, folder in sorted(modelconfigs.catalog().items(), key=lambda kv: kv[0].lower()):
        try:
            with open(os.path.join(folder, "config.json"), encoding="utf-8") as fh:
                config = json.load(fh)
        except (OSError, ValueError):
            config = {}
        models.append({"id": model_id, "folder": os.path.relpath(folder, modelconfigs.MODELS),
                       "model_type": config.get("model_type"), "architectures": config.get("architectures") or []})
    return {"catalog": modelconfigs.MODELS, "models": models, "renamed": dict(modelconfigs.renamed())}


def run(req):
    return run_models(req.opts, req.out)


def run_models(opts, out):
    doc = listing()
    if opts.json:
        out.write(json.dumps(doc, indent=2) + "\n")
        return ExitCode.OK
    rows = [(m["id"], m["model_type"] or "?", ", ".join(m["architectures"]) or "?", m["folder"]) for m in doc["models"]]
    widths = [max([len(h)] + [len(r[i]) for r in rows]) for i, h in enumerate(("ID", "MODEL_TYPE", "ARCHITECTURE"))]
    for row in [("ID", "MODEL_TYPE", "ARCHITECTURE", "FOLDER")] + rows:
        out.write("%-*s  %-*s  %-*s  %s\n" % (widths[0], row[0], widths[1], row[1], widths[2], row[2], row[3]))
    if doc["renamed"]:
        out.write("\nrenamed on the hub (the old id finds the config under its new name):\n")
        for old, new in sorted(doc["renamed"].items()):
            out.write("  %s -> %s\n" % (old, new))
    out.write("\n%d bundled configs in %s (FLAGTRACE_MODELS overrides). A model not here: the local Hugging Face "
              "cache, else its config.json from the hub (not with --offline / HF_HUB_OFFLINE=1).\n"
              % (len(rows), doc["catalog"]))
    return ExitCode.OK
