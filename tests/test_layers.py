"""The layering of docs/design.md, checked on the source (parsed: imports inside functions count too): every
module's layer (LAYERS) imports only lower layers, and its own package; the working packages never import each
other; no circle of imports; every module imports on its own in a fresh interpreter. Also: the probe imports
only the standard library and itself; no module but the CLI imports a verb (commands/); nothing outside a
framework's record and adapters names a framework."""
import ast
import concurrent.futures
import os
import re
import subprocess
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
    ("engine/resolve.py", "sglang.launch_server"): "the example of a launch command when none was given",
    ("engine/whatif/planning.py", "sglang.launch_server"): "the example of a launch command when none was given",
}

# Bottom to top. A module may import modules of lower layers and of its own package (its folder below
# flagtrace/, or itself at the top); the working packages, one layer, never import each other.
LAYERS = [
    ("probe", ("probe",)),  # runs inside the target: the standard library only (below)
    ("contracts and data", ("core", "__init__.py")),  # runs nothing: records, the request, exit codes, GPU profiles
    ("working packages", ("adapters", "envs", "deploy", "launch", "analysis", "report")),
    ("engine", ("engine",)),  # where adapters, launching and analysis meet
    ("verbs", ("commands",)),
    ("command line", ("cli.py",)),
    ("python -m flagtrace", ("__main__.py",)),
]
# Files that act when they are loaded (they run in the target or on the remote host, or run the CLI):
# imported on their own, they would do their job, not show their imports.
RUN_ON_LOAD = {
    "__main__.py": "runs the command line",
    "probe/bootstrap/sitecustomize.py": "activates the probe in the process that loads it (flagtrace run)",
    "probe/bootstrap/loader.py": "the one-file loader flagtrace run writes; runs the bootstrap it names",
    "launch/agent_program.py": "the remote agent's source, sent over the transport and run there",
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


def _package(rel):
    """The package a module belongs to for the layer rule: its first folder, or the file itself at the top."""
    return rel.split("/")[0]


def _layer(rel):
    top = _package(rel)
    return next(i for i, (_, tops) in enumerate(LAYERS) if top in tops)


def _graph():
    """{module rel path: {(line, imported module rel path)}} over flagtrace's own modules; ``from pkg import
    name`` is an edge to pkg/name.py where that is a module, else to pkg."""
    files = {rel: tree for rel, tree in _modules(SRC)}
    by_name = {}
    for rel in files:
        parts = rel[:-3].split("/")
        if parts[-1] == "__init__":
            parts = parts[:-1]
        by_name[".".join(["flagtrace"] + parts)] = rel
    edges = {}
    for rel, tree in files.items():
        out = edges.setdefault(rel, set())
        for line, name in _imported(rel, tree):
            if name in by_name and by_name[name] != rel:
                out.add((line, by_name[name]))
    # an edge to a package also named a submodule (``from pkg import sub``): keep the submodule's only
    for rel in edges:
        subs = {target for _, target in edges[rel] if not target.endswith("__init__.py")}
        edges[rel] = {(line, target) for line, target in edges[rel] if not (
            target.endswith("__init__.py") and any(s.startswith(target[:-len("__init__.py")]) for s in subs)
            and _only_submodules(rel, files[rel], line))}
    return edges


def _only_submodules(rel, tree, line):
    """Whether the ``from X import ...`` on ``line`` names only submodules of X."""
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.lineno == line:
            here = ["flagtrace"] + rel.split("/")[:-1]
            base = here[:len(here) - node.level + 1] if node.level else []
            module = ".".join(base + ([node.module] if node.module else [])) if node.level else node.module
            folder = os.path.join(SRC, *module.split(".")[1:])
            return all(os.path.exists(os.path.join(folder, a.name + ".py")) or
                       os.path.isdir(os.path.join(folder, a.name)) for a in node.names)
    return False


def test_every_module_has_a_layer():
    missing = sorted({_package(rel) for rel, _ in _modules(SRC)} - {t for _, tops in LAYERS for t in tops})
    assert not missing, "give these a layer in LAYERS: %s" % missing


def test_imports_run_down_the_layers():
    bad = []
    for rel, targets in sorted(_graph().items()):
        for line, target in sorted(targets):
            if _package(target) == _package(rel) or _layer(target) < _layer(rel):
                continue
            why = "another working package" if _layer(target) == _layer(rel) else "a higher layer"
            bad.append("%s:%d imports %s (%s, %s)" % (rel, line, target, why, LAYERS[_layer(target)][0]))
    assert not bad, "imports run one way (LAYERS):\n" + "\n".join(bad)


def test_no_circle_of_imports():
    graph = {rel: {t for _, t in targets} for rel, targets in _graph().items()}
    index, low, stack, on, circles, counter = {}, {}, [], set(), [], [0]

    def visit(v):  # Tarjan's strongly connected components
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                circles.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    assert not circles, "circles of imports (imports inside functions count):\n" + "\n".join(map(str, circles))


def _module_name(rel):
    parts = rel[:-3].split("/")
    return ".".join(["flagtrace"] + (parts[:-1] if parts[-1] == "__init__" else parts))


def test_every_module_imports_on_its_own():
    """As pip-tools' test_circular_imports: each module in a fresh interpreter, alone."""
    names = [_module_name(rel) for rel, _ in _modules(SRC) if rel not in RUN_ON_LOAD]

    def load(name):
        proc = subprocess.run([sys.executable, "-c", "import %s" % name], capture_output=True, text=True,
                              env=dict(os.environ, PYTHONPATH=os.path.join(ROOT, "src")), timeout=120)
        return name, proc.returncode, proc.stderr.strip().splitlines()[-1:] if proc.returncode else []

    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        failed = ["%s: %s" % (name, " ".join(last)) for name, code, last in pool.map(load, names) if code]
    assert len(names) > 100
    assert not failed, "\n".join(failed)


def test_the_run_on_load_list_names_files_that_exist():
    assert all(os.path.isfile(os.path.join(SRC, rel)) for rel in RUN_ON_LOAD)



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
        if rel.startswith(("adapters/", "probe/adapters/", "core/frameworks/")):
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
    assert not bad, "framework knowledge lives in its record and adapter (core/frameworks/, adapters/, " \
        "probe/adapters/):\n" + "\n".join(bad)


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


def test_what_is_named_by_string_exists():
    """What is imported late, by name (a reporter, a framework's adapter and pin generator, a verb), exists:
    the import graph above cannot see these."""
    import importlib

    from flagtrace import report
    from flagtrace.commands import VERBS, verb
    from flagtrace.core.frameworks import ADAPTERS, FRAMEWORKS

    named = ["flagtrace.report.%s" % spec for kinds in report.REPORTERS.values() for spec in kinds.values()]
    named += [path for _, path in ADAPTERS]
    named += ["%s:pin_file" % r.release_env["pins_module"] for r in FRAMEWORKS if r.release_env.get("pins_module")]
    named += ["flagtrace.probe.adapters.%s:supported_range" % r.name for r in FRAMEWORKS]
    missing = []
    for spec in named:
        module, _, name = spec.partition(":")
        if not hasattr(importlib.import_module(module), name):
            missing.append(spec)
    assert not missing, missing
    assert all(callable(verb(v).run) for v in VERBS)
