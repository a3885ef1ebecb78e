#!/usr/bin/env bash
# Build (or verify) flagtrace's pinned SGLang environments.
#
#   scripts/sglang_env.sh [VER...]      # default: every env/sglang/<VER>.txt
#
# Layout (all under .envs/sglang/, gitignored):
#   venv/                      shared Python 3.11 venv: torch==2.14.1 torchvision==0.29.1 + env/sglang/base.txt
#   overlays/<VER>/            pip --no-deps --target install of env/sglang/<VER>.txt (sglang, transformers, ...)
#   <VER>/bin/python           wrapper: overlay first on PYTHONPATH, then exec the venv python
#
# Idempotent and cached: the venv is skipped when its stamp matches base.txt + the torch pins + the
# interpreter version; an overlay is skipped when its stamp matches the sha256 of its pin file.
# Anything that changed is rebuilt from scratch. Every pip call uses --no-deps with exact pins,
# so no resolver runs and torch is never re-resolved. The venv, overlay, wrapper and stamp code is
# scripts/envlib.sh, shared with scripts/vllm_env.sh (whose overlays sit on the same venv).
#
# Environment: PYTHON (default: python3.11 from PATH) is used only to create the venv.
#              SGLANG_ENVS_DIR overrides the output folder (default: <repo>/.envs/sglang).
set -euo pipefail

ENV_NAME=sglang
REPO=$(CDPATH= cd -- "$(dirname -- "$0")/.." && pwd)
PINS="$REPO/env/sglang"
ROOT=${SGLANG_ENVS_DIR:-$REPO/.envs/sglang}
VENV="$ROOT/venv"
LOGS="$ROOT/logs"
VENV_PINS=$PINS VENV_LOGS=$LOGS VENV_REL=venv
# shellcheck source=scripts/envlib.sh
. "$REPO/scripts/envlib.sh"

# Smoke test: the pinned versions import from the overlay (no GPU needed for this). A "#@smoke import-only"
# line marks a release whose sglang.srt.server_args cannot import under this torch/triton (the pin file says
# why; flagtrace's probe handles it at run time): then only `import sglang` and the versions are checked.
smoke_test() {
    local tmp=$1 v=$2 pinfile=$3
    if grep -qxE '#@smoke[[:space:]]+import-only' "$pinfile"; then
        say "overlay $v: smoke test (import sglang; import-only release)"
    else
        say "overlay $v: smoke test (import sglang.srt.server_args)"
    fi
    run_logged "$LOGS/overlay-$v-smoke.log" env PYTHONPATH="$tmp" "$VENV/bin/python" - "$v" "$pinfile" <<'PY'
import importlib.metadata as md, re, sys
ver, pinfile = sys.argv[1:]
import sglang
assert sglang.__version__ == ver, (sglang.__version__, ver)
if not any(re.fullmatch(r"#@smoke\s+import-only\s*", line) for line in open(pinfile)):
    import sglang.srt.server_args  # noqa: F401
for line in open(pinfile):
    m = re.match(r"^([A-Za-z0-9_.-]+)==(\S+)", line)
    if m:
        got = md.version(m.group(1))
        assert got == m.group(2), (m.group(1), got, m.group(2))
print("ok", ver)
PY
}

envlib_init
envlib_versions "$@"
envlib_lock 9 "$ROOT/.lock"
ensure_venv
build_versions "${VERSIONS[@]}"
