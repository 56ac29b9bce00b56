"""Result files of a run: ``flows.parquet`` (one row per flow), ``summary.json`` and ``config.json``.

Every file is written to a temporary name in its final directory, flushed to disk, and renamed over the final
name with ``os.replace`` (atomic on POSIX), so a run killed mid-write leaves either the old file or the new one,
never half a file. ``summary.json`` is written last: its presence means the run's files are complete.
"""

from __future__ import annotations

import json
import math
import os
import secrets
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

    from fctlab.config import Experiment

FLOWS_FILE = "flows.parquet"
SUMMARY_FILE = "summary.json"
CONFIG_FILE = "config.json"


# --------------------------------------------------------------------------------------------------------------
# What the files hold: the results reference (docs/reference/results.md, fctlab.reference) is rendered from these
# tables, and tests/test_reference.py checks them against what a run writes.


@dataclass(frozen=True)
class ResultField:
    """One column of flows.parquet or one key of summary.json: its name, pandas dtype (columns only), unit ("" for
    none) and meaning (Markdown)."""

    name: str
    dtype: str
    unit: str
    meaning: str


#: The columns of flows.parquet every run writes, in their order.
FLOW_RESULT_COLUMNS: tuple[ResultField, ...] = (
    ResultField("flow_id", "int64", "", "0..n-1, in start order for generated workloads and traces"),
    ResultField("src", "int64", "host id", "the sending host"),
    ResultField("dst", "int64", "host id", "the receiving host"),
    ResultField("size_bytes", "int64", "bytes", "application bytes of the flow"),
    ResultField("start_ns", "float64", "ns",
                "when the flow started (ns): its arrival time, or later for a flow that waited for another "
                "(`after_flow`)"),
    ResultField("finish_ns", "float64", "ns",
                'when the receiver held every byte in order (with `run.fct_at = "sender"`: when the sender had every '
                "byte acknowledged); NaN if the flow did not finish"),
    ResultField("fct_ns", "float64", "ns", "`finish_ns - start_ns`; NaN if unfinished"),
    ResultField("ideal_fct_ns", "float64", "ns",
                "the ideal FCT: the flow alone in the idle fabric ([definitions](../results.md))"),
    ResultField("slowdown", "float64", "ratio", "`fct_ns / ideal_fct_ns`; NaN if unfinished"),
    ResultField("finished", "bool", "", "whether the flow completed before the run's time limit (`run.time_limit_ms`)"),
    ResultField("started", "bool", "",
                "whether the flow began: false when the run stopped first or the flow it waited for (`after_flow`) "
                "never finished (its `start_ns` is then the requested one)"),
    ResultField("sender_done_ns", "float64", "ns", "when the sender had every byte acknowledged; NaN if never"),
    ResultField("retransmits", "int64", "packets", "data packets sent again (fast retransmit, recovery or timeout)"),
    ResultField("timeouts", "int64", "count", "retransmission timeouts"),
    ResultField("bytes_sent", "int64", "bytes",
                "payload bytes put on the wire by the sender, retransmissions included"),
    ResultField("bytes_delivered", "int64", "bytes",
                "payload bytes that reached the receiver host (duplicates included)"),
    ResultField("bytes_dropped", "int64", "bytes",
                "payload bytes dropped in the fabric (`bytes_sent = bytes_delivered + bytes_dropped` once the run is "
                "over)"),
    ResultField("ecn_marked", "int64", "packets", "data packets that arrived with the ECN congestion-experienced mark"),
    ResultField("probes", "int64", "packets",
                "probe packets sent in probe mode (pFabric, PIAS: after repeated timeouts)"),
    ResultField("fast_recoveries", "int64", "count", "loss events found by duplicate ACKs (fast recovery entered)"),
    ResultField("priority_losses", "int64", "count",
                "loss events found by QCLIMB's priority-based detection (retransmissions they triggered)"),
    ResultField("spurious_retransmits", "int64", "segments",
                "spurious retransmissions: data segments that reached the receiver when it already held them (below "
                "its cumulative ACK or already held out of order), counted on arrival, including copies that arrive "
                "after the flow is over. A flow's original segments are sent once, so each such copy means a "
                "retransmission that was not needed (the copy that arrives second may be the original, overtaken by "
                "its retransmission); a retransmission dropped on the way is not counted (earlier results name this "
                "column `duplicate_data`)"),
    ResultField("ooo_max_segments", "int64", "segments", "most segments the receiver held out of order at once"),
    ResultField("queue_delay_ns", "float64", "ns",
                "TCP family at the packet level with run.queue_delay = true: the mean time the flow's data packets spent in queues (the NIC's and"
                " every switch's), each packet's one-way delay from its send stamp (whole ns) to its arrival at the "
                "receiver host less its way through the idle fabric (serialization and propagation on the flow's "
                "ECMP path; duplicates included); NaN for other families, the flow level, and flows none of whose "
                "data arrived"),
    ResultField("priority", "int64", "", "the flow's priority (0 is the highest): the trace's, or `scheme.priority`"),
    ResultField("warmup", "bool", "",
                "the flow is one of the first `workload.warmup_flows` to start; it is left out of the summary"),
    ResultField("cooldown", "bool", "",
                "the flow is one of the last `workload.cooldown_flows` to start; it is left out of the summary"),
    ResultField("size_bin", "string", "", '`"small"`, `"medium"` or `"large"`'),
    ResultField("deadline_ns", "float64", "ns",
                "the time the flow was allowed after its requested start (ns): drawn (`workload.deadline_mean_ms`) or"
                " the trace's; NaN (null in Parquet) for a flow without a deadline"),
    ResultField("met_deadline", "boolean", "",
                "the flow finished (and was not terminated) by its start + `deadline_ns`; null for a flow without a "
                "deadline"),
    ResultField("terminated", "bool", "",
                "a deadline-aware scheme gave up on the flow (D3's and PDQ's Early Termination); such a flow does not"
                " finish"),
    ResultField("app_done_ns", "float64", "ns",
                "TCP family: when the flow's application finished writing its bytes into the send buffer (the "
                "application model); its start for a flow whose bytes were all ready and fit the buffer; later when "
                "it generated them at a rate or a full send buffer blocked it; NaN if it never finished (and for the "
                "explicit-rate family)"),
    ResultField("copy_rate_bps", "float64", "bit/s",
                "RAX and RAX+: the copy rate r_c (bit/s) the sender had measured when the flow closed (the EWMA of "
                "bytes written into the send buffer per interval; the line rate if it never took a sample); NaN for "
                "other schemes"),
    ResultField("man_wait_ns", "float64", "ns",
                "HyLine: the time from the flow's arrival to the manager's first CTS (T_cost and any wait for "
                "bandwidth); NaN for first-class flows, flows never let in, and other schemes"),
    ResultField("man_stopped_ns", "float64", "ns",
                "HyLine: the time the flow spent stopped (STS) after having been let in; NaN where `man_wait_ns` is"),
    ResultField("man_preemptions", "int64", "count",
                "HyLine: how often the manager stopped the flow while it was sending; 0 for other schemes"),
)

