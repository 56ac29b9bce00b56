"""Run one experiment: generate its flows, hand them to the engine, and join the engine's per-flow columns into
one DataFrame row per flow (columns documented in docs/results.md).

The engine counts time in integer picoseconds; the table converts to nanoseconds as float64 by an exact
division by 1000 (FCT is subtracted in integers first, so it is exact to the picosecond up to 2^53 ps, about
2.5 hours of simulated time).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from fctlab.analyze import size_bin, summarize
from fctlab.config import ConfigError, Experiment
from fctlab.fabric import NEVER_PS, host_pods, host_racks, u32_or_none
from fctlab.results import Result
from fctlab.scheme_table import threshold_schemes
from fctlab.workloads import FlowColumns, column

if TYPE_CHECKING:
    import pandas as pd


#: Columns of the flow table, in order (trace extras such as query_id or lower_bytes follow them).
FLOW_COLUMNS = (
    "flow_id", "src", "dst", "size_bytes", "start_ns", "finish_ns", "fct_ns", "ideal_fct_ns", "slowdown",
    "finished", "started", "sender_done_ns", "retransmits", "timeouts", "bytes_sent", "bytes_delivered", "bytes_dropped",
    "ecn_marked", "probes", "fast_recoveries", "priority_losses", "spurious_retransmits", "ooo_max_segments",
    "queue_delay_ns", "priority", "warmup", "cooldown", "size_bin", "deadline_ns", "met_deadline", "terminated", "app_done_ns",
    "copy_rate_bps", "man_wait_ns", "man_stopped_ns", "man_preemptions",
)
_WORKLOAD_BASE = ("flow_id", "src", "dst", "size_bytes", "start_ps", "priority", "deadline_ns")


def build_flows(exp: Experiment) -> pd.DataFrame:
    """The experiment's flows (the workload table: flow_id in start order, src, dst, size_bytes, start_ps,
    priority, extras), drawn from ``numpy.random.default_rng(exp.seed)``. A workload that does not fit the
    topology raises ConfigError naming the workload key."""
    flows = workload_columns(exp)
    return flows.frame() if isinstance(flows, FlowColumns) else flows


def _pair_groups(exp: Experiment) -> np.ndarray | None:
    """The host groups that ``workload.pairs`` keeps flows between (None: every pair)."""
    pairs = exp.workload.pairs or "all"
    if pairs == "inter_rack":
        return host_racks(exp.engine)
    if pairs == "inter_pod":
        return host_pods(exp.engine)
    return None


def workload_columns(exp: Experiment) -> pd.DataFrame | FlowColumns:
    """:func:`build_flows` without pandas for a generated workload: its table as
    :class:`~fctlab.workloads.FlowColumns` (a trace is read into a DataFrame). :func:`simulate` takes either;
    the command line uses this so that pandas is imported while the engine runs, not before it starts."""
    from fctlab import workloads

    w = exp.workload
    rng = np.random.default_rng(exp.seed)
    load = w.load
    if load is not None and w.load_bytes == "wire":
        # a wire load counts headers too: the payload load is smaller by mss / (mss + header)
        t = exp.engine["transport"]
        load = load * t["mss_bytes"] / (t["mss_bytes"] + t["header_bytes"])
    key = "workload"
    try:
        if w.trace is not None:
            key = "workload.trace"
            flows = workloads.read_trace(w.trace, rebase=bool(w.trace_rebase))
            if not _trace_has_priority(Path(w.trace)):
                flows = flows.drop(columns=["priority"])
        else:
            pattern = workloads.PATTERNS[w.pattern or "all_to_all"]
            sizes: Any = None
            if pattern.uses_sizes:
                if w.cdf is not None:
                    sizes = workloads.load_cdf(Path(w.cdf) if Path(w.cdf).is_absolute() else w.cdf)
                else:
                    sizes = workloads.UniformSizes(float(w.size_uniform_mean_bytes))
            if pattern.key is not None:
                key = f"workload.{pattern.key}"
            flows = workloads.generate(
                pattern.name, rng=rng, hosts=exp.hosts, host_link_bps=exp.host_link_bps, load=load, sizes=sizes,
                racks=host_racks(exp.engine) if pattern.needs_racks else None, groups=_pair_groups(exp), flows=w.flows,
                start_spread_ns=float(w.start_spread_ns or 0.0), senders=w.senders, receivers=w.receivers,
                receiver=w.receiver, stride=w.stride, staggered_p=w.staggered_p, fan_in=w.fan_in,
                response_bytes=w.response_bytes, queries=w.queries, query_rate_hz=w.query_rate_hz,
            )
            # Generated patterns carry no priority of their own: the scheme's "fixed" priority applies.
            flows = flows.drop(columns=["priority"])
        if w.deadline_mean_ms is not None:  # drawn after the flows, so they leave the flows' draws as they were
            key = "workload.deadline_mean_ms"
            t = exp.engine["transport"]
            size = column(flows, "size_bytes", np.int64)
            floor_ns = None
            if (w.deadline_floor or "ideal") == "ideal":
                from fctlab import _core

                floor_ns = _core.ideal_fct_ns(
                    exp.engine_json(), np.ascontiguousarray(column(flows, "src", np.uint32)),
                    np.ascontiguousarray(column(flows, "dst", np.uint32)), np.ascontiguousarray(size, np.uint64),
                )
            d_ns = workloads.deadlines(
                rng, size, mean_ms=w.deadline_mean_ms,
                host_link_bps=exp.host_link_bps, mss_bytes=int(t["mss_bytes"]), header_bytes=int(t["header_bytes"]),
                fraction=w.deadline_fraction, max_bytes=w.deadline_max_bytes, floor_ns=floor_ns,
            )
            flows = FlowColumns({**{c: column(flows, c) for c in flows.columns}, "deadline_ns": d_ns})
        if w.gen_rate_dist is not None:  # drawn after the flows and deadlines: it leaves their draws as they were
            key = "workload.gen_rate_dist"
            rate_cdf = workloads.load_rate_cdf(w.gen_rate_cdf) if w.gen_rate_cdf is not None else None
            rates = workloads.gen_rates(
                rng, len(flows), dist=w.gen_rate_dist, rate_bps=w.gen_rate_bps, min_bps=w.gen_rate_min_bps,
                max_bps=w.gen_rate_max_bps, cdf=rate_cdf, scale=w.gen_rate_scale or 1.0,
            )
            flows = FlowColumns({**{c: column(flows, c) for c in flows.columns},
                                 "gen_rate_bps": rates.astype(np.float64)})
        if (w.cached_fraction is not None or w.write_chunk_bytes is not None) and "gen_rate_bps" in flows.columns:
            size = column(flows, "size_bytes", np.float64)
            cached = np.floor(size * (w.cached_fraction or 0.0)).astype(np.int64)
            if w.write_chunk_bytes is not None:
                # the chunked writer's first write (see WorkloadConfig.write_chunk_bytes)
                cached = np.maximum(cached, np.minimum(size, w.write_chunk_bytes).astype(np.int64))
            flows = FlowColumns({**{c: column(flows, c) for c in flows.columns}, "cached_bytes": cached})
        if w.size_error is not None:  # its own random stream: the flows' draws stay as they were
            from fctlab.workloads.size_error import size_error_columns

            key = "workload.size_error"
            cols = size_error_columns(column(flows, "size_bytes", np.float64), exp.seed, w.size_error.model_dump())
            flows = FlowColumns({**{c: column(flows, c) for c in flows.columns if c not in cols}, **cols})
        workloads.check_hosts(flows, exp.hosts)
    except ValueError as e:
        if isinstance(e, ConfigError):
            raise
        raise ConfigError(key, str(e)) from None
    return flows


def workload_notes(exp: Experiment, flows: pd.DataFrame | FlowColumns) -> list[str]:
    """What a user should know about these flows before they run, one line each: flows that start after
    ``run.time_limit_ms``, or whose data generation rate makes them generate their last byte after it (they
    cannot finish), trace priorities beyond the switches' queues (they share the
    last queue). Raises ConfigError (``run.time_limit_ms``) when every flow starts after the time limit, since
    such a run would only idle up to the limit."""
    notes = []
    n = len(flows)
    limit_ms = float(exp.engine["run"]["time_limit_ms"])
    start_ps = column(flows, "start_ps", np.uint64)
    if n:
        late = int(np.count_nonzero(start_ps.astype(np.float64) >= limit_ms * 1e9))
        first_ms = float(start_ps.min()) / 1e9
        if late == n:
            raise ConfigError(
                "run.time_limit_ms",
                f"every flow starts after the time limit ({limit_ms:g} ms; the first starts at {first_ms:.6g} ms), "
                "so none would run: raise run.time_limit_ms or the load",
            )
        if late:
            notes.append(f"{late:,} of {n:,} flows start after run.time_limit_ms ({limit_ms:g} ms) and cannot "
                         "finish; raise run.time_limit_ms or the load to include them")
    if "gen_rate_bps" in flows.columns and n:
        # the application model: a flow cannot finish before its last byte is generated, size * 8 / rate after
        # its start (less its cached bytes); flows that only generate their data after the time limit cannot
        rate = column(flows, "gen_rate_bps", np.float64)
        size = column(flows, "size_bytes", np.float64)
        cached = column(flows, "cached_bytes", np.float64) if "cached_bytes" in flows.columns else 0.0
        with np.errstate(divide="ignore", invalid="ignore"):
            ready_ms = start_ps.astype(np.float64) / 1e9 + (size - cached) * 8.0 / rate * 1e3
        slow = int(np.count_nonzero(~np.isnan(rate) & (rate > 0) & (ready_ms > limit_ms)))
        if slow:
            low = float(np.nanmin(np.where(rate > 0, rate, np.nan)))
            notes.append(f"{slow:,} of {n:,} flows generate their data (size / gen_rate_bps) past run.time_limit_ms "
                         f"({limit_ms:g} ms) and cannot finish (the slowest rate is {low:.4g} bit/s); raise the "
                         "rates or run.time_limit_ms")
    queues = int(exp.engine["switch"]["queues"])
    if "priority" in flows and n and exp.workload.trace is not None:
        top = int(column(flows, "priority", np.int64).max())
        if top >= queues:
            notes.append(f"the trace gives priorities up to {top}, but switch.queues = {queues}: a priority p uses "
                         f"queue min(p, {queues - 1}), so priorities {queues - 1} and above share the last queue")
    return notes


def _trace_has_priority(path: Path) -> bool:
    """Whether a trace file has its own priority column (otherwise scheme.priority applies to every flow)."""
    if path.suffix.lower() == ".parquet":
        import pyarrow.parquet as pq

        return "priority" in pq.read_schema(path).names
    import pandas as pd

    return "priority" in [str(c).strip() for c in pd.read_csv(path, nrows=0).columns]


def engine_inputs(flows: pd.DataFrame | FlowColumns) -> dict[str, np.ndarray]:
    """The engine's flow input columns (``fctlab._core.flow_columns()``) of a flow table whose ``flow_id`` is
    0..n-1 in row order: each a contiguous array of the engine's dtype, "none" entries where a trace left a cell
    empty."""
    if not np.array_equal(column(flows, "flow_id"), np.arange(len(flows))):
        raise ValueError("flows: flow_id must be 0..n-1 (the engine numbers flows by position)")
    # the engine's flow inputs, one array per column of its table (names, dtypes and "none" entries from it)
    from fctlab.fabric import flow_columns

    spec = flow_columns()
    inputs: dict[str, np.ndarray] = {}

    def put(name: str, values: np.ndarray) -> None:
        inputs[name] = np.ascontiguousarray(values, dtype=spec[name]["dtype"])

    def copy(name: str) -> None:
        put(name, column(flows, name, spec[name]["dtype"]))

    for name, row in spec.items():
        if row["required"]:
            copy(name)
    if "priority" in flows:
        copy("priority")
    # pFabric ranked by estimate reads the trace's estimate_bytes (the true size where it is missing)
    if "estimate_bytes" in flows.columns:
        est = column(flows, "estimate_bytes", np.float64)
        est = np.where(np.isnan(est), column(flows, "size_bytes", np.float64), est)
        put("estimate_bytes", est.astype(np.uint64))
    # QCLIMB's predicted bounds (a trace annotated by `fctlab predict annotate`)
    if "lower_bytes" in flows.columns and "upper_bytes" in flows.columns:
        copy("lower_bytes")
        copy("upper_bytes")
    # flow dependencies (-1: none) and, for scheme qclimb, the flows handed to PIAS
    if "after_flow" in flows.columns:
        a = column(flows, "after_flow", np.int64)
        bad = np.flatnonzero((a >= np.arange(len(a))) | (a < -1))
        if len(bad):
            raise ValueError(f"flows: flow_id {bad[0]} has after_flow {a[bad[0]]}: a flow may only wait for an earlier flow")
        put("after_flow", u32_or_none(a, "after_flow"))
    if "qclimb" in flows.columns:
        copy("qclimb")
    # connection ids (transport.connections = "trace")
    if "conn" in flows.columns:
        copy("conn")
    # deadlines (relative, ns; NaN: none) -> absolute picoseconds, the engine's "none" for the others
    if "deadline_ns" in flows.columns:
        d = column(flows, "deadline_ns", np.float64)
        has = ~np.isnan(d)
        if has.any():
            start = column(flows, "start_ps", np.uint64)
            ends = np.where(has, start + deadline_ps(np.where(has, d, 0.0)), spec["deadline_ps"]["none"])
            put("deadline_ps", ends.astype(np.uint64))
    # the application model: generation rates (bit/s; NaN or 0: all bytes ready at the start), cached bytes
    if "gen_rate_bps" in flows.columns:
        g = column(flows, "gen_rate_bps", np.float64)
        put("gen_rate_bps", np.where(np.isnan(g), float(spec["gen_rate_bps"]["none"]), np.round(g)).astype(np.uint64))
        if "cached_bytes" in flows.columns:
            copy("cached_bytes")
    # source routes (-1: ECMP)
    if "path" in flows.columns:
        put("path", u32_or_none(column(flows, "path", np.int64), "path"))
    return inputs


#: Engine flow columns that a trace gives under another name (the engine's are in picoseconds).
_TRACE_COLUMN = {"start_ps": "start_ns", "deadline_ps": "deadline_ns"}


def check_flows(exp: Experiment, flows: pd.DataFrame | FlowColumns,
                inputs: dict[str, np.ndarray] | None = None) -> None:
    """Check the flows against what the experiment's scheme and level need of them, as the engine would before it
    simulates anything (``validate::flows``: the largest flow the family counts, the columns the scheme reads,
    source routes and generation rates where they cannot go, paths the flow level cannot hold). Raises
    ConfigError naming ``workload.trace`` with the file, its 1-based row and column for a trace's flow, else
    ``workload``. ``inputs``: the flows' :func:`engine_inputs`, when already built."""
    from fctlab import _core
    from fctlab.workloads.trace import TRACE_SOURCE, trace_cell

    if inputs is None:
        inputs = engine_inputs(flows)
    fault = _core.check_flows(exp.engine_json(), inputs)
    if fault is None:
        return
    message, flow, col, problem = fault
    source = getattr(flows, "attrs", {}).get(TRACE_SOURCE)
    if source is None:
        raise ConfigError("workload", message)
    name = _TRACE_COLUMN.get(col, col) if col is not None else None
    if flow is not None and name is not None:
        where = trace_cell(flows, int(flow), name)
        if where is not None:
            raise ConfigError("workload.trace", f"{where}: {problem}")
    if name is not None and problem is not None:
        raise ConfigError("workload.trace", f"{source['path']}: {problem} (give the trace a {name!r} column)")
    raise ConfigError("workload.trace", f"{source['path']}: {message}")


