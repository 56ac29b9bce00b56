"""Per-flow extras drawn after the flows: deadlines (D3, PDQ), and the application model's data generation
rates with the rate CDFs shipped in ``fctlab/data/rates``. Each draws from the rng after the flow generator,
so adding one leaves the flows' own draws as they were."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from fctlab.workloads.cdf import CDF_SUFFIX, Cdf, parse_cdf_file
from fctlab.workloads.checks import WorkloadError, check_int, check_positive, fmt_number

__all__ = ["wire_bytes", "deadlines", "RATE_DIR", "load_rate_cdf", "list_rate_cdfs", "GEN_RATE_DISTS", "gen_rates"]

#: Data generation rate CDFs (the application model): ``rate_bps cumulative_probability`` per line.
RATE_DIR = Path(__file__).resolve().parent.parent / "data" / "rates"


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
    mean = check_positive("deadline_mean_ms", mean_ms)
    host_link_bps = check_positive("host_link_bps", host_link_bps)
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
        f = check_positive("deadline_fraction", fraction)
        if f > 1:
            raise WorkloadError(f"deadline_fraction must be within (0, 1], got {fraction!r}")
        keep &= rng.random(n) < f
    if max_bytes is not None:
        keep &= size <= check_int("deadline_max_bytes", max_bytes, minimum=1)
    return np.where(keep, d_ns, np.nan)


def load_rate_cdf(name_or_path: str | Path) -> Cdf:
    """A data generation rate CDF: a shipped name (``"fileserver"``, see :func:`list_rate_cdfs`) or a file of
    ``#`` comment lines and ``rate_bps cumulative_probability`` pairs, read like a flow-size CDF (values
    non-decreasing, last probability 1) and sampled the same way (linear interpolation between points)."""
    if isinstance(name_or_path, str) and (RATE_DIR / f"{name_or_path}{CDF_SUFFIX}").is_file():
        return parse_cdf_file(RATE_DIR / f"{name_or_path}{CDF_SUFFIX}", name_or_path)
    if isinstance(name_or_path, str):
        looks_like_path = any(c in name_or_path for c in "/\\") or name_or_path.endswith(CDF_SUFFIX)
        if not looks_like_path and not Path(name_or_path).is_file():
            known = ", ".join(c.name for c in list_rate_cdfs())
            raise WorkloadError(f"unknown rate CDF {name_or_path!r}; known names: {known} (or give a file path)")
    path = Path(name_or_path)
    cdf = parse_cdf_file(path, path.stem)
    if cdf.sizes[0] <= 0:
        # draws interpolate from the first point: a CDF from 0 gives rates near 0 (1 bit/s after rounding),
        # whose flows generate their data for days; a trace's gen_rate_bps = 0 is refused the same way
        raise WorkloadError(
            f"{path}: a rate CDF's rates must be > 0 bit/s; its first point is {cdf.sizes[0]:g} (draws between it and "
            "the next point would be rates near 0, flows that never finish); start it at the lowest real rate"
        )
    return cdf


def list_rate_cdfs() -> list[Cdf]:
    """The data generation rate CDFs shipped with fctlab, sorted by name."""
    return [parse_cdf_file(p, p.stem) for p in sorted(RATE_DIR.glob(f"*{CDF_SUFFIX}"))]


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
    n = check_int("n", n, minimum=0)
    sc = check_positive("gen_rate_scale", scale)
    if dist == "fixed":
        r = np.full(n, check_positive("gen_rate_bps", rate_bps))
    elif dist in ("uniform", "log_uniform"):
        lo = check_positive("gen_rate_min_bps", min_bps)
        hi = check_positive("gen_rate_max_bps", max_bps)
        if hi < lo:
            raise WorkloadError(f"gen_rate_max_bps ({fmt_number(hi)}) must be >= gen_rate_min_bps ({fmt_number(lo)})")
        u = rng.random(n)
        r = lo + u * (hi - lo) if dist == "uniform" else np.exp(np.log(lo) + u * (np.log(hi) - np.log(lo)))
    elif dist == "cdf":
        if not isinstance(cdf, Cdf):
            raise WorkloadError("gen_rate_dist 'cdf' needs a rate CDF (gen_rate_cdf)")
        r = cdf.sample(rng, n).astype(np.float64)
    else:
        raise WorkloadError(f"gen_rate_dist must be one of {', '.join(GEN_RATE_DISTS)}, got {dist!r}")
    return np.maximum(np.round(r * sc), 1).astype(np.uint64)
