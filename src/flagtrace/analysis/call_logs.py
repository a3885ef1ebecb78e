"""The log lines and environment writes of each call, and the change each one announces."""
from .recorded import call_key, same_repr


class CallLogs:
    """``by_call``: (frame, file, func) -> the log and env events of that call, in order.
    ``by_write``: seq of a change -> the log and env events of its call that go with it."""

    def __init__(self, events, writes):
        self.by_call = {}
        for event in events:
            if event["kind"] in ("log", "env") and "frame" in event:
                self.by_call.setdefault(call_key(event), []).append(event)
        self.by_write = self._attach(writes)

    def _attach(self, writes):
        """Each log line of a call goes with the change it announces: the change of the same call
        nearest to it in time (code warns then assigns, or assigns then reports)."""
        changes_by_call = {}
        for write in writes:
            if write["how"] != "init" and "frame" in write and not same_repr(write.get("old"), write["new"]):
                changes_by_call.setdefault(call_key(write), []).append(write)
        owner = {}
        for key, logs in self.by_call.items():
            changes = changes_by_call.get(key)
            if not changes:
                continue
            for log in logs:
                # the nearest change of the same call; on a tie the one after (warn, then assign)
                target = min(changes, key=lambda change: (abs(change["seq"] - log["seq"]),
                                                          change["seq"] < log["seq"]))
                owner.setdefault(target["seq"], []).append(log)
        return owner
