"""Where the value a field had at a point in time (seq) came from: the user's request, the
field's default or fallback, or the code (or declaration) that set it."""
from .recorded import event_site


class Provenance:
    def __init__(self, history, requests, environment, declarations):
        self.history = history
        self.requests = requests
        self.environment = environment
        self.declarations = declarations

    def of(self, field, seq):
        """Where the value of ``field`` as of ``seq`` came from."""
        last = self.history.last_before(field, seq)
        request = self.requests.get(field)
        if last is None or last["how"] in ("init", "fallback"):
            if request is not None:
                return {"origin": request["source"], "option": request["typed"], "set_by": None}
            return {"origin": "fallback" if last and last["how"] == "fallback" else "default", "set_by": None}
        if last["how"] == "replaced":
            last = dict(self.history.replacing_write(last) or last, old=last.get("old"))
        out = {"origin": "decided", "set_by": event_site(last),
               "was": last.get("old"), "requested": request["typed"] if request else None}
        env = self.environment.read_by_statement(last)
        if env:  # ``self.data_parallel_size = envs.VLLM_DP_SIZE``: the value came from there
            out["from_env"] = env
        decl = self.declarations.get(last.get("decl"))
        if decl is not None:  # applied from a declaration: the code that declared it set it
            out["set_by"] = self.declarations.decision_site(decl, field)
            out["declared_as"] = decl["source"]
        return out
