"""A/B timing of engine builds on the reference flows: interleaved rounds, one core, results checked identical.

Usage (from the repository root, after the README's install step):

    RUSTFLAGS="-Cprofile-use=$(bash scripts/pgo.sh)" cargo build --release -p fctlab-sim --bin fctlab-bench
    cp target/release/fctlab-bench /tmp/bench-new            # and likewise a build of the other commit
    .venv/bin/python benchmarks/ab.py /tmp/bench-old /tmp/bench-new --flows 5000 --rounds 8

`--set section.key=value` (repeatable) changes the configuration, so any family or level is compared the same way,
e.g. `--set scheme.name=rcp --set routing.mode=ecmp` or `--set run.level=flow`; values are read as JSON where
they parse (numbers, true/false), else as strings. `--scheme NAME` is `--set scheme.name=NAME` plus the settings
docs/performance.md times that scheme with (SCHEME_PRESETS: PIAS and QCLIMB with the PIAS scripts' thresholds for
web search, QCLIMB with `qclimb_info = "precise"`, HyLine with ECMP); `--set` options apply after it.

Each round runs every build once, in turn, on the same flows (web search, all-to-all over the 144-host
leaf-spine at load 0.6, seed 1: the reference scenario's workload, written once to a CSV) and the reference
configuration (DCTCP, 8 queues, 360 KB buffers, ECN at 97.5 KB, packet spraying, NIC queues as switch ports).
With one engine thread (the default) each run is pinned to core 0 with `taskset` when it is available.

Why this shape: on a shared VM the same binary's time swings by 30% or more within minutes (clock speed and
contention for the shared caches), so two builds timed an hour apart, or one after the other in blocks, compare
the machine's moods, not the builds. Interleaving puts both builds in the same moods; the minimum and the lower
quartile are the least disturbed figures. Even so, differences under about 3% are not resolved on the
development machine. The summary statistics of every run must match the first build's (everything but the timing
fields, among the statistics both builds report): a change meant to be faster must not change results. A change
meant to alter an engine statistic that is no result (the event count when events are saved, `sim_time_ps` when
the run ends sooner) names it with `--allow-diff`, and its values are printed instead. Nothing here is part of the
test suite.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "python"))

from fctlab import workloads  # noqa: E402

CONFIG = {
    "seed": 1,
    "topology": {"kind": "leaf_spine"},
    "switch": {"queues": 8, "buffer_bytes": 360000, "ecn_threshold_bytes": 97500},
    "routing": {"mode": "spray"},
    "transport": {"init_cwnd_packets": 70, "rto_min_us": 2000},
    "scheme": {"name": "dctcp"},
    "host": {"nic_buffer_bytes": 360000, "nic_ecn": True},
}
# The PIAS authors' scripts' thresholds for web search (benchmarks/scenarios/leafspine144-websearch-pias.toml): the
# engine does not derive thresholds itself (the Python front end does, `fctlab thresholds`).
PIAS_THRESHOLDS = [1395760, 2016260, 2508280, 2960880, 3353620, 3724460, 3883600]
# `--scheme NAME`: what a scheme's timing runs set besides `scheme.name` (docs/performance.md, "Priority and rank
# ports at FIFO cost"); a scheme not listed sets only its name.
SCHEME_PRESETS = {
    "pias": {"scheme": {"thresholds_bytes": PIAS_THRESHOLDS}},
    "qclimb": {"scheme": {"thresholds_bytes": PIAS_THRESHOLDS, "qclimb_info": "precise"}},
    "hyline": {"routing": {"mode": "ecmp"}},
    # the explicit-rate family keeps per-flow state on a flow's path, so the engine refuses spraying for it
    **{name: {"routing": {"mode": "ecmp"}} for name in ("rcp", "d3", "pdq", "pdq-basic", "pdq-es", "pdq-es-et")},
}
TIMING = {"wall_seconds", "events_per_second", "htsim_equivalent_events_per_second", "thread_wait_seconds"}
# a two-thread run's largest event-queue length depends on how the threads interleave (engine::parallel)
VARYING = TIMING | {"max_event_queue_len"}


def with_overrides(overrides: list[str], scheme: str | None = None) -> dict:
    """CONFIG with scheme `scheme`'s preset (SCHEME_PRESETS), then each `section.key=value` of `overrides`, applied
    (the value as JSON where it parses)."""
    config = json.loads(json.dumps(CONFIG))
    if scheme is not None:
        config["scheme"] = {"name": scheme}
        for section, values in SCHEME_PRESETS.get(scheme, {}).items():
            config.setdefault(section, {}).update(json.loads(json.dumps(values)))
    for item in overrides:
        key, sep, text = item.partition("=")
        section, dot, name = key.partition(".")
        if not sep or not dot or not section or not name or "." in name:
            sys.exit(f"--set {item!r}: expected section.key=value")
        try:
            value = json.loads(text)
        except json.JSONDecodeError:
            value = text
        config.setdefault(section, {})[name] = value
    return config


def write_inputs(directory: Path, flows: int, config_dict: dict = CONFIG) -> tuple[Path, Path]:
    config = directory / "config.json"
    config.write_text(json.dumps(config_dict))
    trace = directory / f"websearch-{flows}.csv"
    df = workloads.all_to_all(
        hosts=144,
        cdf=workloads.load_cdf("websearch"),
        load=0.6,
        host_link_bps=10e9,
        flows=flows,
        rng=np.random.default_rng(1),
    )
    df[["src", "dst", "size_bytes", "start_ps"]].to_csv(trace, index=False)
    return config, trace


def run(binary: str, config: Path, trace: Path, threads: int) -> dict:
    cmd = [binary, str(config), str(trace), str(threads)]
    if threads == 1 and shutil.which("taskset"):
        cmd = ["taskset", "-c", "0", *cmd]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"{binary} failed (exit {done.returncode}): {done.stderr.strip()[-500:]}")
    return json.loads(done.stdout)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("binaries", nargs="+", help="fctlab-bench builds to compare")
    ap.add_argument("--flows", type=int, default=5000, help="flows of the reference workload (default 5000)")
    ap.add_argument("--rounds", type=int, default=6, help="interleaved rounds (default 6)")
    ap.add_argument("--threads", type=int, default=1, help="engine threads, >= 1 (default 1; see docs/performance.md, N threads)")
    ap.add_argument("--allow-diff", dest="allowed", action="append", default=[], metavar="STAT",
                    help="a summary statistic the builds may differ on (repeatable), reported not compared: e.g. "
                         "`events` for a build that saves events, `sim_time_ps` for one that ends the run sooner")
    ap.add_argument("--set", dest="overrides", action="append", default=[], metavar="SECTION.KEY=VALUE",
                    help="change the reference configuration (repeatable), e.g. scheme.name=rcp")
    ap.add_argument("--scheme", metavar="NAME",
                    help="time scheme NAME with the settings docs/performance.md uses for it (e.g. pias: the PIAS "
                         "scripts' thresholds; hyline and the rate family: ECMP); --set options apply after it")
    args = ap.parse_args()
    if args.flows < 1 or args.rounds < 1:
        sys.exit("--flows and --rounds must be at least 1")
    for b in args.binaries:
        if not Path(b).is_file():
            sys.exit(f"no such engine build: {b}")

    with tempfile.TemporaryDirectory(prefix="fctlab-ab-") as tmp:
        config, trace = write_inputs(Path(tmp), args.flows, with_overrides(args.overrides, args.scheme))
        times: dict[str, list[float]] = {b: [] for b in args.binaries}
        reference: dict | None = None
        htsim_events = 0
        for r in range(args.rounds):
            for b in args.binaries:
                stats = run(b, config, trace, args.threads)
                times[b].append(stats["wall_seconds"])
                skip = (VARYING if args.threads > 1 else TIMING) | set(args.allowed)
                result = {k: v for k, v in stats.items() if k not in skip}
                allowed = {k: stats[k] for k in args.allowed if k in stats}
                if allowed and r == 0:
                    shown = {k: (v if not isinstance(v, list) else f"[{len(v)} values]") for k, v in allowed.items()}
                    print(f"{b}: " + ", ".join(f"{k} {v}" for k, v in shown.items()))
                if reference is None:
                    reference, htsim_events = result, stats["htsim_equivalent_events"]
                else:
                    # (counters one build has and the other has not yet are not results to compare)
                    diff = sorted(k for k in reference if k in result and reference[k] != result[k])
                    if diff:
                        sys.exit(f"{b} gives different results from {args.binaries[0]}: {', '.join(diff)}")
            print(f"round {r + 1}/{args.rounds}: " + ", ".join(f"{t[-1]:.3f} s" for t in times.values()))

    changed = " ".join(([f"--scheme {args.scheme}"] if args.scheme else []) + args.overrides)
    changed = f", {changed}" if changed else ""
    print(f"\n{args.flows} flows, {args.threads} thread(s), {args.rounds} rounds{changed}; results identical")
    base = min(times[args.binaries[0]])
    for b, t in times.items():
        q25 = sorted(t)[len(t) // 4]
        print(
            f"{b}: min {min(t):.3f} s ({min(t) / base - 1:+.1%}), q25 {q25:.3f} s, "
            f"median {statistics.median(t):.3f} s; {htsim_events / min(t) / 1e6:.2f} M htsim-equivalent events/s at best"
        )


if __name__ == "__main__":
    main()
