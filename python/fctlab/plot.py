"""Plots of run results: mean and 99th-percentile FCT (or slowdown) per flow-size bin, one series per run, as bars
(:func:`plot_fct_bins`, one load: one panel per bin, linear from zero) or as lines against the load
(:func:`plot_vs_load`, a sweep). Bins without finished flows are left out with a note; an axis is logarithmic only
when its values span more than :data:`WIDE_RANGE` times (:func:`value_axis`).

Uses matplotlib's object API with the Agg canvas (no pyplot, no display, no global figure state), so it works
on a headless machine and from threads.
"""

from __future__ import annotations

import math
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
#: A log axis only when the values span more than this factor (:func:`value_axis`).
WIDE_RANGE = 20.0
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


def legend_columns(labels: list[str], width_inches: float, char_inches: float = 0.085) -> int:
    """How many legend entries fit side by side across a figure ``width_inches`` wide (about ``char_inches`` per
    character at the medium font, and room for the marker): a long label list wraps instead of running off."""
    widest = max((len(x) for x in labels), default=1)
    return max(1, min(len(labels), int(width_inches / (char_inches * widest + 0.75))))


def value_axis(ax: Any, values: Iterable[float | None], *, floor: float = 0.0, wide: float = WIDE_RANGE) -> str:
    """Scale ``ax``'s y axis for ``values``: logarithmic only when the positive values span more than ``wide``
    times (a log axis over a narrow range makes a small difference look large); otherwise linear from ``floor``
    (0 for bars, 1 for a slowdown) with a little room above the largest value. Returns "log" or "linear"."""
    xs = [float(v) for v in values if v is not None and math.isfinite(float(v))]
    pos = [v for v in xs if v > 0]
    if pos and min(pos) > 0 and max(pos) / min(pos) > wide and len(pos) == len(xs):
        from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

        ax.set_yscale("log")
        # ticks at 1, 2 and 5 times each power of ten, labelled as plain numbers ("20", "0.5", not "2 x 10^1"), so
        # that a range of one or two decades still has several labels
        ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.10g}"))
        ax.yaxis.set_minor_formatter(NullFormatter())
        return "log"
    top = max(xs) if xs else floor + 1.0
    bottom = min(floor, min(xs)) if xs else floor
    span = top - bottom
    room = 0.06 * span if span > 1e-9 * max(1.0, abs(top)) else 0.1 * max(1.0, abs(top))
    # from zero exactly (bars); from another floor with a little room, so that a point on it is not cut in half
    # (but never so much that the axis reaches far below the floor)
    ax.set_ylim(bottom if bottom == 0 else bottom - min(room / 2, abs(bottom) / 2 or room), top + room)
    ax.ticklabel_format(axis="y", useOffset=False)
    return "linear"


