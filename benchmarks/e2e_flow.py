"""A flow-level run end to end against the packet level, and the command line's start-up.

Usage (from the repository root, after the README's install step):

    .venv/bin/python benchmarks/e2e_flow.py                      # 7 rounds; the packet level in 3 of them
    .venv/bin/python benchmarks/e2e_flow.py --rounds 11 --packet-rounds 0 --packet-seconds 11.2

Every measurement is a fresh process, timed from its start to its exit (os.wait4, which also gives its peak
resident set, and its CPU time, user + system: on a shared machine the wall time also counts the time it
waited for a core): `python -c "import fctlab"`, `fctlab --help`, and the same command at both levels on the
reference example (examples/leafspine144-websearch.toml: 20,000 flows of web search at load 0.6 on the 144-host
leaf-spine, DCTCP), `fctlab run EXAMPLE --out DIR` with and without `--set run.level=flow`, the engine on the
threads `fctlab run` picks. The rounds interleave them (import, help, flow run, and in the first --packet-rounds
rounds a packet-level run), so that a change in the machine's load falls on all of them; the report gives
medians and minima, the packet level's median over the flow level's, the engine's own time of the flow-level
run, and the load average before and after (the machine may be shared: quote it with the figures). An untimed
round comes first, and the commands run without PYTHONDONTWRITEBYTECODE, so that what is timed reads fctlab's
bytecode as an installed copy does. Results are
appended to benchmarks/results/e2e_flow.jsonl. Nothing here asserts a time; tests/test_imports.py checks that
`import fctlab` and `fctlab --help` load none of the heavy libraries.
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


def fctlab_cmd() -> list[str]:
    """The `fctlab` script of the repository's .venv, else this Python's `-m fctlab.cli`."""
    venv = ROOT / ".venv" / "bin" / "fctlab"
    if venv.exists():
        return [str(venv)]
    return [sys.executable, "-m", "fctlab.cli"]


#: The commands' environment: this one without PYTHONDONTWRITEBYTECODE, so that fctlab's own modules are compiled
#: once (by the untimed first round) and read from their bytecode after, as in an installed copy; with the
#: variable set every start compiled them again (about 0.1 s of CPU on a flow-level run, 2026-11-29).
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def timed(cmd: list[str]) -> tuple[float, float, float, str]:
    """Wall seconds from start to exit, CPU seconds (user + system), peak RSS (MiB), stderr; exits on a failed
    command."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=ROOT, env=ENV)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    err = proc.stderr.read().decode() if proc.stderr else ""
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{err}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, err


def run(level: str, work: Path) -> dict:
    out = work / f"{level}-{time.monotonic_ns()}"
    cmd = [*fctlab_cmd(), "run", str(REFERENCE), "--out", str(out)]
    if level == "flow":
        cmd += ["--set", "run.level=flow"]
    wall, cpu, rss, _ = timed(cmd)
    summary = json.loads((out / "summary.json").read_text())
    shutil.rmtree(out, ignore_errors=True)
    return {"wall": wall, "cpu": cpu, "rss": rss, "engine": summary["engine"]["wall_seconds"],
            "flows": summary["flows"]}


def stats(values: list[float]) -> dict:
    return {"median": statistics.median(values), "min": min(values), "all": [round(v, 3) for v in values]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=7, help="rounds of import / --help / flow-level run")
    ap.add_argument("--packet-rounds", type=int, default=3, help="rounds that also run the packet level")
    ap.add_argument("--packet-seconds", type=float, default=None,
                    help="a packet-level median measured before (with --packet-rounds 0)")
    args = ap.parse_args()

    load_before = os.getloadavg()
    work = Path(tempfile.mkdtemp(prefix="fctlab-e2e-"))
    imports, helps, flows, packets = [], [], [], []
    try:
        # an untimed round first: bytecode written, files in the page cache
        timed([sys.executable, "-c", "import fctlab"])
        timed([*fctlab_cmd(), "--help"])
        run("flow", work)
        for i in range(args.rounds):
            imports.append(timed([sys.executable, "-c", "import fctlab"])[:2])
            helps.append(timed([*fctlab_cmd(), "--help"])[:2])
            flows.append(run("flow", work))
            if i < args.packet_rounds:
                packets.append(run("packet", work))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    load_after = os.getloadavg()

    flow_wall = stats([r["wall"] for r in flows])
    result: dict = {
        "date": time.strftime("%F %T"),
        "machine": f"{platform.node()} {platform.machine()} {os.cpu_count()} cpus",
        "load_average_before": [round(x, 2) for x in load_before],
        "load_average_after": [round(x, 2) for x in load_after],
        "import_fctlab_seconds": stats([w for w, _ in imports]),
        "import_fctlab_cpu_seconds": stats([c for _, c in imports]),
        "fctlab_help_seconds": stats([w for w, _ in helps]),
        "fctlab_help_cpu_seconds": stats([c for _, c in helps]),
        "flow_level_seconds": flow_wall,
        "flow_level_cpu_seconds": stats([r["cpu"] for r in flows]),
        "flow_level_engine_seconds": stats([r["engine"] for r in flows]),
        "flow_level_peak_rss_mib": statistics.median(r["rss"] for r in flows),
        "flows": flows[0]["flows"],
    }
    packet_median = args.packet_seconds
    if packets:
        result["packet_level_seconds"] = stats([r["wall"] for r in packets])
        result["packet_level_cpu_seconds"] = stats([r["cpu"] for r in packets])
        result["packet_level_peak_rss_mib"] = statistics.median(r["rss"] for r in packets)
        packet_median = result["packet_level_seconds"]["median"]
    if packet_median is not None:
        result["packet_over_flow"] = packet_median / flow_wall["median"]

    print(f"reference, {result['flows']:,} flows; load average {load_before[0]:.2f} before, {load_after[0]:.2f} after "
          f"(1-minute; {os.cpu_count()} cpus)")
    for label, key in (("python -c 'import fctlab'", "import_fctlab"), ("fctlab --help", "fctlab_help"),
                       ("fctlab run, flow level", "flow_level"), ("fctlab run, packet level", "packet_level")):
        if f"{key}_seconds" in result:
            s, c = result[f"{key}_seconds"], result[f"{key}_cpu_seconds"]
            print(f"{label:<28} wall median {s['median']:7.3f} s  min {s['min']:7.3f} s;  CPU median "
                  f"{c['median']:7.3f} s  ({len(s['all'])} runs)")
        if key == "flow_level":
            s = result["flow_level_engine_seconds"]
            print(f"{'  of which the engine':<28} wall median {s['median']:7.3f} s  min {s['min']:7.3f} s")
    print(f"peak RSS: flow level {result['flow_level_peak_rss_mib']:.0f} MiB"
          + (f", packet level {result['packet_level_peak_rss_mib']:.0f} MiB" if packets else ""))
    if "packet_over_flow" in result:
        print(f"packet level / flow level, end to end (medians): {result['packet_over_flow']:.1f}x by wall time"
              + (f", {result['packet_level_cpu_seconds']['median'] / result['flow_level_cpu_seconds']['median']:.1f}x"
                 " by CPU time" if packets else ""))
    results = ROOT / "benchmarks" / "results"
    results.mkdir(exist_ok=True)
    with open(results / "e2e_flow.jsonl", "a") as f:
        f.write(json.dumps(result) + "\n")


if __name__ == "__main__":
    main()
