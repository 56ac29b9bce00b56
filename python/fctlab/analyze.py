"""Per-size-bin flow completion time statistics: the numbers every paper of this field reports.

Bins (docs/results.md): small (0, 100 KB], medium (100 KB, 10 MB], large (10 MB, inf), with KB = 1,000 bytes and
MB = 1,000,000 bytes, plus "all" (``output.bins = "papers"``, the default). ``output.bins = "ns2"`` uses the
edges of the PIAS ns-2 scripts' ``result.py`` instead: small below 100 KiB (102,400 bytes), large above 10 MiB
(10,485,760 bytes). Each bin reports its flows, how many finished, and the mean and 99th percentile of FCT and
slowdown over the flows that finished and are measured (neither warm-up nor cool-down); then the same FCT
statistics over those of them that had no retransmission timeout, and how many had one. Percentiles are
``numpy.percentile`` with its default linear interpolation between order statistics (method "linear", type 7
of Hyndman and Fan).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from fctlab import scheme_table

if TYPE_CHECKING:
    import pandas as pd

#: Bin names in report order, with their (lower, upper] edges in bytes.
SIZE_BINS: dict[str, tuple[float, float]] = {
    "small": (0, 100_000),
    "medium": (100_000, 10_000_000),
    "large": (10_000_000, math.inf),
}
#: The bin edges ``output.bins`` can name. "papers": the papers' 100 KB / 10 MB (decimal). "ns2": the PIAS ns-2
#: scripts' result.py, small if size < 100 x 1024 bytes, large if size > 10 x 1024 x 1024 bytes: for whole
#: bytes that is (0, 102,399], (102,399, 10,485,760], (10,485,760, inf).
BIN_EDGES: dict[str, dict[str, tuple[float, float]]] = {
    "papers": SIZE_BINS,
    "ns2": {
        "small": (0, 100 * 1024 - 1),
        "medium": (100 * 1024 - 1, 10 * 1024 * 1024),
        "large": (10 * 1024 * 1024, math.inf),
    },
}
DEFAULT_BINS = "papers"
#: The bins of a summary, "all" last.
SUMMARY_BINS = (*SIZE_BINS, "all")
PERCENTILE = 99.0
PERCENTILE_METHOD = "linear"


#: The bin names as an object array, indexed by :func:`_bin_index`.
_BIN_NAMES = np.array(list(SIZE_BINS), dtype=object)


def _edges(bins: str) -> dict[str, tuple[float, float]]:
    if bins not in BIN_EDGES:
        raise ValueError(f"output.bins: must be one of {', '.join(BIN_EDGES)} (got {bins!r})")
    return BIN_EDGES[bins]


def bins_text(bins: str = DEFAULT_BINS) -> str:
    """The size bins of ``bins`` (:data:`BIN_EDGES`) in a few words, for table and figure headings."""
    _edges(bins)
    if bins == "ns2":
        return "small < 100 KiB <= medium <= 10 MiB < large"
    return "small <= 100 KB < medium <= 10 MB < large"


def _bin_index(size_bytes: Any, bins: str = DEFAULT_BINS) -> np.ndarray:
    """Index into the bins (0 small, 1 medium, 2 large) of each flow size; edges belong to the lower bin (and a
    size that compares false to both edges, such as NaN, is large)."""
    edges = _edges(bins)
    s = np.asarray(size_bytes)
    return 2 - (s <= edges["small"][1]).astype(np.intp) - (s <= edges["medium"][1])


def size_bin(size_bytes: Any, bins: str = DEFAULT_BINS) -> np.ndarray:
    """Bin name ("small" / "medium" / "large") of each flow size (an object array of str); edges belong to the
    lower bin. ``bins`` names the edges (:data:`BIN_EDGES`)."""
    idx = np.asarray(_bin_index(size_bytes, bins))
    # indexing shares the three name strings instead of making one str object per flow
    return _BIN_NAMES[idx.ravel()].reshape(idx.shape)


def _stat(values: np.ndarray, kind: str) -> float | None:
    if len(values) == 0:
        return None
    if kind == "mean":
        return float(np.mean(values))
    return percentile(values)


def percentile(values: np.ndarray, q: float = PERCENTILE) -> float:
    """``numpy.percentile(values, q, method="linear")`` of a non-empty 1-D array, as numpy computes it: the rank
    (n - 1) q / 100, the order statistics below and above it (``numpy.partition``; the largest value when the
    rank reaches n - 1) and numpy's interpolation between them (from the lower one when the fraction is below
    0.5, else back from the upper one), operation for operation, so the result is the same float. Done here for
    float64 without NaN because numpy's own goes through ``numpy.unique``, which imports ``numpy.ma``: 10-40 ms
    of a flow-level run's summary. Any other array (NaN, another dtype) is left to ``numpy.percentile``."""
    values = np.asarray(values)
    if values.dtype != np.float64 or values.ndim != 1 or len(values) == 0 or np.isnan(values).any():
        return float(np.percentile(values, q, method=PERCENTILE_METHOD))
    n = len(values)
    rank = (n - 1) * (q / 100)
    if rank >= n - 1:
        below = above = float(values.max())
        gamma = rank + 1  # (numpy takes index -1, the largest, and its fraction from that index)
    else:
        lo = math.floor(rank)
        part = np.partition(values, (lo, lo + 1))
        below, above = float(part[lo]), float(part[lo + 1])
        gamma = rank - lo
    diff = above - below
    return above - diff * (1 - gamma) if gamma >= 0.5 else below + diff * gamma


