"""The CI gate (``check -f`` over several commands, and ``lock``): every launch of the -f files resolved
(those sharing an interpreter, entry point and GPU in one import: deployment.resolve_all), one row each,
with its exit code; a non-zero worst exit when any was refused, raised, or (with --strict) had an explicit
request overridden; with ``--lock`` the fields that drifted from the lock file."""
from ..analysis import verdict
from ..analysis.expect import evaluate_expectations
from ..core.exitcodes import ExitCode
from ..probe.hooks import PLACEHOLDER_NOTE
from ..report.text import error_summary
from . import lock
from .deployment import deployment_doc, resolve_all

GATE_SCHEMA = "flagtrace/gate@1"
STATUSES = ("resolved", "incomplete", "error", "failed", "input", "unsupported")


def gate(opts, items, asked, err, lock_out=None):
    """(the gate's document, ``flagtrace/gate@1``; the worst exit code). ``lock_out``: each command is resolved
    twice and a lock of what both runs agree on is written there."""
    locked = lock.read(opts.lock) if getattr(opts, "lock", None) else None
    worst, rows, entries = ExitCode.OK, [], {}
    for row, launch, plan, pair, again in resolve_all(opts, items, asked, err, twice=lock_out is not None):
        rows.append(row)
        if launch is None:
            worst = max(worst, ExitCode(row["exit"]))
            continue
        result, analysis = pair
        version = ((analysis or {}).get("adapter") or {}).get("version")
        row["deployment"] = deployment_doc(launch, plan.adapter.name, version)
        row["notes"] = list(launch.notes) + [n for n in (analysis or {}).get("notes", []) if PLACEHOLDER_NOTE in n]
        if ((analysis or {}).get("adapter") or {}).get("tested") is False:
            row["notes"].append("%s %s is an untested release (the suite runs others; see docs/releases.md)"
                                % (analysis["adapter"].get("name"), version))
        if analysis is None or analysis.get("status") == "refused":
            row.update(status="failed", exit=int(ExitCode.CANNOT_RUN),
                       message=(analysis or {}).get("message") or result.why or "did not run")
        else:
            results = evaluate_expectations(analysis, getattr(opts, "expect", []))
            failed = sum(1 for r in results if not r[3])
            if results:
                row["expectations"] = [{"field": f, "expected": w, "actual": g, "ok": ok} for f, w, g, ok in results]
            code = verdict.exit_code(analysis, getattr(opts, "strict", False), failed)
            error = analysis.get("error")
            row.update(status="error" if error else analysis["status"] if analysis["status"] == "incomplete"
                       else "resolved", exit=int(code),
                       overridden=[f["field"] for f in analysis.get("fields", []) if f.get("verdict") == "overridden"],
                       message=error_summary(error, analysis) if error else "; ".join(
                           n for n in analysis.get("notes", []) if "stop point" in n) if code == ExitCode.NOT_REACHED
                       else "")
            if lock_out is not None and row["status"] == "resolved":
                entries[launch.describe()] = lock.entry(launch, analysis, again)
            if locked is not None and row["status"] == "resolved":  # one that raises is never locked: it fails as is
                drift = lock.drift(locked.get(launch.describe()), analysis)
                if drift:
                    row["drift"] = drift
                    row["exit"] = max(row["exit"], int(ExitCode.OVERRIDDEN))
        worst = max(worst, ExitCode(row["exit"]))
    doc = {"schema": GATE_SCHEMA, "files": opts.file, "looked_at": list(getattr(items, "files", ())),
           **({"shard": items.shard} if getattr(items, "shard", None) else {}), "rows": rows,
           "summary": {k: sum(1 for r in rows if r["status"] == k) for k in STATUSES}}
    if lock_out is not None:
        lock.write(lock_out, entries, getattr(items, "shard", None))
        err.write("flagtrace: wrote %s: %d command%s\n" % (lock_out, len(entries), "" if len(entries) == 1 else "s"))
    return doc, worst
