"""Builds the ``flagtrace/trace@2`` document inside the target and writes it once.

Standard library only, Python >= 3.9.
"""
import json
import os
import platform
import sys
import time
import traceback

from .recorder import _MISSING, field_items, frame_info, outer_frames, scalar_locals
from .values import describe, redact_argv, redact_env, safe_repr, scrub
from .files import write_whole
from .tempdir import unalias

SCHEMA = "flagtrace/trace@2"
_MAX_EVENTS = 200000
_MAX_LOGS = 5000
_FULL_PER_SITE = 20  # writes per code line recorded with stack, locals and source
_MAX_SOURCE = 4 * 1024 * 1024
_PROBE_DIR = os.path.dirname(os.path.abspath(__file__))


class _SourceFiles(set):
    """The files whose source the trace will carry. Each new one is also named in the request's
    ``sources_hint`` file at once: a local flagtrace reads and parses them while the target runs."""

    def __init__(self, hint_path):
        super().__init__()
        self.hint_path = hint_path

    def add(self, path):
        if path in self:
            return
        super().add(path)
        if self.hint_path:
            try:
                with open(self.hint_path, "a", encoding="utf-8") as fh:
                    fh.write(path + "\n")
            except OSError:
                self.hint_path = None


class TraceBuilder:
    def __init__(self, request):
        self.request = request
        self.seq = 0
        self.events = []
        self.objects = []
        self.parses = []
        self.constructs = []
        self.problems = []
        self.simulation = None
        self.outcome = {"status": "running"}
        self.files = _SourceFiles(request.get("sources_hint"))
        self.logging_on = True
        self.env_on = True
        self.env_seen = set()  # variables whose first read is recorded (hooks.install_environ)
        self._sites = {}
        self._decls = []
        self.declaring = None  # field -> declaration seq while declarations are being applied
        self.values_of = {}  # class -> items(obj): final values where the fields are not the truth
        self.primary = None  # the object an adapter names as the resolved config, when none was returned
        self.mounts = {}  # root oid -> (oid, prefix, heads): a tree resolved apart, then made a field
        self.recorder = None
        self._escaped = []  # the last exceptions that left a watched method (a validator may re-wrap one)
        self.written = False
        self._logs = 0
        self.started = time.time()
        self.argv0 = list(sys.argv)

    def _next(self):
        self.seq += 1
        return self.seq

    def _add(self, event):
        if len(self.events) < _MAX_EVENTS:
            self.events.append(event)
        else:
            self.problem("event_limit", "event limit reached (%d events): later writes are not recorded" % _MAX_EVENTS)

    def problem(self, kind, message):
        """Note what the probe could not do, once per message (at most 50): ``kind`` is what
        readers match on (``spec``: a --watch/--stop-at naming nothing, which refuses the
        explanation; ``spec_unused``; ``event_limit``; ``probe``: recording failed;
        ``adapter``; ``model_config``: remote config code stood in), ``message`` what a person reads."""
        entry = {"kind": kind, "message": message[:500]}
        if len(self.problems) < 50 and entry not in self.problems:
            self.problems.append(entry)

    # -- recorder callbacks -------------------------------------------------------
    def object_registered(self, w, parent):
        klass = w.klass
        self.objects.append({
            "id": w.oid, "class": "%s:%s" % (klass.__module__, klass.__qualname__),
            "root": w.root.oid, "path": w.path, "parent": parent.oid if parent else None,
            "file": getattr(sys.modules.get(klass.__module__), "__file__", None),
        })

    def construct(self, w, args, kwargs, frame):
        self.constructs.append({
            "seq": self._next(), "obj": w.oid,
            "kwargs": {k: describe(v, k) for k, v in kwargs.items()},
            "nargs": len(args), "at": frame_info(frame) if frame is not None else None,
        })

    def write(self, w, name, old, new, frame, how, line=None):
        field = w.dotted(name)
        event = {"kind": "write", "seq": self._next(), "obj": w.root.oid, "field": field,
                 "how": how, "new": describe(new, name)}
        if self.declaring is not None and how != "init" and w.root is w and field in self.declaring:
            event["decl"] = self.declaring[field]
        if old is not _MISSING:
            event["old"] = describe(old, name)
        if frame is not None and how != "init" and self._seen_site(frame, line) > _FULL_PER_SITE:
            # A loop writing from one line: the first writes carry the full context, the
            # rest only where they came from (the history stays complete, the cost small).
            code = frame.f_code
            event["at"] = {"func": getattr(code, "co_qualname", code.co_name), "file": code.co_filename,
                           "line": line or frame.f_lineno}
            event["frame"] = id(frame)
        elif frame is not None:
            info = frame_info(frame)
            if line is not None and line != info["line"]:
                info["line"] = line
                import linecache
                info["src"] = linecache.getline(info["file"], line).strip()
            event["at"] = info
            if how != "init":
                event["frame"] = id(frame)
                event["stack"] = outer_frames(frame.f_back, 6)
                event["locals"] = scalar_locals(frame)
                self.files.add(info["file"])
        self._add(event)

    def _seen_site(self, frame, line):
        key = (frame.f_code, line or frame.f_lineno)
        count = self._sites.get(key, 0) + 1
        self._sites[key] = count
        return count

    # -- declarations (frameworks that declare decisions and apply them later) ----------
    def declaration(self, source, declared, decider, slot_frame):
        event = {"kind": "decl", "seq": self._next(), "source": source,
                 "fields": {k: describe(v, k) for k, v in dict(declared).items()},
                 "decider": decider, "slot": frame_info(slot_frame) if slot_frame is not None else None}
        if decider and decider.get("file"):
            import linecache
            decider["src"] = linecache.getline(decider["file"], decider["line"]).strip()
            self.files.add(decider["file"])
        if event["slot"]:
            self.files.add(event["slot"]["file"])
        self._decls.append(event)
        self._add(event)
        return event["seq"]

    def fallback(self, w, field, value, site):
        """A value no code wrote: the framework reads it from the field's declared fallback."""
        event = {"kind": "write", "seq": self._next(), "obj": w.root.oid, "field": w.dotted(field),
                 "how": "fallback", "old": describe(None, field), "new": describe(value, field)}
        if site:
            event["at"] = site
            self.files.add(site["file"])
        self._add(event)

    def find_declaration(self, source, declared):
        """The latest recorded declaration with this source and these values (its seq)."""
        wanted = {k: describe(v, k)["repr"] for k, v in dict(declared).items()}
        for event in reversed(self._decls):
            if event["source"] == source and {k: v["repr"] for k, v in event["fields"].items()} == wanted:
                return event["seq"]
        return None

    # -- mounts (objects resolved on their own before another one took them as fields) --
    def mount(self, oid, into, prefix=None, heads=None):
        """Report root ``oid``'s fields under root ``into``: all of them below ``prefix``, or
        each field whose head is in ``heads`` as ``heads[head]`` (a builder object whose
        fields are copied into several configs). A builder's final values are not the
        config's: only its history is mounted."""
        self.mounts[oid] = (into, prefix, heads)

    def reroot(self, oid, into, path):
        """A nested object another root handed over as it is: from now on it is ``path`` of
        ``into`` (its history stays with the root it was written under)."""
        for obj in self.objects:
            if obj["id"] == oid:
                obj.update(root=into, path=path)

    def _mounted(self, oid, field):
        mount = self.mounts.get(oid)
        if mount is None:
            return oid, field
        into, prefix, heads = mount
        if prefix is not None:
            return into, prefix + "." + field
        head, dot, rest = field.partition(".")
        if head in heads:
            return into, heads[head] + dot + rest
        return oid, field

    def _apply_mounts(self, doc):
        if not self.mounts:
            return
        for event in doc["events"]:
            if event["kind"] == "write" and event["obj"] in self.mounts:
                event["obj"], event["field"] = self._mounted(event["obj"], event["field"])
        for obj in doc["objects"]:
            mount = self.mounts.get(obj["root"])
            if mount is None or mount[1] is None:
                continue
            into, prefix, _ = mount
            obj["path"] = prefix + ("." + obj["path"] if obj["path"] else "")
            if obj["parent"] is None:
                obj["parent"] = into
            obj["root"] = into
        fields = doc["outcome"].get("fields") or {}
        for oid, (into, prefix, _) in self.mounts.items():
            values = fields.pop(str(oid), None)
            if prefix is not None and values:
                target = fields.setdefault(str(into), {})
                for name, value in values.items():
                    target[prefix + "." + name] = value
            elif values:
                fields[str(oid)] = values

    # -- hooks callbacks ----------------------------------------------------------
    def parsed(self, parser, args, namespace, explicit, actions, frame):
        ns = vars(namespace) if hasattr(namespace, "__dict__") else {}
        parse = {
            "seq": self._next(), "prog": parser.prog, "args": redact_argv(args),
            "explicit": explicit, "actions": actions,
            "namespace": {k: describe(v, k) for k, v in ns.items()},
            "at": frame_info(frame) if frame is not None else None,
        }
        self.parses.append(parse)
        return parse

    def namespace_write(self, name, value, frame):
        """A write to a parsed namespace after parsing (the parse entry keeps the list)."""
        info = frame_info(frame)
        self.files.add(info["file"])
        return {"seq": self._next(), "name": name, "value": describe(value, name), "at": info}

    def parse_error(self, parser, message, actions, explicit, frame):
        self.parses.append({
            "seq": self._next(), "prog": parser.prog, "error": message, "actions": actions,
            "explicit": explicit, "args": redact_argv(list(sys.argv[1:])),
            "at": frame_info(frame) if frame is not None else None,
        })

    def log(self, logger, level, message, frame):
        if self._logs >= _MAX_LOGS:
            return
        self._logs += 1
        event = {"kind": "log", "seq": self._next(), "logger": logger, "level": level,
                 "message": message[:2000]}
        if frame is not None:
            event["at"] = frame_info(frame)
            event["frame"] = id(frame)
        self._add(event)

    def env(self, key, old, new, frame, how=None):
        event = {"kind": "env", "seq": self._next(), "key": key, "how": how,
                 "old": None if old is None else describe(old, key)["repr"],
                 "new": None if new is None else describe(new, key)["repr"]}
        if frame is not None:
            event["at"] = frame_info(frame)
            event["frame"] = id(frame)
            self.files.add(event["at"]["file"])
        self._add(event)

    def forget_env_reads(self, keys):
        """A variant set these variables after they were read (probe/variants.py): the reads made
        before are not about the values it resolves with; the next read is recorded again."""
        keys = set(keys)
        self.env_seen.difference_update(keys)
        self.events = [e for e in self.events if not (e.get("kind") == "envread" and e.get("key") in keys)]

    def env_read(self, key, value, frame):
        """The first time the process read ``key`` from its environment (None: unset)."""
        event = {"kind": "envread", "seq": self._next(), "key": key,
                 "value": None if value is None else describe(value, key)["repr"]}
        if frame is not None:
            event["at"] = frame_info(frame)
        self._add(event)

    def hardware(self, what, result, frame, unanswered=False):
        """A hardware or OS query: answered by the simulation, or (``unanswered``) by this machine
        where a simulation runs but does not cover it."""
        event = {"kind": "hw", "seq": self._next(), "query": what, "result": safe_repr(result)}
        if unanswered:
            event["unanswered"] = True
        if frame is not None:
            event["at"] = frame_info(frame)
            event["stack"] = outer_frames(frame.f_back, 10)
        self._add(event)

    # -- outcome ------------------------------------------------------------------
    def stopped(self, target, args, kwargs, frame):
        refs = []
        by_id = self.recorder.by_id if self.recorder else {}
        for value in list(args) + list(kwargs.values()):
            w = by_id.get(id(value))
            if w is not None:
                refs.append(w.root.oid)
        self.outcome = {
            "status": "stopped", "stop": target, "seq": self._next(),
            "args": [describe(a)["repr"] for a in args],
            "kwargs": {k: describe(v, k)["repr"] for k, v in kwargs.items()},
            "objects": refs, "at": frame_info(frame) if frame is not None else None,
        }

    def raised(self, exc):
        causes = []
        cause = exc.__cause__ or exc.__context__
        while cause is not None and len(causes) < 10:
            causes.append(cause)
            cause = cause.__cause__ or cause.__context__
        frames = self._frames(exc.__traceback__)
        inner = self._rewrapped(exc, causes)
        if inner is not None:  # pydantic turned a validator's ValueError into a ValidationError
            frames += self._frames(inner.__traceback__)
        for info in frames[-3:]:
            self.files.add(info["file"])
        chain = [{"type": type(c).__name__, "message": str(c)[:2000]} for c in causes[:5]]
        if inner is not None:
            chain.append({"type": type(inner).__name__, "message": str(inner)[:2000]})
        self.outcome = {
            "status": "raised", "seq": self._next(),
            "exception": {
                "type": type(exc).__name__, "module": type(exc).__module__,
                "message": str(exc)[:4000], "frames": frames[-12:], "chain": chain,
                "text": "".join(traceback.format_exception_only(type(exc), exc))[-4000:],
            },
            "fields": self.field_values(),
        }

    def escaped(self, exc):
        if not self._escaped or self._escaped[-1] is not exc:
            self._escaped = self._escaped[-7:] + [exc]

    def _rewrapped(self, exc, causes):
        """The exception a watched method raised, when ``exc`` re-raises it by message only
        (not ``exc`` nor one of its ``causes``: the original's frames are lost from ``exc``'s traceback)."""
        for inner in reversed(self._escaped):
            if inner is not exc and not any(inner is c for c in causes) and str(inner) and str(inner) in str(exc):
                return inner
        return None

    @staticmethod
    def _frames(tb):
        frames = []
        while tb is not None:
            frame = tb.tb_frame
            if not frame.f_code.co_filename.startswith(_PROBE_DIR):
                info = frame_info(frame, with_source=False)
                info["line"] = tb.tb_lineno
                import linecache
                info["src"] = linecache.getline(info["file"], tb.tb_lineno).strip()
                info["locals"] = scalar_locals(frame)
                frames.append(info)
            tb = tb.tb_next
        return frames

    def exited(self, code):
        self.outcome = {"status": "exited", "exit_code": code, "seq": self._next()}

    def completed(self):
        self.outcome = {"status": "completed", "exit_code": 0, "seq": self._next()}

    def field_values(self):
        out = {}
        if self.recorder is None:
            return out
        for w in self.recorder.objects:
            fields = out.setdefault(str(w.root.oid), {})
            items = self.values_of.get(type(w.obj)) if w.root is w else None
            for name, value in (items or field_items)(w.obj):
                fields[w.dotted(name)] = describe(value, name)
        return out

    # -- document -----------------------------------------------------------------
    def packages(self):
        out = []
        seen = set()
        for spec in self.request.get("watch", []) + self.request.get("stop_at", []):
            top = spec.split(":", 1)[0].split(".", 1)[0]
            if top in seen:
                continue
            seen.add(top)
            module = sys.modules.get(top)
            entry = {"module": top, "imported": module is not None}
            if module is not None:
                entry["file"] = getattr(module, "__file__", None)
                entry["version"] = _version(top, module)
            out.append(entry)
        return out

    def sources(self):
        out = {}
        for path in sorted(self.files):
            try:
                if os.path.getsize(path) > _MAX_SOURCE:
                    continue
                with open(path, encoding="utf-8", errors="replace") as fh:
                    out[path] = fh.read()
            except OSError:
                continue
        return out

    def document(self):
        req = self.request
        if self.outcome.get("status") in ("stopped", "completed", "exited") and "fields" not in self.outcome:
            self.outcome["fields"] = self.field_values()
        if self.primary is not None and not self.outcome.get("objects"):
            self.outcome["objects"] = [self.primary]
        doc = {
            "schema": SCHEMA,
            "flagtrace_version": req.get("flagtrace_version"),
            "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(self.started)),
            "duration_s": round(time.time() - self.started, 3),
            "target": {
                "command": redact_argv(req.get("command", [])),
                "argv": redact_argv(self.argv0),
                "cwd": os.getcwd(),
                "interpreter": sys.executable,
                "python": platform.python_version(),
                "platform": sys.platform,
                "pid": os.getpid(),
            },
            "request": {k: req.get(k) for k in ("watch", "stop_at", "adapter", "gpu", "inputs", "model_folders",
                                                "model_typed")},
            "adapter": req.get("adapter_info"),
            "packages": self.packages(),
            "simulation": self.simulation,
            "outcome": self.outcome,
            "objects": self.objects,
            "constructs": self.constructs,
            "parses": self.parses,
            "events": self.events,
            "problems": self.problems,
            "sources": self.sources(),
        }
        foreign = foreign_libpython()
        if foreign:
            doc["target"]["foreign_libpython"] = foreign
        self._apply_mounts(doc)
        return doc

    def write_file(self, path):
        if self.written:
            return
        self.written = True
        self.logging_on = False
        if self.recorder is not None:
            self.recorder.enabled = False
        self.save(path)

    def save(self, path):
        """The trace as it stands, secrets scrubbed, written whole to ``path`` (also ``--live``'s snapshot,
        which goes on recording)."""
        doc = self.document()
        redact_env(dict(os.environ))  # remembers the environment's secrets for scrub()
        # dumps, not dump: only the one-shot encoder is the C one (5x faster on big traces)
        text = unalias(scrub(json.dumps(doc, default=safe_repr)))
        write_whole(path, lambda fh: fh.write(text))


def _version(top, module):
    version = getattr(module, "__version__", None)
    if isinstance(version, str):
        return version
    try:
        from importlib import metadata

        return metadata.version(top)
    except Exception:
        return None


def foreign_libpython():
    """The shared libpython this process runs on when it is not its interpreter's own (under sys.base_prefix): a
    loader path (LD_LIBRARY_PATH, LD_PRELOAD) put another build's first. None otherwise, or off Linux."""
    try:
        with open("/proc/self/maps") as fh:
            paths = {line.split(None, 5)[-1].strip() for line in fh if "libpython" in line}
    except OSError:
        return None
    own = os.path.realpath(sys.base_prefix) + os.sep
    foreign = sorted(p for p in paths if p.startswith(os.sep) and not os.path.realpath(p).startswith(own))
    return foreign[0] if foreign else None

