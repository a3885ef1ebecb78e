"""The simulated box's host side, as far as frameworks look at it while resolving arguments:
InfiniBand / RoCE devices under /sys/class/infiniband (and /dev/infiniband). A simulated GPU box
has one NIC per GPU (``mlx5_0`` ...), or the profile's ``nics``, plus every device the command
names (``--disaggregation-ib-device mlx5_bond_0``, passed by the tool-side adapter as
``named_devices``). Answered through os.path.exists / isdir / isfile and os.listdir,
each answer recorded as a hardware query.

Queries the simulation does not answer (other paths under /sys, /dev, /proc/driver) are recorded
too, with ``unanswered`` and the real answer: the audit of what the simulation left to this
machine. Standard library only, Python >= 3.9.
"""
import os
import sys

SIMULATED_ROOTS = ("/sys/class/infiniband", "/dev/infiniband")
_STDLIB = os.path.dirname(os.__file__)
AUDITED = ("/sys/", "/dev/", "/proc/driver")


class HostSimulation:
    def __init__(self, sim):
        self.sim = sim
        self.trace = sim.trace
        self.busy = False
        self.seen = set()  # unanswered queries recorded once each

    def devices(self):
        profile = self.sim.profile
        nics = profile.get("nics")
        if nics is None:
            nics = ["mlx5_%d" % i for i in range(self.sim.count)] if profile.get("vendor") == "nvidia" else []
        named = self.sim.probe.request.get("named_devices") or []
        return list(dict.fromkeys(list(nics) + list(named)))

    def install(self):
        self._orig = {"exists": os.path.exists, "isdir": os.path.isdir, "isfile": os.path.isfile,
                      "listdir": os.listdir}
        os.path.exists = self._wrap("exists", lambda kind, path: kind != "file")
        os.path.isdir = self._wrap("isdir", lambda kind, path: kind == "dir")
        os.path.isfile = self._wrap("isfile", lambda kind, path: kind == "file")
        os.listdir = self._wrap("listdir", self._list, label="os.", default=".")
        self._audit_libraries()
        self.sim.patched.append("/sys/class/infiniband, /dev/infiniband: %s" % (", ".join(self.devices()) or "none"))

    def _kind(self, path):
        """'dir', 'file' or None (absent) for a simulated path; False when the path is not ours."""
        try:
            path = os.fspath(path)
        except TypeError:
            return False
        if not isinstance(path, str):
            return False
        path = os.path.normpath(path)
        for root in SIMULATED_ROOTS:
            if path == root:
                return "dir"
            if path.startswith(root + "/"):
                rest = path[len(root) + 1:].split("/")
                if root.startswith("/dev"):
                    return "file" if len(rest) == 1 and rest[0].startswith(("uverbs", "rdma_cm")) else None
                if rest[0] not in self.devices():
                    return None
                return "dir" if len(rest) == 1 or rest[1:] in (["ports"], ["ports", "1"]) else None
        return False

    def _listing(self, path):
        path = os.path.normpath(os.fspath(path))
        if path == "/sys/class/infiniband":
            return self.devices()
        if path == "/dev/infiniband":
            return ["rdma_cm"] + ["uverbs%d" % i for i in range(len(self.devices()))]
        if path.endswith("/ports"):
            return ["1"]
        return []

    def _wrap(self, name, answer, label="os.path.", default=None):
        """``os.path.NAME`` (or ``os.NAME`` with ``label``) answering simulated paths with
        ``answer(kind, path)`` and recording it; every other path goes to the real function, and
        is audited."""
        orig = self._orig[name]

        def query(path=default, *args, **kwargs):
            if self.busy:
                return orig(path, *args, **kwargs)
            kind = self._kind(path)
            if kind is False:
                result = orig(path, *args, **kwargs)
                self._audit("%s%s(%r)" % (label, name, path), path, result)
                return result
            asked = "%s%s(%r)" % (label, name, os.fspath(path))
            self.sim.answers[asked] = lambda: answer(self._kind(path), path)  # under another profile
            return self.sim._record(asked, answer(kind, path))

        query.__wrapped__ = orig
        return query

    def _list(self, kind, path):
        if kind != "dir":
            raise FileNotFoundError(2, "No such file or directory (simulated)", os.fspath(path))
        return list(self._listing(path))

    def _audit_libraries(self):
        """Driver libraries loaded through ctypes (``ctypes.CDLL("libcuda.so.1")``): not simulated,
        listed with what this machine answered (loaded, or the loader's error)."""
        import ctypes

        from .standins import load_audited

        names = tuple(load_audited().get("libraries", ()))
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
        self.seen.add(query)
        self.busy = True
        try:
            self.trace.hardware(query, result, frame, unanswered=True)
        finally:
            self.busy = False

    def _audit(self, query, path, result):
        """A hardware or OS path the simulation does not answer: recorded once, marked unanswered."""
        try:
            text = os.fspath(path)
        except TypeError:
            return
        if isinstance(text, str) and text.startswith(AUDITED):
            self._unanswered(query, result, sys._getframe(2))


def outside_stdlib(frame):
    """The first frame at or above ``frame`` outside the standard library: past ctypes or
    subprocess to the code that asked."""
    while frame is not None and frame.f_code.co_filename.startswith(_STDLIB):
        frame = frame.f_back
    return frame