def _ns(ps: np.ndarray) -> np.ndarray:
    """Integer picoseconds -> float64 nanoseconds; the engine's NEVER becomes NaN."""
    out = ps.astype(np.float64) / 1000.0
    out[ps == NEVER_PS] = np.nan
    return out


def flow_table(
    workload: pd.DataFrame | FlowColumns,
    columns: dict[str, np.ndarray],
    *,
    warmup_flows: int,
    default_priority: int,
    cooldown_flows: int = 0,
    bins: str = "papers",
    consume: bool = False,
) -> pd.DataFrame:
    """Join the workload table and the engine's result columns (both in flow-id order) into the result table:
    :func:`flow_columns_table` as a DataFrame."""
    return flow_columns_table(workload, columns, warmup_flows=warmup_flows, default_priority=default_priority,
                              cooldown_flows=cooldown_flows, bins=bins, consume=consume).frame()


class FlowTable:
    """The result table as numpy columns, computed from the workload and the engine's columns when asked for
    (in :data:`FLOW_COLUMNS` order, the workload's extras after them), without pandas: what ``fctlab run``
    summarises and writes to flows.parquet (importing pandas costs about half a second, several times a
    flow-level run's engine time), one row group at a time, so that a run of millions of flows never holds a
    second copy of its table. ``t[name]`` is a whole column, ``t.rows(lo, hi)`` the columns of rows lo..hi-1
    (and their missing values), ``frame()`` the DataFrame :func:`simulate` returns. ``met_deadline`` is the one
    column with missing values (a flow without a deadline): ``t[name]`` holds False there, :meth:`missing` says
    where."""

    __slots__ = ("_n", "_makers", "_engine", "_consume", "_rows")

    def __init__(self, n: int, makers: dict[str, tuple[Any, tuple[str, ...]]], engine: dict[str, np.ndarray],
                 consume: bool, rows: Any) -> None:
        self._n = n
        self._rows = rows  # (lo, hi) -> the _Rows of that range
        self._makers = makers  # column -> (function of a _Rows, the engine columns it reads)
        self._engine = engine
        self._consume = consume

    def __len__(self) -> int:
        return self._n

    def __contains__(self, name: object) -> bool:
        return name in self._makers

    @property
    def columns(self) -> list[str]:
        return list(self._makers)

    def __getitem__(self, name: str) -> np.ndarray:
        return self._makers[name][0](self._rows(0, self._n))

    def missing(self, name: str, lo: int = 0, hi: int | None = None) -> np.ndarray | None:
        """Where column ``name`` has no value (rows lo..hi-1), or None for a column that always has one."""
        if name != "met_deadline":
            return None
        return self._rows(lo, self._n if hi is None else hi).no_deadline

    def rows(self, lo: int, hi: int) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
        """The columns of rows ``lo..hi-1`` and, for a column with missing values, where they are."""
        r = self._rows(lo, hi)
        return {name: make(r) for name, (make, _) in self._makers.items()}, {"met_deadline": r.no_deadline}

    def batch(self, lo: int, hi: int, engine: dict[str, np.ndarray]) -> tuple[dict[str, np.ndarray],
                                                                              dict[str, np.ndarray]]:
        """:meth:`rows` ``lo..hi-1`` computed from ``engine``, the engine's columns of those rows only (a batch
        ``_core.run`` hands over while it runs) instead of the table's own."""
        r = self._rows(lo, hi, engine, lo)
        return {name: make(r) for name, (make, _) in self._makers.items()}, {"met_deadline": r.no_deadline}

    def reads(self, names: tuple[str, ...]) -> set[str]:
        """The engine columns that these columns of the table are computed from."""
        return {col for name in names if name in self._makers for col in self._makers[name][1]}

    def frame(self) -> pd.DataFrame:
        """The table as a DataFrame (``met_deadline`` as pandas' nullable ``boolean``). Built column by column;
        a table made with ``consume`` drops each engine column once no column still to come reads it."""
        import pandas as pd

        r = self._rows(0, self._n)
        still = {}
        for name, (_, reads) in self._makers.items():
            for col in reads:
                still[col] = still.get(col, 0) + 1
        data: dict[str, Any] = {}
        for name, (make, reads) in self._makers.items():
            values = make(r)
            if name == "met_deadline":
                values = pd.array(values, dtype="boolean")
                values[r.no_deadline] = pd.NA
            data[name] = values
            if self._consume:
                for col in reads:
                    still[col] -= 1
                    if still[col] == 0:
                        self._engine.pop(col, None)
        # copy=False: one block per column, no consolidated second copy of the whole table
        return pd.DataFrame(data, copy=False)


