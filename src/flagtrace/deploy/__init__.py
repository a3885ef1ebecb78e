"""Launch commands as deployments write them (``-f FILE``): Kubernetes objects and ``helm template`` output,
``docker run`` lines, docker compose services, shell scripts, SkyPilot tasks, operators' objects. Each container (or service, or line) that runs a framework
becomes a Launch: its argv, its environment, the release its image tag names, its GPU count, and where
each token of the argv came from (the manifest's command or args line, an env expansion, the image's
entrypoint, a shell script inside it). Nothing is run here: the files are read statically.

From the top down (a module imports only those below it):

- ``launch.py``: reading files and folders into Launches, each file by the first reader that recognises it;
- ``readers/``: one reader per form, listed in ``readers/__init__.py`` (READERS): Dockerfiles, ``docker run``
  lines, compose services, shell scripts (Slurm, benchmark scripts), SkyPilot tasks, the values of the charts
  flagtrace renders itself (``chart_values.py``), Kubernetes objects (``kubernetes.py``: pod templates of every
  workload kind and of operators' objects);
- ``charts/``: the charts flagtrace renders itself, one module per chart, their templates written out in Python
  (``production_stack.py``, ``llm_d_modelservice.py``; ``common.py``: the values as a template sees them, the
  Launch of a rendered container);
- ``operators/``: an operator's own object as the pods its controller makes (RoleBasedGroup, KServe's
  LLMInferenceService, NVIDIA Dynamo's graphs, OME's InferenceService), with what it injects;
- ``ray_serve_llm.py``: a RayService's Ray Serve LLM engines as command lines;
- ``helm.py``: a chart folder rendered by ``helm template`` where helm is on PATH;
- ``docker_launch.py``: a Launch from what docker gives a container (both docker forms);
- ``shell_script.py``: a shell script read statically (assignments, arrays, ``eval``, heredoc files, the framework
  commands wherever they stand), also the script inside a container's ``bash -c``;
- ``kubelet_env.py``: a Kubernetes container's environment, ``$(VAR)`` expanded as the kubelet does;
- ``go_template.py``: the part of Go's text/template operators' configs use; ``strategic_merge.py``: a patch laid
  over a pod template as Kubernetes does it;
- ``shell_words.py``: which word of ``SHELL -c SCRIPT`` is the script, ``$VAR`` expansion;
- ``entry_points.py``: which framework or wrapper a command line runs;
- ``model.py``: Artifact (a file as the readers see it), Launch and Token; ``objects.py``: the objects of every
  file ``-f`` names, for an object that names another;
- ``yaml_lines.py``: YAML documents whose strings carry their line;
- ``images.py``: image families (data/images.toml): the entrypoint and the release a tag names;
- ``origins.py``: what the layers of a deployment did to a Launch's command line, against the release's flags.
"""
