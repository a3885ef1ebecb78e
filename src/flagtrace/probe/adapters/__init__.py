"""Probe-side halves of the framework adapters: what to watch, where to stop, which
framework functions to observe, per release. Standard library only, Python >= 3.9."""