def _values(flows: Any, name: str, dtype: Any) -> np.ndarray:
    """Column ``name`` of a flow table (a DataFrame, or numpy columns such as
    :class:`fctlab.simulation.FlowTable`) as a numpy array of ``dtype``; missing values of a nullable column read
    as NaN (float) or False (bool), as :class:`~fctlab.simulation.FlowTable` stores them."""
    values = flows[name]
    if isinstance(values, np.ndarray):
        return values if dtype is None else values.astype(dtype, copy=False)
    if dtype is None:
        return values.to_numpy()
    return values.to_numpy(dtype=dtype, na_value=np.nan if np.dtype(dtype).kind == "f" else False)


def _timeouts(flows: pd.DataFrame) -> np.ndarray:
    """The flows' retransmission timeouts (zeros for a table without the column)."""
    if "timeouts" in flows:
        return _values(flows, "timeouts", np.int64)
    return np.zeros(len(flows), dtype=np.int64)


def bin_stats(flows: pd.DataFrame) -> dict[str, Any]:
    """Statistics of one group of measured flows; FCT and slowdown over the finished ones."""
    return _bin_stats(
        flows["finished"].to_numpy(dtype=bool),
        flows["fct_ns"].to_numpy(dtype=np.float64),
        flows["slowdown"].to_numpy(dtype=np.float64),
        _timeouts(flows),
    )


def _bin_stats(
    finished: np.ndarray, fct_ns: np.ndarray, slowdown: np.ndarray, timeouts: np.ndarray
) -> dict[str, Any]:
    """:func:`bin_stats` of the group given as its columns."""
    fct = fct_ns[finished]
    slow = slowdown[finished]
    clean = finished & (timeouts == 0)  # finished without a retransmission timeout
    return {
        "count": int(len(finished)),
        "finished": int(finished.sum()),
        "unfinished": int((~finished).sum()),
        "mean_fct_ns": _stat(fct, "mean"),
        "p99_fct_ns": _stat(fct, "p99"),
        "mean_slowdown": _stat(slow, "mean"),
        "p99_slowdown": _stat(slow, "p99"),
        "with_timeouts": int((timeouts > 0).sum()),
        "no_timeout_finished": int(clean.sum()),
        "no_timeout_mean_fct_ns": _stat(fct_ns[clean], "mean"),
        "no_timeout_p99_fct_ns": _stat(fct_ns[clean], "p99"),
        "no_timeout_mean_slowdown": _stat(slowdown[clean], "mean"),
    }


def _column_sum(flows: pd.DataFrame, column: str) -> int | None:
    """Sum of a per-flow counter over every flow (warm-up included, like the engine's counters); None when the
    table has no such column."""
    return int(flows[column].sum()) if column in flows else None


