"""Launch commands as deployments write them (``-f FILE``): Kubernetes objects and ``helm template`` output,
``docker run`` lines, docker compose services. Each container (or service, or line) that runs a framework
becomes a Launch: its argv, its environment, the release its image tag names, its GPU count, and where
each token of the argv came from (the manifest's command or args line, an env expansion, the image's
entrypoint, a shell script inside it). Nothing is run here: the files are read statically.

- ``launch.py``: Launch and Token; reading files and folders into Launches (by kind of file);
- ``kube.py``: Kubernetes objects (pod templates of every workload kind, LeaderWorkerSet, KServe);
- ``docker.py``: ``docker run`` lines and compose services;
- ``shell.py``: the framework command inside ``bash -c "..."`` (joined continuations, ``$VAR`` from the
  container's environment);
- ``images.py``: image families (data/images.toml): the entrypoint and the release a tag names.
"""
