"""PIAS demotion thresholds: derived from a load and a flow-size CDF (PIAS paper §3), and the published presets.

PIAS tags a flow's packets by the bytes it has sent: priority 1 up to alpha_1 bytes, priority 2 up to alpha_2, and
so on down to queue K. This module chooses alpha_1 < ... < alpha_{K-1} the way §3 ("Determining the thresholds")
of the PIAS paper (Bai et al., HotNets 2014) does, checks that choice
against a numerical optimiser of the same objective, and ships the thresholds the authors' ns-2 scripts used.

Formulation (§3, "Problem formulation" and "Analysis"), one bottleneck link at load rho, K queues:

* ``theta_j = F(alpha_j) - F(alpha_{j-1})`` is the share of flows whose size falls in [alpha_{j-1}, alpha_j), so
  the share of flows that finish in queue j, with alpha_0 = 0 and alpha_K = infinity. Write
  ``S_j = theta_1 + ... + theta_j = F(alpha_j)`` for the cumulative shares (S_0 = 0, S_K = 1).
* The time a flow spends in queue l is ``T_l = theta_l * rho / (1 - rho * S_{l-1})``, and the upper bound of the
  average FCT that the paper minimises is eq. (1): ``T = sum_l T_l * (theta_l + ... + theta_K)
  = sum_l T_l * (1 - S_{l-1})``  (:func:`average_fct_bound`; a number in the model's own units, not seconds).
* The paper turns (1) into the Sum-of-Linear-Ratios problem (2): maximise
  ``T'' = sum_{l=1}^{K} theta_l / (1 - rho * S_{l-1})`` with theta_K = 1 - S_{K-1} (:func:`objective`).
  The two are the same problem: algebra gives ``T = 1 - (1 - rho) * T''`` exactly (tested), so the theta that
  maximises T'' minimises T.
* Constraints: theta_l >= 0 for every l. The paper writes "the only constraint is theta_l >= 0"; we apply it to
  the last share too (theta_K = 1 - S_{K-1} >= 0, i.e. S_{K-1} <= 1), without which (2) is unbounded.

Solution method (§3, "Solution method", eqs. 3-5). Every ratio theta_l / (1 - rho * S_{l-1}) is at most 1, and
the paper maximises the sum by making each numerator as close to its denominator as possible, setting
``theta_2 = 1 - rho * theta_1`` (eq. 4), ``theta_3 = 1 - rho * (theta_1 + theta_2)`` (eq. 5) and in general
``theta_l = 1 - rho * S_{l-1}``; every theta_l is then an expression of theta_1, and sum(theta) = 1 fixes theta_1.

Choice the paper leaves open (it is forced: the recursion as printed has no solution). With ratio exactly 1,
``theta_1 + theta_2 = 1 + (1 - rho) * theta_1 > 1`` for any theta_1 > 0, so the shares of the first two queues
alone exceed all flows (:func:`literal_recursion` shows it; a test checks it). The feasible reading of "make the
ratios as close to 1 as possible" is to make them all *equal*: the common value is the first ratio,
theta_1 / (1 - 0) = theta_1, so the recursion becomes

    theta_l = theta_1 * (1 - rho * (theta_1 + ... + theta_{l-1})),    l = 2 .. K        (eqs. 4-5, scaled)

and, as the paper does, sum(theta) = 1 then fixes theta_1. Writing d_l = 1 - rho * S_l, the recursion is
d_l = d_{l-1} * (1 - rho * theta_1), so d_K = 1 - rho gives the closed form
``theta_1 = (1 - (1 - rho) ** (1 / K)) / rho``. This is the paper's "closed-form analytical solution", and it
is also the exact maximiser of (2): setting dT''/dS_j = 0 gives d_{j+1} * d_{j-1} = d_j ** 2 (a geometric d), which
is the same point; :func:`derive` with ``method="numeric"`` (SLSQP from many starts over the cumulative shares)
finds the same objective value, which the tests check.

From shares to bytes (the paper: "given the thetas and F, it gives the thresholds in bytes"; the rounding is ours):
alpha_j = F^-1(S_j) = ``Cdf.quantile(S_j)``, the flow size the workload sampler returns at u = S_j (whole
1460-byte packets for the ns-2 tables), so that flows of at most alpha_j bytes finish in queues 1..j. A flow
stays in queue j while its bytes sent are <= alpha_j (the PIAS ns-2 tagging rule). A CDF with atoms (data mining
puts half its flows at one packet) can map several S_j to the same size; thresholds are kept strictly increasing
(alpha_j >= alpha_{j-1} + one size unit, the constraint alpha_{j-1} < alpha_j of eq. 1) and capped at the largest
size, and the shares the byte thresholds actually give are reported as ``realized_shares`` beside the targets.

Presets: the thresholds of the PIAS ns-2 simulations (8 queues; web search and data mining at loads 0.5-0.9), from
``docs/reference-parameters.md``, which transcribes them from HKUST-SING/PIAS-NS2 @5fb5867
(``scripts/run_pias_dctcp.py`` and ``scripts/run_pias_vl2.py``, in packets x 1460). They came from the authors'
own search, which the paper does not state, and differ from what §3 derives.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from fctlab.workloads import NS2_PACKET_BYTES, Cdf, load_cdf

__all__ = [
    "ThresholdError",
    "Thresholds",
    "METHODS",
    "MIN_QUEUES",
    "MAX_QUEUES",
    "PRESETS",
    "PRESET_SOURCE",
    "derive",
    "evaluate",
    "objective",
    "average_fct_bound",
    "paper_shares",
    "numeric_shares",
    "literal_recursion",
    "preset",
    "list_presets",
    "SOURCES",
    "select",
]

METHODS = ("paper", "numeric")
#: Where :func:`select` takes a run's thresholds from.
SOURCES = {
    "derived": "the PIAS paper's own method (§3), for any workload, load and queue count",
    "ns2": "the PIAS ns-2 scripts' published sets (8 queues; web search and data mining at loads 0.5-0.9)",
}
MIN_QUEUES = 2
#: Commodity switches have 8 queues; 64 keeps the numeric check fast and is far beyond any hardware.
MAX_QUEUES = 64

PRESET_SOURCE = (
    "PIAS ns-2 simulations, HKUST-SING/PIAS-NS2 @5fb5867 scripts/run_pias_dctcp.py (web search) and "
    "scripts/run_pias_vl2.py (data mining), packets x 1460; as listed in docs/reference-parameters.md"
)

# (workload, load) -> alpha_1 .. alpha_7 in bytes, 8 queues.
PRESETS: dict[tuple[str, float], tuple[int, ...]] = {
    ("websearch", 0.9): (1108140, 1652720, 2125760, 2536020, 2934600, 3210540, 3394500),
    ("websearch", 0.8): (1327140, 1940340, 2406080, 2861600, 3128780, 3412020, 3626640),
    ("websearch", 0.7): (1458540, 1905300, 2283440, 2573980, 2855760, 3137540, 3371140),
    ("websearch", 0.6): (1395760, 2016260, 2508280, 2960880, 3353620, 3724460, 3883600),
    ("websearch", 0.5): (1546140, 2061520, 2398780, 2728740, 2931680, 3087900, 3188640),
    ("datamining", 0.9): (1095000, 1581180, 2067360, 20009300, 21829920, 30842500, 41249380),
    ("datamining", 0.8): (1087700, 1581180, 2030860, 19985940, 21806560, 30877540, 39777700),
    ("datamining", 0.7): (1324220, 1899460, 2363740, 17762360, 18855900, 31116980, 38506040),
    ("datamining", 0.6): (1226400, 1798720, 2360820, 17447000, 17867480, 31381240, 37551200),
    ("datamining", 0.5): (1175300, 1614760, 2045460, 15611780, 17476200, 30896520, 32517120),
}

# Starting points of the numeric check besides the evenly spaced one; a fixed seed keeps it deterministic.
_NUMERIC_STARTS = 12
_NUMERIC_SEED = 20140901


class ThresholdError(ValueError):
    """A bad argument to the threshold derivation; the message starts with the argument's name."""


