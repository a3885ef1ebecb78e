"""Inside one process of a ``flagtrace run`` tree, on its first import of a watched package.

Sets the probe up exactly as ``flagtrace explain`` does (``Probe.install``, then the adapter's and
the simulator's set-up steps); the interpreter runs the program itself. Dry (the default): the
process ends at its adapter's stop point, before weights load or a port opens, and writes its
trace there. ``--live``: reaching the stop point ends resolution without stopping (a snapshot of
the trace is written then), the process goes on, and the trace is written again when it exits
(normally, by an uncaught exception, by ``sys.exit`` or ``os._exit``) with what happened after.
A process that imports none of them keeps only its bootstrap record.
Standard library only, Python >= 3.9.
"""
import atexit
import functools
import os
import sys

from .. import main as probe_main


class RunProbe(probe_main.Probe):
    """A probe whose target is already running. With ``live``, reaching a stop point ends the
    resolution window (the outcome is ``stopped``, a snapshot of the trace is written at once)
    and the process goes on; what happens after it is noted as ``outcome.after``."""

    def _stop_at(self, spec, qualname, module):
        if not self.request.get("live"):
            return super()._stop_at(spec, qualname, module)
        self._pass_through(spec, qualname, module, after=False)

    def _stop_after(self, spec, qualname, module):
        if not self.request.get("live"):
            return super()._stop_after(spec, qualname, module)
        self._pass_through(spec, qualname, module, after=True)

    def _pass_through(self, spec, qualname, module, after):
        try:
            owner, name = probe_main._resolve(module, qualname)
            raw = owner.__dict__[name] if isinstance(owner, type) else getattr(owner, name)
        except (AttributeError, KeyError):
            self.trace.problem("spec", "stop-at: %s has no %s" % (module.__name__, qualname))
            return
        probe = self
        func = raw.__func__ if isinstance(raw, (staticmethod, classmethod)) else raw

        @functools.wraps(func)
        def reached(*args, **kwargs):
            if after:
                result = func(*args, **kwargs)
                probe.reached(spec + " (returned)", [result], {}, sys._getframe(1))
                return result
            probe.reached(spec, args, kwargs, sys._getframe(1))
            return func(*args, **kwargs)

        if isinstance(raw, (staticmethod, classmethod)):
            reached = type(raw)(reached)
        setattr(owner, name, reached)

    def reached(self, spec, args, kwargs, frame):
        """--live: the first stop point reached ends resolution; keep a snapshot now (a server
        may never exit, or be killed)."""
        trace = self.trace
        if trace.written or trace.outcome.get("status") != "running":
            return
        try:
            trace.stopped(spec, args, kwargs, frame)
            snapshot(self)
        except Exception:
            pass


def _request(boot, run_request):
    pid = os.getpid()
    run_dir = boot.run_dir
    options = boot.options
    mode = options["mode"] if options["mode"] in ("script", "module") else "code"
    live = bool(run_request.get("live"))
    watch = list(run_request.get("watch", []))
    return {
        "trace_path": os.path.join(run_dir, "trace-%d.json" % pid),
        "workdir": os.path.join(run_dir, "work-%d" % pid),
        "mode": mode, "target": options["target"] or "", "args": list(sys.argv[1:]),
        "command": list(boot.argv), "flagtrace_version": run_request.get("flagtrace_version"),
        "watch": watch, "stop_at": list(run_request.get("stop_at", [])),
        "user_specs": list(run_request.get("user_specs", [])),
        "gpu": run_request.get("gpu"), "setup": ["sim.gpu"] if run_request.get("gpu") else [],
        "adapter": "generic",
        "adapter_info": {"name": "generic", "describe": "generic (--watch %s)" % ", ".join(watch)} if watch else None,
        "live": live, "frameworks": run_request.get("frameworks", {}), "models": run_request.get("models"),
    }


def activate(boot, run_request, name):
    """The probe for this process, installed; then ``add(name)``. Called once per process."""
    request = _request(boot, run_request)
    os.makedirs(request["workdir"], exist_ok=True)
    probe = RunProbe(request)
    mode = request["mode"]
    probe.trace.argv0 = [request["target"] if mode != "code" else "-c"] + list(request["args"])
    probe.install()
    probe.setup()
    _exit_hooks(probe)
    boot.probe = probe
    add(boot, name)
    probe.main_hooks.start()
    return probe


def add(boot, name):
    """A framework package is being imported for the first time: run its adapter's set-up."""
    probe = boot.probe
    framework = probe.request.get("frameworks", {}).get(name)
    if not framework or probe.trace.written:
        return
    probe.request["adapter"] = framework.get("adapter", name)
    probe.request["adapter_info"] = {"name": name, "describe": name}
    _stand_in_models(probe, framework.get("models"))
    try:
        probe.setup(framework.get("setup", []))
    except SystemExit as exc:
        # The adapter refused (framework release not supported, ...) and wrote why. Dry: the
        # process must not go on to load weights or open ports; --live: it goes on, unobserved.
        if not probe.request.get("live"):
            probe.finish(exc.code if isinstance(exc.code, int) else 3, hard=True)


def _stand_in_models(probe, spec):
    """The models this framework process names, stood in as ``flagtrace explain`` does
    (probe/modelconfigs.py): its sys.argv rewritten before the framework parses it, what stood in for
    what kept as the request's ``inputs``. A model nothing here has is left as typed."""
    asked = probe.request.get("models")
    if not spec or not asked:
        return
    from .. import modelconfigs

    try:
        args, found = modelconfigs.substitute_command(sys.argv[1:], spec, asked.get("explicit"), asked.get("offline"))
    except Exception:  # noqa: BLE001 - unknown model, unreadable catalog: the framework reads it as typed
        return
    if found:
        sys.argv[1:] = args
        probe.request.update(modelconfigs.into_request(probe.request, found))
        probe.setup(["remote_code"])


def forked(boot):
    """In a child made by fork(): it inherited the parent's probe; the parent writes the trace."""
    probe = boot.probe
    if probe is not None:
        probe.trace.written = True
        probe.recorder.enabled = False


def _exit_hooks(probe):
    trace = probe.trace
    state = {"code": None}

    previous_hook = sys.excepthook

    def excepthook(kind, exc, tb):
        try:
            status = trace.outcome.get("status")
            if not trace.written and status == "running":
                trace.raised(exc)
            elif not trace.written and status == "stopped":  # --live, after resolution
                trace.outcome["after"] = {"status": "raised", "type": kind.__name__, "message": str(exc)[:2000]}
        except Exception:
            pass
        if previous_hook is sys.__excepthook__:
            # the traceback python would print, without the probe's frames (as explain does)
            try:
                probe_main._print_target_exception(exc)
                return None
            except Exception:
                pass
        return previous_hook(kind, exc, tb)

    sys.excepthook = excepthook
    real_exit = sys.exit

    def exit(code=None):
        state["code"] = code
        return real_exit(code)

    exit.__doc__ = real_exit.__doc__
    sys.exit = exit

    def at_exit():
        if trace.written:
            return
        code = state["code"]
        status = trace.outcome.get("status")
        if status == "running":
            if code is None or code == 0:
                trace.completed()
            else:
                trace.exited(code if isinstance(code, int) else 1)
        elif status == "stopped" and "after" not in trace.outcome:
            trace.outcome["after"] = {"status": "exited", "exit_code": code if isinstance(code, int) else
                                      (0 if code is None else 1)}
        probe.write()

    atexit.register(at_exit)


def snapshot(probe):
    """The trace as it stands, written without ending the recording (``--live``)."""
    probe.trace.save(probe.trace_path)
