"""Whether a run can mean anything, checked before it runs: every rule of ``fctlab check``, of the warnings
printed before ``fctlab run``, ``compare``, ``calibrate`` and ``sweep``, and of the ``warnings`` list of
``summary.json`` and the HTML report. One place: the commands and :func:`fctlab.simulate` call :func:`check`.

The rules read the experiment as the engine resolved it (``Experiment.engine``, keys in RTTs and BDPs already
turned into absolute values), the fabric's yardsticks (``_core.fabric_scale``: the longest base RTT, a
full-size packet out and an ACK back on the idle fabric, and that path's BDP), the flows, and the offered load
per tier of links (``_core.tier_loads``: each flow's data on its ECMP path over the span of the arrivals). Each
finding names the key and the number behind it.

- timers: the TCP RTO floor (``transport.rto_min_us``) below the longest base RTT, or below a round trip behind
  the standing queues of congested ports (the ECN threshold at two ports, else one full port buffer), a fixed
  RTO below twice it
  (every timeout of a flow on that path fires before its ACK can be back), ``transport.rto_init_us`` below it;
- windows: ``transport.init_cwnd_packets`` or ``max_cwnd_packets`` below a quarter of that path's BDP (a flow
  alone cannot fill its link);
- buffers: ``switch.ecn_threshold_bytes`` at or above the port buffer (DCTCP's marks never come before drops),
  a per-port buffer below one BDP for the window-based schemes (a window of one BDP cannot queue);
- time: most flows starting after ``run.time_limit_ms``, or the last arrivals leaving the largest flow no time
  to finish at the load's leftover rate (size / (host rate x (1 - load)));
- keys with no effect here: ``scheme.pias_count = "per_connection"`` with a connection per flow, fewer PIAS
  thresholds than queues - 1, ``scheme.homa_unscheduled_levels`` with explicit cutoffs, a trace ``conn`` column
  without ``transport.connections = "trace"``, a ``qclimb`` column with another scheme, ``scheme.priority``
  (or trace priorities) beyond the queues, QJump's levels on fewer queues;
- load per tier: the mean offered load of a tier of links above 1.

The cost of a packet-level run (:func:`estimate`) is computed here too: events from the flows' packets and
their paths, at the engine's events per second measured by ``benchmarks/`` (docs/performance.md).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from fctlab.config import Experiment

__all__ = ["Finding", "Check", "check", "check_config", "estimate", "Estimate"]

#: A window (initial or cap) below this fraction of the longest path's BDP is warned about.
WINDOW_FRACTION = 0.25
#: A fixed RTO below this many base RTTs is warned about (a timer must outlast a round trip and some queueing).
FIXED_RTO_RTTS = 2.0
#: Warn when more than this share of the flows start after the time limit.
LATE_SHARE = 0.5


@dataclass(frozen=True)
class Finding:
    """One rule's finding: the key it is about and what is wrong, with the numbers."""

    key: str
    message: str

    def __str__(self) -> str:
        return f"{self.key}: {self.message}"


@dataclass
class Check:
    """What :func:`check` found: the fabric's yardsticks, the load per tier, the findings and the cost."""

    base_rtt_ns: float
    bdp_bytes: int
    bdp_packets: float
    hops: int
    resolved: dict[str, Any]
    findings: list[Finding] = field(default_factory=list)
    tiers: list[tuple[str, int, float, float]] = field(default_factory=list)
    cost: Estimate | None = None

    @property
    def warnings(self) -> list[str]:
        return [str(f) for f in self.findings]

    def facts(self) -> list[str]:
        """The fabric's yardsticks and the values resolved from them, one line each (``fctlab check``)."""
        t, s = self.resolved["transport"], self.resolved["switch"]
        lines = [
            f"longest base RTT {self.base_rtt_ns / 1000:,.2f} us over {self.hops} hops; its BDP "
            f"{self.bdp_bytes:,} B = {self.bdp_packets:.1f} full-size packets",
        ]
        if _row(self.resolved)["tcp_kind"] is not None:  # the schemes whose hosts run TCP
            lines.append(
                f"as run: transport.rto_min_us = {t['rto_min_us']:g}{' (fixed)' if t['rto_fixed'] else ''}, "
                f"init_cwnd_packets = {t['init_cwnd_packets']}, max_cwnd_packets = "
                f"{t['max_cwnd_packets'] or 'none'}, switch.buffer_bytes = {s['buffer_bytes']:,}")
        if self.tiers:
            shown = ", ".join(f"{name} {mean:.2f} (max port {mx:.2f})" for name, _, mean, mx in self.tiers)
            lines.append(f"offered load per tier: {shown}")
        return lines


