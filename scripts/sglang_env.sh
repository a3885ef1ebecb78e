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
# so no resolver runs and torch is never re-resolved.
#
# Environment: PYTHON (default: python3.11 from PATH) is used only to create the venv.
#              SGLANG_ENVS_DIR overrides the output folder (default: <repo>/.envs/sglang).
set -euo pipefail

TORCH_PINS="torch==2.14.1 torchvision==0.29.1"

REPO=$(CDPATH= cd -- "$(dirname -- "$0")/.." && pwd)
PINS="$REPO/env/sglang"
ROOT=${SGLANG_ENVS_DIR:-$REPO/.envs/sglang}
VENV="$ROOT/venv"
LOGS="$ROOT/logs"

say() { printf 'sglang_env: %s\n' "$*"; }
die() { printf 'sglang_env: ERROR: %s\n' "$*" >&2; exit 1; }
sha() { sha256sum "$@" | cut -d' ' -f1; }

# Run a command with its output in a log file; on failure show the log's tail and stop.
run_logged() {
    local log=$1; shift
    if ! "$@" >"$log" 2>&1; then
        printf 'sglang_env: ERROR: command failed: %s\n--- last lines of %s ---\n' "$*" "$log" >&2
        tail -n 40 "$log" >&2
        exit 1
    fi
}

# Keep the caller's Python settings out of every build step.
unset PYTHONPATH PYTHONHOME PIP_TARGET PIP_PREFIX PIP_USER PIP_REQUIRE_VIRTUALENV || true
export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1