#: Columns flows.parquet has only when the workload gives them, after the others.
EXTRA_RESULT_COLUMNS: tuple[ResultField, ...] = (
    ResultField("query_id", "uint32", "", "incast: the query a response belongs to"),
    ResultField("lower_bytes", "uint64", "bytes", "the trace's lower bound of the flow's size"),
    ResultField("upper_bytes", "uint64", "bytes", "the trace's upper bound of the flow's size"),
    ResultField("estimate_bytes", "uint64", "bytes", "the trace's estimate of the flow's size"),
    ResultField("gen_rate_bps", "float64", "bit/s",
                "the application's data generation rate: the trace's, or drawn by `workload.gen_rate_dist`"),
    ResultField("after_flow", "int64", "", "the flow_id this flow waited for, -1 for none"),
    ResultField("qclimb", "bool", "", "false: a flow scheme qclimb scheduled as PIAS"),
    ResultField("cached_bytes", "int64", "bytes", "bytes ready at the start (from `workload.cached_fraction`)"),
)

#: The keys of summary.json (some only in some runs: the meaning says when).
SUMMARY_KEYS: tuple[ResultField, ...] = (
    ResultField("name", "", "", "the experiment's name"),
    ResultField("scheme", "", "", "`scheme.name`"),
    ResultField("seed", "", "", "the run's seed"),
    ResultField("flows", "", "flows", "flows in the run"),
    ResultField("warmup_flows", "", "flows", "flows excluded as warm-up"),
    ResultField("cooldown_flows", "", "flows", "flows excluded as cool-down"),
    ResultField("measured_flows", "", "flows", "`flows - warmup_flows - cooldown_flows`: the flows the bins describe"),
    ResultField("finished_flows", "", "flows", "flows that finished, over all flows (warm-up and cool-down included)"),
    ResultField("unfinished_flows", "", "flows",
                "flows that did not finish, over all flows (warm-up and cool-down included)"),
    ResultField("deadline_flows", "", "flows", "measured flows with a deadline"),
    ResultField("met_deadline_flows", "", "flows", "of those, the flows that met it (`met_deadline`)"),
    ResultField("application_throughput", "", "fraction",
                "`met_deadline_flows / deadline_flows`, the D3 and PDQ papers' metric: a flow that did not finish, or"
                " that a scheme terminated, missed its deadline; null when no measured flow has one. `fctlab run` and"
                " `compare` print it under their tables when a run has deadline flows"),
    ResultField("terminated_flows", "", "flows",
                "flows a deadline-aware scheme gave up on, over all flows (warm-up and cool-down included)"),
    ResultField("bins", "", "", "`small`, `medium`, `large`, `all`: one object each (below)"),
    ResultField("drops", "", "packets", "packets dropped in the run (engine counter)"),
    ResultField("drops_per_tier", "", "packets",
                "the same drops by where the dropping port sits, an object in path order: `host_nic` (a host's NIC "
                "queue), then per switch level `<level>_up` (towards a higher level), `<level>_across` (same level: "
                "the dumbbell's middle link), `<level>_down` (towards a lower level or a host). Leaf-spine: "
                "`host_nic`, `leaf_up`, `spine_down`, `leaf_down` (the four hops between racks, in order); fat tree: "
                "`host_nic`, `edge_up`, `agg_up`, `core_down`, `agg_down`, `edge_down`; single switch: `host_nic`, "
                "`switch_down`; dumbbell: `host_nic`, `switch_across`, `switch_down`. `engine.probe_drops_per_tier` "
                "and `engine.ack_drops_per_tier` count the probes (and SYNs) and the ACKs among them"),
    ResultField("ecn_marks", "", "packets", "packets ECN-marked in the run (engine counter)"),
    ResultField("pfc_pause_frames", "", "frames",
                "PFC (`switch.pfc`): PAUSE frames the switches sent, one per upstream port and priority at each"
                ' transition (0 without PFC, and in `switch.pfc_mode = "next_queue"`)'),
    ResultField("pfc_resume_frames", "", "frames",
                "PFC: RESUME frames the switches sent, counted as `pfc_pause_frames`"),
    ResultField("pfc_paused_us_per_tier", "", "us",
                "PFC: microseconds ports held a queue paused, by where the paused port sits (the tiers of "
                "`drops_per_tier`): for every (port, queue) from the PAUSE's arrival to the RESUME's, or to the end "
                'of the run, summed over the tier\'s ports and their queues (with `switch.pfc_mode = "next_queue"`, '
                "which has no frames: the time the paused queues themselves spent paused, by their own ports' tier); "
                "`engine.pfc_paused_ps_per_tier` has the same in picoseconds (PFC: [schemes](../schemes.md))"),
    ResultField("retransmits", "", "packets",
                "the sum of the per-flow column over every flow of the run (warm-up and cool-down included, like the "
                "engine's counters)"),
    ResultField("spurious_retransmits", "", "segments", "the sum of the per-flow column, as `retransmits`"),
    ResultField("sim_time_ns", "", "ns", "simulated time at the end of the run (ns)"),
    ResultField("wall_seconds", "", "s", "wall-clock time of the engine run (s)"),
    ResultField("events", "", "events", "events the engine processed"),
    ResultField("events_per_second", "", "events/s", "`events / wall_seconds` (on `engine.threads` threads)"),
    ResultField("hit_time_limit", "", "", "true if the run stopped at `run.time_limit_ms` with flows still open"),
    ResultField("bin_edges", "", "",
                '`output.bins`: `"papers"` or `"ns2"` (the bins\' own `min_bytes_exclusive` / `max_bytes` give the '
                "edges)"),
    ResultField("thresholds_derived", "", "",
                "schemes `pias` and `qclimb` only: true when `scheme.thresholds_bytes` was not given and fctlab "
                "derived it from the workload's CDF and load ([experiment](../experiment.md))"),
    ResultField("derived_thresholds", "", "",
                'when `thresholds_derived`: `method` ("PIAS paper §3"), `cdf`, `load`, `queues` and the '
                "`thresholds_bytes` used (`fctlab run` prints them under its table)"),
    ResultField("warnings", "", "",
                "the pre-run check's warnings (`fctlab check`, [experiment](../experiment.md)), one string each, "
                "`key: message` with the numbers behind it; empty when the run is meaningful by every rule"),
    ResultField("check", "", "",
                "what the check measured: `base_rtt_ns` (the fabric's longest base RTT), `bdp_bytes` (that path's "
                "BDP), `tiers` ([tier, ports, mean offered load, most loaded port's] per tier of links) and "
                "`estimate` (`packet_hops`, `events`, `seconds`, `memory_bytes`)"),
    ResultField("percentiles", "", "", "how percentiles are computed ([results](../results.md))"),
    ResultField("engine", "", "",
                "every counter the engine reported, unchanged (e.g. `data_packets_sent`, `ack_packets_sent`, "
                "`drops_per_queue`, `marks_per_queue`, `max_port_occupancy_bytes`, `flows_finished`, `sim_time_ps`, "
                "`threads` (1, or up to N with `--threads N` / `simulate(threads=N)`: one for the hosts and one per "
                "group of switches, as far as the fabric can be split; the results do not depend on it), "
                "`threads_note` (why fewer threads than asked were used; empty otherwise), `thread_wait_seconds` "
                "(split runs: the wall-clock seconds each thread, the hosts' first, waited for the others), "
                "`max_event_queue_len` (split runs: the largest of their queues), and per receiving host (lists indexed by host) `ooo_host_max_bytes`, "
                "`ooo_host_mean_bytes` (time-weighted over the run) and `ooo_host_insert_mean_bytes` (sampled each "
                "time an out-of-order segment is stored): payload bytes held out of order; RAX: `rax_priority_rises` "
                "(times a flow's priority rose) and `rax_reorderings` (fast retransmits suppressed because the flow's"
                " priority had risen and its earlier segments could be overtaken))"),
    ResultField("config", "", "", "the fully resolved experiment (as in config.json)"),
)
#: The keys of each size bin's object in summary.json's ``bins``.
BIN_KEYS: tuple[ResultField, ...] = (
    ResultField("min_bytes_exclusive", "", "bytes", "the bin's lower edge: it holds sizes above it"),
    ResultField("max_bytes", "", "bytes", "the bin's upper edge: it holds sizes up to it; null for no upper edge"),
    ResultField("count", "", "flows", "measured flows (neither warm-up nor cool-down) in the bin"),
    ResultField("finished", "", "flows", "of those, how many completed"),
    ResultField("unfinished", "", "flows", "of those, how many did not complete"),
    ResultField("mean_fct_ns", "", "ns", "mean FCT of the finished flows"),
    ResultField("p99_fct_ns", "", "ns", "99th percentile of their FCT ([how it is computed](../results.md))"),
    ResultField("mean_slowdown", "", "ratio", "mean slowdown of the finished flows"),
    ResultField("p99_slowdown", "", "ratio", "99th percentile of their slowdown"),
    ResultField("with_timeouts", "", "flows",
                "measured flows of the bin with at least one retransmission timeout (`timeouts > 0`), finished or not"),
    ResultField("no_timeout_finished", "", "flows", "finished measured flows of the bin without a timeout"),
    ResultField("no_timeout_mean_fct_ns", "", "ns",
                "mean FCT over those flows only: the PIAS ns-2 scripts' `result.py` collects these (\"w/o "
                "timeouts\") beside the means over all flows"),
    ResultField("no_timeout_p99_fct_ns", "", "ns", "99th percentile of FCT over those flows"),
    ResultField("no_timeout_mean_slowdown", "", "ratio", "mean slowdown over those flows"),
)


