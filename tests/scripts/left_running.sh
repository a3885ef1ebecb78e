#!/usr/bin/env bash
# Bad input: the script starts a Python process in the background and exits without waiting.
"${PYTHON:-python3}" -c 'import time; time.sleep(60)' &
sleep 0.3
exit 0
