#!/usr/bin/env bash
# Pitfall: a JSON argument quoted once more "to be safe": the inner quotes are part of the
# value, so the program receives '{"page_size": 64}' with the single quotes, which is not JSON.
cd "$(dirname "$0")/../.." || exit 1
OVERRIDES='{"page_size": 64}'
"${PYTHON:-python3}" tests/examples/json_config.py --model tiny --overrides "'$OVERRIDES'"
