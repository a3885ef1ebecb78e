"""What check -f and lock share: the gate's document rendered, its worst exit code returned."""
from .. import report as reporters


def render_gate(req, doc, worst):
    with reporters.output(getattr(req.opts, "output", None), req.out) as sink:
        reporters.render(req.opts.format, doc, sink, {"verb": "gate"})
    return worst
