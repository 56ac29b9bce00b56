"""The Homa paper's simulations as a recipe: ``fctlab reproduce homa --scale tiny|small|paper``.

Montazeri, Li, Alizadeh, Ousterhout, "Homa: A Receiver-Driven Low-Latency Transport Protocol Using Network
Priorities" (SIGCOMM 2018), section 5.2: the 99th-percentile slowdown of messages by size at 80% load on the
workloads W1-W5, Homa beside pFabric, PIAS (and pHost and NDP, which fctlab does not have).

Setup (what the paper gives, and what fctlab chose where it is silent or where fctlab differs):

* the paper's fabric: 144 hosts in 9 racks of 16, 4 spine switches, 10 Gbps host links, 40 Gbps core links,
  8 priority levels per port: ``leaf_spine`` with its defaults for the shape and rates. The paper's switches cut
  through and its round trip is about 7.8 us (RTTbytes 9.7 KB); fctlab's switches store and forward, and host
  links of 1 us and core links of 0.2 us give about 7.9 us across a spine for a full packet and a control packet
  back (the fabric of the engine's Homa tests). Homa's RTTbytes is computed by the engine from this fabric
  (``scheme.homa_rtt_bytes = 0``), 7 segments of 1460 B;
* 1460 B payload and 40 B headers per packet (the engine's defaults); a message is one flow; the slowdown of a
  message is its completion time over its completion time alone in the fabric (the engine's ideal FCT);
* packet spraying (``routing.mode = "spray"``): the paper's simulations assume a core without persistent hot
  spots, which per-packet spraying over the 4 spines gives; every series is sprayed, so the core balances the
  same way for all;
* buffers: 2 MB per switch port (``switch.buffer_bytes``) for Homa, PIAS and DCTCP. The paper's simulator
  assumed buffers large enough not to drop (Homa bounds its queues by overcommitment x RTTbytes, except for the
  blind unscheduled bursts); 2 MB is ample on this fabric and gives the window-based schemes the same room;
* pFabric with the engine's ``pfabric_ns2`` preset (the absolute values; ``native`` scales them with the fabric):
  the pFabric ns-2 scripts as the Homa authors ran them for their comparison (36 KB rank queues, initial window 12, window capped at 15, fixed RTO of 45 us, about six round
  trips of this fabric). pFabric's design is small buffers that drop the least urgent packet, so it keeps its
  own; giving it 2 MB would only add queueing that its scheduling already orders;
* PIAS with 8 queues and demotion thresholds derived by the PIAS paper's method for each workload and load
  (:func:`fctlab.thresholds.derive`, as the PIAS and QCLIMB recipes do), DCTCP as the window-based baseline with
  one queue; both mark ECN on the port's occupancy at 22,500 B (15 packets, the DCTCP baseline of the pFabric
  ns-2 scripts, whose fabric's round trip is close to this one's) and keep the engine's TCP timers;
* Homa as the authors' simulator (HomaSimulation, ``homaTransportConfig.ini``) runs it, series "Homa": the tail
  boost (``scheme.homa_tail_boost``: the last RTTbytes of a scheduled message at an unscheduled level), per-packet
  unscheduled levels from the bytes a message has left (``scheme.homa_unscheduled_priority = "remaining"``, the
  configuration's ``STATIC_CBF_GRADUATED``), and the configuration's scheduled levels per workload, which are also
  its overcommitment (:data:`AUTHORS_SCHED_LEVELS`: 1, 3, 4, 7, 7 of the 8 for W1-W5); cutoffs from the run's
  messages, resend timeout 10 ms. fctlab's RTTbytes (7 segments, 10,220 B of payload) stands for the
  configuration's 10,000 B on the wire (9,328 B of payload unscheduled). Beside it, series "Homa (engine
  defaults)": the paper's text as the engine has it by default (one unscheduled level per message from its
  length, no tail boost, levels in proportion to the unscheduled bytes, overcommitment = the scheduled levels);
  the two differ only in these rules, so they measure them;
* the workloads W1-W5 (``homa_w1_fb_memcached_etc`` ... ``homa_w5_dctcp_websearch``), all-to-all (each
  message from a random host to another random host), Poisson arrivals. The load counts the bytes on the wire
  as the authors' ``sizeDistributions/adjustLoadFac.py`` counts them, for each scheme (:func:`wire_bytes`): Homa's
  packets with Ethernet's framing and an 84 B grant per scheduled packet, and for pFabric (and here PIAS and
  DCTCP) 1,500 B per 1,460 B of payload and a 40 B ACK per packet. The payload load of a run is 0.8 times the
  mean payload over the mean wire bytes of the workload's messages (:func:`wire_factor`; the authors'
  configuration scales its load the same way, by 0.657, 0.796, 0.887, 0.898, 0.898 for Homa on W1-W5), so W1
  runs at a payload load of 0.52 for Homa and 0.55 for the others;
* run length by simulated time: each run has as many messages as arrive in :attr:`HomaScale.span_ms` at its
  offered rate (``small``: 2, 3, 20, 100 and 400 ms for W1-W5); the authors ran 0.75-10.5 s of arrivals. The
  report's run-length table gives, per run, the share of the largest decile's measured messages that finished
  after the last arrival, while the network drained;
* a warm-up of 10% of the messages and a cool-down of the messages that arrive in the last
  ``cool_x / (1 - load)`` mean ideal FCTs of the workload's largest size decile (:meth:`HomaScale.cooldown`;
  ``cool_x`` = 3: 15 of them at 0.8, 239 ms of W5's 400 ms; at least 10% of the messages), both left out of the
  statistics: the cool-down keeps the fabric loaded while the measured messages of the top decile finish;
* the sustainable load (the paper's "Homa can operate at higher loads"): Homa, pFabric and PIAS on W4 at wire
  loads 0.8, 0.85, 0.9 and 0.95 (:attr:`HomaScale.sustain_loads`), arrivals over 60 ms at ``small``, each run
  stopped at the end of its arrivals and, separately, at half of them; a scheme keeps up with a load when its
  backlog (bytes started and not delivered) grows between the two by less than 5% of the bytes offered
  meanwhile (:func:`keep_up`);
* "Homa (no tail boost)": the authors' configuration without the tail boost, on W4 and W5 at 0.8, where Homa's
  mid-size messages trail pFabric: it measures what the tail boost does there;
* message-size bins: the deciles of the workload's size distribution (:func:`size_bins`; a bin (lo, hi]; equal
  deciles merged, so W1, whose sizes are few and small, has fewer bins), as the paper's figures scale their x
  axes by the size CDF; each bin's median and 99th-percentile slowdown over the messages that finished,
  pooled over seeds;
* "short messages" in the statements are those of at most :data:`SHORT_BYTES` (the paper's RTTbytes): Homa
  sends them whole without grants.

Not run: pHost and NDP (fctlab has neither); Homa's incast optimisation (paper §3.6; not built, see
:data:`NOT_IN_FCTLAB`); Homa with estimated sizes (``scheme.homa_sizes = "estimate"``)
needs an ``estimate_bytes`` per message, which fctlab makes only for application traces with a trained
predictor (:mod:`fctlab.predict`), not for messages drawn from a size CDF such as W1-W5; the QCLIMB simulation
recipe runs it on PageRank (:mod:`fctlab.recipes.qclimb`).

The series are one constant, :data:`SCHEMES`; a series whose scheme the engine does not have is left out, with
a note. Scales: ``tiny`` (a smoke test, a fixed few thousand messages), ``small`` (one seed, runs sized by
simulated time; about 35 minutes on 2 cores, see docs/reproduce-homa.md), ``paper`` (3 seeds, five times the
simulated time).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
import functools
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fctlab.claims import Claim, above, in_range, unmeasured
from fctlab.recipes.common import (
    Points, Recipe, RunRow, available, check_scale, figure, fmt, median, order, record, save_figure,
)
from fctlab.recipes.common import SCALES  # noqa: F401  (this module's name at its old path)
from fctlab.recipes.common import load_runs as recipe_runs

SRC = "Montazeri et al., Homa, SIGCOMM 2018, section 5.2"


@dataclass(frozen=True)
class Series:
    """One line of a figure: a scheme, with its own ``[scheme]`` keys and switch queues. ``wire``: how the load
    counts its bytes on the wire (:func:`wire_bytes`); ``authors_levels``: the scheduled levels and
    overcommitment of the authors' configuration for each workload (:data:`AUTHORS_SCHED_LEVELS`)."""

    label: str
    scheme: str
    keys: tuple[tuple[str, Any], ...] = ()
    queues: int = 8
    wire: str = "tcp"
    authors_levels: bool = False
    #: the workloads this series runs on at :data:`LOAD` (None: all); it is left out of the load sweeps
    only: tuple[str, ...] | None = None


