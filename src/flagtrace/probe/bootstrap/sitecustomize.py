# flagtrace-bootstrap: the sitecustomize that `flagtrace run` puts first on PYTHONPATH.
"""Runs at the start of every Python process a launch script starts (site imports it).

What it does there, and nothing more (a few hundred microseconds):
- writes one small record of the process (pid, ppid, interpreter, venv, Python version, argv as
  received, the relevant environment with secrets redacted) into $FLAGTRACE_RUN_DIR;
- installs a tiny meta-path finder that stays inert until the process imports a watched
  framework package (``sglang``, or a ``--watch``/``--stop-at`` module): only then is the probe
  loaded from source (bootstrap/loader.py) and set up as ``flagtrace explain`` sets it up
  (bootstrap/activate.py);
- notes the children the process starts (subprocess, os.exec*, os.posix_spawn, fork), so that
  a Python child that could not be probed is still listed;
- then runs the sitecustomize it shadows (the next one on sys.path), as site would have.

It never breaks a process: every error of its own is swallowed and written down. It parses on
any Python (2.7 included); interpreters older than 3.9 only record that they ran. Idempotent:
a second execution in the same process (a site dir seen twice) does nothing.
"""
import os
import sys

MIN_PYTHON = (3, 9)
MARKER = "flagtrace-bootstrap"

if __name__ != "sitecustomize":  # a module of the package (tests); written out, probe/common's text comes first
    from ..common.cmdline import python_options  # noqa: F401
    from ..common.recorded import env_matcher, redact_argv, relevant_env  # noqa: F401

try:
    _text = ascii  # ASCII-only, and ast.literal_eval reads it back exactly
except NameError:  # Python 2: repr is ASCII already
    _text = repr


def _own_argv():
    """The argv this process received, exactly (interpreter and its options included)."""
    orig = getattr(sys, "orig_argv", None)
    if orig:
        return list(orig)
    try:
        with open("/proc/self/cmdline", "rb") as fh:
            raw = fh.read()
        words = raw.split(b"\0")[:-1]
        decode = getattr(os, "fsdecode", None)
        return [decode(w) for w in words] if decode else words
    except Exception:
        return [sys.executable] + list(getattr(sys, "argv", []))


class _AfterLoad(object):
    """Loader proxy: runs ``callback(module)`` once the module has executed."""

    def __init__(self, loader, callback):
        self._loader = loader
        self._callback = callback

    def create_module(self, spec):
        create = getattr(self._loader, "create_module", None)
        return create(spec) if create is not None else None

    def exec_module(self, module):
        module.__loader__ = self._loader
        if getattr(module, "__spec__", None) is not None:
            module.__spec__.loader = self._loader
        self._loader.exec_module(module)
        self._callback(module)

    def __getattr__(self, name):
        return getattr(self._loader, name)


