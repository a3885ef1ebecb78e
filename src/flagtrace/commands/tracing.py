"""What explain, why and check share: the command run under the probe (or a saved trace read), its
outcome gated, analysed, the -f deployment and ``--fix`` added (engine/resolve.py), then reported by the verb."""
from .. import report as reporters
from ..analysis import verdict
from ..engine import resolve
from ..engine.deployment import deployment_doc
from ..report.text import error_summary
from .base import prepare


def explained(req):
    """``req``'s command (-f, --release set up) traced and analysed, its notes and error said on stderr
    where the report is not on the terminal: the analysis."""
    prepare(req)
    opts, err = req.opts, req.err
    asked = req.asked
    trace, result = resolve.obtain_trace(opts, asked, req.command, err)
    resolve.check_outcome(trace, result)
    analysis = resolve.explanation(trace)
    if req.launch is not None:
        info = analysis.get("adapter") or {}
        analysis["deployment"] = deployment_doc(req.launch, info.get("name"), info.get("version"))
    if getattr(opts, "fix", False):
        from ..engine.whatif import fixsearch

        fixsearch.add_fixes(opts, asked, req.command, analysis, err)
    if opts.show_output and result is not None:
        err.write(result.stdout.decode("utf-8", "replace"))
        err.write(result.stderr.decode("utf-8", "replace"))
    for note in analysis.get("notes", []):
        if opts.format != "terminal" or opts.output:
            err.write("flagtrace: note: %s\n" % note)
    if analysis.get("error") and (opts.format != "terminal" or opts.output):
        # the report is not on the terminal: say in one line why the exit status is 2
        err.write("flagtrace: %s\n" % error_summary(analysis["error"], analysis))
    return analysis


def report(req, analysis, document=None):
    """The verb's document rendered (``document(analysis)``: (the analysis with what the verb adds, how
    many expectations failed); default: the analysis itself); the exit code of ``analysis``."""
    opts = req.opts
    with reporters.output(opts.output, req.out) as sink:
        doc, failed = document(analysis) if document else (analysis, 0)
        # the terminal's colours only where the report goes to a terminal
        reporters.render(opts.format, doc, sink, {"verb": opts.verb, "width": opts.width, "details": opts.details,
                                                  "no_color": opts.no_color or bool(opts.output)})
    return verdict.exit_code(analysis, opts.strict, failed)
