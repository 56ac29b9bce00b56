"""The flow level against the packet level, cell by cell: a calibration matrix.

Each cell runs one experiment at both levels on the same flows (as `fctlab calibrate` does) and records, per
size bin (small <= 100 KB < medium <= 10 MB < large), the flow level's error on the mean and on the p99 FCT,
and the time each level took. The axes:

- schemes: dctcp, tcp, pias, pfabric, pdq, rcp, d3, rax, homa, qjump, hyline (pdq, rcp and d3 run with ECMP only:
  their switches keep per-flow state, which spraying scatters; hyline too, which runs with ECMP only; rax with its default thresholds; homa, qjump and hyline with their own defaults, no window axis);
- loads: 0.3, 0.5, 0.8;
- initial windows: 10 and 70 packets (the window-based schemes; pFabric keeps its preset's);
- routing: ECMP and packet spraying;
- fabrics: the 144-host leaf-spine (examples/leafspine144-websearch.toml) and a k = 8 fat-tree (128 hosts,
  10 Gbps links, 1 us per link, the same switch and host settings).

Web search, RTOmin 2 ms (the PIAS scripts'; the engine's 200 us default times out spuriously on these fabrics,
see docs/flow-level.md; `--rto-min-us 200` runs the engine's default, a key of its own), `--flows` flows per cell
(default 5,000), seed 1. The TCP family's cells also run the flow level without its retransmission timer
(`run.flow_timeouts = "none"`, recorded as "flow_no_timer"), the before of that model; tcp's, dctcp's and pias's
also run the windowed model (`run.flow_model = "window"`, recorded as "flow_window"; `--window-table` prints it
against the rate model, with a summary per scheme). Usage, from the repository root:

    .venv/bin/python benchmarks/calibrate_matrix.py                       # everything (hours on 2 cores)
    .venv/bin/python benchmarks/calibrate_matrix.py --schemes dctcp tcp --loads 0.5 --flows 3000
    .venv/bin/python benchmarks/calibrate_matrix.py --markdown            # print the table of the last results
    .venv/bin/python benchmarks/calibrate_matrix.py --schemes dctcp --rerun --reuse-packet   # the flow level only

Results are appended one line per cell to benchmarks/results/calibrate_matrix.jsonl (a cell already there
with the same key and code version is skipped unless --rerun); --markdown prints the table that
docs/flow-level.md quotes, cells beyond 10% in bold. Nothing here asserts anything.
"""

from __future__ import annotations

import argparse
import itertools
import json
import statistics
import subprocess
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "benchmarks" / "results" / "calibrate_matrix.jsonl"
SCHEMES = ["dctcp", "tcp", "pias", "pfabric", "pdq", "rcp", "d3", "rax", "homa", "qjump", "hyline"]
STATEFUL = {"pdq", "rcp", "d3", "hyline"}  # per-flow switch state: ECMP only (HyLine: ECMP only itself)
WINDOWED = {"dctcp", "tcp", "pias", "rax"}
BINS = ("small", "medium", "large", "all")

FAT_TREE = {"kind": "fat_tree", "k": 8, "host_link_gbps": 10, "core_link_gbps": 10, "host_link_delay_ns": 1000,
            "core_link_delay_ns": 1000}


def code_version() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def cell_overrides(scheme: str, load: float, window: int, routing: str, fabric: str, flows: int,
                   rto_min_us: float = 2000) -> list[str]:
    sets = [f"scheme.name={scheme}", f"workload.load={load}", f"workload.flows={flows}", f"routing.mode={routing}",
            f"transport.rto_min_us={rto_min_us:g}"]
    if scheme == "pfabric":
        sets.append("scheme.preset=pias")
    if scheme == "pias":
        sets.append("scheme.thresholds_bytes=[14600, 100000, 1000000]")
    if scheme in WINDOWED:
        sets.append(f"transport.init_cwnd_packets={window}")
    return sets


