"""The target's temporary files, in the run's own folder (the request's ``workdir``), which flagtrace
removes. A program stopped before it serves never runs the clean-up it registered for what it made at
start (Dynamo's logging config files, vLLM's Prometheus folder): left in /tmp, a CI gate over many
commands would fill it. Only Python's ``tempfile`` is pointed there, not ``TMPDIR`` (the program's
environment stays as it was), and a trace names the temporary folder the program would have used
(``unalias``). Not with ``--live``: that process goes on after flagtrace ends."""
import os
import tempfile

_ALIAS = None  # (this run's folder, the temporary folder the program would have used)


def redirect(request):
    global _ALIAS
    workdir = request.get("workdir")
    if not workdir or request.get("live") or _ALIAS is not None:
        return
    public = tempfile.gettempdir()
    private = os.path.join(workdir, "tmp")
    try:
        os.makedirs(private, exist_ok=True)
    except OSError:
        return
    tempfile.tempdir = private
    _ALIAS = (private, public)


def unalias(text):
    """``text`` (a trace's JSON) with this run's temporary folder named as the program's own."""
    return text.replace(_ALIAS[0], _ALIAS[1]) if _ALIAS else text
