"""scripts/samples.py, loaded as a module, and its --check of one sample as a subprocess."""
import importlib.util
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(ROOT, "scripts", "samples.py")


def samples_module():
    spec = importlib.util.spec_from_file_location("flagtrace_samples", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def check(name):
    """(exit status, output) of ``scripts/samples.py --check NAME``: 0 where every page's block of
    NAME is what its command prints today."""
    proc = subprocess.run([sys.executable, SCRIPT, "--check", name], cwd=ROOT, capture_output=True, text=True,
                          timeout=900)
    return proc.returncode, proc.stdout + proc.stderr
