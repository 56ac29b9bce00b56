"""The PDQ paper's evaluation as a recipe: ``fctlab reproduce pdq --scale tiny|small|paper``.

Hong, Caesar, Godfrey, "Finishing Flows Quickly with Preemptive Scheduling" (SIGCOMM 2012), section 5:
Figure 3 (query aggregation: application throughput against the number of flows (a), the mean flow size (b);
the most flows at 99% application throughput against the mean deadline (c); mean FCT normalised to the optimum
against the number of flows (d) and the mean size (e)), Figure 4 (sending patterns, normalised to PDQ(Full)),
Figures 6 and 7 (PDQ's dynamics over time), Figure 8 (network scale on three topologies, at the flow and the
packet level: :mod:`fctlab.recipes.pdq.scale`), Figure 9 (random packet loss) and Figure 10 (inaccurate flow-size
information).

Setup (what the paper gives, and what fctlab chose where it is silent):

* the paper's single-rooted tree: 4 ToR switches of 3 servers under one root switch, every link 1 Gbps:
  ``leaf_spine`` with 4 leaves x 3 hosts and 1 spine. Every link has a 10 us propagation delay, so the base RTT
  across the root is 129 us (80 us of propagation, 4 x 12 us store-and-forward of a 1,500 B packet one way
  and 4 x 0.32 us of a 40 B ACK back) and 65 us under one ToR; the paper gives no delay, and 100-150 us is
  the RTT of its era's 1 Gbps racks;
* one FIFO queue per port of 150,000 B (100 full-size packets; the paper gives none), the engine's TCP defaults
  otherwise (1460 B payload, 40 B headers, RTOmin 200 us);
* TCP twice: the engine's TCP (today's datacenter settings) and "TCP (2012)", TCP as the paper's era ran it
  (:data:`~fctlab.recipes.pdq.series.TCP_2012`: a handshake, an initial window of 2 segments, RTOmin 200 ms;
  the paper gives none of these);
* query aggregation (§5.2, after D3): ``flows`` flows start at t = 0 from the 11 other hosts to host 0 (each
  sender has floor(f/11) or ceil(f/11) of them); sizes uniform on [0.02, 1.98] x the mean (D3's [2 KB, 198 KB] at
  the 100 KB default; Figures 3b and 3e vary the mean from 100 to 350 KB); deadlines, where there are any,
  exponential with mean 20 ms (Figure 3c: 20 to 60 ms), at least the flow's ideal FCT (the default
  ``workload.deadline_floor``, :func:`fctlab.workloads.deadlines`: on a floor at the transmission time alone no
  scheme meets about 1.5% of the draws at a 60 ms mean, and 99% application throughput then measures the draws). Figure 3b fixes the number of flows at 10 and Figure 3e at 3 (the
  surviving text gives 3 for 3e and nothing for 3b);
* "flows at 99% application throughput" (Figures 3c and 4a): a binary search over the number of flows, each
  probe one run per seed, the probe passing when the application throughput averaged over the seeds is at
  least 99%; probes run in rounds (one probe of every search per round) after the main sweep
  (:func:`pdq_searches`), and the answer is the largest passing probe (0 when none passes);
* the optimum (:mod:`fctlab.theory.pdq_optimum`): SRPT for the mean FCT and Moore-Hodgson for the application
  throughput, on the same flows through the receiver's 1 Gbps link, each flow's latency outside that link taken
  from its ideal FCT (Figure 3c's optimum leaves it out: an upper bound, 0.07 ms against deadlines of 20 ms
  and more);
* Figure 4: six patterns over the 12 hosts (Aggregation, Stride(1), Stride(N/2), Staggered Prob(0.7) and (0.3),
  Random Permutation; :mod:`fctlab.workloads`), the flows arriving together; (a) the flows at 99% application
  throughput (deadlines with mean 20 ms), (b) the mean FCT of 24 flows without deadlines, both normalised to
  the first series (PDQ(Full));
* Figures 6 and 7 (section 5.4), PDQ(Full) only, from flow traces the recipe writes under ``OUT/traces``: the
  engine records the aggregator's last hop every 100 us (``run.monitor_host``: the queue of the switch port
  facing it, the payload delivered to it, in all and per flow). Figure 6: five flows of 1,000,000 + 10,000 i
  bytes from hosts 1-5 at t = 0, no deadlines; Figure 7: a 6 MB flow from host 1 at t = 0 and 50 flows of
  20,000 + 10 k bytes from hosts 2-11 in turn at 10 ms (the paper gives no hosts and only "about" the sizes).
  Throughput is the delivered payload's difference over 0.5 ms; utilization counts wire bytes as payload x
  1500/1460 over the link's 1 Gbps; the queue is in packets of 1,500 B. Figure 7's preemption period runs from
  10 ms to the last short flow's finish (:func:`dynamics_data`). The runs are deterministic: one seed at every
  scale. Left out, with a note, when no series has scheme ``pdq`` or the engine refuses the monitor;
* Figure 9: the aggregator's link drops packets with probability p in both directions (the paper's bottleneck
  link), through the engine keys :data:`DROP_KEY` and ``link_loss.hosts = [0]``; when the engine does not
  accept them, the figure is left out and the recipe says so;
* Figure 10: PDQ(Full) with the criticality its sender gives a flow (:data:`CRITICALITY_KEY`: its size, a
  random one, or its bytes sent so far) and RCP, 10 flows without deadlines, sizes uniform with mean 100 KB and
  heavy-tailed (the web-search CDF stands in for the paper's unnamed one); left out likewise when the engine
  does not accept the key.

The series are one constant, :data:`SCHEMES`; a series whose scheme the engine does not have is left out, with
a note. Scales: ``tiny`` (a smoke test, seconds), ``small`` (a few points and 2 seeds; under 15 minutes on 2
cores), ``paper`` (the paper's points, 5 seeds).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fctlab.claims import Claim, above, below, in_range, near
from fctlab.claims import order as strict_order
from fctlab.recipes.common import Points, Recipe, RunRow, check_scale, figure, record, save_figure
from fctlab.recipes.common import SCALES  # noqa: F401  (this module's name at its old path)
from fctlab.recipes.pdq.scale import scale_claims, scale_figures, scale_series, scale_sweep, scale_tables
from fctlab.recipes.pdq.series import DEADLINE_MS, LINK_DELAY_NS, MEAN_KB, SCHEMES, Series, available, load_runs

SRC = "Hong, Caesar, Godfrey, PDQ, SIGCOMM 2012, section 5"
#: Figure 10: how a PDQ sender ranks its flow (``scheme.pdq_criticality``): the flow's size, a random value drawn
#: once, or the bytes it has sent (updated every 50 KB).
CRITICALITY_KEY = "scheme.pdq_criticality"
CRITICALITIES = (("PDQ (size)", "size"), ("PDQ (random)", "random"), ("PDQ (bytes sent)", "bytes_sent"))
#: Figure 9: the engine key of a per-packet drop probability on every switch port.
DROP_KEY = "link_loss.probability"
#: The hosts of the tree and the aggregator of query aggregation.
HOSTS = 12
RECEIVER = 0
TARGET = 0.99

#: Figure 4's patterns: name -> workload keys.
PATTERNS: dict[str, dict[str, Any]] = {
    "Aggregation": {"pattern": "aggregation", "receiver": RECEIVER},
    "Stride(1)": {"pattern": "stride", "stride": 1},
    "Stride(N/2)": {"pattern": "stride", "stride": HOSTS // 2},
    "Staggered Prob(0.7)": {"pattern": "staggered", "staggered_p": 0.7},
    "Staggered Prob(0.3)": {"pattern": "staggered", "staggered_p": 0.3},
    "Random Permutation": {"pattern": "permutation"},
}

#: Figures 6 and 7 (section 5.4): the host whose last hop the engine records (``run.monitor_host``), every
#: :data:`MONITOR_US` us, in runs of at most :data:`DYNAMICS_LIMIT_MS`; one seed (the flows are fixed and the runs
#: deterministic) at every scale.
DYNAMICS = ("6", "7")
MONITOR_US = 100
DYNAMICS_LIMIT_MS = 100.0
DYNAMICS_SEED = 1
#: Figure 6: five flows of 1,000,000 + 10,000 i bytes (flow i; a lower index is more critical) from hosts 1-5 at
#: t = 0, no deadlines.
CONVERGENCE_FLOWS = 5
CONVERGENCE_BYTES = 1_000_000
CONVERGENCE_STEP = 10_000
#: Figure 7: one long flow from host 1 at t = 0 (6 MB: 48 ms at 1 Gbps, so it outlasts the burst) and 50 short
#: flows of 20,000 + 10 k bytes (flow k + 1) from hosts 2-11 in turn, all at 10 ms.
BURST_LONG_BYTES = 6_000_000
BURST_FLOWS = 50
BURST_BYTES = 20_000
BURST_STEP = 10
BURST_START_MS = 10.0
#: The smoothing window of the throughput and utilization plotted in Figures 6 and 7 (us).
SMOOTH_US = 500.0


@dataclass(frozen=True)
class PdqScale:
    seeds: tuple[int, ...]
    #: Figures 3a and 3d: numbers of flows
    flows: tuple[int, ...]
    #: Figures 3b and 3e: mean flow sizes (KB)
    sizes_kb: tuple[int, ...]
    #: Figure 3c: mean deadlines (ms)
    deadlines_ms: tuple[float, ...]
    #: the binary searches' largest number of flows
    search_max: int
    patterns: tuple[str, ...]
    #: Figure 9: drop probabilities
    drops: tuple[float, ...]
    flows_3b: int = 10
    flows_3e: int = 3
    flows_4b: int = 24
    flows_9: int = 10
    flows_10: int = 10
    #: Figure 10's size distributions: "uniform" and a CDF name
    sizes_10: tuple[str, ...] = ("uniform", "websearch")


PDQ_SCALES = {
    "tiny": PdqScale(seeds=(1,), flows=(1, 3), sizes_kb=(100,), deadlines_ms=(20.0,), search_max=4,
                     patterns=("Aggregation", "Stride(1)"), drops=(0.0, 0.01), flows_3b=3, flows_4b=6, flows_9=3,
                     flows_10=3, sizes_10=("uniform",)),
    "small": PdqScale(seeds=(1, 2), flows=(1, 5, 10, 15, 20, 25), sizes_kb=(100, 200, 350),
                      deadlines_ms=(20.0, 40.0, 60.0), search_max=65, patterns=tuple(PATTERNS),
                      drops=(0.0, 0.01, 0.03)),
    "paper": PdqScale(seeds=(1, 2, 3, 4, 5), flows=(1, 3, 5, 7, 10, 13, 15, 17, 20, 23, 25),
                      sizes_kb=(100, 150, 200, 250, 300, 350), deadlines_ms=(20.0, 25.0, 30.0, 35.0, 40.0, 45.0, 50.0,
                                                                             55.0, 60.0),
                      search_max=127, patterns=tuple(PATTERNS), drops=(0.0, 0.005, 0.01, 0.02, 0.03)),
}
#: Written into the results folder: which scale and series made it (read by the tables).
RECIPE_FILE = "pdq-recipe.json"


def _check_scale(scale: str) -> PdqScale:
    sc: PdqScale = check_scale(scale, PDQ_SCALES)
    return sc


def pdq_base() -> dict[str, Any]:
    """The paper's tree and switches as an experiment dict (without scheme and workload)."""
    return {
        "name": "reproduce-pdq",
        "topology": {"kind": "leaf_spine", "leaves": 4, "hosts_per_leaf": 3, "spines": 1, "link_gbps": 1,
                     "link_delay_ns": LINK_DELAY_NS},
        "switch": {"queues": 1, "buffer_bytes": 150_000},
    }


