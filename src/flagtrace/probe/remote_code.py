"""Remote code a stand-in config names but nothing here has.

A bundled (or fetched) config.json stands for a model that exists only on the hub or the GPU box;
flagtrace ships config.json alone. Where that config's ``auto_map`` names the model's own
configuration class (``configuration_nemotron_h.NemotronHConfig``) and the command trusts remote
code, transformers looks for that .py file next to config.json and fails. For the folders the
command's models were replaced by (``model_folders`` in the request), a *configuration* class
whose file is missing is answered with transformers' own class for the config's ``model_type``,
when transformers has one; the substitution is noted in the trace. Anything else (model classes,
a model type transformers does not know) goes to transformers unchanged.
Standard library only, Python >= 3.9.
"""
import json
import os


def setup(probe):
    probe.imports.on_import("transformers.dynamic_module_utils", lambda module: _patch(probe, module))


def _patch(probe, module):
    orig = module.get_class_from_dynamic_module
    if getattr(orig, "_flagtrace_stand_in", False):  # set up twice (a variant session, a framework process)
        return

    def get_class_from_dynamic_module(class_reference, pretrained_model_name_or_path, *args, **kwargs):
        # read when called: a variant (probe/variants.py) names its own folders
        folders = {os.path.normpath(f) for f in probe.request.get("model_folders") or ()}
        native = _native(folders, class_reference, pretrained_model_name_or_path)
        if native is None:
            if _missing(folders, class_reference, pretrained_model_name_or_path):
                probe.trace.problem("model_config", "%s (remote code named by the config's auto_map) is not here: "
                                                    "flagtrace bundles config.json only and transformers has no "
                                                    "class of its own for this model type; give --model-config DIR "
                                                    "with the model's .py files" % class_reference)
            return orig(class_reference, pretrained_model_name_or_path, *args, **kwargs)
        probe.trace.problem("model_config", "%s (remote code named by the config's auto_map; flagtrace bundles "
                                            "config.json only) stood in by transformers' own %s"
                            % (class_reference, native.__name__))
        return native

    get_class_from_dynamic_module.__wrapped__ = orig
    get_class_from_dynamic_module._flagtrace_stand_in = True
    module.get_class_from_dynamic_module = get_class_from_dynamic_module


def _missing(folders, class_reference, where):
    """The replaced folder a remote class's file is missing from, or None."""
    try:
        folder = os.path.normpath(os.fspath(where))
    except TypeError:
        return None
    if folder not in folders or "--" in class_reference or "." not in class_reference:
        return None
    module_name = class_reference.rsplit(".", 1)[0]
    return None if os.path.isfile(os.path.join(folder, module_name + ".py")) else folder


def _native(folders, class_reference, where):
    """transformers' own configuration class for a missing remote one in a replaced folder, or None."""
    folder = _missing(folders, class_reference, where)
    if folder is None or not class_reference.endswith("Config"):
        return None
    try:
        with open(os.path.join(folder, "config.json"), encoding="utf-8") as fh:
            model_type = json.load(fh).get("model_type")
        from transformers.models.auto.configuration_auto import CONFIG_MAPPING

        return CONFIG_MAPPING[model_type]
    except (OSError, ValueError, KeyError, ImportError, AttributeError):
        return None