@dataclass(frozen=True)
class Thresholds:
    """The demotion thresholds of one derivation.

    ``shares`` (theta_1..theta_K) and ``cumulative`` (S_1..S_{K-1}) are the optimiser's targets;
    ``thresholds_bytes`` (alpha_1..alpha_{K-1}) the byte thresholds from the CDF's inverse; ``realized_shares``
    the shares F(alpha_j) - F(alpha_{j-1}) those byte thresholds give on this CDF. ``objective`` is eq. (2)
    (maximised) and ``fct_bound`` eq. (1) (minimised) at the target shares; the ``realized_`` ones at the
    realised shares.
    """

    cdf: str
    load: float
    queues: int
    method: str
    shares: tuple[float, ...]
    cumulative: tuple[float, ...]
    thresholds_bytes: tuple[int, ...]
    realized_shares: tuple[float, ...]
    objective: float
    fct_bound: float
    realized_objective: float
    realized_fct_bound: float

    @property
    def thresholds_packets(self) -> tuple[float, ...]:
        """The thresholds in 1460-byte payload packets (what the ns-2 scripts wrote)."""
        return tuple(b / NS2_PACKET_BYTES for b in self.thresholds_bytes)

    def as_dict(self) -> dict[str, Any]:
        """A JSON-ready dict of every field, plus the thresholds in packets."""
        return {
            "cdf": self.cdf,
            "load": self.load,
            "queues": self.queues,
            "method": self.method,
            "shares": list(self.shares),
            "cumulative": list(self.cumulative),
            "thresholds_bytes": list(self.thresholds_bytes),
            "thresholds_packets": list(self.thresholds_packets),
            "realized_shares": list(self.realized_shares),
            "objective": self.objective,
            "fct_bound": self.fct_bound,
            "realized_objective": self.realized_objective,
            "realized_fct_bound": self.realized_fct_bound,
        }


