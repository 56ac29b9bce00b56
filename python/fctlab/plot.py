"""Plots of run results: mean and 99th-percentile FCT per flow-size bin, one series per run.

Uses matplotlib's object API with the Agg canvas (no pyplot, no display, no global figure state), so it works
on a headless machine and from threads.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from fctlab.analyze import SUMMARY_BINS


def _summary_of(item: Any) -> Mapping[str, Any]:
    summary = getattr(item, "summary", item)
    if not isinstance(summary, Mapping) or "bins" not in summary:
        raise TypeError(f"expected a Result or a summary dict with 'bins', got {type(item).__name__}")
    return summary


def plot_fct_bins(results: Mapping[str, Any], path: str | Path) -> list[Path]:
    """Grouped bars of mean and p99 FCT (us, log scale) per size bin, one colour per run label.

    ``results`` maps a label (e.g. the scheme) to a :class:`fctlab.Result` or its summary dict. Writes
    ``path`` with suffixes .png and .svg (any suffix given is replaced) and returns both paths. Bins without
    finished flows are left empty.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    if not results:
        raise ValueError("plot_fct_bins: no results to plot")
    summaries = {str(label): _summary_of(r) for label, r in results.items()}
    base = Path(path)
    if base.suffix in (".png", ".svg"):
        base = base.with_suffix("")

    fig = Figure(figsize=(10, 4.2), layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(1, 2, sharey=False)
    n = len(summaries)
    width = 0.8 / n
    xs = range(len(SUMMARY_BINS))
    for ax, (stat, title) in zip(axes, (("mean_fct_ns", "mean FCT"), ("p99_fct_ns", "99th-percentile FCT"))):
        any_value = False
        for i, (label, s) in enumerate(summaries.items()):
            heights = []
            for name in SUMMARY_BINS:
                v = s["bins"][name].get(stat)
                heights.append(float("nan") if v is None else v / 1000.0)
                any_value = any_value or (v is not None and v > 0)
            offsets = [x - 0.4 + width * (i + 0.5) for x in xs]
            ax.bar(offsets, heights, width=width, label=label)
        counts = [max(s["bins"][name]["count"] for s in summaries.values()) for name in SUMMARY_BINS]
        ax.set_xticks(list(xs), [f"{name}\n({c:,} flows)" for name, c in zip(SUMMARY_BINS, counts)])
        if any_value:
            ax.set_yscale("log")
        ax.set_ylabel("FCT (us)")
        ax.set_title(title)
        ax.grid(axis="y", which="both", alpha=0.3)
    axes[0].legend(title="run")
    fig.suptitle("Flow completion time by flow size (small <= 100 KB < medium <= 10 MB < large)")
    written = []
    for suffix in (".png", ".svg"):
        out = base.with_suffix(suffix)
        _save_atomic(fig, out, suffix[1:])
        written.append(out)
    return written


def _save_atomic(fig: Any, path: Path, fmt: str) -> None:
    from fctlab.results import atomic_write

    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, lambda f: fig.savefig(f, format=fmt, dpi=120))