#: The series, Homa first: Homa as the authors' simulator runs it (tail boost, per-packet unscheduled levels from
#: the remaining sizes, the configuration's scheduled levels per workload), then the engine's defaults (the
#: paper's text: per-message levels, no tail boost, levels and overcommitment from the unscheduled share), then
#: the authors' configuration without its tail boost on W4 and W5 (where the mid-size messages trail pFabric: it
#: measures what the tail boost does there).
SCHEMES: tuple[Series, ...] = (
    Series("Homa", "homa", keys=(("homa_tail_boost", True), ("homa_unscheduled_priority", "remaining")),
           wire="homa", authors_levels=True),
    Series("Homa (engine defaults)", "homa", wire="homa"),
    Series("Homa (no tail boost)", "homa", keys=(("homa_tail_boost", False), ("homa_unscheduled_priority", "remaining")),
           wire="homa", authors_levels=True, only=("W4", "W5")),
    Series("pFabric", "pfabric", (("preset", "pfabric_ns2"),)),
    Series("PIAS", "pias"),
    Series("DCTCP", "dctcp", queues=1),
)
#: HomaSimulation's ``homaTransportConfig.ini``, per workload: scheduled levels (``adaptiveSchedPrioLevels``) of
#: the 8, which is also the number of senders a receiver grants to (``numSendersToKeepGranted``); the other levels
#: are unscheduled (``prioResolverPrioLevels = prioLevels - adaptiveSchedPrioLevels``).
AUTHORS_SCHED_LEVELS: dict[str, int] = {"W1": 1, "W2": 3, "W3": 4, "W4": 7, "W5": 7}
#: The workloads: short name -> shipped CDF.
WORKLOADS: dict[str, str] = {
    "W1": "homa_w1_fb_memcached_etc",
    "W2": "homa_w2_google_search_rpc",
    "W3": "homa_w3_google_all_rpc",
    "W4": "homa_w4_fb_hadoop",
    "W5": "homa_w5_dctcp_websearch",
}
#: The load of the per-size figures.
LOAD = 0.8
#: Every host link's and every core link's propagation delay (ns): ~7.9 us round trip across a spine.
HOST_LINK_DELAY_NS = 1000
CORE_LINK_DELAY_NS = 200
BUFFER_BYTES = 2_000_000
ECN_THRESHOLD_BYTES = 22_500
#: Short messages: at most the paper's RTTbytes (sent wholly unscheduled by Homa).
SHORT_BYTES = 9_700
#: Written into the results folder: which scale and series made it.
RECIPE_FILE = "homa-recipe.json"