def run_cell(sets: list[str], fabric: str, packet: dict | None = None) -> dict:
    import tomllib

    import fctlab

    raw = tomllib.loads((ROOT / "examples" / "leafspine144-websearch.toml").read_text())
    if fabric == "fat_tree8":
        raw["topology"] = dict(FAT_TREE)
    base = fctlab.experiment_from_dict(raw, overrides=sets)
    flows = fctlab.build_flows(base)
    out: dict = {}
    runs = [("packet", ["run.level=packet"]), ("flow", ["run.level=flow"])]
    if packet is not None:
        # (the packet level's results of an earlier run of this cell, on the same flows)
        out.update(packet=packet["packet"], packet_seconds=packet["packet_seconds"])
        runs = runs[1:]
    if base.scheme in ("tcp", "dctcp", "l2dct"):
        runs.append(("flow_no_timer", ["run.level=flow", "run.flow_timeouts=none"]))
    if base.scheme in ("tcp", "dctcp", "pias"):
        runs.append(("flow_window", ["run.level=flow", "run.flow_model=window"]))
    for level, sets_ in runs:
        exp = base.with_overrides(sets_)
        start = time.perf_counter()
        result = fctlab.simulate(exp, flows=flows)
        out[f"{level}_seconds"] = time.perf_counter() - start
        out[level] = {b: {k: result.summary["bins"][b].get(k) for k in ("count", "mean_fct_ns", "p99_fct_ns")}
                      for b in BINS}
    return out


def error(packet: float | None, flow: float | None) -> float | None:
    return None if not packet or flow is None else flow / packet - 1


def load_cells() -> dict[tuple, dict]:
    cells: dict[tuple, dict] = {}
    if OUT.exists():
        for line in OUT.read_text().splitlines():
            c = json.loads(line)
            cells[tuple(c["key"])] = c  # the last line of a key wins
    return cells


def pct(v: float | None) -> str:
    """An error as a signed percentage, in bold beyond 10%."""
    if v is None:
        return "-"
    s = f"{100 * v:+.0f}%"
    return f"**{s}**" if abs(v) > 0.10 else s


def bin_errors(c: dict, level: str, b: str) -> str:
    """A cell's error of `level` against the packet level in bin `b`: mean / p99."""
    p, f = c["packet"][b], c[level][b]
    return f"{pct(error(p['mean_fct_ns'], f['mean_fct_ns']))} / {pct(error(p['p99_fct_ns'], f['p99_fct_ns']))}"


def markdown(cells: dict[tuple, dict]) -> str:
    head = ("| fabric | routing | window | scheme | load | small mean / p99 | medium mean / p99 | large mean / p99 "
            "| speed-up |\n|---|---|---|---|---|---|---|---|---|")
    rows = []
    for key in sorted(cells):
        c = cells[key]
        scheme, load, window, routing, fabric, _flows = key[:6]
        rto = f" (RTOmin {key[6]:g} us)" if len(key) > 6 else ""
        bins = [bin_errors(c, "flow", b) for b in ("small", "medium", "large")]
        speed = c["packet_seconds"] / max(c["flow_seconds"], 1e-9)
        rows.append(f"| {fabric} | {routing} | {window if scheme in WINDOWED else '-'} | {scheme}{rto} | {load} | "
                    f"{' | '.join(bins)} | {speed:.0f}x |")
    return head + "\n" + "\n".join(rows)


def window_table(cells: dict[tuple, dict]) -> str:
    """The cells with the windowed model (`flow_window`): the rate model's error -> the windowed model's."""
    head = ("| fabric | routing | window | scheme | load | small mean / p99 | medium mean / p99 | large mean / p99 "
            "| speed-up (rates / window) |\n|---|---|---|---|---|---|---|---|---|")
    rows = []
    for key in sorted(k for k in cells if "flow_window" in cells[k]):
        c = cells[key]
        scheme, load, window, routing, fabric, _flows = key[:6]
        rto = f" (RTOmin {key[6]:g} us)" if len(key) > 6 else ""
        bins = [f"{bin_errors(c, 'flow', b)} -> {bin_errors(c, 'flow_window', b)}"
                for b in ("small", "medium", "large")]
        speeds = [c["packet_seconds"] / max(c[k], 1e-9) for k in ("flow_seconds", "flow_window_seconds")]
        rows.append(f"| {fabric} | {routing} | {window} | {scheme}{rto} | {load} | {' | '.join(bins)} | "
                    f"{speeds[0]:.0f}x / {speeds[1]:.0f}x |")
    return head + "\n" + "\n".join(rows)


