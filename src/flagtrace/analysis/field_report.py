"""One field's report: its verdict (honoured, overridden, decided, default), where its value
came from, its start and final values, and each of its changes explained."""
from .recorded import event_site, same_repr, same_value

FULL_HEAD, FULL_TAIL = 30, 10  # a field changed more often: explain the first and last ones


def explained_fully(index, total):
    """Whether change ``index`` of ``total`` gets its full explanation, not a brief one."""
    return total <= FULL_HEAD + FULL_TAIL or index < FULL_HEAD or index >= total - FULL_TAIL


def field_verdict(start, final, request):
    """honoured / overridden (the user asked for it), else decided / default."""
    if request is not None:
        # a config built first and given the request afterwards (a copy) starts elsewhere
        return "honoured" if same_value(start, final) or same_value(request.get("value"), final) \
            else "overridden"
    return "default" if same_value(start, final) else "decided"


class FieldReporter:
    def __init__(self, history, final, requests, declarations, after_stop, changes):
        self.history = history
        self.final = final
        self.requests = requests
        self.declarations = declarations
        self.after_stop = after_stop
        self.changes = changes

    def report(self, field):
        writes = self.history.by_field.get(field, [])
        initial = next((write for write in writes if write["how"] == "init"), None)
        fallback = next((write for write in writes if write["how"] == "fallback"), None)
        changes = [write for write in self.history.effective.get(field, [])
                   if write["how"] not in ("init", "fallback")]
        final = self.final.get(field) or (writes[-1]["new"] if writes else None)
        start = initial["new"] if initial else (changes[0].get("old") if changes else final)
        if fallback is not None and not changes:
            start = fallback["new"]  # no code decided it: the field's own fallback for "unset"
        request = self.requests.get(field)
        if request is not None:
            origin = request["source"]
        else:
            origin = "fallback" if fallback is not None else "default"
        report = {
            "field": field, "verdict": field_verdict(start, final, request), "origin": origin,
            "initial": start, "final": final,
            "changes": [self.changes.explain(change) if explained_fully(index, len(changes))
                        else self.changes.brief(change)
                        for index, change in enumerate(changes)],
        }
        if request is not None:
            report["requested"] = {"option": request["option"], "typed": request["typed"]}
            for key in ("alias_of", "renamed_from"):
                if request.get(key):
                    report["requested"][key] = request[key]
        if self.declarations:  # a release that declares: every field says what was declared of it, if anything
            report["declarations"] = self.declarations.of_field(field)
        if fallback is not None:
            report["fallback"] = {"value": fallback["new"], **event_site(fallback)}
        if changes and same_repr(start, final):
            report["note"] = "changed and changed back"
        elif not changes and not same_repr(start, final):
            report["note"] = ("changed without an assignment flagtrace saw: edited in place (a list "
                              "appended to, a dict updated) by code it was not watching")
        if field in self.after_stop:
            report["after_stop"] = self.after_stop[field]
        return report
