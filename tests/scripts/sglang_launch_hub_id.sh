#!/usr/bin/env bash
# A launch script as recipes write it: the model named by its Hugging Face id ($1), which this
# machine cannot fetch (offline).
cd "$(dirname "$0")/../.." || exit 1
export HF_HUB_OFFLINE=1
.envs/sglang/0.5.11/bin/python -m sglang.launch_server --model-path "$1" --page-size 64
