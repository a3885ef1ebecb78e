#!/usr/bin/env bash
# Pitfall: a space after the line-continuation backslash. The command ends on that line (bash
# passes the escaped space as an argument); the next line runs as a command of its own, so
# --page-size and --cache-strategy never reach the server.
cd "$(dirname "$0")/../.." || exit 1
"${PYTHON:-python3}" tests/examples/serve_config.py --model hybrid-7b \ 
    --page-size 64 --cache-strategy extra_buffer
