"""The flow level's speed: the reference scenario at the flow level against the packet level, and a 1,024-host
fat-tree from 10,000 to 10,000,000 flows (time, events, peak memory).

Usage (from the repository root, after the README's install step):

    .venv/bin/python benchmarks/flowlevel_scale.py                        # everything (10-15 minutes)
    .venv/bin/python benchmarks/flowlevel_scale.py --packet-seconds 11.6  # reuse a packet-level time
    .venv/bin/python benchmarks/flowlevel_scale.py --sizes 10000 100000   # the fat-tree sizes to run
    .venv/bin/python benchmarks/flowlevel_scale.py --no-reference --sizes 10000000   # the 10 M flows alone

Each run is a fresh `fctlab run` process on one engine thread (benchmarks/bench.py's `run_once`): wall time end
to end (Python start-up, workload generation, the simulation, Parquet and JSON), the engine's own time, events,
the process's peak resident set and its CPU time (user + system). At the flow level `fctlab run` writes
flows.parquet while the engine runs (the results streamed in batches), so the engine's time includes that writing. The reference and the fat-tree's smaller sizes are medians of --repeat runs;
the packet level and the largest size one run each. The fat-tree is benchmarks/scenarios/
fattree1024-websearch-flow.toml (k = 16, 10 Gbps links, web search at load 0.6, DCTCP, spraying). Results are
appended to benchmarks/results/bench.jsonl, with the machine's load average before and after each run (the
machine may be shared: quote it with the figures). Nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench  # noqa: E402


def line(label: str, m: dict) -> str:
    return (
        f"{label:<44} {m['flows']:>9,} {m['wall_seconds']:>9.2f} {m['engine_seconds']:>9.3f} {m['events']:>11,.0f} "
        f"{1e6 * m['engine_seconds'] / max(m['events'], 1):>8.2f} {m['max_concurrent_flows']:>7,.0f} "
        f"{m['peak_rss_mib']:>8.0f} {m.get('cpu_seconds', float('nan')):>8.1f}"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=3, help="runs per median (reference, smaller fat-tree sizes)")
    ap.add_argument("--packet-seconds", type=float, default=None,
                    help="the packet level's wall time on the reference (skips its run)")
    ap.add_argument("--sizes", type=int, nargs="*", default=[10_000, 100_000, 1_000_000, 10_000_000],
                    help="fat-tree flow counts (the largest runs once)")
    ap.add_argument("--no-pfabric", action="store_true", help="skip pFabric's flow level on the reference")
    ap.add_argument("--no-reference", action="store_true", help="only the fat-tree sizes")
    args = ap.parse_args()

    rows: list[tuple[str, dict]] = []

    def median(name: str, flows: int | None = None, repeat: int = args.repeat) -> dict:
        before = os.getloadavg()
        m = bench.median_of([bench.run_once(name, 1, flows) for _ in range(repeat)])
        m["load_average_before"] = [round(x, 2) for x in before]
        m["load_average_after"] = [round(x, 2) for x in os.getloadavg()]
        bench.record(m)
        return m

    flow = None
    if not args.no_reference:
        flow = median("leafspine144-websearch-0.6-dctcp-flow")
        rows.append(("reference, DCTCP, flow level", flow))
    if not args.no_pfabric and not args.no_reference:
        rows.append(("reference, pFabric, flow level", median("leafspine144-websearch-0.6-pfabric-flow")))
    if args.no_reference:
        pass
    elif args.packet_seconds is None:
        packet = median("leafspine144-websearch-0.6-dctcp", repeat=1)
        rows.append(("reference, DCTCP, packet level (one run)", packet))
        packet_wall, packet_engine = packet["wall_seconds"], packet["engine_seconds"]
    else:
        packet_wall, packet_engine = args.packet_seconds, None
    sizes = sorted(args.sizes)
    for n in sizes:
        m = median("fattree1024-websearch-0.6-dctcp-flow", n, 1 if n == sizes[-1] else args.repeat)
        rows.append(("fat-tree k=16 (1,024 hosts), DCTCP, flow level", m))

    print(f"{'run':<44} {'flows':>9} {'wall s':>9} {'engine s':>9} {'events':>11} {'us/event':>8} "
          f"{'open max':>7} {'RSS MiB':>8} {'CPU s':>8}  load average before / after")
    for label, m in rows:
        print(line(label, m) + f"  {m['load_average_before'][0]:.2f} / {m['load_average_after'][0]:.2f}")
    if flow is None:
        return
    speed = (f"reference, DCTCP: flow level {packet_wall / flow['wall_seconds']:.1f}x faster than the packet level "
             "end to end")
    if packet_engine is not None:
        speed += f", {packet_engine / flow['engine_seconds']:.1f}x in the engine"
    print(speed)


if __name__ == "__main__":
    main()