def _scale(engine: dict[str, Any]) -> dict[str, Any]:
    from fctlab import _core

    return dict(_core.fabric_scale(json.dumps(engine, sort_keys=True)))


def _row(engine: dict[str, Any]) -> dict[str, Any]:
    from fctlab import scheme_table

    row = scheme_table.row(str(engine["scheme"]["name"]))
    assert row is not None
    return row


def _queued_rtt_us(sw: dict[str, Any], rtt_us: float, bdp_b: int) -> tuple[float, str] | None:
    """A round trip on the longest path with the standing queues of congested ports on the way (the flow
    level's `run.flow_queueing` model): with ECN marking, the threshold at the data's last hop and at the ACKs'
    (DCTCP's queues hover about it); without, one full port buffer. Queues drain at the path's bottleneck rate
    (its BDP over its RTT). None when the port's queue is not bounded per port."""
    if rtt_us <= 0 or bdp_b <= 0 or sw["buffer"] != "port":
        return None
    bytes_per_us = bdp_b / rtt_us
    if sw["ecn"] != "off":
        k = int(sw["ecn_threshold_bytes"])
        return rtt_us + 2 * k / bytes_per_us, f"the ECN threshold, {k:,} B = {k / bytes_per_us:,.0f} us, at two ports"
    b = int(sw["buffer_bytes"])
    return rtt_us + b / bytes_per_us, f"a full port buffer, {b:,} B = {b / bytes_per_us:,.0f} us"


