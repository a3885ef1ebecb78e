"""Entry point inside the target interpreter: set up the recorder, run the target as
``python -m MOD`` / ``python SCRIPT`` / ``python -c CODE`` would, write the trace.

Standard library only, Python >= 3.9.
"""
import contextlib
import functools
import json
import os
import runpy
import sys
import traceback

from . import hooks, tempdir
from .imports import PostImportHooks
from .mainmodule import MainModuleHooks
from .recorder import Recorder, frame_info
from .tracebuild import TraceBuilder


def _resolve(module, qualname):
    owner = module
    parts = qualname.split(".")
    for part in parts[:-1]:
        owner = getattr(owner, part)
    return owner, parts[-1]


class Probe:
    def __init__(self, request):
        self.request = request
        self.trace = TraceBuilder(request)
        self.recorder = Recorder(self.trace)
        self.trace.recorder = self.recorder
        self.imports = PostImportHooks()
        self.main_hooks = MainModuleHooks()
        self.trace_path = request["trace_path"]

    # -- setup --------------------------------------------------------------------
    def install(self):
        tempdir.redirect(self.request)
        if not self.request.get("observe", True):
            # Simulation only, nothing recorded: the baseline that benchmarks compare against.
            self.trace.logging_on = False
            self.trace.env_on = False
            self._patch_os_exit()
            self.imports.install()
            return
        hooks.install_argparse(self.trace, self._parsed if self.request.get("input_error") else None)
        hooks.install_logging(self.trace)
        hooks.install_environ(self.trace)
        self._patch_os_exit()
        self.imports.install()
        for spec in self.request.get("watch", []):
            self._on_name(spec, self._watch)
        for spec in self.request.get("stop_at", []):
            self._on_name(spec, self._stop_at)

    def setup(self, names=None):
        """Adapter-provided set-up steps (default: the request's ``setup``); with install(),
        all a probe needs before its target runs, whoever runs it (run() here, the interpreter
        itself under ``flagtrace run``)."""
        for name in self.request.get("setup", []) if names is None else names:
            _run_setup(self, name)

    def add_watch(self, spec):
        self.request.setdefault("watch", []).append(spec)
        self._on_name(spec, self._watch)

    def add_stop_after(self, spec):
        self.request.setdefault("stop_at", []).append(spec + " (on return)")
        self._on_name(spec, self._stop_after)

    def _main_names(self):
        mode, target = self.request["mode"], self.request["target"]
        names = {"__main__"}
        if mode == "module":
            names.add(target)
        elif mode == "script":
            names.add(os.path.splitext(os.path.basename(target))[0])
        return names

    def _on_name(self, spec, action):
        module, _, qualname = spec.partition(":")
        callback = functools.partial(action, spec, qualname)
        if module in self._main_names():
            self.main_hooks.on_define(qualname, callback)
        else:
            self.imports.on_import(module, callback)

    def _watch(self, spec, qualname, module):
        try:
            owner, name = _resolve(module, qualname)
            klass = getattr(owner, name)
        except AttributeError:
            self.trace.problem("spec", "watch: %s has no class %s" % (module.__name__, qualname))
            return
        if not isinstance(klass, type):
            self.trace.problem("spec", "watch: %s is not a class" % spec)
            return
        self.recorder.watch_root_class(klass)

    def _stop_at(self, spec, qualname, module):
        try:
            owner, name = _resolve(module, qualname)
            raw = owner.__dict__[name] if isinstance(owner, type) else getattr(owner, name)
        except (AttributeError, KeyError):
            self.trace.problem("spec", "stop-at: %s has no %s" % (module.__name__, qualname))
            return
        probe = self
        func = raw.__func__ if isinstance(raw, (staticmethod, classmethod)) else raw

        @functools.wraps(func)
        def intercept(*args, **kwargs):
            probe.trace.stopped(spec, args, kwargs, sys._getframe(1))
            probe.finish(0, hard=True)

        if isinstance(raw, (staticmethod, classmethod)):
            intercept = type(raw)(intercept)
        setattr(owner, name, intercept)

    def _stop_after(self, spec, qualname, module):
        """Stop when ``spec`` returns: resolution is complete, nothing heavy has started."""
        try:
            owner, name = _resolve(module, qualname)
            func = getattr(owner, name)
        except AttributeError:
            self.trace.problem("spec", "stop-at: %s has no %s" % (module.__name__, qualname))
            return
        probe = self

        @functools.wraps(func)
        def stop_on_return(*args, **kwargs):
            result = func(*args, **kwargs)
            probe.trace.stopped(spec + " (returned)", [result], {}, sys._getframe(1))
            probe.finish(0, hard=True)

        setattr(owner, name, stop_on_return)

    def _patch_os_exit(self):
        orig = os._exit
        probe = self

        def _exit(code):
            if not probe.trace.written:
                probe.trace.exited(code)
                probe.write()
            orig(code)

        os._exit = _exit
        self._real_exit = orig

    @contextlib.contextmanager
    def quiet(self):
        """The probe's own changes (PATH for a simulated nvidia-smi) are not the target's."""
        saved, self.trace.env_on = self.trace.env_on, False
        try:
            yield
        finally:
            self.trace.env_on = saved  # off for good where nothing is recorded (observe: False)

    # -- run ----------------------------------------------------------------------
    def write(self):
        try:
            if not self.trace.written:
                self._unfired()
            self.trace.write_file(self.trace_path)
        except Exception:
            sys.stderr.write("flagtrace probe: could not write the trace\n")
            traceback.print_exc()

    def _parsed(self):
        """The framework's parser accepted the command that flagtrace's own input check refused
        (``request["input_error"]``, a model it cannot stand in for): the check's answer stands,
        and nothing past the parser runs."""
        self.trace.outcome = {"status": "stopped", "seq": self.trace._next(),
                              "stop": "the framework's parser (flagtrace's input check: %s)"
                                      % self.request["input_error"][:300]}
        self.finish(64, hard=True)

    def finish(self, code, hard=False):
        """Write the trace and end. ``hard`` (at the stop point) skips the target's atexit
        handlers and threads: serving never started, so there is nothing to wind down."""
        self.write()
        if not hard:
            sys.exit(code)
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:
                pass
        self._real_exit(code)

    def _unfired(self):
        """Problems for ``--watch`` / ``--stop-at`` specs the user typed whose name never
        appeared: a module that does not exist, a script that defines no such name. (Adapter
        specs may name classes that only some versions have: those stay silent.)"""
        typed = set(self.request.get("user_specs", ()))
        status = self.trace.outcome.get("status")
        pending = [cb for _, cb in self.main_hooks.pending]
        for callbacks in self.imports._callbacks.values():
            pending += callbacks
        for callback in pending:
            spec = callback.args[0] if isinstance(callback, functools.partial) and callback.args else None
            if not isinstance(spec, str) or spec not in typed:
                continue
            kind = "watch" if callback.func == self._watch else "stop-at"
            module, _, qualname = spec.partition(":")
            if module in self._main_names():
                if status in ("completed", "stopped"):
                    self.trace.problem("spec", "%s: %s defines no %s" % (kind, self.request["target"], qualname))
                continue
            if _find_spec(module) is None:
                self.trace.problem("spec", "%s: no module named %s (in %s)" % (kind, module, sys.executable))
            elif status in ("completed", "stopped"):
                self.trace.problem("spec_unused", "the target never imported %s (%s %s)" % (module, kind, spec))

    @staticmethod
    def _missing_target(mode, target):
        if mode == "script":
            return None if os.path.isfile(target) else "script not found: %s" % target
        if mode != "module":
            return None
        import importlib.util

        try:
            spec = importlib.util.find_spec(target)
        except ModuleNotFoundError:
            spec = None
        except Exception:  # the package itself fails to import: that is the target's own error
            return None
        return None if spec is not None else "No module named %s in %s" % (target, sys.executable)

    def run(self):
        req = self.request
        mode, target = req["mode"], req["target"]
        main = sys.modules["__main__"]
        for name in [n for n in vars(main) if n not in ("__builtins__", "__name__")]:
            delattr(main, name)
        # What the interpreter gives every __main__ (a missing __doc__ would find builtins').
        main.__dict__.update({"__doc__": None, "__annotations__": {}})
        missing = self._missing_target(mode, target)
        if missing:
            self.trace.outcome = {"status": "no_target", "message": missing}
            self.finish(3)
        self.trace.argv0 = [target if mode != "code" else "-c"] + list(req["args"])
        self.main_hooks.start()
        try:
            if mode == "module":
                sys.argv = [target] + list(req["args"])
                sys.path[0] = os.getcwd()
                runpy._run_module_as_main(target, alter_argv=True)
            elif mode == "script":
                sys.argv = [target] + list(req["args"])
                sys.path[0] = os.path.dirname(os.path.realpath(target))
                with open(target, "rb") as fh:
                    source = fh.read()
                path = os.path.abspath(target)  # as python does for __main__ since 3.9
                code = compile(source, path, "exec")
                import importlib.machinery

                main.__dict__.update({"__file__": path, "__cached__": None, "__spec__": None,
                                      "__loader__": importlib.machinery.SourceFileLoader("__main__", path),
                                      "__package__": None})
                exec(code, main.__dict__)
            else:
                sys.argv = ["-c"] + list(req["args"])
                exec(compile(target, "<string>", "exec"), main.__dict__)
        except SystemExit as exc:
            code = exc.code
            if code is None or code == 0:
                self.trace.completed()
            else:
                self.trace.exited(code if isinstance(code, int) else 1)
            self.write()
            raise
        except BaseException as exc:  # the target's own failure: record, then fail as Python would
            self.trace.raised(exc)
            _print_target_exception(exc)
            self.finish(1)
        self.trace.completed()
        self.finish(0)


