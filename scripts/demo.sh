#!/usr/bin/env bash
# `make demo`: the bundled default case, explained twice on SGLang with a simulated B200 x7.
#  1. Qwen/Qwen3.6-27B (its bundled config.json), a hybrid model + EAGLE, no --mamba-scheduler-strategy: SGLang refuses,
#     and flagtrace shows which code turned "auto" into "no_buffer".
#  2. The same with --mamba-scheduler-strategy extra_buffer and SGLANG_ENABLE_SPEC_V2=1: it
#     resolves, and flagtrace lists what SGLang decided on its own.
set -u
cd "$(dirname "$0")/.."
version=${1:-${FLAGTRACE_SGLANG:-0.5.11}}
# The release's environment: built by `make demo` (flagtrace env build), found by --release.
export FLAGTRACE_ENVS=${FLAGTRACE_ENVS:-$PWD/.envs}
args=(--model-path Qwen/Qwen3.6-27B --speculative-algorithm EAGLE --speculative-num-steps 3
      --speculative-eagle-topk 1 --speculative-num-draft-tokens 4 --max-mamba-cache-size 24
      --mem-fraction-static 0.92 --context-length 8192 --trust-remote-code)

echo "### 1/2  SGLang $version, B200 x7, without --mamba-scheduler-strategy"
echo
.venv/bin/flagtrace explain --gpu B200x7 --release "sglang==$version" -- python3 -m sglang.launch_server "${args[@]}"
first=$?
echo
echo "### 2/2  the same with --mamba-scheduler-strategy extra_buffer and SGLANG_ENABLE_SPEC_V2=1"
echo
SGLANG_ENABLE_SPEC_V2=1 .venv/bin/flagtrace explain --gpu B200x7 --release "sglang==$version" -- \
    python3 -m sglang.launch_server \
    "${args[@]}" --mamba-scheduler-strategy extra_buffer
second=$?
echo
if [ "$first" -eq 2 ] && [ "$second" -eq 0 ]; then
    echo "demo: as expected (1: resolution error explained, exit 2; 2: resolved, exit 0)"
    exit 0
fi
echo "demo: unexpected exit codes: $first (expected 2) and $second (expected 0)" >&2
exit 1