[ -f "$PINS/base.txt" ] || die "missing $PINS/base.txt"
if [ $# -eq 0 ]; then
    set --
    for f in "$PINS"/[0-9]*.txt; do [ -e "$f" ] && set -- "$@" "$(basename "$f" .txt)"; done
    [ $# -gt 0 ] || die "no version pin files in $PINS"
fi
for v in "$@"; do [ -f "$PINS/$v.txt" ] || die "unknown version '$v': no $PINS/$v.txt"; done

mkdir -p "$ROOT/overlays" "$LOGS"
CLEANUP=()
cleanup() { [ ${#CLEANUP[@]} -eq 0 ] || rm -rf "${CLEANUP[@]}"; }
trap cleanup EXIT
if command -v flock >/dev/null 2>&1; then
    exec 9>"$ROOT/.lock"
    flock 9
fi

# ---------------------------------------------------------------- shared venv
venv_key() {
    local pyver=$1
    { echo "python $pyver"; echo "$TORCH_PINS"; cat "$PINS/base.txt"; } | sha
}

venv_ok=0
if [ -x "$VENV/bin/python" ] && [ -f "$VENV/.flagtrace-stamp" ]; then
    if pyver=$("$VENV/bin/python" -c 'import platform; print(platform.python_version())' 2>/dev/null) \
        && [ "$(cat "$VENV/.flagtrace-stamp")" = "$(venv_key "$pyver")" ]; then
        venv_ok=1
    fi
fi

if [ $venv_ok = 1 ]; then
    say "venv: up to date ($VENV)"
else
    PY=${PYTHON:-python3.11}
    command -v "$PY" >/dev/null 2>&1 || die "no '$PY' on PATH (set PYTHON=/path/to/python3.11)"
    pyver=$("$PY" -c 'import platform; print(platform.python_version())') || die "'$PY' does not run"
    case $pyver in 3.11.*) ;; *) die "'$PY' is Python $pyver; Python 3.11 is required" ;; esac
    if [ -e "$VENV" ]; then say "venv: pins changed or build incomplete; removing $VENV"; rm -rf "$VENV"; fi
    say "venv: creating with $PY ($pyver)"
    run_logged "$LOGS/venv-create.log" "$PY" -m venv "$VENV"
    npins=$(grep -cE '^[A-Za-z0-9]' "$PINS/base.txt")
    say "venv: installing $TORCH_PINS + $npins pins from env/sglang/base.txt (--no-deps; takes a few minutes)"
    # shellcheck disable=SC2086
    run_logged "$LOGS/venv-pip.log" "$VENV/bin/python" -m pip install --no-deps --only-binary=:all: \
        $TORCH_PINS -r "$PINS/base.txt"
    # The venv must hold exactly the pinned set (plus pip itself).
    "$VENV/bin/python" -m pip freeze --all 2>/dev/null | grep -viE '^pip==' \
        | tr 'A-Z_' 'a-z-' | sort >"$LOGS/venv-freeze.txt"
    { printf '%s\n' $TORCH_PINS; grep -E '^[A-Za-z0-9]' "$PINS/base.txt" | sed 's/[[:space:]]*#.*//'; } \
        | tr 'A-Z_' 'a-z-' | sort >"$LOGS/venv-expected.txt"
    if ! diff -u "$LOGS/venv-expected.txt" "$LOGS/venv-freeze.txt" >"$LOGS/venv-diff.txt"; then
        cat "$LOGS/venv-diff.txt" >&2
        die "venv contents differ from the pins (see above)"
    fi
    # Dependency closure: the only allowed gap is transformers, which each overlay provides.
    "$VENV/bin/python" -m pip check >"$LOGS/venv-check.txt" 2>&1 || true
    if grep -vE 'requires transformers, which is not installed|^No broken requirements' "$LOGS/venv-check.txt" | grep -q .; then
        cat "$LOGS/venv-check.txt" >&2
        die "pip check found unexpected problems in the venv"
    fi
    venv_key "$pyver" >"$VENV/.flagtrace-stamp"
    say "venv: ready ($(du -sh "$VENV" | cut -f1))"
fi

# ---------------------------------------------------------------- overlays
write_wrapper() {
    local v=$1 w="$ROOT/$1/bin/python" tmp
    tmp=$(mktemp "$ROOT/.wrapper.XXXXXX")
    cat >"$tmp" <<EOF
#!/bin/sh
# sglang $v interpreter (generated by scripts/sglang_env.sh): overlay first on PYTHONPATH, then the shared venv.
root=\$(CDPATH= cd -- "\$(dirname -- "\$0")/../.." && pwd)
PYTHONPATH="\$root/overlays/$v\${PYTHONPATH:+:\$PYTHONPATH}"
export PYTHONPATH
exec "\$root/venv/bin/python" "\$@"
EOF
    chmod 755 "$tmp"
    mkdir -p "$ROOT/$v/bin"
    if cmp -s "$tmp" "$w"; then rm -f "$tmp"; else mv -f "$tmp" "$w"; fi
}

build_overlay() {
    local v=$1 pinfile="$PINS/$1.txt" dest="$ROOT/overlays/$1" tmp dl req dirs
    tmp="$ROOT/overlays/.$v.build"
    rm -rf "$tmp"; mkdir -p "$tmp"; CLEANUP+=("$tmp")
    say "overlay $v: pip install --no-deps --target (env/sglang/$v.txt)"
    run_logged "$LOGS/overlay-$v-pip.log" "$VENV/bin/python" -m pip install --no-deps --only-binary=:all: \
        --target "$tmp" -r "$pinfile"
    # "#@extract <requirement> <dir>...": unpack pure-Python packages from a wheel we do not install.
    while read -r _ req dirs; do
        [ -n "$req" ] || continue
        dl=$(mktemp -d "$ROOT/.dl.XXXXXX"); CLEANUP+=("$dl")
        say "overlay $v: extracting '$dirs' from $req"
        run_logged "$LOGS/overlay-$v-download.log" "$VENV/bin/python" -m pip download --no-deps \
            --only-binary=:all: -d "$dl" "$req"
        # shellcheck disable=SC2086
        run_logged "$LOGS/overlay-$v-extract.log" "$VENV/bin/python" - "$tmp" "$dl" $dirs <<'PY'
import glob, sys, zipfile
dest, dl, dirs = sys.argv[1], sys.argv[2], sys.argv[3:]
(whl,) = glob.glob(dl + "/*.whl")
with zipfile.ZipFile(whl) as z:
    for d in dirs:
        members = [n for n in z.namelist() if n.startswith(d.rstrip("/") + "/")]
        if not members:
            sys.exit(f"{whl} has no {d}/")
        z.extractall(dest, members)
        print(f"{d}: {len(members)} files")
PY
        rm -rf "$dl"
    done < <(grep -E '^#@extract[[:space:]]' "$pinfile" || true)
    # Smoke test: the pinned versions import from the overlay (no GPU needed for this). A "#@smoke import-only"
    # line marks a release whose sglang.srt.server_args cannot import under this torch/triton (the pin file says
    # why; flagtrace's probe handles it at run time): then only `import sglang` and the versions are checked.
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
    sha "$pinfile" >"$tmp/.flagtrace-stamp"
    rm -rf "$dest"
    mv "$tmp" "$dest"
    say "overlay $v: ready ($(du -sh "$dest" | cut -f1))"
}

for v in "$@"; do
    stamp="$ROOT/overlays/$v/.flagtrace-stamp"
    if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$(sha "$PINS/$v.txt")" ]; then
        say "overlay $v: up to date"
    else
        build_overlay "$v"
    fi
    write_wrapper "$v"
    say "ready: $ROOT/$v/bin/python"
done