def aggregation(flows: int, mean_kb: float = MEAN_KB, deadline_ms: float | None = DEADLINE_MS) -> dict[str, Any]:
    """Query aggregation's workload keys."""
    w: dict[str, Any] = {"pattern": "aggregation", "receiver": RECEIVER, "flows": int(flows),
                         "size_uniform_mean_bytes": float(mean_kb) * 1000}
    if deadline_ms is not None:
        w["deadline_mean_ms"] = float(deadline_ms)
    return w


def convergence_flows() -> list[dict[str, int]]:
    """Figure 6's flows as trace rows (src, dst, size_bytes, start_ns): flow i from host i + 1."""
    return [{"src": 1 + i, "dst": RECEIVER, "size_bytes": CONVERGENCE_BYTES + CONVERGENCE_STEP * i, "start_ns": 0}
            for i in range(CONVERGENCE_FLOWS)]


def burst_flows() -> list[dict[str, int]]:
    """Figure 7's flows as trace rows: the long flow (flow 0, host 1, t = 0), then the short flows k = 0..49
    (flow k + 1) from hosts 2-11 in turn, all at :data:`BURST_START_MS`."""
    senders = [h for h in range(HOSTS) if h not in (RECEIVER, 1)]
    start = int(BURST_START_MS * 1e6)
    return [{"src": 1, "dst": RECEIVER, "size_bytes": BURST_LONG_BYTES, "start_ns": 0}] + [
        {"src": senders[k % len(senders)], "dst": RECEIVER, "size_bytes": BURST_BYTES + BURST_STEP * k,
         "start_ns": start} for k in range(BURST_FLOWS)]


def _write_trace(path: Path, rows: Sequence[dict[str, int]]) -> Path:
    """Write ``rows`` as a CSV trace at ``path``, leaving the file alone when it already holds them."""
    import os

    text = "src,dst,size_bytes,start_ns\n" + "".join(
        f"{r['src']},{r['dst']},{r['size_bytes']},{r['start_ns']}\n" for r in rows)
    try:
        if path.read_text() == text:
            return path
    except OSError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text)
    os.replace(tmp, path)
    return path


def _dynamics_points(series: Series, traces: Path) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """Figures 6 and 7's runs of one series: x is the number of flows of the figure (5; 50 short ones)."""
    run = [("run.monitor_host", RECEIVER), ("run.monitor_interval_us", float(MONITOR_US)),
           ("run.time_limit_ms", DYNAMICS_LIMIT_MS)]
    out = []
    for fig, x, rows in (("6", CONVERGENCE_FLOWS, convergence_flows()), ("7", BURST_FLOWS, burst_flows())):
        path = _write_trace(traces / f"pdq-{fig}.csv", rows)
        out.append((_values(fig, x, series.label, DYNAMICS_SEED), _raw(series, {"trace": str(path)},
                                                                        DYNAMICS_SEED, run)))
    return out


def _raw(series: Series, workload: dict[str, Any], seed: int, extra: Sequence[tuple[str, Any]] = ()) -> dict[str, Any]:
    from fctlab.config import set_key_path

    raw = pdq_base()
    raw["label"] = series.label
    raw["seed"] = int(seed)
    raw["scheme"] = {"name": series.scheme, **dict(series.keys)}
    if series.transport:
        raw["transport"] = dict(series.transport)
    raw["workload"] = dict(workload)
    for key, value in extra:
        set_key_path(raw, key.split("."), value, key)
    return raw


def _values(figure: str, x: Any, variant: str, seed: int, **more: Any) -> dict[str, Any]:
    return {"figure": figure, "x": x, "variant": variant, **more, "seed": seed}


