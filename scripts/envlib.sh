# Shared by scripts/sglang_env.sh and scripts/vllm_env.sh (sourced, not run): the shared Python 3.11 venv
# (torch==2.14.1 torchvision==0.29.1 + env/sglang/base.txt), one `pip install --no-deps --target` overlay per
# release, the bin/python wrapper, stamp caching, flock and logging.
#
# The sourcing script sets, before calling anything here:
#   ENV_NAME      sglang | vllm: the log prefix ("<ENV_NAME>_env: ") and the pin folder env/<ENV_NAME>
#   REPO, PINS    the repository and the folder of the <VER>.txt pin files
#   ROOT, LOGS    where overlays/<VER>, <VER>/bin and .lock go; where build logs go
#   VENV          the shared venv (.envs/sglang/venv), built from VENV_PINS/base.txt with logs in VENV_LOGS
#   VENV_REL      the venv's path relative to ROOT, as the wrappers reach it (sglang: venv)
#   OVERLAY_WHEELS  optional: a wheel cache; the overlay's pins are downloaded there (missing ones only) and
#                 installed from it with --no-index. Unset: pip installs from the index (SGLang).
#   OVERLAY_KEY_EXTRA  optional: a line added to what an overlay's stamp hashes (unset: sha256 of the pin file)
# and defines smoke_test TMP VER PINFILE (run with the new overlay first on PYTHONPATH; fails the build when
# it fails) and, optionally, after_overlay VER (runs for every release, built or cached, after bin/python).
# shellcheck shell=bash

TORCH_PINS="torch==2.14.1 torchvision==0.29.1"

say() { printf '%s_env: %s\n' "$ENV_NAME" "$*"; }
die() { printf '%s_env: ERROR: %s\n' "$ENV_NAME" "$*" >&2; exit 1; }
sha() { sha256sum "$@" | cut -d' ' -f1; }

# Run a command with its output in a log file; on failure show the log's tail and stop.
run_logged() {
    local log=$1; shift
    if ! "$@" >"$log" 2>&1; then
        printf '%s_env: ERROR: command failed: %s\n--- last lines of %s ---\n' "$ENV_NAME" "$*" "$log" >&2
        tail -n 40 "$log" >&2
        exit 1
    fi
}

