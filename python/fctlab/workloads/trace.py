"""Flow traces: a user's flows read from CSV or Parquet into the flow-table format, every value checked, errors
naming the column and the first bad row."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from fctlab.workloads.checks import I64_MAX, U32_MAX, WorkloadError, first_true, fmt_number
from fctlab.workloads.table import build_table

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "TraceColumn", "TRACE_COLUMNS", "TRACE_REQUIRED", "TRACE_OPTIONAL", "MAX_START_NS", "TRACE_SOURCE", "read_trace",
    "trace_cell",
]


def _every_scheme(row: dict[str, Any]) -> bool:
    return True


@dataclass(frozen=True)
class TraceColumn:
    """One column a trace file may have: what :func:`read_trace` accepts, and what the trace-column reference
    (docs/reference/trace-columns.md, ``fctlab.reference``) says of it. The column's type there is the engine's
    (``_core.flow_columns()``, the ``engine`` column it becomes)."""

    name: str
    #: Every trace must have it.
    required: bool
    #: The unit of a value ("" for none).
    unit: str
    #: What a value means and which values are allowed.
    meaning: str
    #: What an empty cell (NaN) means; None: an empty cell is refused, naming the row.
    empty: str | None
    #: Which schemes read it: a test on the facts of a scheme's row (``fctlab.scheme_table.rows()``: family,
    #: protocol, tagging, rank queue; never its name) ...
    reads: Callable[[dict[str, Any]], bool]
    #: ... and under what condition ("" for always).
    when: str
    #: The engine's flow column it becomes (``flows::FLOW_COLUMNS``).
    engine: str
    #: What a cell holds: "integer", "number" (fractions allowed) or "boolean".
    type: str = "integer"


def _tcp_family(row: dict[str, Any]) -> bool:
    return bool(row["family"] == "tcp")


#: Every column of a trace file, required ones first, in the order errors list them.
TRACE_COLUMNS: tuple[TraceColumn, ...] = (
    TraceColumn("src", True, "host id", "the sending host, 0 to hosts - 1", None, _every_scheme, "", "src"),
    TraceColumn("dst", True, "host id", "the receiving host, 0 to hosts - 1, not src", None, _every_scheme, "", "dst"),
    TraceColumn("size_bytes", True, "bytes", "application bytes the flow delivers, an integer >= 1", None,
                _every_scheme, "", "size_bytes"),
    TraceColumn("start_ns", True, "ns", "when the flow arrives, >= 0; fractions are rounded to the picosecond. Rows "
                "may come in any order: flows are sorted by start (stably) and numbered in that order. With "
                "`workload.trace_rebase = true` every start is shifted so that the first is 0 (epoch timestamps)",
                None, _every_scheme, "", "start_ps", type="number"),
    TraceColumn("priority", False, "", "the flow's priority, 0 (the highest) to 255; without the column every flow "
                "has `scheme.priority`", None,
                lambda r: _tcp_family(r) and r["tagging"] == "fixed" and r["rank_queue"] == "none", "", "priority"),
    TraceColumn("lower_bytes", False, "bytes", "a predicted lower bound of the flow's size, an integer >= 0, at most "
                "upper_bytes (`fctlab predict annotate` writes both bounds)", None,
                lambda r: r["tagging"] == "qclimb" or r["family"] == "homa",
                'QCLIMB with `scheme.qclimb_info = "bounds"` (its default; needs upper_bytes too), Homa with '
                '`scheme.homa_sizes = "lower"`', "lower_bytes"),
    TraceColumn("upper_bytes", False, "bytes", "a predicted upper bound of the flow's size, an integer >= lower_bytes",
                None, lambda r: r["tagging"] == "qclimb" or r["family"] == "homa",
                'QCLIMB with `scheme.qclimb_info = "bounds"` (its default; needs lower_bytes too), Homa with '
                '`scheme.homa_sizes = "upper"`', "upper_bytes"),
    TraceColumn("estimate_bytes", False, "bytes", "a point estimate of the flow's size, an integer >= 0", None,
                lambda r: r["rank_queue"] == "pfabric" or r["tagging"] == "qclimb" or r["family"] == "homa",
                'pFabric with `scheme.rank = "estimate"`, QCLIMB with `scheme.qclimb_info = "point_fixed"` or '
                '`"point_climb"`, Homa with `scheme.homa_sizes = "estimate"`', "estimate_bytes"),
    TraceColumn("deadline_ns", False, "ns", "the time the flow is allowed after its start, > 0 (at least 1 ps); "
                "every scheme's results say whether it was met (`met_deadline`)", "no deadline",
                lambda r: r["protocol"] in ("d3", "pdq"),
                "D3's desired rates and PDQ's criticality use it (the others only report it)", "deadline_ps",
                type="number"),
    TraceColumn("gen_rate_bps", False, "bit/s", "the rate at which the flow's application generates its bytes "
                "(the application model), > 0; without the column every byte is ready at the start", None,
                _tcp_family, "packet level only", "gen_rate_bps", type="number"),
    TraceColumn("after_flow", False, "row", "the 0-based data row of an earlier row whose flow this one waits for: "
                "it starts at max(start_ns, that flow's finish); -1 for none", None, _every_scheme, "", "after_flow"),
    TraceColumn("qclimb", False, "", "true/false or 1/0: false hands the flow to PIAS's tagging", None,
                lambda r: r["tagging"] == "qclimb", "", "qclimb", type="boolean"),
    TraceColumn("conn", False, "id", "a connection id, 0 to 2^32 - 2: flows with the same id share one TCP "
                "connection's state; one id joins one (src, dst) pair", None, _tcp_family,
                '`transport.connections = "trace"` (which needs the column)', "conn"),
    TraceColumn("path", False, "index", "the flow's source route: the index of its path among the equal-cost paths "
                "of its (src, dst) pair, in the engine's order (the first switch with a choice is the least "
                "significant digit of a mixed-radix number over the switches' candidate ports); -1 for ECMP", None,
                lambda r: _tcp_family(r) and r["rank_queue"] == "none", "packet level only", "path"),
)
TRACE_REQUIRED = tuple(c.name for c in TRACE_COLUMNS if c.required)
TRACE_OPTIONAL = tuple(c.name for c in TRACE_COLUMNS if not c.required)
#: The latest start a trace may give, in ns: 2^63 ps, half the engine's 64-bit picosecond clock (about 107 days),
#: so that a flow's start plus its run still fits.
MAX_START_NS = 2**63 // 1000


def _row_label(i: int, is_csv: bool) -> str:
    # Rows count data rows from 1; in a CSV file the header is line 1, so row r is on line r + 1.
    return f"row {i + 1} (line {i + 2})" if is_csv else f"row {i + 1}"


def _numeric_column(df: pd.DataFrame, col: str, where: str, is_csv: bool, *, allow_nan: bool = False) -> np.ndarray:
    """The column as float64 (or int64 if stored as integers), with a clear error for the first bad cell."""
    import pandas as pd

    s = df[col]
    if pd.api.types.is_bool_dtype(s.dtype):
        raise WorkloadError(f"{where}: column {col!r}: booleans are not allowed")
    if pd.api.types.is_integer_dtype(s.dtype):
        if pd.api.types.is_unsigned_integer_dtype(s.dtype) and len(s) and int(s.max()) > I64_MAX:
            return s.to_numpy(dtype=np.float64)  # beyond int64: compared as floats, refused by the range checks
        return s.to_numpy(dtype=np.int64)
    num = pd.to_numeric(s, errors="coerce")
    bad = num.isna() & s.notna()
    if bad.any():
        i = int(np.flatnonzero(bad.to_numpy())[0])
        raise WorkloadError(f"{where}: column {col!r}, {_row_label(i, is_csv)}: not a number: {s.iloc[i]!r}")
    values = num.to_numpy(dtype=np.float64)
    if not allow_nan and np.isnan(values).any():
        i = int(np.flatnonzero(np.isnan(values))[0])
        raise WorkloadError(f"{where}: column {col!r}, {_row_label(i, is_csv)}: missing value (NaN)")
    if np.isinf(values).any():
        i = int(np.flatnonzero(np.isinf(values))[0])
        raise WorkloadError(f"{where}: column {col!r}, {_row_label(i, is_csv)}: infinite value")
    return values


def _int_column(
    df: pd.DataFrame, col: str, where: str, is_csv: bool, *, minimum: int, maximum: int | None = None
) -> np.ndarray:
    values = _numeric_column(df, col, where, is_csv)
    if values.dtype.kind == "f":
        i = first_true(values != np.floor(values))
        if i is not None:
            raise WorkloadError(
                f"{where}: column {col!r}, {_row_label(i, is_csv)}: {fmt_number(values[i])} is not an integer"
            )
    i = first_true(values < minimum)
    if i is not None:
        raise WorkloadError(f"{where}: column {col!r}, {_row_label(i, is_csv)}: {fmt_number(values[i])} must be >= {minimum}")
    if maximum is not None:
        i = first_true(values > maximum)
        if i is not None:
            raise WorkloadError(
                f"{where}: column {col!r}, {_row_label(i, is_csv)}: {fmt_number(values[i])} must be <= {maximum}"
            )
    i = first_true(values >= 2.0**63) if values.dtype.kind == "f" else None
    if i is not None:
        raise WorkloadError(f"{where}: column {col!r}, {_row_label(i, is_csv)}: {fmt_number(values[i])} is too large "
                            f"(at most {I64_MAX})")
    return values.astype(np.int64)


def read_trace(path: str | Path, *, rebase: bool = False) -> pd.DataFrame:
    """Read a flow trace (``.csv`` or ``.parquet``) into the flow-table format of this module.

    Required columns: ``src``, ``dst`` (host indices), ``size_bytes`` (integer >= 1), ``start_ns`` (>= 0, may be
    fractional: rounded to the nearest picosecond into ``start_ps``). Optional: ``priority`` (0..255),
    ``lower_bytes``, ``upper_bytes``, ``estimate_bytes`` (integers >= 0; lower <= upper), ``deadline_ns``
    (the time the flow is allowed after its start in the trace, ns, > 0; an empty cell / NaN means "no
    deadline"), ``gen_rate_bps`` (> 0), ``after_flow`` (the 0-based data
    row of an earlier flow this one waits for, -1 for none: the flow starts at max(start_ns, the instant that flow
    finishes)), ``qclimb`` (0/1 or false/true; scheme qclimb only: 0 schedules the flow as PIAS), ``conn`` (a
    connection id, 0 .. 2^32 - 2: flows with the same id share one TCP connection's state under
    ``transport.connections = "trace"``; one id joins one (src, dst) pair). Any other
    column is an error. Flows are sorted by start time (stable: ties keep the file's order; a flow that waits
    for another sorts no earlier than it) and renumbered 0..n-1, ``after_flow`` with them. Errors name the
    column and the first bad row (data rows count from 1). Host indices are checked against a topology by
    ``check_hosts``.
    """
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in (".csv", ".parquet"):
        raise WorkloadError(f"{path}: trace files must end in .csv or .parquet")
    is_csv = suffix == ".csv"
    import pandas as pd

    try:
        df = pd.read_csv(path, skipinitialspace=True) if is_csv else pd.read_parquet(path)
    except FileNotFoundError:
        raise WorkloadError(f"{path}: no such trace file") from None
    except Exception as exc:  # pandas/pyarrow raise many types for a malformed file
        raise WorkloadError(f"{path}: cannot read trace: {exc}") from None
    where = str(path)
    cols = [str(c).strip() for c in df.columns]
    df.columns = cols
    for c in cols:
        if c not in TRACE_REQUIRED and c not in TRACE_OPTIONAL:
            raise WorkloadError(
                f"{where}: unknown column {c!r}; allowed: {', '.join(TRACE_REQUIRED + TRACE_OPTIONAL)} "
                "(flow_id is assigned by fctlab)"
            )
    for c in TRACE_REQUIRED:
        if c not in cols:
            raise WorkloadError(f"{where}: missing required column {c!r}")
    if len(df) == 0:
        raise WorkloadError(f"{where}: the trace has no flows (a header and no data rows)")

    src = _int_column(df, "src", where, is_csv, minimum=0, maximum=U32_MAX)
    dst = _int_column(df, "dst", where, is_csv, minimum=0, maximum=U32_MAX)
    size = _int_column(df, "size_bytes", where, is_csv, minimum=1)
    i = first_true(src == dst)
    if i is not None:
        raise WorkloadError(f"{where}: column 'dst', {_row_label(i, is_csv)}: src == dst ({int(src[i])})")
    start_ns = _numeric_column(df, "start_ns", where, is_csv)
    i = first_true(start_ns < 0)
    if i is not None:
        raise WorkloadError(f"{where}: column 'start_ns', {_row_label(i, is_csv)}: negative start {fmt_number(start_ns[i])}")
    if rebase:
        start_ns = start_ns - start_ns.min()  # exact for integer columns (epoch nanoseconds fit int64)
    i = first_true(start_ns > MAX_START_NS)
    if i is not None:
        hint = ("; for epoch timestamps set workload.trace_rebase = true to start the trace at its first flow"
                if not rebase else "")
        raise WorkloadError(
            f"{where}: column 'start_ns', {_row_label(i, is_csv)}: start {fmt_number(start_ns[i])} ns is beyond what the "
            f"engine can represent (at most {MAX_START_NS:.4g} ns, about {MAX_START_NS / 86_400e9:.0f} days){hint}"
        )
    if start_ns.dtype.kind == "i":
        start_ps = start_ns.astype(np.uint64) * np.uint64(1000)
    else:
        start_ps = np.rint(start_ns * 1000.0).astype(np.uint64)

    extra: dict[str, np.ndarray] = {}
    if "priority" in cols:
        extra["priority"] = _int_column(df, "priority", where, is_csv, minimum=0, maximum=255).astype(np.uint8)
    for c in ("lower_bytes", "upper_bytes", "estimate_bytes"):
        if c in cols:
            extra[c] = _int_column(df, c, where, is_csv, minimum=0).astype(np.uint64)
    if "lower_bytes" in extra and "upper_bytes" in extra:
        i = first_true(extra["lower_bytes"] > extra["upper_bytes"])
        if i is not None:
            raise WorkloadError(f"{where}: column 'lower_bytes', {_row_label(i, is_csv)}: lower_bytes > upper_bytes")
    if "deadline_ns" in cols:
        d = _numeric_column(df, "deadline_ns", where, is_csv, allow_nan=True).astype(np.float64)
        # the time a flow is allowed after its start: it must end after the start, and fit the engine's clock
        i = first_true(d < 0.0005)
        if i is not None:
            raise WorkloadError(
                f"{where}: column 'deadline_ns', {_row_label(i, is_csv)}: deadline {fmt_number(d[i])} must be > 0 "
                "(ns allowed after the flow's start; at least 1 ps; leave the cell empty for no deadline)"
            )
        i = first_true(d > MAX_START_NS)
        if i is not None:
            raise WorkloadError(
                f"{where}: column 'deadline_ns', {_row_label(i, is_csv)}: deadline {fmt_number(d[i])} ns is beyond what "
                f"the engine can represent (at most {MAX_START_NS:.4g} ns after the start)"
            )
        extra["deadline_ns"] = d
    if "gen_rate_bps" in cols:
        g = _numeric_column(df, "gen_rate_bps", where, is_csv).astype(np.float64)
        i = first_true(g <= 0)
        if i is not None:
            raise WorkloadError(f"{where}: column 'gen_rate_bps', {_row_label(i, is_csv)}: {fmt_number(g[i])} must be > 0")
        extra["gen_rate_bps"] = g
    sort_ps = None
    if "after_flow" in cols:
        after = _int_column(df, "after_flow", where, is_csv, minimum=-1)
        i = first_true(after >= np.arange(len(after)))
        if i is not None:
            # after_flow names a data row counted from 0 (the row of this message counts from 1)
            may = "only -1 (none): it is the first row" if i == 0 else f"0 to {i - 1}, or -1 for none"
            raise WorkloadError(
                f"{where}: column 'after_flow', {_row_label(i, is_csv)}: {int(after[i])} is not an earlier row "
                f"(after_flow counts data rows from 0; this row may name {may})"
            )
        # a waiting flow sorts no earlier than its parent (parents come first in the file)
        sort_ps = start_ps.copy()
        for k in np.flatnonzero(after >= 0):
            sort_ps[k] = max(sort_ps[k], sort_ps[after[k]])
        extra["after_flow"] = after
    if "qclimb" in cols:
        extra["qclimb"] = _bool_column(df, "qclimb", where, is_csv)
    if "conn" in cols:
        conn = _int_column(df, "conn", where, is_csv, minimum=0, maximum=U32_MAX - 1)
        # one connection, one pair of hosts
        pairs = pd.DataFrame({"conn": conn, "src": src, "dst": dst})
        first = pairs.groupby("conn", sort=False)[["src", "dst"]].transform("first")
        i = first_true(((first["src"] != pairs["src"]) | (first["dst"] != pairs["dst"])).to_numpy())
        if i is not None:
            raise WorkloadError(
                f"{where}: column 'conn', {_row_label(i, is_csv)}: connection {int(conn[i])} joins host "
                f"{int(first['src'].iloc[i])} to {int(first['dst'].iloc[i])} on an earlier row, not {int(src[i])} to "
                f"{int(dst[i])}"
            )
        extra["conn"] = conn.astype(np.uint32)
    if "path" in cols:
        # a source route: the index of the flow's path among its pair's equal-cost paths (-1: ECMP)
        extra["path"] = _int_column(df, "path", where, is_csv, minimum=-1, maximum=U32_MAX - 1)

    table = build_table(src, dst, size, start_ps, sort_ps=sort_ps, **extra).frame()
    # where each flow came from (flow id -> 0-based data row of the file), for errors found later (the engine's
    # checks against the scheme and the level) to name the file's row
    table.attrs[TRACE_SOURCE] = {"path": str(path), "is_csv": is_csv,
                                 "rows": np.argsort(start_ps if sort_ps is None else sort_ps, kind="stable")}
    return table


#: The key of a trace table's ``attrs`` that says where its flows came from: the file (``path``, ``is_csv``) and
#: each flow's 0-based data row (``rows``, by flow id).
TRACE_SOURCE = "fctlab_trace_source"


def trace_cell(table: object, flow: int, column: str) -> str | None:
    """``FILE: column 'COL', row R (line L)`` for flow ``flow`` of a table read by :func:`read_trace` (rows count
    data rows from 1, as every trace error does); None for a table not read from a trace file."""
    source = getattr(table, "attrs", {}).get(TRACE_SOURCE)
    if source is None or not 0 <= flow < len(source["rows"]):
        return None
    return f"{source['path']}: column {column!r}, {_row_label(int(source['rows'][flow]), source['is_csv'])}"


def _bool_column(df: pd.DataFrame, col: str, where: str, is_csv: bool) -> np.ndarray:
    """A column of booleans written as true/false or 1/0."""
    raw = df[col]
    if raw.dtype == bool:
        return raw.to_numpy()
    text = raw.astype(str).str.strip().str.lower()
    ok = text.isin(["true", "false", "1", "0", "1.0", "0.0"]).to_numpy()
    i = first_true(~ok)
    if i is not None:
        raise WorkloadError(f"{where}: column {col!r}, {_row_label(i, is_csv)}: {raw.iloc[i]!r} is not true/false or 1/0")
    return text.isin(["true", "1", "1.0"]).to_numpy()
