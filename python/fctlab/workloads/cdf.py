"""Flow-size distributions: the published CDFs shipped in ``fctlab/data/workloads``, user CDF files, and
D3's uniform sizes. How a :class:`Cdf` is sampled is told in :mod:`fctlab.workloads`."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache, cached_property
from pathlib import Path
from typing import Any

import numpy as np

from fctlab.workloads.checks import WorkloadError, check_int, check_positive, fmt_number

__all__ = [
    "Cdf", "UniformSizes", "NS2_PACKET_BYTES", "SMALL_FLOW_BYTES", "DATA_DIR", "CDF_SUFFIX", "list_cdfs", "cdf_names",
    "load_cdf", "describe", "parse_cdf_file", "check_sizes",
]

# The ns-2 tables count TCP payload packets of 1460 bytes (pktSize_ in the PIAS/pFabric scripts).
NS2_PACKET_BYTES = 1460
# Upper edge of the "small flow" bin used by the papers, (0, 100 KB]; decimal kilobytes.
SMALL_FLOW_BYTES = 100_000

DATA_DIR = Path(__file__).resolve().parent.parent / "data" / "workloads"
CDF_SUFFIX = ".cdf"

# A last probability this close to 1 is taken as 1 (published tables are rounded to a few digits).
_PROB_TOLERANCE = 1e-6
#: Sizes mapped from their uniform draws at a time by `Cdf.sample`.
_SAMPLE_CHUNK = 1 << 20
_PACKETS_RE = re.compile(r"original units:\s*packets", re.IGNORECASE)


# eq=False: the fields hold numpy arrays, for which a generated __eq__/__hash__ would be wrong.
@dataclass(frozen=True, eq=False)
class Cdf:
    """A piecewise-linear flow-size CDF (see :mod:`fctlab.workloads` for how it is sampled).

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
        unit = check_int("unit_bytes", unit_bytes, minimum=1)
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
                f"{where}: the last cumulative probability is {fmt_number(p[-1])}, it must be 1 (within 1e-6)"
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
        n = check_int("n", n, minimum=0)
        u = rng.random(n)
        # mapped a chunk at a time (the same values: the map is elementwise), so that its dozen temporary arrays
        # are a chunk's, not n's (10,000,000 flows: about 1 GB at once otherwise)
        out = np.empty(n, dtype=np.int64)
        for lo in range(0, n, _SAMPLE_CHUNK):
            out[lo:lo + _SAMPLE_CHUNK] = self._units_at(u[lo:lo + _SAMPLE_CHUNK])
        out *= self.unit_bytes
        return out

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


def _check_point(
    where: str, at: str, size: float, prob: float, prev_size: float | None, prev_prob: float | None
) -> None:
    if not math.isfinite(size) or size < 0:
        raise WorkloadError(f"{where}: {at}: size {fmt_number(size)} must be a finite number >= 0")
    if not math.isfinite(prob) or prob < 0 or prob > 1 + _PROB_TOLERANCE:
        raise WorkloadError(f"{where}: {at}: cumulative probability {fmt_number(prob)} must be within [0, 1]")
    if prev_size is not None and size < prev_size:
        raise WorkloadError(
            f"{where}: {at}: size {fmt_number(size)} is smaller than the previous size {fmt_number(prev_size)} "
            "(sizes must be non-decreasing)"
        )
    if prev_prob is not None and prob < prev_prob:
        raise WorkloadError(
            f"{where}: {at}: cumulative probability {fmt_number(prob)} is smaller than the previous one {fmt_number(prev_prob)} "
            "(probabilities must be non-decreasing)"
        )


def parse_cdf_file(path: Path, name: str) -> Cdf:
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


def cdf_names() -> list[str]:
    """The names of the CDFs shipped with fctlab, sorted (each the ``name`` of its :func:`list_cdfs` entry),
    without reading the files."""
    return _shipped_names()


@cache
def _load_shipped(name: str) -> Cdf:
    # Safe to cache: a Cdf and its arrays are immutable.
    return parse_cdf_file(DATA_DIR / f"{name}{CDF_SUFFIX}", name)


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
    return parse_cdf_file(name_or_path, name_or_path.stem)


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


@dataclass(frozen=True)
class UniformSizes:
    """Flow sizes uniform on the integers ``[lo_bytes, hi_bytes]``, with ``lo = round(0.02 x mean)`` and
    ``hi = round(1.98 x mean)``: D3's query-aggregation sizes (uniform on [2 KB, 198 KB], mean 100 KB), which
    the PDQ paper's §5.2 reuses and scales to means of 100 to 350 KB. ``sample`` and ``mean_bytes`` answer
    like a :class:`Cdf`'s, so the generators take either."""

    mean: float

    def __post_init__(self) -> None:
        v = check_positive("size_uniform_mean_bytes", self.mean)
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
        n = check_int("n", n, minimum=0)
        return rng.integers(self.lo_bytes, self.hi_bytes + 1, n, dtype=np.int64)


def check_sizes(cdf: Any) -> Cdf | UniformSizes:
    if not isinstance(cdf, (Cdf, UniformSizes)):
        raise WorkloadError(f"cdf must be a Cdf (from load_cdf) or UniformSizes, got {type(cdf).__name__}")
    return cdf