# --------------------------------------------------------------------------------------------------------------
# Argument checks


def _check_load(load: Any) -> float:
    try:
        rho = float(load)
    except (TypeError, ValueError):
        raise ThresholdError(f"load: must be a number strictly between 0 and 1, got {load!r}") from None
    if isinstance(load, bool) or not math.isfinite(rho) or not 0.0 < rho < 1.0:
        raise ThresholdError(f"load: must be strictly between 0 and 1, got {load!r}")
    return rho


def _check_queues(queues: Any) -> int:
    if isinstance(queues, bool) or not isinstance(queues, (int, np.integer)):
        raise ThresholdError(f"queues: must be a whole number from {MIN_QUEUES} to {MAX_QUEUES}, got {queues!r}")
    k = int(queues)
    if not MIN_QUEUES <= k <= MAX_QUEUES:
        raise ThresholdError(f"queues: must be from {MIN_QUEUES} to {MAX_QUEUES}, got {k}")
    return k


def _check_method(method: Any) -> str:
    if method not in METHODS:
        raise ThresholdError(f"method: must be one of {', '.join(METHODS)}, got {method!r}")
    return str(method)


def _resolve_cdf(cdf: Cdf | str | Path) -> Cdf:
    if isinstance(cdf, Cdf):
        return cdf
    if not isinstance(cdf, (str, Path)):
        raise ThresholdError(f"cdf: expected a CDF name, a file path or a Cdf, got {type(cdf).__name__}")
    try:
        return load_cdf(cdf)
    except ValueError as e:
        raise ThresholdError(f"cdf: {e}") from None


# --------------------------------------------------------------------------------------------------------------
# The model of §3


def _as_shares(shares: Sequence[float] | np.ndarray) -> np.ndarray:
    theta = np.asarray(shares, dtype=np.float64)
    if theta.ndim != 1 or len(theta) < 1:
        raise ThresholdError("shares: must be a non-empty 1-D sequence")
    if np.any(theta < -1e-12) or abs(theta.sum() - 1.0) > 1e-9:
        raise ThresholdError(f"shares: must be >= 0 and sum to 1, got sum {theta.sum():.12g}")
    return theta


