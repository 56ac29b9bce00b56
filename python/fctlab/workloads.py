"""Flow-size distributions, traffic patterns and flow traces.

A workload is a table of flows (who sends how many bytes to whom, and when) handed to the core. This module
reads the published flow-size CDFs shipped in ``fctlab/data/workloads`` (each file's ``#`` header names its
source), draws flow sizes from them exactly as the ns-2 scripts of pFabric and PIAS did, turns them into
arrival processes whose offered load is the load on the host links (docs/experiment.md gives the definition
per pattern), and reads user traces.

Sampling semantics (``Cdf.sample``): ns-2's ``RandomVariable/Empirical`` with ``interpolation_ 2``, followed by
the scripts' ``ceil``:

1. draw ``u ~ U[0, 1)``;
2. if ``u <= probs[0]``, the value is ``sizes[0]`` (so a table whose first probability is above 0, like
   ``homa_w3_google_all_rpc``, puts that much mass on its first size);
3. otherwise take the first ``i`` with ``u <= probs[i]`` (segment ``(probs[i-1], probs[i]]``; segments of zero
   width are never chosen) and interpolate linearly: ``x = sizes[i-1] + (u - probs[i-1]) / (probs[i] -
   probs[i-1]) * (sizes[i] - sizes[i-1])``. A repeated size (a vertical step of the CDF) gives a constant;
4. round ``x`` up to a whole number of ``unit_bytes``, and to at least one unit.

``unit_bytes`` is 1460 for the ns-2 tables kept in packets (their header says "original units: packets"; sizes
in the file are already packets x 1460) and 1 for byte tables. For the packet tables this reproduces
``ceil(value) * 1460`` of ``tcp-common-opt.tcl`` exactly, because the interpolation is done in packets.

Flow tables (DataFrames) returned here have the columns ``flow_id`` (uint32, 0..n-1 in start order), ``src``,
``dst`` (uint32 host indices), ``size_bytes`` (uint64), ``start_ps`` (uint64 picoseconds: the core's clock is
an integer) and ``priority`` (uint8), plus pattern-specific columns. Every generator takes a
``numpy.random.Generator`` and draws from it in a fixed order, so a seed fixes the table; that order is part of
the contract (changing it changes every seeded experiment).

This module imports nothing else from fctlab, so it can be used and tested without the compiled core. pandas is
imported only when a DataFrame is made: the private generators behind the public ones (``_all_to_all``,
``_permutation``, ``_incast``) return :class:`FlowColumns`, which needs numpy alone.
"""

from __future__ import annotations

import math
import operator
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache, cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "Cdf",
    "WorkloadError",
    "NS2_PACKET_BYTES",
    "SMALL_FLOW_BYTES",
    "list_cdfs",
    "load_cdf",
    "all_to_all",
    "permutation",
    "incast",
    "aggregation",
    "stride",
    "staggered",
    "UniformSizes",
    "deadlines",
    "gen_rates",
    "load_rate_cdf",
    "list_rate_cdfs",
    "wire_bytes",
    "read_trace",
    "check_hosts",
    "describe",
    "FlowColumns",
    "column",
]

# The ns-2 tables count TCP payload packets of 1460 bytes (pktSize_ in the PIAS/pFabric scripts).
NS2_PACKET_BYTES = 1460
# Upper edge of the "small flow" bin used by the papers, (0, 100 KB]; decimal kilobytes.
SMALL_FLOW_BYTES = 100_000

DATA_DIR = Path(__file__).resolve().parent / "data" / "workloads"
#: Data generation rate CDFs (the application model): ``rate_bps cumulative_probability`` per line.
RATE_DIR = Path(__file__).resolve().parent / "data" / "rates"
CDF_SUFFIX = ".cdf"

# A last probability this close to 1 is taken as 1 (published tables are rounded to a few digits).
_PROB_TOLERANCE = 1e-6
_PACKETS_RE = re.compile(r"original units:\s*packets", re.IGNORECASE)
_PS_PER_S = 1e12
# flow_id, src and dst are uint32 in the flow table.
_U32_MAX = int(np.iinfo(np.uint32).max)
_I64_MAX = int(np.iinfo(np.int64).max)


class WorkloadError(ValueError):
    """A workload file, trace or generator argument is invalid. The message names the culprit."""


# --------------------------------------------------------------------------------------------------------------
# Flow-size distributions
# --------------------------------------------------------------------------------------------------------------