class _Rows:
    """The values rows lo..hi-1 of a flow table share (start, finish, FCT...), each computed once when first
    asked for."""

    def __init__(self, workload: Any, engine: dict[str, np.ndarray], lo: int, hi: int, warm: np.ndarray,
                 cool: np.ndarray, at: int = 0) -> None:
        # (the engine's columns start at row ``at``: 0 for a whole table, lo for a batch of rows)
        self.w, self.e, self.sl, self.esl = workload, engine, slice(lo, hi), slice(lo - at, hi - at)
        self.n = hi - lo
        self.warm, self.cool = warm[self.sl], cool[self.sl]
        self._done: dict[str, Any] = {}

    def engine(self, name: str, dtype: Any = None, default: Any = None) -> Any:
        """The engine's column ``name`` on these rows (None when it is missing and no default is given)."""
        values = self.e.get(name)
        if values is None:
            return default
        values = values[self.esl]
        return values if dtype is None else np.asarray(values, dtype=dtype)

    def workload(self, name: str, dtype: Any = None) -> np.ndarray:
        values = self.w[name][self.sl]
        return values if dtype is None else values.astype(dtype, copy=False)

    def _memo(self, key: str, make: Any) -> Any:
        if key not in self._done:
            self._done[key] = make()
        return self._done[key]

    @property
    def requested_ps(self) -> np.ndarray:
        return self._memo("requested_ps", lambda: self.workload("start_ps", np.uint64))

    @property
    def start_ps(self) -> np.ndarray:
        # the actual start: later than the workload's for a flow that waited for another; a flow that never began
        # (its parent did not finish, or the run stopped first) keeps the workload's start time, with started False
        def make() -> np.ndarray:
            start = self.engine("start_ps", np.uint64)
            return self.requested_ps if start is None else np.where(self.started, start, self.requested_ps)
        return self._memo("start_ps_actual", make)

    @property
    def started(self) -> np.ndarray:
        def make() -> np.ndarray:
            start = self.engine("start_ps", np.uint64)
            return np.ones(self.n, dtype=bool) if start is None else start != NEVER_PS
        return self._memo("started", make)

    @property
    def finish_ps(self) -> np.ndarray:
        return self._memo("finish_ps_u64", lambda: self.engine("finish_ps", np.uint64))

    @property
    def finished(self) -> np.ndarray:
        return self._memo("finished", lambda: self.finish_ps != NEVER_PS)

    @property
    def ideal_ps(self) -> np.ndarray:
        return self._memo("ideal_ps", lambda: self.engine("ideal_fct_ps", np.uint64))

    @property
    def fct_ps(self) -> np.ndarray:
        f = self.finished
        return self._memo("fct_ps", lambda: np.where(f, self.finish_ps - np.where(f, self.start_ps, 0), 0))

    @property
    def terminated(self) -> np.ndarray:
        def make() -> np.ndarray:
            t = self.engine("terminated")
            return np.zeros(self.n, dtype=bool) if t is None else np.asarray(t, dtype=bool)
        return self._memo("terminated_bool", make)

    @property
    def deadline_ns(self) -> np.ndarray:
        def make() -> np.ndarray:
            if "deadline_ns" in self.w:
                return self.workload("deadline_ns", np.float64)
            return np.full(self.n, np.nan)
        return self._memo("deadline_ns", make)

    @property
    def no_deadline(self) -> np.ndarray:
        return self._memo("no_deadline", lambda: np.isnan(self.deadline_ns))

    @property
    def met_deadline(self) -> np.ndarray:
        # deadlines count from the requested start (a flow that waited for another has less time left)
        def make() -> np.ndarray:
            if "deadline_ns" not in self.w:
                return np.zeros(self.n, dtype=bool)
            has = ~self.no_deadline
            due_ps = self.requested_ps + deadline_ps(np.where(has, self.deadline_ns, 0.0))
            met = self.finished & ~self.terminated & (self.finish_ps <= due_ps)
            return np.where(has, met, False)
        return self._memo("met_deadline", make)

    @property
    def man_wait_ns(self) -> np.ndarray:
        def make() -> np.ndarray:
            wait = self.engine("man_wait_ps", np.uint64)
            return np.full(self.n, np.nan) if wait is None else _ns(wait)
        return self._memo("man_wait_ns", make)