def _config_findings(engine: dict[str, Any], scale: dict[str, Any], raw: dict[str, Any]) -> list[Finding]:
    """The rules that need the resolved config and the fabric only (no flows)."""
    out: list[Finding] = []
    row = _row(engine)
    t, sw, sc = engine["transport"], engine["switch"], engine["scheme"]
    rtt_us = float(scale["base_rtt_ns"]) / 1000.0
    bdp_pk, bdp_b = float(scale["bdp_packets"]), int(scale["bdp_bytes"])
    tcp_timers = row["tcp_kind"] is not None  # the schemes whose hosts run TCP (and its RTO)
    if tcp_timers and rtt_us > 0:
        rto = float(t["rto_min_us"])
        if t["rto_fixed"] and rto < FIXED_RTO_RTTS * rtt_us:
            out.append(Finding("transport.rto_min_us", (
                f"the fixed RTO is {rto:g} us, {rto / rtt_us:.2f} x the longest base RTT ({rtt_us:,.1f} us): below "
                f"{FIXED_RTO_RTTS:g} RTTs most timeouts fire before the ACK can return (spurious retransmissions)"
                + _rel_hint(engine, "rto_min_us"))))
        elif not t["rto_fixed"] and rto < rtt_us:
            out.append(Finding("transport.rto_min_us", (
                f"the RTO floor is {rto:g} us, below the longest base RTT ({rtt_us:,.1f} us): the first segments' "
                "timer (rto_init_us defaults to it) fires before their ACK can return" + _rel_hint(engine, "rto_min_us"))))
        else:
            queued = _queued_rtt_us(sw, rtt_us, bdp_b)
            if not t["rto_fixed"] and queued is not None and rto < queued[0]:
                out.append(Finding("transport.rto_min_us", (
                    f"the RTO floor is {rto:g} us; a round trip on the longest path behind the queues congested "
                    f"ports keep ({queued[1]}) takes about {queued[0]:,.0f} us, so timers fire while ACKs are on "
                    "their way (spurious retransmissions and a window back to one segment: on the 144-host "
                    "leaf-spine, web search at 0.6, DCTCP with a 200 us floor, 28% of small flows time out and "
                    "their mean FCT triples)")))
        init = t.get("rto_init_us")
        if not t["rto_fixed"] and init is not None and float(init) < rtt_us:
            out.append(Finding("transport.rto_init_us", (
                f"is {float(init):g} us, below the longest base RTT ({rtt_us:,.1f} us): every flow's first timer "
                "fires before its first ACK can return")))
    if row["window"] and bdp_pk > 0:
        for key in ("init_cwnd_packets", "max_cwnd_packets"):
            v = int(t[key])
            if v and v < WINDOW_FRACTION * bdp_pk:
                out.append(Finding(f"transport.{key}", (
                    f"is {v} packets, {v / bdp_pk:.2f} of the longest path's BDP ({bdp_pk:.1f} packets, {bdp_b:,} B): a "
                    f"flow alone on that path cannot fill its link" + _rel_hint(engine, key))))
    port_buffer = sw["buffer"] == "port"
    ecn_on = sw["ecn"] != "off"
    if port_buffer and ecn_on and int(sw["ecn_threshold_bytes"]) >= int(sw["buffer_bytes"]):
        out.append(Finding("switch.ecn_threshold_bytes", (
            f"is {int(sw['ecn_threshold_bytes']):,} B, not below the port buffer (switch.buffer_bytes = "
            f"{int(sw['buffer_bytes']):,} B): the queue drops before it marks, so ECN (DCTCP's window cuts) never acts")))
    if port_buffer and row["window"] and bdp_b > 0 and int(sw["buffer_bytes"]) < bdp_b:
        out.append(Finding("switch.buffer_bytes", (
            f"is {int(sw['buffer_bytes']):,} B, below one BDP of the longest path ({bdp_b:,} B): a window-based "
            "flow's window of one BDP cannot queue at a bottleneck without drops" + _rel_hint(engine, "buffer_bytes"))))
    # keys with no effect here
    queues = int(sw["queues"])
    if sc["pias_count"] == "per_connection" and t["connections"] == "per_flow":
        out.append(Finding("scheme.pias_count", (
            '"per_connection" has no effect with transport.connections = "per_flow": every flow has its own '
            "connection, so the count is per flow")))
    user_thresholds = raw.get("scheme", {}).get("thresholds_bytes")
    if row["needs_thresholds"] and user_thresholds is not None and queues > 1 and len(user_thresholds) < queues - 1:
        n = len(user_thresholds)
        out.append(Finding("scheme.thresholds_bytes", (
            f"{n} threshold{'s' if n != 1 else ''} for {queues} queues (switch.queues): tagging uses queues 0-{n} "
            f"only, queues {n + 1}-{queues - 1} stay empty")))
    if int(sc["homa_unscheduled_levels"]) and sc["homa_unscheduled_cutoffs_bytes"]:
        out.append(Finding("scheme.homa_unscheduled_levels", (
            f"is {int(sc['homa_unscheduled_levels'])}, but scheme.homa_unscheduled_cutoffs_bytes is given "
            f"({len(sc['homa_unscheduled_cutoffs_bytes'])} cutoffs): the cutoffs decide the levels, this key is ignored")))
    if row["tagging"] == "fixed" and int(sc["priority"]) >= queues:
        out.append(Finding("scheme.priority", (
            f"is {int(sc['priority'])}, beyond the {queues} queues (switch.queues): it uses queue {queues - 1}")))
    # QJump (the row that shows scheme.qjump_queue): a level per bucket, on strict-priority FIFOs
    if "qjump_queue" in row["keys"] and sc["qjump_queue"] == "priority_fifos":
        levels = len(sc["qjump_bucket_bytes"])
        if levels > queues:
            out.append(Finding("switch.queues", (
                f"is {queues}, but QJump has {levels} levels (scheme.qjump_bucket_bytes): levels {queues - 1}-"
                f"{levels - 1} share the last queue")))
    return out


