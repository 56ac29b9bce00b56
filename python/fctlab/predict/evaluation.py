"""How good a model's bounds and estimate are on test flows (the paper's Table 2, observations O1-O5 of §2.3,
Fig. 1), and that evaluation as text."""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np
import pandas as pd

from fctlab.predict.model import RATIO_QUANTILES, SIZE_BINS, Model, PredictError, check_beta

__all__ = ["evaluate", "format_report"]


def _mean(a: np.ndarray) -> float | None:
    return float(np.mean(a)) if len(a) else None


def _time_inference(model: Model, flows: pd.DataFrame, singles: int) -> dict[str, float | None]:
    """Inference time per flow (microseconds, wall clock, one core): one ``predict`` call for the whole batch
    (divided by the flows), and ``predict_one`` on single feature vectors (the median call)."""
    t0 = time.perf_counter()
    model.predict(flows)
    batch = (time.perf_counter() - t0) / max(1, len(flows)) * 1e6
    x = flows[model.features].to_numpy(dtype=np.float32)
    step = max(1, len(x) // max(1, singles))
    single: list[float] = []
    for i in range(0, min(len(x), step * singles), step):
        t0 = time.perf_counter()
        model.predict_one(x[i])
        single.append((time.perf_counter() - t0) * 1e6)
    return {
        "batch_us_per_flow": batch,
        "single_flow_us_median": float(np.median(single)) if single else None,
        "single_flow_calls": len(single),
    }


def evaluate(model: Model, test: pd.DataFrame, *, beta: float | None = None, timing: bool = True,
             single_calls: int = 200) -> dict[str, Any]:
    """How good the bounds and the estimate are on ``test`` flows, as in §2.3 of the paper.

    * ``bounded_share`` / ``out_of_bound_share`` (Table 2, O1): lower <= size <= upper, or not; split into
      ``below_lower_share`` and ``above_upper_share``;
    * ``small_gap_to_lower_bytes`` (O2): mean of (size - lower) over the small flows at or above their lower
      bound (those below it are O4's);
    * ``bins.<bin>.mean_lower_bytes`` (O3): mean lower bound of the small, medium and large flows;
    * ``bins.<bin>.below_lower`` (O4): count and mean gap (lower - size) of the flows under their lower bound;
    * ``bins.<bin>.above_upper`` (O5): count and mean gap (size - upper) of the flows over their upper bound;
    * ``estimate`` (Fig. 1): mean and max of |estimate - size|, the share of flows more than 100 KB off, and
      quantiles of estimate / size;
    * ``inference``: measured microseconds per flow (batch, and one flow per call).
    """
    if len(test) == 0:
        raise PredictError("test: no flows to evaluate")
    b = model.beta if beta is None else check_beta(beta)
    pred = model.predict(test, beta=b)
    y = test["size_bytes"].to_numpy(dtype=np.int64)
    lo = pred["lower_bytes"].to_numpy()
    hi = pred["upper_bytes"].to_numpy()
    est = pred["estimate_bytes"].to_numpy()
    below = y < lo
    above = y > hi
    bounded = ~below & ~above
    bins: dict[str, Any] = {}
    for name, a, z in SIZE_BINS:
        m = (y > a) & (y <= z)
        bins[name] = {
            "flows": int(m.sum()),
            "bounded_share": float(bounded[m].mean()) if m.any() else None,
            "mean_lower_bytes": _mean(lo[m]),
            "mean_upper_bytes": _mean(hi[m]),
            "mean_gap_to_lower_bytes": _mean((y - lo)[m & ~below]),
            "below_lower": {"flows": int((m & below).sum()), "mean_gap_bytes": _mean((lo - y)[m & below])},
            "above_upper": {"flows": int((m & above).sum()), "mean_gap_bytes": _mean((y - hi)[m & above])},
        }
    err = np.abs(est - y).astype(np.float64)
    ratio = est / y
    small = y <= SIZE_BINS[0][2]
    report: dict[str, Any] = {
        "flows": int(len(y)),
        "beta": b,
        "quantiles": [(1.0 - b) / 2.0, (1.0 + b) / 2.0],
        "model": {k: v for k, v in model.metadata().items() if k in ("depth", "trees", "target", "n_train", "source")},
        "bounded_share": float(bounded.mean()),
        "out_of_bound_share": float(1.0 - bounded.mean()),
        "below_lower_share": float(below.mean()),
        "above_upper_share": float(above.mean()),
        "small_gap_to_lower_bytes": _mean((y - lo)[small & ~below]),
        "median_upper_over_lower": float(np.median(hi / np.maximum(lo, 1))),
        "bins": bins,
        "estimate": {
            "mean_abs_error_bytes": float(err.mean()),
            "max_abs_error_bytes": float(err.max()),
            "share_off_by_more_than_100kb": float(np.mean(err > 100_000)),
            "within_factor_2_share": float(np.mean((ratio >= 0.5) & (ratio <= 2.0))),
            "ratio_quantiles": {f"p{round(q * 100)}": float(np.quantile(ratio, q)) for q in RATIO_QUANTILES},
        },
    }
    if timing:
        report["inference"] = _time_inference(model, test, single_calls)
    return report


def _b(v: float | None) -> str:
    """Bytes in decimal units, for the report."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "-"
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if abs(v) >= scale:
            return f"{v / scale:.3g} {unit}"
    return f"{v:.0f} B"


def format_report(r: dict[str, Any]) -> str:
    """The evaluation as text: the Table 2 line, the bins table (O2-O5) and the point estimate (Fig. 1)."""
    m = r["model"]
    lines = [
        f"test flows: {r['flows']:,}; model: depth {m['depth']}, {m['trees']} trees on {m['n_train']:,} flows "
        f"({m['target']} sizes); beta {r['beta']:g}: bounds [Q{r['quantiles'][0]:g}, Q{r['quantiles'][1]:g}]",
        f"bounded (Table 2, O1): {r['bounded_share']:.4%}   out of bound: {r['out_of_bound_share']:.4%} "
        f"(below lower {r['below_lower_share']:.4%}, above upper {r['above_upper_share']:.4%})",
        f"small flows' mean gap to their lower bound (O2): {_b(r['small_gap_to_lower_bytes'])}; "
        f"median upper/lower: {r['median_upper_over_lower']:.3g}",
        "",
    ]
    header = ["bin", "flows", "bounded", "mean lower (O3)", "mean gap to lower", "below lower: n, gap (O4)",
              "above upper: n, gap (O5)"]
    rows = []
    for name, s in r["bins"].items():
        rows.append([
            name,
            f"{s['flows']:,}",
            "-" if s["bounded_share"] is None else f"{s['bounded_share']:.3%}",
            _b(s["mean_lower_bytes"]),
            _b(s["mean_gap_to_lower_bytes"]),
            f"{s['below_lower']['flows']:,}, {_b(s['below_lower']['mean_gap_bytes'])}",
            f"{s['above_upper']['flows']:,}, {_b(s['above_upper']['mean_gap_bytes'])}",
        ])
    widths = [max(len(str(x)) for x in col) for col in zip(header, *rows)]
    for row in [header, *rows]:
        lines.append("  ".join(str(c).ljust(w) if i == 0 else str(c).rjust(w) for i, (c, w) in
                               enumerate(zip(row, widths))).rstrip())
    e = r["estimate"]
    q = e["ratio_quantiles"]
    lines += [
        "",
        f"point estimate (forest mean, Fig. 1): mean |error| {_b(e['mean_abs_error_bytes'])}, "
        f"max {_b(e['max_abs_error_bytes'])}, off by > 100 KB: {e['share_off_by_more_than_100kb']:.2%}, "
        f"within 2x: {e['within_factor_2_share']:.2%}",
        "estimate / actual: " + ", ".join(f"{k} {v:.3g}" for k, v in q.items()),
    ]
    inf = r.get("inference")
    if inf:
        single = inf["single_flow_us_median"]
        lines.append(
            f"inference: {inf['batch_us_per_flow']:.2f} us per flow in one batch"
            + (f"; {single:.0f} us for one flow per call (median of {inf['single_flow_calls']})" if single else "")
        )
    return "\n".join(lines)