def pdq_sweep(scale: str = "small", out_dir: str | Path | None = None, schemes: Sequence[Series] | None = None) -> Any:
    """Figures 3a, 3b, 3d, 3e, 4b, 6, 7, 9 and 10 as one sweep (the binary searches of 3c and 4a follow it:
    :func:`pdq_searches`). Every point's values: figure, x (the figure's x value: flows, mean KB, pattern, drop
    probability or size distribution; for 6 and 7 their number of flows), variant (the series label), seed.
    ``schemes`` defaults to :data:`SCHEMES`. With ``out_dir``, records the scale there for the tables and writes
    the traces of Figures 6 and 7 under ``out_dir/traces`` (without it, under the system's temporary folder)."""
    sc = _check_scale(scale)
    series, notes = available(SCHEMES if schemes is None else schemes)
    notes = list(notes)
    b = Points()
    for seed in sc.seeds:
        for s in series:
            for n in sc.flows:
                b.add(_values("3a", n, s.label, seed), _raw(s, aggregation(n), seed))
                b.add(_values("3d", n, s.label, seed), _raw(s, aggregation(n, deadline_ms=None), seed))
            for kb in sc.sizes_kb:
                b.add(_values("3b", kb, s.label, seed), _raw(s, aggregation(sc.flows_3b, kb), seed))
                b.add(_values("3e", kb, s.label, seed), _raw(s, aggregation(sc.flows_3e, kb, None), seed))
            for name in sc.patterns:
                w = {**PATTERNS[name], "flows": sc.flows_4b, "size_uniform_mean_bytes": MEAN_KB * 1000.0}
                b.add(_values("4b", name, s.label, seed), _raw(s, w, seed))
    # Figure 9: loss, behind an engine key that may not exist yet
    loss = [(_values(f"9{part}", p, s.label, seed),
             _raw(s, aggregation(sc.flows_9, deadline_ms=DEADLINE_MS if part == "a" else None), seed,
                  [(DROP_KEY, p), ("link_loss.hosts", [RECEIVER])] if p > 0 else []))
            for seed in sc.seeds for s in series for p in sc.drops for part in ("a", "b")]
    why = b.try_add(loss)
    if why is not None:
        notes.append(f"figure 9 (packet loss) left out: the engine does not take {DROP_KEY} ({why})")
    # Figure 10: PDQ's criticality without size information, beside RCP
    pdq = next((s for s in series if s.scheme == "pdq"), None)
    rcp = next((s for s in series if s.scheme == "rcp"), None)
    if pdq is None:
        notes.append(f"figure 10 (inaccurate flow information) left out: it needs scheme pdq ({CRITICALITY_KEY})")
    else:
        crit = [Series(label, pdq.scheme, (*pdq.keys, (CRITICALITY_KEY.split(".", 1)[1], value)))
                for label, value in CRITICALITIES]
        items = []
        for seed in sc.seeds:
            for dist in sc.sizes_10:
                w = aggregation(sc.flows_10, deadline_ms=None)
                if dist != "uniform":
                    del w["size_uniform_mean_bytes"]
                    w["cdf"] = dist
                for s in [*crit, *([rcp] if rcp else [])]:
                    items.append((_values("10", dist, s.label, seed), _raw(s, w, seed)))
        why = b.try_add(items)
        if why is not None:
            notes.append(f"figure 10 (inaccurate flow information) left out: the engine does not take "
                         f"{CRITICALITY_KEY} ({why})")
    # Figures 6 and 7: PDQ's dynamics, the last hop to the aggregator recorded by the engine
    if pdq is None:
        notes.append("figures 6 and 7 (dynamics) left out: they need scheme pdq")
    else:
        import tempfile

        traces = (Path(out_dir) if out_dir is not None else Path(tempfile.gettempdir()) / "fctlab-pdq") / "traces"
        why = b.try_add(_dynamics_points(pdq, traces))
        if why is not None:
            notes.append(f"figures 6 and 7 (dynamics) left out: the engine does not take run.monitor_host ({why})")
    record(out_dir, RECIPE_FILE, scale, series)
    return b.sweep(f"reproduce-pdq-{scale}", notes)


# --------------------------------------------------------------------------------------------------------------
# The binary searches (Figures 3c and 4a)


@dataclass
class Search:
    """The most flows at which a series keeps 99% application throughput, by bisection on [lo, hi): lo passed
    (0: nothing yet), hi failed (search_max + 1: assumed)."""

    figure: str
    x: Any
    series: Series
    workload: Any  # flows -> workload keys
    lo: int
    hi: int
    probes: dict[int, float | None] = field(default_factory=dict)

    @property
    def done(self) -> bool:
        return self.hi - self.lo <= 1

    @property
    def mid(self) -> int:
        return (self.lo + self.hi) // 2


def _searches(sc: PdqScale, series: Sequence[Series]) -> list[Search]:
    out = []
    for s in series:
        for d in sc.deadlines_ms:
            out.append(Search("3c", d, s, lambda n, d=d: aggregation(n, deadline_ms=d), 0, sc.search_max + 1))
        for name in sc.patterns:
            def w(n: int, name: str = name) -> dict[str, Any]:
                return {**PATTERNS[name], "flows": n, "size_uniform_mean_bytes": MEAN_KB * 1000.0,
                        "deadline_mean_ms": DEADLINE_MS}
            out.append(Search("4a", name, s, w, 0, sc.search_max + 1))
    return out


def _probe_values(s: Search, n: int, seed: int) -> dict[str, Any]:
    return _values(s.figure, s.x, s.series.label, seed, flows=n)


def _app_throughput(out_dir: Path, values: dict[str, Any]) -> float | None:
    from fctlab.sweep import run_id_for

    path = Path(out_dir) / "runs" / run_id_for(values) / "summary.json"
    try:
        return json.loads(path.read_text()).get("application_throughput")
    except (OSError, ValueError):
        return None


def pdq_phases(scale: str, out_dir: str | Path) -> Iterator[Any]:
    """The sweeps that follow :func:`pdq_sweep`: Figure 8 (:mod:`fctlab.recipes.pdq.scale`, its series taken
    from :data:`SCHEMES`), then the binary searches (:func:`pdq_searches`)."""
    _check_scale(scale)
    yield scale_sweep(scale, scale_series(SCHEMES))
    yield from pdq_searches(scale, out_dir)


def pdq_searches(scale: str, out_dir: str | Path, schemes: Sequence[Series] | None = None) -> Iterator[Any]:
    """The binary searches of Figures 3c and 4a, as sweeps to run one after the other into ``out_dir``: each
    round probes the middle of every unfinished search (one run per seed), and the next round is made from the
    results the previous one wrote. A probe passes when the application throughput, averaged over the seeds,
    is at least 99%; a probe whose runs are missing (failed) fails."""
    sc = _check_scale(scale)
    series, _ = available(SCHEMES if schemes is None else schemes)
    searches = _searches(sc, series)
    rnd = 0
    while True:
        active = [s for s in searches if not s.done]
        if not active:
            return
        rnd += 1
        b = Points()
        for s in active:
            for seed in sc.seeds:
                b.add(_probe_values(s, s.mid, seed), _raw(s.series, s.workload(s.mid), seed))
        yield b.sweep(f"reproduce-pdq-{scale}-search-{rnd}")
        for s in active:
            vals = [_app_throughput(Path(out_dir), _probe_values(s, s.mid, seed)) for seed in sc.seeds]
            mean = None if any(v is None for v in vals) else sum(vals) / len(vals)  # type: ignore[arg-type]
            s.probes[s.mid] = mean
            if mean is not None and mean >= TARGET - 1e-12:
                s.lo = s.mid
            else:
                s.hi = s.mid


# --------------------------------------------------------------------------------------------------------------
# Reading the results


def _optimal(run: RunRow) -> dict[str, float | None]:
    """The optimum's application throughput and mean FCT (ns) on a run's own flows."""
    import pandas as pd

    from fctlab import optimal

    cfg = run.summary.get("config") or {}
    rate = float((cfg.get("topology") or {}).get("host_link_gbps", 1.0)) * 1e9
    t = cfg.get("transport") or {}
    mss, hdr = int(t.get("mss_bytes", 1460)), int(t.get("header_bytes", 40))
    f = pd.read_parquet(run.path / "flows.parquet", columns=["size_bytes", "ideal_fct_ns", "deadline_ns"])
    p = optimal.transmission_ns(f["size_bytes"], rate, mss_bytes=mss, header_bytes=hdr)
    lat = optimal.latency_from_ideal(f["ideal_fct_ns"], f["size_bytes"], rate, mss_bytes=mss, header_bytes=hdr)
    return {
        "app": optimal.optimal_application_throughput(p, f["deadline_ns"].to_numpy(dtype=float), lat),
        "fct": float(optimal.srpt_fct_ns(p, lat).mean()),
    }


