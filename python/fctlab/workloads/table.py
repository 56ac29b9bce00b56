"""The flow table: :class:`FlowColumns` (numpy columns, no pandas), the reading of a column from either form,
the building of a table from a generator's raw columns, and the check of its hosts against a topology.

A table has the columns ``flow_id`` (uint32, 0..n-1 in start order), ``src``, ``dst`` (uint32 host indices),
``size_bytes`` (uint64), ``start_ps`` (uint64 picoseconds) and ``priority`` (uint8), plus pattern or trace
extras.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from fctlab.workloads.checks import WorkloadError, check_int, first_true

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["FlowColumns", "column", "build_table", "check_hosts"]


class FlowColumns:
    """A flow table as numpy columns (name -> array, every one of ``len()`` rows), built without pandas.

    The command line generates its workload as one, so the engine can start before pandas is imported (pandas
    then loads while the engine runs). It answers the few questions fctlab asks of a flow table: ``t[name]``
    (the array), ``name in t``, ``t.columns``, ``len(t)``; ``frame()`` is the DataFrame (what the public
    generators return).
    """

    __slots__ = ("_cols", "_rows")

    def __init__(self, cols: dict[str, np.ndarray]) -> None:
        self._cols = dict(cols)
        self._rows = len(next(iter(self._cols.values()))) if self._cols else 0

    def __getitem__(self, name: str) -> np.ndarray:
        return self._cols[name]

    def __contains__(self, name: object) -> bool:
        return name in self._cols

    def __len__(self) -> int:
        return self._rows

    @property
    def columns(self) -> list[str]:
        return list(self._cols)

    def drop(self, *, columns: Sequence[str]) -> FlowColumns:
        """The table without ``columns`` (like ``DataFrame.drop(columns=...)``)."""
        return FlowColumns({k: v for k, v in self._cols.items() if k not in columns})

    def frame(self) -> pd.DataFrame:
        import pandas as pd

        return pd.DataFrame(self._cols)


def column(flows: Any, name: str, dtype: Any = None) -> np.ndarray:
    """Column ``name`` of a flow table (a DataFrame or :class:`FlowColumns`) as a numpy array of ``dtype``."""
    values = flows[name]
    if isinstance(values, np.ndarray):
        return values if dtype is None else values.astype(dtype, copy=False)
    return values.to_numpy(dtype=dtype)


def build_table(
    src: np.ndarray,
    dst: np.ndarray,
    size: np.ndarray,
    start_ps: np.ndarray,
    priority: np.ndarray | None = None,
    sort_ps: np.ndarray | None = None,
    **extra: np.ndarray,
) -> FlowColumns:
    """A flow table from raw per-flow columns: rows sorted by ``start_ps`` (or ``sort_ps``; stable, so ties keep
    their order), numbered 0..n-1 and cast to the table's dtypes; ``after_flow`` (a parent's row before sorting,
    -1 for none) is renumbered with the rows."""
    by = np.asarray(start_ps if sort_ps is None else sort_ps)
    # (rows already in order, as Poisson arrivals are, are taken as they are: the stable sort's order, without
    # a copy of every column through it)
    order: np.ndarray | slice = slice(None) if bool(np.all(by[1:] >= by[:-1])) else np.argsort(by, kind="stable")
    n = len(by)
    cols: dict[str, np.ndarray] = {
        "flow_id": np.arange(n, dtype=np.uint32),
        "src": np.asarray(src)[order].astype(np.uint32),
        "dst": np.asarray(dst)[order].astype(np.uint32),
        "size_bytes": np.asarray(size)[order].astype(np.uint64),
        "start_ps": np.asarray(start_ps)[order].astype(np.uint64),
        "priority": np.zeros(n, dtype=np.uint8)
        if priority is None
        else np.asarray(priority)[order].astype(np.uint8),
    }
    for key, values in extra.items():
        cols[key] = np.asarray(values)[order] if isinstance(order, np.ndarray) else np.array(values)
    if "after_flow" in cols:
        # parents are named by their row before sorting: renumber them like the flows
        new_id = np.empty(n, dtype=np.int64)
        new_id[order] = np.arange(n)
        after = cols["after_flow"].astype(np.int64)
        cols["after_flow"] = np.where(after >= 0, new_id[np.maximum(after, 0)], -1)
    return FlowColumns(cols)


def check_hosts(flows: pd.DataFrame | FlowColumns, n_hosts: int) -> None:
    """Raise WorkloadError naming the first flow whose src or dst is not a host of an n_hosts topology."""
    n_hosts = check_int("n_hosts", n_hosts, minimum=2)
    for col in ("src", "dst"):
        if col not in flows.columns:
            raise WorkloadError(f"flows: missing column {col!r}")
    src = column(flows, "src", np.int64)
    dst = column(flows, "dst", np.int64)
    bad = (src >= n_hosts) | (dst >= n_hosts) | (src < 0) | (dst < 0)
    i = first_true(bad)
    if i is not None:
        col = "src" if not 0 <= src[i] < n_hosts else "dst"
        fid = int(column(flows, "flow_id")[i]) if "flow_id" in flows.columns else i
        raise WorkloadError(
            f"flows: flow_id {fid} (table row {i}): {col} {int(column(flows, col)[i])} is not a host of this topology "
            f"(hosts are 0..{n_hosts - 1})"
        )