def check_output_dir(out: str | Path, key: str = "--out") -> None:
    """Check, without writing anything, that results can be written to ``out``: it is a directory or can be
    made one, in a folder this process may write. Raises ConfigError naming ``key``."""
    from fctlab.config import ConfigError

    out = Path(out)
    if out.exists() and not out.is_dir():
        raise ConfigError(key, f"{out} exists and is not a directory")
    existing = out
    while not existing.exists():  # the nearest folder that exists: the new ones are made in it
        if existing.parent == existing:
            break
        existing = existing.parent
    if not existing.is_dir():
        raise ConfigError(key, f"{out} cannot be created: {existing} is a file, not a directory")
    if not os.access(existing, os.W_OK | os.X_OK):
        why = "is not writable" if existing == out else f"cannot be created: {existing} is not writable"
        raise ConfigError(key, f"{out} {why}")


def jsonable(value: Any) -> Any:
    """A value made strict-JSON safe: NaN/inf become null, numpy scalars and arrays become Python values."""
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if hasattr(value, "tolist") and not isinstance(value, (str, bytes)):
        return jsonable(value.tolist())
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, Path):
        return str(value)
    return value


def atomic_write(path: Path, write: Callable[[IO[bytes]], None]) -> None:
    """Call ``write(file)`` on a temporary file beside ``path``, then rename it to ``path``.

    On any exception the temporary file is removed and ``path`` is left as it was.
    """
    with atomic_file(path) as f:
        write(f)


