"""vLLM (tool side): recognise its entry points and check the model before starting a
multi-second import. Release-specific knowledge lives in probe/adapters/vllm.py, which runs
where vLLM is installed and reads the release there."""
from ..exitcodes import ExitCode, FlagtraceError
from .framework import FrameworkAdapter
from .modelpath import check_model_dir, option_value


class VLLMAdapter(FrameworkAdapter):
    name = "vllm"
    scripts = ("vllm",)
    preimport = ("vllm.engine.arg_utils", "vllm.entrypoints.openai.api_server")
    source = ("https://github.com/vllm-project/vllm", "")

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