def _rel_hint(engine: dict[str, Any], key: str) -> str:
    """Advice for a value that the scheme's native preset states in the fabric's terms while the run uses another
    preset's absolute value (pFabric's pfabric_ns2 and pias)."""
    from fctlab import _core
    from fctlab.scheme_table import RELATIVE_KEYS

    sc = engine["scheme"]
    if sc["preset"] == "native":
        return ""
    native = json.loads(_core.scheme_defaults(str(sc["name"]), "native"))
    for (section, absolute), (relative, _) in RELATIVE_KEYS.items():
        if absolute == key and native[section].get(relative) is not None:
            return (f" (preset {sc['preset']!r} holds absolute values for its paper's fabric; preset \"native\" "
                    "scales them with this fabric)")
    return ""


def _flow_findings(exp: Experiment, flows: Any, tiers: list[tuple[str, int, float, float]]) -> list[Finding]:
    from fctlab.workloads import column

    out: list[Finding] = []
    engine = exp.engine
    n = len(flows)
    if n == 0:
        return out
    limit_ms = float(engine["run"]["time_limit_ms"])
    start = column(flows, "start_ps", np.uint64).astype(np.float64)
    late = int(np.count_nonzero(start >= limit_ms * 1e9))
    if late > LATE_SHARE * n:
        out.append(Finding("run.time_limit_ms", (
            f"is {limit_ms:g} ms, but {late:,} of {n:,} flows ({100 * late / n:.0f}%) start after it: the run "
            "measures the few that start before")))
    load = exp.workload.load
    size = column(flows, "size_bytes", np.uint64)
    last_ms = float(start.max()) / 1e9
    if load is not None and 0 < load < 1 and last_ms < limit_ms:
        big = float(size.max())
        need_ms = big * 8 / (exp.host_link_bps * (1 - float(load))) * 1e3
        if last_ms + need_ms > limit_ms:
            out.append(Finding("run.time_limit_ms", (
                f"is {limit_ms:g} ms; the last flow arrives at {last_ms:,.3g} ms and the largest ({big:,.0f} B) needs "
                f"about {need_ms:,.3g} ms at the {1 - float(load):.2f} of its host link that load {float(load):g} "
                "leaves: the large flows may not finish (raise run.time_limit_ms)")))
    sc, t = engine["scheme"], engine["transport"]
    columns = set(flows.columns) if hasattr(flows, "columns") else set()
    if "conn" in columns and t["connections"] != "trace":
        out.append(Finding("transport.connections", (
            f"is {t['connections']!r}: the trace's conn column has no effect (set transport.connections = \"trace\" "
            "to reuse connections by it)")))
    if "qclimb" in columns and _row(engine)["tagging"] != "qclimb":
        out.append(Finding("scheme.name", f"is {sc['name']!r}: the trace's qclimb column is read by QCLIMB's tagging only"))
    for name, ports, mean, mx in tiers:
        if mean > 1.0:
            out.append(Finding("workload.load", (
                f"offers {mean:.2f} of the capacity of the {name} links ({ports} ports; the most loaded {mx:.2f}): "
                "that tier is overloaded, queues there grow without bound whatever the scheme")))
    return out


def tier_loads(exp: Experiment, flows: Any) -> tuple[list[tuple[str, int, float, float]], int]:
    """Offered load per tier of links for these flows, (tier, ports, mean, most loaded port), over the span of
    their arrivals (none when they all arrive at once); and their data packets' port crossings."""
    from fctlab import _core
    from fctlab.workloads import column

    if len(flows) == 0:
        return [], 0
    start = column(flows, "start_ps", np.uint64)
    span_ns = float(start.max() - start.min()) / 1000.0
    src = np.ascontiguousarray(column(flows, "src", np.uint32))
    dst = np.ascontiguousarray(column(flows, "dst", np.uint32))
    size = np.ascontiguousarray(column(flows, "size_bytes", np.uint64))
    tiers, packet_hops = _core.tier_loads(exp.engine_json(), src, dst, size, max(span_ns, 1e-3))
    return ([tuple(x) for x in tiers] if span_ns > 0 else []), int(packet_hops)  # type: ignore[misc]