def plot_fct_bins(
    results: Mapping[str, Any],
    path: str | Path,
    *,
    metric: str = "fct",
    normalize_to: str | None = None,
    title: str | None = None,
) -> list[Path]:
    """Bars of mean (top row) and 99th-percentile (bottom row) FCT per size bin, one panel per bin with its own
    linear axis from zero (in us, or ms when the panel reaches 10,000 us), one colour per run label; a slowdown or
    a ratio to ``normalize_to`` is drawn as dots against a dashed line at 1 (a bar from zero would hide its
    differences).

    ``results`` maps a label (e.g. the scheme) to a :class:`fctlab.Result` or its summary dict. Writes
    ``path`` with suffixes .png and .svg (any suffix given is replaced) and returns both paths. Bins without
    finished flows in any run are left out, and a note under the panels names them. ``metric="slowdown"`` plots
    slowdown instead of FCT; ``normalize_to`` names one of the labels and plots every value divided by that
    label's value in the same bin (a dashed line marks 1).
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D
    from matplotlib.patches import Rectangle

    if not results:
        raise ValueError("plot_fct_bins: no results to plot")
    mean_key, p99_key, what = _metric(metric)
    summaries = {str(label): _summary_of(r) for label, r in results.items()}
    if normalize_to is not None and normalize_to not in summaries:
        raise ValueError(f"normalize_to: {normalize_to!r} is not one of the labels ({', '.join(summaries)})")
    base = Path(path)
    if base.suffix in (".png", ".svg"):
        base = base.with_suffix("")

    def value(label: str, name: str, stat: str) -> float | None:
        v = summaries[label]["bins"][name].get(stat)
        if v is None:
            return None
        if normalize_to is not None:
            ref = summaries[normalize_to]["bins"][name].get(stat)
            return None if not ref else v / ref
        return v / 1000.0 if metric == "fct" else v

    shown = [b for b in SUMMARY_BINS if any(value(lab, b, s) is not None for lab in summaries
                                             for s in (mean_key, p99_key))]
    empty = [b for b in SUMMARY_BINS if b not in shown]
    if not shown:
        shown = ["all"]
    edges = {s.get("bin_edges", "papers") for s in summaries.values()}
    titles = bin_titles(summaries.values())
    fig = Figure(figsize=(max(2.9 * len(shown) + 0.8, 6.0), 6.2), layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(2, len(shown), squeeze=False)
    labels = list(summaries)
    colours = [f"C{i % 10}" for i in range(len(labels))]
    # a ratio (slowdown, or a value over a reference's) is drawn as dots on an axis from 1 or below, where its
    # differences show; an FCT as bars from zero
    dots = metric == "slowdown" or normalize_to is not None
    for row, (stat, stat_name) in enumerate(((mean_key, "mean"), (p99_key, "99th-percentile"))):
        for col, name in enumerate(shown):
            ax = axes[row][col]
            ys = [value(lab, name, stat) for lab in labels]
            heights = [float("nan") if y is None else y for y in ys]
            unit = "us"
            if metric == "fct" and normalize_to is None and max((y for y in ys if y is not None), default=0) >= 1e4:
                heights, ys, unit = [h / 1000 for h in heights], [None if y is None else y / 1000 for y in ys], "ms"
            if dots:
                ax.axhline(1.0, color="0.3", linewidth=0.8, linestyle="--")
                ax.scatter(range(len(labels)), heights, s=60, color=colours, zorder=3)
                ax.set_xlim(-0.6, len(labels) - 0.4)
                known = [y for y in ys if y is not None]
                value_axis(ax, [*known, 1.0], floor=min([1.0, *known]) * 0.9 if known else 0.0, wide=math.inf)
            else:
                ax.bar(range(len(labels)), heights, width=0.7, color=colours)
                value_axis(ax, ys, wide=math.inf)
            for i, y in enumerate(ys):
                if y is None:
                    ax.text(i, ax.get_ylim()[0], "-", ha="center", va="bottom", color="0.45")
            ax.set_xticks(range(len(labels)), [])
            if normalize_to is not None:
                ylabel = f"{stat_name} {what} / {normalize_to}'s"
            else:
                ylabel = f"{stat_name} FCT ({unit})" if metric == "fct" else f"{stat_name} normalised FCT"
            if col == 0 or unit == "ms" or (metric == "fct" and normalize_to is None):
                ax.set_ylabel(ylabel)
            if row == 0:
                count = max(s["bins"][name]["count"] for s in summaries.values())
                ax.set_title(f"{titles.get(name, name)}\n{count:,} flows", fontsize=10)
            ax.grid(axis="y", alpha=0.3)
    handles: list[Any]
    if dots:
        handles = [Line2D([], [], linestyle="none", marker="o", markersize=8, color=c) for c in colours]
    else:
        handles = [Rectangle((0, 0), 1, 1, color=c) for c in colours]
    fig.legend(handles, labels, loc="outside lower center", ncol=legend_columns(labels, fig.get_figwidth()),
               frameon=False)
    sizes = f" ({bins_text(next(iter(edges)))})" if len(edges) == 1 else ""
    default_title = (f"Flow completion time by flow size{sizes}" if metric == "fct"
                     else f"Normalised FCT (slowdown) by flow size{sizes}")
    if empty:
        default_note = "no finished flows in bin " + ", ".join(empty) + " (left out)"
        fig.text(0.99, 0.005, default_note, ha="right", va="bottom", fontsize=8, color="0.35")
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
    Bins without a value in any line get no panel (a note under the figure names them). A slowdown is labelled
    "normalised FCT" (FCT over ideal FCT), the papers' name for it.
    """
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
    # bins without a value anywhere get no panel; a note under the figure names them
    has_value = df["value"].notna()
    empty = [b for b in bins if not (has_value & (df["bin"] == b)).any()]
    bins = tuple(b for b in bins if b not in empty) or bins[:1]

    fig = Figure(figsize=(max(3.4 * len(bins) + 0.6, 7.0), 6.6), layout="constrained")
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
            values: list[float] = []
            for i, label in enumerate(labels):
                line = sel[sel["label"] == label].sort_values("load")
                if line.empty or line["value"].notna().sum() == 0:
                    continue
                x = line["load"].to_numpy(dtype=float) + dodge[label]
                y = line["value"].to_numpy(dtype=float) / scale
                values.extend(y)
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
                    values.extend(hi[spread])
                drawn = True
            if not drawn:
                ax.text(0.5, 0.5, "no finished flows", transform=ax.transAxes, ha="center", va="center",
                        color="0.45")
            if reference is not None:
                ax.axhline(1.0, color="0.3", linewidth=0.8, linestyle="--")
                value_axis(ax, [*values, 1.0], wide=math.inf)
                ylabel = f"{stat_name} {what} / {reference}'s"
            elif metric == "fct":
                value_axis(ax, values)
                ylabel = f"{stat_name} FCT ({unit})"
            else:
                value_axis(ax, values, floor=1.0 if all(v >= 1.0 for v in values if math.isfinite(v)) else 0.0)
                ylabel = f"{stat_name} normalised FCT"
            if col == 0 or reference is None:
                ax.set_ylabel(ylabel)
            if row == 0:
                ax.set_title((titles or BIN_TITLES).get(name, name))
            if row == 1:
                ax.set_xlabel("load")
            ax.grid(alpha=0.3)
            ax.margins(x=0.06)
            if len(all_loads) == 1:
                ax.set_xlim(all_loads[0] - 0.1, all_loads[0] + 0.1)
            if len(all_loads) <= 12:
                ax.set_xticks(all_loads, [f"{v:g}" for v in all_loads])
    if handles:
        fig.legend(list(handles.values()), list(handles), loc="outside lower center",
                   ncol=legend_columns(list(handles), fig.get_figwidth()), frameon=False, fontsize="medium")
    if empty:
        fig.text(0.99, 0.005, "no finished flows in bin " + ", ".join(empty) + " (left out)", ha="right",
                 va="bottom", fontsize=8, color="0.35")
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