def objective(shares: Sequence[float] | np.ndarray, load: float) -> float:
    """Eq. (2) of the PIAS paper, to be maximised: sum over queues of theta_l / (1 - rho * S_{l-1}).

    ``shares`` are theta_1..theta_K (>= 0, summing to 1).
    """
    rho = _check_load(load)
    theta = _as_shares(shares)
    before = np.concatenate(([0.0], np.cumsum(theta)[:-1]))  # S_{l-1}
    return float(np.sum(theta / (1.0 - rho * before)))


def average_fct_bound(shares: Sequence[float] | np.ndarray, load: float) -> float:
    """Eq. (1) of the PIAS paper, to be minimised: sum_l T_l * (1 - S_{l-1}), T_l = theta_l rho / (1 - rho S_{l-1}).

    Equal to ``1 - (1 - load) * objective(shares, load)``.
    """
    rho = _check_load(load)
    theta = _as_shares(shares)
    before = np.concatenate(([0.0], np.cumsum(theta)[:-1]))
    t = theta * rho / (1.0 - rho * before)
    return float(np.sum(t * (1.0 - before)))


def literal_recursion(theta_1: float, load: float, queues: int) -> np.ndarray:
    """The shares eqs. (4)-(5) give when read literally: theta_l = 1 - rho * (theta_1 + ... + theta_{l-1}).

    Kept to document why :func:`paper_shares` scales the recursion: these shares always sum to more than 1 (for
    K >= 2), so they are not a distribution of flows over queues.
    """
    rho = _check_load(load)
    k = _check_queues(queues)
    theta = np.empty(k)
    theta[0] = float(theta_1)
    for q in range(1, k):
        theta[q] = 1.0 - rho * theta[:q].sum()
    return theta


def paper_shares(load: float, queues: int) -> np.ndarray:
    """theta_1..theta_K by the paper's method: equal ratios, theta_l = theta_1 (1 - rho S_{l-1}), sum(theta) = 1.

    theta_1 is the closed form (1 - (1 - rho)^(1/K)) / rho; the rest follow the recursion, one queue at a time,
    as §3 describes. See the module docstring for why the recursion carries the factor theta_1.
    """
    rho = _check_load(load)
    k = _check_queues(queues)
    theta = np.empty(k)
    theta[0] = -math.expm1(math.log1p(-rho) / k) / rho  # (1 - (1 - rho)^(1/K)) / rho, accurate for small rho
    s = theta[0]
    for q in range(1, k - 1):
        theta[q] = theta[0] * (1.0 - rho * s)
        s += theta[q]
    # The recursion gives the last share too (it is what makes the sum 1); taking the remainder instead keeps the
    # sum exactly 1 in floating point. The two agree to rounding (tested).
    theta[k - 1] = 1.0 - s
    return theta


def _neg_objective_and_grad(s: np.ndarray, rho: float) -> tuple[float, np.ndarray]:
    """-T'' as a function of the cumulative shares S_1..S_{K-1}, and its gradient."""
    full = np.concatenate(([0.0], s, [1.0]))
    d = 1.0 - rho * full[:-1]  # denominators 1 - rho S_{l-1}, l = 1..K
    value = np.sum(np.diff(full) / d)
    # dT''/dS_j = 1/d_j - 1/d_{j+1} + rho (S_{j+1} - S_j) / d_{j+1}^2, with d_j = 1 - rho S_{j-1}.
    grad = 1.0 / d[:-1] - 1.0 / d[1:] + rho * (full[2:] - full[1:-1]) / d[1:] ** 2
    return -float(value), -grad


