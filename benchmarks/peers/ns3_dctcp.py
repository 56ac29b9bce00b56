"""The same flow trace in ns-3 and in fctlab: per-size-bin FCT agreement and wall time of both.

    pip install -e '.[peers]'                     # once: the PyPI ns3 package (3.44, CPython 3.11 on Linux x86-64)
    .venv/bin/python benchmarks/peers/ns3_dctcp.py            # 16-host leaf-spine, web search 0.6, 1,000 flows
    .venv/bin/python benchmarks/peers/ns3_dctcp.py --flows 3000 --write   # and store the result for the tables

fctlab writes the trace (its own workload generator, the experiment below) and runs it on one thread; ns-3 runs
the identical trace (same sources, destinations, sizes and start times) on a fabric of its stock models built by
`ns3_core.cpp` (compiled at run time through ns-3's Python bindings): point-to-point links, RED set up as a step
marker on the instantaneous queue (weight 1, min = max threshold = K, no gentle ramp, marks instead of drops),
TcpDctcp with classic recovery, one BulkSend/PacketSink pair per flow. The ns-3 half runs in a child process of
`--ns3-python` (default: this interpreter) and uses nothing but the standard library and ns3, so ns-3 may live in
another environment. Nothing is installed here.

The experiment is the reference scenario's parameters (examples/leafspine144-websearch.toml: 10/40 Gbps, 20.2 us
host links, 0.2 us core links, 360,000 B per port, ECN K = 97,500 B, RTOmin 2 ms, initial window 70, MSS 1460)
on a smaller leaf-spine (4 leaves x 4 hosts, 2 spines by default) with one queue per port and per-packet spraying
(ns-3: `Ipv4GlobalRouting::RandomEcmpRouting`, a random next hop per packet). What is aligned and what is not is
listed in ALIGNED and UNALIGNED below and written into the result. FCT: from the flow's start to its last byte at
the receiver in both; ns-3 always opens a connection with a handshake, which fctlab (`transport.handshake =
false`) does not, so ns-3's FCT is also given from its first data segment ("ns-3 after handshake").

`--write` stores the result as benchmarks/results/ns3-dctcp.json, which benchmarks/perf_table.py reads. Not part
of the test suite: nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import csv
import datetime
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
HERE = Path(__file__).resolve().parent
RESULT = ROOT / "benchmarks" / "results" / "ns3-dctcp.json"

#: Parameters set to the same value in both simulators.
ALIGNED = [
    "topology: leaf-spine, every host one hop from its leaf, every leaf linked to every spine",
    "link rates (10 Gbps host links, 40 Gbps leaf-spine) and propagation delays (20.2 us, 0.2 us)",
    "per-port buffer 360,000 B, tail drop; host NICs have the same buffer and ECN marking as switch ports",
    "ECN: mark when the port's instantaneous occupancy reaches K = 97,500 B (ns-3: RED, QW = 1, MinTh = MaxTh = K, "
    "Gentle off, UseHardDrop off)",
    "DCTCP g = 1/16, alpha starts at 0 (ns-3's default is 1)",
    "MSS 1460 B, 40 B of headers (ns-3: TCP timestamps off), initial window 70 segments, no delayed ACKs "
    "(DelAckCount = 1), no receive-window limit (1 GiB buffers)",
    "RTOmin 2 ms with a 1 ns clock granularity (ns-3's default granularity is 1 ms)",
    "SACK on, three duplicate ACKs start fast recovery, classic (not PRR) recovery; an echoed mark cuts the window "
    "by alpha/2, at most once per window",
    "routing: a random next hop per packet among equal-cost paths",
    "the trace: identical sources, destinations, sizes and start times",
]

#: Parameters that differ, and how.
UNALIGNED = [
    "connection setup: ns-3 opens each flow with a SYN handshake (one more RTT before data); fctlab does not",
    "framing: ns-3's point-to-point links add a 2 B PPP header (1,502 B on the wire against 1,500 B)",
    "queue: ns-3's RED sits above a 1-packet device queue, so a port holds up to one more packet than the "
    "qdisc's count; RED compares the occupancy before the arrival with K",
    "ACKs: ns-3 ACKs carry up to several SACK blocks (larger ACKs); fctlab's carry one",
    "loss recovery details: ns-3's limited transmit (on by default) and its RFC 6675 implementation; fctlab's "
    "NewReno with a SACK scoreboard",
    "window after a loss: ns-3's TcpDctcp gives fast recovery the same alpha/2 cut as a mark (its GetSsThresh "
    "serves both); fctlab halves it (ssthresh = cwnd / 2)",
    "initial RTO: ns-3's 1 s (only a lost SYN or first window waits for it); fctlab's RTOmin-based estimate",
    "spraying: ns-3 draws its random next hop per packet at each switch from its own generator; fctlab's "
    "spraying is its own (same distribution, different draws)",
]

BINS = [("small", 0, 100_000), ("medium", 100_000, 10_000_000), ("large", 10_000_000, None)]


def _bin(size: int) -> str:
    for name, lo, hi in BINS:
        if size > lo and (hi is None or size <= hi):
            return name
    raise ValueError(size)


def _percentile(values: list[float], q: float) -> float:
    """numpy.percentile's linear method, in plain Python (the ns-3 side has no numpy)."""
    xs = sorted(values)
    if not xs:
        return float("nan")
    pos = (len(xs) - 1) * q / 100.0
    lo = int(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def bin_stats(sizes: list[int], fcts: list[float | None]) -> dict[str, dict[str, float]]:
    """Mean and p99 FCT (us) per size bin and over all flows, of the flows that finished."""
    out: dict[str, dict[str, float]] = {}
    groups: dict[str, list[float]] = {name: [] for name, _, _ in BINS}
    unfinished = {name: 0 for name, _, _ in BINS}
    for size, fct in zip(sizes, fcts):
        if fct is None:
            unfinished[_bin(size)] += 1
        else:
            groups[_bin(size)].append(fct / 1000.0)
    groups["all"] = [x for name, _, _ in BINS for x in groups[name]]
    unfinished["all"] = sum(unfinished.values())
    for name, xs in groups.items():
        out[name] = {"flows": len(xs), "unfinished": unfinished[name],
                     "mean_us": sum(xs) / len(xs) if xs else float("nan"), "p99_us": _percentile(xs, 99)}
    return out


# ---------------------------------------------------------------------------------------------------- ns-3 side

def ns3_child(params_path: str, trace_path: str, out_path: str) -> None:
    """Run the trace in ns-3 (called in the child process); writes per-flow times and the wall times."""
    t_start = time.perf_counter()
    from ns import ns  # the PyPI ns3 package

    cppyy = ns.cppyy
    cppyy.cppdef((HERE / "ns3_core.cpp").read_text())
    peer = cppyy.gbl.fctlab_peer
    p = json.loads(Path(params_path).read_text())
    P = peer.Params()
    for key, value in p.items():
        setattr(P, key, value)
    std = cppyy.gbl.std
    src, dst = std.vector["uint32_t"](), std.vector["uint32_t"]()
    size, start = std.vector["uint64_t"](), std.vector["int64_t"]()
    with open(trace_path) as f:
        rows = list(csv.DictReader(f))
    for r in rows:
        src.push_back(int(r["src"]))
        dst.push_back(int(r["dst"]))
        size.push_back(int(r["size_bytes"]))
        start.push_back(int(r["start_ns"]))
    t_built = time.perf_counter()
    cpu0 = time.process_time()
    peer.Run(P, src, dst, size, start)
    cpu_run = time.process_time() - cpu0
    t_run = time.perf_counter()
    with open(out_path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["flow_id", "finish_ns", "first_send_ns"])
        for i, r in enumerate(rows):
            w.writerow([r["flow_id"], int(peer.FinishNs(i)), int(peer.FirstSendNs(i))])
    Path(out_path + ".json").write_text(json.dumps({
        "ns3_version": _ns3_version(),
        "import_and_compile_seconds": t_built - t_start,
        "setup_and_run_seconds": t_run - t_built,
        "run_seconds": float(peer.RunWallSeconds()),
        "setup_and_run_cpu_seconds": cpu_run,
    }))


def _ns3_version() -> str:
    try:
        from importlib.metadata import version

        return version("ns3")
    except Exception:  # noqa: BLE001 - a source build has no distribution metadata
        return "unknown"


# -------------------------------------------------------------------------------------------------- fctlab side

def experiment(args: argparse.Namespace):
    import fctlab

    return fctlab.load_experiment(ROOT / "examples" / "leafspine144-websearch.toml", overrides=[
        f"name=ns3-peer-{args.leaves}x{args.hosts_per_leaf}-{args.load}",
        f"topology.leaves={args.leaves}", f"topology.hosts_per_leaf={args.hosts_per_leaf}",
        f"topology.spines={args.spines}", f"workload.flows={args.flows}", f"workload.load={args.load}",
        f"seed={args.seed}", "switch.queues=1", "routing.mode=spray",
    ])


def ns3_params(exp_config: dict, seed: int, stop_s: float) -> dict:
    t, s, tr, sc = exp_config["topology"], exp_config["switch"], exp_config["transport"], exp_config["transport"]
    return {
        "leaves": t["leaves"], "hostsPerLeaf": t["hosts_per_leaf"], "spines": t["spines"],
        "hostGbps": t["host_link_gbps"], "coreGbps": t["core_link_gbps"],
        "hostDelayNs": t["host_link_delay_ns"], "coreDelayNs": t["core_link_delay_ns"],
        "bufferBytes": s["buffer_bytes"], "ecnBytes": s["ecn_threshold_bytes"], "mss": tr["mss_bytes"],
        "initCwnd": tr["init_cwnd_packets"], "rtoMinUs": tr["rto_min_us"], "dctcpG": sc["dctcp_g"],
        "alphaInit": sc["dctcp_alpha_init"], "spray": True, "seed": seed, "stopSeconds": stop_s,
    }


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{cpu}, {os.cpu_count()} cores, {platform.system()} {platform.release()}"


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--flows", type=int, default=1000)
    ap.add_argument("--load", type=float, default=0.6)
    ap.add_argument("--leaves", type=int, default=4)
    ap.add_argument("--hosts-per-leaf", type=int, default=4)
    ap.add_argument("--spines", type=int, default=2)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--repeat", type=int, default=3, help="fctlab runs (median wall time); ns-3 runs once")
    ap.add_argument("--ns3-python", default=sys.executable, help="the interpreter that has the ns3 package")
    ap.add_argument("--write", action="store_true", help=f"store the result in {RESULT.relative_to(ROOT)}")
    ap.add_argument("--ns3-child", nargs=3, metavar=("PARAMS", "TRACE", "OUT"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.ns3_child:
        ns3_child(*args.ns3_child)
        return

    import statistics

    import fctlab

    exp = experiment(args)
    flows = fctlab.build_flows(exp)
    load_before = os.getloadavg()
    walls, cpus, engines, result = [], [], [], None
    for _ in range(args.repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        result = fctlab.simulate(exp, flows=flows, threads=1)
        walls.append(time.perf_counter() - t0)
        cpus.append(time.process_time() - c0)
        engines.append(result.summary["engine"]["wall_seconds"])
    assert result is not None
    fl = result.flows.sort_values("flow_id")
    sizes = [int(x) for x in fl.size_bytes]
    ours = bin_stats(sizes, [None if not ok else float(x) for ok, x in zip(fl.finished, fl.fct_ns)])

    with tempfile.TemporaryDirectory() as tmp:
        trace = Path(tmp) / "trace.csv"
        tf = flows.sort_values("flow_id")
        with open(trace, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["flow_id", "src", "dst", "size_bytes", "start_ns"])
            for r in tf.itertuples():
                w.writerow([r.flow_id, r.src, r.dst, r.size_bytes, r.start_ps // 1000])
        stop_s = float(tf.start_ps.max()) / 1e12 + 10.0
        params = Path(tmp) / "params.json"
        params.write_text(json.dumps(ns3_params(result.summary["config"], args.seed, stop_s)))
        out = Path(tmp) / "ns3.csv"
        t0 = time.perf_counter()
        subprocess.run([args.ns3_python, __file__, "--ns3-child", str(params), str(trace), str(out)], check=True)
        ns3_process = time.perf_counter() - t0
        with open(out) as f:
            rows = {int(r["flow_id"]): r for r in csv.DictReader(f)}
        ns3_times = json.loads(Path(str(out) + ".json").read_text())
    start_ns = {int(r.flow_id): r.start_ps / 1000.0 for r in tf.itertuples()}
    raw, after = [], []
    for fid in fl.flow_id:
        r = rows[int(fid)]
        fin, first = int(r["finish_ns"]), int(r["first_send_ns"])
        raw.append(None if fin < 0 else fin - start_ns[int(fid)])
        after.append(None if fin < 0 or first < 0 else fin - first)
    ns3_raw, ns3_after = bin_stats(sizes, raw), bin_stats(sizes, after)

    engine_s = statistics.median(engines)  # the engine's own wall time, median of the repeats
    doc = {
        "what": "ns-3 (PyPI ns3) and fctlab on the same DCTCP trace",
        "command": " ".join(["python benchmarks/peers/ns3_dctcp.py", *_public_args(argv or sys.argv[1:])]),
        "date": datetime.date.today().isoformat(),
        "machine": machine(),
        "load_average_1min": [round(load_before[0], 2), round(os.getloadavg()[0], 2)],
        "fabric": f"leaf-spine {args.leaves} leaves x {args.hosts_per_leaf} hosts, {args.spines} spines",
        "workload": f"web search, load {args.load}, {args.flows} flows, seed {args.seed}",
        "aligned": ALIGNED,
        "unaligned": UNALIGNED,
        "fctlab": {"bins": ours, "wall_seconds_median": statistics.median(walls), "wall_seconds": walls,
                   "engine_seconds": engine_s, "threads": 1,
                   "cpu_seconds_median": statistics.median(cpus), "events": result.summary["engine"]["events"]},
        "ns3": {"bins": ns3_raw, "bins_after_handshake": ns3_after, "version": ns3_times["ns3_version"],
                "run_seconds": ns3_times["run_seconds"], "setup_and_run_seconds": ns3_times["setup_and_run_seconds"],
                "process_seconds": ns3_process,
                "setup_and_run_cpu_seconds": ns3_times["setup_and_run_cpu_seconds"]},
    }
    doc["speed_ratio_run"] = ns3_times["run_seconds"] / engine_s
    doc["speed_ratio_end_to_end"] = ns3_process / statistics.median(walls)
    # CPU time is steadier than wall time on a shared machine: ns-3's building and run against fctlab's simulate
    doc["speed_ratio_cpu"] = ns3_times["setup_and_run_cpu_seconds"] / statistics.median(cpus)
    show(doc)
    if args.write:
        RESULT.parent.mkdir(exist_ok=True)
        RESULT.write_text(json.dumps(doc, indent=1) + "\n")
        print(f"wrote {RESULT.relative_to(ROOT)}")


def _public_args(argv: list[str]) -> list[str]:
    """The command's arguments without --ns3-python and its value (a path on one machine)."""
    out, skip = [], False
    for a in argv:
        if skip:
            skip = False
        elif a == "--ns3-python":
            skip = True
        elif not a.startswith("--ns3-python="):
            out.append(a)
    return out


def show(doc: dict) -> None:
    print(f"{doc['fabric']}; {doc['workload']}; {doc['machine']}")
    print(f"{'bin':<7} {'flows':>5} | {'fctlab mean':>11} {'ns-3 mean':>9} {'diff':>6} {'ns-3 -hs':>8} {'diff':>6} |"
          f" {'fctlab p99':>10} {'ns-3 p99':>9} {'diff':>6} {'ns-3 -hs':>8} {'diff':>6}")
    for b in ("small", "medium", "large", "all"):
        o, n, a = doc["fctlab"]["bins"][b], doc["ns3"]["bins"][b], doc["ns3"]["bins_after_handshake"][b]

        def d(x: float, y: float) -> str:
            return f"{(x / y - 1) * 100:+5.1f}%" if y else "  n/a"

        print(f"{b:<7} {o['flows']:>5} | {o['mean_us']:>11.1f} {n['mean_us']:>9.1f} {d(n['mean_us'], o['mean_us'])}"
              f" {a['mean_us']:>8.1f} {d(a['mean_us'], o['mean_us'])} | {o['p99_us']:>10.1f} {n['p99_us']:>9.1f}"
              f" {d(n['p99_us'], o['p99_us'])} {a['p99_us']:>8.1f} {d(a['p99_us'], o['p99_us'])}")
    f, n = doc["fctlab"], doc["ns3"]
    print(f"wall: fctlab engine {f['engine_seconds']:.3f} s, end to end {f['wall_seconds_median']:.3f} s (median); "
          f"ns-3 Simulator::Run {n['run_seconds']:.2f} s, process {n['process_seconds']:.2f} s; "
          f"ratio {doc['speed_ratio_run']:.0f}x (run), {doc['speed_ratio_end_to_end']:.0f}x (end to end)")
    unfinished = f["bins"]["all"]["unfinished"], n["bins"]["all"]["unfinished"]
    print(f"CPU: fctlab simulate {f['cpu_seconds_median']:.3f} s, ns-3 build and run "
          f"{n['setup_and_run_cpu_seconds']:.2f} s: {doc['speed_ratio_cpu']:.0f}x; load average "
          f"{doc['load_average_1min'][0]} -> {doc['load_average_1min'][1]}")
    print(f"unfinished flows: fctlab {unfinished[0]}, ns-3 {unfinished[1]}")


if __name__ == "__main__":
    main()
