"""Two small scenarios where the flow level's max-min rates and the packet level's DCTCP part ways.

Each runs a handful of flows, given as a trace, at both levels on the 144-host leaf-spine of
examples/leafspine144-websearch.toml (10 Gbps host links, 40 Gbps core, ECN at 97,500 B, 360,000 B per port) with
the engine's defaults for the window and the timer (initial window 10 packets, RTOmin 200 us) and ECMP, and
prints each flow's FCT at both levels:

- ``parking``: a 40 MB flow from host 0 to host 16 crosses two ports that each also carry a 20 MB flow (0 -> 32
  shares host 0's NIC, 48 -> 16 shares host 16's last hop). Max-min gives all three 5 Gbps. DCTCP, marked at
  both ports, gives the two-port flow less and the others more, close to proportional fairness (a third and
  two thirds of 10 Gbps).
- ``newcomer``: a 30 MB flow from host 0 to host 16, and from 12.5 ms on a 1 MB flow every 2 ms from another
  host to host 16. Max-min halves the link while both are open. At the packet level a fresh connection starts
  with DCTCP's alpha at `transport.dctcp_alpha_init` (0), so its first cuts are small, and it takes most of the
  link from the long flow, whose window is cut and grows back by a segment per round trip once the newcomer
  leaves: the newcomers are faster than max-min says, the long flow slower.

Usage, from the repository root (a few seconds each; nothing is written, nothing asserted):

    .venv/bin/python benchmarks/flow_dynamics.py                 # both
    .venv/bin/python benchmarks/flow_dynamics.py parking --set transport.dctcp_alpha_init=1
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "leafspine144-websearch.toml"
DEFAULTS = ["transport.init_cwnd_packets=10", "routing.mode=ecmp", "transport.rto_min_us=200"]

# (src, dst, size_bytes, start_ns)
SCENARIOS: dict[str, list[tuple[int, int, int, int]]] = {
    "parking": [(0, 16, 40_000_000, 0), (0, 32, 20_000_000, 0), (48, 16, 20_000_000, 0)],
    "newcomer": [(0, 16, 30_000_000, 0)]
    + [(32 + i, 16, 1_000_000, 12_500_000 + 2_000_000 * i) for i in range(5)],
}


def run(name: str, extra: list[str]) -> None:
    import pandas as pd

    from fctlab.config import load_experiment
    from fctlab.simulation import simulate

    rows = SCENARIOS[name]
    with tempfile.TemporaryDirectory() as tmp:
        trace = Path(tmp) / "flows.csv"
        pd.DataFrame(rows, columns=["src", "dst", "size_bytes", "start_ns"]).to_csv(trace, index=False)
        # the example's fabric, switches, hosts and transport; the workload is the trace
        head = EXAMPLE.read_text().split("[workload]")[0]
        toml = Path(tmp) / "scenario.toml"
        toml.write_text(head + f'[workload]\ntrace = "{trace.as_posix()}"\n')
        exp = load_experiment(toml, DEFAULTS + extra)
        packet = simulate(exp).flows
        flow = simulate(exp.with_overrides(["run.level=flow"])).flows
    print(f"{name}: flow (src -> dst, size, start) | packet level FCT | flow level FCT | flow / packet")
    for i, (src, dst, size, start) in enumerate(rows):
        p, f = packet.fct_ns[i] / 1e3, flow.fct_ns[i] / 1e3
        print(f"  {src:3d} -> {dst:3d} {size / 1e6:5.1f} MB at {start / 1e6:5.1f} ms | {p:9.0f} us | {f:9.0f} us"
              f" | {f / p:.3f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("scenarios", nargs="*", metavar="SCENARIO", help=f"any of {', '.join(SCENARIOS)} (default: all)")
    ap.add_argument("--set", dest="sets", action="append", default=[], metavar="KEY=VALUE",
                    help="an override for both levels (repeatable)")
    args = ap.parse_args()
    unknown = [s for s in args.scenarios if s not in SCENARIOS]
    if unknown:
        ap.error(f"unknown scenario {unknown[0]!r} (there are: {', '.join(SCENARIOS)})")
    for name in args.scenarios or list(SCENARIOS):
        run(name, args.sets)


if __name__ == "__main__":
    main()