def deadline_stats(flows: pd.DataFrame, measured: np.ndarray | None = None) -> dict[str, Any]:
    """Deadlines of a flow table (the D3 and PDQ papers' metric): ``deadline_flows`` (measured flows with a
    deadline), ``met_deadline_flows`` (those that finished by it), ``application_throughput`` (their ratio;
    None without deadline flows: a flow a scheme terminated, or one that did not finish, missed its deadline)
    and ``terminated_flows`` (every flow a scheme gave up on, warm-up and cool-down included, like
    ``unfinished_flows``). ``measured`` selects the measured rows (default: every row)."""
    n = len(flows)
    if measured is None:
        measured = np.ones(n, dtype=bool)
    if "deadline_ns" in flows:
        has = ~np.isnan(_values(flows, "deadline_ns", np.float64)) & measured
    else:
        has = np.zeros(n, dtype=bool)
    if "met_deadline" in flows:
        met = _values(flows, "met_deadline", bool) & has
    else:
        met = np.zeros(n, dtype=bool)
    terminated = _values(flows, "terminated", bool) if "terminated" in flows else np.zeros(n, dtype=bool)
    count = int(has.sum())
    return {
        "deadline_flows": count,
        "met_deadline_flows": int(met.sum()),
        "application_throughput": float(met.sum() / count) if count else None,
        "terminated_flows": int(terminated.sum()),
    }


def _pfc_stats(stats: Mapping[str, Any]) -> dict[str, Any]:
    """PFC's counters (``switch.pfc``): frames sent, and the paused time per port tier in microseconds (the
    engine counts picoseconds). Zeros in a run without PFC; absent when the engine did not report them."""
    if "pfc_pause_frames" not in stats:
        return {}
    paused = stats.get("pfc_paused_ps_per_tier") or {}
    return {
        "pfc_pause_frames": stats.get("pfc_pause_frames"),
        "pfc_resume_frames": stats.get("pfc_resume_frames"),
        "pfc_paused_us_per_tier": {k: v / 1e6 for k, v in paused.items()},
    }


def summarize(
    flows: pd.DataFrame, engine_stats: Mapping[str, Any], config: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """The JSON summary of a run (documented in docs/results.md).

    ``flows`` is the per-flow table of :func:`fctlab.simulate` (columns used: size_bytes, finished, fct_ns,
    slowdown, timeouts, warmup, cooldown); ``engine_stats`` the engine's counters, passed through whole under
    "engine" and with the headline ones copied to the top level in friendlier units. The bin edges are
    ``config["output"]["bins"]`` (:data:`BIN_EDGES`; default "papers").
    """
    n = len(flows)
    warm = _values(flows, "warmup", bool) if "warmup" in flows else np.zeros(n, dtype=bool)
    cool = _values(flows, "cooldown", bool) if "cooldown" in flows else np.zeros(n, dtype=bool)
    # numpy on the columns used, not DataFrame copies: the same values in the same order, so the same sums
    finished_all = _values(flows, "finished", bool)
    fct_all = _values(flows, "fct_ns", np.float64)
    slow_all = _values(flows, "slowdown", np.float64)
    timeouts_all = _timeouts(flows)
    measured = ~warm & ~cool
    cfg = dict(config) if config is not None else {}
    bin_edges = (cfg.get("output") or {}).get("bins", DEFAULT_BINS)
    bins_of = _bin_index(_values(flows, "size_bytes", None), bin_edges)
    bins: dict[str, Any] = {}
    for i, (name, (lo, hi)) in enumerate(_edges(bin_edges).items()):
        entry = {"min_bytes_exclusive": lo, "max_bytes": None if math.isinf(hi) else hi}
        rows = measured & (bins_of == i)
        entry.update(_bin_stats(finished_all[rows], fct_all[rows], slow_all[rows], timeouts_all[rows]))
        bins[name] = entry
    bins["all"] = {
        "min_bytes_exclusive": 0, "max_bytes": None,
        **_bin_stats(finished_all[measured], fct_all[measured], slow_all[measured], timeouts_all[measured]),
    }

    stats = dict(engine_stats)
    sim_ps = stats.get("sim_time_ps")
    summary: dict[str, Any] = {
        "name": cfg.get("name"),
        "scheme": (cfg.get("scheme") or {}).get("name"),
        "seed": cfg.get("seed"),
        "flows": int(n),
        "warmup_flows": int(warm.sum()),
        "cooldown_flows": int(cool.sum()),
        "measured_flows": int(measured.sum()),
        "finished_flows": int(finished_all.sum()),
        "unfinished_flows": int((~finished_all).sum()),
        **deadline_stats(flows, measured),
        "bins": bins,
        "drops": stats.get("drops"),
        "drops_per_tier": stats.get("drops_per_tier"),
        "ecn_marks": stats.get("ecn_marks"),
        **_pfc_stats(stats),
        "retransmits": _column_sum(flows, "retransmits"),
        "spurious_retransmits": _column_sum(flows, "spurious_retransmits"),
        "sim_time_ns": None if sim_ps is None else sim_ps / 1000.0,
        "wall_seconds": stats.get("wall_seconds"),
        "events": stats.get("events"),
        "events_per_second": stats.get("events_per_second"),
        "hit_time_limit": stats.get("hit_time_limit"),
        "bin_edges": bin_edges,
        "percentiles": f"numpy.percentile, method={PERCENTILE_METHOD!r}, over finished measured flows",
        "engine": stats,
    }
    if config is not None:
        summary["config"] = cfg
    return summary


# --------------------------------------------------------------------------------------------------------------
# Terminal tables


def fmt_scaled(value: Any, scale: float = 1.0, digits: int = 1) -> str:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "-"
    return f"{value / scale:,.{digits}f}"


def format_table(header: list[str], rows: list[list[str]], align: str) -> str:
    """A plain-text table: columns padded to their widest cell, ``align`` gives "l" or "r" per column."""
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]

    def line(cells: list[str]) -> str:
        return "  ".join(c.ljust(w) if a == "l" else c.rjust(w) for c, w, a in zip(cells, widths, align)).rstrip()

    return "\n".join([line(header), *(line(r) for r in rows)])


