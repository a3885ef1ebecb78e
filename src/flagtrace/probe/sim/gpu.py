"""Make the target believe it runs on the simulated GPUs (``--gpu``).

What it touches, and nothing else: ``torch.cuda`` queries and ``torch.version`` (patched right
after torch is imported), ``nvidia-smi`` (a stand-in first on PATH), pynvml queries if the
target uses them, and native modules that cannot load without a driver (see standins.py).
Every answer is recorded as a hardware query with the code that asked.
Standard library only, Python >= 3.9.
"""
import json
import os
import stat
import subprocess
import sys

from . import tools
from .standins import StandIns

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

    def describe(self):
        p = self.profile
        cc = "%d.%d" % tuple(p["compute_capability"])
        return "%s x%d (%s, %d MiB, compute capability %s, %d SMs, driver %s)" % (
            p["name"], self.count, p["device_name"], p["memory_mib"], cc, p["sm_count"], p["driver_version"])

    def install(self):
        self._install_tools()
        self.probe.imports.on_import("torch", self._patch_torch)
        self.probe.imports.on_import("pynvml", self._patch_pynvml)
        self.probe.imports.on_import("psutil", self._patch_host_memory)
        self.standins.install()
        self._wrap_subprocess()
        self.trace.simulation = self.summary()

    def patch_pynvml_module(self, name):
        """A framework's own copy of pynvml (an adapter names it) answers like pynvml."""
        self.probe.imports.on_import(name, self._patch_pynvml)

    def summary(self):
        return {"gpu": self.profile["name"], "count": self.count, "vendor": self.profile["vendor"],
                "describe": self.describe(), "patched": self.patched,
                "stand_ins": self.standins.used, "profile": {k: v for k, v in self.profile.items()
                                                             if k != "aliases"}}

    def _record(self, query, result, depth=2):
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
                return
            _, out = tools.answer(tool, self.profile, words[1:])
            caller = sys._getframe(2)
            while caller is not None and caller.f_code.co_filename.startswith(
                    os.path.dirname(subprocess.__file__)):
                caller = caller.f_back
            self.trace.hardware(command, out.strip()[:300], caller)
        except Exception:
            pass

    # -- torch ---------------------------------------------------------------------
    def _patch_torch(self, torch):
        p = self.profile
        sim = self
        props = _Props(p)
        capability = tuple(p["compute_capability"])
        total = p["memory_mib"] * _MIB
        free = p.get("free_mib", p["memory_mib"] - 512) * _MIB
        cuda = torch.cuda

        def fake(name, value_fn):
            def query(*args, **kwargs):
                return sim._record("torch.cuda.%s()" % name, value_fn(*args, **kwargs))

            query.__name__ = name
            query.__qualname__ = name
            query.__module__ = "torch.cuda"
            setattr(cuda, name, query)
            sim.patched.append("torch.cuda.%s" % name)

        fake("is_available", lambda *a, **k: True)
        fake("device_count", lambda *a, **k: self.count)
        fake("get_device_capability", lambda *a, **k: capability)
        fake("get_device_name", lambda *a, **k: p["device_name"])
        fake("get_device_properties", lambda *a, **k: props)
        fake("mem_get_info", lambda *a, **k: (free, total))
        fake("current_device", lambda *a, **k: 0)
        fake("is_bf16_supported", lambda *a, **k: capability >= (8, 0))
        fake("get_arch_list", lambda *a, **k: ["sm_%d%d" % capability])
        if hasattr(cuda, "_device_count_nvml"):  # what device-count helpers that avoid a CUDA context ask
            fake("_device_count_nvml", lambda *a, **k: self.count)
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

    # -- host memory -----------------------------------------------------------------
    def _patch_host_memory(self, psutil):
        """The GPU box's RAM, not this machine's: frameworks size CPU swap and offload buffers
        from it. ``host_memory_mib`` in the profile; by default what a server with these GPUs has
        (256 GiB per GPU, at least 512 GiB)."""
        total = self.profile.get("host_memory_mib", max(512 * 1024, 256 * 1024 * self.count)) * _MIB
        orig = psutil.virtual_memory
        sim = self

        def virtual_memory():
            real = orig()
            used = min(real.used, total)
            value = real._replace(total=total, available=total - used, free=total - used, used=used,
                                  percent=round(100.0 * used / total, 1))
            sim._record("psutil.virtual_memory().total", "%d MiB" % (total // _MIB))
            return value

        virtual_memory.__wrapped__ = orig
        psutil.virtual_memory = virtual_memory
        self.patched.append("psutil.virtual_memory (host RAM %d GiB)" % (total // 1024 ** 3))

    # -- pynvml --------------------------------------------------------------------
    def _patch_pynvml(self, pynvml):
        p = self.profile
        sim = self

        class _Mem:
            total = p["memory_mib"] * _MIB
            free = p.get("free_mib", p["memory_mib"] - 512) * _MIB
            used = total - free

            def __repr__(self):
                return "nvmlMemory(total=%d MiB, free=%d MiB, used=%d MiB)" % (
                    self.total // _MIB, self.free // _MIB, self.used // _MIB)

        answers = {
            "nvmlInit": lambda *a: None, "nvmlInitWithFlags": lambda *a: None, "nvmlShutdown": lambda *a: None,
            "nvmlDeviceGetCount": lambda *a: self.count,
            "nvmlDeviceGetHandleByIndex": lambda i: i,
            "nvmlDeviceGetName": lambda h: p["device_name"],
            "nvmlDeviceGetMemoryInfo": lambda h: _Mem(),
            "nvmlSystemGetDriverVersion": lambda *a: p["driver_version"],
            "nvmlDeviceGetCudaComputeCapability": lambda h: tuple(p["compute_capability"]),
            "nvmlDeviceGetP2PStatus": lambda *a: 0,
            "nvmlDeviceGetUUID": lambda h: "GPU-00000000-0000-0000-0000-%012d" % h,
            "nvmlDeviceGetNvLinkState": lambda *a: 1,
        }
        # Session plumbing answers nothing about the hardware: simulated, not reported.
        quiet = ("nvmlInit", "nvmlInitWithFlags", "nvmlShutdown", "nvmlDeviceGetHandleByIndex")
        for name, fn in answers.items():
            def query(*args, _fn=fn, _name=name):
                if _name in quiet:
                    return _fn(*args)
                return sim._record("pynvml.%s()" % _name, _fn(*args))

            setattr(pynvml, name, query)
        self.patched.append("pynvml (%d functions)" % len(answers))


def setup(probe):
    profile = probe.request.get("gpu")
    if not profile:
        return
    probe.simulation = GpuSimulation(probe, profile)
    probe.simulation.install()
