"""Launch commands as deployments write them (``-f FILE``): Kubernetes objects and ``helm template`` output,
``docker run`` lines, docker compose services. Each container (or service, or line) that runs a framework
becomes a Launch: its argv, its environment, the release its image tag names, its GPU count, and where
each token of the argv came from (the manifest's command or args line, an env expansion, the image's
entrypoint, a shell script inside it). Nothing is run here: the files are read statically.

From the top down (a module imports only those below it):

- ``launch.py``: reading files and folders into Launches, each file by the first reader that recognises it;
- ``readers/``: one reader per form, listed in ``readers/__init__.py`` (READERS):
  ``docker_run.py`` (``docker run`` lines), ``compose.py`` (compose services), ``kubernetes.py`` (pod
  templates of every workload kind, LeaderWorkerSet, KServe), ``chart_values.py`` (the values of vLLM
  production-stack and llm-d-modelservice, rendered from the charts' templates without helm);
- ``docker_launch.py``: a Launch from what docker gives a container (both docker forms);
- ``kubelet_env.py``: a Kubernetes container's environment, ``$(VAR)`` expanded as the kubelet does;
- ``shell_words.py``: shell text as words with their lines, ``$VAR`` expansion, the framework command inside
  ``bash -c "..."``;
- ``entry_points.py``: which framework or wrapper a command line runs;
- ``model.py``: Artifact (a file as the readers see it), Launch and Token;
- ``yaml_lines.py``: YAML documents whose strings carry their line;
- ``images.py``: image families (data/images.toml): the entrypoint and the release a tag names;
- ``origins.py``: what the layers of a deployment did to a Launch's command line, against the release's flags.
"""