class Boot(object):
    """The per-process state of the bootstrap (``sys._flagtrace_boot``)."""

    def __init__(self, run_dir, names, env_names=()):
        self.run_dir = run_dir
        self.names = names  # watched module names (full), from $FLAGTRACE_RUN_WATCH
        self.env = env_matcher(env_names)  # the variables recorded, from $FLAGTRACE_RUN_ENV
        self.tops = set(n.split(".", 1)[0] for n in names)
        self.pending = set(self.tops)  # top-level packages whose first import activates the probe
        self.counter = 0
        self.probe = None
        self.activator = None
        self.busy = set()  # threads inside find_spec (its own imports must not re-enter it)
        self.spawning = 0
        self.argv = None
        self.options = None

    # -- records ----------------------------------------------------------------------
    def write(self, kind, obj):
        data = _text(obj)
        while True:  # exclusive: a process that exec'd another Python keeps its pid
            self.counter += 1
            path = os.path.join(self.run_dir, "%s-%d-%d.txt" % (kind, os.getpid(), self.counter))
            try:
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
                break
            except OSError as exc:
                if exc.errno != 17 or self.counter > 10000:  # EEXIST
                    raise
        with os.fdopen(fd, "w") as fh:
            fh.write(data)

    def note(self, where):
        """Record an error of the bootstrap itself (never raised to the process)."""
        try:
            import traceback

            self.write("error", {"pid": os.getpid(), "where": where, "error": traceback.format_exc()[-4000:]})
        except Exception:
            pass

    def record(self, forked_from=None):
        base = getattr(sys, "base_prefix", sys.prefix)
        version = sys.version_info
        rec = {
            "pid": os.getpid(), "ppid": os.getppid(), "executable": sys.executable,
            "argv": redact_argv(self.argv), "sys_argv": redact_argv(list(getattr(sys, "argv", []))),
            "python": "%d.%d.%d" % tuple(version[:3]) + ("" if version[3] == "final" else version[3][0] + str(version[4])),
            "prefix": sys.prefix, "base_prefix": base, "venv": sys.prefix if sys.prefix != base else None,
            "cwd": _cwd(), "env": relevant_env(os.environ, self.env), "run_dir_env": "FLAGTRACE_RUN_DIR" in os.environ,
            "mode": self.options["mode"], "target": self.options["target"], "flags": self.options["flags"],
            "forked_from": forked_from,
        }
        if tuple(version[:2]) < MIN_PYTHON:
            rec["unsupported"] = "Python %d.%d is older than %d.%d, which the probe needs" % (
                version[0], version[1], MIN_PYTHON[0], MIN_PYTHON[1])
        self.write("proc", rec)

    def spawned(self, kind, argv, executable=None, env=None, pid=None, error=None):
        try:
            environ = os.environ if env is None else env
            pythonpath = None
            for key in ("PYTHONPATH", b"PYTHONPATH"):  # an env mapping may have bytes keys
                try:
                    pythonpath = environ.get(key)
                except Exception:
                    continue
                if pythonpath is not None:
                    break
            words = redact_argv([_word(w) for w in (argv or [])])
            self.write("spawn", {"parent": os.getpid(), "pid": pid, "kind": kind, "argv": words,
                                 "executable": _word(executable) if executable else None,
                                 "pythonpath": _word(pythonpath) if pythonpath is not None else None,
                                 "env_given": env is not None, "error": error})
        except Exception:
            self.note("spawn record")

    # -- start ------------------------------------------------------------------------
    def start(self):
        self.argv = _own_argv()
        self.options = python_options(self.argv)
        self.record()
        if tuple(sys.version_info[:2]) < MIN_PYTHON:
            return
        self._watch_children()
        sys.meta_path.insert(0, self)  # watched packages, and subprocess (to note children)
        target = self.options.get("target") or ""
        if self.options["mode"] == "script":
            stem = os.path.splitext(os.path.basename(target))[0]
            if stem in self.names or "__main__" in self.names:
                self.activate(stem)  # the watched names live in the script itself

    # -- the meta-path finder ---------------------------------------------------------
    def find_spec(self, name, path=None, target=None):
        if name not in self.pending and name != "subprocess":
            return None
        thread = _thread_id()
        if thread in self.busy:
            return None
        self.busy.add(thread)
        try:
            spec = self._others(name, path, target)
            if name == "subprocess":
                if spec is not None and spec.loader is not None and hasattr(spec.loader, "exec_module"):
                    spec.loader = _AfterLoad(spec.loader, self._patch_subprocess)
                return spec
            self.pending.discard(name)
            if spec is None:
                self.write("missing", {"pid": os.getpid(), "module": name, "executable": sys.executable})
                return None
            self.activate(name)
            return self._others(name, path, target)
        except Exception:
            self.note("import of %s" % name)
            return None
        finally:
            self.busy.discard(thread)

    def _others(self, name, path, target):
        for finder in list(sys.meta_path):
            if finder is self:
                continue
            find = getattr(finder, "find_spec", None)
            if find is None:
                continue
            spec = find(name, path, target)
            if spec is not None:
                return spec
        return None

    def activate(self, name):
        """Load the probe (once) and set it up for ``name``; never raises."""
        try:
            self.pending.discard(name)
            if self.activator is None:
                import json

                with open(os.path.join(self.run_dir, "request.json")) as fh:
                    request = json.load(fh)
                loader_path = os.path.join(request["probe_dir"], "bootstrap", "loader.py")
                namespace = {"__name__": "_flagtrace_loader", "__file__": loader_path}
                with open(loader_path, "rb") as fh:
                    exec(compile(fh.read(), loader_path, "exec"), namespace)
                namespace["load_probe"](request["probe_dir"])
                __import__("_flagtrace_probe.bootstrap.activate")
                self.activator = sys.modules["_flagtrace_probe.bootstrap.activate"]
                self.probe = self.activator.activate(self, request, name)
            else:
                self.activator.add(self, name)
        except BaseException:  # SystemExit included: the process goes on, unobserved
            self.note("activation for %s" % name)
        module = sys.modules.get("subprocess")  # imported by the probe while this finder was busy
        if module is not None:
            self._patch_subprocess(module)

    # -- children ---------------------------------------------------------------------
    def _watch_children(self):
        boot = self
        for name in ("execv", "execve"):
            orig = getattr(os, name, None)
            if orig is not None:
                setattr(os, name, _exec_wrapper(boot, name, orig))
        for name in ("posix_spawn", "posix_spawnp"):
            orig = getattr(os, name, None)
            if orig is not None:
                setattr(os, name, _spawn_wrapper(boot, name, orig))
        if hasattr(os, "register_at_fork"):
            os.register_at_fork(after_in_child=self._forked)
        module = sys.modules.get("subprocess")
        if module is not None:
            self._patch_subprocess(module)

    def _forked(self):
        try:
            parent = os.getppid()
            self.counter = 0
            if self.activator is not None:
                self.activator.forked(self)
            self.record(forked_from=parent)
        except Exception:
            self.note("fork")

    def _patch_subprocess(self, module):
        try:
            popen = module.Popen
            orig = popen.__dict__.get("_execute_child")
            if orig is None or getattr(orig, "_flagtrace", False):
                return
            boot = self

            def _execute_child(self, args, executable, *rest, **kwargs):
                boot.spawning += 1
                error = None
                try:
                    return orig(self, args, executable, *rest, **kwargs)
                except BaseException as exc:
                    error = type(exc).__name__
                    raise
                finally:
                    boot.spawning -= 1
                    argv = [args] if isinstance(args, (str, bytes)) else list(args)
                    if len(rest) > 7 and rest[7]:  # shell=True
                        argv = ["/bin/sh", "-c"] + argv
                    boot.spawned("subprocess", argv, executable, rest[4] if len(rest) > 4 else None,
                                 getattr(self, "pid", None), error)

            _execute_child._flagtrace = True
            popen._execute_child = _execute_child
        except Exception:
            self.note("subprocess patch")