@contextmanager
def atomic_file(path: Path) -> Iterator[IO[bytes]]:
    """A temporary file beside ``path`` to write to, renamed to ``path`` when the ``with`` block ends (as
    :func:`atomic_write`, for a file written a part at a time, such as flows.parquet while the engine runs).

    On any exception the temporary file is removed and ``path`` is left as it was.
    """
    path = Path(path)
    # Opened with "x" (never clobbers) and the process umask, so the final file gets ordinary permissions.
    tmp = path.parent / f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp"
    try:
        with open(tmp, "xb") as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def write_json(path: Path, data: Any) -> None:
    """Write strict JSON (no NaN), indented, atomically."""
    text = json.dumps(jsonable(data), indent=2, allow_nan=False) + "\n"
    atomic_write(path, lambda f: f.write(text.encode("utf-8")))


@dataclass
class Result:
    """One run: ``flows`` (one row per flow) and ``summary`` (the JSON summary); ``stats`` are the engine's raw
    counters and ``config`` the fully resolved experiment. (Defined here, with the files it is written to and
    read back from; :mod:`fctlab.simulation`, which makes it, imports it.)"""

    flows: pd.DataFrame
    summary: dict[str, Any]
    stats: dict[str, Any] = field(default_factory=dict)
    config: dict[str, Any] = field(default_factory=dict)
    experiment: Experiment | None = field(default=None, repr=False)
    #: A flow-level run of :func:`fctlab.simulation.simulate` with ``write_to``: the flows.parquet it wrote while
    #: the engine ran (``flows`` is then None).
    flows_file: Path | None = None


