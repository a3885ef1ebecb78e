#!/usr/bin/env bash
# Pitfall: a flag and its value quoted together: one argv element "--page-size 64", which the
# program's parser does not recognise as --page-size.
cd "$(dirname "$0")/../.." || exit 1
PAGE="--page-size 64"
"${PYTHON:-python3}" tests/examples/serve_config.py --model tiny "$PAGE"