def _print_target_exception(exc):
    """The traceback python would print: without the probe's own frames (its runner and the
    wrappers around watched methods)."""
    try:
        te = traceback.TracebackException(type(exc), exc, exc.__traceback__)
        seen = set()
        todo = [te]
        while todo:
            item = todo.pop()
            if item is None or id(item) in seen:
                continue
            seen.add(id(item))
            item.stack = traceback.StackSummary.from_list(
                [f for f in item.stack if not f.filename.startswith(_PROBE_DIR)])
            todo += [item.__cause__, item.__context__]
        sys.stderr.write("".join(te.format()))
    except Exception:
        traceback.print_exception(type(exc), exc, exc.__traceback__)


_PROBE_DIR = os.path.dirname(os.path.abspath(__file__))


def _find_spec(name):
    import importlib.util

    try:
        return importlib.util.find_spec(name)
    except Exception:  # a missing parent package, or one that fails to import
        return None


CURRENT = None  # the probe of this process (a target that forks per command retargets its trace)


def main(request_path):
    global CURRENT
    with open(request_path, encoding="utf-8") as fh:
        request = json.load(fh)
    probe = CURRENT = Probe(request)
    probe.install()
    probe.setup()
    if request.get("variants") is not None:  # one import, a fork per variant (variants.py)
        from .variants import run_all

        run_all(probe)
    probe.run()


def _run_setup(probe, name):
    """Adapter-provided set-up steps (hardware simulation, framework hooks)."""
    module = __import__(__package__ + "." + name, fromlist=["setup"])
    module.setup(probe)


__all__ = ["main", "Probe", "frame_info"]