def flow_columns_table(
    workload: pd.DataFrame | FlowColumns,
    columns: dict[str, np.ndarray],
    *,
    warmup_flows: int,
    default_priority: int,
    cooldown_flows: int = 0,
    bins: str = "papers",
    consume: bool = False,
) -> FlowTable:
    """Join the workload table and the engine's result columns (both in flow-id order) into the result table, as
    a :class:`FlowTable` that computes its columns when they are asked for.

    Warm-up: the ``warmup_flows`` flows that start first (ties broken by flow id) get ``warmup = True``; cool-down:
    the ``cooldown_flows`` that start last get ``cooldown = True`` (the order is by requested start time, so a
    flow that waited for another keeps its place). ``bins`` names the size-bin edges of the ``size_bin`` column.
    The table reads ``columns`` as long as it lives; ``consume``: its :meth:`~FlowTable.frame` takes the
    engine's columns out of ``columns`` as they are converted, so that each is freed as soon as no column still
    to come needs it (the DataFrame is built without a second, consolidated copy either); this keeps the peak
    memory of a large run near one table's worth.
    """
    missing = [name for name in ("finish_ps", "ideal_fct_ps", "sender_done_ps", *_COUNTERS) if name not in columns]
    if missing:
        raise KeyError(missing[0])
    return _table(workload, columns, warmup_flows=warmup_flows, default_priority=default_priority,
                  cooldown_flows=cooldown_flows, bins=bins, consume=consume)


