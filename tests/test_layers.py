"""The layering of DESIGN.md, checked on the source (parsed, never imported): the probe imports only
the standard library and itself; no module but the CLI imports a verb (commands/); nothing outside
the adapters names a framework."""
import ast
import os
import re
import sys

from ft_support import ROOT

SRC = os.path.join(ROOT, "src", "flagtrace")
PROBE = os.path.join(SRC, "probe")

# Imports in the probe of the target's own packages: the probe runs inside the target's interpreter,
# and these are imported only there, at run time, where the framework already has them.
PROBE_TARGET_IMPORTS = {
    ("remote_code.py", "transformers.models.auto.configuration_auto"):
        "the config class a model's remote code names, from the target's transformers",
    ("sim/gpu.py", "triton.backends.compiler"): "the simulated GPU answers triton's driver with triton's own GPUTarget",
    ("sim/gpu.py", "torch"): "the simulated GPU answers triton's driver with the target's torch device",
    ("adapters/sglang_compat.py", "torch.cpu"): "an older SGLang's CPU feature probe, answered from the target's torch",
    ("modelconfigs.py", "tomli"): "the catalog's TOML on Python < 3.11, where the target has tomli (else no catalog)",
}

# Strings outside the adapters that hold a framework's module name, each a usage example in an error message.
FRAMEWORK_STRINGS = {
    ("launch/command.py", "sglang.launch_server"): "the example of a launch command when none was given",
    ("commands/tracing.py", "sglang.launch_server"): "the example of a launch command when none was given",
    ("whatif/planning.py", "sglang.launch_server"): "the example of a launch command when none was given",
}

FRAMEWORK = re.compile(r"sglang|vllm|dynamo", re.IGNORECASE)
FRAMEWORK_MODULE = re.compile(r"\b(?:sglang|vllm|dynamo)(?:\.\w+)+")


def _modules(top):
    for base, dirs, files in os.walk(top):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(files):
            if name.endswith(".py"):
                path = os.path.join(base, name)
                with open(path, encoding="utf-8") as fh:
                    yield os.path.relpath(path, top).replace(os.sep, "/"), ast.parse(fh.read(), path)


def _imported(rel, tree, package="flagtrace"):
    """Each absolute module name ``tree`` (at ``rel`` below the package) imports, relative ones resolved:
    [(line, name)]."""
    here = [package] + rel.split("/")[:-1]
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = here[:len(here) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module
            out.append((node.lineno, module))
            out += [(node.lineno, "%s.%s" % (module, a.name)) for a in node.names]  # from pkg import submodule
    return out


def test_the_probe_imports_only_the_standard_library_and_itself():
    bad = []
    for rel, tree in _modules(PROBE):
        for line, name in _imported("probe/" + rel, tree):
            if name.split(".")[0] in sys.stdlib_module_names or name == "flagtrace.probe" or \
                    name.startswith("flagtrace.probe."):
                continue
            if any(r == rel and (name == m or name.startswith(m + ".")) for r, m in PROBE_TARGET_IMPORTS):
                continue
            bad.append("probe/%s:%d imports %s" % (rel, line, name))
    assert not bad, "the probe is shipped as source to interpreters with only the framework installed:\n" + \
        "\n".join(bad)


def test_the_code_both_sides_run_imports_nothing():
    """probe/common is written into every process's bootstrap (supervise.bootstrap_text): one file, no imports."""
    bad = ["probe/common/%s:%d imports %s" % (rel, line, name)
           for rel, tree in _modules(os.path.join(PROBE, "common")) for line, name in _imported("probe/common/" + rel, tree)]
    assert not bad, "\n".join(bad)


def test_no_module_but_the_cli_imports_a_verb():
    from flagtrace.commands import VERBS

    verbs = {"flagtrace.commands." + v for v in VERBS}
    bad = []
    for rel, tree in _modules(SRC):
        if rel in ("cli.py", "commands/__init__.py"):
            continue
        for line, name in _imported(rel, tree):
            if name in verbs or any(name.startswith(v + ".") for v in verbs):
                bad.append("%s:%d imports %s" % (rel, line, name))
    assert not bad, "a verb is the CLI's to run; shared code lives beside the verbs:\n" + "\n".join(bad)


def _names(tree):
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            yield node.id
        elif isinstance(node, ast.Attribute):
            yield node.attr
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            yield node.name
        elif isinstance(node, ast.arg):
            yield node.arg
        elif isinstance(node, ast.keyword) and node.arg:
            yield node.arg
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            if isinstance(node, ast.ImportFrom) and node.module:
                yield node.module
            for alias in node.names:
                yield alias.name
                if alias.asname:
                    yield alias.asname


def _docstrings(tree):
    return {id(node.body[0].value) for node in ast.walk(tree)
            if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
            and ast.get_docstring(node, clean=False) is not None}


def test_nothing_outside_the_adapters_names_a_framework():
    bad = []
    for rel, tree in _modules(SRC):
        if rel.startswith(("adapters/", "probe/adapters/")):
            continue
        if FRAMEWORK.search(rel):
            bad.append("%s: a module named for a framework" % rel)
        bad += ["%s: the name %s" % (rel, name) for name in sorted(set(_names(tree))) if FRAMEWORK.search(name)]
        docs = _docstrings(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs:
                for found in FRAMEWORK_MODULE.findall(node.value):
                    if (rel, found) not in FRAMEWORK_STRINGS:
                        bad.append("%s:%d: the module %s" % (rel, node.lineno, found))
    assert not bad, "framework knowledge lives in its adapter (adapters/, probe/adapters/):\n" + "\n".join(bad)


def test_the_allow_lists_hold_no_stale_entry():
    used = set()
    for rel, tree in _modules(PROBE):
        used.update((rel, name) for _, name in _imported("probe/" + rel, tree))
    for rel, tree in _modules(SRC):
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                used.update((rel, found) for found in FRAMEWORK_MODULE.findall(node.value))
    stale = [k for k in list(PROBE_TARGET_IMPORTS) + list(FRAMEWORK_STRINGS) if k not in used]
    assert not stale, stale
