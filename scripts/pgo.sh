#!/usr/bin/env bash
# Profile-guided optimisation (PGO) of the engine: builds an instrumented `fctlab-bench`, runs the training
# scenarios of benchmarks/pgo/ (DCTCP on one and two threads, PIAS, pFabric, QCLIMB, and TCP with ECMP and a
# shared buffer: every discipline and TCP path; RCP, PDQ, D3, Homa, HyLine and QJump: the other families; DCTCP,
# pFabric, PIAS and PDQ at the flow level, whose code a profile without them lays out as cold), and merges what
# they recorded into target/pgo/fctlab.profdata. install.sh then compiles the engine with `-Cprofile-use` on that file: the
# compiler lays out branches and chooses what to inline from measured counts. Results are bit-identical
# (integer time, no fast-math); only the speed changes (about 5% on the reference scenario; README,
# Performance).
#
# Prints the profile's path and exits 0, or says why it cannot and exits 1 (the caller then builds without
# PGO). Needs llvm-profdata from rustup's llvm-tools component (added here when rustup is available). The
# profile is rebuilt only when the engine's sources, Cargo.lock, the training files or the compiler changed.
set -euo pipefail
cd "$(dirname "$0")/.."

out=target/pgo
sysroot=$(rustc --print sysroot)
host=$(rustc -vV | sed -n 's/^host: //p')
profdata="$sysroot/lib/rustlib/$host/bin/llvm-profdata"
if [ ! -x "$profdata" ] && command -v rustup >/dev/null 2>&1; then
    rustup component add llvm-tools >/dev/null 2>&1 || true
fi
if [ ! -x "$profdata" ]; then
    echo "pgo: no llvm-profdata (install it with: rustup component add llvm-tools)" >&2
    exit 1
fi

# what the profile depends on
key=$( (rustc -vV; cat Cargo.lock; find crates/sim benchmarks/pgo -type f \( -name '*.rs' -o -name '*.toml' \
    -o -name '*.json' -o -name '*.csv' \) | LC_ALL=C sort | xargs cat) | sha256sum | cut -d' ' -f1)
if [ -f "$out/fctlab.profdata" ] && [ "$(cat "$out/key" 2>/dev/null)" = "$key" ]; then
    echo "$PWD/$out/fctlab.profdata"
    exit 0
fi

rm -rf "$out/raw" "$out/fctlab.profdata" "$out/key"
mkdir -p "$out/raw"
echo "pgo: building the instrumented engine and running the training scenarios (about a minute)" >&2
RUSTFLAGS="-Cprofile-generate=$PWD/$out/raw" CARGO_TARGET_DIR="$out/build" \
    cargo build --release --quiet -p fctlab-sim --bin fctlab-bench >&2
rm -rf "$out/raw" # build scripts ran instrumented too: keep only the training runs
mkdir -p "$out/raw"
bench="$out/build/release/fctlab-bench"
flows=benchmarks/pgo/flows-websearch-144hosts-1000.csv
n=$(ls benchmarks/pgo/*.json | wc -l)
i=0
for cfg in benchmarks/pgo/*.json; do
    i=$((i + 1))
    echo "pgo: training scenario $i of $((n + 1)): $(basename "$cfg" .json)" >&2
    "$bench" "$cfg" "$flows" 1 >/dev/null
done
echo "pgo: training scenario $((n + 1)) of $((n + 1)): dctcp on two threads" >&2
"$bench" benchmarks/pgo/dctcp.json "$flows" 2 >/dev/null
echo "pgo: merging the profiles" >&2
"$profdata" merge -o "$out/fctlab.profdata" "$out/raw"
echo "$key" >"$out/key"
echo "$PWD/$out/fctlab.profdata"
