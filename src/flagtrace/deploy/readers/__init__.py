"""The readers of deployment files, one per form, in the order they are asked: the first that recognises a
file reads it. A reader is a module with two functions over a model.Artifact (the file's source, text and
YAML documents, parsed once on first ask):

- ``recognises(artifact) -> bool``: whether the file is in its form;
- ``read(artifact) -> [model.Launch]``: every framework launch the file holds, in order.

A reader imports the modules of deploy/ below it (model, shell_words, entry_points, images, ...), never another
reader nor launch.py. A new form is a module here and a line in READERS."""
from . import chart_values, compose, docker_run, dockerfile, kubernetes, shell_script, skypilot

READERS = (
    dockerfile,  # by its name: FROM, ENV, ENTRYPOINT/CMD
    docker_run,  # shell text (a .yaml/.json is never one)
    compose,  # one mapping with services and no kind
    shell_script,  # .sh, .slurm, ... or a #! line: the commands the script runs
    skypilot,  # a mapping with run and resources/setup/envs/num_nodes
    chart_values,  # the values of vLLM production-stack or llm-d-modelservice, rendered without helm
    kubernetes,  # last: any other YAML or JSON
)