def _mean(xs: Sequence[float | None]) -> float | None:
    v = [x for x in xs if x is not None and not (isinstance(x, float) and math.isnan(x))]
    return sum(v) / len(v) if v else None


def _series_order(runs: Sequence[RunRow]) -> list[str]:
    order = [s.label for s in SCHEMES] + [label for label, _ in CRITICALITIES]
    seen = list(dict.fromkeys(r.values["variant"] for r in runs))
    return [x for x in order if x in seen] + [x for x in seen if x not in order]


def figure_data(results_dir: str | Path) -> dict[str, dict[str, dict[Any, float | None]]]:
    """figure -> series -> x -> the figure's value, averaged over seeds: application throughput (3a, 3b, 9a),
    flows at 99% application throughput (3c, 4a), mean FCT / the optimum's (3d, 3e), mean FCT in ms (4b, 9b,
    10). Figures 3a, 3b, 3c, 3d and 3e have an "Optimal" series."""
    runs = load_runs(results_dir)
    data: dict[str, dict[str, dict[Any, list[float | None]]]] = {}

    def put(fig: str, label: str, x: Any, v: float | None) -> None:
        data.setdefault(fig, {}).setdefault(label, {}).setdefault(x, []).append(v)

    opt_seen: set[tuple[str, Any, Any]] = set()
    for r in runs:
        fig, x, label = r.values["figure"], r.values["x"], r.values["variant"]
        if "flows" in r.values or fig in DYNAMICS or fig == "8":  # a probe of a search: gathered below; 6 and 7:
            continue  # dynamics_data; 8: the scale module
        s = r.summary
        mean_fct = (s.get("bins") or {}).get("all", {}).get("mean_fct_ns")
        if fig in ("3a", "3b", "9a"):
            put(fig, label, x, s.get("application_throughput"))
        elif fig in ("3d", "3e"):
            opt = _optimal(r)["fct"]
            put(fig, label, x, None if mean_fct is None or not opt or s.get("unfinished_flows") else mean_fct / opt)
        else:
            put(fig, label, x, None if mean_fct is None or s.get("unfinished_flows") else mean_fct / 1e6)
        if fig in ("3a", "3b") and (fig, x, r.values["seed"]) not in opt_seen:
            opt_seen.add((fig, x, r.values["seed"]))
            put(fig, "Optimal", x, _optimal(r)["app"])
        if fig in ("3d", "3e") and (fig, x, r.values["seed"]) not in opt_seen:
            opt_seen.add((fig, x, r.values["seed"]))
            put(fig, "Optimal", x, 1.0)
    # searches: the largest probe whose seeds' mean application throughput passed
    probes: dict[tuple[str, Any, str, int], list[float | None]] = {}
    for r in runs:
        if "flows" in r.values:
            key = (r.values["figure"], r.values["x"], r.values["variant"], int(r.values["flows"]))
            probes.setdefault(key, []).append(r.summary.get("application_throughput"))
    best: dict[tuple[str, Any, str], int] = {}
    for (fig, x, label, n), vals in probes.items():
        m = None if any(v is None for v in vals) else sum(vals) / len(vals)  # type: ignore[arg-type]
        key = (fig, x, label)
        best.setdefault(key, 0)
        if m is not None and m >= TARGET - 1e-12:
            best[key] = max(best[key], n)
    out: dict[str, dict[str, dict[Any, float | None]]] = {}
    for fig, by_label in data.items():
        out[fig] = {label: {x: _mean(v) for x, v in xs.items()} for label, xs in by_label.items()}
    for (fig, x, label), n in best.items():
        out.setdefault(fig, {}).setdefault(label, {})[x] = float(n)
    if "3c" in out:
        out["3c"]["Optimal"] = _optimal_searches(results_dir, sorted({x for xs in out["3c"].values() for x in xs}))
    return out


# --------------------------------------------------------------------------------------------------------------
# Figures 6 and 7: the series the engine records at the aggregator's last hop


def monitor_rates(monitor: dict[str, Any], *, link_gbps: float = 1.0, smooth_us: float = SMOOTH_US,
                  mss_bytes: int = 1460, header_bytes: int = 40) -> dict[str, Any]:
    """Throughput, utilization and queue from a run's ``engine.monitor``.

    The delivered bytes are cumulative at the sample times (a sample at 0 with nothing delivered is assumed
    when the first is later); a rate is the difference over ``w`` samples (the window ``smooth_us`` rounded to
    whole intervals, at least one) divided by their time, placed at the window's middle. Returns ``time_ms``
    (the middles), ``flows`` (flow id -> payload Gb/s), ``total_gbps`` (payload Gb/s to the host),
    ``utilization`` (wire bytes over the link's capacity, a fraction: payload x (mss + header) / mss, 1500/1460
    by default, so a short last packet's header is slightly undercounted), and ``queue_ms`` with
    ``queue_packets`` at every sample (bytes / (mss + header))."""
    import numpy as np

    t = np.asarray(monitor.get("time_ps") or [], dtype=np.float64)
    total = np.asarray(monitor.get("delivered_bytes") or [], dtype=np.float64)
    per_flow = [np.asarray(f, dtype=np.float64) for f in monitor.get("flow_delivered_bytes") or []]
    queue = np.asarray(monitor.get("queue_bytes") or [], dtype=np.float64)
    queue_ms, queue_packets = t / 1e9, queue / (mss_bytes + header_bytes)
    if len(t) and t[0] > 0:
        t = np.concatenate(([0.0], t))
        total = np.concatenate(([0.0], total))
        per_flow = [np.concatenate(([0.0], f)) for f in per_flow]
    interval = float(monitor.get("interval_ps") or (t[1] - t[0] if len(t) > 1 else 1.0))
    w = max(1, int(round(smooth_us * 1e6 / interval)))

    def gbps(cum: Any) -> Any:
        if len(cum) <= w:
            return np.zeros(0)
        return (cum[w:] - cum[:-w]) * 8.0 / ((t[w:] - t[:-w]) * 1e-12) / 1e9

    mid = (t[w:] + t[:-w]) / 2 / 1e9 if len(t) > w else np.zeros(0)
    total_gbps = gbps(total)
    return {
        "time_ms": mid,
        "flows": {int(f): gbps(c) for f, c in zip(monitor.get("flows") or [], per_flow)},
        "total_gbps": total_gbps,
        "utilization": total_gbps * (mss_bytes + header_bytes) / mss_bytes / link_gbps,
        "queue_ms": queue_ms,
        "queue_packets": queue_packets,
    }


def utilization_between(monitor: dict[str, Any], start_ms: float, end_ms: float, *, link_gbps: float = 1.0,
                        mss_bytes: int = 1460, header_bytes: int = 40) -> float | None:
    """The link's utilization from ``start_ms`` to ``end_ms``: the wire bytes delivered then (the cumulative
    delivered payload interpolated linearly between samples, x (mss + header) / mss) over the capacity."""
    import numpy as np

    t = np.asarray(monitor.get("time_ps") or [], dtype=np.float64) / 1e9
    d = np.asarray(monitor.get("delivered_bytes") or [], dtype=np.float64)
    if len(t) < 2 or not end_ms > start_ms:
        return None
    payload = float(np.interp(end_ms, t, d) - np.interp(start_ms, t, d))
    return payload * (mss_bytes + header_bytes) / mss_bytes * 8 / (link_gbps * 1e6 * (end_ms - start_ms))


def _run_shape(run: RunRow) -> tuple[float, int, int]:
    cfg = run.summary.get("config") or {}
    t = cfg.get("transport") or {}
    return (float((cfg.get("topology") or {}).get("host_link_gbps", 1.0)), int(t.get("mss_bytes", 1460)),
            int(t.get("header_bytes", 40)))


