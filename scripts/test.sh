#!/usr/bin/env bash
# Install, then run every test: the engine's Rust tests (release mode) and the Python tests.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
export PATH="$HOME/.cargo/bin:$PATH"
echo "== Rust tests (crates/sim)"
cargo test --release -p fctlab-sim
echo "== Python tests"
.venv/bin/python -m pytest -q tests