def window_summary(cells: dict[tuple, dict]) -> str:
    """Per scheme and RTO floor, over the cells with the windowed model: cells within 10%, rate model -> windowed
    model (median absolute error), per bin and statistic; and the median speed-up of each over the packet level."""
    stats = [(b, s) for b in ("small", "medium", "large") for s in ("mean_fct_ns", "p99_fct_ns")]
    head = ("| cells | " + " | ".join(f"{b} {s.split('_')[0]}" for b, s in stats) + " | speed-up (rates / window) |\n"
            + "|---" * (len(stats) + 2) + "|")
    groups: dict[str, list[dict]] = {}
    for key in sorted(k for k in cells if "flow_window" in cells[k]):
        groups.setdefault(key[0] + (f", RTOmin {key[6]:g} us" if len(key) > 6 else ", RTOmin 2 ms"), []).append(
            cells[key])
    rows = []
    for name, cs in groups.items():
        cols = []
        for b, s in stats:
            errs = [[abs(error(c["packet"][b][s], c[m][b][s]) or 0) for c in cs] for m in ("flow", "flow_window")]
            within = [sum(e <= 0.10 for e in es) for es in errs]
            med = [100 * statistics.median(es) for es in errs]
            cols.append(f"{within[0]} -> {within[1]} ({med[0]:.1f}% -> {med[1]:.1f}%)")
        speed = [statistics.median(c["packet_seconds"] / max(c[k], 1e-9) for c in cs)
                 for k in ("flow_seconds", "flow_window_seconds")]
        rows.append(f"| {name} ({len(cs)}) | {' | '.join(cols)} | {speed[0]:.0f}x / {speed[1]:.0f}x |")
    return head + "\n" + "\n".join(rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--schemes", nargs="+", default=SCHEMES, choices=SCHEMES)
    ap.add_argument("--loads", nargs="+", type=float, default=[0.3, 0.5, 0.8])
    ap.add_argument("--windows", nargs="+", type=int, default=[10, 70])
    ap.add_argument("--routing", nargs="+", default=["ecmp", "spray"], choices=["ecmp", "spray"])
    ap.add_argument("--fabrics", nargs="+", default=["leaf_spine144", "fat_tree8"],
                    choices=["leaf_spine144", "fat_tree8"])
    ap.add_argument("--flows", type=int, default=5000)
    ap.add_argument("--rto-min-us", type=float, default=2000,
                    help="transport.rto_min_us (default 2000; other values are cells of their own)")
    ap.add_argument("--rerun", action="store_true", help="run cells that already have results")
    ap.add_argument("--markdown", action="store_true", help="print the table of the recorded cells and stop")
    ap.add_argument("--window-table", action="store_true",
                    help="print the rate model against the windowed model (run.flow_model = \"window\") for the "
                         "cells that have both, a summary per scheme first, and stop")
    ap.add_argument("--reuse-packet", action="store_true",
                    help="rerun only the flow level, taking the packet level's results from the cell's last line "
                         "(for a change that leaves the packet level as it was: check that with benchmarks/ab.py)")
    args = ap.parse_args()
    if args.markdown:
        print(markdown(load_cells()))
        return
    if args.window_table:
        print(window_summary(load_cells()) + "\n\n" + window_table(load_cells()))
        return
    done = load_cells()
    version = code_version()
    OUT.parent.mkdir(parents=True, exist_ok=True)
    for scheme, load, window, routing, fabric in itertools.product(args.schemes, args.loads, args.windows,
                                                                   args.routing, args.fabrics):
        if scheme in STATEFUL and routing == "spray":
            continue
        if scheme not in WINDOWED and window != args.windows[0]:
            continue  # the window axis does not apply
        key: tuple = (scheme, load, window, routing, fabric, args.flows)
        if args.rto_min_us != 2000:
            key = (*key, args.rto_min_us)
        if not args.rerun and key in done and done[key].get("version") == version:
            continue
        cell = run_cell(cell_overrides(*key), fabric, done.get(key) if args.reuse_packet else None)
        cell.update(key=list(key), version=version)
        with OUT.open("a") as f:
            f.write(json.dumps(cell) + "\n")
        p, fl = cell["packet"]["all"], cell["flow"]["all"]
        print(f"{scheme:8} load {load} window {window:3} {routing:5} {fabric:14}: all mean "
              f"{100 * (error(p['mean_fct_ns'], fl['mean_fct_ns']) or 0):+.1f}%, packet {cell['packet_seconds']:.1f} s, "
              f"flow {cell['flow_seconds']:.2f} s", flush=True)


if __name__ == "__main__":
    main()
