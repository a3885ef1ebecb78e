"""How many times does `flagtrace --via` start the transport? (expected: once per verb)

Wraps the transport PREFIX in a counting shim (a script that logs its argv, then execs the
prefix), runs `flagtrace explain`, `check` and `why` through it on tests/examples/serve_config.py
and `flagtrace run` on the launch script tests/scripts/good_continuation.sh (which starts it),
and prints, per verb, the transport invocations, the remote command line each got, the exit
status and the wall-clock time; with the same run done locally for comparison.

Without --via it starts a private OpenSSH server on 127.0.0.1 (tests/sshd_support.py; needs
/usr/sbin/sshd) and goes through it, so the count is for a real ssh transport.

    .venv/bin/python bench/remote.py [--via "ssh -p 19248 root@gpu-box" --remote-root /path/to/flagtrace]
"""
import argparse
import os
import shlex
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests"))

import sshd_support  # noqa: E402

FLAGTRACE = [sys.executable, "-m", "flagtrace"]
WATCH = ["--watch", "serve_config:ServeConfig", "--stop-at", "serve_config:start"]
ARGS = ["--model", "hybrid-7b", "--page-size", "64", "--speculative-algorithm", "EAGLE",
        "--cache-strategy", "extra_buffer"]
VERBS = {
    "explain": ["explain"],
    "check": ["check", "--expect", "page_size=1", "--expect", "max_batch=48"],
    "why": ["why", "page_size"],
    "run": ["run"],
}


def target_command(verb, root, python):
    """What each verb runs: the program itself, or (run) a launch script that starts it."""
    if verb == "run":
        return ["bash", os.path.join(root, "tests", "scripts", "good_continuation.sh")]
    return [python, os.path.join(root, "tests", "examples", "serve_config.py")] + ARGS


def run(argv):
    started = time.perf_counter()
    proc = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT,
                          stdin=subprocess.DEVNULL)
    return proc.returncode, time.perf_counter() - started, proc.stderr.decode("utf-8", "replace")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--via", help="transport prefix (default: a private sshd on 127.0.0.1)")
    parser.add_argument("--python", default="python3", help="remote interpreter (default %(default)s)")
    parser.add_argument("--remote-root", default=ROOT,
                        help="where tests/examples is on the remote host (default: this checkout)")
    opts = parser.parse_args()

    server = None
    if opts.via:
        prefix = shlex.split(opts.via)
    else:
        reason = sshd_support.available()
        if reason:
            sys.exit("bench/remote.py: no --via given and no sshd to start: %s" % reason)
        server = sshd_support.SshServer().start()
        prefix = server.client()
    work = tempfile.mkdtemp(prefix="ft-bench-remote-")
    try:
        counted, read_log = sshd_support.recording_prefix(prefix, work)
        print("transport: %s%s" % (shlex.join(prefix[:1] + ["..."]) if server else shlex.join(prefix),
                                   " (private sshd on 127.0.0.1:%d)" % server.port if server else ""))
        print("%-8s %12s %6s %9s %9s  %s" % ("verb", "invocations", "exit", "remote s", "local s", "remote command"))
        failed = False
        for verb, head in VERBS.items():
            before = len(read_log())
            rc, seconds, err = run(FLAGTRACE + head + ["--via", shlex.join(counted), "--python", opts.python]
                                   + WATCH + ["--"] + target_command(verb, opts.remote_root, "python3"))
            calls = read_log()[before:]
            lrc, lseconds, _ = run(FLAGTRACE + head + WATCH + ["--"] + target_command(verb, ROOT, sys.executable))
            command = calls[0][-1] if calls else "-"
            print("%-8s %12d %6d %9.2f %9.2f  %s" % (verb, len(calls), rc, seconds, lseconds,
                                                     command if len(command) < 60 else command[:57] + "..."))
            if rc != lrc or len(calls) != 1:
                failed = True
                sys.stderr.write(err)
        print("expected: 1 invocation per verb, the same exit status as locally -> %s"
              % ("FAIL" if failed else "ok"))
        return 1 if failed else 0
    finally:
        import shutil

        shutil.rmtree(work, ignore_errors=True)
        if server is not None:
            server.stop()


if __name__ == "__main__":
    sys.exit(main())
