"""The Kubernetes objects of every file ``-f`` names, for an object that names another in another file (an OME
InferenceService its runtime and model, a KServe LLMInferenceService its configs): by kind and name, parsed on the
first ask only (most gates never ask)."""
from .yaml_lines import load_documents

_YAML = (".yaml", ".yml", ".json")


class Objects:
    def __init__(self, paths=()):
        self.paths = [p for p in paths if p != "-" and p.lower().endswith(_YAML)]
        self._all = None

    def all(self):
        """[(object, its file)] of every file, parsed once."""
        if self._all is None:
            self._all = []
            for path in self.paths:
                try:
                    with open(path, encoding="utf-8") as fh:
                        text = fh.read()
                except (OSError, UnicodeDecodeError):
                    continue
                self._all += [(doc, path) for doc in load_documents(text, path) if isinstance(doc, dict)]
        return self._all

    def find(self, kinds, name, own=()):
        """(the object of one of ``kinds`` named ``name``, its file): the file's own documents ``own`` first, then
        the kinds in the order given; (None, None) when no file holds it."""
        for kind in kinds:
            for doc, path in [(d, None) for d in own if isinstance(d, dict)] + self.all():
                if doc.get("kind") == kind and (doc.get("metadata") or {}).get("name") == name:
                    return doc, path
        return None, None

    def naming(self, test, own=()):
        """(object, its file) of the first object for which ``test(object)`` holds: own documents first."""
        for doc, path in [(d, None) for d in own if isinstance(d, dict)] + self.all():
            if test(doc):
                return doc, path
        return None, None
