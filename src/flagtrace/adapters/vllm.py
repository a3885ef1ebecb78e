"""vLLM (tool side): recognise its entry points and check the model before starting a
multi-second import. Release-specific knowledge lives in probe/adapters/vllm.py, which runs
where vLLM is installed and reads the release there."""
import dataclasses

from .. import modelconfigs
from ..exitcodes import ExitCode, FlagtraceError
from .framework import FrameworkAdapter
from .modelpath import check_model_dir, option_value


class VLLMAdapter(FrameworkAdapter):
    name = "vllm"
    scripts = ("vllm",)
    preimport = ("vllm.engine.arg_utils", "vllm.entrypoints.openai.api_server")
    source = ("https://github.com/vllm-project/vllm", "")
    model_options = ("--model",)
    optional_model_options = ("--tokenizer",)

    def substitute_models(self, args, asked):
        """``vllm serve MODEL``: the positional model is looked up like --model."""
        if args[:1] == ["serve"] and len(args) > 1 and not args[1].startswith("-"):
            head, found = modelconfigs.substitute(["--model", args[1]], ("--model",), asked.model_config,
                                                  asked.online, first_only=("--model",))
            rest, more = super().substitute_models(args[2:], asked)
            found = [dataclasses.replace(f, option="serve") for f in found]  # ``vllm serve MODEL``
            return ["serve", head[1]] + rest, found + more
        return super().substitute_models(args, asked)

    def check(self, args):
        check_model(args)


def serve_model(args):
    """``vllm serve MODEL ...``: the positional model (vLLM also moves ``--model`` there)."""
    if args[:1] == ["serve"] and len(args) > 1 and not args[1].startswith("-"):
        return args[1]
    return option_value(args, ("--model",))


def check_model(args):
    if any(a in ("-h", "--help") or a.startswith("--help=") for a in args) or "--config" in args \
            or any(a.startswith("--config=") for a in args):
        return  # the model may come from the config file
    if args[:1] not in (["serve"], []) and not args[0].startswith("-"):
        return  # another vllm subcommand: vLLM answers it
    path = serve_model(args)
    if path is None:
        raise FlagtraceError("the vLLM command names no model; give a directory holding the model's "
                             "config.json (weights are not needed): vllm serve DIR ...", ExitCode.USAGE)
    check_model_dir(path, "model")
