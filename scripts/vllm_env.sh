#!/usr/bin/env bash
# Build (or verify) flagtrace's pinned vLLM environments.
#
#   scripts/vllm_env.sh [VER...]      # default: every env/vllm/<VER>.txt
#
# vLLM has no venv of its own: its overlays sit on the SGLang environments' shared venv
# (.envs/sglang/venv: torch==2.14.1 torchvision==0.29.1 + env/sglang/base.txt), which this script builds
# first when it is missing or stale, exactly as scripts/sglang_env.sh does (the code is scripts/envlib.sh).
#
# Layout (under .envs/vllm/, gitignored):
#   wheels/                    wheel cache (pip caches nothing on this machine): scripts/vllm_pins.py reads
#                              METADATA from it, and overlays are installed from it with --no-index
#   overlays/<VER>/            pip --no-deps --target install of env/vllm/<VER>.txt (vllm, transformers, ...)
#   <VER>/bin/python           wrapper: overlay first on PYTHONPATH, then exec the shared venv's python
#   <VER>/bin/vllm             vllm's console script (from its entry_points.txt), run by <VER>/bin/python
#
# Idempotent and cached: an overlay is skipped when its stamp matches the sha256 of its pin file plus the
# venv's stamp (the pin files leave to the venv what base.txt satisfies, so a new venv rebuilds them).
# Every pip call uses --no-deps with exact pins: no resolver runs and torch is never re-resolved.
#
# Environment: PYTHON (default: python3.11 from PATH) is used only to create the venv.
#              VLLM_ENVS_DIR overrides the output folder (default: <repo>/.envs/vllm);
#              SGLANG_ENVS_DIR the shared venv's (default: <repo>/.envs/sglang).
set -euo pipefail

ENV_NAME=vllm
REPO=$(CDPATH= cd -- "$(dirname -- "$0")/.." && pwd)
PINS="$REPO/env/vllm"
ROOT=${VLLM_ENVS_DIR:-$REPO/.envs/vllm}
LOGS="$ROOT/logs"
SGLANG_ROOT=${SGLANG_ENVS_DIR:-$REPO/.envs/sglang}
VENV="$SGLANG_ROOT/venv"
VENV_PINS="$REPO/env/sglang" VENV_LOGS="$SGLANG_ROOT/logs"
OVERLAY_WHEELS="$ROOT/wheels"
# shellcheck source=scripts/envlib.sh
. "$REPO/scripts/envlib.sh"

# Smoke test: vllm imports from the overlay at its version, with its engine arguments, and every pin is the
# version installed. A "#@smoke import-only" line (with the reason beside it) would reduce it to `import vllm`.
smoke_test() {
    local tmp=$1 v=$2 pinfile=$3
    if grep -qxE '#@smoke[[:space:]]+import-only' "$pinfile"; then
        say "overlay $v: smoke test (import vllm; import-only release)"
    else
        say "overlay $v: smoke test (import vllm.engine.arg_utils)"
    fi
    run_logged "$LOGS/overlay-$v-smoke.log" env PYTHONPATH="$tmp" "$VENV/bin/python" - "$v" "$pinfile" <<'PY'
import importlib.metadata as md, re, sys
ver, pinfile = sys.argv[1:]
import vllm
assert vllm.__version__ == ver, (vllm.__version__, ver)
if not any(re.fullmatch(r"#@smoke\s+import-only\s*", line) for line in open(pinfile)):
    import vllm.engine.arg_utils  # noqa: F401
for line in open(pinfile):
    m = re.match(r"^([A-Za-z0-9_.-]+)==(\S+)", line)
    if m:
        got = md.version(m.group(1))
        assert got == m.group(2), (m.group(1), got, m.group(2))
print("ok", ver)
PY
    # Dependency closure of overlay + venv: pip check may name only what the pin file says is not installed
    # (EXCLUDE, no wheel on PyPI) or not honoured (IGNORE).
    say "overlay $v: pip check (only the packages the pin file leaves out may be missing)"
    env PYTHONPATH="$tmp" "$VENV/bin/python" -m pip check >"$LOGS/overlay-$v-check.txt" 2>&1 || true
    run_logged "$LOGS/overlay-$v-check.log" "$VENV/bin/python" - "$pinfile" "$LOGS/overlay-$v-check.txt" <<'PY'
import re, sys
pinfile, report = sys.argv[1:]
norm = lambda n: re.sub(r"[-_.]+", "-", n).lower()
allowed = set()
for line in open(pinfile):
    m = (re.match(r"#   (\S+) \(required by ", line) or re.match(r"# (\S+?)==\S+ \(.*\) is NOT installed", line)
         or re.match(r"# Not honoured \(IGNORE\): \S+ requires ([A-Za-z0-9._-]+)", line))
    if m:
        allowed.add(norm(m.group(1)))
bad = []
for line in open(report):
    m = re.search(r" requires ([A-Za-z0-9._-]+), which is not installed|, but you have ([A-Za-z0-9._-]+) ", line)
    if line.strip() and not line.startswith("No broken requirements") and not (m and norm(m.group(1) or m.group(2)) in allowed):
        bad.append(line.rstrip())
if bad:
    sys.exit("pip check names packages the pin file does not leave out:\n" + "\n".join(bad))
print("ok: pip check names only packages the pin file leaves out:", ", ".join(sorted(allowed)))
PY
}

# bin/vllm: the `vllm` console script that pip would have written, from the overlay's entry_points.txt.
after_overlay() {
    local v=$1 ep target
    ep=$(cat "$ROOT/overlays/$v"/vllm-*.dist-info/entry_points.txt 2>/dev/null) || die "overlay $v: no vllm entry_points.txt"
    target=$(printf '%s\n' "$ep" | awk '/^\[/{s=($0=="[console_scripts]")} s && $1=="vllm" && $2=="="{print $3}')
    case $target in
        [A-Za-z_]*:[A-Za-z_]*) ;;
        *) die "overlay $v: no 'vllm = module:function' console script in entry_points.txt" ;;
    esac
    # A Python script whose #! names bin/python (itself an sh wrapper: Linux runs such a chain), as pip
    # writes it: tools that read the #! line (flagtrace) see a Python console script.
    write_if_changed "$ROOT/$v/bin/vllm" <<EOF
#!$(realpath "$ROOT/$v/bin")/python
# vllm $v command (generated by scripts/vllm_env.sh): the console script 'vllm = $target' of vllm's
# entry_points.txt, run by bin/python (overlay first on PYTHONPATH, then the shared venv).
import sys
from ${target%%:*} import ${target##*:}
sys.exit(${target##*:}())
EOF
}

envlib_init
envlib_versions "$@"
envlib_lock 9 "$ROOT/.lock"
# The shared venv: built or checked under its own lock, which is then held so that it does not change under us.
mkdir -p "$SGLANG_ROOT"
envlib_lock 8 "$SGLANG_ROOT/.lock"
VENV_REL=$(realpath -m --relative-to="$ROOT" "$VENV")
ensure_venv
OVERLAY_KEY_EXTRA="venv $(cat "$VENV/.flagtrace-stamp")"
mkdir -p "$OVERLAY_WHEELS"
build_versions "${VERSIONS[@]}"