def summary_table(summary: Mapping[str, Any]) -> str:
    """A plain-text table of one run's summary: one row per bin, FCT in microseconds, then the run's totals."""
    header = ["bin", "flows", "finished", "mean FCT (us)", "p99 FCT (us)", "mean slowdown", "p99 slowdown"]
    rows = []
    for name in SUMMARY_BINS:
        b = summary["bins"][name]
        rows.append([
            name,
            f"{b['count']:,}",
            f"{b['finished']:,}",
            fmt_scaled(b["mean_fct_ns"], 1000.0),
            fmt_scaled(b["p99_fct_ns"], 1000.0),
            fmt_scaled(b["mean_slowdown"], digits=2),
            fmt_scaled(b["p99_slowdown"], digits=2),
        ])
    lines = [format_table(header, rows, "lrrrrrr")]
    lines.append(_totals_line(summary))
    if summary.get("deadline_flows"):
        lines.append(deadline_line(summary))
    derived = summary.get("derived_thresholds") if summary.get("thresholds_derived") else None
    if derived:
        values = ", ".join(f"{b:,}" for b in derived["thresholds_bytes"])
        lines.append(
            f"scheme.thresholds_bytes not given: derived by the PIAS paper's method for {derived['cdf']} at load "
            f"{derived['load']:g}, {derived['queues']} queues: {values}"
        )
    lines += timeout_notes({str(summary.get("scheme") or "run"): summary})
    return "\n".join(lines)


def _totals_line(summary: Mapping[str, Any]) -> str:
    parts = [
        f"{summary['flows']:,} flows ({summary['warmup_flows']:,} warm-up, "
        + (f"{summary['cooldown_flows']:,} cool-down, " if summary.get("cooldown_flows") else "")
        + f"{summary['unfinished_flows']:,} unfinished)"
    ]
    sim_ns, wall = summary.get("sim_time_ns"), summary.get("wall_seconds")
    if sim_ns is not None and wall is not None:
        parts.append(f"simulated {sim_ns / 1e9:.4g} s in {wall:.3g} s wall")
    events, eps = summary.get("events"), summary.get("events_per_second")
    if events is not None:
        rate = f" ({eps / 1e6:.3g} M/s)" if eps else ""
        parts.append(f"{events:,} events{rate}")
    if summary.get("drops") is not None:
        parts.append(f"drops {summary['drops']:,}")
    if summary.get("ecn_marks") is not None:
        parts.append(f"ECN marks {summary['ecn_marks']:,}")
    if summary.get("pfc_pause_frames"):
        parts.append(f"PFC pauses {summary['pfc_pause_frames']:,}")
    if summary.get("hit_time_limit"):
        parts.append(stop_reason(summary))
    return "; ".join(parts)


