"""fctlab's performance harness: runs named scenarios end to end through the CLI and reports speed and memory.

Usage (from the repository root, after the README's install step):

    .venv/bin/python benchmarks/bench.py                      # the reference scenario, median of 3
    .venv/bin/python benchmarks/bench.py --list
    .venv/bin/python benchmarks/bench.py leafspine144-websearch-0.6-dctcp-200k --repeat 1
    .venv/bin/python benchmarks/bench.py scaling               # flows x2 -> time x2? memory bounded?
    .venv/bin/python benchmarks/bench.py --threads 1           # the engine on one thread (default: the CLI's)
    .venv/bin/python benchmarks/bench.py leafspine144-websearch-0.6-pias --flows 5000   # fewer flows
    .venv/bin/python benchmarks/bench.py --headline 1-packet-dctcp-20k.json    # and refresh the README's row

Each run is a fresh `fctlab run` process (release build of the engine), so its wall time includes Python start-up,
workload generation, the simulation, and writing Parquet + JSON. Peak memory is the child's maximum resident set
size (`os.wait4`). Events are the engine's own (events popped from its queue); "htsim-equivalent events" count
two events per packet-hop, the granularity of htsim (one for the queue's service, one for the pipe), so that
events per second can be compared with htsim's figures. Results are appended to benchmarks/results/ as JSON lines
with the machine noted. The engine runs on the threads `fctlab run` picks (two on a two-core machine: hosts and
switches side by side, `engine::parallel`) unless --threads says otherwise; each result records the threads
used. Not part of the test suite: nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = ROOT / "examples" / "leafspine144-websearch.toml"
SCENARIO_DIR = ROOT / "benchmarks" / "scenarios"

# name -> (experiment file, --set overrides)
SCENARIOS: dict[str, tuple[Path, list[str]]] = {
    "leafspine144-websearch-0.6-dctcp": (REFERENCE, ["workload.flows=20000"]),
    "leafspine144-websearch-0.6-dctcp-200k": (REFERENCE, ["workload.flows=200000"]),
    "leafspine144-websearch-0.6-dctcp-10k": (REFERENCE, ["workload.flows=10000"]),
    "leafspine144-websearch-0.6-dctcp-40k": (REFERENCE, ["workload.flows=40000"]),
    "leafspine144-websearch-0.6-tcp": (REFERENCE, ["workload.flows=20000", "scheme.name=tcp"]),
    # the other two port families on the same fabric and flows: strict priority (PIAS) and the rank queue
    # (pFabric), each set up as `fctlab reproduce pias` runs it
    "leafspine144-websearch-0.6-pias": (SCENARIO_DIR / "leafspine144-websearch-pias.toml", []),
    "leafspine144-websearch-0.6-pfabric": (SCENARIO_DIR / "leafspine144-websearch-pfabric.toml", []),
    # the explicit-rate family on the same flows; its switches keep per-flow state on the flow's path, so it
    # routes by ECMP (DCTCP with ECMP beside it for a like-for-like events/s)
    "leafspine144-websearch-0.6-dctcp-ecmp": (REFERENCE, ["workload.flows=20000", "routing.mode=ecmp"]),
    "leafspine144-websearch-0.6-rcp": (REFERENCE, ["workload.flows=20000", "routing.mode=ecmp", "scheme.name=rcp"]),
    "leafspine144-websearch-0.6-pdq": (REFERENCE, ["workload.flows=20000", "routing.mode=ecmp", "scheme.name=pdq"]),
    # Homa's family on the same flows and fabric (packet spraying, as the reference)
    "leafspine144-websearch-0.6-homa": (REFERENCE, ["workload.flows=20000", "scheme.name=homa"]),
    # HyLine (TCP under its manager: ECMP for the first class, source routes for the second) and QJump (TCP behind
    # per-flow token buckets), both on two strict-priority queues / eight levels, ECMP
    "leafspine144-websearch-0.6-hyline": (REFERENCE, ["workload.flows=20000", "routing.mode=ecmp",
                                                      "scheme.name=hyline", "switch.queues=2"]),
    "leafspine144-websearch-0.6-qjump": (REFERENCE, ["workload.flows=20000", "routing.mode=ecmp",
                                                     "scheme.name=qjump"]),
    # the flow level (no packets) on the reference and at scale (benchmarks/flowlevel_scale.py runs them)
    "leafspine144-websearch-0.6-dctcp-flow": (REFERENCE, ["workload.flows=20000", "run.level=flow"]),
    "leafspine144-websearch-0.6-pfabric-flow": (
        SCENARIO_DIR / "leafspine144-websearch-pfabric.toml",
        ["run.level=flow"],
    ),
    "fattree1024-websearch-0.6-dctcp-flow": (SCENARIO_DIR / "fattree1024-websearch-flow.toml", []),
}


def fctlab_exe() -> str:
    venv = ROOT / ".venv" / "bin" / "fctlab"
    if venv.exists():
        return str(venv)
    found = shutil.which("fctlab")
    if not found:
        sys.exit("fctlab is not installed: run the README's install command first")
    return found


def run_once(name: str, threads: int | None = None, flows: int | None = None) -> dict:
    exp, overrides = SCENARIOS[name]
    if flows is not None:
        overrides = [*overrides, f"workload.flows={flows}"]
    out = Path(tempfile.mkdtemp(prefix="fctlab-bench-"))
    cmd = [fctlab_exe(), "run", str(exp), "--out", str(out / "run")]
    if threads is not None:
        cmd += ["--threads", str(threads)]
    for o in overrides:
        cmd += ["--set", o]
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    err = proc.stderr.read().decode() if proc.stderr else ""
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{name}: fctlab run failed:\n{err}")
    summary = json.loads((out / "run" / "summary.json").read_text())
    shutil.rmtree(out, ignore_errors=True)
    eng = summary["engine"]
    flows = summary["flows"]
    sim_s = eng["sim_time_ps"] / 1e12
    return {
        "scenario": name,
        "wall_seconds": wall,
        "engine_seconds": eng["wall_seconds"],
        "flows": flows,
        "flows_finished": summary["finished_flows"],
        "events": eng["events"],
        "events_per_second": eng["events"] / wall,
        "engine_events_per_second": eng["events_per_second"],
        "packet_hops": eng["packet_hops"],
        "htsim_equivalent_events_per_second": eng["htsim_equivalent_events"] / wall,
        "data_packets": eng["data_packets_sent"],
        "events_per_data_packet": eng["events"] / max(1, eng["data_packets_sent"]),
        "flows_per_second": flows / wall,
        "sim_seconds_per_wall_second": sim_s / wall,
        "peak_rss_mib": usage.ru_maxrss / 1024,
        # user + system: on a shared machine the wall time also counts the process's waits for a core
        "cpu_seconds": usage.ru_utime + usage.ru_stime,
        "max_concurrent_flows": eng["max_concurrent_flows"],
        "threads": eng.get("threads", 1),
    }


def median_of(runs: list[dict]) -> dict:
    med = dict(runs[0])
    for key, value in runs[0].items():
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            med[key] = statistics.median(r[key] for r in runs)
    med["repeats"] = len(runs)
    med["wall_seconds_all"] = [round(r["wall_seconds"], 3) for r in runs]
    return med


def show(m: dict) -> None:
    print(
        f"{m['scenario']}: wall {m['wall_seconds']:.2f} s (engine {m['engine_seconds']:.2f} s; runs "
        f"{m['wall_seconds_all']}), {m['flows']:,} flows ({m['flows_finished']:,} finished), "
        f"{m['events']:,.0f} events = {m['events_per_second'] / 1e6:.2f} M/s end to end "
        f"({m['engine_events_per_second'] / 1e6:.2f} M/s in the engine), "
        f"htsim-equivalent {m['htsim_equivalent_events_per_second'] / 1e6:.2f} M events/s, "
        f"{m['events_per_data_packet']:.2f} events per data packet, {m['flows_per_second']:,.0f} flows/s, "
        f"{m['sim_seconds_per_wall_second']:.4f} sim s per wall s, peak RSS {m['peak_rss_mib']:.0f} MiB, "
        f"max concurrent flows {m['max_concurrent_flows']:,.0f}, engine threads {m['threads']}"
    )


def record(m: dict) -> None:
    results = ROOT / "benchmarks" / "results"
    results.mkdir(exist_ok=True)
    m = dict(m, machine=f"{platform.node()} {platform.machine()} {os.cpu_count()} cpus", date=time.strftime("%F %T"))
    with open(results / "bench.jsonl", "a") as f:
        f.write(json.dumps(m) + "\n")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("scenarios", nargs="*", default=["leafspine144-websearch-0.6-dctcp"])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--threads", type=int, default=None, help="engine threads (default: what fctlab run picks)")
    ap.add_argument("--flows", type=int, default=None, help="flows per run instead of the scenario's")
    ap.add_argument("--headline", metavar="ROW.json", default=None,
                    help="store the median as this row of the README's table (benchmarks/results/headline/)")
    args = ap.parse_args()
    if args.list:
        for name in SCENARIOS:
            print(name)
        print("scaling")
        return
    if args.flows is not None and "scaling" in args.scenarios:
        sys.exit("--flows does not apply to scaling (it runs 10,000 and 40,000 flows)")
    for name in args.scenarios:
        if name == "scaling":
            small = median_of([run_once("leafspine144-websearch-0.6-dctcp-10k", args.threads) for _ in range(args.repeat)])
            big = median_of([run_once("leafspine144-websearch-0.6-dctcp-40k", args.threads) for _ in range(args.repeat)])
            for m in (small, big):
                show(m)
                record(m)
            print(
                f"scaling 10k -> 40k flows (x4): wall x{big['wall_seconds'] / small['wall_seconds']:.2f}, "
                f"peak RSS x{big['peak_rss_mib'] / small['peak_rss_mib']:.2f}"
            )
            continue
        if name not in SCENARIOS:
            sys.exit(f"unknown scenario {name!r}; known: {', '.join(SCENARIOS)}, scaling")
        m = median_of([run_once(name, args.threads, args.flows) for _ in range(args.repeat)])
        show(m)
        record(m)
        if args.headline:
            headline(m, Path(args.headline), len(args.scenarios))


def headline(m: dict, path: Path, scenarios: int) -> None:
    """Store a measurement as one row of the README's performance table (benchmarks/perf_table.py renders it):
    the row's wording ("what", "peers", "row") is kept, its numbers, date and machine replaced."""
    if scenarios != 1:
        sys.exit("--headline takes one scenario")
    if not path.is_absolute() and not path.exists():
        path = ROOT / "benchmarks" / "results" / "headline" / path
    row = json.loads(path.read_text()) if path.exists() else {"row": 99, "what": m["scenario"], "peers": ""}
    row.pop("figure", None)
    row.update(
        scenario=m["scenario"], flows=m["flows"], threads=m["threads"], wall_seconds=round(m["wall_seconds"], 3),
        htsim_equivalent_events_per_second=round(m["htsim_equivalent_events_per_second"]),
        peak_rss_mib=round(m["peak_rss_mib"], 1), date=time.strftime("%F"),
        machine=f"{platform.processor() or platform.machine()}, {os.cpu_count()} cpus",
        source=f"benchmarks/bench.py {m['scenario']} (median of {m['repeats']} runs)",
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(row, indent=1) + "\n")
    print(f"wrote {path}; `python benchmarks/perf_table.py --write` puts it into README.md")


if __name__ == "__main__":
    main()
