#!/usr/bin/env bash
# The real thing: SGLang 0.5.11 through its wrapper interpreter (.envs/sglang/0.5.11/bin/python,
# an sh script that puts the release overlay first on PYTHONPATH and execs the shared venv).
cd "$(dirname "$0")/../.." || exit 1
export CUDA_VISIBLE_DEVICES=0
export HF_TOKEN=hf_not_a_real_token_0123
.envs/sglang/0.5.11/bin/python -m sglang.launch_server --model-path models/llama-3-8b --page-size 64
