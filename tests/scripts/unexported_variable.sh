#!/usr/bin/env bash
# Pitfall: a variable the framework reads from its environment, assigned but never exported.
cd "$(dirname "$0")/../.." || exit 1
SGLANG_ENABLE_SPEC_V2=1
export CUDA_VISIBLE_DEVICES=0,1
"${PYTHON:-python3}" tests/examples/serve_config.py --model tiny --page-size 64