# eq=False: the fields hold numpy arrays, for which a generated __eq__/__hash__ would be wrong.
@dataclass(frozen=True, eq=False)
class Cdf:
    """A piecewise-linear flow-size CDF (see the module docstring for how it is sampled).

    ``sizes`` (bytes) and ``probs`` are read-only float64 arrays, both non-decreasing, ``probs[-1] == 1``.
    ``path`` is None only for a table built in memory with ``Cdf.from_points``.
    """

    name: str
    path: Path | None
    header: tuple[str, ...]
    sizes: np.ndarray
    probs: np.ndarray
    unit_bytes: int

    @classmethod
    def from_points(
        cls,
        name: str,
        sizes: Sequence[float] | np.ndarray,
        probs: Sequence[float] | np.ndarray,
        *,
        unit_bytes: int = 1,
        header: Sequence[str] = (),
        path: Path | None = None,
    ) -> Cdf:
        """Validate (size_bytes, cumulative_probability) points and build a Cdf."""
        where = str(path) if path is not None else f"CDF {name!r}"
        s = np.asarray(sizes, dtype=np.float64)
        p = np.asarray(probs, dtype=np.float64)
        if s.ndim != 1 or s.shape != p.shape:
            raise WorkloadError(f"{where}: sizes and probabilities must be 1-D arrays of the same length")
        unit = _check_int("unit_bytes", unit_bytes, minimum=1)
        for k in range(len(s)):
            _check_point(where, f"point {k + 1}", s[k], p[k], s[k - 1] if k else None, p[k - 1] if k else None)
        return cls._build(name, path, tuple(header), s, p, unit, where)

    @classmethod
    def _build(
        cls, name: str, path: Path | None, header: tuple[str, ...], s: np.ndarray, p: np.ndarray, unit: int, where: str
    ) -> Cdf:
        if len(s) < 2:
            raise WorkloadError(f"{where}: a CDF needs at least 2 points, found {len(s)}")
        if abs(p[-1] - 1.0) > _PROB_TOLERANCE:
            raise WorkloadError(
                f"{where}: the last cumulative probability is {_fmt(p[-1])}, it must be 1 (within 1e-6)"
            )
        # Snap to exactly 1 so that u < 1 always falls inside the table; clipping keeps the order.
        p = np.minimum(p, 1.0)
        p[-1] = 1.0
        s = s.copy()
        s.setflags(write=False)
        p.setflags(write=False)
        return cls(name=name, path=path, header=header, sizes=s, probs=p, unit_bytes=unit)

    # -- sampling ----------------------------------------------------------------------------------------------

    def _units_at(self, u: np.ndarray) -> np.ndarray:
        """Sampled size in whole units (int64) for uniform variates u in [0, 1]."""
        x_units = self.sizes / self.unit_bytes
        i = np.searchsorted(self.probs, u, side="left")  # first i with probs[i] >= u
        i = np.clip(i, 0, len(self.probs) - 1)
        lo = np.maximum(i - 1, 0)
        p0, p1 = self.probs[lo], self.probs[i]
        s0, s1 = x_units[lo], x_units[i]
        width = p1 - p0
        # i == 0 (u <= probs[0]) has width 0 and takes sizes[0]; otherwise width > 0 by the choice of i.
        frac = np.divide(u - p0, width, out=np.ones_like(u, dtype=np.float64), where=width > 0)
        x = s0 + np.clip(frac, 0.0, 1.0) * (s1 - s0)
        # Guard against a rounding step past the segment's end, which ceil would turn into one unit too many.
        x = np.minimum(x, s1)
        return np.maximum(np.ceil(x), 1.0).astype(np.int64)

    def sample(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """Draw ``n`` flow sizes in bytes (int64), each a positive multiple of ``unit_bytes``."""
        n = _check_int("n", n, minimum=0)
        u = rng.random(n)
        return self._units_at(u) * self.unit_bytes

    def quantile(self, p: float | np.ndarray) -> Any:
        """The p-quantile of the sampled sizes (bytes): the value ``sample`` returns for ``u = p``."""
        arr = np.asarray(p, dtype=np.float64)
        if np.any(~np.isfinite(arr)) or np.any(arr < 0.0) or np.any(arr > 1.0):
            raise WorkloadError(f"quantile: p must be within [0, 1], got {p!r}")
        out = self._units_at(np.atleast_1d(arr)) * self.unit_bytes
        return int(out[0]) if arr.ndim == 0 else out.reshape(arr.shape)

    def fraction_at_most(self, size_bytes: float) -> float:
        """Exact probability that a sampled size is <= ``size_bytes``."""
        # A sample s = unit * max(1, ceil(x / unit)) is <= t iff x <= unit * floor(t / unit), for t >= one unit.
        k = math.floor(size_bytes / self.unit_bytes)
        if k < 1:
            return 0.0
        t = k * self.unit_bytes
        s, p = self.sizes, self.probs
        total = p[0] if s[0] <= t else 0.0
        w = np.diff(p)
        a, b = s[:-1], s[1:]
        span = b - a
        flat = span == 0
        part = np.where(flat, (a <= t).astype(np.float64), np.clip((t - a) / np.where(flat, 1.0, span), 0.0, 1.0))
        return float(min(1.0, total + np.sum(w * part)))

    @cached_property
    def mean_bytes(self) -> float:
        """Exact mean of ``sample`` (bytes), from the table: no Monte Carlo."""
        u = float(self.unit_bytes)
        x = self.sizes / u
        # The atom below the first point, then one uniform segment per pair of points.
        total = self.probs[0] * max(1.0, math.ceil(x[0]))
        w = np.diff(self.probs)
        a, b = x[:-1], x[1:]
        span = b - a
        flat = span == 0
        # E[ceil(Y)] for Y ~ U[a, b] is (a + b) / 2 + (H(b) - H(a)) / (b - a), with H the integral of the
        # round-up excess ceil(y) - y; written this way it stays accurate for sizes of 1e9 bytes, where the
        # integral of ceil itself (about y^2 / 2) would cancel catastrophically. On (0, 1] ceil(y) is already 1,
        # so the "at least one unit" rule only matters at y == 0, a null set.
        safe = np.where(flat, 1.0, span)
        seg_mean = np.where(
            flat, np.maximum(1.0, np.ceil(a)), (a + b) / 2 + (_excess_integral(b) - _excess_integral(a)) / safe
        )
        total += float(np.sum(w * seg_mean))
        return float(total * u)

    def __repr__(self) -> str:
        return (
            f"Cdf(name={self.name!r}, points={len(self.sizes)}, unit_bytes={self.unit_bytes}, "
            f"sizes=[{self.sizes[0]:g} .. {self.sizes[-1]:g}], mean_bytes={self.mean_bytes:.6g})"
        )


def _excess_integral(y: np.ndarray) -> np.ndarray:
    """H(y) = integral over [0, y] of (ceil(t) - t) dt, for y >= 0.

    Each whole unit contributes 1/2; the last partial unit of length f contributes f - f^2 / 2.
    """
    n = np.floor(y)
    f = y - n
    return n / 2 + f - f * f / 2


def _fmt(value: Any) -> str:
    """A number as a user wrote it: 300, 10.5, nan (numpy scalars would print as np.float64(...))."""
    v = float(value)
    return str(int(v)) if v.is_integer() else repr(v)


def _check_point(
    where: str, at: str, size: float, prob: float, prev_size: float | None, prev_prob: float | None
) -> None:
    if not math.isfinite(size) or size < 0:
        raise WorkloadError(f"{where}: {at}: size {_fmt(size)} must be a finite number >= 0")
    if not math.isfinite(prob) or prob < 0 or prob > 1 + _PROB_TOLERANCE:
        raise WorkloadError(f"{where}: {at}: cumulative probability {_fmt(prob)} must be within [0, 1]")
    if prev_size is not None and size < prev_size:
        raise WorkloadError(
            f"{where}: {at}: size {_fmt(size)} is smaller than the previous size {_fmt(prev_size)} "
            "(sizes must be non-decreasing)"
        )
    if prev_prob is not None and prob < prev_prob:
        raise WorkloadError(
            f"{where}: {at}: cumulative probability {_fmt(prob)} is smaller than the previous one {_fmt(prev_prob)} "
            "(probabilities must be non-decreasing)"
        )


def _parse_cdf_file(path: Path, name: str) -> Cdf:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise WorkloadError(f"{path}: no such CDF file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise WorkloadError(f"{path}: cannot read CDF file: {exc}") from None
    header: list[str] = []
    sizes: list[float] = []
    probs: list[float] = []
    for lineno, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line:
            continue
        if line.startswith("#"):
            header.append(raw)
            continue
        fields = line.split()
        at = f"line {lineno}"
        if len(fields) != 2:
            raise WorkloadError(f"{path}: {at}: expected 'size_bytes cumulative_probability', got {raw.strip()!r}")
        try:
            size, prob = float(fields[0]), float(fields[1])
        except ValueError:
            raise WorkloadError(f"{path}: {at}: non-numeric value in {raw.strip()!r}") from None
        _check_point(str(path), at, size, prob, sizes[-1] if sizes else None, probs[-1] if probs else None)
        sizes.append(size)
        probs.append(prob)
    unit = NS2_PACKET_BYTES if any(_PACKETS_RE.search(h) for h in header) else 1
    return Cdf._build(name, path, tuple(header), np.array(sizes), np.array(probs), unit, str(path))


def _shipped_names() -> list[str]:
    return sorted(p.stem for p in DATA_DIR.glob(f"*{CDF_SUFFIX}"))


@cache
def _load_shipped(name: str) -> Cdf:
    # Safe to cache: a Cdf and its arrays are immutable.
    return _parse_cdf_file(DATA_DIR / f"{name}{CDF_SUFFIX}", name)


def list_cdfs() -> list[Cdf]:
    """Every CDF shipped with fctlab, sorted by name."""
    return [_load_shipped(name) for name in _shipped_names()]


def load_cdf(name_or_path: str | Path) -> Cdf:
    """A shipped CDF by name (``"websearch"``) or a user file by path.

    A user file has ``#`` comment lines, then one ``size_bytes cumulative_probability`` pair per line; sizes and
    probabilities are non-decreasing and the last probability is 1. Write "original units: packets" in a comment
    to have sizes rounded up to whole 1460-byte packets as in the ns-2 tables.
    """
    if isinstance(name_or_path, str):
        known = _shipped_names()
        if name_or_path in known:
            return _load_shipped(name_or_path)
        looks_like_path = any(c in name_or_path for c in "/\\") or name_or_path.endswith(CDF_SUFFIX)
        if not looks_like_path and not Path(name_or_path).is_file():
            raise WorkloadError(
                f"unknown workload CDF {name_or_path!r}; known names: {', '.join(known)} (or give a file path)"
            )
        name_or_path = Path(name_or_path)
    if not isinstance(name_or_path, Path):
        raise WorkloadError(f"load_cdf expects a name or a path, got {type(name_or_path).__name__}")
    return _parse_cdf_file(name_or_path, name_or_path.stem)


def describe(cdf: Cdf) -> dict[str, Any]:
    """A summary row for ``fctlab workloads``: sizes in bytes, shares as fractions."""
    title = next((h.split(":", 1)[1].strip() for h in cdf.header if h.lstrip("# ").startswith("workload:")), "")
    sources = tuple(
        h.lstrip("#").strip()
        for h in cdf.header
        if h.lstrip("# ").startswith(("source repo:", "source path:", "commit:", "paper:"))
    )
    return {
        "name": cdf.name,
        "title": title,
        "points": len(cdf.sizes),
        "unit_bytes": cdf.unit_bytes,
        "mean_bytes": cdf.mean_bytes,
        "median_bytes": cdf.quantile(0.5),
        "p99_bytes": cdf.quantile(0.99),
        "max_bytes": cdf.quantile(1.0),
        "share_le_100kb": cdf.fraction_at_most(SMALL_FLOW_BYTES),
        "sources": sources,
    }


# --------------------------------------------------------------------------------------------------------------
# Traffic patterns
# --------------------------------------------------------------------------------------------------------------


def _check_int(what: str, value: Any, *, minimum: int | None = None, maximum: int | None = None) -> int:
    if isinstance(value, (bool, np.bool_)):
        raise WorkloadError(f"{what} must be an integer, got {value!r}")
    try:
        v = operator.index(value)
    except TypeError:
        raise WorkloadError(f"{what} must be an integer, got {value!r}") from None
    if minimum is not None and v < minimum:
        raise WorkloadError(f"{what} must be >= {minimum}, got {v}")
    if maximum is not None and v > maximum:
        raise WorkloadError(f"{what} must be <= {maximum}, got {v}")
    return v


def _check_positive(what: str, value: Any) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise WorkloadError(f"{what} must be a positive number, got {value!r}") from None
    if isinstance(value, bool) or not math.isfinite(v) or v <= 0:
        raise WorkloadError(f"{what} must be a positive finite number, got {value!r}")
    return v


def _check_load(load: Any) -> float:
    v = _check_positive("load", load)
    if v > 1.0:
        raise WorkloadError(f"load must be within (0, 1], got {load!r}")
    return v


def _check_rng(rng: Any) -> np.random.Generator:
    if not isinstance(rng, np.random.Generator):
        raise WorkloadError(
            f"rng must be a numpy.random.Generator (numpy.random.default_rng(seed)), got {type(rng).__name__}"
        )
    return rng


def _check_cdf(cdf: Any) -> Cdf | UniformSizes:
    if not isinstance(cdf, (Cdf, UniformSizes)):
        raise WorkloadError(f"cdf must be a Cdf (from load_cdf) or UniformSizes, got {type(cdf).__name__}")
    return cdf


@dataclass(frozen=True)
class UniformSizes:
    """Flow sizes uniform on the integers ``[lo_bytes, hi_bytes]``, with ``lo = round(0.02 x mean)`` and
    ``hi = round(1.98 x mean)``: D3's query-aggregation sizes (uniform on [2 KB, 198 KB], mean 100 KB), which
    the PDQ paper's §5.2 reuses and scales to means of 100 to 350 KB. ``sample`` and ``mean_bytes`` answer
    like a :class:`Cdf`'s, so the generators take either."""

    mean: float

    def __post_init__(self) -> None:
        v = _check_positive("size_uniform_mean_bytes", self.mean)
        if round(0.02 * v) < 1:
            raise WorkloadError(f"size_uniform_mean_bytes must be >= 25 (got {self.mean!r}), so that sizes are >= 1")

    @property
    def name(self) -> str:
        return f"uniform(mean {self.mean:g} B)"

    @property
    def lo_bytes(self) -> int:
        return int(round(0.02 * self.mean))

    @property
    def hi_bytes(self) -> int:
        return int(round(1.98 * self.mean))

    @property
    def mean_bytes(self) -> float:
        return (self.lo_bytes + self.hi_bytes) / 2.0

    def sample(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """Draw ``n`` flow sizes in bytes (int64)."""
        n = _check_int("n", n, minimum=0)
        return rng.integers(self.lo_bytes, self.hi_bytes + 1, n, dtype=np.int64)


def _check_host_list(what: str, hosts_list: Sequence[int] | None, hosts: int) -> np.ndarray:
    if hosts_list is None:
        return np.arange(hosts, dtype=np.int64)
    vals = [_check_int(f"{what}[{k}]", h, minimum=0, maximum=hosts - 1) for k, h in enumerate(hosts_list)]
    if not vals:
        raise WorkloadError(f"{what} must not be empty")
    if len(set(vals)) != len(vals):
        raise WorkloadError(f"{what} has repeated hosts")
    return np.array(vals, dtype=np.int64)


def _poisson_starts_ps(rng: np.random.Generator, rate_hz: float, n: int) -> np.ndarray:
    """n arrival times (integer ps) of a Poisson process of the given rate, the first one gap after t = 0."""
    # Gaps are rounded to whole picoseconds and summed as integers, so the clock never drifts by float error.
    gaps = np.rint(rng.exponential(_PS_PER_S / rate_hz, n)).astype(np.int64)
    return np.cumsum(gaps, dtype=np.int64)


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


def _flow_columns(
    src: np.ndarray,
    dst: np.ndarray,
    size: np.ndarray,
    start_ps: np.ndarray,
    priority: np.ndarray | None = None,
    sort_ps: np.ndarray | None = None,
    **extra: np.ndarray,
) -> FlowColumns:
    order = np.argsort(start_ps if sort_ps is None else sort_ps, kind="stable")
    cols: dict[str, np.ndarray] = {
        "flow_id": np.arange(len(order), dtype=np.uint32),
        "src": np.asarray(src)[order].astype(np.uint32),
        "dst": np.asarray(dst)[order].astype(np.uint32),
        "size_bytes": np.asarray(size)[order].astype(np.uint64),
        "start_ps": np.asarray(start_ps)[order].astype(np.uint64),
        "priority": np.zeros(len(order), dtype=np.uint8)
        if priority is None
        else np.asarray(priority)[order].astype(np.uint8),
    }
    for key, values in extra.items():
        cols[key] = np.asarray(values)[order]
    if "after_flow" in cols:
        # parents are named by their row before sorting: renumber them like the flows
        new_id = np.empty(len(order), dtype=np.int64)
        new_id[order] = np.arange(len(order))
        after = cols["after_flow"].astype(np.int64)
        cols["after_flow"] = np.where(after >= 0, new_id[np.maximum(after, 0)], -1)
    return FlowColumns(cols)


def _flow_frame(*args: Any, **kwargs: Any) -> pd.DataFrame:
    return _flow_columns(*args, **kwargs).frame()


def _arrival_rate_hz(load: float, host_link_bps: float, n_senders: int, cdf: Cdf) -> float:
    # lambda = rho x (host link rate) x (number of senders) / (8 x mean flow size) (docs/experiment.md)
    return load * host_link_bps * n_senders / (8.0 * cdf.mean_bytes)


def all_to_all(
    *,
    hosts: int,
    cdf: Cdf,
    load: float,
    host_link_bps: float,
    flows: int,
    rng: np.random.Generator,
    senders: list[int] | None = None,
    receivers: list[int] | None = None,
) -> pd.DataFrame:
    """All-to-all traffic: Poisson flow arrivals at the offered load of docs/experiment.md.

    Aggregate rate ``lambda = load * host_link_bps * len(senders) / (8 * cdf.mean_bytes)``, i.e. ``load`` is the
    mean offered load on each sender's uplink (with fewer receivers than senders, the receivers' downlinks see
    more). Each flow picks its source uniformly among ``senders`` and its destination uniformly among
    ``receivers`` other than the source; sizes come from ``cdf.sample``. The first flow starts one exponential
    gap after t = 0.

    One global Poisson process whose flows pick a uniform (src, dst) pair is the same process, in distribution,
    as the ns-2 scripts' independent Poisson process per host pair at ``lambda / pairs`` each: the superposition
    of independent Poisson processes is Poisson, and each arrival belongs to a pair with probability
    proportional to that pair's rate (Poisson splitting/merging).

    Random draws, in order: gaps, sources, destinations, sizes.
    """
    return _all_to_all(
        hosts=hosts, cdf=cdf, load=load, host_link_bps=host_link_bps, flows=flows, rng=rng, senders=senders,
        receivers=receivers,
    ).frame()


def _all_to_all(
    *,
    hosts: int,
    cdf: Cdf,
    load: float,
    host_link_bps: float,
    flows: int,
    rng: np.random.Generator,
    senders: list[int] | None = None,
    receivers: list[int] | None = None,
) -> FlowColumns:
    """:func:`all_to_all` as :class:`FlowColumns`."""
    hosts = _check_int("hosts", hosts, minimum=2, maximum=_U32_MAX)
    cdf = _check_cdf(cdf)
    load = _check_load(load)
    host_link_bps = _check_positive("host_link_bps", host_link_bps)
    flows = _check_int("flows", flows, minimum=1, maximum=_U32_MAX)
    rng = _check_rng(rng)
    snd = _check_host_list("senders", senders, hosts)
    rcv = _check_host_list("receivers", receivers, hosts)
    if len(rcv) == 1 and rcv[0] in snd:
        raise WorkloadError(f"receivers: sender {int(rcv[0])} has no receiver other than itself")

    rate = _arrival_rate_hz(load, host_link_bps, len(snd), cdf)
    start = _poisson_starts_ps(rng, rate, flows)
    src = snd[rng.integers(0, len(snd), flows)]
    # Position of each source among the receivers (-1 if it is not one); draw among the others and skip it.
    where = np.full(hosts, -1, dtype=np.int64)
    where[rcv] = np.arange(len(rcv))
    pos = where[src]
    k = rng.integers(0, len(rcv) - (pos >= 0), flows)
    k += (pos >= 0) & (k >= pos)
    dst = rcv[k]
    size = cdf.sample(rng, flows)
    return _flow_columns(src, dst, size, start)


def _together_starts_ps(rng: np.random.Generator, n: int, start_spread_ns: float) -> np.ndarray:
    """Starts of ``n`` flows that arrive together: all at t = 0, or uniform on the integer picoseconds of
    [0, spread) when ``start_spread_ns`` > 0 (drawn only then)."""
    spread = _check_nonnegative("start_spread_ns", start_spread_ns)
    spread_ps = int(round(spread * 1000.0))
    if spread_ps <= 0:
        return np.zeros(n, dtype=np.int64)
    return rng.integers(0, spread_ps, n, dtype=np.int64)


def _check_nonnegative(what: str, value: Any) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise WorkloadError(f"{what} must be a number >= 0, got {value!r}") from None
    if isinstance(value, bool) or not math.isfinite(v) or v < 0:
        raise WorkloadError(f"{what} must be a finite number >= 0, got {value!r}")
    return v


def _arrivals(
    rng: np.random.Generator,
    *,
    hosts: int,
    flows: int,
    sizes: Cdf | UniformSizes,
    load: float | None,
    host_link_bps: float | None,
    start_spread_ns: float,
) -> tuple[np.ndarray, np.ndarray]:
    """(start_ps, src) of the host-to-host patterns (permutation, stride, staggered). With ``load``: Poisson
    arrivals at the rate of all-to-all traffic over every host (``lambda = load x host_link_bps x hosts / (8 x
    mean size)``) and a uniform source per flow (draws: gaps, sources). Without: the flows arrive together
    (:func:`_together_starts_ps`; draws: starts, only with a spread) and flow ``j`` comes from host
    ``j mod hosts``, so every host sends floor(flows / hosts) or ceil(flows / hosts) of them."""
    if load is not None:
        load = _check_load(load)
        if host_link_bps is None:
            raise WorkloadError("host_link_bps is required when load is given")
        host_link_bps = _check_positive("host_link_bps", host_link_bps)
        if start_spread_ns:
            raise WorkloadError("start_spread_ns is for flows that arrive together, not with a load")
        start = _poisson_starts_ps(rng, _arrival_rate_hz(load, host_link_bps, hosts, sizes), flows)
        return start, rng.integers(0, hosts, flows)
    start = _together_starts_ps(rng, flows, start_spread_ns)
    return start, np.arange(flows, dtype=np.int64) % hosts


def aggregation(
    *,
    hosts: int,
    sizes: Cdf | UniformSizes,
    flows: int,
    rng: np.random.Generator,
    receiver: int = 0,
    senders: Sequence[int] | None = None,
    start_spread_ns: float = 0.0,
) -> pd.DataFrame:
    """Query aggregation (the PDQ paper's §5.2-5.3 "Aggregation", after D3): ``flows`` flows from ``senders``
    (default: every host but the receiver) to one ``receiver``, all starting at t = 0 (or uniformly within
    ``start_spread_ns``). Flow ``j`` comes from ``senders[j mod n]``, so each of the n senders has
    floor(flows / n) or ceil(flows / n) flows (the first ``flows mod n`` senders one more).

    Random draws, in order: starts (only with a spread), sizes.
    """
    return _aggregation(hosts=hosts, sizes=sizes, flows=flows, rng=rng, receiver=receiver, senders=senders,
                        start_spread_ns=start_spread_ns).frame()


def _aggregation(
    *,
    hosts: int,
    sizes: Cdf | UniformSizes,
    flows: int,
    rng: np.random.Generator,
    receiver: int = 0,
    senders: Sequence[int] | None = None,
    start_spread_ns: float = 0.0,
) -> FlowColumns:
    """:func:`aggregation` as :class:`FlowColumns`."""
    hosts = _check_int("hosts", hosts, minimum=2, maximum=_U32_MAX)
    sizes = _check_cdf(sizes)
    flows = _check_int("flows", flows, minimum=1, maximum=_U32_MAX)
    rng = _check_rng(rng)
    receiver = _check_int("receiver", receiver, minimum=0, maximum=hosts - 1)
    if senders is None:
        snd = np.array([h for h in range(hosts) if h != receiver], dtype=np.int64)
    else:
        snd = _check_host_list("senders", senders, hosts)
        if receiver in snd:
            raise WorkloadError(f"senders: lists the receiver ({receiver}), which cannot send to itself")
    start = _together_starts_ps(rng, flows, start_spread_ns)
    size = sizes.sample(rng, flows)
    src = snd[np.arange(flows) % len(snd)]
    return _flow_columns(src, np.full(flows, receiver, dtype=np.int64), size, start)


def stride(
    *,
    hosts: int,
    sizes: Cdf | UniformSizes,
    flows: int,
    rng: np.random.Generator,
    stride: int,
    load: float | None = None,
    host_link_bps: float | None = None,
    start_spread_ns: float = 0.0,
) -> pd.DataFrame:
    """Stride(i) (PDQ §5.3, after Hedera): host ``x`` sends to host ``(x + stride) mod hosts``. Flows arrive
    together or at ``load`` (:func:`_arrivals`).

    Random draws, in order: the arrivals, sizes.
    """
    return _stride(hosts=hosts, sizes=sizes, flows=flows, rng=rng, stride=stride, load=load,
                   host_link_bps=host_link_bps, start_spread_ns=start_spread_ns).frame()


def _stride(
    *,
    hosts: int,
    sizes: Cdf | UniformSizes,
    flows: int,
    rng: np.random.Generator,
    stride: int,
    load: float | None = None,
    host_link_bps: float | None = None,
    start_spread_ns: float = 0.0,
) -> FlowColumns:
    """:func:`stride` as :class:`FlowColumns`."""
    hosts = _check_int("hosts", hosts, minimum=2, maximum=_U32_MAX)
    sizes = _check_cdf(sizes)
    flows = _check_int("flows", flows, minimum=1, maximum=_U32_MAX)
    rng = _check_rng(rng)
    stride = _check_int("stride", stride, minimum=1)
    if stride % hosts == 0:
        raise WorkloadError(f"stride must not be a multiple of the number of hosts ({hosts}), got {stride}: "
                            "every host would send to itself")
    start, src = _arrivals(rng, hosts=hosts, flows=flows, sizes=sizes, load=load, host_link_bps=host_link_bps,
                           start_spread_ns=start_spread_ns)
    size = sizes.sample(rng, flows)
    return _flow_columns(src, (src + stride) % hosts, size, start)


def staggered(
    *,
    hosts: int,
    racks: Sequence[int] | np.ndarray,
    sizes: Cdf | UniformSizes,
    flows: int,
    rng: np.random.Generator,
    p: float,
    load: float | None = None,
    host_link_bps: float | None = None,
    start_spread_ns: float = 0.0,
) -> pd.DataFrame:
    """Staggered Prob(p) (PDQ §5.3, after Hedera's "Stagger Prob"): each flow goes to a host under its sender's
    own rack (ToR or leaf switch) with probability ``p``, uniformly among the rack's other hosts, and otherwise
    to a host under another rack, uniformly among all of them (Hedera's "the rest of the network": a flow that
    is not rack-local leaves the rack). ``racks[h]`` is host h's rack. Flows arrive together or at ``load``
    (:func:`_arrivals`).

    Random draws, in order: the arrivals, the local-or-not choices, the rack-local pick, the remote pick (both
    picks are drawn for every flow), sizes.
    """
    return _staggered(hosts=hosts, racks=racks, sizes=sizes, flows=flows, rng=rng, p=p, load=load,
                      host_link_bps=host_link_bps, start_spread_ns=start_spread_ns).frame()


def _staggered(
    *,
    hosts: int,
    racks: Sequence[int] | np.ndarray,
    sizes: Cdf | UniformSizes,
    flows: int,
    rng: np.random.Generator,
    p: float,
    load: float | None = None,
    host_link_bps: float | None = None,
    start_spread_ns: float = 0.0,
) -> FlowColumns:
    """:func:`staggered` as :class:`FlowColumns`."""
    hosts = _check_int("hosts", hosts, minimum=2, maximum=_U32_MAX)
    sizes = _check_cdf(sizes)
    flows = _check_int("flows", flows, minimum=1, maximum=_U32_MAX)
    rng = _check_rng(rng)
    rack = np.asarray(racks, dtype=np.int64)
    if rack.shape != (hosts,):
        raise WorkloadError(f"racks must give one rack per host ({hosts}), got {rack.shape[0] if rack.ndim else 0}")
    try:
        p = float(p)
    except (TypeError, ValueError):
        raise WorkloadError(f"staggered_p must be a number within [0, 1], got {p!r}") from None
    if not 0.0 <= p <= 1.0:
        raise WorkloadError(f"staggered_p must be within [0, 1], got {p!r}")
    # hosts sorted by rack: rack r holds the positions [first[r], first[r] + count[r])
    order = np.argsort(rack, kind="stable")
    pos = np.empty(hosts, dtype=np.int64)
    pos[order] = np.arange(hosts)
    _, first_of, count_of = np.unique(rack[order], return_index=True, return_counts=True)
    idx = np.searchsorted(np.unique(rack), rack)
    first, count = first_of[idx], count_of[idx]  # per host: its rack's first position and size
    if p > 0 and count.min() < 2:
        raise WorkloadError(f"staggered_p = {p:g} needs at least 2 hosts under every rack (host "
                            f"{int(np.argmin(count))} is alone under its rack)")
    if p < 1 and count.max() == hosts:
        raise WorkloadError(f"staggered_p = {p:g} needs a second rack: every host is under the same one")
    start, src = _arrivals(rng, hosts=hosts, flows=flows, sizes=sizes, load=load, host_link_bps=host_link_bps,
                           start_spread_ns=start_spread_ns)
    local = rng.random(flows) < p
    n_local = np.maximum(count[src] - 1, 1)
    k = rng.integers(0, n_local, flows)
    k += k >= pos[src] - first[src]  # skip the sender itself
    local_dst = order[first[src] + k]
    m = rng.integers(0, np.maximum(hosts - count[src], 1), flows)
    m += np.where(m >= first[src], count[src], 0)  # skip the sender's rack
    remote_dst = order[np.minimum(m, hosts - 1)]
    size = sizes.sample(rng, flows)
    return _flow_columns(src, np.where(local, local_dst, remote_dst), size, start)


def wire_bytes(size_bytes: np.ndarray, mss_bytes: int, header_bytes: int) -> np.ndarray:
    """Bytes a flow puts on the wire: its payload plus ``header_bytes`` per packet of at most ``mss_bytes``."""
    size = np.asarray(size_bytes, dtype=np.int64)
    return size + -(-size // mss_bytes) * header_bytes


def deadlines(
    rng: np.random.Generator,
    size_bytes: np.ndarray,
    *,
    mean_ms: float,
    host_link_bps: float,
    mss_bytes: int,
    header_bytes: int,
    fraction: float | None = None,
    max_bytes: int | None = None,
    floor_ns: np.ndarray | None = None,
) -> np.ndarray:
    """Each flow's deadline in ns after its start (float64; NaN for a flow without one), as the D3 and PDQ
    papers draw them: D ~ Exponential(mean ``mean_ms``), independently per flow.

    Floor: D is at least ``floor_ns`` (per flow), by default the flow's transmission time at the host link rate,
    ``wire_bytes x 8 / host_link_bps`` (payload plus per-packet headers). A shorter deadline could not be met
    even by a flow alone in the fabric, so it would measure the draw rather than the scheme (with a 20 ms mean, a
    100 KB flow's 0.8 ms at 1 Gbps floors about 4% of the draws). The experiment key
    ``workload.deadline_floor = "ideal"`` (its default) passes each flow's ideal FCT instead, which adds its
    path's propagation and store-and-forward: a deadline on the transmission-time floor can be met by no
    scheme. ``fraction``: each flow has a deadline with this probability;
    ``max_bytes``: only flows of at most this size have one (PDQ's §5.3 web workload gives deadlines to the
    flows below 40 KB).

    Random draws, in order: one exponential per flow, then (with ``fraction``) one uniform per flow; every flow
    draws, whether it keeps a deadline or not, so that the draws do not depend on the sizes.
    """
    mean = _check_positive("deadline_mean_ms", mean_ms)
    host_link_bps = _check_positive("host_link_bps", host_link_bps)
    size = np.asarray(size_bytes, dtype=np.int64)
    n = len(size)
    d_ns = rng.exponential(mean * 1e6, n)
    if floor_ns is None:
        floor_ns = wire_bytes(size, mss_bytes, header_bytes).astype(np.float64) * 8.0 / host_link_bps * 1e9
    else:
        floor_ns = np.asarray(floor_ns, dtype=np.float64)
        if floor_ns.shape != (n,):
            raise WorkloadError(f"floor_ns must have one value per flow ({n}), got shape {floor_ns.shape}")
    d_ns = np.maximum(d_ns, floor_ns)
    keep = np.ones(n, dtype=bool)
    if fraction is not None:
        f = _check_positive("deadline_fraction", fraction)
        if f > 1:
            raise WorkloadError(f"deadline_fraction must be within (0, 1], got {fraction!r}")
        keep &= rng.random(n) < f
    if max_bytes is not None:
        keep &= size <= _check_int("deadline_max_bytes", max_bytes, minimum=1)
    return np.where(keep, d_ns, np.nan)


def load_rate_cdf(name_or_path: str | Path) -> Cdf:
    """A data generation rate CDF: a shipped name (``"fileserver"``, see :func:`list_rate_cdfs`) or a file of
    ``#`` comment lines and ``rate_bps cumulative_probability`` pairs, read like a flow-size CDF (values
    non-decreasing, last probability 1) and sampled the same way (linear interpolation between points)."""
    if isinstance(name_or_path, str) and (RATE_DIR / f"{name_or_path}{CDF_SUFFIX}").is_file():
        return _parse_cdf_file(RATE_DIR / f"{name_or_path}{CDF_SUFFIX}", name_or_path)
    if isinstance(name_or_path, str):
        looks_like_path = any(c in name_or_path for c in "/\\") or name_or_path.endswith(CDF_SUFFIX)
        if not looks_like_path and not Path(name_or_path).is_file():
            known = ", ".join(c.name for c in list_rate_cdfs())
            raise WorkloadError(f"unknown rate CDF {name_or_path!r}; known names: {known} (or give a file path)")
    path = Path(name_or_path)
    return _parse_cdf_file(path, path.stem)


def list_rate_cdfs() -> list[Cdf]:
    """The data generation rate CDFs shipped with fctlab, sorted by name."""
    return [_parse_cdf_file(p, p.stem) for p in sorted(RATE_DIR.glob(f"*{CDF_SUFFIX}"))]


#: How :func:`gen_rates` draws a flow's data generation rate.
GEN_RATE_DISTS = ("fixed", "uniform", "log_uniform", "cdf")


def gen_rates(
    rng: np.random.Generator,
    n: int,
    *,
    dist: str,
    rate_bps: float | None = None,
    min_bps: float | None = None,
    max_bps: float | None = None,
    cdf: Cdf | None = None,
    scale: float = 1.0,
) -> np.ndarray:
    """Each of ``n`` flows' data generation rate in bit/s (uint64, >= 1), the application model's ``r_g``:
    ``"fixed"`` (``rate_bps``), ``"uniform"`` on [min_bps, max_bps], ``"log_uniform"`` (uniform in log rate on
    [min_bps, max_bps]) or ``"cdf"`` (drawn from a rate CDF, see :func:`load_rate_cdf`), times ``scale`` (the
    RAX paper scales its 1 Gbps testbed rates by 10 for its 10 Gbps simulation). Draws ``n`` uniforms from
    ``rng`` whatever the distribution (none for "fixed"), in flow order."""
    n = _check_int("n", n, minimum=0)
    sc = _check_positive("gen_rate_scale", scale)
    if dist == "fixed":
        r = np.full(n, _check_positive("gen_rate_bps", rate_bps))
    elif dist in ("uniform", "log_uniform"):
        lo = _check_positive("gen_rate_min_bps", min_bps)
        hi = _check_positive("gen_rate_max_bps", max_bps)
        if hi < lo:
            raise WorkloadError(f"gen_rate_max_bps ({_fmt(hi)}) must be >= gen_rate_min_bps ({_fmt(lo)})")
        u = rng.random(n)
        r = lo + u * (hi - lo) if dist == "uniform" else np.exp(np.log(lo) + u * (np.log(hi) - np.log(lo)))
    elif dist == "cdf":
        if not isinstance(cdf, Cdf):
            raise WorkloadError("gen_rate_dist 'cdf' needs a rate CDF (gen_rate_cdf)")
        r = cdf.sample(rng, n).astype(np.float64)
    else:
        raise WorkloadError(f"gen_rate_dist must be one of {', '.join(GEN_RATE_DISTS)}, got {dist!r}")
    return np.maximum(np.round(r * sc), 1).astype(np.uint64)


def _derangement(rng: np.random.Generator, n: int) -> np.ndarray:
    # Rejection gives a uniform derangement; about e draws are needed on average.
    while True:
        perm = rng.permutation(n)
        if not np.any(perm == np.arange(n)):
            return perm


def permutation(
    *,
    hosts: int,
    cdf: Cdf | UniformSizes,
    load: float | None,
    host_link_bps: float | None,
    flows: int,
    rng: np.random.Generator,
    start_spread_ns: float = 0.0,
) -> pd.DataFrame:
    """Permutation traffic (PDQ §5.3 "Random Permutation"): every host sends only to its partner in one random
    derangement of the hosts, fixed for the run (so every host also receives from exactly one sender). With
    ``load``: the arrivals and load of ``all_to_all`` (each downlink sees ``load`` too); with ``load=None`` the
    flows arrive together, flow ``j`` from host ``j mod hosts`` (:func:`_arrivals`).

    Random draws, in order: the derangement, the arrivals (with a load: gaps, sources), sizes.
    """
    return _permutation(hosts=hosts, cdf=cdf, load=load, host_link_bps=host_link_bps, flows=flows, rng=rng,
                        start_spread_ns=start_spread_ns).frame()


def _permutation(
    *,
    hosts: int,
    cdf: Cdf | UniformSizes,
    load: float | None,
    host_link_bps: float | None,
    flows: int,
    rng: np.random.Generator,
    start_spread_ns: float = 0.0,
) -> FlowColumns:
    """:func:`permutation` as :class:`FlowColumns`."""
    hosts = _check_int("hosts", hosts, minimum=2, maximum=_U32_MAX)
    cdf = _check_cdf(cdf)
    if load is not None:
        load = _check_load(load)
        host_link_bps = _check_positive("host_link_bps", host_link_bps)
    flows = _check_int("flows", flows, minimum=1, maximum=_U32_MAX)
    rng = _check_rng(rng)

    partner = _derangement(rng, hosts)
    start, src = _arrivals(rng, hosts=hosts, flows=flows, sizes=cdf, load=load, host_link_bps=host_link_bps,
                           start_spread_ns=start_spread_ns)
    size = cdf.sample(rng, flows)
    return _flow_columns(src, partner[src], size, start)


# Rows of random keys drawn at once when picking incast senders; bounds memory to about 32 MB.
_INCAST_KEYS_PER_CHUNK = 4_000_000


def incast(
    *,
    hosts: int,
    fan_in: int,
    response_bytes: int,
    queries: int,
    rng: np.random.Generator,
    query_rate_hz: float | None = None,
    load: float | None = None,
    host_link_bps: float | None = None,
) -> pd.DataFrame:
    """Partition-aggregate (incast) traffic.

    Queries arrive as a Poisson process. Each picks an aggregator uniformly and ``fan_in`` distinct other hosts,
    which all send ``response_bytes`` to the aggregator at the query's arrival time. Give exactly one of
    ``query_rate_hz`` or ``load``: with ``load`` (and ``host_link_bps``) the rate is
    ``lambda_q = load * host_link_bps * hosts / (8 * fan_in * response_bytes)``, so that the aggregators'
    downlinks, averaged over all hosts, carry ``load``. Extra column ``query_id`` (uint32, in arrival order).

    Random draws, in order: gaps, aggregators, responders.
    """
    return _incast(
        hosts=hosts, fan_in=fan_in, response_bytes=response_bytes, queries=queries, rng=rng,
        query_rate_hz=query_rate_hz, load=load, host_link_bps=host_link_bps,
    ).frame()


def _incast(
    *,
    hosts: int,
    fan_in: int,
    response_bytes: int,
    queries: int,
    rng: np.random.Generator,
    query_rate_hz: float | None = None,
    load: float | None = None,
    host_link_bps: float | None = None,
) -> FlowColumns:
    """:func:`incast` as :class:`FlowColumns`."""
    hosts = _check_int("hosts", hosts, minimum=2, maximum=_U32_MAX)
    fan_in = _check_int("fan_in", fan_in, minimum=1)
    if fan_in >= hosts:
        raise WorkloadError(f"fan_in must be < hosts ({hosts}), got {fan_in}")
    response_bytes = _check_int("response_bytes", response_bytes, minimum=1)
    queries = _check_int("queries", queries, minimum=1)
    if queries * fan_in > _U32_MAX:
        raise WorkloadError(f"queries x fan_in = {queries * fan_in} flows is more than a uint32 flow_id can number")
    rng = _check_rng(rng)
    if (query_rate_hz is None) == (load is None):
        raise WorkloadError("give exactly one of query_rate_hz or load")
    if load is not None:
        load = _check_load(load)
        if host_link_bps is None:
            raise WorkloadError("host_link_bps is required when load is given")
        host_link_bps = _check_positive("host_link_bps", host_link_bps)
        rate = load * host_link_bps * hosts / (8.0 * fan_in * response_bytes)
    else:
        rate = _check_positive("query_rate_hz", query_rate_hz)

    q_start = _poisson_starts_ps(rng, rate, queries)
    agg = rng.integers(0, hosts, queries)
    # fan_in distinct hosts among the hosts - 1 others: the fan_in smallest of independent uniform keys give a
    # uniform subset. Responders are listed in host order within a query.
    chosen = np.empty((queries, fan_in), dtype=np.int64)
    rows = max(1, _INCAST_KEYS_PER_CHUNK // (hosts - 1))
    for lo in range(0, queries, rows):
        keys = rng.random((min(rows, queries - lo), hosts - 1))
        pick = np.argpartition(keys, fan_in - 1, axis=1)[:, :fan_in] if fan_in < hosts - 1 else np.argsort(keys, axis=1)
        chosen[lo : lo + len(keys)] = np.sort(pick, axis=1)
    src = chosen + (chosen >= agg[:, None])
    qid = np.repeat(np.arange(queries, dtype=np.uint32), fan_in)
    return _flow_columns(
        src.ravel(),
        np.repeat(agg, fan_in),
        np.full(queries * fan_in, response_bytes, dtype=np.uint64),
        np.repeat(q_start, fan_in),
        query_id=qid,
    )


# --------------------------------------------------------------------------------------------------------------
# Traces
# --------------------------------------------------------------------------------------------------------------

TRACE_REQUIRED = ("src", "dst", "size_bytes", "start_ns")
#: The latest start a trace may give, in ns: 2^63 ps, half the engine's 64-bit picosecond clock (about 107 days),
#: so that a flow's start plus its run still fits.
MAX_START_NS = 2**63 // 1000
TRACE_OPTIONAL = (
    "priority", "lower_bytes", "upper_bytes", "estimate_bytes", "deadline_ns", "gen_rate_bps", "after_flow", "qclimb",
    "conn", "path",
)


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
        if pd.api.types.is_unsigned_integer_dtype(s.dtype) and len(s) and int(s.max()) > _I64_MAX:
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


def _first(mask: np.ndarray) -> int | None:
    idx = np.flatnonzero(mask)
    return int(idx[0]) if len(idx) else None


def _int_column(
    df: pd.DataFrame, col: str, where: str, is_csv: bool, *, minimum: int, maximum: int | None = None
) -> np.ndarray:
    values = _numeric_column(df, col, where, is_csv)
    if values.dtype.kind == "f":
        i = _first(values != np.floor(values))
        if i is not None:
            raise WorkloadError(
                f"{where}: column {col!r}, {_row_label(i, is_csv)}: {_fmt(values[i])} is not an integer"
            )
    i = _first(values < minimum)
    if i is not None:
        raise WorkloadError(f"{where}: column {col!r}, {_row_label(i, is_csv)}: {_fmt(values[i])} must be >= {minimum}")
    if maximum is not None:
        i = _first(values > maximum)
        if i is not None:
            raise WorkloadError(
                f"{where}: column {col!r}, {_row_label(i, is_csv)}: {_fmt(values[i])} must be <= {maximum}"
            )
    i = _first(values >= 2.0**63) if values.dtype.kind == "f" else None
    if i is not None:
        raise WorkloadError(f"{where}: column {col!r}, {_row_label(i, is_csv)}: {_fmt(values[i])} is too large "
                            f"(at most {_I64_MAX})")
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

    src = _int_column(df, "src", where, is_csv, minimum=0, maximum=_U32_MAX)
    dst = _int_column(df, "dst", where, is_csv, minimum=0, maximum=_U32_MAX)
    size = _int_column(df, "size_bytes", where, is_csv, minimum=1)
    i = _first(src == dst)
    if i is not None:
        raise WorkloadError(f"{where}: column 'dst', {_row_label(i, is_csv)}: src == dst ({int(src[i])})")
    start_ns = _numeric_column(df, "start_ns", where, is_csv)
    i = _first(start_ns < 0)
    if i is not None:
        raise WorkloadError(f"{where}: column 'start_ns', {_row_label(i, is_csv)}: negative start {_fmt(start_ns[i])}")
    if rebase:
        start_ns = start_ns - start_ns.min()  # exact for integer columns (epoch nanoseconds fit int64)
    i = _first(start_ns > MAX_START_NS)
    if i is not None:
        hint = ("; for epoch timestamps set workload.trace_rebase = true to start the trace at its first flow"
                if not rebase else "")
        raise WorkloadError(
            f"{where}: column 'start_ns', {_row_label(i, is_csv)}: start {_fmt(start_ns[i])} ns is beyond what the "
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
        i = _first(extra["lower_bytes"] > extra["upper_bytes"])
        if i is not None:
            raise WorkloadError(f"{where}: column 'lower_bytes', {_row_label(i, is_csv)}: lower_bytes > upper_bytes")
    if "deadline_ns" in cols:
        d = _numeric_column(df, "deadline_ns", where, is_csv, allow_nan=True).astype(np.float64)
        # the time a flow is allowed after its start: it must end after the start, and fit the engine's clock
        i = _first(d < 0.0005)
        if i is not None:
            raise WorkloadError(
                f"{where}: column 'deadline_ns', {_row_label(i, is_csv)}: deadline {_fmt(d[i])} must be > 0 "
                "(ns allowed after the flow's start; at least 1 ps; leave the cell empty for no deadline)"
            )
        i = _first(d > MAX_START_NS)
        if i is not None:
            raise WorkloadError(
                f"{where}: column 'deadline_ns', {_row_label(i, is_csv)}: deadline {_fmt(d[i])} ns is beyond what "
                f"the engine can represent (at most {MAX_START_NS:.4g} ns after the start)"
            )
        extra["deadline_ns"] = d
    if "gen_rate_bps" in cols:
        g = _numeric_column(df, "gen_rate_bps", where, is_csv).astype(np.float64)
        i = _first(g <= 0)
        if i is not None:
            raise WorkloadError(f"{where}: column 'gen_rate_bps', {_row_label(i, is_csv)}: {_fmt(g[i])} must be > 0")
        extra["gen_rate_bps"] = g
    sort_ps = None
    if "after_flow" in cols:
        after = _int_column(df, "after_flow", where, is_csv, minimum=-1)
        i = _first(after >= np.arange(len(after)))
        if i is not None:
            raise WorkloadError(
                f"{where}: column 'after_flow', {_row_label(i, is_csv)}: {int(after[i])} is not an earlier row "
                "(a flow may only wait for a flow on an earlier row; rows count from 0 here)"
            )
        # a waiting flow sorts no earlier than its parent (parents come first in the file)
        sort_ps = start_ps.copy()
        for k in np.flatnonzero(after >= 0):
            sort_ps[k] = max(sort_ps[k], sort_ps[after[k]])
        extra["after_flow"] = after
    if "qclimb" in cols:
        extra["qclimb"] = _bool_column(df, "qclimb", where, is_csv)
    if "conn" in cols:
        conn = _int_column(df, "conn", where, is_csv, minimum=0, maximum=_U32_MAX - 1)
        # one connection, one pair of hosts
        pairs = pd.DataFrame({"conn": conn, "src": src, "dst": dst})
        first = pairs.groupby("conn", sort=False)[["src", "dst"]].transform("first")
        i = _first(((first["src"] != pairs["src"]) | (first["dst"] != pairs["dst"])).to_numpy())
        if i is not None:
            raise WorkloadError(
                f"{where}: column 'conn', {_row_label(i, is_csv)}: connection {int(conn[i])} joins host "
                f"{int(first['src'].iloc[i])} to {int(first['dst'].iloc[i])} on an earlier row, not {int(src[i])} to "
                f"{int(dst[i])}"
            )
        extra["conn"] = conn.astype(np.uint32)
    if "path" in cols:
        # a source route: the index of the flow's path among its pair's equal-cost paths (-1: ECMP)
        extra["path"] = _int_column(df, "path", where, is_csv, minimum=-1, maximum=_U32_MAX - 1)

    return _flow_frame(src, dst, size, start_ps, sort_ps=sort_ps, **extra)


def _bool_column(df: pd.DataFrame, col: str, where: str, is_csv: bool) -> np.ndarray:
    """A column of booleans written as true/false or 1/0."""
    raw = df[col]
    if raw.dtype == bool:
        return raw.to_numpy()
    text = raw.astype(str).str.strip().str.lower()
    ok = text.isin(["true", "false", "1", "0", "1.0", "0.0"]).to_numpy()
    i = _first(~ok)
    if i is not None:
        raise WorkloadError(f"{where}: column {col!r}, {_row_label(i, is_csv)}: {raw.iloc[i]!r} is not true/false or 1/0")
    return text.isin(["true", "1", "1.0"]).to_numpy()


def check_hosts(flows: pd.DataFrame | FlowColumns, n_hosts: int) -> None:
    """Raise WorkloadError naming the first flow whose src or dst is not a host of an n_hosts topology."""
    n_hosts = _check_int("n_hosts", n_hosts, minimum=2)
    for col in ("src", "dst"):
        if col not in flows.columns:
            raise WorkloadError(f"flows: missing column {col!r}")
    src = column(flows, "src", np.int64)
    dst = column(flows, "dst", np.int64)
    bad = (src >= n_hosts) | (dst >= n_hosts) | (src < 0) | (dst < 0)
    i = _first(bad)
    if i is not None:
        col = "src" if not 0 <= src[i] < n_hosts else "dst"
        fid = int(column(flows, "flow_id")[i]) if "flow_id" in flows.columns else i
        raise WorkloadError(
            f"flows: flow_id {fid} (table row {i}): {col} {int(column(flows, col)[i])} is not a host of this topology "
            f"(hosts are 0..{n_hosts - 1})"
        )
