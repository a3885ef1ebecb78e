"""``--release NAME==VERSION`` on a verb: each release built (envs/) and put in place in the command (or in the
list of interpreter sides of diff and matrix)."""
import os

from ..core.exitcodes import ExitCode, FlagtraceError


def apply_releases(verb, releases, command, sides, via, offline, err):
    """The command (and the list of interpreter sides of diff/matrix) with each ``--release`` built and in
    place: (command, sides). A console script or Python of the command is the release's; under
    ``flagtrace run`` the release's bin folder comes first on PATH, so the script's python is it."""
    if not releases:
        return command, sides
    from ..envs.build import builder_for
    from ..envs.release import parse_release

    parsed = [parse_release(r) for r in releases]
    if via:
        raise FlagtraceError("--release builds the release here; with --via the remote host's own environment "
                             "runs the command (name its interpreter with --python)", ExitCode.USAGE)
    if verb not in ("diff", "matrix") and len(parsed) > 1:
        raise FlagtraceError("give one --release (diff and matrix compare several)", ExitCode.USAGE)
    builder = builder_for(err, offline=offline)
    pythons = [builder.interpreter(r) for r in parsed]
    if verb in ("diff", "matrix"):
        return command, list(sides or []) + pythons
    if verb == "run":
        os.environ["PATH"] = os.path.dirname(pythons[0]) + os.pathsep + os.environ.get("PATH", "")
        return command, sides
    from .whatif import side_command

    return side_command(command, pythons[0]), sides
