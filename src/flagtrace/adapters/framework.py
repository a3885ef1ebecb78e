"""What every framework adapter does on the tool side: recognise the framework's entry points,
check the command before a multi-second import, and ask the probe for the adapter's set-up."""
import dataclasses
import os

from ..probe import modelconfigs
from .base import Adapter
from .modelpath import option_value


class FrameworkAdapter(Adapter):
    """A framework's adapter: its data is its record (core/frameworks/<name>.py, ``record``), set as class
    attributes when the class is made (``name``, ``scripts``, ``wrapper_modules``, ``env``, ...)."""
    record = None

    def __init_subclass__(cls, **kw):
        super().__init_subclass__(**kw)
        if cls.record is not None:
            for field in dataclasses.fields(cls.record):
                setattr(cls, field.name, getattr(cls.record, field.name))
            cls.package = cls.record.package

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

    def supported(self):
        """The releases this adapter supports and those tested (from its probe side)."""
        import importlib

        return importlib.import_module("flagtrace.probe.adapters." + self.name).supported_text()

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
        return self.record.model_spec()

    def request(self, target, asked, check=True):
        if check and not asked.via:  # a remote model path is checked there, by the framework
            self.check(target.args)
        named = [d.strip() for option in self.device_options for d in (option_value(target.args, (option,)) or
                                                                           "").split(",") if d.strip()]
        cpu = ["%s %s" % (option, value) for option, value in self.cpu_target
               if (option_value(target.args, (option,)) or "").strip().lower() == value]
        return dataclasses.replace(super().request(target, asked, check), named_devices=named,
                                   cpu_target=cpu[0] if cpu else None,
                                   setup=(["sim.cpu"] if cpu else []) + list(self.setup))

    def option_name(self, word):
        """The option name the framework's parser looks up for a word of the command line (``--x=v`` -> ``--x``)."""
        return word.split("=", 1)[0]
