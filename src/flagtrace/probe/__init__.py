"""The part of flagtrace that runs inside the target interpreter.

Standard library only, Python >= 3.9: it is loaded from source (never installed) into
interpreters that have nothing but the framework. It records and emits a trace; it does no
analysis and no rendering.
"""
