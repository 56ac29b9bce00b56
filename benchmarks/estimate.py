"""How far the pre-run cost estimate (fctlab.check.estimate) is from real runs: 3 sizes on 2 fabrics.

Usage (from the repository root):

    .venv/bin/python benchmarks/estimate.py [--scale 1] [--fit]

Each run goes in a fresh process (so its peak memory is its own), on one engine thread: the wall time of the
engine and the process's peak resident memory against the estimate's. ``--fit`` prints the events per second
and the bytes per flow and per packet-hop that would make the estimate exact on average (what
``fctlab.check.EVENTS_PER_SECOND`` and the memory constants were set from). docs/performance.md quotes the
result. Keep it short on a shared machine: the default sizes take a minute or two.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: Flows per run on each fabric (times --scale): three sizes, each about twice the last.
SIZES = {"fat_tree_k8": (500, 1000, 2000), "leaf_spine_144": (2000, 4000, 8000)}

FABRICS = {
    # the first-day example's fabric: k = 8 fat-tree, 1 Gbps, 25 us links, data mining at 0.7, pFabric (native)
    "fat_tree_k8": {"topology": {"kind": "fat_tree", "k": 8}, "scheme": {"name": "pfabric"},
                    "workload": {"pattern": "all_to_all", "cdf": "datamining", "load": 0.7}},
    # the PIAS fabric: 144-host leaf-spine, 10/40 Gbps, web search at 0.6, DCTCP as examples/quick.toml
    "leaf_spine_144": {"topology": {"kind": "leaf_spine"}, "scheme": {"name": "dctcp"},
                       "switch": {"buffer_bytes": 360000, "ecn_threshold_bytes": 97500},
                       "transport": {"init_cwnd_packets": 70, "rto_min_us": 2000}, "routing": {"mode": "spray"},
                       "workload": {"pattern": "all_to_all", "cdf": "websearch", "load": 0.6}},
}

CHILD = r"""
import json, resource, sys, time
from fctlab.config import experiment_from_dict
from fctlab.simulation import simulate, workload_columns
from fctlab import check
exp = experiment_from_dict(json.loads(sys.argv[1]))
flows = workload_columns(exp)
c = check.check(exp, flows)
start = time.perf_counter()
r = simulate(exp, flows=flows, threads=1)
wall = time.perf_counter() - start
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
print(json.dumps({"wall": wall, "engine_wall": r.stats["wall_seconds"], "events": r.stats["events"],
                  "rss": rss, "est_events": c.cost.events, "est_seconds": c.cost.seconds,
                  "est_memory": c.cost.memory_bytes, "flows": len(flows), "packet_hops": c.cost.packet_hops,
                  "data_packets": r.stats["data_packets_sent"]}))
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scale", type=float, default=1.0, help="multiply the flows of every run")
    ap.add_argument("--fit", action="store_true")
    args = ap.parse_args()
    rows = []
    for fabric, base in FABRICS.items():
        for n in (int(round(x * args.scale)) for x in SIZES[fabric]):
            data = json.loads(json.dumps(base))
            data.update({"name": f"{fabric}-{n}", "seed": 1})
            data["workload"]["flows"] = n
            out = subprocess.run([sys.executable, "-c", CHILD, json.dumps(data)], capture_output=True, text=True,
                                 env={"PYTHONPATH": str(ROOT / "python"), "PATH": "/usr/bin:/bin"})
            if out.returncode:
                sys.exit(out.stderr)
            r = json.loads(out.stdout.strip().splitlines()[-1])
            r["name"] = data["name"]
            rows.append(r)
            print(f"{r['name']:>22}: wall {r['wall']:7.2f} s (estimate {r['est_seconds']:7.2f} s, "
                  f"{100 * (r['est_seconds'] / r['wall'] - 1):+5.0f}%), events {r['events']:,} (estimate "
                  f"{r['est_events']:,.0f}, {100 * (r['est_events'] / r['events'] - 1):+4.0f}%), peak memory "
                  f"{r['rss'] / 2**20:,.0f} MiB (estimate {r['est_memory'] / 2**20:,.0f} MiB, "
                  f"{100 * (r['est_memory'] / r['rss'] - 1):+4.0f}%)", flush=True)
    if args.fit:
        eps = sum(r["est_events"] for r in rows) / sum(r["wall"] for r in rows)
        print(f"estimated events per wall second over all runs (what EVENTS_PER_SECOND would be): {eps:,.0f}")
        import numpy as np

        a = np.array([[1.0, r["flows"]] for r in rows])
        b = np.array([r["rss"] for r in rows])
        (base, per_flow), *_ = np.linalg.lstsq(a, b, rcond=None)
        print(f"peak memory ~ {base / 2**20:,.0f} MiB + {per_flow:,.0f} B per flow (least squares)")


if __name__ == "__main__":
    main()
