"""What every framework adapter does on the tool side: recognise the framework's entry points,
check the command before a multi-second import, and ask the probe for the adapter's set-up."""
import dataclasses
import os

from ..probe import modelconfigs
from .base import Adapter
from .modelpath import option_value


class FrameworkAdapter(Adapter):
    scripts = ()  # console scripts (``sglang``, ``vllm``)
    # Other programs' modules whose ``python -m`` runs this framework's resolution (NVIDIA Dynamo's worker
    # ``dynamo.vllm``): followed through their own code as any entry point is.
    wrapper_modules = ()

    @property
    def package(self):
        return self.name  # also the adapter's name

    @property
    def setup(self):
        return ("adapters." + self.name,)

    @classmethod
    def matches(cls, target, asked):
        if asked.adapter == cls.name:
            return True
        if asked.adapter != "auto":
            return False
        if target.mode == "module":
            return target.target.startswith(cls.name + ".") or target.target in cls.wrapper_modules
        if target.mode == "script":
            return os.path.basename(target.target) in cls.scripts
        return False

    # Where the framework's source lives, for links in reports: (repository URL, the folder that
    # holds the package in it); a release's tag is "v" + its version.
    source = None

    def source_url(self, relpath, line, version):
        """A link to ``relpath`` (relative to the package's parent folder: "sglang/srt/x.py") at
        the release's tag, or None for a file that is not the framework's."""
        if not self.source or not version or not relpath.startswith(self.name + "/"):
            return None
        repo, folder = self.source
        return "%s/blob/v%s/%s%s#L%s" % (repo, version, folder + "/" if folder else "", relpath, line)

    def supported(self):
        """The releases this adapter supports and those tested (from its probe side)."""
        import importlib

        return importlib.import_module("flagtrace.probe.adapters." + self.name).supported_text()

    # Options that name a model: the main one (--model-config answers for it), others looked up the
    # same way (a draft model), and some only where a config is found (a tokenizer path).
    model_options = ()
    other_model_options = ()
    optional_model_options = ()
    positional_model = None  # the word after which a positional model comes (``serve``)
    # Options naming network devices (comma-separated): the simulated box has them.
    device_options = ()

    def prepare(self, target, asked):
        """The target with the config that stands for each model it names (modelconfigs.py) in place
        of a hub id or a path that exists only on the GPU box: (target, [Found]). With --via the
        paths are the remote host's: left alone."""
        if asked.via:
            return target, []
        args, found = self.substitute_models(list(target.args), asked)
        return dataclasses.replace(target, args=args), found

    def substitute_models(self, args, asked):
        return modelconfigs.substitute_command(args, self.model_spec(), asked.model_config, asked.offline)

    def model_spec(self):
        """Which arguments name a model (modelconfigs.substitute_command), as plain data."""
        return {"options": list(self.model_options + self.other_model_options), "first_only": list(self.model_options),
                "optional": list(self.optional_model_options), "positional": self.positional_model}

    def request(self, target, asked, check=True):
        if check and not asked.via:  # a remote model path is checked there, by the framework
            self.check(target.args)
        named = [d.strip() for option in self.device_options for d in (option_value(target.args, (option,)) or
                                                                           "").split(",") if d.strip()]
        return dataclasses.replace(super().request(target, asked, check), named_devices=named,
                                   setup=list(self.setup))

    # How ``--release NAME==VERSION`` builds this framework's environment (envs/build.py Recipe keywords
    # beyond the name, the range and the console scripts): the module whose import the smoke test checks,
    # the pin generator's module, and the recipe's switches.
    release_env = {}

    def release_recipe(self):
        import importlib

        from ..envs.build import Recipe

        first, last = importlib.import_module("flagtrace.probe.adapters." + self.name).supported_range()
        return Recipe(framework=self.name, first=first, last=last, scripts=tuple(self.scripts), **self.release_env)

    # Releases of a wrapper (``--release ai-dynamo==1.6.1``) built as an overlay over one of this framework's
    # releases (the wrapper's pin file names which): {distribution: Recipe keywords beyond the name}.
    wrapper_release_env = {}

    def wrapper_recipes(self):
        from ..envs.build import Recipe

        return {name: Recipe(framework=name, **kw) for name, kw in self.wrapper_release_env.items()}

    def option_name(self, word):
        """The option name the framework's parser looks up for a word of the command line (``--x=v`` -> ``--x``)."""
        return word.split("=", 1)[0]
