#!/usr/bin/env bash
# Installs fctlab into .venv at the repository root: a Python virtual environment with the package (editable),
# its Rust engine compiled in release mode, and the test tools. Safe to run again (it only rebuilds).
# Needs: python3 >= 3.10 and a Rust toolchain (cargo) on PATH; packages come from PyPI and crates.io.
set -euo pipefail
cd "$(dirname "$0")/.."

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
    "$PY" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet "maturin>=1.7,<2"
# The engine is compiled with profile-guided optimisation when the toolchain allows it (scripts/pgo.sh; about
# 5% faster, same results); FCTLAB_PGO=0 turns it off.
if [ "${FCTLAB_PGO:-1}" != 0 ] && profile=$(bash scripts/pgo.sh); then
    export RUSTFLAGS="${RUSTFLAGS:+$RUSTFLAGS }-Cprofile-use=$profile"
    echo "building the engine with profile-guided optimisation ($profile)"
else
    echo "building the engine without profile-guided optimisation"
fi
# editable install: Python sources stay in python/, the engine is built (release) into python/fctlab/_core*.so
.venv/bin/python -m pip install --quiet -e ".[test]"
.venv/bin/python -c "import fctlab, fctlab._core; print('fctlab', fctlab.__version__, 'installed in .venv')"
