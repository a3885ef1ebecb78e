"""Command line: build the parser from the verbs (commands/), parse, dispatch. No logic of its own."""
import argparse
import sys

from . import __version__
from . import commands
from .commands.base import Request
from .core.exitcodes import ExitCode, FlagtraceError


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        verb = self.prog.split(None, 1)[1:]  # "flagtrace explain" -> explain; the top parser has none
        raise FlagtraceError("%s%s (see %s --help)" % ("".join(v + ": " for v in verb), message, self.prog),
                             ExitCode.USAGE)


def build_parser():
    parser = _Parser(prog="flagtrace", description=(
        "Explain where every config value of a Python server launch came from. "
        "Put the launch command after --."))
    parser.add_argument("--version", action="version", version="flagtrace " + __version__)
    sub = parser.add_subparsers(dest="verb", metavar="VERB", parser_class=_Parser)
    parser.verbs = sub.choices
    for name in commands.VERBS:
        module = commands.verb(name)
        module.add_arguments(sub.add_parser(name, help=module.HELP))
    return parser


def split_command(argv):
    if "--" in argv:
        i = argv.index("--")
        return argv[:i], argv[i + 1:]
    return argv, None


def run(argv, out, err):
    head, command = split_command(argv)
    if head[:1] and head[0] in commands.VERBS:
        preparse = getattr(commands.verb(head[0]), "preparse", None)
        if preparse is not None:
            head = preparse(head)
    parser = build_parser()
    opts, extra = parser.parse_known_args(head)
    if extra:  # said by the verb's own parser: "flagtrace diff: unrecognized arguments: ..."
        parser.verbs.get(opts.verb, parser).error("unrecognized arguments: %s" % " ".join(extra))
    if opts.verb is None:
        build_parser().print_help(out)
        return ExitCode.USAGE
    return commands.verb(opts.verb).run(Request(opts, command, out, err))


class Terminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP (a CI job's timeout, a closed terminal), unwound as Ctrl-C is: the target's
    process tree is killed and the run's folders removed on the way out."""


def _terminate(signum, _frame):
    raise Terminated(signum)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    import signal

    previous = {sig: signal.signal(sig, _terminate) for sig in (signal.SIGTERM, signal.SIGHUP)}
    try:
        return _main(argv)
    finally:  # a caller of main() in-process keeps its own handlers
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _main(argv):
    try:
        return int(run(argv, sys.stdout, sys.stderr))
    except FlagtraceError as exc:
        sys.stderr.write("flagtrace: %s\n" % exc.message)
        if exc.detail:
            sys.stderr.write("--- last lines of the target's stderr ---\n%s\n" % exc.detail)
        return int(exc.code)
    except Terminated as exc:
        sys.stderr.write("flagtrace: terminated (signal %d)\n" % exc.args[0])
        return 128 + exc.args[0]
    except KeyboardInterrupt:
        sys.stderr.write("flagtrace: interrupted\n")
        return int(ExitCode.INTERRUPTED)
    except BrokenPipeError:
        return int(ExitCode.OK)
    except Exception as exc:  # noqa: BLE001 - a flagtrace bug: one line, its own exit code
        saved = _save_traceback()
        sys.stderr.write("flagtrace: internal error: %s: %s (%s; please report it)\n" % (
            type(exc).__name__, " ".join(str(exc).split())[:200],
            "traceback saved to %s" % saved if saved else "traceback follows"))
        if not saved:
            import traceback

            traceback.print_exc()
        return int(ExitCode.INTERNAL)


def _save_traceback():
    """The current exception's traceback in flagtrace's cache folder; its path (None: not saved)."""
    import os
    import time
    import traceback

    from .core.cachefiles import cache_folder, write_whole

    folder = cache_folder()
    if not folder:
        return None
    path = os.path.join(folder, "internal-error-%s-%d.txt" % (time.strftime("%Y%m%d-%H%M%S"), os.getpid()))

    def write(fh):
        fh.write("flagtrace %s\nargv: %s\n\n" % (__version__, " ".join(sys.argv)))
        traceback.print_exc(file=fh)

    return write_whole(path, write, quiet=True, make_folder=True)
