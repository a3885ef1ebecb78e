"""Hooks for names defined in the program's own ``__main__`` (a script run directly).

No import happens there, so the post-import hooks never fire. Instead the top-level frame
of ``__main__`` is traced line by line (and nothing else): as soon as a watched class or a
stop function exists in its globals, and its decorators have run, the callback patches it.
Standard library only, Python >= 3.9.
"""
import sys


class MainModuleHooks:
    def __init__(self):
        self.pending = []  # (first name, callback)
        self._prev = None
        self._frame = None
        self._active = False

    def on_define(self, qualname, callback):
        self.pending.append((qualname.split(".", 1)[0], callback))

    def start(self):
        if self.pending and not self._active:
            self._active = True
            self._prev = sys.gettrace()
            sys.settrace(self._on_call)

    def _on_call(self, frame, event, arg):
        if self._frame is None and frame.f_code.co_name == "<module>" and \
                frame.f_globals is sys.modules["__main__"].__dict__:
            self._frame = frame
            return self._on_line
        return None

    def _on_line(self, frame, event, arg):
        if event in ("line", "return") and frame is self._frame:
            self._check(frame.f_globals)
        return self._on_line

    def _check(self, globals_):
        main = sys.modules["__main__"]
        ready = [(name, cb) for name, cb in self.pending if name in globals_]
        for item in ready:
            self.pending.remove(item)
            item[1](main)
        if not self.pending:
            self.stop()

    def stop(self):
        if self._active:
            self._active = False
            if sys.gettrace() == self._on_call:
                sys.settrace(self._prev)
