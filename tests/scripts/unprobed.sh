#!/usr/bin/env bash
# Python processes flagtrace cannot probe, each for its own reason, and one it can.
cd "$(dirname "$0")/../.." || exit 1
PY="${PYTHON:-python3}"
"$PY" -I -c 'import time; time.sleep(0.3)'
"$PY" -E -c 'import time; time.sleep(0.3)'
"$PY" -S -c 'import time; time.sleep(0.3)'
PYTHONPATH=/nonexistent "$PY" -c 'import time; time.sleep(0.3)'
# a probed parent notes its children: this -I child is listed however short it lives
"$PY" -c 'import subprocess, sys; subprocess.run([sys.executable, "-I", "-c", "pass"])'
"$PY" tests/examples/serve_config.py --model tiny --page-size 64
