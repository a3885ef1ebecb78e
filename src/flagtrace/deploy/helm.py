"""Helm charts under -f: a chart's templates are not YAML until ``helm template`` renders them. A chart folder
(or any file inside one) is read as what it renders where a ``helm`` binary is on PATH; without one it is one
row saying what it is and the exact command that renders it — never a YAML error of its templates. A values
file alone (``values*.yaml``, no ``kind``) is the same one line, unless it is the values of a chart flagtrace
renders itself (readers/chart_values.py)."""
import os
import re
import shutil
import subprocess

from ..core.own_env import own_environment

_VALUES = re.compile(r"(^|[-_.])values([-_.][\w.-]*)?\.ya?ml$", re.I)


def chart_root(path):
    """The chart folder (holding Chart.yaml) that ``path`` is or lies in, or None."""
    folder = path if os.path.isdir(path) else os.path.dirname(os.path.abspath(path))
    for _ in range(8):
        if os.path.isfile(os.path.join(folder, "Chart.yaml")):
            return folder
        parent = os.path.dirname(folder)
        if parent == folder:
            break
        folder = parent
    return None


def is_values_file(path, text):
    """A Helm values file on its own: named values*.yaml (or ...-values-....yaml), YAML without ``kind`` or
    ``apiVersion``."""
    return bool(_VALUES.search(os.path.basename(path))) and not re.search(r"^(kind|apiVersion):", text, re.M)


def render_command(chart, values=None):
    return "helm template RELEASE %s%s | flagtrace check -f -" % (chart, " -f %s" % values if values else "")


def render(chart, values=None, timeout=120):
    """(the rendered manifests, None) with a ``helm`` on PATH, else (None, why in one line)."""
    helm = shutil.which("helm")
    if helm is None:
        return None, ("-f %s: a Helm chart (Chart.yaml): flagtrace reads what it renders and no helm is on PATH "
                      "here; run: %s" % (values or chart, render_command(chart, values)))
    argv = [helm, "template", "flagtrace", chart] + (["-f", values] if values else [])
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, env=own_environment())
    except (OSError, subprocess.TimeoutExpired) as exc:
        return None, "-f %s: helm template failed: %s" % (chart, exc)
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["exit %d" % proc.returncode])[-1]
        return None, "-f %s: helm template failed: %s (%s)" % (chart, last, " ".join(argv))
    return proc.stdout, None
