"""Make the target believe it runs on the simulated GPUs (``--gpu``).

What it touches, and nothing else: ``torch.cuda`` queries and ``torch.version`` (patched right
after torch is imported), ``nvidia-smi`` (a stand-in first on PATH), pynvml queries if the
target uses them, and native modules that cannot load without a driver (see standins.py).
Every answer is recorded as a hardware query with the code that asked.
Standard library only, Python >= 3.9.
"""
import functools
import json
import os
import stat
import subprocess
import sys

from . import amd_smi, tools
from .host import HostSimulation, outside_stdlib
from .standins import StandIns, load_native_builds

_HERE = os.path.dirname(os.path.abspath(__file__))
_GIB = 1024 ** 3
_MIB = 1024 ** 2


class _Props:
    """What torch.cuda.get_device_properties returns, for the fields targets read."""

    def __init__(self, profile):
        major, minor = profile["compute_capability"]
        self.name = profile["device_name"]
        self.major = major
        self.minor = minor
        self.total_memory = profile["memory_mib"] * _MIB
        self.multi_processor_count = profile["sm_count"]
        self.is_integrated = False
        self.is_multi_gpu_board = False
        self.L2_cache_size = profile.get("l2_cache_mib", 50) * _MIB
        self.max_threads_per_multi_processor = 2048
        self.warp_size = 64 if profile["vendor"] == "amd" else 32
        self.gcnArchName = profile.get("gcn_arch", "")
        self.uuid = "00000000-0000-0000-0000-000000000000"

    def __repr__(self):
        return "_CudaDeviceProperties(name='%s', major=%d, minor=%d, total_memory=%dMB, " \
               "multi_processor_count=%d)" % (self.name, self.major, self.minor,
                                              self.total_memory // _MIB, self.multi_processor_count)


class GpuSimulation:
    def __init__(self, probe, profile):
        self.probe = probe
        self.trace = probe.trace
        self.profile = profile
        self.count = profile.get("count", 1)
        self.patched = []
        self.standins = StandIns(probe, profile)
        self.answers = {}  # query as recorded -> the function that answers it from self.profile
        self.silent = False  # asking again (conflict()): nothing recorded
        # (file suffix, function) of import-time reads an adapter knows never reach resolution
        self.private_reads = set()

    def describe(self):
        p = self.profile
        cc = "%d.%d" % tuple(p["compute_capability"])
        return "%s x%d (%s, %d MiB, compute capability %s, %d SMs, driver %s)" % (
            p["name"], self.count, p["device_name"], p["memory_mib"], cc, p["sm_count"], p["driver_version"])

    def install(self):
        self._install_tools()
        self._skip_native_builds()
        self.probe.imports.on_import("torch", self._patch_torch)
        self.probe.imports.on_import("pynvml", self._patch_pynvml)
        self.probe.imports.on_import("psutil", self._patch_host_memory)
        self.probe.imports.on_import("triton.runtime.driver", self._patch_triton_driver)
        if self.profile["vendor"] == "amd":
            self.probe.imports.on_import("amdsmi", functools.partial(amd_smi.patch, self))
        self.standins.install()
        self._wrap_subprocess()
        self.host = HostSimulation(self)
        self.host.install()
        self.audited_tools = set(self.host.audited.get("tools", ()))
        self.trace.simulation = self.summary()

    def patch_pynvml_module(self, name):
        """A framework's own copy of pynvml (an adapter names it) answers like pynvml."""
        self.probe.imports.on_import(name, self._patch_pynvml)

    def summary(self):
        return {"gpu": self.profile["name"], "count": self.count, "vendor": self.profile["vendor"],
                "describe": self.describe(), "patched": self.patched,
                "stand_ins": self.standins.used, "profile": {k: v for k, v in self.profile.items()
                                                             if k != "aliases"}}

    def switch(self, profile):
        """Answer from ``profile`` from now on (a forked variant of another GPU; same vendor)."""
        self.profile = profile
        self.count = profile.get("count", 1)
        if os.environ.get("FLAGTRACE_SIM_GPU"):
            with self.probe.quiet():
                os.environ["FLAGTRACE_SIM_GPU"] = json.dumps(profile)
        self.trace.simulation = self.summary()

    def conflict(self, profile):
        """Why a process that has already asked its questions under this profile cannot stand
        for ``profile`` (None: nothing it kept would differ): a module that read the hardware at
        import keeps what it read. An answer that differs is harmless where the function that
        asked (a module-level function without arguments) returns the same under both."""
        if profile.get("vendor") != self.profile.get("vendor"):
            return "another vendor (%s)" % profile.get("vendor")
        # an unanswered query (host.py) was answered by this machine: the same under any profile
        for event in [e for e in self.trace.events if e.get("kind") == "hw" and not e.get("unanswered")]:
            at = event.get("at") or {}
            if any(str(at.get("file")).endswith(f) and at.get("func") == name for f, name in self.private_reads):
                continue
            fn = self.answers.get(event["query"])
            if fn is not None and self._same(fn, profile):
                continue
            caller = _function_at(event.get("at") or {})
            if caller is not None and self._same(caller, profile):
                continue
            here, there = (self._under(fn, p) for p in (self.profile, profile)) if fn else ("?", "?")
            return "%s was asked at import, in %s (%s here, %s there)" % (
                event["query"], (event.get("at") or {}).get("func"), here, there)
        return None

    def _same(self, fn, profile):
        try:
            return repr(self._under(fn, self.profile)) == repr(self._under(fn, profile))
        except Exception:  # noqa: BLE001 - a function that cannot be asked again cannot be trusted
            return False

    def _under(self, fn, profile):
        """``fn()`` as answered under ``profile``, recording nothing."""
        saved = self.profile, self.count, self.silent
        self.profile, self.count, self.silent = profile, profile.get("count", 1), True
        try:
            return fn()
        finally:
            self.profile, self.count, self.silent = saved

    def _record(self, query, result, depth=2):
        if not self.silent:
            self.trace.hardware(query, result, sys._getframe(depth))
        return result

    # -- nvidia-smi ----------------------------------------------------------------
    def _install_tools(self):
        """The vendor's command-line tools, first on PATH, answering from the profile."""
        names = tools.TOOLS.get(self.profile["vendor"], ())
        workdir = self.probe.request.get("workdir")
        if not names or not workdir:
            return
        bindir = os.path.join(workdir, "bin")
        os.makedirs(bindir, exist_ok=True)
        for name in names:
            path = os.path.join(bindir, name)
            with open(path, "w") as fh:
                fh.write('#!/bin/sh\nexec "%s" "%s" %s "$@"\n' % (sys.executable, os.path.join(_HERE, "tools.py"), name))
            os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
        with self.probe.quiet():
            os.environ["FLAGTRACE_SIM_GPU"] = json.dumps(self.profile)
            os.environ["PATH"] = bindir + os.pathsep + os.environ.get("PATH", "")
        self.patched.append("%s (first on PATH)" % ", ".join(names))

    def _skip_native_builds(self):
        """A framework's import-time build for the simulated device, which this machine cannot
        compile, is switched off by the framework's own variable (standins.json native_builds)."""
        for name, entry in load_native_builds().items():
            if self.profile["vendor"] in entry["vendors"] and name not in os.environ:
                with self.probe.quiet():
                    os.environ[name] = entry["value"]
                self.patched.append("%s=%s (%s)" % (name, entry["value"], entry["why"]))

    def _wrap_subprocess(self):
        sim = self
        orig_init = subprocess.Popen.__init__

        def __init__(self, args, *a, **kw):
            sim._record_tool(args, kw.get("shell"))
            return orig_init(self, args, *a, **kw)

        subprocess.Popen.__init__ = __init__

    def _record_tool(self, args, shell):
        """Record a call of a simulated tool (``nvidia-smi ...``, ``rocminfo | grep ...``)."""
        try:
            if isinstance(args, (str, bytes)):
                command = args.decode() if isinstance(args, bytes) else args
                words = command.split() if shell else [command]
            else:
                words = [str(x) for x in args]
                command = " ".join(words)
            if len(words) == 1 and shell:
                words = command.split()
            tool = os.path.basename(words[0]) if words else ""
            if tool not in tools.TOOLS.get(self.profile["vendor"], ()):
                if tool in self.audited_tools:
                    self.host.audit_use(command[:200], "run on this machine")
                return
            _, out = tools.answer(tool, self.profile, words[1:])
            self.trace.hardware(command, out.strip()[:300], outside_stdlib(sys._getframe(2)))
        except Exception:
            pass

    # -- torch ---------------------------------------------------------------------
    def _patch_torch(self, torch):
        p = self.profile
        sim = self
        cuda = torch.cuda

        def fake(name, value_fn):
            def query(*args, **kwargs):
                return sim._record("torch.cuda.%s()" % name, value_fn(*args, **kwargs))

            query.__name__ = name
            query.__qualname__ = name
            query.__module__ = "torch.cuda"
            setattr(cuda, name, query)
            sim.answers["torch.cuda.%s()" % name] = value_fn
            sim.patched.append("torch.cuda.%s" % name)

        # Each answer is read from sim.profile when asked: a forked variant may switch it.
        fake("is_available", lambda *a, **k: True)
        fake("device_count", lambda *a, **k: sim.count)
        fake("get_device_capability", lambda *a, **k: sim.capability())
        fake("get_device_name", lambda *a, **k: sim.profile["device_name"])
        fake("get_device_properties", lambda *a, **k: sim.properties())
        fake("mem_get_info", lambda *a, **k: sim.memory())
        fake("current_device", lambda *a, **k: 0)
        fake("is_bf16_supported", lambda *a, **k: sim.capability() >= (8, 0))
        fake("get_arch_list", lambda *a, **k: [sim.profile["gcn_arch"].split(":")[0]] if sim.profile.get("gcn_arch")
             else ["sm_%d%d" % sim.capability()])
        if hasattr(cuda, "_device_count_nvml"):  # what device-count helpers that avoid a CUDA context ask
            fake("_device_count_nvml", lambda *a, **k: sim.count)
        for name in ("set_device", "synchronize", "empty_cache", "init", "_lazy_init"):
            if hasattr(cuda, name):
                fake(name, lambda *a, **k: None)
        if p["vendor"] == "amd":
            torch.version.hip = p.get("hip_version", "6.3")
            torch.version.cuda = None
            self.patched.append("torch.version.hip = %s, torch.version.cuda = None" % torch.version.hip)
        elif torch.version.cuda is None:
            # torch.version.cuda describes the torch build, not the card: only a CPU build of
            # torch needs one (and torchvision checks that it matches its own).
            torch.version.cuda = p.get("cuda_version", "12.8")
            self.patched.append("torch.version.cuda = %s (CPU build of torch)" % torch.version.cuda)
        self.trace.simulation = self.summary()

    def capability(self):
        return tuple(self.profile["compute_capability"])

    # -- triton's driver -------------------------------------------------------------
    def _patch_triton_driver(self, module):
        """triton's active driver, where the real one cannot start (no GPU driver here: triton asserts it
        finds libcuda.so): one that says which target the simulated GPU compiles for, the question code
        asks at import (vLLM 0.15's fla ops: ``triton.runtime.driver.active.get_current_target()``).
        Anything else asked of it is not simulated and says so."""
        config = type(getattr(module, "driver", None))
        real = getattr(config, "default", None)
        if not isinstance(real, property) or getattr(real.fget, "_flagtrace", False):
            return
        sim = self

        def default(cfg):
            try:
                return real.fget(cfg)
            except Exception as exc:  # noqa: BLE001 - triton asserts; a build of it may raise anything
                reason = "%s: %s" % (type(exc).__name__, (str(exc).splitlines() or [""])[0])
                cfg._default = _TritonDriver(sim, reason)
                sim.standins.note("triton.runtime.driver", "the real driver could not start: " + reason)
                return cfg._default

        default._flagtrace = True
        config.default = property(default)
        self.answers["triton.runtime.driver.active.get_current_target()"] = self.triton_target

    def triton_target(self):
        """(backend, arch, warp size) triton compiles for on the simulated GPU."""
        p = self.profile
        if p["vendor"] == "amd":
            return "hip", (p.get("gcn_arch") or "gfx942").split(":")[0], 64
        major, minor = p["compute_capability"]
        return "cuda", major * 10 + minor, 32

    def properties(self):
        if getattr(self, "_props_for", None) is not self.profile:
            self._props, self._props_for = _Props(self.profile), self.profile
        return self._props

    def memory(self):
        total = self.profile["memory_mib"] * _MIB
        return self.profile.get("free_mib", self.profile["memory_mib"] - 512) * _MIB, total

    # -- host memory -----------------------------------------------------------------
    def _patch_host_memory(self, psutil):
        """The GPU box's RAM, not this machine's: frameworks size CPU swap and offload buffers
        from it. ``host_memory_mib`` in the profile; by default what a server with these GPUs has
        (256 GiB per GPU, at least 512 GiB)."""
        orig = psutil.virtual_memory
        sim = self

        def virtual_memory():
            total = sim.host_memory()
            real = orig()
            used = min(real.used, total)
            value = real._replace(total=total, available=total - used, free=total - used, used=used,
                                  percent=round(100.0 * used / total, 1))
            sim._record("psutil.virtual_memory().total", "%d MiB" % (total // _MIB))
            return value

        virtual_memory.__wrapped__ = orig
        psutil.virtual_memory = virtual_memory
        self.answers["psutil.virtual_memory().total"] = lambda: "%d MiB" % (self.host_memory() // _MIB)
        self.patched.append("psutil.virtual_memory (host RAM %d GiB)" % (self.host_memory() // 1024 ** 3))

    def host_memory(self):
        return self.profile.get("host_memory_mib", max(512 * 1024, 256 * 1024 * self.count)) * _MIB

    # -- pynvml --------------------------------------------------------------------
    def _patch_pynvml(self, pynvml):
        sim = self

        class _Mem:
            def __init__(self):
                self.free, self.total = sim.memory()
                self.used = self.total - self.free

            def __repr__(self):
                return "nvmlMemory(total=%d MiB, free=%d MiB, used=%d MiB)" % (
                    self.total // _MIB, self.free // _MIB, self.used // _MIB)

        answers = {
            "nvmlInit": lambda *a: None, "nvmlInitWithFlags": lambda *a: None, "nvmlShutdown": lambda *a: None,
            "nvmlDeviceGetCount": lambda *a: sim.count,
            "nvmlDeviceGetHandleByIndex": lambda i=0: i,
            "nvmlDeviceGetName": lambda h=0: sim.profile["device_name"],
            "nvmlDeviceGetMemoryInfo": lambda h=0: _Mem(),
            "nvmlSystemGetDriverVersion": lambda *a: sim.profile["driver_version"],
            "nvmlDeviceGetCudaComputeCapability": lambda h=0: sim.capability(),
            "nvmlDeviceGetP2PStatus": lambda *a: 0,
            "nvmlDeviceGetUUID": lambda h=0: "GPU-00000000-0000-0000-0000-%012d" % h,
            "nvmlDeviceGetNvLinkState": lambda *a: 1,
        }
        # Session plumbing answers nothing about the hardware: simulated, not reported.
        quiet = ("nvmlInit", "nvmlInitWithFlags", "nvmlShutdown", "nvmlDeviceGetHandleByIndex")
        if self.profile["vendor"] != "nvidia":
            # An AMD box has no NVIDIA driver: NVML is not found (what platform detection tests first).
            def no_nvml(*args):
                error = pynvml.NVMLError(getattr(pynvml, "NVML_ERROR_LIBRARY_NOT_FOUND", 12))
                raise sim._record("pynvml.nvmlInit()", error, depth=3)

            answers = {"nvmlInit": no_nvml, "nvmlInitWithFlags": no_nvml}
            quiet = ()
        for name, fn in answers.items():
            def query(*args, _fn=fn, _name=name):
                if _name in quiet:
                    return _fn(*args)
                return sim._record("pynvml.%s()" % _name, _fn(*args))

            setattr(pynvml, name, query)
            self.answers["pynvml.%s()" % name] = fn if quiet else (lambda: "NVML library not found")
        self.patched.append("pynvml (%s)" % ("%d functions" % len(answers) if quiet else "NVML library not found"))


class _TritonDriver:
    """triton's driver under simulation (GpuSimulation._patch_triton_driver)."""

    def __init__(self, sim, reason):
        self._sim = sim
        self._reason = reason

    def get_current_target(self):
        from triton.backends.compiler import GPUTarget

        return self._sim._record("triton.runtime.driver.active.get_current_target()",
                                 GPUTarget(*self._sim.triton_target()))

    def get_current_device(self):
        return 0

    def get_active_torch_device(self):
        import torch

        return torch.device("cuda", 0)

    def get_device_interface(self):
        import torch

        return torch.cuda

    def is_active(self):
        return True

    def __getattr__(self, name):
        raise RuntimeError("triton.runtime.driver.active.%s: triton's GPU driver is not simulated (the real one "
                           "could not start: %s)" % (name, self._reason))


def _function_at(at):
    """The module-level function without arguments that ran at ``at`` (its lru cache, if any,
    bypassed), or None."""
    import inspect

    path, name = at.get("file"), at.get("func") or ""
    if not path or not name.isidentifier():
        return None
    for module in list(sys.modules.values()):
        if getattr(module, "__file__", None) == path:
            fn = inspect.unwrap(getattr(module, name, None) or (lambda: None))
            try:
                required = [p for p in inspect.signature(fn).parameters.values()
                            if p.default is p.empty and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
            except (TypeError, ValueError):
                return None
            return fn if inspect.isfunction(fn) and not required and fn.__name__ == name else None
    return None


def setup(probe):
    profile = probe.request.get("gpu")
    if not profile:
        return
    probe.simulation = GpuSimulation(probe, profile)
    probe.simulation.install()
