"""Stand-ins for native modules that cannot load without a GPU driver.

Used only under simulation, and only where the real import fails or the module is absent:
the real module is always tried first. Which modules may be stood in for, and any attribute
values they must carry, is data (standins.json). Every stand-in used is recorded with why.
Standard library only, Python >= 3.9.
"""
import importlib.abc
import importlib.machinery
import importlib.util
import json
import os
import sys
import types

_HERE = os.path.dirname(os.path.abspath(__file__))


def load_section(name, default=None):
    """One section of standins.json."""
    with open(os.path.join(_HERE, "standins.json"), encoding="utf-8") as fh:
        return json.load(fh).get(name, default)


def load_table():
    return load_section("modules")


def load_audited():
    """{"tools": [...], "libraries": [...]} whose use is listed when not simulated (standins.json)."""
    return load_section("audited", {})


def load_not_simulated():
    """{text an error may carry: what is not simulated} (standins.json ``not_simulated``)."""
    return load_section("not_simulated", {})


def load_native_builds():
    """{variable: {"value", "vendors", "why"}}: a framework's import-time native build and the
    framework's own variable that switches it off (standins.json ``native_builds``)."""
    return load_section("native_builds", {})


class _Stub:
    """Anything: callable, attribute-rich, usable as a base class, falsy."""

    def __init__(self, name):
        self.__dict__["_name"] = name

    def __getattr__(self, name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return _Stub(self._name + "." + name)

    def __call__(self, *args, **kwargs):
        if len(args) == 1 and callable(args[0]) and not kwargs:
            return args[0]  # used as a decorator
        return _Stub(self._name + "()")

    def __mro_entries__(self, bases):
        return (object,)

    def __bool__(self):
        return False

    def __iter__(self):
        return iter(())

    def __repr__(self):
        return "<flagtrace stand-in %s>" % self._name


class StandInModule(types.ModuleType):
    def __getattr__(self, name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        value = _Stub(self.__name__ + "." + name)
        setattr(self, name, value)
        return value


def _fill(module, entry):
    module.__class__ = StandInModule
    module.__path__ = []
    module.__flagtrace_stand_in__ = True
    for key, value in (entry.get("attrs") or {}).items():
        setattr(module, key, value)


class _StandInLoader(importlib.abc.Loader):
    def __init__(self, owner, top, reason):
        self.owner = owner
        self.top = top
        self.reason = reason

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        entry = self.owner.table.get(module.__name__) or {}
        _fill(module, entry)
        self.owner.note(module.__name__, self.reason)


class _TryRealLoader(importlib.abc.Loader):
    """Runs the real module; if it raises, the module becomes a stand-in instead."""

    def __init__(self, owner, real, top):
        self.owner = owner
        self.real = real
        self.top = top

    def create_module(self, spec):
        self.error = None
        try:
            return self.real.create_module(spec)
        except Exception as exc:  # an extension module fails here, when it is loaded
            self.error = exc
            return None

    def exec_module(self, module):
        try:
            if self.error is not None:
                raise self.error
            self.real.exec_module(module)
        except Exception as exc:
            name = module.__name__
            for sub in [m for m in sys.modules if m.startswith(name + ".")]:
                sys.modules.pop(sub, None)
            keep = {k: module.__dict__[k] for k in ("__name__", "__spec__", "__loader__", "__file__")
                    if k in module.__dict__}
            module.__dict__.clear()
            module.__dict__.update(keep)
            _fill(module, self.owner.table.get(name) or {})
            reason = "real import failed: %s: %s" % (type(exc).__name__, str(exc).splitlines()[0][:160]
                                                     if str(exc) else "")
            self.owner.failed.add(name)
            self.owner.note(name, reason)

    def __getattr__(self, name):
        return getattr(self.real, name)


class StandIns(importlib.abc.MetaPathFinder):
    def __init__(self, probe, profile):
        self.probe = probe
        self.table = {k: v for k, v in load_table().items()
                      if profile.get("vendor") in v.get("vendors", ["nvidia", "amd"])}
        self.tops = {name.split(".", 1)[0] for name in self.table}
        self.failed = set()  # stood-in modules: their submodules are stood in too
        self.used = []
        self._busy = set()

    def install(self):
        # After the post-import hooks: a module stood in for still gets its callbacks (amdsmi's answers).
        hooks = [i for i, finder in enumerate(sys.meta_path) if finder is self.probe.imports]
        sys.meta_path.insert(hooks[0] + 1 if hooks else 0, self)

    def note(self, name, reason):
        entry = "%s (%s)" % (name, reason)
        if entry in self.used:
            return
        self.used.append(entry)
        self.probe.trace.simulation = dict(self.probe.trace.simulation or {}, stand_ins=self.used)

    def find_spec(self, name, path=None, target=None):
        top = name.split(".", 1)[0]
        if top not in self.tops or name in self._busy:
            return None
        parent = sys.modules.get(name.rpartition(".")[0]) if "." in name else None
        if any(name == f or name.startswith(f + ".") for f in self.failed) \
                or getattr(parent, "__flagtrace_stand_in__", False):
            return importlib.machinery.ModuleSpec(name, _StandInLoader(self, top, "parent stood in"),
                                                  is_package=True)
        if name != top and name not in self.table:
            return None  # an ordinary submodule of a package that has a stood-in part
        self._busy.add(name)
        try:
            real = importlib.util.find_spec(name)
        except Exception:
            real = None
        finally:
            self._busy.discard(name)
        if real is None:
            if name != top and name not in self.table:
                return None
            # Looking it up already counts: targets test availability with find_spec alone.
            self.note(name, "not installed")
            return importlib.machinery.ModuleSpec(name, _StandInLoader(self, top, "not installed"),
                                                  is_package=True)
        if real.loader is not None and name in self.table:
            real.loader = _TryRealLoader(self, real.loader, top)
        return real