def stop_reason(summary: Mapping[str, Any]) -> str:
    """What stopped a run that still had events when it ended (``hit_time_limit``): the clock reached
    ``run.time_limit_ms`` while flows were running, or the only events left lay after the limit (e.g. flows that
    generate their data at a few bit/s, or start later), so the simulated time ends short of it."""
    limit_ms = (summary.get("config") or {}).get("run", {}).get("time_limit_ms")
    sim_ns = summary.get("sim_time_ns")
    unfinished = summary.get("unfinished_flows", 0)
    if limit_ms is None or sim_ns is None or sim_ns >= 0.99 * limit_ms * 1e6:
        return f"STOPPED AT THE TIME LIMIT with {unfinished:,} flows unfinished"
    return (f"STOPPED: nothing left to simulate before the time limit ({limit_ms:g} ms) after {sim_ns / 1e6:.4g} ms; "
            f"the next events of the {unfinished:,} unfinished flows fall after it (data generated too slowly, or "
            "flows starting later)")


def deadline_line(summary: Mapping[str, Any]) -> str:
    """One line on a run's deadlines: application throughput, flows that met their deadline, terminated."""
    return (f"application throughput {fmt_scaled(100 * summary['application_throughput'], digits=1)}%: "
            f"{summary.get('met_deadline_flows', 0):,} of {summary['deadline_flows']:,} measured flows with a "
            f"deadline met it; {summary.get('terminated_flows', 0):,} flows terminated")


def compare_table(summaries: Mapping[str, Mapping[str, Any]]) -> str:
    """One plain-text table comparing runs (e.g. schemes) bin by bin: mean and p99 FCT in us, slowdown."""
    header = ["bin", "run", "flows", "mean FCT (us)", "p99 FCT (us)", "mean slowdown", "p99 slowdown", "unfinished"]
    rows = []
    for name in SUMMARY_BINS:
        for i, (label, s) in enumerate(summaries.items()):
            b = s["bins"][name]
            rows.append([
                name if i == 0 else "",
                label,
                f"{b['count']:,}",
                fmt_scaled(b["mean_fct_ns"], 1000.0),
                fmt_scaled(b["p99_fct_ns"], 1000.0),
                fmt_scaled(b["mean_slowdown"], digits=2),
                fmt_scaled(b["p99_slowdown"], digits=2),
                f"{b['unfinished']:,}",
            ])
    deadlines = [f"{label}: {deadline_line(s)}" for label, s in summaries.items() if s.get("deadline_flows")]
    return "\n".join([format_table(header, rows, "llrrrrrr"), *deadlines, *timeout_notes(summaries)])


#: A p99 at least this many times the p99 of the same bin's flows without a timeout is explained by a note...
TIMEOUT_NOTE_RATIO = 2.0
#: ... when at most this share of the bin's flows had a timeout (more is not a tail effect: the mean shows it too).
TIMEOUT_NOTE_MAX_SHARE = 0.1


def _duration(us: float) -> str:
    return f"{us / 1000:g} ms" if us >= 1000 else f"{us:g} us"


def timeout_notes(summaries: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """One line per run and bin whose p99 FCT is set by a few flows that hit a retransmission timeout: the p99
    is at least :data:`TIMEOUT_NOTE_RATIO` times the p99 of the bin's flows that had none, and at most
    :data:`TIMEOUT_NOTE_MAX_SHARE` of the bin's flows had one. Summaries written before the no-timeout
    statistics existed give no notes."""
    notes = []
    for label, s in summaries.items():
        config = s.get("config") or {}
        scheme = config.get("scheme") or {}
        # the timer the scheme's timeouts are (its row: TCP's RTO, Homa's receivers' RESEND rounds)
        row = scheme_table.row(str(scheme.get("name"))) if scheme.get("name") else None
        timer = row["timer"] if row is not None else {"key": "transport.rto_min_us", "label": "RTOmin"}
        section, _, key = timer["key"].partition(".")
        rto = (config.get(section) or {}).get(key)
        rto_text = f" ({timer['label']} {_duration(float(rto))})" if rto is not None else ""
        for name in SUMMARY_BINS:
            b = s["bins"][name]
            p99, clean, hit = b.get("p99_fct_ns"), b.get("no_timeout_p99_fct_ns"), b.get("with_timeouts")
            if p99 is None or clean is None or not hit or p99 < TIMEOUT_NOTE_RATIO * clean:
                continue
            if hit > TIMEOUT_NOTE_MAX_SHARE * b["count"]:
                continue
            notes.append(
                f"note: {label}, {name} flows: p99 FCT {fmt_scaled(p99, 1000.0)} us comes from the {hit:,} of "
                f"{b['count']:,} flows that hit a timeout{rto_text}; {fmt_scaled(clean, 1000.0)} us without them"
            )
    return notes
