"""Plots of run results: mean and 99th-percentile FCT (or slowdown) per flow-size bin, one series per run, as bars
(:func:`plot_fct_bins`, one load) or as lines against the load (:func:`plot_vs_load`, a sweep).

Uses matplotlib's object API with the Agg canvas (no pyplot, no display, no global figure state), so it works
on a headless machine and from threads.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from fctlab.analyze import BIN_EDGES, SIZE_BINS, SUMMARY_BINS, bins_text

#: The statistic plotted for each metric: (key of a bin in summary.json for the mean, for the p99, axis label).
METRICS: dict[str, tuple[str, str, str]] = {
    "fct": ("mean_fct_ns", "p99_fct_ns", "FCT"),
    "slowdown": ("mean_slowdown", "p99_slowdown", "slowdown"),
}
#: How each bin is titled in the figures (KB = 1,000 bytes, MB = 1,000,000 bytes, as in analyze.SIZE_BINS).
BIN_TITLES = {
    "small": "small (0, 100 KB]",
    "medium": "medium (100 KB, 10 MB]",
    "large": "large (10 MB, inf)",
    "all": "all flows",
}
assert set(BIN_TITLES) == {*SIZE_BINS, "all"}
#: The titles of the ns-2 scripts' bins (output.bins = "ns2": KiB = 1,024 bytes, MiB = 1,048,576 bytes).
NS2_BIN_TITLES = {
    "small": "small (0, 100 KiB)",
    "medium": "medium [100 KiB, 10 MiB]",
    "large": "large (10 MiB, inf)",
    "all": "all flows",
}


def bin_titles(summaries: Iterable[Mapping[str, Any]] = ()) -> dict[str, str]:
    """The bin titles for runs with these summaries: by their ``bin_edges`` (output.bins) when they all share
    one (summaries written before the key existed used the papers' edges); bare names when they differ."""
    edges = {s.get("bin_edges", "papers") for s in summaries}
    if edges <= {"papers"}:
        return dict(BIN_TITLES)
    if edges == {"ns2"}:
        return dict(NS2_BIN_TITLES)
    return {name: name if name != "all" else "all flows" for name in SUMMARY_BINS}


assert set(NS2_BIN_TITLES) == {*BIN_EDGES["ns2"], "all"}


def _summary_of(item: Any) -> Mapping[str, Any]:
    summary = getattr(item, "summary", item)
    if not isinstance(summary, Mapping) or "bins" not in summary:
        raise TypeError(f"expected a Result or a summary dict with 'bins', got {type(item).__name__}")
    return summary


def plot_fct_bins(
    results: Mapping[str, Any],
    path: str | Path,
    *,
    metric: str = "fct",
    normalize_to: str | None = None,
    title: str | None = None,
) -> list[Path]:
    """Grouped bars of mean and p99 FCT (us, log scale) per size bin, one colour per run label.

    ``results`` maps a label (e.g. the scheme) to a :class:`fctlab.Result` or its summary dict. Writes
    ``path`` with suffixes .png and .svg (any suffix given is replaced) and returns both paths. Bins without
    finished flows are left empty. ``metric="slowdown"`` plots slowdown instead of FCT; ``normalize_to`` names
    one of the labels and plots every value divided by that label's value in the same bin (linear scale).
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    if not results:
        raise ValueError("plot_fct_bins: no results to plot")
    mean_key, p99_key, what = _metric(metric)
    summaries = {str(label): _summary_of(r) for label, r in results.items()}
    if normalize_to is not None and normalize_to not in summaries:
        raise ValueError(f"normalize_to: {normalize_to!r} is not one of the labels ({', '.join(summaries)})")
    scale = 1000.0 if metric == "fct" else 1.0
    base = Path(path)
    if base.suffix in (".png", ".svg"):
        base = base.with_suffix("")

    fig = Figure(figsize=(10, 4.2), layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(1, 2, sharey=False)
    n = len(summaries)
    width = 0.8 / n
    xs = range(len(SUMMARY_BINS))
    stats = ((mean_key, f"mean {what}"), (p99_key, f"99th-percentile {what}"))
    for ax, (stat, panel) in zip(axes, stats):
        any_value = False
        for i, (label, s) in enumerate(summaries.items()):
            heights = []
            for name in SUMMARY_BINS:
                v = s["bins"][name].get(stat)
                if normalize_to is not None:
                    ref = summaries[normalize_to]["bins"][name].get(stat)
                    v = None if v is None or not ref else v / ref
                    heights.append(float("nan") if v is None else v)
                else:
                    heights.append(float("nan") if v is None else v / scale)
                any_value = any_value or (v is not None and v > 0)
            offsets = [x - 0.4 + width * (i + 0.5) for x in xs]
            ax.bar(offsets, heights, width=width, label=label)
        counts = [max(s["bins"][name]["count"] for s in summaries.values()) for name in SUMMARY_BINS]
        ax.set_xticks(list(xs), [f"{name}\n({c:,} flows)" for name, c in zip(SUMMARY_BINS, counts)])
        if normalize_to is not None:
            ax.axhline(1.0, color="0.3", linewidth=0.8, linestyle="--")
            ax.set_ylabel(f"{what} / {what} of {normalize_to}")
        else:
            if any_value:
                ax.set_yscale("log")
            ax.set_ylabel("FCT (us)" if metric == "fct" else "slowdown (FCT / ideal FCT)")
        ax.set_title(panel)
        ax.grid(axis="y", which="both", alpha=0.3)
    # Below the panels rather than inside one, where it would hide bars.
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncol=min(len(labels), 6), frameon=False)
    edges = {s.get("bin_edges", "papers") for s in summaries.values()}
    sizes = f" ({bins_text(edges.pop())})" if len(edges) == 1 else ""
    default_title = f"Flow completion time by flow size{sizes}" if metric == "fct" else f"Slowdown by flow size{sizes}"
    fig.suptitle(title or default_title)
    written = []
    for suffix in (".png", ".svg"):
        out = base.parent / (base.name + suffix)  # not with_suffix: a name may hold a dot ("load0.7")
        save_atomic(fig, out, suffix[1:])
        written.append(out)
    return written


def _metric(metric: str) -> tuple[str, str, str]:
    try:
        return METRICS[metric]
    except KeyError:
        raise ValueError(f"metric: must be one of {', '.join(METRICS)}, got {metric!r}") from None


def plot_vs_load(
    points: Any,
    path: str | Path,
    *,
    metric: str = "fct",
    normalize_to: str | None = None,
    relative_to: str | None = None,
    title: str | None = None,
    bins: tuple[str, ...] = SUMMARY_BINS,
    titles: Mapping[str, str] | None = None,
) -> list[Path]:
    """Lines of mean (top row) and p99 (bottom row) FCT or slowdown against the load, one panel per size bin and
    one line per label (e.g. scheme).

    ``points`` is a pandas DataFrame with one row per (label, load, bin, stat): columns ``label``, ``load``,
    ``bin`` (small / medium / large / all), ``stat`` ("mean" or "p99"), ``value`` (FCT in ns, or slowdown) and
    optionally ``lo`` and ``hi`` (the spread over seeds, drawn as error bars; NaN for none). With ``normalize_to`` (a
    label) every value is divided by that label's value at the same load, bin and statistic, and a dashed line
    marks 1 (the spread is divided by the same reference value). ``relative_to`` (a label) says that the values
    are already ratios to that label, computed by the caller (the report pairs runs seed by seed for the spread):
    they are drawn as given, with the same axis labels and line at 1. Writes ``path`` as .png and .svg and returns
    both paths. ``titles`` names the bins' panels (default :data:`BIN_TITLES`; see :func:`bin_titles`).
    """
    import math

    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    _, _, what = _metric(metric)
    df = points.copy()
    if df.empty:
        raise ValueError("plot_vs_load: no points to plot")
    for col in ("lo", "hi"):
        if col not in df:
            df[col] = float("nan")
    labels = list(dict.fromkeys(df["label"]))
    if normalize_to is not None and relative_to is not None:
        raise ValueError("plot_vs_load: give normalize_to or relative_to, not both")
    if normalize_to is not None:
        if normalize_to not in labels:
            raise ValueError(f"normalize_to: {normalize_to!r} is not one of the labels ({', '.join(labels)})")
        ref = df.loc[df["label"] == normalize_to, ["load", "bin", "stat", "value"]].rename(columns={"value": "ref"})
        df = df.merge(ref, on=["load", "bin", "stat"], how="left")
        ok = df["ref"].notna() & (df["ref"] != 0)
        for col in ("value", "lo", "hi"):
            df[col] = (df[col] / df["ref"]).where(ok)
    reference = normalize_to if normalize_to is not None else relative_to
    base = Path(path)
    if base.suffix in (".png", ".svg"):
        base = base.with_suffix("")

    fig = Figure(figsize=(3.4 * len(bins) + 0.6, 6.6), layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(2, len(bins), squeeze=False)
    colours = [f"C{i % 10}" for i in range(len(labels))]
    markers = ["o", "s", "^", "D", "v", "P", "X", "*", "<", ">"]
    handles: dict[str, Any] = {}
    all_loads = sorted(set(df["load"].dropna().astype(float)))
    width = (all_loads[-1] - all_loads[0]) if len(all_loads) > 1 else 1.0
    # Lines whose points carry error bars are nudged sideways a little so that the bars do not hide each other.
    has_spread = bool((df["hi"] > df["lo"]).any())
    dodge = {lab: (i - (len(labels) - 1) / 2) * 0.008 * width if has_spread else 0.0 for i, lab in enumerate(labels)}
    for row, (stat, stat_name) in enumerate((("mean", "mean"), ("p99", "99th-percentile"))):
        for col, name in enumerate(bins):
            ax = axes[row][col]
            sel = df[(df["bin"] == name) & (df["stat"] == stat)]
            scale, unit = 1.0, ""
            if reference is None and metric == "fct":
                top = sel["value"].max()
                scale, unit = (1e6, "ms") if top is not None and math.isfinite(top) and top >= 1e7 else (1e3, "us")
            drawn = False
            for i, label in enumerate(labels):
                line = sel[sel["label"] == label].sort_values("load")
                if line.empty or line["value"].notna().sum() == 0:
                    continue
                x = line["load"].to_numpy(dtype=float) + dodge[label]
                y = line["value"].to_numpy(dtype=float) / scale
                (h,) = ax.plot(x, y, marker=markers[i % len(markers)], color=colours[i], label=label,
                               linewidth=1.6, markersize=5)
                handles.setdefault(label, h)
                lo = line["lo"].to_numpy(dtype=float) / scale
                hi = line["hi"].to_numpy(dtype=float) / scale
                spread = ~(np.isnan(lo) | np.isnan(hi) | np.isnan(y)) & (hi > lo)
                if spread.any():
                    # A centre outside its own spread (a ratio of means can be) gets a one-sided bar.
                    below = np.maximum(y[spread] - lo[spread], 0.0)
                    above = np.maximum(hi[spread] - y[spread], 0.0)
                    ax.errorbar(x[spread], y[spread], yerr=[below, above],
                                fmt="none", ecolor=colours[i], elinewidth=1.0, capsize=3, alpha=0.7)
                drawn = True
            if not drawn:
                ax.text(0.5, 0.5, "no finished flows", transform=ax.transAxes, ha="center", va="center",
                        color="0.45")
            if reference is not None:
                ax.axhline(1.0, color="0.3", linewidth=0.8, linestyle="--")
                ylabel = f"{stat_name} {what} / {reference}'s"
            elif metric == "fct":
                ylabel = f"{stat_name} FCT ({unit})"
            else:
                ylabel = f"{stat_name} slowdown"
            if col == 0 or reference is None:
                ax.set_ylabel(ylabel)
            if row == 0:
                ax.set_title((titles or BIN_TITLES).get(name, name))
            if row == 1:
                ax.set_xlabel("load")
            ax.grid(alpha=0.3)
            ax.margins(x=0.06)
            if 1 < len(all_loads) <= 12:
                ax.set_xticks(all_loads, [f"{v:g}" for v in all_loads])
    if handles:
        fig.legend(list(handles.values()), list(handles), loc="outside lower center", ncol=min(len(handles), 6),
                   frameon=False, fontsize="medium")
    if title:
        fig.suptitle(title, fontsize="large")
    written = []
    for suffix in (".png", ".svg"):
        out = base.parent / (base.name + suffix)  # not with_suffix: a name may hold a dot ("load0.7")
        save_atomic(fig, out, suffix[1:])
        written.append(out)
    return written


def save_atomic(fig: Any, path: Path, fmt: str) -> None:
    """Write ``fig`` to ``path`` in format ``fmt`` (png, svg) atomically: a reader never sees half a file."""
    from fctlab.results import atomic_write

    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, lambda f: fig.savefig(f, format=fmt, dpi=120))

