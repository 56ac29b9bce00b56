#!/usr/bin/env bash
# Install, then run every test: the engine's Rust tests (release mode) and the Python tests.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
# the HTML report is checked in headless Chromium (Debian's package); install it when we may
if [ ! -x /usr/bin/chromium ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "== installing chromium for the report test"
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) \
        || echo "could not install chromium: the report's browser test will be skipped"
fi
export PATH="$HOME/.cargo/bin:$PATH"
echo "== Rust tests (crates/sim)"
cargo test --release -p fctlab-sim
echo "== Python tests"
.venv/bin/python -m pytest -q tests