def check_config(exp: Experiment) -> Check:
    """The rules that need no flows (what a sweep checks for each point before its runs)."""
    scale = _scale(exp.engine)
    c = Check(float(scale["base_rtt_ns"]), int(scale["bdp_bytes"]), float(scale["bdp_packets"]), int(scale["hops"]),
              exp.engine)
    c.findings = _config_findings(exp.engine, scale, exp.raw)
    return c


def check(exp: Experiment, flows: Any) -> Check:
    """Every rule, for an experiment and its flows, and the cost estimate of a packet-level run."""
    c = check_config(exp)
    c.tiers, packet_hops = tier_loads(exp, flows)
    c.findings += _flow_findings(exp, flows, c.tiers)
    c.cost = estimate(exp, len(flows), packet_hops)
    return c


# --------------------------------------------------------------------------------------------------------------
# Cost

#: Engine events per second on the reference machine, wall time of the whole run (the engine and the Python
#: around it), as benchmarks/estimate.py fits it (docs/performance.md).
EVENTS_PER_SECOND = 3.0e6
#: Wall seconds of a run besides its events: a fixed part (building the fabric, writing nothing yet) and a part
#: per flow (its set-up in the engine and its row of the result table), fitted on runs of 100,000 and 300,000
#: one-packet flows, where the events are a small part of the time.
FIXED_SECONDS = 0.5
SECONDS_PER_FLOW = 10e-6
#: Peak resident memory: the interpreter with the engine, numpy, pandas and pyarrow loaded, then bytes per flow
#: (workload columns, the engine's per-flow state, the result table and its Parquet copy).
BASE_BYTES = 120 * 2**20
BYTES_PER_FLOW = 360.0
#: Print the estimate before a run expected to take longer than this.
SHOW_ABOVE_SECONDS = 30.0


@dataclass(frozen=True)
class Estimate:
    """The expected cost of a packet-level run: data packets' port crossings, engine events, wall seconds and
    peak memory."""

    packet_hops: int
    events: float
    seconds: float
    memory_bytes: float

    def text(self) -> str:
        s = self.seconds
        when = f"{s:.0f} s" if s < 90 else (f"{s / 60:.0f} min" if s < 5400 else f"{s / 3600:.1f} h")
        return f"about {when}, {self.memory_bytes / 2**20:,.0f} MiB on this machine"


def estimate(exp: Experiment, flows: int, packet_hops: int) -> Estimate:
    """The cost of a packet-level run of ``flows`` flows whose data packets cross ``packet_hops`` ports in all
    (on their ECMP paths, :func:`tier_loads`): one event per packet per port, every data packet's ACK crossing as
    many ports back, at :data:`EVENTS_PER_SECOND`, plus a fixed and a per-flow time; retransmissions and timers
    are not counted (the fit absorbs their average). A flow-level run is not estimated (seconds 0)."""
    events = 2.0 * packet_hops
    seconds = FIXED_SECONDS + SECONDS_PER_FLOW * flows + events / EVENTS_PER_SECOND
    if exp.engine["run"]["level"] == "flow":
        seconds = 0.0
    memory = BASE_BYTES + BYTES_PER_FLOW * flows
    return Estimate(packet_hops, events, seconds, memory)


def summary_entry(c: Check) -> dict[str, Any]:
    """What summary.json records of a check."""
    return {"base_rtt_ns": c.base_rtt_ns, "bdp_bytes": c.bdp_bytes, "tiers": [list(x) for x in c.tiers],
            "estimate": asdict(c.cost) if c.cost else None}

