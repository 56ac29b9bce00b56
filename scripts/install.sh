#!/usr/bin/env bash
# Installs fctlab into .venv at the repository root: a Python virtual environment with the package (editable),
# its Rust engine compiled in release mode, and the test tools. Safe to run again (it only rebuilds).
# Needs: python3 >= 3.10 and a Rust toolchain (cargo) on PATH; packages come from PyPI and crates.io.
set -euo pipefail
cd "$(dirname "$0")/.."

# What it is doing, with the time since it started: "[install 02:13] building the engine ..." on stderr; a long
# step says it is still running every HEARTBEAT seconds (30 by default), so a log never stays silent for minutes.
START=$SECONDS
HEARTBEAT=${FCTLAB_INSTALL_HEARTBEAT:-30}
elapsed() { printf '%02d:%02d' $(((SECONDS - START) / 60)) $(((SECONDS - START) % 60)); }
step() { echo "[install $(elapsed)] $*" >&2; }
# run a command, saying every HEARTBEAT seconds that it still runs (the reminder loop ends with it)
long() {
    local what=$1
    shift
    ( while sleep "$HEARTBEAT"; do echo "[install $(elapsed)]   ... still $what"; done ) >&2 &  # (not on stdout: a $(...) would wait for it)
    local beat=$!
    local status=0
    "$@" || status=$?
    kill "$beat" 2>/dev/null || true
    wait "$beat" 2>/dev/null || true
    return "$status"
}

PY=${PYTHON:-python3}
if ! "$PY" -c 'import sys; sys.exit(sys.version_info < (3, 10))' 2>/dev/null; then
    echo "fctlab needs Python >= 3.10 (found: $("$PY" --version 2>&1 || echo none)); set PYTHON=/path/to/python3" >&2
    exit 1
fi
if ! command -v cargo >/dev/null 2>&1; then
    [ -x "$HOME/.cargo/bin/cargo" ] && export PATH="$HOME/.cargo/bin:$PATH"
fi
if ! command -v cargo >/dev/null 2>&1; then
    echo "fctlab needs a Rust toolchain (cargo); install it with rustup (https://rustup.rs) and retry" >&2
    exit 1
fi

if [ ! -x .venv/bin/python ]; then
    step "creating the Python environment .venv ($("$PY" --version 2>&1))"
    "$PY" -m venv .venv
fi
step "installing the build tools (pip, maturin)"
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet "maturin>=1.7,<2"
# The engine is compiled with profile-guided optimisation when the toolchain allows it (scripts/pgo.sh; about
# 5% faster, same results); FCTLAB_PGO=0 turns it off.
if [ "${FCTLAB_PGO:-1}" != 0 ]; then
    step "training the profile-guided optimisation (scripts/pgo.sh: an instrumented engine runs the scenarios of benchmarks/pgo/; reused when nothing changed)"
fi
if [ "${FCTLAB_PGO:-1}" != 0 ] && profile=$(long "training the profile" bash scripts/pgo.sh); then
    export RUSTFLAGS="${RUSTFLAGS:+$RUSTFLAGS }-Cprofile-use=$profile"
    step "building the engine with profile-guided optimisation ($profile) and installing the Python packages: a few minutes (release build, whole-program optimisation)"
else
    step "building the engine without profile-guided optimisation and installing the Python packages: a few minutes (release build, whole-program optimisation)"
fi
# editable install: Python sources stay in python/, the engine is built (release) into python/fctlab/_core*.so;
# with the test tools, the documentation site's generator (mkdocs, which scripts/test.sh runs) and Optuna for
# `fctlab tune`
long "building the engine and installing the Python packages" .venv/bin/python -m pip install --quiet -e ".[test,docs,tune]"
.venv/bin/python -c "import fctlab, fctlab._core; print('fctlab', fctlab.__version__, 'installed in .venv')"
step "done"
