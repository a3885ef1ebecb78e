#!/usr/bin/env bash
# Bad input: the launch script fails before it starts any Python process.
echo "checking the GPU..." >&2
exit 4
