"""A what-if verb's plan: the command's target and adapter, resolved once, and its request per
simulated GPU."""
import dataclasses
import os

from ...core import gpus
from ...core.exitcodes import ExitCode, FlagtraceError
from ...launch.command import Target, refuse_assignments
from ...core.request import ProbeRequest
from ...probe.bootstrap.proctable import is_python_path


@dataclasses.dataclass
class Plan:
    target: Target
    request: ProbeRequest
    env: object  # the target's environment (None: this process's)
    preimport: tuple
    adapter: object
    models: list = None  # [modelconfigs.Found]: the configs standing for the command's models


def plan(command, asked, example):
    """The command resolved here (``asked``: core.asked.Asked; a --via is another side's)."""
    if not command:
        raise FlagtraceError("nothing to run: put the launch command after --, e.g. flagtrace %s -- "
                             "python -m sglang.launch_server --model-path DIR" % example, ExitCode.USAGE)
    from ..resolve import prepare

    asked = asked.here()
    ready = prepare(command, asked)
    return Plan(ready.target, ready.request, ready.adapter.environment(ready.target, asked),
                tuple(ready.adapter.preimport), ready.adapter, ready.models)


def side_command(command, python):
    """``command`` run by interpreter ``python``: a Python command line gets that interpreter; a
    console script (``sglang serve``) the script of the same name beside it."""
    if not command:
        return command
    refuse_assignments(command)
    if is_python_path(command[0]):
        return [python] + list(command[1:])
    script = os.path.join(os.path.dirname(python), os.path.basename(command[0]))
    if not os.path.exists(script):
        raise FlagtraceError("%s is a console script and %s has none beside it; write the command as "
                             "python -m MODULE ... to compare interpreters" % (command[0], python), ExitCode.USAGE)
    return [script] + list(command[1:])


def one_framework(plans):
    names = [p.adapter.name for p in plans]
    if len(set(names)) > 1:
        raise FlagtraceError("the interpreters run different frameworks (%s): nothing to compare field by field"
                             % " vs ".join(names), ExitCode.USAGE)


def translating(notes):
    """An ``again`` for resolve(): a variant whose release refused an option another release
    spells differently is resolved again, translated by its adapter; ``notes[label]`` says how."""
    def again(plan, result, analysis):
        error = analysis.get("error") or {}
        if error.get("kind") != "argparse":
            return None
        version = (analysis.get("adapter") or {}).get("version")
        args, translated = plan.adapter.translate(result.variant.args, version)
        if not translated:
            return None
        notes[result.variant.label] = translated
        return dataclasses.replace(result.variant, args=args)

    return again


def gpu_request(plan, gpu):
    """The plan's request, simulating ``gpu`` (None: the real hardware)."""
    return plan.request.simulating(gpus.choose(gpu) if gpu is not None else None).to_json()
