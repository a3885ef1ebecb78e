"""``flagtrace debug [-- COMMAND...]``: flagtrace about itself — its version and where it runs from,
its data files, the GPU profiles and stand-ins it can simulate, its cache, the frameworks its
adapters support; with a command, the interpreter, target, adapter and framework release that
command would get. A tool about provenance explains its own."""
import os
import subprocess
import sys

from .. import __version__
from ..core import gpus
from ..probe import modelconfigs
from ..adapters import adapter_classes, choose_adapter
from ..core.exitcodes import ExitCode, FlagtraceError
from ..launch.command import parse_command
from ..core.cachefiles import cache_folder
from ..core.own_env import own_environment
from ..probe.sim.standins import load_table
from . import options
from .base import prepare

PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # flagtrace/
DATA = os.path.join(PACKAGE, "data")
HELP = ("flagtrace about itself: version, data, GPU profiles, stand-ins, cache, adapters; with a command, "
        "the interpreter and framework it gets")


def add_arguments(p):
    options.adapter_option(p)


def run(req):
    prepare(req)
    return run_debug(req.opts, req.asked, req.command, req.out)


def run_debug(opts, asked, command, out):
    w = out.write
    w("flagtrace %s\n" % __version__)
    w("  package      %s\n" % PACKAGE)
    w("  python       %s (Python %s)\n" % (sys.executable, sys.version.split()[0]))
    w("  data         %s: %s\n" % (DATA, ", ".join(sorted(f for f in os.listdir(DATA) if not f.startswith(".")
                                                          and os.path.isfile(os.path.join(DATA, f))))))
    _releases(w)
    w("  models       %s: %d bundled configs (flagtrace models; FLAGTRACE_MODELS overrides); Hugging Face "
      "cache %s\n" % (modelconfigs.MODELS, len(modelconfigs.catalog()), modelconfigs.hub_cache()))
    profiles = gpus.load_profiles()
    w("  gpu profiles %d: %s  (flagtrace gpus)\n" % (len(profiles), ", ".join(profiles)))
    table = load_table()
    w("  stand-ins    %d native modules, used only where the real import fails: %s\n"
      % (len(table), ", ".join(sorted(table))))
    folder = cache_folder()
    if folder:
        names = os.listdir(folder) if os.path.isdir(folder) else []
        w("  cache        %s (%d import lists, %d internal-error tracebacks; FLAGTRACE_CACHE_DIR= turns it off)\n" % (
            folder, sum(1 for n in names if n.startswith("imports-") and n.endswith(".txt")),
            sum(1 for n in names if n.startswith("internal-error-"))))
    else:
        w("  cache        off (FLAGTRACE_CACHE_DIR is empty)\n")
    for adapter_class in adapter_classes():
        adapter = adapter_class()
        w("  adapter      %-7s %s\n" % (adapter.name, adapter.supported()))
    if command:
        _command(asked.here(), command, w)
    return ExitCode.OK


def _releases(w):
    """Where --release builds and finds releases, what is built there, and the pin files shipped."""
    from ..envs.build import Builder
    from ..envs.installer import describe
    from ..core.pinlib import PINS, shipped
    from ..envs.release import recipes

    builder = Builder()
    built = builder.built()
    w("  releases     %s: %d built (flagtrace env list; FLAGTRACE_ENVS overrides); installer %s\n"
      % (builder.root, len(built), describe()))
    w("  pin files    %s: %s\n" % (PINS, ", ".join("%s %d" % (name, len(shipped(name))) for name in recipes())))


def _command(asked, command, w):
    target = parse_command(command)
    adapter = choose_adapter(target, asked)
    w("\nthe command\n")
    w("  interpreter  %s (%s)\n" % (target.interpreter, _interpreter_version(target.interpreter)))
    w("  runs         %s%s\n" % (target.describe(), " " + " ".join(target.python_options) if target.python_options else ""))
    w("  adapter      %s\n" % adapter.name)
    if adapter.package:
        w("  framework    %s\n" % _installed(target.interpreter, adapter.package))


def _ask(interpreter, code):
    try:
        proc = subprocess.run([interpreter, "-c", code], capture_output=True, text=True, timeout=60,
                              env=own_environment())
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise FlagtraceError("cannot ask %s: %s" % (interpreter, exc))
    return proc.stdout.strip() if proc.returncode == 0 else None


def _interpreter_version(interpreter):
    return "Python %s" % (_ask(interpreter, "import sys; print(sys.version.split()[0])") or "?")


def _installed(interpreter, package):
    found = _ask(interpreter, "import importlib.metadata as m, importlib.util as u\n"
                              "s = u.find_spec(%r)\n"
                              "print(m.version(%r) if s else '', (s.submodule_search_locations or [''])[0] if s else '')"
                 % (package, package))
    if not found:
        return "%s is not installed for this interpreter" % package
    version, _, where = found.partition(" ")
    return "%s %s at %s" % (package, version, where)
