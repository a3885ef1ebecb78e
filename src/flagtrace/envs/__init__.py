"""Framework releases on demand (``--release sglang==0.5.11``): flagtrace builds, caches and finds an
environment per release, so an installed flagtrace needs no framework installed beside it.

- ``release.py``: what ``--release`` names (framework, version), checked against the adapters' ranges;
- ``build.py``: the shared venv (torch + data/env/sglang/base.txt), one ``--no-deps --target`` overlay
  per release from its pin file, the wrappers, stamps, locks and logs;
- ``installer.py``: the install commands (uv where it is there, else pip);
- ``pinlib.py``: version order, wheel cache and METADATA for the pin generators (adapters/*_pins.py).
"""