def write_results(result: Any, out_dir: str | Path, *, compression: str | None = None) -> dict[str, Path]:
    """Write a :class:`fctlab.Result` to ``out_dir`` (created if needed); returns the paths written.

    ``compression`` is the Parquet codec; by default the experiment's ``output.compression`` (zstd).
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    if compression is None:
        compression = (result.config.get("output") or {}).get("compression", "zstd")
    paths = {"flows": out / FLOWS_FILE, "config": out / CONFIG_FILE, "summary": out / SUMMARY_FILE}
    flows = result.flows
    written = getattr(result, "flows_file", None)
    if flows is None and written is not None:  # streamed to a flows.parquet while the engine ran
        if not paths["flows"].exists() or not os.path.samefile(written, paths["flows"]):
            import shutil

            atomic_write(paths["flows"], lambda f: _copy_file(written, f, shutil))
    elif hasattr(flows, "rows"):  # a FlowTable (simulate(frame=False)): numpy columns, written without pandas
        pandas_meta = pandas_metadata(flows, pa)
        if pandas_meta is None:  # a column this writer cannot describe as pandas would: let pandas write it
            flows = flows.frame()
        else:
            atomic_write(paths["flows"], lambda f: _write_columns_parquet(flows, pandas_meta, f, compression, pa, pq))
    if flows is not None and not hasattr(flows, "rows"):
        atomic_write(paths["flows"], lambda f: write_frame_parquet(flows, f, compression, pa, pq))
    write_json(paths["config"], result.config)
    write_json(paths["summary"], result.summary)
    return paths


#: Rows converted to Arrow at a time when writing flows.parquet (one row group each): the conversion then
#: holds one slice of the flow table, not a second copy of all of it.
PARQUET_ROWS = 65_536


def write_frame_parquet(df: Any, f: IO[bytes], compression: str, pa: Any, pq: Any) -> None:
    first = pa.Table.from_pandas(df.iloc[:PARQUET_ROWS], preserve_index=False)
    with pq.ParquetWriter(f, first.schema, compression=compression) as w:
        w.write_table(first)
        del first
        for start in range(PARQUET_ROWS, len(df), PARQUET_ROWS):
            chunk = df.iloc[start:start + PARQUET_ROWS]
            w.write_table(pa.Table.from_pandas(chunk, schema=w.schema, preserve_index=False))


def pandas_metadata(table: Any, pa: Any) -> bytes | None:
    """The ``pandas`` schema metadata pyarrow's ``Table.from_pandas`` would write for ``table.frame()`` (so that
    ``pandas.read_parquet`` gives back the same dtypes, ``met_deadline`` as nullable ``boolean``), made without
    importing pandas; None when a column is of a kind this does not cover (the caller then lets pandas write),
    or pandas is not installed or older than 3 (whose string columns are described differently).
    tests/test_results.py checks it against pyarrow's own on every column kind a run writes."""
    from importlib.metadata import PackageNotFoundError, distribution

    try:  # (the Version line read directly: metadata() would import an e-mail parser for it)
        text = distribution("pandas").read_text("METADATA") or ""
    except PackageNotFoundError:
        return None
    pandas_version = next((line.split(":", 1)[1].strip() for line in text.splitlines()
                           if line.startswith("Version:")), "")
    if not pandas_version.split(".")[0].isdigit() or int(pandas_version.split(".")[0]) < 3:
        return None
    entries = []
    first, nulls = table.rows(0, 0)  # (no rows: only the dtypes)
    for name, values in first.items():
        kind = values.dtype.kind
        if name in nulls:
            if kind != "b":
                return None
            pandas_type, numpy_type = "bool", "boolean"
        elif kind in "biuf":
            pandas_type = numpy_type = str(values.dtype)
        elif kind == "O" and name == "size_bin":  # pandas 3 stores strings as its "str" dtype: Arrow large_string
            pandas_type, numpy_type = "object", "str"
        else:
            return None
        entries.append({"name": name, "field_name": name, "pandas_type": pandas_type, "numpy_type": numpy_type,
                        "metadata": None})
    meta = {"index_columns": [], "column_indexes": [], "columns": entries, "attributes": {},
            "creator": {"library": "pyarrow", "version": pa.__version__}, "pandas_version": pandas_version}
    return json.dumps(meta).encode("utf8")


