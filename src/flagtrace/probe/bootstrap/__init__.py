"""How the probe gets into an interpreter flagtrace did not start itself.

``loader.py``: ``load_probe(probe_dir)`` loads the probe package from its source folder under a
private name; the ``python -c`` bootstrap of ``explain`` and the ``sitecustomize`` of ``run`` both
use it. ``sitecustomize.py``: what ``flagtrace run`` puts first on PYTHONPATH so that every Python
process a launch script starts records itself, and loads the probe only when it imports a watched
framework. ``activate.py``: what happens then, inside that process. ``supervise.py`` (with
``proctable.py``, the /proc watch): what runs beside the launch command on its host, starting it
and gathering what its processes wrote; launch/run_command.py calls it here, the ``--via`` agent there.
Standard library only, Python >= 3.9 (sitecustomize.py also parses on older Pythons).
"""
