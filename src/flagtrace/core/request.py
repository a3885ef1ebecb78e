"""The request flagtrace sends the probe for one command (``flagtrace/request@1``): typed, built in one
place (ProbeRequest.build, from the command's adapter and the configs standing for its models), sent as
JSON (to_json). The launchers add where the run's files go (local.py, remote.py, variants.py);
``flagtrace run``'s request, for a whole process tree, is its own (commands/run.py)."""
import dataclasses

from ..probe import modelconfigs

SCHEMA = "flagtrace/request@1"


@dataclasses.dataclass(frozen=True)
class ProbeRequest:
    adapter: str  # the adapter's name: the probe's adapter of that name sets the framework up
    adapter_info: dict  # {name, describe}: how the trace names the adapter
    watch: list  # MODULE:CLASS config classes to watch (a framework adapter adds its own in the probe)
    stop_at: list  # MODULE:FUNCTION: the target is stopped when it calls one
    setup: list  # probe modules set up before the target runs (sim.gpu, remote_code, the adapter's)
    named_devices: list = None  # the devices the command names (--device ...): framework adapters only
    user_specs: list = None  # --watch/--stop-at as typed: the probe refuses one that names nothing
    inputs: list = None  # the configs that stand for the command's models, in words
    model_folders: list = None  # their folders (probe/remote_code.py stands in for their auto_map)
    model_typed: list = None  # each as the command named it (reports show that, never the folder)
    gpu: dict = None  # the GPU profile simulated (None: the real hardware)
    cpu_target: str = None  # the words that make the command target the CPU (``--device cpu``): probe/sim/cpu.py
    input_error: str = None  # flagtrace's own usage error of the command, deferred to the framework's parser

    @classmethod
    def build(cls, adapter, target, asked, models=None, check=True, input_error=None, user_specs=False):
        """The request for ``target`` (``asked``: core.asked.Asked) as ``adapter`` sees it: ``models``
        ([modelconfigs.Found]; None: none looked up) stand for the command's models; ``check=False``: without
        the adapter's own input check, whose error is ``input_error``, deferred (commands/tracing.py);
        ``user_specs``: the probe says when a typed --watch/--stop-at names nothing."""
        request = adapter.request(target, asked, check)
        if models is not None:
            request = dataclasses.replace(request, **modelconfigs.into_request({"setup": request.setup}, models))
        if user_specs:
            request = dataclasses.replace(request, user_specs=list(asked.watch) + list(asked.stop_at))
        return dataclasses.replace(request, input_error=input_error) if input_error else request

    def simulating(self, profile):
        """The same request with GPU ``profile`` simulated (None: the real hardware)."""
        if profile is None:
            return self
        return dataclasses.replace(self, gpu=profile, setup=["sim.gpu"] + list(self.setup))

    def to_json(self):
        """The request as the probe reads it (fields not set are left out)."""
        doc = {"schema": SCHEMA}
        doc.update((f.name, getattr(self, f.name)) for f in dataclasses.fields(self)
                   if getattr(self, f.name) is not None)
        return doc
