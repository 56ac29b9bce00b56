#!/usr/bin/env bash
# Runs the tests of the engine's unsafe code under Miri, which reports undefined behaviour (out-of-bounds or
# dangling accesses, invalid aliasing, data races) that a passing test can hide:
# - the unit tests of net::wire, net::rank_queue and engine::queue (their unchecked indexing);
# - whole small runs from crates/sim/tests/fifo_path.rs (the tie-rule scenarios), which go through
#   net::Network's unchecked port accesses and prefetch hint, the wires and the event queue, on one and two
#   threads, on the FIFO fast path and on event-driven ports.
# net's own unit tests (topology shapes and routing tables, no unsafe code) are left out: over 5 minutes.
# Needs the nightly toolchain with the miri component; installs them with rustup when missing (a download of a
# few hundred MB, then about 2 minutes to build Miri's standard library once). The tests then take about 2
# minutes on 2 cores. Not part of scripts/test.sh for those reasons.
# -Zmiri-permissive-provenance: the prefetch hint keeps each wire's head-slot address as an integer and casts it
# back to a pointer only to prefetch it (never read through); Miri would otherwise warn about that cast.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
if ! cargo +nightly miri --version >/dev/null 2>&1; then
    echo "== installing the nightly toolchain with miri"
    rustup toolchain install nightly --profile minimal --component miri,rust-src
fi
cargo +nightly miri setup
export MIRIFLAGS="${MIRIFLAGS:+$MIRIFLAGS }-Zmiri-permissive-provenance"
echo "== Miri: net::wire, net::rank_queue and engine::queue unit tests"
cargo +nightly miri test -p fctlab-sim --lib -- net::wire:: net::rank_queue:: engine::queue::
echo "== Miri: whole runs (fifo_path.rs tie-rule scenarios)"
cargo +nightly miri test -p fctlab-sim --test fifo_path -- tie_rule