@dataclass(frozen=True)
class HomaScale:
    seeds: tuple[int, ...]
    #: the workload of the slowdown-against-load figure, and its loads besides :data:`LOAD`
    sweep_workload: str
    sweep_loads: tuple[float, ...]
    #: messages per run, per workload (warm-up and cool-down included), when the run is not sized by time
    flows: dict[str, int] = field(default_factory=dict)
    #: simulated time the arrivals of a run span, per workload, in ms (the run's messages are as many as arrive
    #: in that time at the run's offered rate); overrides ``flows``
    span_ms: dict[str, float] = field(default_factory=dict)
    workloads: tuple[str, ...] = tuple(WORKLOADS)
    #: Cool-down by simulated time (0: the last tenth of the messages). The messages that arrive in the last
    #: ``cool_x / (1 - load)`` x the mean ideal FCT of the workload's largest size decile (at least a tenth of
    #: them) keep loading the fabric while the measured ones finish, and are left out of the statistics
    #: (:meth:`cooldown`): under processor sharing at load rho a message takes about 1 / (1 - rho) times its ideal
    #: FCT, so a measured message of the top decile that arrives last still finishes under load
    cool_x: float = 0.0
    #: The sustainable-load sweep (the paper's "highest load a scheme keeps up with"): its workload, loads, span
    #: of arrivals (ms) and series labels; each run stops at the end of its arrivals (``run.time_limit_ms``), and
    #: :func:`keep_up` reads whether the backlog grew over its measured window. Empty loads: not run
    sustain_workload: str = "W4"
    sustain_loads: tuple[float, ...] = ()
    sustain_span_ms: float = 0.0
    sustain_series: tuple[str, ...] = ("Homa", "pFabric", "PIAS")

    def cooldown(self, workload: str, payload_load: float, load: float, n: int) -> int:
        """Cool-down messages of a run of ``n`` messages of ``workload`` at nominal ``load`` (``payload_load`` in
        payload bytes): those arriving in the last ``cool_x / (1 - load)`` top-decile ideal FCTs, at least n // 10
        and at most 60% of the messages."""
        if self.cool_x <= 0 or load >= 1:
            return n // 10
        rate = payload_load * HOST_LINK_BPS * HOSTS / (8 * _mean_bytes(workload))  # messages per second
        cool_s = self.cool_x / (1.0 - load) * top_ideal_s(workload)
        return min(max(n // 10, math.ceil(rate * cool_s)), int(0.6 * n))

    def messages(self, workload: str, payload_load: float) -> int:
        """Messages of a run of ``workload`` at ``payload_load`` (the load in payload bytes): the arrivals of
        ``span_ms`` at that rate, or the fixed count."""
        if workload not in self.span_ms:
            return self.flows[workload]
        rate = payload_load * HOST_LINK_BPS * HOSTS / (8 * _mean_bytes(workload))  # messages per second
        return math.ceil(rate * self.span_ms[workload] / 1e3)


def _mean_bytes(workload: str) -> float:
    from fctlab.workloads import load_cdf

    return float(load_cdf(WORKLOADS[workload]).mean_bytes)


@functools.lru_cache(maxsize=None)
def top_ideal_s(workload: str) -> float:
    """The mean ideal FCT (s) of ``workload``'s largest size decile (above its 90th percentile) on a host link:
    wire bytes (1,500 B per 1,460 B of payload) at :data:`HOST_LINK_BPS`, from 200,000 evenly spaced quantiles of
    its size distribution (the round trip, a few us, is left out: it matters only for W1-W3, whose top decile
    is small)."""
    import numpy as np

    from fctlab.workloads import load_cdf

    n = 200_000
    sizes = load_cdf(WORKLOADS[workload]).quantile((np.arange(n) + 0.5) / n)
    top = sizes[sizes > size_bins(workload)[-1][0]]
    return float(np.mean(top) * 1500 / 1460 * 8 / HOST_LINK_BPS)


HOMA_SCALES = {
    "tiny": HomaScale(seeds=(1,), flows={"W1": 3000, "W2": 3000, "W3": 2000, "W4": 600, "W5": 200},
                      sweep_workload="W4", sweep_loads=(0.5,), sustain_loads=(0.8,), sustain_span_ms=4.0),
    "small": HomaScale(seeds=(1,), span_ms={"W1": 2.0, "W2": 3.0, "W3": 20.0, "W4": 100.0, "W5": 400.0},
                       sweep_workload="W4", sweep_loads=(0.5,), cool_x=3.0,
                       sustain_loads=(0.8, 0.85, 0.9, 0.95), sustain_span_ms=60.0),
    "paper": HomaScale(seeds=(1, 2, 3), span_ms={"W1": 10.0, "W2": 15.0, "W3": 100.0, "W4": 500.0, "W5": 2000.0},
                       sweep_workload="W4", sweep_loads=(0.5, 0.6, 0.7), cool_x=3.0,
                       sustain_loads=(0.8, 0.85, 0.9, 0.95), sustain_span_ms=100.0),
}
#: the paper's fabric: hosts and host link rate (for sizing runs by time)
HOSTS = 144
HOST_LINK_BPS = 10e9


def wire_bytes(sizes: Any, kind: str) -> Any:
    """Bytes on the wire for messages of ``sizes`` bytes, as the Homa authors count them to set a run's load
    (HomaSimulation ``sizeDistributions/adjustLoadFac.py``, with grants or ACKs). ``kind = "homa"``: the first
    9,328 B unscheduled in packets of 1,442 B of payload, the rest scheduled in packets of 1,456 B, every full
    packet 1,538 B on the wire (1,500 B and Ethernet's preamble, header, CRC and gap), a partial one its payload
    plus the same overhead, and an 84 B grant (the smallest Ethernet frame with its gap and preamble) per
    scheduled packet. ``kind = "tcp"`` (their pFabric accounting, used here for pFabric, PIAS and DCTCP): packets of
    1,460 B payload and 1,500 B, a partial one its payload plus 40 B, and a 40 B ACK per packet."""
    import numpy as np

    x = np.asarray(sizes, dtype=np.int64)

    def packets(b: Any, payload: int, full: int) -> tuple[Any, Any]:
        n, r = b // payload, b % payload
        return n * full + np.where(r > 0, r + (full - payload), 0), n + (r > 0)

    if kind == "homa":
        u = np.minimum(x, 9_328)
        wire, _ = packets(u, 1_442, 1_538)
        sched, n = packets(x - u, 1_456, 1_538)
        return wire + sched + 84 * n
    if kind == "tcp":
        wire, n = packets(x, 1_460, 1_500)
        return wire + 40 * n
    raise ValueError(f"wire_bytes: kind must be homa or tcp (got {kind!r})")


@functools.lru_cache(maxsize=None)
def wire_factor(workload: str, kind: str) -> float:
    """Mean payload over mean wire bytes (:func:`wire_bytes`) of the messages the recipe draws for ``workload``,
    from 200,000 evenly spaced quantiles of its size distribution: a load of rho on the wire is a payload load of
    rho times this. The authors' own factors (their configuration's ``loadFactor = $rlf * f`` for Homa) are
    0.657, 0.796, 0.887, 0.898 and 0.898 for W1-W5; these distributions give 0.653, 0.793, 0.887, 0.898, 0.898."""
    import numpy as np

    from fctlab.workloads import load_cdf

    n = 200_000
    sizes = load_cdf(WORKLOADS[workload]).quantile((np.arange(n) + 0.5) / n)
    return float(np.mean(sizes) / np.mean(wire_bytes(sizes, kind)))


def homa_base() -> dict[str, Any]:
    """The paper's fabric as an experiment dict (without scheme and workload)."""
    return {
        "name": "reproduce-homa",
        "topology": {"kind": "leaf_spine", "leaves": 9, "hosts_per_leaf": 16, "spines": 4, "host_link_gbps": 10,
                     "core_link_gbps": 40, "host_link_delay_ns": HOST_LINK_DELAY_NS,
                     "core_link_delay_ns": CORE_LINK_DELAY_NS},
        "switch": {"queues": 8},
        "routing": {"mode": "spray"},
    }


def _raw(series: Series, workload: str, load: float, sc: HomaScale, seed: int, sustain: bool = False) -> dict[str, Any]:
    raw = homa_base()
    raw["label"] = series.label
    raw["seed"] = int(seed)
    raw["scheme"] = {"name": series.scheme, **dict(series.keys)}
    if series.authors_levels:
        sched = AUTHORS_SCHED_LEVELS[workload]
        raw["scheme"].update({"homa_unscheduled_levels": series.queues - sched, "homa_overcommit": sched})
    raw["switch"]["queues"] = series.queues
    if series.scheme != "pfabric":
        raw["switch"]["buffer_bytes"] = BUFFER_BYTES
    if series.scheme in ("pias", "dctcp"):
        raw["switch"].update({"ecn": "port", "ecn_threshold_bytes": ECN_THRESHOLD_BYTES})
    if series.scheme == "pias":
        from fctlab import thresholds

        raw["scheme"]["thresholds_bytes"] = thresholds.select(WORKLOADS[workload], load, series.queues, "derived")
    # the load counts wire bytes as the authors count them, per scheme: the payload load is smaller
    payload_load = round(float(load) * wire_factor(workload, series.wire), 6)
    if sustain:
        # the sustainable-load sweep: arrivals over sustain_span_ms, and the run stops when they end (a scheme
        # that does not keep up would otherwise spend its time draining a backlog that says nothing more)
        n = math.ceil(payload_load * HOST_LINK_BPS * HOSTS / (8 * _mean_bytes(workload)) * sc.sustain_span_ms / 1e3)
        raw["run"] = {"time_limit_ms": float(sc.sustain_span_ms)}
        cool = n // 10
    else:
        n = sc.messages(workload, payload_load)
        cool = sc.cooldown(workload, payload_load, load, n)
    raw["workload"] = {"pattern": "all_to_all", "cdf": WORKLOADS[workload], "load": payload_load,
                       "load_bytes": "payload", "flows": n, "warmup_flows": n // 10, "cooldown_flows": cool}
    return raw


NOT_IN_FCTLAB = ("pHost and NDP, the paper's other baselines, are not in fctlab: not run",
                 "Homa's incast optimisation (paper section 3.6) is not built: fctlab's messages are one-way, with no "
                 "RPC to mark, and the authors' simulator does not have it either (its unscheduled-bytes allocator "
                 "keeps one fixed value per receiver); no incast case is run",
                 "Homa with estimated sizes not run: W1-W5 are drawn from size CDFs, and fctlab makes estimate_bytes "
                 "only for application traces with a trained predictor (fctlab.predict); reproduce qclimb-sim runs "
                 "it on PageRank")


def homa_sweep(scale: str = "small", out_dir: str | Path | None = None, schemes: Sequence[Series] | None = None) -> Any:
    """Every run of the recipe as one sweep: each workload at :data:`LOAD`, and the sweep workload at the scale's
    other loads, for every series and seed. Values of a point: workload (W1..W5), load, variant (the series
    label), seed. With ``out_dir``, records the scale and series there."""
    sc: HomaScale = check_scale(scale, HOMA_SCALES)
    series, notes = available(SCHEMES if schemes is None else schemes)
    notes = [*notes, *NOT_IN_FCTLAB]
    cases = [(w, LOAD) for w in sc.workloads] + [(sc.sweep_workload, x) for x in sc.sweep_loads]
    b = Points()
    for seed in sc.seeds:
        for workload, load in cases:
            for s in series:
                if s.only is not None and (workload not in s.only or load != LOAD):
                    continue
                b.add({"kind": "size", "workload": workload, "load": float(load), "variant": s.label,
                       "seed": int(seed)}, _raw(s, workload, load, sc, seed))
        for load in sc.sustain_loads:
            for s in series:
                if s.label not in sc.sustain_series:
                    continue
                for limit in (sc.sustain_span_ms / 2, sc.sustain_span_ms):
                    raw = _raw(s, sc.sustain_workload, load, sc, seed, sustain=True)
                    raw["run"] = {"time_limit_ms": float(limit)}
                    b.add({"kind": "sustain", "workload": sc.sustain_workload, "load": float(load),
                           "variant": s.label, "seed": int(seed), "limit_ms": float(limit)}, raw)
    record(out_dir, RECIPE_FILE, scale, series)
    return b.sweep(f"reproduce-homa-{scale}", notes)


# --------------------------------------------------------------------------------------------------------------
# Reading the results


def load_runs(results_dir: str | Path) -> list[RunRow]:
    """Every run of the recipe in ``results_dir`` with its sweep values, but those of the sustainable-load sweep
    (:func:`sustain_runs`)."""
    return [r for r in recipe_runs(results_dir, ("workload", "variant")) if r.values.get("kind", "size") == "size"]


def sustain_runs(results_dir: str | Path) -> list[RunRow]:
    """The runs of the sustainable-load sweep in ``results_dir``."""
    return [r for r in recipe_runs(results_dir, ("workload", "variant")) if r.values.get("kind") == "sustain"]


def size_bins(workload: str) -> list[tuple[int, float]]:
    """The bins (lo, hi] of a workload: the deciles of its size distribution, equal ones merged; the last bin
    is open above."""
    from fctlab.workloads import load_cdf

    cdf = load_cdf(WORKLOADS[workload])
    edges: list[int] = []
    for k in range(1, 10):
        q = int(cdf.quantile(k / 10))
        if not edges or q > edges[-1]:
            edges.append(q)
    lows = [0, *edges]
    highs: list[float] = [*map(float, edges), math.inf]
    return list(zip(lows, highs))


def bin_label(lo: int, hi: float) -> str:
    def b(x: float) -> str:
        for unit, scale in (("MB", 1e6), ("KB", 1e3)):
            if x >= scale:
                return f"{x / scale:.3g} {unit}"
        return f"{x:.0f} B"

    return f"> {b(lo)}" if math.isinf(hi) else f"{b(lo + 1)}-{b(hi)}"


def _measured(run: RunRow) -> Any:
    import pandas as pd

    f = pd.read_parquet(run.path / "flows.parquet", columns=["size_bytes", "slowdown", "finished", "warmup",
                                                            "cooldown", "start_ns", "finish_ns"])
    # the last arrival of the run (cool-down included): a measured message finishing after it finished while the
    # network drained, with less competition than the load gives
    last = float(f["start_ns"].max())
    f = f[~f["warmup"].astype(bool) & ~f["cooldown"].astype(bool)].copy()
    f["drained"] = f["finished"].astype(bool) & (f["finish_ns"] > last)
    f["span_ms"] = last / 1e6
    return f


def _pct(xs: Any, q: float) -> float | None:
    import numpy as np

    return float(np.percentile(xs, q)) if len(xs) else None


def figure_data(results_dir: str | Path) -> dict[str, Any]:
    """What the figures and statements read, pooled over seeds:

    * ``bins[workload][series]``: a list, per size bin, of dicts with lo, hi, n, unfinished, p50, p99 (slowdown)
      at :data:`LOAD`;
    * ``short[workload][series]`` and ``all[workload][series]``: n, unfinished, p50, p99 and mean over the short
      messages (at most :data:`SHORT_BYTES`) and over all, at :data:`LOAD`;
    * ``load[workload][series][load]``: p99 of the short messages, mean and p99 over all, unfinished, at each load;
    * ``window[workload][series]``: at :data:`LOAD`, the time the arrivals span (ms, the longest of the seeds'),
      the measured messages, and the share (%) of the measured messages of the largest size decile (above the
      workload's 90th percentile) that finished after the last arrival, while the network drained.
    """
    import pandas as pd

    groups: dict[tuple[str, float, str], list[Any]] = {}
    for r in load_runs(results_dir):
        key = (r.values["workload"], float(r.values["load"]), r.values["variant"])
        groups.setdefault(key, []).append(_measured(r))
    out: dict[str, Any] = {"bins": {}, "short": {}, "all": {}, "load": {}, "window": {}}

    def stats(f: Any) -> dict[str, Any]:
        done = f[f["finished"].astype(bool)]["slowdown"].to_numpy(dtype=float)
        return {"n": int(len(f)), "unfinished": int((~f["finished"].astype(bool)).sum()), "p50": _pct(done, 50),
                "p99": _pct(done, 99), "mean": float(done.mean()) if len(done) else None}

    for (workload, load, label), frames in sorted(groups.items()):
        f = pd.concat(frames, ignore_index=True)
        size = f["size_bytes"].to_numpy()
        short, every = stats(f[size <= SHORT_BYTES]), stats(f)
        out["load"].setdefault(workload, {}).setdefault(label, {})[load] = {
            "short_p99": short["p99"], "mean": every["mean"], "p99": every["p99"], "unfinished": every["unfinished"]}
        if abs(load - LOAD) > 1e-9:
            continue
        top = f[size > size_bins(workload)[-1][0]]
        out["window"].setdefault(workload, {})[label] = {
            "span_ms": float(f["span_ms"].max()), "n": int(len(f)), "top_n": int(len(top)),
            "top_drained_pct": 100.0 * float(top["drained"].mean()) if len(top) else None}
        out["short"].setdefault(workload, {})[label] = short
        out["all"].setdefault(workload, {})[label] = every
        rows = []
        for lo, hi in size_bins(workload):
            sel = (size > lo) & (size <= hi)
            rows.append({"lo": lo, "hi": hi, **stats(f[sel])})
        out["bins"].setdefault(workload, {})[label] = rows
    return out


#: A scheme keeps up with a load when its backlog grows by less than this share of the bytes offered meanwhile.
KEEP_UP_GROWTH = 0.05


def keep_up(results_dir: str | Path) -> dict[str, dict[float, dict[str, float]]]:
    """The sustainable-load sweep, per series and load: the backlog (bytes of the messages started and not yet
    delivered, from each message's ``bytes_delivered``) when the run stops at half its span and at its end (the
    engine is deterministic, so the shorter run is the longer one's first half), the bytes offered in between,
    ``growth`` (the backlog's growth over those bytes) and ``keeps_up`` (1.0 when growth < :data:`KEEP_UP_GROWTH`,
    else 0.0). A scheme that keeps up holds a backlog that no longer grows; one that does not adds to it the
    share of the offered bytes it cannot carry. Seeds are summed."""
    import pandas as pd

    rows: dict[tuple[str, float], dict[int, list[tuple[float, float, float]]]] = {}
    for r in sustain_runs(results_dir):
        f = pd.read_parquet(r.path / "flows.parquet", columns=["size_bytes", "start_ns", "bytes_delivered"])
        limit = float(r.values["limit_ms"]) * 1e6
        f = f[f["start_ns"] <= limit]
        backlog = float((f["size_bytes"] - f["bytes_delivered"]).clip(lower=0).sum())
        rows.setdefault((r.values["variant"], float(r.values["load"])), {}).setdefault(
            int(r.values["seed"]), []).append((limit, backlog, float(f["size_bytes"].sum())))
    out: dict[str, dict[float, dict[str, float]]] = {}
    for (label, load), by_seed in rows.items():
        half_b = end_b = half_o = end_o = 0.0
        for pair in by_seed.values():
            if len(pair) != 2:
                continue  # the seed's other run is missing
            (_, hb, ho), (_, eb, eo) = sorted(pair)
            half_b, end_b, half_o, end_o = half_b + hb, end_b + eb, half_o + ho, end_o + eo
        if end_o <= half_o:
            continue
        growth = (end_b - half_b) / (end_o - half_o)
        out.setdefault(label, {})[load] = {"backlog_half": half_b, "backlog_end": end_b, "offered": end_o - half_o,
                                           "growth": growth, "keeps_up": float(growth < KEEP_UP_GROWTH)}
    return out


def highest_sustained(by_load: dict[float, dict[str, float]]) -> float | None:
    """The highest load of the sweep below which (and at which) a scheme keeps up at every load; None when it
    does not keep up at the lowest."""
    best = None
    for load in sorted(by_load):
        if not by_load[load]["keeps_up"]:
            break
        best = load
    return best


def _order(labels: Any) -> list[str]:
    return order(labels, [s.label for s in SCHEMES])



def homa_tables(results_dir: str | Path) -> list[tuple[str, str]]:
    """One plain-text table per workload (rows: size bins; columns: each series' median and 99th-percentile
    slowdown at :data:`LOAD`) and one for the load sweep (the figures: :func:`homa_figures`)."""
    from fctlab.analyze import format_table

    data = figure_data(results_dir)
    tables = []
    for workload in WORKLOADS:
        by = data["bins"].get(workload)
        if not by:
            continue
        labels = _order(by)
        head = ["message size", "share"] + [f"{label} {q}" for label in labels for q in ("p50", "p99")]
        bins = size_bins(workload)
        rows = []
        for i, (lo, hi) in enumerate(bins):
            n_all = by[labels[0]][i]["n"]
            total = sum(b["n"] for b in by[labels[0]])
            row = [bin_label(lo, hi), f"{100 * n_all / total:.0f}%" if total else "-"]
            for label in labels:
                b = by[label][i]
                row += [fmt(b["p50"]), fmt(b["p99"])]
            rows.append(row)
        unfinished = {label: sum(b["unfinished"] for b in by[label]) for label in labels}
        title = (f"{workload} ({WORKLOADS[workload]}) at load {LOAD:g}: slowdown by message size (deciles of the "
                 "size distribution)")
        if any(unfinished.values()):
            title += "; unfinished: " + ", ".join(f"{k} {v}" for k, v in unfinished.items() if v)
        tables.append((title, format_table(head, rows, "ll" + "r" * (len(head) - 2))))
    if data["window"]:
        labels = _order({k for v in data["window"].values() for k in v})
        head = ["workload"] + [f"{label} {q}" for label in labels for q in ("ms", "top 10% drained")]
        rows = [[w] + [c for label in labels for c in (
            fmt(by.get(label, {}).get("span_ms")), fmt(by.get(label, {}).get("top_drained_pct")))]
            for w, by in data["window"].items()]
        tables.append((f"Run length at load {LOAD:g}: the time the arrivals span (ms), and the share (%) of the measured "
                       "messages of the largest size decile that finished after the last arrival",
                       format_table(head, rows, "l" + "r" * (len(head) - 1))))
    ku = keep_up(results_dir)
    if ku:
        labels = _order(ku)
        loads = sorted({x for v in ku.values() for x in v})
        head = ["load"] + [f"{label} {q}" for label in labels for q in ("backlog MB half/end", "growth")]
        rows = [[f"{x:g}"] + [c for label in labels for c in (
            (f"{ku[label][x]['backlog_half'] / 1e6:,.0f} / {ku[label][x]['backlog_end'] / 1e6:,.0f}"
             if x in ku[label] else "-"),
            (f"{100 * ku[label][x]['growth']:+.1f}%" + ("" if ku[label][x]["keeps_up"] else " (no)")
             if x in ku[label] else "-"))] for x in loads]
        rows.append(["highest kept up"] + [c for label in labels for c in (
            "", fmt(highest_sustained(ku[label]), ".2f"))])
        tables.append((f"Sustainable load: each scheme's backlog (MB started and not delivered) at half and at the "
                       f"end of its arrivals, and its growth over the bytes offered in between; \"(no)\": "
                       f"{100 * KEEP_UP_GROWTH:g}% or more, the scheme does not keep up",
                       format_table(head, rows, "l" + "r" * (len(head) - 1))))
    for workload, by in data["load"].items():
        loads = sorted({x for v in by.values() for x in v})
        if len(loads) < 2:
            continue
        labels = _order(by)
        head = ["load"] + [f"{label} {q}" for label in labels for q in ("short p99", "mean", "p99")]
        rows = [[f"{x:g}"] + [c for label in labels for c in (
            fmt(by[label].get(x, {}).get("short_p99")), fmt(by[label].get(x, {}).get("mean")),
            fmt(by[label].get(x, {}).get("p99")))] for x in loads]
        tables.append((f"{workload}: slowdown against load (short: at most {SHORT_BYTES:,} B)",
                       format_table(head, rows, "l" + "r" * (len(head) - 1))))
    return tables


#: Points per curve of the per-size figures: groups of equally many messages in size order (fewer for small runs,
#: so that each group's 99th percentile rests on at least :data:`GROUP_MIN` messages).
GROUPS = 40
GROUP_MIN = 100
#: The paper's statement on short messages at :data:`LOAD` on W1-W3 (Homa's p99 slowdown "about 2-3"), drawn as a
#: band over the short messages' percentiles in the per-size figures.
PAPER_SHORT_BAND = (2.0, 3.0)
PAPER_SHORT_WORKLOADS = ("W1", "W2", "W3")


def percentile_curves(results_dir: str | Path) -> dict[str, dict[str, list[dict[str, float]]]]:
    """The paper's per-size figures as data: for each workload and series at :data:`LOAD`, the finished measured
    messages (pooled over seeds) in size order, split into groups of equally many messages; per group its
    message-size percentiles (lo, hi, mid: the share of the messages, in %, before the group), its largest message
    (bytes), and the median and 99th-percentile slowdown. The paper's x axis is the same: linear in the number of
    messages, labelled with the sizes."""
    import numpy as np
    import pandas as pd

    frames: dict[tuple[str, str], list[Any]] = {}
    for r in load_runs(results_dir):
        if abs(float(r.values["load"]) - LOAD) > 1e-9:
            continue
        frames.setdefault((r.values["workload"], r.values["variant"]), []).append(_measured(r))
    out: dict[str, dict[str, list[dict[str, float]]]] = {}
    for (workload, label), fs in sorted(frames.items()):
        f = pd.concat(fs, ignore_index=True)
        f = f[f["finished"].astype(bool)].sort_values(["size_bytes", "start_ns"], kind="stable")
        n = len(f)
        if n == 0:
            continue
        groups = max(1, min(GROUPS, n // GROUP_MIN))
        sizes = f["size_bytes"].to_numpy()
        slow = f["slowdown"].to_numpy(dtype=float)
        cuts = np.linspace(0, n, groups + 1).round().astype(int)
        rows = []
        for a, b in zip(cuts, cuts[1:]):
            if b <= a:
                continue
            rows.append({"lo": 100.0 * a / n, "hi": 100.0 * b / n, "mid": 50.0 * (a + b) / n,
                         "size": float(sizes[b - 1]), "p50": float(np.percentile(slow[a:b], 50)),
                         "p99": float(np.percentile(slow[a:b], 99)), "n": float(b - a)})
        out.setdefault(workload, {})[label] = rows
    return out


def _size_text(x: float) -> str:
    for unit, scale in (("MB", 1e6), ("KB", 1e3)):
        if x >= scale:
            return f"{x / scale:.3g} {unit}"
    return f"{x:.0f} B"


def homa_figures(results_dir: str | Path) -> list[tuple[str, Path]]:
    """The paper's Figure 12 type for each workload (99th-percentile and median slowdown against the message-size
    percentile, one line per series, the paper's short-message band on W1-W3) and the slowdown against load;
    drawn into ``results_dir/report/figures/homa-<workload>`` and ``homa-load`` (.png, .svg)."""
    root = Path(results_dir)
    curves = percentile_curves(results_dir)
    out = []
    for workload in WORKLOADS:
        by = curves.get(workload)
        if not by:
            continue
        out.append((f"{workload} ({WORKLOADS[workload]}) at load {LOAD:g}: 99th-percentile and median slowdown "
                    "against the message-size percentile (the paper's Figure 12 type: the x axis is linear in the "
                    "number of messages and labelled with the sizes; each point is a group of equally many "
                    "messages, pooled over seeds; grey band: the paper's statement for Homa's short messages)",
                    _plot_sizes(root, workload, by, _order(by))))
    data = figure_data(results_dir)
    for workload, by in data["load"].items():
        loads = sorted({x for v in by.values() for x in v})
        if len(loads) < 2:
            continue
        out.append((f"{workload}: 99th-percentile slowdown of short messages (at most {SHORT_BYTES:,} B) and mean "
                    "slowdown of all messages, against the load", _plot_load(root, workload, by, _order(by), loads)))
    return out


def _plot_sizes(root: Path, workload: str, by: dict[str, list[dict[str, float]]], labels: list[str]) -> Path:
    """Two panels, 99th-percentile and median slowdown, against the message-size percentile; the paper's band
    for Homa's short messages where it gives one."""
    from fctlab.plot import value_axis
    from fctlab.workloads import load_cdf

    fig = figure((11, 4.4))
    axes = fig.subplots(1, 2, sharex=True)
    cdf = load_cdf(WORKLOADS[workload])
    ticks = list(range(0, 101, 10))
    tick_text = [f"{q}\n{_size_text(float(cdf.quantile(min(q, 99.9) / 100)))}" for q in ticks]
    short_top = 100.0 * cdf.fraction_at_most(SHORT_BYTES) if workload in PAPER_SHORT_WORKLOADS else None
    for ax, (key, name) in zip(axes, (("p99", "99th-percentile slowdown"), ("p50", "median slowdown"))):
        values: list[Any] = []
        for i, label in enumerate(labels):
            pts = by[label]
            ys = [p[key] for p in pts]
            values += ys
            ax.plot([p["mid"] for p in pts], ys, marker="o", markersize=3, linewidth=1.5, color=f"C{i}",
                    label=label)
        if key == "p99" and short_top:
            lo, hi = PAPER_SHORT_BAND
            ax.fill_between([0, short_top], [lo, lo], [hi, hi], color="0.45", alpha=0.25, linewidth=0,
                            label=f"paper: Homa's short messages, p99 about {lo:g}-{hi:g}")
            values += [lo, hi]
        value_axis(ax, values, floor=1.0)
        ax.set_xlim(0, 100)
        ax.set_xticks(ticks, tick_text, fontsize=7)
        ax.set_xlabel("message-size percentile (%) and message size")
        ax.set_ylabel(name)
        ax.set_title(name)
        ax.grid(alpha=0.3, which="both")
    handles, names = axes[0].get_legend_handles_labels()
    fig.legend(handles, names, loc="outside lower center", ncol=min(len(names), 4), frameon=False, fontsize=8)
    fig.suptitle(f"{workload} ({WORKLOADS[workload]}), load {LOAD:g}: slowdown by message size")
    return save_figure(fig, root, f"homa-{workload}")


def _plot_load(root: Path, workload: str, by: dict[str, dict[float, dict[str, Any]]], labels: list[str],
               loads: list[float]) -> Path:
    from fctlab.plot import value_axis

    fig = figure((11, 4.0))
    axes = fig.subplots(1, 2, sharex=True)
    for ax, (key, name) in zip(axes, (("short_p99", "99th-percentile slowdown, short messages"),
                                      ("mean", "mean slowdown, all messages"))):
        values: list[Any] = []
        for i, label in enumerate(labels):
            ys = [by[label].get(x, {}).get(key) for x in loads]
            ys = [float("nan") if y is None else y for y in ys]
            values += ys
            ax.plot(loads, ys, marker="o", color=f"C{i}", label=label)
        value_axis(ax, values, floor=1.0)
        ax.set_xticks(loads, [f"{x:g}" for x in loads])
        ax.set_xlabel("load (wire bytes / host link capacity)")
        ax.set_ylabel(name)
        ax.set_title(name)
        ax.grid(alpha=0.3, which="both")
    handles, names = axes[0].get_legend_handles_labels()
    fig.legend(handles, names, loc="outside lower center", ncol=min(len(names), 5), frameon=False, fontsize=8)
    fig.suptitle(f"{workload}: slowdown against load (short: at most {SHORT_BYTES:,} B)")
    return save_figure(fig, root, "homa-load")


# --------------------------------------------------------------------------------------------------------------
# The paper's statements


def _ratios(data: dict[str, Any], a: str, b: str) -> list[tuple[str, str, float]]:
    """(workload, bin, a's p99 / b's p99) for every bin where both have a value."""
    out = []
    for workload, by in data["bins"].items():
        if a not in by or b not in by:
            continue
        for x, y in zip(by[a], by[b]):
            if x["p99"] is not None and y["p99"]:
                out.append((workload, bin_label(x["lo"], x["hi"]), x["p99"] / y["p99"]))
    return out


def _per_workload(r: list[tuple[str, str, float]]) -> str:
    return "; ".join(f"{w}: {median([x for ww, _, x in r if ww == w]):.2f}" for w in dict.fromkeys(w for w, _, _ in r))


#: "Almost all sizes and workloads": the share of (workload, size decile) bins, in percent, a statement needs.
ALMOST_ALL = 80.0
#: "Roughly equal": Homa's p99 at most this factor above pFabric's.
ROUGHLY = 1.25
#: "Significantly better": PIAS's p99 more than this factor above Homa's.
SIGNIFICANTLY = 1.10


def homa_claims(results_dir: str | Path) -> list[Claim]:
    """The paper's statements (section 5.2) with fctlab's numbers from the runs in ``results_dir``."""
    data = figure_data(results_dir)
    claims = []
    # 1. short messages' tail on W1-W3: per workload, the worst p99 over the size deciles that hold only short
    # messages (the paper's figures plot the p99 per size; a decile straddling RTTbytes is not "short")
    worst: dict[str, float] = {}
    notes = []
    for w in ("W1", "W2", "W3"):
        rows = data["bins"].get(w, {}).get("Homa")
        if not rows:
            continue
        inside = [r for r in rows if r["hi"] <= SHORT_BYTES and r["p99"] is not None]
        if inside:
            worst[w] = max(r["p99"] for r in inside)
        pooled = data["short"].get(w, {}).get("Homa", {}).get("p99")
        notes.append(f"{w}: worst decile {fmt(worst.get(w))} over {len(inside)} deciles up to " + (
                     f"{inside[-1]['hi']:,.0f} B" if inside else "-") + f"; all messages of at most "
                     f"{SHORT_BYTES:,} B pooled: {fmt(pooled)}")
    claims.append(Claim(
        id="short-p99-w1-w3",
        statement="At 80% load Homa's 99th-percentile slowdown of short messages stays within about 2-3 on W1-W3",
        source=SRC, paper_value=[2.0, 3.0], value=list(worst.values()) or None, unit="x",
        how=f"per workload W1-W3 (those run): the highest of Homa's p99 slowdowns over the size deciles whose "
            f"messages are all of at most {SHORT_BYTES:,} B (the paper's RTTbytes), load {LOAD:g} (the paper's figures "
            f"give the p99 per size; a decile reaching above RTTbytes, such as W1's largest, 500 B-100 KB, is not "
            f"short); \"about 2-3\" read as at most 3, with 0.5 of tolerance",
        check=in_range(1.0, 3.0, 0.5),
        note="; ".join(notes) or "no runs of Homa on W1-W3"))
    # 2. about pFabric's, for almost all sizes and workloads
    r = _ratios(data, "Homa", "pFabric")
    share = 100 * sum(x <= ROUGHLY for _, _, x in r) / len(r) if r else None
    e = _ratios(data, "Homa (engine defaults)", "pFabric")
    enote = (f"; Homa with the engine's defaults (no tail boost, per-message levels): within {ROUGHLY:g} x in "
             f"{100 * sum(x <= ROUGHLY for *_, x in e) / len(e):.0f}% of bins, median per workload {_per_workload(e)}"
             if e else "")
    claims.append(Claim(
        id="tail-vs-pfabric", statement="Homa's tail slowdown is about that of pFabric across message sizes and "
        "workloads", source=SRC, paper_value="roughly equal for almost all sizes", value=share,
        unit="%", how=f"share of (workload, size decile) bins where Homa's p99 slowdown is at most {ROUGHLY:g} x "
        f"pFabric's, load {LOAD:g}; \"almost all\" read as more than {ALMOST_ALL:g}%",
        check=above(ALMOST_ALL, 0.0), cause="unexplained",
        note=(f"median Homa/pFabric per workload: {_per_workload(r)}; highest {max(x for _, _, x in r):.2f}, "
              f"lowest {min(x for _, _, x in r):.2f}" if r else "no runs of Homa and pFabric") + enote))
    # 3. well ahead of PIAS
    r = _ratios(data, "PIAS", "Homa")
    share = 100 * sum(x > SIGNIFICANTLY for _, _, x in r) / len(r) if r else None
    d = _ratios(data, "DCTCP", "Homa")
    dnote = (f"; fctlab's baseline DCTCP (not in the paper's simulations): DCTCP/Homa median "
             f"{median([x for *_, x in d]):.2f}, Homa below DCTCP in {sum(x > 1.0 for *_, x in d)} of {len(d)} bins"
             if d else "")
    claims.append(Claim(
        id="tail-vs-pias", statement="Homa's tail slowdown is well below PIAS's for almost all message sizes and "
        "workloads", source=SRC, paper_value="significantly better for almost all sizes", value=share,
        unit="%", how=f"share of (workload, size decile) bins where PIAS's p99 slowdown exceeds Homa's by more than "
        f"{100 * (SIGNIFICANTLY - 1):g}%, load {LOAD:g}; \"almost all\" read as more than {ALMOST_ALL:g}%",
        check=above(ALMOST_ALL, 0.0),
        mechanism="on W3-W5 PIAS sends short messages at once at its top priority as Homa does, so their tails are "
                  "equal; Homa's lead is on W1, W2 and the messages above RTTbytes. PIAS's thresholds here are the "
                  "PIAS paper's method for each workload and load; the Homa paper does not give the ones it used",
        cause="paper_omission",
        note=(f"median PIAS/Homa per workload: {_per_workload(r)}; Homa below PIAS in {sum(x > 1.0 for *_, x in r)} "
              f"of {len(r)} bins" if r else "no runs of Homa and PIAS") + dnote))
    # 4. the highest load each scheme keeps up with (the sustainable-load sweep)
    ku = keep_up(results_dir)
    loads = sorted({x for v in ku.values() for x in v})
    step = min((b - a for a, b in zip(loads, loads[1:])), default=0.05)

    def best(label: str) -> float | None:
        by = ku.get(label)
        if not by or set(by) != set(loads):
            return None
        h = highest_sustained(by)
        return loads[0] - step if h is None else h  # below the sweep: one step under its lowest load

    others = [label for label in ("pFabric", "PIAS") if label in ku]
    hb = best("Homa")
    gaps = [None if hb is None or best(o) is None else round(hb - best(o), 6) for o in others]  # type: ignore[operator]
    detail = "; ".join(f"{label}: " + ", ".join(f"{x:g} {100 * ku[label][x]['growth']:+.1f}%" for x in sorted(ku[label]))
                       for label in _order(ku))
    # the window must be long enough to see a backlog level off: at the sweep's lowest load (0.8, where every
    # scheme finishes every message in the per-size runs) every scheme has to keep up, or the sweep cannot tell
    # a backlog still building from one that grows without bound
    short = [label for label in _order(ku) if loads and loads[0] in ku[label] and not ku[label][loads[0]]["keeps_up"]]
    window_reason = (f"the sweep's window is too short to tell a backlog still building from one growing without "
                     f"bound: at its lowest load, {loads[0]:g}, {', '.join(short)} did not keep up by the "
                     f"{100 * KEEP_UP_GROWTH:g}% rule although every scheme finishes every message there in the "
                     f"per-size runs; a longer window (the paper scale's 100 ms, or more) is needed") if short else ""
    claims.append(Claim(
        id="sustains-higher-load", statement="Homa sustains higher loads than pFabric, pHost and PIAS",
        source=SRC, paper_value="higher than pFabric, pHost, PIAS",
        value=None if window_reason or hb is None else (gaps or None),
        unit="load",
        how=f"the sustainable-load sweep on {', '.join(sorted({r.values['workload'] for r in sustain_runs(results_dir)})) or '-'}: "
            f"each scheme at loads {', '.join(f'{x:g}' for x in loads) or '-'} (wire bytes as the authors count "
            f"them), each run stopped at the end of its arrivals and at half of them; a scheme keeps up with a load "
            f"when its backlog (bytes started, not yet delivered) grows between the two by less than "
            f"{100 * KEEP_UP_GROWTH:g}% of the bytes offered meanwhile, and sustains the highest load up to which "
            f"it keeps up at every load of the sweep (one step under the lowest when it keeps up at none); the value "
            f"is Homa's highest load minus {' and '.join(others) or 'the others'}', which must be above 0 (equal "
            f"loads, as when all keep up at the top of the sweep, do not pass)",
        check=above(0.0, 0.0) if not window_reason else unmeasured(),
        not_run_reason=window_reason,
        mechanism=("equal highest loads: the sweep's loads do not separate the schemes (all keep up, or none "
                   "does, at the same loads)" if gaps and all(g == 0 for g in gaps if g is not None) else
                   "Homa keeps up with a lower load than a baseline here: see the backlog growth per load in the note")
                  + "; pHost is not in fctlab",
        cause="unexplained",
        note=("backlog growth over the offered bytes per load: " + detail) if ku else "no sustainable-load sweep"))
    claims.append(Claim(
        id="vs-phost-ndp", statement="Homa's tail slowdown is below pHost's and NDP's", source=SRC,
        paper_value="Homa better", value=None, unit="", how="not run", check=unmeasured(),
        not_run_reason=NOT_IN_FCTLAB[0]))
    return claims


RECIPE = Recipe(
    name="homa",
    paper="Montazeri et al., \"Homa: A Receiver-Driven Low-Latency Transport Protocol Using Network Priorities\", "
          "SIGCOMM 2018",
    summary="Homa (SIGCOMM 2018) section 5.2: Homa, pFabric, PIAS, DCTCP on W1-W5 at 80% load on the 144-host "
            "fabric; slowdown by message size, and against load",
    sweep=homa_sweep,
    claims=homa_claims,
    tables=homa_tables,
    figures=homa_figures,
    generic_figures=False,
    needs_out_dir=True,
)
