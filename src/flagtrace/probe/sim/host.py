"""The simulated box's host side, as far as frameworks look at it while resolving arguments:
InfiniBand / RoCE devices under /sys/class/infiniband (and /dev/infiniband), the NUMA nodes under
/sys/devices/system/node and the CPU count (os.cpu_count, os.sched_getaffinity, psutil.cpu_count).
A simulated GPU box has one NIC per GPU (``mlx5_0`` ...), or the profile's ``nics``, plus every
device the command names (``--disaggregation-ib-device mlx5_bond_0``, passed by the tool-side
adapter as ``named_devices``); ``host_cpus`` logical CPUs (default 224: two 56-core sockets with
SMT) on ``numa_nodes`` nodes (default 2). Answered through os.path.exists / isdir / isfile,
os.listdir and open(), each answer recorded as a hardware query.

Queries the simulation does not answer (other paths under /sys, /dev, /proc/driver) are recorded
too, with ``unanswered`` and the real answer: the audit of what the simulation left to this
machine. Standard library only, Python >= 3.9.
"""
import builtins
import io
import os
import sys

from .standins import load_audited

SIMULATED_ROOTS = ("/sys/class/infiniband", "/dev/infiniband", "/sys/devices/system/node",
                   "/sys/class/tegra-firmware")  # a GPU server, not a Jetson
_STDLIB = os.path.dirname(os.__file__)
AUDITED = ("/sys/", "/dev/", "/proc/driver")
# Device files every Unix box has: plumbing, not hardware.
PLUMBING = ("/dev/null", "/dev/zero", "/dev/random", "/dev/urandom", "/dev/tty", "/dev/shm", "/dev/fd/",
            "/dev/stdin", "/dev/stdout", "/dev/stderr", "/dev/pts")
DEFAULT_CPUS = 224
DEFAULT_NUMA_NODES = 2