def numeric_shares(load: float, queues: int, *, starts: int = _NUMERIC_STARTS) -> np.ndarray:
    """theta_1..theta_K maximising eq. (2) numerically: SLSQP over the cumulative shares from many starts.

    Variables S_1..S_{K-1} within [0, 1] with S_j >= S_{j-1}; starts are the evenly spaced point and ``starts``
    sorted uniform draws from a fixed seed. The best local optimum is returned. Independent of the paper's
    closed form, so agreement of the two is a check of both.
    """
    from scipy.optimize import LinearConstraint, minimize

    rho = _check_load(load)
    k = _check_queues(queues)
    n = k - 1
    # S_j - S_{j-1} >= 0 for j = 2..K-1; bounds give S_1 >= 0 and S_{K-1} <= 1.
    diff = np.zeros((max(n - 1, 0), n))
    for i in range(n - 1):
        diff[i, i], diff[i, i + 1] = -1.0, 1.0
    constraints = [LinearConstraint(diff, 0.0, np.inf)] if n > 1 else []
    rng = np.random.default_rng(_NUMERIC_SEED)
    x0s = [np.arange(1, k) / k] + [np.sort(rng.random(n)) for _ in range(starts)]
    best_x, best_f = None, math.inf
    for x0 in x0s:
        res = minimize(
            _neg_objective_and_grad,
            x0,
            args=(rho,),
            jac=True,
            method="SLSQP",
            bounds=[(0.0, 1.0)] * n,
            constraints=constraints,
            options={"maxiter": 1000, "ftol": 1e-14},
        )
        x = np.clip(np.maximum.accumulate(res.x), 0.0, 1.0)
        f, _ = _neg_objective_and_grad(x, rho)
        if f < best_f:
            best_x, best_f = x, f
    assert best_x is not None
    return np.diff(np.concatenate(([0.0], best_x, [1.0])))


# --------------------------------------------------------------------------------------------------------------
# Shares -> bytes


def _bytes_thresholds(cdf: Cdf, cumulative: np.ndarray) -> list[int]:
    """alpha_j = F^-1(S_j), made strictly increasing by whole size units and kept within the CDF's range."""
    unit = cdf.unit_bytes
    lowest = int(cdf.quantile(0.0))
    highest = int(cdf.quantile(1.0))
    n = len(cumulative)
    if (highest - lowest) // unit + 1 < n:
        raise ThresholdError(
            f"queues: {n + 1} queues need {n} distinct thresholds, but CDF {cdf.name!r} has only "
            f"{(highest - lowest) // unit + 1} distinct sizes of {unit} bytes between {lowest} and {highest} bytes"
        )
    alpha = [int(cdf.quantile(float(min(max(s, 0.0), 1.0)))) for s in cumulative]
    for j in range(1, n):  # strictly increasing, upwards
        alpha[j] = max(alpha[j], alpha[j - 1] + unit)
    for j in range(n - 1, -1, -1):  # within range, downwards (keeps the order)
        cap = highest if j == n - 1 else alpha[j + 1] - unit
        alpha[j] = min(alpha[j], cap)
    return alpha


def derive(
    cdf: Cdf | str | Path, load: float, queues: int = 8, method: str = "paper"
) -> Thresholds:
    """PIAS demotion thresholds for ``cdf`` (a shipped name, a file path or a :class:`Cdf`) at ``load``.

    ``method`` is "paper" (the closed form of §3, see the module docstring) or "numeric" (SLSQP from many
    starts on the same objective). Raises :class:`ThresholdError` (a ValueError) naming the bad argument:
    load outside (0, 1), queues outside 2..64, an unknown method or CDF.
    """
    rho = _check_load(load)
    k = _check_queues(queues)
    method = _check_method(method)
    dist = _resolve_cdf(cdf)
    theta = paper_shares(rho, k) if method == "paper" else numeric_shares(rho, k)
    cumulative = np.cumsum(theta)[:-1]
    alpha = _bytes_thresholds(dist, cumulative)
    reached = [dist.fraction_at_most(a) for a in alpha]
    realized = np.diff(np.concatenate(([0.0], reached, [1.0])))
    realized = np.maximum(realized, 0.0)
    return Thresholds(
        cdf=dist.name,
        load=rho,
        queues=k,
        method=method,
        shares=tuple(float(t) for t in theta),
        cumulative=tuple(float(s) for s in cumulative),
        thresholds_bytes=tuple(alpha),
        realized_shares=tuple(float(t) for t in realized),
        objective=objective(theta, rho),
        fct_bound=average_fct_bound(theta, rho),
        realized_objective=objective(realized, rho),
        realized_fct_bound=average_fct_bound(realized, rho),
    )