def _table(workload: pd.DataFrame | FlowColumns, columns: dict[str, np.ndarray], *, warmup_flows: int,
           default_priority: int, cooldown_flows: int, bins: str, consume: bool) -> FlowTable:
    """:func:`flow_columns_table` without the check that ``columns`` holds every engine column (a streamed run's
    table holds only those its summary reads, :func:`_stream_run`)."""
    n = len(workload)
    if not isinstance(workload, FlowColumns):  # a trace's DataFrame: its columns as numpy arrays, once
        workload = FlowColumns({name: column(workload, name) for name in workload.columns})
    order = np.lexsort((column(workload, "flow_id"), column(workload, "start_ps", np.uint64)))
    warm = np.zeros(n, dtype=bool)
    warm[order[:warmup_flows]] = True
    cool = np.zeros(n, dtype=bool)
    if cooldown_flows > 0:
        cool[order[n - cooldown_flows:]] = True
    del order
    engine = columns

    def ints(name: str) -> Any:
        return (lambda r: np.asarray(r.engine(name)).astype(np.int64)), (name,)

    def fixed(value: Any, dtype: Any) -> Any:
        return lambda r: np.full(r.n, value, dtype=dtype)

    if "priority" in workload:
        priority: Any = lambda r: r.workload("priority", np.int64)  # noqa: E731
    else:
        priority = fixed(default_priority, np.int64)

    def slowdown(r: _Rows) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(r.finished & (r.ideal_ps > 0), r.fct_ps.astype(np.float64) / r.ideal_ps.astype(np.float64),
                            np.nan)

    def copy_rate(r: _Rows) -> np.ndarray:
        # RAX's measured copy rate (0 from the engine for flows it does not measure: NaN here)
        rate = np.asarray(r.engine("copy_rate_bps", default=np.zeros(r.n)), dtype=np.float64)
        return np.where(rate > 0, rate, np.nan)

    # HyLine's manager: time to the first CTS (NaN for flows it never scheduled), time stopped, preemptions
    def man_stopped(r: _Rows) -> np.ndarray:
        stopped = r.engine("man_stopped_ps", np.float64)
        if stopped is None:
            return np.full(r.n, np.nan)
        stopped = stopped / 1000.0
        stopped[np.isnan(r.man_wait_ns)] = np.nan
        return stopped

    def man_preemptions(r: _Rows) -> np.ndarray:
        value = r.engine("man_preemptions", np.int64)
        return np.zeros(r.n, np.int64) if value is None else value

    def queue_delay(r: _Rows) -> np.ndarray:
        # the TCP family's mean time in queues per data packet (NaN without data packets, or for other families)
        total = r.engine("queue_delay_ps", np.float64)
        if total is None:
            return np.full(r.n, np.nan)
        n = r.engine("data_arrivals", np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(n > 0, total / 1000.0 / n, np.nan)

    start = ("start_ps",)
    finish = ("start_ps", "finish_ps")
    makers: dict[str, tuple[Any, tuple[str, ...]]] = {
        "flow_id": (lambda r: r.workload("flow_id", np.int64), ()),
        "src": (lambda r: r.workload("src", np.int64), ()),
        "dst": (lambda r: r.workload("dst", np.int64), ()),
        "size_bytes": (lambda r: r.workload("size_bytes", np.int64), ()),
        "start_ns": (lambda r: r.start_ps.astype(np.float64) / 1000.0, start),
        "finish_ns": (lambda r: _ns(r.finish_ps), finish),
        "fct_ns": (lambda r: np.where(r.finished, r.fct_ps.astype(np.float64) / 1000.0, np.nan), finish),
        "ideal_fct_ns": (lambda r: r.ideal_ps.astype(np.float64) / 1000.0, ("ideal_fct_ps",)),
        "slowdown": (slowdown, (*finish, "ideal_fct_ps")),
        "finished": (lambda r: r.finished, ("finish_ps",)),
        "started": (lambda r: r.started, start),
        "sender_done_ns": (lambda r: _ns(r.engine("sender_done_ps", np.uint64)), ("sender_done_ps",)),
        **{name: ints(name) for name in _COUNTERS},
        "queue_delay_ns": (queue_delay, ("queue_delay_ps", "data_arrivals")),
        "priority": (priority, ()),
        "warmup": (lambda r: r.warm, ()),
        "cooldown": (lambda r: r.cool, ()),
        "size_bin": (lambda r: size_bin(r.workload("size_bytes", np.int64), bins), ()),
        "deadline_ns": (lambda r: r.deadline_ns, ()),
        "met_deadline": (lambda r: r.met_deadline, (*finish, "terminated")),
        "terminated": (lambda r: r.terminated, ("terminated",)),
        "app_done_ns": (lambda r: _ns(np.asarray(r.engine("app_done_ps", default=np.full(r.n, NEVER_PS)),
                                                 dtype=np.uint64)), ("app_done_ps",)),
        "copy_rate_bps": (copy_rate, ("copy_rate_bps",)),
        "man_wait_ns": (lambda r: r.man_wait_ns, ("man_wait_ps",)),
        "man_stopped_ns": (man_stopped, ("man_wait_ps", "man_stopped_ps")),
        "man_preemptions": (man_preemptions, ("man_preemptions",)),
    }
    for extra in workload.columns:
        if extra not in _WORKLOAD_BASE:
            makers[extra] = ((lambda name: lambda r: r.workload(name))(extra), ())
    return FlowTable(n, makers, engine, consume,
                     lambda lo, hi, e=engine, at=0: _Rows(workload, e, lo, hi, warm, cool, at))


#: The engine's per-flow counters, each an int64 column of the table under the same name.
_COUNTERS = ("retransmits", "timeouts", "bytes_sent", "bytes_delivered", "bytes_dropped", "ecn_marked", "probes",
             "fast_recoveries", "priority_losses", "spurious_retransmits", "ooo_max_segments")


def deadline_ps(deadline_ns: np.ndarray) -> np.ndarray:
    """Relative deadlines in ns (no NaN) as whole picoseconds, rounded up (so a deadline floored at a flow's ideal
    FCT or transmission time stays at or above it) and at least 1 ps (the engine wants a deadline after the
    start)."""
    return np.maximum(np.ceil(np.asarray(deadline_ns, dtype=np.float64) * 1000.0), 1.0).astype(np.uint64)


#: Seconds between the calls of a ``progress`` callback of :func:`simulate`.
PROGRESS_SECONDS = 0.5


def _run_reporting(config_json: str, inputs: dict[str, np.ndarray], report: Any, threads: int,
                   **batches: Any) -> tuple[Any, str]:
    """``_core.run`` on a worker thread while this thread calls ``report(flows_done, total)`` every
    PROGRESS_SECONDS and once at the end (``batches``: its on_batch and batch_rows, if given)."""
    import threading

    from fctlab import _core

    counter = _core.Progress()
    total = len(inputs["src"])
    box: dict[str, Any] = {}

    def work() -> None:
        try:
            box["out"] = _core.run(config_json, inputs, counter, threads, **batches)
        except BaseException as e:  # handed to the calling thread
            box["error"] = e

    worker = threading.Thread(target=work, name="fctlab-engine", daemon=True)
    worker.start()
    while worker.is_alive():
        worker.join(PROGRESS_SECONDS)
        if worker.is_alive():
            report(counter.flows_done, total)
    if "error" in box:
        raise box["error"]
    report(counter.flows_done, total)
    return box["out"]


def default_threads(exp: Experiment) -> int:
    """The engine threads a run of ``exp`` should use when it has the machine to itself: 2 on a machine with two
    cores or more when the fabric's host links hold enough packets within their propagation delay for the two
    sides to work without waiting on each other every few events (the PIAS fabric: yes; the QCLIMB testbed's
    1 us links: no, it runs 1.7x slower on two threads) and its paths cross enough switches for the switches'
    side to have a fair share of the work (a leaf-spine or fat tree: yes; a single switch: no, 32 hosts on 20 us
    links ran 0.54 s on two threads against 0.42 s on one), else 1. The results are the same either way."""
    from fctlab import _core

    if (os.cpu_count() or 1) < 2:
        return 1
    return 2 if _core.two_threads_worthwhile(exp.engine_json()) else 1


def simulate(exp: Experiment, progress: Any = None, flows: pd.DataFrame | None = None, threads: int = 1,
             frame: bool = True, write_to: str | Path | None = None) -> Result:
    """Run an experiment and return its :class:`Result`.

    ``progress`` is an optional ``fctlab._core.Progress`` whose ``flows_done`` another thread may poll while
    this call runs (the engine releases the GIL), or a callback ``progress(flows_done, flows_total)``: it is
    called in the calling thread about every ``PROGRESS_SECONDS`` while the engine runs (on another thread), and
    once more at the end with the final count (e.g. ``lambda done, total: print(f"{done}/{total}")``, or a tqdm
    bar's update). An exception it raises ends the call (the engine's thread is left to finish on its own). ``flows`` reuses a workload table from :func:`build_flows`
    (e.g. to run several schemes on the same flows), or the :class:`~fctlab.workloads.FlowColumns` of
    :func:`workload_columns`; by default it is built from the experiment. ``threads`` (>= 1) only changes
    the speed: on two threads the engine simulates the hosts and the switches side by side, on more the switches
    are split into groups, one thread each, with bit-identical results; a fabric that cannot use them all uses
    fewer (``stats["threads"]``, and ``stats["threads_note"]`` says why; a fabric whose host links have no
    propagation delay runs on one). ``frame=False`` leaves the result's ``flows`` as a :class:`FlowTable` (numpy
    columns; ``.frame()`` makes the DataFrame) so that pandas is never imported: ``fctlab run`` writes its results
    that way (:func:`fctlab.write_results` takes either).

    ``write_to``: a results folder (created if needed) that a flow-level run (``run.level = "flow"``) writes its
    flows.parquet to while the engine runs, a row group per batch of ``results.PARQUET_ROWS`` flows as soon as
    they and every flow before them are done (finished or given up): the same file :func:`fctlab.write_results` writes of the
    whole table, without the whole table ever being held (see :func:`_stream_run`). The result's ``flows`` is then
    None and ``flows_file`` the file (:func:`fctlab.write_results` to the same folder leaves it as it is). The
    packet level ignores it: it returns its table whole, as without it.
    """
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
        raise ValueError(f"threads: must be an integer >= 1 (got {threads!r})")
    from fctlab import _core

    if flows is None:
        flows = workload_columns(exp)
    if not isinstance(flows, FlowColumns):
        import pandas as pd

        if not flows["flow_id"].is_monotonic_increasing:
            flows = flows.sort_values("flow_id", kind="stable")
        if not isinstance(flows.index, pd.RangeIndex) or flows.index.start != 0 or flows.index.step != 1:
            flows = flows.reset_index(drop=True)
    inputs = engine_inputs(flows)
    check_flows(exp, flows, inputs)
    from fctlab.check import check, summary_entry

    checked = check(exp, flows)  # what summary.json records of the pre-run check (warnings, fabric, cost)
    if progress is not None and not isinstance(progress, _core.Progress):
        if not callable(progress):
            raise ValueError(f"progress: must be a fctlab._core.Progress or a callable(done, total) (got {progress!r})")

        def run(**batches: Any) -> tuple[Any, str]:
            return _run_reporting(exp.engine_json(), inputs, progress, threads, **batches)
    else:
        def run(**batches: Any) -> tuple[Any, str]:
            return _core.run(exp.engine_json(), inputs, progress, threads, **batches)
    flows_file = None
    if write_to is not None and exp.engine["run"]["level"] == "flow":
        table, stats, flows_file = _stream_run(exp, flows, run, Path(write_to))
    else:
        columns, stats_json = run()
        stats = json.loads(stats_json)
        table = flow_columns_table(
            flows,
            columns,
            warmup_flows=exp.workload.warmup_flows,
            cooldown_flows=exp.workload.cooldown_flows,
            default_priority=int(exp.engine["scheme"]["priority"]),
            bins=exp.output.bins,
            consume=frame,  # (a FlowTable handed back keeps reading the engine's columns)
        )
        del columns
    config = exp.to_dict()
    summary = summarize(table, stats, config)
    summary["warnings"] = checked.warnings
    summary["check"] = summary_entry(checked)
    if exp.scheme in threshold_schemes():
        summary["thresholds_derived"] = exp.derived_thresholds is not None
        if exp.derived_thresholds is not None:
            summary["derived_thresholds"] = dict(exp.derived_thresholds)
    if flows_file is not None:  # (the table holds only what the summary read: the file holds the rest)
        return Result(flows=None, summary=summary, stats=stats, config=config,  # type: ignore[arg-type]
                      experiment=exp, flows_file=flows_file)
    return Result(flows=table.frame() if frame else table, summary=summary, stats=stats, config=config,
                  experiment=exp)


#: A streamed run's table columns that the summary reads (:func:`fctlab.analyze.summarize`) and that come from the
#: engine: kept whole, a value a flow, each filled in from its batch's rows as they are written, with the dtype
#: kept (timeouts as the engine counts them; the summary reads them as int64). 23 bytes a flow.
_SUMMARY_KEPT = {"finished": np.bool_, "fct_ns": np.float64, "slowdown": np.float64, "timeouts": np.uint32,
                 "met_deadline": np.bool_, "terminated": np.bool_}
#: The counters the summary only sums (over every flow): summed batch by batch.
_SUMMARY_SUMS = ("retransmits", "spurious_retransmits")


def _stream_run(exp: Experiment, flows: pd.DataFrame | FlowColumns, run: Any,
                out_dir: Path) -> tuple[Any, dict[str, Any], Path]:
    """A flow-level run of :func:`simulate` that writes ``out_dir``/flows.parquet while the engine runs: the
    engine hands its result columns over in batches of ``results.PARQUET_ROWS`` flows in flow-id order
    (``_core.run``'s ``on_batch``: a batch once its flows and every flow before them are done), and each batch
    becomes a row group, computed from the workload's rows and the batch's columns (``FlowTable.batch``) and
    written as :func:`fctlab.write_results` writes a table's (``results.RowGroupWriter``), so the file is the
    same, byte for byte. The summary is computed exactly as a whole run's, by the same function on the same
    values: of each batch's rows it keeps the table columns the summary reads that come from the engine
    (``_SUMMARY_KEPT``: finished, FCT, slowdown, timeouts, met deadline, terminated; 23 bytes a flow; p99s need
    every FCT of a bin, so bins are not summarised batch by batch) and the sums of two counters; the columns that
    come from the workload alone (size, warm-up, deadline) are computed from it at the end (``_SummaryTable``).
    (Where the table cannot be described to pyarrow without pandas, ``results.pandas_metadata``, the batches
    are joined and the table written whole with pandas, as :func:`fctlab.write_results` does then.)"""
    from fctlab.results import FLOWS_FILE, PARQUET_ROWS, atomic_file

    compression = (exp.to_dict().get("output") or {}).get("compression", "zstd")
    # (the table's makers on the workload; the engine's columns come batch by batch)
    table = _table(flows, {}, warmup_flows=exp.workload.warmup_flows, cooldown_flows=exp.workload.cooldown_flows,
                   default_priority=int(exp.engine["scheme"]["priority"]), bins=exp.output.bins, consume=False)
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / FLOWS_FILE
    with atomic_file(path) as f:
        stream = _Stream(table, f, compression)
        try:
            columns, stats_json = run(on_batch=stream, batch_rows=PARQUET_ROWS)
        except BaseException:
            stream.abandon()  # (the file is removed)
            raise
        del columns  # (empty: the batches had them)
        stream.close()
    summary_table: Any = stream.whole if stream.whole is not None else stream.summary
    return summary_table, json.loads(stats_json), path


class _SummaryTable:
    """What :func:`fctlab.analyze.summarize` reads of a streamed run's table: the columns kept while it was
    written (``_SUMMARY_KEPT``), the counters' sums (``_SUMMARY_SUMS``, as 0-d arrays: their ``sum()`` is the
    total) and, from the table itself, the columns that need no engine column; any other column is refused."""

    def __init__(self, table: FlowTable) -> None:
        self.table = table
        self.kept = {name: np.empty(len(table), dtype=dtype) for name, dtype in _SUMMARY_KEPT.items()}
        self.sums = {name: 0 for name in _SUMMARY_SUMS}

    def __len__(self) -> int:
        return len(self.table)

    def __contains__(self, name: object) -> bool:
        return name in self.table

    def __getitem__(self, name: str) -> np.ndarray:
        if name in self.kept:
            return self.kept[name]
        if name in self.sums:
            return np.asarray(self.sums[name], dtype=np.int64)
        if self.table.reads((name,)):
            raise KeyError(f"{name}: not kept by a streamed run (simulation._SUMMARY_KEPT)")
        return self.table[name]

    def add(self, lo: int, hi: int, part: dict[str, np.ndarray]) -> None:
        """Rows lo..hi-1 of the table, as written."""
        for name, values in self.kept.items():
            values[lo:hi] = part[name]
        for name in self.sums:
            self.sums[name] += int(part[name].sum())


class _Stream:
    """``_core.run``'s ``on_batch`` for :func:`_stream_run`: each batch of the engine's columns written as a row
    group, and what the summary reads of its rows kept (``summary``)."""

    def __init__(self, table: FlowTable, f: Any, compression: str) -> None:
        self.table, self.f, self.compression = table, f, compression
        self.summary = _SummaryTable(table)
        self.writer: Any = None
        self.batches: list[tuple[int, dict[str, np.ndarray]]] | None = None  # (only when written whole)
        self.whole: FlowTable | None = None

    def __call__(self, first: int, columns: dict[str, np.ndarray]) -> None:
        hi = first + len(columns["finish_ps"])
        if self.batches is not None:
            self.batches.append((first, columns))
            return
        if self.writer is None:
            from fctlab.results import RowGroupWriter, pandas_metadata

            import pyarrow as pa

            one = _Batch(self.table, first, hi, columns)
            meta = pandas_metadata(one, pa)
            if meta is None:
                self.batches = [(first, columns)]
                return
            self.writer = RowGroupWriter(one, meta, self.f, self.compression)
        part, nulls = self.table.batch(first, hi, columns)
        self.summary.add(first, hi, part)
        self.writer.write(part, nulls)

    def abandon(self) -> None:
        """The run failed: close the writer, whatever it says, and let go of the batches."""
        writer, self.writer, self.batches = self.writer, None, None
        if writer is not None:
            try:
                writer.close()
            except Exception:  # noqa: BLE001 (the run's own error is the one raised)
                pass

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
        if self.batches is not None:
            from fctlab.results import write_frame_parquet

            import pyarrow as pa
            import pyarrow.parquet as pq

            whole = {name: np.concatenate([b[name] for _, b in self.batches]) for name in self.batches[0][1]}
            self.batches = None
            t = self.table
            self.whole = FlowTable(len(t), t._makers, whole, False, lambda lo, hi: t._rows(lo, hi, whole, 0))
            write_frame_parquet(self.whole.frame(), self.f, self.compression, pa, pq)


class _Batch:
    """A batch of a streamed table as ``results.pandas_metadata`` and ``RowGroupWriter`` read a table: its
    columns (``rows``, whatever the range asked: they only read the kinds of the columns)."""

    def __init__(self, table: FlowTable, lo: int, hi: int, columns: dict[str, np.ndarray]) -> None:
        self.args = (table, lo, hi, columns)

    def rows(self, lo: int, hi: int) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
        table, first, _, columns = self.args
        return table.batch(first, first, columns)
