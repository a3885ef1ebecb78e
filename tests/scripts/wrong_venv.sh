#!/usr/bin/env bash
# Pitfall: another environment first on PATH, so "python3" is not the interpreter you meant.
# (The test puts WRONG_VENV, a venv-like folder whose python3 is another interpreter, first.)
cd "$(dirname "$0")/../.." || exit 1
export PATH="$WRONG_VENV/bin:$PATH"
python3 tests/examples/serve_config.py --model tiny --page-size 64