def _copy_file(path: Any, f: IO[bytes], shutil: Any) -> None:
    with open(path, "rb") as src:
        shutil.copyfileobj(src, f, 1 << 20)


def _write_columns_parquet(table: Any, pandas_meta: bytes, f: IO[bytes], compression: str, pa: Any, pq: Any) -> None:
    """Write a :class:`fctlab.simulation.FlowTable` as :func:`write_frame_parquet` writes its DataFrame: the same
    schema, metadata and row groups of PARQUET_ROWS rows, each computed from the workload's and the engine's
    columns on its rows only (the whole table is never held)."""
    with RowGroupWriter(table, pandas_meta, f, compression) as w:
        for start in range(0, max(len(table), 1), PARQUET_ROWS):
            w.write(*table.rows(start, min(start + PARQUET_ROWS, len(table))))


class RowGroupWriter:
    """flows.parquet from a :class:`fctlab.simulation.FlowTable`'s columns, one row group per :meth:`write` of
    some rows' columns (``FlowTable.rows``): what :func:`write_results` writes of a table, and what a run that
    streams its table writes a batch of flows at a time as the engine hands them over (PARQUET_ROWS a batch: the
    same row groups, so the same file). ``pandas_meta``: :func:`pandas_metadata`'s."""

    def __init__(self, table: Any, pandas_meta: bytes, f: IO[bytes], compression: str) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        self._pa = pa
        first, _ = table.rows(0, 0)
        self._fields = [
            pa.field(name, pa.large_string() if values.dtype.kind == "O" else pa.from_numpy_dtype(values.dtype))
            for name, values in first.items()
        ]
        self._schema = pa.schema(self._fields, metadata={b"pandas": pandas_meta})
        self._writer = pq.ParquetWriter(f, self._schema, compression=compression)

    def write(self, part: Mapping[str, Any], nulls: Mapping[str, Any]) -> None:
        """One row group: the columns of its rows and, for a column with missing values, where they are."""
        pa = self._pa
        arrays = [_arrow_array(part[field.name], field.type, nulls.get(field.name), pa) for field in self._fields]
        self._writer.write_table(pa.Table.from_arrays(arrays, schema=self._schema))

    def close(self) -> None:
        self._writer.close()

    def __enter__(self) -> RowGroupWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _arrow_array(values: Any, arrow_type: Any, missing: Any, pa: Any) -> Any:
    """A numpy column as an Arrow array as ``Table.from_pandas`` makes it (NaN stored as null, ``missing`` rows
    null), built from its buffers: ``pyarrow.array`` on a numpy array imports pandas (to ask whether it is a
    pandas object), which is what this avoids."""
    import numpy as np

    if values.dtype.kind == "O":  # strings (size_bin): large_string's 64-bit offsets and UTF-8 bytes
        return _large_strings(values, arrow_type, pa)
    if values.dtype.kind == "f":
        nan = np.isnan(values)
        missing = nan if missing is None else missing | nan
    if values.dtype.kind == "b":
        data = np.packbits(values, bitorder="little")
    else:
        data = np.ascontiguousarray(values)
    nulls = 0 if missing is None else int(np.count_nonzero(missing))
    validity = pa.py_buffer(np.packbits(~missing, bitorder="little")) if nulls else None
    return pa.Array.from_buffers(arrow_type, len(values), [validity, pa.py_buffer(data)], null_count=nulls)