def _exec_wrapper(boot, name, orig):
    def wrapper(path, args, *rest):
        boot.spawned(name, list(args), path, rest[0] if rest else None, os.getpid())
        return orig(path, args, *rest)

    wrapper.__name__ = name
    wrapper.__doc__ = orig.__doc__
    return wrapper


def _spawn_wrapper(boot, name, orig):
    def wrapper(path, argv, env, *rest, **kwargs):
        pid = orig(path, argv, env, *rest, **kwargs)
        if not boot.spawning:  # subprocess records its own
            boot.spawned(name, list(argv), path, env, pid)
        return pid

    wrapper.__name__ = name
    wrapper.__doc__ = orig.__doc__
    return wrapper


def _thread_id():
    import _thread  # built in, already imported by the import system

    return _thread.get_ident()


def _word(value):
    if isinstance(value, bytes) and hasattr(os, "fsdecode"):
        return os.fsdecode(value)
    return value if isinstance(value, str) else str(value)


def _cwd():
    try:
        return os.getcwd()
    except OSError:
        return None


def _run_setting(run_dir, variable, name):
    """A comma-separated setting of the run: from the environment, or from the run directory where a
    process was started with an environment of its own."""
    words = os.environ.get(variable)
    if words is None:
        try:
            with open(os.path.join(run_dir, name)) as fh:
                words = fh.read()
        except Exception:
            words = ""
    return [w.strip() for w in words.split(",") if w.strip()]


def _shadowed(here):
    """The sitecustomize this one hides: the next one on sys.path after its own folder."""
    seen = False
    for entry in list(sys.path):
        try:
            full = os.path.abspath(entry or os.curdir)
        except Exception:
            continue
        if full == here:
            seen = True
            continue
        if not seen:
            continue
        for candidate in (os.path.join(full, "sitecustomize.py"), os.path.join(full, "sitecustomize", "__init__.py")):
            if os.path.isfile(candidate):
                return candidate
    return None


def _run_shadowed(path, into):
    """Execute the shadowed sitecustomize as site would have imported it; its errors are its
    own (site reports them as it always does)."""
    module = type(sys)("sitecustomize")
    module.__file__ = path
    with open(path, "rb") as fh:
        code = compile(fh.read(), path, "exec")
    exec(code, module.__dict__)
    for key, value in module.__dict__.items():
        if not key.startswith("__"):
            into[key] = value


def _main():
    if getattr(sys, "_flagtrace_boot", None) is not None:
        return  # already ran in this process
    sys._flagtrace_boot = True
    here = boot = None
    try:
        here = os.path.dirname(os.path.abspath(__file__))
        run_dir = os.environ.get("FLAGTRACE_RUN_DIR") or os.path.dirname(here)
        boot = Boot(run_dir, set(_run_setting(run_dir, "FLAGTRACE_RUN_WATCH", "watch.txt")),
                    _run_setting(run_dir, "FLAGTRACE_RUN_ENV", "env.txt"))
        sys._flagtrace_boot = boot
        boot.start()
    except BaseException:
        if boot is not None:
            boot.note("start")
    shadowed = None
    try:
        shadowed = _shadowed(here) if here else None
    except BaseException:
        pass
    if shadowed:
        _run_shadowed(shadowed, globals())


def _cache_bytecode(code):
    """Under PYTHONDONTWRITEBYTECODE (common in containers) every process would compile this
    file again (milliseconds): write its .pyc once per interpreter version, into flagtrace's own
    private folder, so that the next processes only unmarshal it."""
    try:
        external = sys.modules.get("_frozen_importlib_external")
        if external is None or not sys.dont_write_bytecode or tuple(sys.version_info[:2]) < MIN_PYTHON:
            return
        cache = external.cache_from_source(__file__)
        if os.path.exists(cache):
            return
        st = os.stat(__file__)
        data = external._code_to_timestamp_pyc(code, st.st_mtime, st.st_size)
        os.makedirs(os.path.dirname(cache), exist_ok=True)
        tmp = "%s.%d.tmp" % (cache, os.getpid())
        with open(tmp, "wb") as fh:
            fh.write(data)
        os.replace(tmp, cache)
    except Exception:
        pass


if __name__ == "sitecustomize":
    _main()
    if not __file__.endswith(".pyc"):
        _cache_bytecode(sys._getframe(0).f_code)