def _dynamics_row(run: RunRow) -> dict[str, Any] | None:
    """One run of Figure 6 or 7 summed up (None without a monitor series): its flows' finish times and the
    figure's numbers (see :func:`dynamics_data`)."""
    import numpy as np
    import pandas as pd

    mon = (run.summary.get("engine") or {}).get("monitor")
    if not mon:
        return None
    gbps, mss, hdr = _run_shape(run)
    f = pd.read_parquet(run.path / "flows.parquet", columns=["flow_id", "size_bytes", "start_ns", "finish_ns",
                                                              "fct_ns", "finished"])
    done = f["finished"].to_numpy(dtype=bool)
    q = np.asarray(mon.get("queue_bytes") or [0], dtype=np.float64) / (mss + hdr)
    row: dict[str, Any] = {"run": run, "monitor": mon, "flows": f, "link_gbps": gbps, "mss": mss, "header": hdr,
                           "unfinished": int((~done).sum()), "drops": run.summary.get("drops"),
                           "max_queue_packets": float(q.max())}
    wire_ms = float((f["size_bytes"] + hdr * np.ceil(f["size_bytes"] / mss)).sum()) * 8 / (gbps * 1e6)
    if run.values["figure"] == "6":
        row["ideal_ms"] = wire_ms
        row["done_ms"] = float(f["finish_ns"].max()) / 1e6 if done.all() else None
        row["order"] = [int(i) for i in f[done].sort_values("finish_ns")["flow_id"]]
        row["in_order"] = bool(done.all()) and row["order"] == sorted(int(i) for i in f["flow_id"])
        row["utilization"] = (utilization_between(mon, 0.0, row["done_ms"], link_gbps=gbps, mss_bytes=mss,
                                                  header_bytes=hdr) if row["done_ms"] else None)
    else:
        short = f[f["start_ns"] >= BURST_START_MS * 1e6 - 1e-6]
        long_ = f[f["start_ns"] < BURST_START_MS * 1e6 - 1e-6]
        sdone = short["finished"].to_numpy(dtype=bool)
        end = float(short["finish_ns"].max()) / 1e6 if len(short) and sdone.all() else None
        row["burst_end_ms"] = end
        row["short_mean_fct_ms"] = float(short["fct_ns"].mean()) / 1e6 if len(short) and sdone.all() else None
        row["long_done_ms"] = (float(long_["finish_ns"].max()) / 1e6 if len(long_) and long_["finished"].all()
                               else None)
        row["utilization"] = (utilization_between(mon, BURST_START_MS, end, link_gbps=gbps, mss_bytes=mss,
                                                  header_bytes=hdr) if end else None)
        t = np.asarray(mon.get("time_ps") or [], dtype=np.float64) / 1e9
        during = q[(t >= BURST_START_MS) & (t <= end)] if end and len(q) == len(t) else np.zeros(0)
        row["queue_range"] = (float(during.min()), float(during.max())) if len(during) else None
        row["queue_median"] = float(np.median(during)) if len(during) else None
    return row


def dynamics_data(results_dir: str | Path) -> dict[str, list[dict[str, Any]]]:
    """Figures 6 and 7: figure -> one row per run (series in the recipe's order, then seed), each with ``run``,
    ``monitor``, ``flows`` (its flows.parquet), ``unfinished``, ``drops`` and ``max_queue_packets``; Figure 6
    adds ``done_ms`` (the last flow's finish, None while any is unfinished), ``ideal_ms`` (every flow's wire bytes
    at line rate), ``order`` (flow ids by finish time), ``in_order`` (most critical first) and ``utilization``
    (0 to done_ms); Figure 7 adds ``burst_end_ms`` (the last short flow's finish), ``utilization``, ``queue_range``
    (min, max packets) and ``queue_median`` from :data:`BURST_START_MS` to it, ``short_mean_fct_ms`` and
    ``long_done_ms``."""
    runs = [r for r in load_runs(results_dir) if r.values["figure"] in DYNAMICS]
    order = _series_order(runs)
    out: dict[str, list[dict[str, Any]]] = {}
    for r in sorted(runs, key=lambda r: (order.index(r.values["variant"]), r.values["seed"])):
        row = _dynamics_row(r)
        if row is not None:
            out.setdefault(r.values["figure"], []).append(row)
    return out


def _recorded_scale(results_dir: str | Path) -> PdqScale:
    try:
        return PDQ_SCALES[json.loads((Path(results_dir) / RECIPE_FILE).read_text())["scale"]]
    except (OSError, ValueError, KeyError):
        return PDQ_SCALES["small"]


def _optimal_searches(results_dir: str | Path, deadlines: Sequence[float]) -> dict[Any, float | None]:
    """Figure 3c's optimum: the most flows at which Moore-Hodgson keeps 99% application throughput (averaged
    over the seeds) on the flows the runs would have, by the same bisection (latency left out: an upper bound)."""
    from fctlab import optimal
    from fctlab.config import experiment_from_dict
    from fctlab.simulation import build_flows

    sc = _recorded_scale(results_dir)
    out: dict[Any, float | None] = {}
    for d in deadlines:
        lo, hi = 0, sc.search_max + 1
        while hi - lo > 1:
            mid = (lo + hi) // 2
            shares = []
            for seed in sc.seeds:
                exp = experiment_from_dict(_raw(Series("optimal", "tcp"), aggregation(mid, deadline_ms=d), seed))
                f = build_flows(exp)
                t = exp.engine["transport"]
                p = optimal.transmission_ns(f["size_bytes"], exp.host_link_bps, mss_bytes=t["mss_bytes"],
                                            header_bytes=t["header_bytes"])
                shares.append(optimal.optimal_application_throughput(p, f["deadline_ns"].to_numpy()) or 0.0)
            if sum(shares) / len(shares) >= TARGET - 1e-12:
                lo = mid
            else:
                hi = mid
        out[d] = float(lo)
    return out


FIGURES: dict[str, tuple[str, str, str]] = {
    # figure -> (title, x label, value label)
    "3a": ("Figure 3a: application throughput vs number of flows (deadlines: exp. mean 20 ms)", "flows",
           "application throughput [%]"),
    "3b": ("Figure 3b: application throughput vs mean flow size", "mean flow size [KB]", "application throughput [%]"),
    "3c": ("Figure 3c: flows at 99% application throughput vs mean deadline", "mean deadline [ms]",
           "flows at 99% app. throughput"),
    "3d": ("Figure 3d: mean FCT normalised to optimal vs number of flows (no deadlines)", "flows",
           "mean FCT / optimal"),
    "3e": ("Figure 3e: mean FCT normalised to optimal vs mean flow size (3 flows, no deadlines)",
           "mean flow size [KB]", "mean FCT / optimal"),
    "4a": ("Figure 4a: flows at 99% application throughput by sending pattern, normalised to the first series",
           "pattern", "flows at 99% / first series"),
    "4b": ("Figure 4b: mean FCT by sending pattern (no deadlines), normalised to the first series", "pattern",
           "mean FCT / first series"),
    "9a": ("Figure 9a: application throughput vs drop probability", "drop probability", "application throughput [%]"),
    "9b": ("Figure 9b: mean FCT vs drop probability, normalised to no loss", "drop probability",
           "mean FCT / no loss"),
    "10": ("Figure 10: mean FCT with inaccurate flow information, normalised to PDQ (size)", "sizes",
           "mean FCT / PDQ (size)"),
}
_PERCENT = ("3a", "3b", "9a")


def _normalised(fig: str, data: dict[str, dict[Any, float | None]]) -> dict[str, dict[Any, float | None]]:
    """Figures 4, 9b and 10 as the paper draws them: divided by a reference series, or by the no-loss point."""
    def div(a: float | None, b: float | None) -> float | None:
        return None if a is None or not b else a / b

    if fig in ("4a", "4b", "10"):
        order = _series_order_labels(data)
        ref_label = CRITICALITIES[0][0] if fig == "10" else (order[0] if order else None)
        ref = data.get(ref_label, {}) if ref_label else {}
        return {label: {x: div(v, ref.get(x)) for x, v in xs.items()} for label, xs in data.items()}
    if fig == "9b":
        return {label: {x: div(v, xs.get(0.0)) for x, v in xs.items()} for label, xs in data.items()}
    return data


