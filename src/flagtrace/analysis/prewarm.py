"""What the analysis will need, done while the target runs.

The target spends seconds importing its framework on one core; meanwhile this thread imports the
report's modules and parses each source file the probe names as it records (the probe lists
them in its request's ``sources_hint`` file). Nothing here decides anything: it fills the caches
the analysis would fill itself, so a failure here only costs the time it would have saved.
"""
import importlib
import os
import threading

from ..probe.tracebuild import _MAX_SOURCE
from . import conditions


class Prewarm:
    def __init__(self, hint_path=None, modules=()):
        self.hint_path = hint_path
        self.modules = modules
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="flagtrace-prewarm", daemon=True)

    def start(self):
        self._thread.start()
        return self

    def stop(self):
        """Ends the thread after the file it is parsing; the analysis parses the rest itself."""
        self._stop.set()
        self._thread.join()

    def _run(self):
        try:
            for name in self.modules:
                importlib.import_module(name)
            seen = set()
            while not self._stop.is_set():
                for path in self._named():
                    if self._stop.is_set():
                        return
                    if path not in seen:
                        seen.add(path)
                        self._index(path)
                self._stop.wait(0.05)
        except Exception:  # noqa: BLE001 - a cache filler: the analysis repeats whatever failed here
            return

    def _named(self):
        if not self.hint_path:
            return []
        try:
            with open(self.hint_path, encoding="utf-8") as fh:
                return [line.rstrip("\n") for line in fh if line.endswith("\n")]
        except OSError:
            return []

    @staticmethod
    def _index(path):
        try:
            if os.path.getsize(path) > _MAX_SOURCE:
                return
            with open(path, encoding="utf-8", errors="replace") as fh:  # as the probe reads it
                text = fh.read()
        except OSError:
            return
        conditions.source_index(text)
