#!/usr/bin/env bash
# The same launch as broken_continuation.sh, written correctly: every flag reaches the server
# (and the report shows what the program then did with them: page_size 64 → 1 for a hybrid model).
cd "$(dirname "$0")/../.." || exit 1
"${PYTHON:-python3}" tests/examples/serve_config.py --model hybrid-7b \
    --page-size 64 --cache-strategy extra_buffer