def _series_order_labels(data: dict[str, Any]) -> list[str]:
    order = ["Optimal", *(s.label for s in SCHEMES), *(label for label, _ in CRITICALITIES)]
    return [x for x in order if x in data and x != "Optimal"] + [x for x in data if x not in order]


def pdq_tables(results_dir: str | Path) -> list[tuple[str, str]]:
    """One plain-text table per figure (rows: the x values, columns: the series); the figures themselves:
    :func:`pdq_figures`."""
    from fctlab.analyze import format_table

    data = figure_data(results_dir)
    tables = []
    for fig, (title, xlabel, vlabel) in FIGURES.items():
        if fig not in data:
            continue
        d = _normalised(fig, data[fig])
        labels = (["Optimal"] if "Optimal" in d else []) + _series_order_labels(d)
        xs = sorted({x for v in d.values() for x in v}, key=lambda x: (isinstance(x, str), x))
        if fig in ("4a", "4b"):
            xs = [p for p in PATTERNS if p in xs]

        def cell(v: float | None) -> str:
            if v is None:
                return "-"
            if fig in _PERCENT:
                return f"{100 * v:.1f}"
            return f"{v:.0f}" if fig == "3c" else f"{v:.3f}"

        rows = [[str(x)] + [cell(d.get(label, {}).get(x)) for label in labels] for x in xs]
        tables.append((title, format_table([xlabel, *labels], rows, "l" + "r" * len(labels))))
    tables.extend(scale_tables(results_dir))
    dyn = dynamics_data(results_dir)
    for fig, rows_of in dyn.items():
        tables.append((DYNAMICS_TITLES[fig], _dynamics_table(fig, rows_of)))
    return tables


def pdq_figures(results_dir: str | Path) -> list[tuple[str, Path]]:
    """The paper's figures from the runs, drawn into ``results_dir/report/figures/pdq-<figure>.png`` and ``.svg``:
    application throughput and mean FCT over the optimum against the number of flows (3a, 3d) and the other
    Figure 3, 4, 9 and 10 panels that ran, Figure 8's flow-level scaling, and the dynamics of Figures 6 and 7.
    Returns (caption, PNG path) pairs, Figures 3a and 3d first."""
    root = Path(results_dir)
    data = figure_data(results_dir)
    out = []
    for fig, (title, xlabel, vlabel) in sorted(FIGURES.items(), key=lambda kv: (kv[0] not in ("3a", "3d"), kv[0])):
        if fig not in data:
            continue
        d = _normalised(fig, data[fig])
        labels = (["Optimal"] if "Optimal" in d else []) + _series_order_labels(d)
        xs = sorted({x for v in d.values() for x in v}, key=lambda x: (isinstance(x, str), x))
        if fig in ("4a", "4b"):
            xs = [p for p in PATTERNS if p in xs]
        caption = title + (" (dotted line: 99%, the paper's bar for 'all deadlines met')" if fig in _PERCENT else "")
        out.append((caption, _plot(root, fig, title, xlabel, vlabel, d, labels, xs)))
    out.extend(scale_figures(results_dir))
    for fig, rows_of in dynamics_data(results_dir).items():
        first = rows_of[0]
        row = next((r for r in rows_of if r["run"].values["seed"] == DYNAMICS_SEED
                    and r["run"].values["variant"] == first["run"].values["variant"]), first)
        out.append((DYNAMICS_TITLES[fig], _plot_dynamics(root, fig, row)))
    return out


DYNAMICS_TITLES = {
    "6": (f"Figure 6: convergence: {CONVERGENCE_FLOWS} flows of {CONVERGENCE_BYTES:,} + {CONVERGENCE_STEP:,} i B "
          "to the aggregator at t = 0, no deadlines"),
    "7": (f"Figure 7: a burst of {BURST_FLOWS} short flows ({BURST_BYTES:,} + {BURST_STEP} k B) at "
          f"{BURST_START_MS:g} ms preempting a long flow ({BURST_LONG_BYTES:,} B)"),
}


def _fmt(v: float | None, fmt: str = ".2f", scale: float = 1.0) -> str:
    return "-" if v is None else format(v * scale, fmt)


def _dynamics_table(fig: str, rows_of: list[dict[str, Any]]) -> str:
    from fctlab.analyze import format_table

    if fig == "6":
        head = ["series", "seed", "all done [ms]", "ideal [ms]", "utilization [%]", "max queue [pkts]", "drops",
                "finishing order"]
        rows = [[r["run"].values["variant"], str(r["run"].values["seed"]), _fmt(r["done_ms"]),
                 _fmt(r["ideal_ms"]), _fmt(r["utilization"], ".1f", 100), _fmt(r["max_queue_packets"], ".1f"),
                 str(r["drops"]), "-".join(str(i) for i in r["order"]) + (f" ({r['unfinished']} unfinished)"
                                                                         if r["unfinished"] else "")]
                for r in rows_of]
        return format_table(head, rows, "llrrrrrl")
    head = ["series", "seed", "burst end [ms]", "utilization in burst [%]", "queue in burst [pkts]",
            "median queue [pkts]", "short mean FCT [ms]", "long flow done [ms]", "drops"]
    rows = [[r["run"].values["variant"], str(r["run"].values["seed"]), _fmt(r["burst_end_ms"]),
             _fmt(r["utilization"], ".1f", 100),
             "-" if r["queue_range"] is None else f"{r['queue_range'][0]:.1f}-{r['queue_range'][1]:.1f}",
             _fmt(r["queue_median"], ".1f"), _fmt(r["short_mean_fct_ms"], ".3f"), _fmt(r["long_done_ms"]),
             str(r["drops"])] for r in rows_of]
    return format_table(head, rows, "llrrrrrrr")


def _plot_dynamics(root: Path, fig_name: str, row: dict[str, Any]) -> Path:
    """Figure 6 or 7 of one run as three panels over time: (a) throughput, (b) utilization (Figure 7: with each
    short flow's completion time on a second axis, at its finish), (c) the queue in packets."""
    rates = monitor_rates(row["monitor"], link_gbps=row["link_gbps"], mss_bytes=row["mss"],
                          header_bytes=row["header"])
    label = row["run"].values["variant"]
    fig = figure((6.4, 7.6))
    ax_a, ax_b, ax_c = fig.subplots(3, 1, sharex=True)
    t = rates["time_ms"]
    if fig_name == "6":
        for fid, ys in rates["flows"].items():
            ax_a.plot(t, ys, label=f"flow {fid}")
    else:
        short = [ys for fid, ys in rates["flows"].items() if fid != 0]
        if 0 in rates["flows"]:
            ax_a.plot(t, rates["flows"][0], label="long flow")
        if short:
            ax_a.plot(t, sum(short), label=f"{len(short)} short flows (total)")
    ax_a.set_ylabel("throughput [Gb/s]")
    ax_a.set_title(f"{DYNAMICS_TITLES[fig_name]}\n{label}, seed {row['run'].values['seed']}; rates over "
                   f"{SMOOTH_US / 1000:g} ms", fontsize=8)
    ax_a.legend(fontsize=7, ncol=2)
    ax_b.plot(t, 100 * rates["utilization"], color="C0", label="utilization")
    ax_b.set_ylabel("utilization [%]\n(wire bytes, x 1500/1460)", fontsize=8)
    ax_b.set_ylim(0, 110)
    if fig_name == "7":
        f = row["flows"]
        short = f[(f["start_ns"] >= BURST_START_MS * 1e6 - 1e-6) & f["finished"]]
        tw = ax_b.twinx()
        tw.scatter(short["finish_ns"] / 1e6, short["fct_ns"] / 1e6, s=8, color="C3", label="short flow FCT")
        tw.set_ylabel("short flow FCT [ms]", fontsize=8)
        tw.set_ylim(bottom=0)
        tw.legend(fontsize=7, loc="lower right")
    ax_c.plot(rates["queue_ms"], rates["queue_packets"], color="C2")
    ax_c.set_ylabel("queue [packets]")
    ax_c.set_xlabel("time [ms]")
    ax_c.set_ylim(bottom=0)
    return save_figure(fig, root, f"pdq-{fig_name}")


