"""HyLine's threshold band (§IV-E of the HyLine paper): where to put the size H that splits flows into its two
classes (first class: smaller than H, sent at once in the high-priority queue; second class: scheduled by the
manager, MAN).

The paper bounds H from both sides, on one link of capacity C at load rho, with flow service times X = size / C:

* **Lower bound.** The smallest second-class flow (size H) waits, before its first service, as long as it would in
  a single M/G/1 queue served shortest-remaining-processing-time first (the first class and the shorter remaining
  second-class flows all go ahead of it). Its mean waiting time, after Schrage and Miller as the paper writes it,

      E[W(h)] = lambda * (m2(h) + h^2 * (1 - F(h))) / (2 * (1 - rho(h))^2),    h = H / C,

  with lambda the flow arrival rate, F the CDF of X, m2(h) = integral_0^h t^2 dF(t) and rho(h) = lambda *
  integral_0^h t dF(t) the load of flows no longer than h, must be at least T_cost, the delay of reaching the
  manager (its network and computation delay): otherwise sending that flow in the first class is faster. E[W(h)]
  grows with h, so the bound is the smallest H with E[W(H / C)] >= T_cost.
* **Upper bound.** The first class must stay lightly loaded: rho(h) / rho <= 0.1, the share of the bytes carried
  by flows no longer than H. The bound is the largest such H.

The paper plots both against H for web search on 1 Gbps at loads up to 90% (its Figure 3, lost in our copy) with
T_cost = 100 us, and picks H = 1 MB from the band at load 0.6.

Choices: the CDF is taken as the piecewise-linear distribution of its table (uniform between points, an atom at
the first point), without the rounding up to whole packets that sampling applies; sizes are payload bytes and C
the link's bit rate (the paper's service time is size / link speed, with no header overhead); the strict "<=" of
rho(x) counts flows of size exactly x. The bounds are found by bisection on H to within 1 byte.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fctlab.workloads import Cdf, load_cdf

#: The paper's cap on the first class's share of the load (rho(h) / rho).
FIRST_CLASS_SHARE = 0.1


class BandError(ValueError):
    """A bad argument to the band computation (the message names it)."""


def _segments(cdf: Cdf) -> tuple[float, float, np.ndarray, np.ndarray, np.ndarray]:
    """The atom (size, mass) at the first point and the uniform segments (start, end, mass) of the table."""
    s, p = cdf.sizes, cdf.probs
    return float(s[0]), float(p[0]), s[:-1], s[1:], np.diff(p)


def moments_below(cdf: Cdf, size: float) -> tuple[float, float, float]:
    """(F, m1, m2) of flow sizes in bytes at ``size``: P(S <= size), E[S; S <= size] and E[S^2; S <= size]."""
    a0, w0, a, b, w = _segments(cdf)
    f = m1 = m2 = 0.0
    if a0 <= size:
        f, m1, m2 = w0, w0 * a0, w0 * a0 * a0
    flat = b == a
    c = np.clip(size, a, b)
    span = np.where(flat, 1.0, b - a)
    frac = np.where(flat, (a <= size).astype(float), (c - a) / span)
    f += float(np.sum(w * frac))
    # a uniform segment's part below c: mass w (c - a) / (b - a), first moment its mass times (a + c) / 2,
    # second moment w (c^3 - a^3) / (3 (b - a))
    m1 += float(np.sum(np.where(flat, w * frac * a, w * frac * (a + c) / 2)))
    m2 += float(np.sum(np.where(flat, w * frac * a * a, w * (c**3 - a**3) / (3 * span))))
    return min(f, 1.0), m1, m2


def mean_size(cdf: Cdf) -> float:
    """Mean of the table's piecewise-linear distribution (bytes; no rounding up to whole packets)."""
    return moments_below(cdf, float(cdf.sizes[-1]))[1]


def waiting_time(cdf: Cdf, load: float, link_bps: float, h_bytes: float) -> float:
    """E[W(h)] in seconds: the mean wait before first service of a flow of ``h_bytes`` under M/G/1-SRPT (see the
    module docs), at ``load`` on a link of ``link_bps``."""
    _check(load, link_bps)
    c = link_bps / 8.0  # bytes per second
    lam = load * c / mean_size(cdf)
    f, m1, m2 = moments_below(cdf, h_bytes)
    h = h_bytes / c
    rho_h = lam * m1 / c
    if rho_h >= 1.0:
        return float("inf")
    return lam * (m2 / c**2 + h * h * (1.0 - f)) / (2.0 * (1.0 - rho_h) ** 2)


