"""``flagtrace check --expect FIELD=VALUE -- COMMAND...``: exit 1 unless every expectation holds (and,
with --strict, nothing explicit was overridden); ``check -f`` is the CI gate (engine/gate.py), one row per
command whatever their number (``flagtrace/gate@1``)."""
from ..analysis.expect import evaluate_expectations
from ..engine.gate import gate
from .gating import render_gate
from . import options
from .base import launches, take, writable
from .tracing import explained, report

HELP = "exit 1 unless every --expect holds (and, with --strict, nothing explicit was overridden)"


def add_arguments(p):
    p.add_argument("--expect", action="append", default=[], metavar="FIELD=VALUE")
    p.add_argument("--lock", metavar="LOCK", help="with -f: fail (exit 1) on any field whose value drifted from "
                   "the lock file flagtrace lock wrote, and say what set the new value")
    options.common(p, "check")
    options.shard_option(p)


def run(req):
    opts = req.opts
    writable(req)
    found = launches(req)
    if found is not None:  # -f: the gate, one row per command, whatever their number
        return render_gate(req, *gate(opts, found, req.asked, req.err))
    take(req, found)
    req.prepared = True  # explained() must not take the launch again

    def document(analysis):
        results = evaluate_expectations(analysis, opts.expect)
        failed = sum(1 for r in results if not r[3])
        return dict(analysis, expectations=[{"field": f, "expected": w, "actual": g, "ok": ok}
                                            for f, w, g, ok in results]), failed

    return report(req, explained(req), document)