def _plot(root: Path, fig_name: str, title: str, xlabel: str, vlabel: str, d: dict[str, dict[Any, float | None]],
          labels: list[str], xs: list[Any]) -> Path:
    from fctlab.plot import value_axis

    fig = figure((7.6, 4.0))
    ax = fig.add_subplot()
    scale = 100.0 if fig_name in _PERCENT else 1.0
    categorical = any(isinstance(x, str) for x in xs)
    width = 0.8 / max(1, len(labels))
    values: list[Any] = []
    for i, label in enumerate(labels):
        ys = [d.get(label, {}).get(x) for x in xs]
        ys = [float("nan") if y is None else y * scale for y in ys]
        values.extend(ys)
        if categorical:
            ax.bar([k + i * width for k in range(len(xs))], ys, width=width, label=label)
        else:
            ax.plot(xs, ys, marker="osD^v<>PX*"[i % 10], markersize=5, label=label,
                    linestyle="--" if label == "Optimal" else "-")
    if categorical:
        ax.set_xticks([k + width * (len(labels) - 1) / 2 for k in range(len(xs))], [str(x) for x in xs],
                      rotation=20, fontsize=8)
    if fig_name in _PERCENT:
        ax.axhline(99.0, color="0.3", linewidth=0.8, linestyle=":")
        ax.set_ylim(0, 105)
    elif categorical:
        value_axis(ax, values, wide=float("inf"))  # bars: linear from zero
    else:
        value_axis(ax, values, floor=1.0 if all(v >= 1.0 for v in values if v == v) else 0.0)
    if not categorical and len(xs) <= 12:
        ax.set_xticks(xs, [f"{x:g}" for x in xs])
    ax.set_xlabel(xlabel)
    ax.set_ylabel(vlabel)
    ax.set_title(title, fontsize=9)
    ax.grid(alpha=0.3)
    fig.legend(*ax.get_legend_handles_labels(), loc="outside right upper", fontsize=7, frameon=False)
    return save_figure(fig, root, f"pdq-{fig_name}")


# --------------------------------------------------------------------------------------------------------------
# The paper's statements


#: Why Figure 3d's and Figure 7's numbers differ (docs/reproduce-pdq.md, "Known gaps").
HANDOVER = ("each port projects the hand-over between short flows from its own view and the least grant on the "
            "path wins, so the bottleneck idles at some hand-overs and carries probes; the paper does not specify "
            "how Early Start projects the finishing flows' remaining use")
START = ("a query's later flows wait behind the queue of Early Start's overlaps and pay the hand-overs; the paper "
         "does not specify how a port counts flows accepted but not yet sending")


def _fcts(d: dict[Any, float | None]) -> str:
    return ", ".join(f"{x}: {v:.3f} ms" for x, v in d.items() if v is not None)


