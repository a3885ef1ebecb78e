"""Load the probe from its source folder under a private name; add nothing to sys.path.

Shared by the ``python -c`` bootstrap of ``flagtrace explain`` (launch/local.py embeds this
file's source) and by the ``sitecustomize`` of ``flagtrace run`` (which executes this file when a
process first imports a watched framework). Standard library only, Python >= 3.9.
"""


def load_probe(probe_dir, name="_flagtrace_probe"):
    """The probe package found in ``probe_dir``, imported as ``name`` (once per process)."""
    import sys

    module = sys.modules.get(name)
    if module is not None:
        return module
    import importlib.util

    spec = importlib.util.spec_from_file_location(name, probe_dir + "/__init__.py",
                                                  submodule_search_locations=[probe_dir])
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