class HostSimulation:
    def __init__(self, sim):
        self.sim = sim
        self.trace = sim.trace
        self.busy = False
        self.seen = set()  # unanswered queries recorded once each
        self.audited = load_audited()
        # files whose own import-time probing of /sys is not the framework asking (standins.json)
        self.ignored = tuple(self.audited.get("ignored", {}))

    def devices(self):
        profile = self.sim.profile
        nics = profile.get("nics")
        if nics is None:
            nics = ["mlx5_%d" % i for i in range(self.sim.count)] if profile.get("vendor") == "nvidia" else []
        named = self.sim.probe.request.get("named_devices") or []
        return list(dict.fromkeys(list(nics) + list(named)))

    def cpus(self):
        return int(self.sim.profile.get("host_cpus", DEFAULT_CPUS))

    def numa_nodes(self):
        return max(1, int(self.sim.profile.get("numa_nodes", DEFAULT_NUMA_NODES)))

    def node_cpus(self, node):
        """``cpulist`` of a NUMA node: its share of the cores, then their SMT siblings (0-55,112-167)."""
        cores, nodes = self.cpus() // 2, self.numa_nodes()
        per = max(1, cores // nodes)
        first = node * per
        return "%d-%d,%d-%d" % (first, first + per - 1, cores + first, cores + first + per - 1)

    def install(self):
        self._orig = {"exists": os.path.exists, "isdir": os.path.isdir, "isfile": os.path.isfile,
                      "listdir": os.listdir, "open": builtins.open}
        os.path.exists = self._wrap("exists", lambda entry, path: entry is not None)
        os.path.isdir = self._wrap("isdir", lambda entry, path: entry is not None and entry[0] == "dir")
        os.path.isfile = self._wrap("isfile", lambda entry, path: entry is not None and entry[0] == "file")
        os.listdir = self._wrap("listdir", self._list, label="os.", default=".")
        builtins.open = io.open = self._wrap("open", self._read, label="")
        self._cpu_count()
        self.sim.probe.imports.on_import("psutil", self._psutil_cpu_count)
        self._audit_libraries()
        self.sim.patched.append("/sys/class/infiniband, /dev/infiniband: %s" % (", ".join(self.devices()) or "none"))
        self.sim.patched.append("%d CPUs on %d NUMA nodes (/sys/devices/system/node, os.cpu_count, psutil.cpu_count)"
                                % (self.cpus(), self.numa_nodes()))

    def _entry(self, path):
        """("dir", [names]) or ("file", text) for a simulated path, None for one absent from the
        simulated box, False when the path is not ours."""
        try:
            path = os.fspath(path)
        except TypeError:
            return False
        if not isinstance(path, str) or not path.startswith(("/sys/", "/dev/")):
            return False
        path = os.path.normpath(path)
        root = next((r for r in SIMULATED_ROOTS if path == r or path.startswith(r + "/")), None)
        if root is None:
            return False
        rest = path[len(root) + 1:].split("/") if path != root else []
        if root == "/dev/infiniband":
            names = ["rdma_cm"] + ["uverbs%d" % i for i in range(len(self.devices()))]
            return ("dir", names) if not rest else ("file", "") if rest in ([n] for n in names) else None
        if root == "/sys/class/tegra-firmware":
            return None
        if root == "/sys/devices/system/node":
            nodes = ["node%d" % i for i in range(self.numa_nodes())]
            span = "0" if len(nodes) == 1 else "0-%d" % (len(nodes) - 1)
            files = {"online": span, "possible": span, "has_cpu": span, "has_memory": span}
            if not rest:
                return "dir", nodes + sorted(files)
            if len(rest) == 1:
                return ("dir", ["cpulist"]) if rest[0] in nodes else ("file", files[rest[0]] + "\n") \
                    if rest[0] in files else None
            if rest[0] in nodes and rest[1:] == ["cpulist"]:
                return "file", self.node_cpus(int(rest[0][4:])) + "\n"
            return None
        devices = self.devices()
        if not rest:
            return "dir", devices
        if rest[0] not in devices:
            return None
        index = devices.index(rest[0])
        tree = {(): ("dir", ["ports", "device"]), ("ports",): ("dir", ["1"]),
                ("ports", "1"): ("dir", ["state", "link_layer", "rate"]),
                ("ports", "1", "state"): ("file", "4: ACTIVE\n"),
                ("ports", "1", "link_layer"): ("file", "InfiniBand\n"),
                ("ports", "1", "rate"): ("file", "400 Gb/sec (4X NDR)\n"),
                ("device",): ("dir", ["numa_node"]),
                ("device", "numa_node"): ("file", "%d\n" % (index * self.numa_nodes() // max(1, len(devices))))}
        return tree.get(tuple(rest[1:]))

    def _record(self, query, result, once=False):
        """A simulated answer, recorded with the line outside the standard library that asked
        (``once``: once per asking line; os.cpu_count is asked often)."""
        if self.busy or self.sim.silent:
            return result
        frame = outside_stdlib(sys._getframe(2))
        if once:
            key = (query, frame.f_code.co_filename, frame.f_lineno) if frame is not None else (query,)
            if key in self.seen:
                return result
            self.seen.add(key)
        self.busy = True
        try:
            self.trace.hardware(query, result, frame)
        finally:
            self.busy = False
        return result

    def _list(self, entry, path):
        if entry is None or entry[0] != "dir":
            raise FileNotFoundError(2, "No such file or directory (simulated)", os.fspath(path))
        return list(entry[1])

    def _read(self, entry, path, mode="r", *args, **kwargs):
        if entry is None or entry[0] != "file":
            raise FileNotFoundError(2, "No such file or directory (simulated)", os.fspath(path))
        if any(c in mode for c in "wax+"):
            raise PermissionError(13, "Permission denied (simulated)", os.fspath(path))
        return io.BytesIO(entry[1].encode()) if "b" in mode else io.StringIO(entry[1])

    def _cpu_count(self):
        host = self
        orig_count = os.cpu_count

        def cpu_count():
            return host._record("os.cpu_count()", host.cpus(), once=True)

        cpu_count.__wrapped__ = orig_count
        os.cpu_count = cpu_count
        self.sim.answers["os.cpu_count()"] = lambda: self.cpus()
        if hasattr(os, "sched_getaffinity"):
            orig_affinity = os.sched_getaffinity

            def sched_getaffinity(pid):
                if pid not in (0, os.getpid()):
                    return orig_affinity(pid)
                return host._record("os.sched_getaffinity(0)", set(range(host.cpus())), once=True)

            sched_getaffinity.__wrapped__ = orig_affinity
            os.sched_getaffinity = sched_getaffinity
            self.sim.answers["os.sched_getaffinity(0)"] = lambda: set(range(self.cpus()))

    def _psutil_cpu_count(self, psutil):
        host = self
        orig = psutil.cpu_count

        def cpu_count(logical=True):
            count = host.cpus() if logical else host.cpus() // 2
            return host._record("psutil.cpu_count(logical=%s)" % bool(logical), count, once=True)

        cpu_count.__wrapped__ = orig
        psutil.cpu_count = cpu_count
        for logical in (True, False):
            self.sim.answers["psutil.cpu_count(logical=%s)" % logical] = \
                lambda logical=logical: self.cpus() if logical else self.cpus() // 2

    def _wrap(self, name, answer, label="os.path.", default=None):
        """``os.path.NAME`` (or ``os.NAME`` / ``open`` with ``label``) answering simulated paths with
        ``answer(entry, path, ...)`` and recording it; every other path goes to the real function,
        and is audited."""
        orig = self._orig[name]

        def query(path=default, *args, **kwargs):
            if self.busy:
                return orig(path, *args, **kwargs)
            entry = self._entry(path)
            if entry is False:
                if not _audited(path):
                    return orig(path, *args, **kwargs)
                asked = "%s%s(%r)" % (label, name, os.fspath(path))
                try:
                    result = orig(path, *args, **kwargs)
                except OSError as exc:
                    self._unanswered(asked, "raised %s" % type(exc).__name__, outside_stdlib(sys._getframe(1)))
                    raise
                self._unanswered(asked, "opened" if name == "open" else result, outside_stdlib(sys._getframe(1)))
                return result
            asked = "%s%s(%r)" % (label, name, os.fspath(path))
            if name != "open":
                self.sim.answers[asked] = lambda: answer(self._entry(path), path)  # under another profile
                return self._record(asked, answer(entry, path))
            try:
                result = answer(entry, path, *args, **kwargs)
            except OSError as exc:
                self._record(asked, "%s (simulated)" % type(exc).__name__)
                raise
            self.sim.answers[asked] = lambda: (self._entry(path) or ("", ""))[1].strip()
            self._record(asked, entry[1].strip())
            return result

        query.__wrapped__ = orig
        return query

    def _audit_libraries(self):
        """Driver libraries loaded through ctypes (``ctypes.CDLL("libcuda.so.1")``): not simulated,
        listed with what this machine answered (loaded, or the loader's error)."""
        import ctypes

        names = tuple(self.audited.get("libraries", ()))
        orig = ctypes.CDLL.__init__
        host = self

        def __init__(this, name, *args, **kwargs):
            base = os.path.basename(str(name or ""))
            if not base.startswith(names):
                return orig(this, name, *args, **kwargs)
            try:
                orig(this, name, *args, **kwargs)
            except OSError as exc:
                host.audit_use("ctypes.CDLL(%r)" % base, "failed: %s" % exc, depth=2)
                raise
            host.audit_use("ctypes.CDLL(%r)" % base, "loaded", depth=2)

        ctypes.CDLL.__init__ = __init__

    def audit_use(self, query, result, depth=3):
        """A driver library or tool this machine answered (the simulation has no answer for it)."""
        self._unanswered(query, result, outside_stdlib(sys._getframe(depth)))

    def _unanswered(self, query, result, frame):
        """Record, once, a query this machine answered while the simulation ran."""
        if query in self.seen or self.sim.silent:
            return
        if frame is not None and frame.f_code.co_filename.replace(os.sep, "/").endswith(self.ignored):
            return
        self.seen.add(query)
        self.busy = True
        try:
            self.trace.hardware(query, result, frame, unanswered=True)
        finally:
            self.busy = False


def _audited(path):
    """A path under /sys, /dev or /proc/driver other than a device file every box has."""
    try:
        text = os.fspath(path)
    except TypeError:
        return False
    return isinstance(text, str) and text.startswith(AUDITED) and not text.startswith(PLUMBING)


def outside_stdlib(frame):
    """The first frame at or above ``frame`` outside the standard library: past ctypes or
    subprocess to the code that asked."""
    while frame is not None and frame.f_code.co_filename.startswith(_STDLIB):
        frame = frame.f_back
    return frame
