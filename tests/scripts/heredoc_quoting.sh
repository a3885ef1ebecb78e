#!/usr/bin/env bash
# Pitfall: a quoted heredoc delimiter ('EOF') passes $MODEL on unexpanded; the shell that reads
# the heredoc expands it, and there MODEL is not set (it was never exported): --model gets "".
cd "$(dirname "$0")/../.." || exit 1
MODEL=hybrid-7b
bash -s <<'EOS'
"${PYTHON:-python3}" tests/examples/serve_config.py --model "$MODEL" --page-size 64
EOS