def first_class_share(cdf: Cdf, h_bytes: float) -> float:
    """rho(h) / rho: the share of the bytes in flows of at most ``h_bytes`` (independent of the load)."""
    return moments_below(cdf, h_bytes)[1] / mean_size(cdf)


def _check(load: float, link_bps: float) -> None:
    if not (0.0 < load < 1.0):
        raise BandError(f"load: must be strictly between 0 and 1, got {load}")
    if not (link_bps > 0 and np.isfinite(link_bps)):
        raise BandError(f"link rate: must be positive, got {link_bps} bit/s")


@dataclass(frozen=True)
class Band:
    """The band of H for one workload, load, link and T_cost; ``lower``/``upper`` in bytes, None if no H in the
    CDF's range meets that bound (``lower`` None: even the largest flow waits less than T_cost)."""

    cdf: str
    load: float
    link_bps: float
    tcost_s: float
    share: float
    lower: float | None
    upper: float | None

    @property
    def empty(self) -> bool:
        return self.lower is None or self.upper is None or self.lower > self.upper


def _bisect(pred, lo: float, hi: float) -> float:
    """Smallest x in [lo, hi] with pred(x) true, pred monotone (false then true), to within 1 byte."""
    while hi - lo > 1.0:
        mid = (lo + hi) / 2
        if pred(mid):
            hi = mid
        else:
            lo = mid
    return hi


def band(cdf: Cdf | str, load: float, link_bps: float, tcost_s: float, share: float = FIRST_CLASS_SHARE) -> Band:
    """The band of thresholds H: [smallest H with E[W(H)] >= T_cost, largest H with rho(H) / rho <= share]."""
    c = load_cdf(cdf) if isinstance(cdf, str) else cdf
    _check(load, link_bps)
    if not (tcost_s > 0 and np.isfinite(tcost_s)):
        raise BandError(f"T_cost: must be positive, got {tcost_s} s")
    if not (0.0 < share <= 1.0):
        raise BandError(f"share: must be in (0, 1], got {share}")
    lo, hi = 1.0, float(c.sizes[-1])
    lower = None
    if waiting_time(c, load, link_bps, hi) >= tcost_s:
        lower = _bisect(lambda x: waiting_time(c, load, link_bps, x) >= tcost_s, lo, hi)
    upper = None
    if first_class_share(c, lo) <= share:
        upper = _bisect(lambda x: first_class_share(c, x) > share, lo, hi) - 1.0
        if first_class_share(c, hi) <= share:
            upper = hi
    return Band(cdf=c.name, load=load, link_bps=link_bps, tcost_s=tcost_s, share=share, lower=lower, upper=upper)


def plot_band(cdf: Cdf | str, loads, link_bps: float, tcost_s: float, chosen_load: float, path,
              share: float = FIRST_CLASS_SHARE) -> None:
    """The paper's Figure 3: E[W(H)] against H for each load (log scales), T_cost, rho(H) / rho on a second axis,
    and the band at ``chosen_load`` shaded. Written to ``path`` (PNG or PDF)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    c = load_cdf(cdf) if isinstance(cdf, str) else cdf
    hs = np.geomspace(max(1.0, float(c.sizes[0])), float(c.sizes[-1]), 300)
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    for rho in loads:
        w = [waiting_time(c, rho, link_bps, h) * 1e6 for h in hs]
        ax.plot(hs, w, label=f"E[W(H)], load {rho:g}")
    ax.axhline(tcost_s * 1e6, color="k", ls="--", lw=1, label=f"T_cost = {tcost_s * 1e6:g} us")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("threshold H (bytes)")
    ax.set_ylabel("mean wait of a flow of size H (us)")
    ax2 = ax.twinx()
    ax2.plot(hs, [first_class_share(c, h) for h in hs], color="gray", lw=2, label="rho(H) / rho")
    ax2.axhline(share, color="gray", ls=":", lw=1)
    ax2.set_ylabel("first class's share of the load")
    ax2.set_ylim(0, 1)
    b = band(c, chosen_load, link_bps, tcost_s, share)
    if not b.empty:
        ax.axvspan(b.lower, b.upper, color="tab:green", alpha=0.15, label=f"band at load {chosen_load:g}")
    lines = ax.get_legend_handles_labels()
    lines2 = ax2.get_legend_handles_labels()
    ax.legend(lines[0] + lines2[0], lines[1] + lines2[1], fontsize=7, loc="upper left")
    ax.set_title(f"HyLine threshold band: {c.name}, {link_bps / 1e9:g} Gbps")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