def _large_strings(values: Any, arrow_type: Any, pa: Any) -> Any:
    """An object array of str as an Arrow large_string array. A column of a few distinct strings (size_bin:
    three) is laid out with numpy, string by string, rather than one Python call per row: on 10,000,000 rows
    that is seconds."""
    import numpy as np

    names = list(dict.fromkeys(values.tolist()))
    offsets = np.zeros(len(values) + 1, dtype=np.int64)
    if len(names) > 16:
        encoded = [str(v).encode("utf-8") for v in values.tolist()]
        np.cumsum([len(b) for b in encoded], out=offsets[1:])
        data = np.frombuffer(b"".join(encoded), dtype=np.uint8)
    else:
        encoded = [str(v).encode("utf-8") for v in names]
        rows = [np.flatnonzero(values == name) for name in names]
        lengths = np.zeros(len(values), dtype=np.int64)
        for b, where in zip(encoded, rows):
            lengths[where] = len(b)
        np.cumsum(lengths, out=offsets[1:])
        data = np.zeros(int(offsets[-1]), dtype=np.uint8)
        for b, where in zip(encoded, rows):
            first = offsets[where]
            for j, byte in enumerate(b):
                data[first + j] = byte
    return pa.Array.from_buffers(arrow_type, len(values), [None, pa.py_buffer(offsets), pa.py_buffer(data)],
                                 null_count=0)


def unreadable(run_dir: str | Path) -> str | None:
    """Why a finished run's files do not read back (one line), or None when they do: summary.json and
    config.json must be JSON objects, and flows.parquet's footer must read and hold the summary's flow count.
    Cheap (the flow table itself is not read): it catches truncated and overwritten files."""
    import pyarrow.parquet as pq

    out = Path(run_dir)
    summary: Any = None
    for name in (SUMMARY_FILE, CONFIG_FILE):
        path = out / name
        if name == CONFIG_FILE and not path.exists():
            continue
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as e:
            return f"{path} does not read back ({' '.join(str(e).split())})"
        if not isinstance(data, dict):
            return f"{path} does not read back (not a JSON object)"
        if name == SUMMARY_FILE:
            summary = data
    path = out / FLOWS_FILE
    try:
        rows = pq.read_metadata(path).num_rows
    except Exception as e:  # noqa: BLE001  (pyarrow raises several types for a damaged file)
        return f"{path} does not read back ({' '.join(str(e).split())})"
    flows = summary.get("flows") if summary else None
    if isinstance(flows, int) and rows != flows:
        return f"{path} does not read back (it has {rows} rows, summary.json says {flows} flows)"
    return None


def read_results(out_dir: str | Path) -> Any:
    """Read a results directory back into a :class:`fctlab.Result` (``experiment`` is None)."""
    import pandas as pd

    out = Path(out_dir)
    summary = json.loads((out / SUMMARY_FILE).read_text(encoding="utf-8"))
    config_path = out / CONFIG_FILE
    config = json.loads(config_path.read_text(encoding="utf-8")) if config_path.exists() else {}
    flows = pd.read_parquet(out / FLOWS_FILE)
    return Result(flows=flows, summary=summary, stats=summary.get("engine", {}), config=config)