def evaluate(cdf: Cdf | str | Path, load: float, thresholds_bytes: Sequence[int]) -> Thresholds:
    """The §3 model applied to given byte thresholds (e.g. a preset): the shares they give on ``cdf`` and the
    objective there. ``method`` is "given"; the target and realised shares are the same."""
    rho = _check_load(load)
    dist = _resolve_cdf(cdf)
    alpha = [int(a) for a in thresholds_bytes]
    _check_queues(len(alpha) + 1)
    if any(b <= a for a, b in zip(alpha, alpha[1:])) or (alpha and alpha[0] <= 0):
        raise ThresholdError(f"thresholds_bytes: must be positive and strictly increasing, got {alpha}")
    reached = [dist.fraction_at_most(a) for a in alpha]
    shares = np.maximum(np.diff(np.concatenate(([0.0], reached, [1.0]))), 0.0)
    obj, bound = objective(shares, rho), average_fct_bound(shares, rho)
    return Thresholds(
        cdf=dist.name,
        load=rho,
        queues=len(alpha) + 1,
        method="given",
        shares=tuple(float(t) for t in shares),
        cumulative=tuple(float(x) for x in reached),
        thresholds_bytes=tuple(alpha),
        realized_shares=tuple(float(t) for t in shares),
        objective=obj,
        fct_bound=bound,
        realized_objective=obj,
        realized_fct_bound=bound,
    )


# --------------------------------------------------------------------------------------------------------------
# Presets


def _preset_key(workload: str, load: float) -> tuple[str, float]:
    names = sorted({w for w, _ in PRESETS})
    if workload not in names:
        raise ThresholdError(f"cdf: no PIAS preset for workload {workload!r}; presets exist for {', '.join(names)}")
    rho = _check_load(load)
    loads = sorted(ld for w, ld in PRESETS if w == workload)
    for ld in loads:
        if abs(ld - rho) < 1e-9:
            return workload, ld
    raise ThresholdError(
        f"load: no PIAS preset for {workload} at load {load!r}; preset loads: {', '.join(f'{x:g}' for x in loads)}"
    )


def preset(workload: str, load: float) -> list[int]:
    """The published PIAS ns-2 thresholds alpha_1..alpha_7 (bytes, 8 queues) for ``workload`` at ``load``.

    ``workload`` is "websearch" or "datamining"; ``load`` one of 0.5, 0.6, 0.7, 0.8, 0.9. Source:
    :data:`PRESET_SOURCE`.
    """
    return list(PRESETS[_preset_key(workload, load)])


def select(cdf: Cdf | str | Path, load: float, queues: int = 8, source: str = "derived") -> list[int]:
    """The demotion thresholds alpha_1..alpha_{K-1} (bytes) of a run on ``cdf`` at ``load`` with ``queues``
    queues, from ``source`` (:data:`SOURCES`): "derived" is :func:`derive` with the paper's method, "ns2" the
    published ns-2 set (:func:`preset`), which exists for 8 queues only. Raises :class:`ThresholdError` naming
    the argument that has no thresholds (e.g. ``queues`` for ns2 with 2 queues, ``load`` for a load without a
    published set)."""
    if source not in SOURCES:
        raise ThresholdError(f"source: must be one of {', '.join(SOURCES)}, got {source!r}")
    if source == "derived":
        return list(derive(cdf, load, queues).thresholds_bytes)
    k = _check_queues(queues)
    if k != 8:
        raise ThresholdError(f"queues: the PIAS ns-2 thresholds are for 8 queues, got {k}")
    name = cdf.name if isinstance(cdf, Cdf) else str(cdf)
    return preset(name, load)


def list_presets() -> list[tuple[str, float, list[int]]]:
    """Every preset as (workload, load, thresholds in bytes), by workload then load."""
    return [(w, ld, list(v)) for (w, ld), v in sorted(PRESETS.items())]
