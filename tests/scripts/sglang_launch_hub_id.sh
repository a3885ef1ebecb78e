#!/usr/bin/env bash
# A launch script as recipes write it: the model named by its Hugging Face id. flagtrace run passes
# it as typed; this machine cannot fetch it.
cd "$(dirname "$0")/../.." || exit 1
export HF_HUB_OFFLINE=1
.envs/sglang/0.5.11/bin/python -m sglang.launch_server --model-path meta-llama/Meta-Llama-3-8B-Instruct --page-size 64