# Keep the caller's Python settings out of every build step; folders, cleanup of half-built folders.
envlib_init() {
    unset PYTHONPATH PYTHONHOME PIP_TARGET PIP_PREFIX PIP_USER PIP_REQUIRE_VIRTUALENV || true
    export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1
    [ -f "$VENV_PINS/base.txt" ] || die "missing $VENV_PINS/base.txt"
    mkdir -p "$ROOT/overlays" "$LOGS"
    CLEANUP=()
    trap envlib_cleanup EXIT
}
envlib_cleanup() { [ ${#CLEANUP[@]} -eq 0 ] || rm -rf "${CLEANUP[@]}"; }

# VERSIONS=(the arguments), or every $PINS/<VER>.txt when there are none; each must have a pin file.
envlib_versions() {
    local f v
    VERSIONS=("$@")
    if [ ${#VERSIONS[@]} -eq 0 ]; then
        for f in "$PINS"/[0-9]*.txt; do [ -e "$f" ] && VERSIONS+=("$(basename "$f" .txt)"); done
        [ ${#VERSIONS[@]} -gt 0 ] || die "no version pin files in $PINS"
    fi
    for v in "${VERSIONS[@]}"; do [ -f "$PINS/$v.txt" ] || die "unknown version '$v': no $PINS/$v.txt"; done
}

# Serialise concurrent runs: envlib_lock FD FILE holds an exclusive flock on FILE until the script exits.
envlib_lock() {
    command -v flock >/dev/null 2>&1 || return 0
    eval "exec $1>\"\$2\""
    flock "$1"
}

# ---------------------------------------------------------------- shared venv
venv_key() {
    local pyver=$1
    { echo "python $pyver"; echo "$TORCH_PINS"; cat "$VENV_PINS/base.txt"; } | sha
}

ensure_venv() {
    local venv_ok=0 pyver PY npins
    if [ -x "$VENV/bin/python" ] && [ -f "$VENV/.flagtrace-stamp" ]; then
        if pyver=$("$VENV/bin/python" -c 'import platform; print(platform.python_version())' 2>/dev/null) \
            && [ "$(cat "$VENV/.flagtrace-stamp")" = "$(venv_key "$pyver")" ]; then
            venv_ok=1
        fi
    fi

    if [ $venv_ok = 1 ]; then
        say "venv: up to date ($VENV)"
        return 0
    fi
    PY=${PYTHON:-python3.11}
    command -v "$PY" >/dev/null 2>&1 || die "no '$PY' on PATH (set PYTHON=/path/to/python3.11)"
    pyver=$("$PY" -c 'import platform; print(platform.python_version())') || die "'$PY' does not run"
    case $pyver in 3.11.*) ;; *) die "'$PY' is Python $pyver; Python 3.11 is required" ;; esac
    mkdir -p "$VENV_LOGS"
    if [ -e "$VENV" ]; then say "venv: pins changed or build incomplete; removing $VENV"; rm -rf "$VENV"; fi
    say "venv: creating with $PY ($pyver)"
    run_logged "$VENV_LOGS/venv-create.log" "$PY" -m venv "$VENV"
    npins=$(grep -cE '^[A-Za-z0-9]' "$VENV_PINS/base.txt")
    say "venv: installing $TORCH_PINS + $npins pins from env/sglang/base.txt (--no-deps; takes a few minutes)"
    # shellcheck disable=SC2086
    run_logged "$VENV_LOGS/venv-pip.log" "$VENV/bin/python" -m pip install --no-deps --only-binary=:all: \
        $TORCH_PINS -r "$VENV_PINS/base.txt"
    # The venv must hold exactly the pinned set (plus pip itself).
    "$VENV/bin/python" -m pip freeze --all 2>/dev/null | grep -viE '^pip==' \
        | tr 'A-Z_' 'a-z-' | sort >"$VENV_LOGS/venv-freeze.txt"
    { printf '%s\n' $TORCH_PINS; grep -E '^[A-Za-z0-9]' "$VENV_PINS/base.txt" | sed 's/[[:space:]]*#.*//'; } \
        | tr 'A-Z_' 'a-z-' | sort >"$VENV_LOGS/venv-expected.txt"
    if ! diff -u "$VENV_LOGS/venv-expected.txt" "$VENV_LOGS/venv-freeze.txt" >"$VENV_LOGS/venv-diff.txt"; then
        cat "$VENV_LOGS/venv-diff.txt" >&2
        die "venv contents differ from the pins (see above)"
    fi
    # Dependency closure: the only allowed gap is transformers, which each overlay provides.
    "$VENV/bin/python" -m pip check >"$VENV_LOGS/venv-check.txt" 2>&1 || true
    if grep -vE 'requires transformers, which is not installed|^No broken requirements' "$VENV_LOGS/venv-check.txt" | grep -q .; then
        cat "$VENV_LOGS/venv-check.txt" >&2
        die "pip check found unexpected problems in the venv"
    fi
    venv_key "$pyver" >"$VENV/.flagtrace-stamp"
    say "venv: ready ($(du -sh "$VENV" | cut -f1))"
}

# ---------------------------------------------------------------- overlays
# What an overlay's stamp holds: sha256 of its pin file (plus OVERLAY_KEY_EXTRA when set).
overlay_key() {
    { cat "$PINS/$1.txt"; [ -z "${OVERLAY_KEY_EXTRA:-}" ] || printf '%s\n' "$OVERLAY_KEY_EXTRA"; } | sha
}

# write_if_changed DEST: stdin becomes DEST (mode 755) unless DEST already holds exactly that.
write_if_changed() {
    local dest=$1 tmp
    tmp=$(mktemp "$ROOT/.wrapper.XXXXXX")
    cat >"$tmp"
    chmod 755 "$tmp"
    mkdir -p "$(dirname "$dest")"
    if cmp -s "$tmp" "$dest"; then rm -f "$tmp"; else mv -f "$tmp" "$dest"; fi
}

write_wrapper() {
    local v=$1
    write_if_changed "$ROOT/$v/bin/python" <<EOF
#!/bin/sh
# $ENV_NAME $v interpreter (generated by scripts/${ENV_NAME}_env.sh): overlay first on PYTHONPATH, then the shared venv.
root=\$(CDPATH= cd -- "\$(dirname -- "\$0")/../.." && pwd)
PYTHONPATH="\$root/overlays/$v\${PYTHONPATH:+:\$PYTHONPATH}"
export PYTHONPATH
exec "\$root/$VENV_REL/bin/python" "\$@"
EOF
}

build_overlay() {
    local v=$1 pinfile="$PINS/$1.txt" dest="$ROOT/overlays/$1" tmp dl req dirs
    tmp="$ROOT/overlays/.$v.build"
    rm -rf "$tmp"; mkdir -p "$tmp"; CLEANUP+=("$tmp")
    if [ -n "${OVERLAY_WHEELS:-}" ]; then
        say "overlay $v: fetching missing wheels into $OVERLAY_WHEELS"
        run_logged "$LOGS/overlay-$v-fetch.log" "$VENV/bin/python" "$REPO/scripts/pinlib.py" fetch \
            "$OVERLAY_WHEELS" "$pinfile"
        say "overlay $v: pip install --no-deps --no-index --target (env/$ENV_NAME/$v.txt)"
        run_logged "$LOGS/overlay-$v-pip.log" "$VENV/bin/python" -m pip install --no-deps --only-binary=:all: \
            --no-index --find-links "$OVERLAY_WHEELS" --target "$tmp" -r "$pinfile"
    else
        say "overlay $v: pip install --no-deps --target (env/$ENV_NAME/$v.txt)"
        run_logged "$LOGS/overlay-$v-pip.log" "$VENV/bin/python" -m pip install --no-deps --only-binary=:all: \
            --target "$tmp" -r "$pinfile"
    fi
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
    smoke_test "$tmp" "$v" "$pinfile"
    overlay_key "$v" >"$tmp/.flagtrace-stamp"
    rm -rf "$dest"
    mv "$tmp" "$dest"
    say "overlay $v: ready ($(du -sh "$dest" | cut -f1))"
}

# Build (or confirm) each release's overlay and write its wrappers.
build_versions() {
    local v stamp
    for v in "$@"; do
        stamp="$ROOT/overlays/$v/.flagtrace-stamp"
        if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$(overlay_key "$v")" ]; then
            say "overlay $v: up to date"
        else
            build_overlay "$v"
        fi
        write_wrapper "$v"
        if declare -F after_overlay >/dev/null; then after_overlay "$v"; fi
        say "ready: $ROOT/$v/bin/python"
    done
}
