"""Code both sides run: flagtrace's own process (launch, analysis, reports) and the target's (the probe,
and the bootstrap that ``flagtrace run`` puts in every Python process).

Each module here is standalone: it imports nothing (not even ``re``) and parses on any Python (2.7
included), because ``flagtrace run`` writes the bootstrap as one file, these modules' text followed by
bootstrap/sitecustomize.py (supervise.bootstrap_text): site imports one module per process, and a
second import would cost a walk over sys.path in every process. Shipped with the probe (``--via``).
"""
