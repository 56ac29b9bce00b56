#!/usr/bin/env bash
# Install, then run every test: the engine's Rust tests and the Python tests.
# The Rust tests run twice over: all of them in `cargo test`'s profile (optimised, with debug assertions and
# overflow checks, so that the bounds checks guarding the engine's unchecked indexing run), then the bit-identity
# tests (one against two threads, FIFO fast path against event-driven ports) in a release build, the build users
# run. Then the documentation site is built with warnings as errors (mkdocs.yml). scripts/miri.sh runs the unsafe
# modules' tests under Miri (nightly; not part of this script).
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
echo "== Rust tests (crates/sim; optimised, debug assertions and overflow checks on)"
cargo test -p fctlab-sim
echo "== Rust bit-identity tests (crates/sim; release build)"
cargo test --release -p fctlab-sim --test parallel --test fifo_path
echo "== Type stub of the binding (mypy.stubtest: python/fctlab/_core.pyi against the compiled fctlab._core)"
.venv/bin/python -m mypy.stubtest fctlab._core
echo "== Documentation site (mkdocs.yml; warnings are errors: a broken link or a page missing from the nav fails)"
NO_MKDOCS_2_WARNING=1 .venv/bin/python -m mkdocs build --strict --site-dir "$(mktemp -d)"
echo "== Python tests"
.venv/bin/python -m pytest -q tests
