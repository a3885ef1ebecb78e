"""flagtrace: explain where every config value of a Python server launch came from."""

__version__ = "0.1.0"
