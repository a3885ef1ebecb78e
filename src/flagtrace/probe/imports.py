"""Run a callback right after a named module has executed, before anyone imports from it.

Standard library only, Python >= 3.9.
"""
import importlib.abc
import importlib.util
import sys


class _LoaderProxy(importlib.abc.Loader):
    def __init__(self, loader, callback):
        self._loader = loader
        self._callback = callback

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module):
        module.__loader__ = self._loader
        if getattr(module, "__spec__", None) is not None:
            module.__spec__.loader = self._loader
        self._loader.exec_module(module)
        self._callback(module)

    def __getattr__(self, name):
        return getattr(self._loader, name)


class PostImportHooks(importlib.abc.MetaPathFinder):
    """``on_import(name, callback)``: callback(module) once the module has executed."""

    def __init__(self):
        self._callbacks = {}
        self._busy = set()

    def install(self):
        if self not in sys.meta_path:
            sys.meta_path.insert(0, self)

    def on_import(self, name, callback):
        module = sys.modules.get(name)
        if module is not None:
            callback(module)
            return
        self._callbacks.setdefault(name, []).append(callback)

    def find_spec(self, name, path=None, target=None):
        if name not in self._callbacks or name in self._busy:
            return None
        self._busy.add(name)
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            spec = None
        finally:
            self._busy.discard(name)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return None
        # Callbacks are taken when the module executes, not here: asking find_spec() whether a
        # package exists (``importlib.util.find_spec("torch")``) is not importing it.
        def run_all(module):
            for callback in self._callbacks.pop(name, ()):
                callback(module)

        spec.loader = _LoaderProxy(spec.loader, run_all)
        return spec
