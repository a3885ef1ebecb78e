"""A Launch from what docker (a ``docker run`` line, a compose service) gives a container, kept only when the
command runs a framework or a wrapper; the GPUs docker hands out are NVIDIA's."""
from .entry_points import recognise, wrapper_of
from .model import Launch


def framework_launch(source, name, tokens, env, image, gpus, release, note):
    """The Launch, or None when the command runs neither a framework nor a wrapper."""
    argv = [t.text for t in tokens]
    framework, wrapper = recognise(argv), wrapper_of(argv)
    if not framework and not wrapper:
        return None
    return Launch(source=source, name=name, tokens=tokens, env=env, image=image, gpus=gpus,
                  gpu_vendor="nvidia" if gpus else "", release=release, notes=[note] if note else [],
                  framework=framework, wrapper=wrapper)