def pdq_claims(results_dir: str | Path) -> list[Claim]:
    """The paper's statements (section 5) with fctlab's numbers from the runs in ``results_dir``."""
    data = figure_data(results_dir)
    claims: list[Claim] = []

    def series(fig: str, label: str) -> dict[Any, float | None]:
        return data.get(fig, {}).get(label, {})

    # Figure 3c: > 3x D3's flows at 99% application throughput, the ratio growing with the mean deadline
    full, d3 = series("3c", "PDQ(Full)"), series("3c", "D3")
    xs = sorted(x for x in full if d3.get(x) and full[x] is not None)
    ratios = [full[x] / d3[x] for x in xs]  # type: ignore[operator]
    note = ("; ".join(f"{x:g} ms: {full[x]:.0f} vs {d3[x]:.0f} flows" for x in xs) if xs  # type: ignore[str-format]
            else "no runs of PDQ(Full) and D3")
    claims.append(Claim(
        id="fig3c-vs-d3-3x", statement="PDQ supports more than 3 times the concurrent flows of D3 at 99% "
        "application throughput (Fig. 3c)", source=f"{SRC}.2.1, Fig. 3c", paper_value=3.0, value=ratios or None,
        unit="x", how="per mean deadline: PDQ(Full)'s / D3's most flows at 99% application throughput (binary "
        "search), every deadline run", check=above(3.0, 0.0),
        mechanism="about 1.5% of the deadlines drawn at a 60 ms mean fall within a request round trip of the "
                  "flow's ideal FCT, where no scheme that asks before it sends can meet them, which bounds PDQ's "
                  "count with more seeds; the paper does not say how it floors drawn deadlines",
        cause="paper_omission", note=note))
    claims.append(Claim(
        id="fig3c-ratio-grows", statement="PDQ's advantage over D3 in flows at 99% application throughput grows "
        "with the mean deadline (Fig. 3c)", source=f"{SRC}.2.1, Fig. 3c", paper_value="grows with the deadline",
        value=ratios[::-1] if len(ratios) > 1 else None, unit="x",
        how="PDQ(Full)'s / D3's flows at 99%, from the longest mean deadline to the shortest: each strictly larger "
            "than the next (a tie breaks it)",
        check=strict_order([f"{x:g} ms" for x in xs[::-1]] if len(xs) > 1 else ["longest", "shortest"], 0.0),
        cause="unexplained", note=note))
    # Figure 3d: close to optimal, the largest gap with one flow
    d = series("3d", "PDQ(Full)")
    pts = sorted(x for x, v in d.items() if v is not None)
    gaps = {x: 100 * (d[x] - 1) for x in pts}  # type: ignore[operator]
    note = "; ".join(f"{x} flows: {g:+.1f}%" for x, g in gaps.items()) or "no runs of PDQ(Full)"
    claims.append(Claim(
        id="fig3d-near-optimal", statement="PDQ's mean FCT is close to the optimum (Fig. 3d)",
        source=f"{SRC}.2.2, Fig. 3d", paper_value="within a few percent", value=max(gaps.values(), default=None),
        unit="%", how="the largest over the flow counts of PDQ(Full)'s mean FCT / the SRPT optimum's - 1; \"a few "
        "percent\" read as under 5%", check=below(5.0, 0.0), mechanism=HANDOVER + "; " + START,
        cause="paper_omission", note=note))
    one = gaps.get(1)
    rest = [g for x, g in gaps.items() if x != 1]
    claims.append(Claim(
        id="fig3d-largest-gap-one-flow", statement="The largest gap between PDQ and the optimum is with one flow "
        "(flow initialisation) (Fig. 3d)", source=f"{SRC}.2.2, Fig. 3d", paper_value="largest at one flow",
        value=None if one is None or not rest else [one, max(rest)], unit="%",
        how="[one flow, the largest at any other flow count]: PDQ(Full)'s mean FCT / the optimum's - 1; the first "
            "must exceed the second by more than 0.5 points", check=strict_order(["one flow", "any other count"], 0.5),
        mechanism=START, cause="paper_omission", note=note))
    # Figure 3c: the variants in order, at every deadline, strictly
    names = ["PDQ(Full)", "PDQ(ES+ET)", "PDQ(ES)", "PDQ(Basic)"]
    cols = [series("3c", o) for o in names]
    common = sorted(set.intersection(*(set(k for k, v in c.items() if v is not None) for c in cols))) if all(cols) \
        else []
    claims.append(Claim(
        id="fig3c-variant-order", statement="PDQ(Full) > PDQ(ES+ET) > PDQ(ES) > PDQ(Basic) in flows at 99% "
        "application throughput (Fig. 3c)", source=f"{SRC}.2.1, Fig. 3c", paper_value="in this order",
        value=[[c[x] for c in cols] for x in common] or None, unit="flows",
        how="per mean deadline: the four variants' most flows at 99% application throughput; each strictly more "
            "than the next at every deadline (a tie breaks the order)", check=strict_order(names, 0.0),
        mechanism="with the same flows the variants often reach the same count (the binary search's answer is a "
                  "whole number of flows); why Suppressed Probing adds no flows here is not known", cause="unexplained",
        note="; ".join(f"{x:g} ms: " + " / ".join(f"{c[x]:.0f}" for c in cols)  # type: ignore[str-format]
                       for x in common) or "no runs of the four PDQ variants"))
    # Figure 3a: RCP and TCP trail PDQ
    a = data.get("3a", {})
    pdq_a = a.get("PDQ(Full)", {})
    trail, tnote = [], []
    for other in ("RCP", "TCP"):
        o = a.get(other, {})
        both = [x for x in pdq_a if pdq_a.get(x) is not None and o.get(x) is not None]
        if both:
            x = max(both)
            trail.append(100 * (pdq_a[x] - o[x]))  # type: ignore[operator]
            tnote.append(f"{other} at {x} flows: {trail[-1]:+.1f} points")
    claims.append(Claim(
        id="fig3a-rcp-tcp-trail", statement="RCP and TCP trail PDQ in application throughput as the number of "
        "flows grows (Fig. 3a)", source=f"{SRC}.2.1, Fig. 3a", paper_value="trail", value=trail or None,
        unit="points", how="[RCP, TCP] (those run): PDQ(Full)'s application throughput minus theirs at the most "
        "flows, in percentage points; each must exceed 5 points", check=above(0.0, 5.0), cause="unexplained",
        note="; ".join(tnote) or "no runs of PDQ(Full) with RCP or TCP"))
    # Figure 4: PDQ leads across the patterns, from the absolute FCTs (no deadlines)
    fct = data.get("4b", {})
    pdq4 = fct.get("PDQ(Full)", {})
    others = [lab for lab in ("D3", "RCP", "TCP") if lab in fct]
    lead = []
    for pat, v in pdq4.items():
        rivals = [fct[lab].get(pat) for lab in others if fct[lab].get(pat) is not None]
        if v and rivals:
            lead.append(100 * (min(rivals) / v - 1))  # type: ignore[operator]
    claims.append(Claim(
        id="fig4-leads-patterns", statement="PDQ outperforms D3, RCP and TCP across the sending patterns (Fig. 4b)",
        source=f"{SRC}.3, Fig. 4", paper_value="lowest FCT on every pattern", value=lead or None, unit="%",
        how=f"per pattern: the best of {', '.join(others) or 'D3, RCP, TCP'}'s mean FCT / PDQ(Full)'s - 1 (no "
            "deadlines); must be above 0 on every pattern", check=above(0.0, 0.0), cause="unexplained",
        note="PDQ(Full): " + (_fcts(pdq4) or "no runs")))
    worst = "Staggered Prob(0.7)"
    rest4 = {p: v for p, v in pdq4.items() if p != worst and v is not None}
    claims.append(Claim(
        id="fig4-staggered-worst", statement="Staggered Prob(0.7) is PDQ's worst sending pattern (Fig. 4)",
        source=f"{SRC}.3, Fig. 4", paper_value=worst,
        value=None if pdq4.get(worst) is None or not rest4 else [pdq4[worst], max(rest4.values())], unit="ms",
        how="[Staggered Prob(0.7), the worst other pattern]: PDQ(Full)'s absolute mean FCT (no deadlines, the "
            "same flow sizes on every pattern); the first must be strictly larger",
        check=strict_order([worst, "worst other pattern"], 0.0),
        mechanism="the paper ties it to RTT variance (non-local flows' RTTs 3-5x the local ones); on the recipe's "
                  "tree the patterns that cross the root carry more hops and may be slower in absolute terms; the "
                  "paper does not say which quantity ranks the patterns", cause="paper_omission",
        note="PDQ(Full) mean FCT: " + (_fcts(pdq4) or "no runs") + "; flows at 99%: "
        + (", ".join(f"{p}: {v:.0f}" for p, v in data.get("4a", {}).get("PDQ(Full)", {}).items() if v is not None)
           or "no runs")))
    # Figures 6 and 7: PDQ's dynamics, from PDQ(Full)'s runs
    dyn = dynamics_data(results_dir)

    def full_rows(fig: str) -> list[dict[str, Any]]:
        return [r for r in dyn.get(fig, []) if r["run"].values["variant"] == "PDQ(Full)"]

    rows6 = full_rows("6")
    done = [r["done_ms"] for r in rows6]
    if rows6:
        r = rows6[0]
        note = (f"ideal {r['ideal_ms']:.2f} ms (every byte with its headers at line rate); finishing order "
                f"{'-'.join(map(str, r['order']))} ({'most critical first' if r['in_order'] else 'not by criticality'}"
                f"); max queue {r['max_queue_packets']:.1f} packets; drops {r['drops']}; "
                f"utilization until the last finish {_fmt(r['utilization'], '.1f', 100)}%")
        if r["unfinished"]:
            note += f"; {r['unfinished']} flow(s) unfinished"
    else:
        note = "no run of PDQ(Full) for Figure 6"
    claims.append(Claim(
        id="fig6-seamless-42ms", statement="PDQ switches flows seamlessly: five 1 MB flows done in about 42 ms "
        "(Fig. 6)", source=f"{SRC}.4, Fig. 6", paper_value=42.0,
        value=None if not done or None in done else sum(done) / len(done), unit="ms",
        how="the last of the five flows' finish time under PDQ(Full), the flows starting together at t = 0; "
            "\"about\" read as within 1 ms", check=near(42.0, 1.0), cause="unexplained", note=note))
    rows7 = full_rows("7")
    util = [r["utilization"] for r in rows7]
    qmax = [r["queue_range"][1] for r in rows7 if r["queue_range"]]
    if rows7:
        r = rows7[0]
        q = r["queue_range"]
        note = (f"queue {q[0]:.1f}-{q[1]:.1f} packets (median {r['queue_median']:.1f}) from {BURST_START_MS:g} ms to "
                f"the last short flow's finish at {r['burst_end_ms']:.2f} ms" if q else "the short flows did not all "
                "finish") + f"; drops {r['drops']}"
    else:
        note = "no run of PDQ(Full) for Figure 7"
    claims.append(Claim(
        id="fig7-utilization", statement="During a burst of 50 short flows the bottleneck's average utilisation "
        "over the preemption period is 91.7% (Fig. 7b)", source=f"{SRC}.4, Fig. 7", paper_value=91.7,
        value=None if not util or None in util else 100 * sum(util) / len(util), unit="%",
        how=(f"the paper's definition: the average utilisation of the aggregator's link over the preemption period, "
             f"from the burst ({BURST_START_MS:g} ms) to the last short flow's finish; wire bytes (payload x "
             f"1500/1460) over the 1 Gbps capacity, PDQ(Full)"), check=near(91.7, 3.0), mechanism=HANDOVER,
        cause="paper_omission", note=note))
    claims.append(Claim(
        id="fig7-queue", statement="During the burst PDQ keeps only 5 to 10 packets in the bottleneck queue (Fig. "
        "7c)", source=f"{SRC}.4, Fig. 7", paper_value=[5.0, 10.0], value=qmax or None, unit="packets",
        how="the largest queue of the aggregator's port in the 100 us samples from the burst to the last short "
            "flow's finish, in 1,500 B packets; at most the paper's 10 with 2 packets of tolerance",
        check=in_range(0.0, 10.0, 2.0), cause="unexplained", note=note))
    # Figure 8: scale, topologies, the flow level against the packet level
    claims.extend(scale_claims(results_dir))
    return claims


RECIPE = Recipe(
    name="pdq",
    paper="Hong, Caesar, Godfrey, \"Finishing Flows Quickly with Preemptive Scheduling\", SIGCOMM 2012",
    summary="PDQ (SIGCOMM 2012) section 5: PDQ and its variants, D3, RCP, TCP on query aggregation and sending "
            "patterns; application throughput, FCT against the optimum, loss, inaccurate sizes",
    sweep=pdq_sweep,
    claims=pdq_claims,
    tables=pdq_tables,
    figures=pdq_figures,
    generic_figures=False,
    phases=pdq_phases,
    needs_out_dir=True,
)
