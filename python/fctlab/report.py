"""The report of a results directory: figures (PNG + SVG) and one self-contained HTML page (``fctlab report``).

A results directory holds runs, each a folder with ``summary.json`` (and ``config.json``, ``flows.parquet``) as
``fctlab run`` writes it (docs/results.md). The layout does not matter: a single run (``DIR/summary.json``), a
sweep (``DIR/runs/<run_id>/``) or a comparison (``DIR/<scheme>/``); runs are found by looking for
``summary.json`` anywhere under DIR, and only those files (and ``config.json`` when the summary has no
``config``) are read, so a catalog or Parquet files are never needed.

Runs are grouped by workload (the CDF's name) and series label (the scheme, plus any configuration key that tells
apart runs of the same scheme and workload, e.g. ``pias (switch.queues=2)``), with the offered load on the x axis.
Runs that differ only in their seed are averaged: each statistic of the figures and tables is the mean over seeds
of each run's own statistic (the per-seed spread is drawn as error bars), and the number of seeds is shown. The page
embeds its images as base64 PNG and its style inline, so it opens from ``file://`` with no network.

A "paper comparison" section lists the paper's claims added with :meth:`Report.add_paper_claims`: the recipes'
:class:`fctlab.claims.Claim` records (read back from their claims.json: the paper's value, fctlab's, the check, the
verdict and, when it differs, why), or plain :class:`PaperClaim` rows (a statement, how fctlab's number is computed,
and that number) for a report made by hand.
"""

from __future__ import annotations

import base64
import datetime as _dt
import html
import json
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fctlab.analyze import SUMMARY_BINS
from fctlab.plot import METRICS, bin_titles

__all__ = [
    "ReportError",
    "Run",
    "PaperClaim",
    "Report",
    "ReportFiles",
    "discover_runs",
    "write_report",
    "claims_html",
    "REPORT_DIR",
]

#: Default output folder, inside the results directory.
REPORT_DIR = "report"
SUMMARY_FILE = "summary.json"
CONFIG_FILE = "config.json"
# Configuration keys that never tell two series apart: identity, provenance and the plotted axes.
# ("sweep_point" is where fctlab.sweep records a run's point in config.json.)
_IGNORED_KEYS = (
    "name",
    "seed",
    "source",
    "overrides",
    "output",
    "sweep",
    "sweep_point",
    "run_id",
    "workload.load",
    "workload.cdf",
)
_STATS = ("mean_fct_ns", "p99_fct_ns", "mean_slowdown", "p99_slowdown")


class ReportError(ValueError):
    """The report cannot be made (no runs, a bad option); the message names the culprit."""


# --------------------------------------------------------------------------------------------------------------
# Runs


@dataclass(frozen=True)
class Run:
    """One run found under the results directory: its summary and resolved configuration."""

    path: Path
    run_id: str
    summary: Mapping[str, Any]
    config: Mapping[str, Any]
    workload: str
    scheme: str
    load: float | None
    seed: int | None
    label: str = ""
    written: float = 0.0  # summary.json's modification time (s since the epoch)

    def bin(self, name: str) -> Mapping[str, Any]:
        """The summary's statistics of one size bin ("small", "medium", "large", "all")."""
        return (self.summary.get("bins") or {}).get(name) or {}


def _workload_name(config: Mapping[str, Any]) -> str:
    w = config.get("workload") or {}
    cdf = w.get("cdf")
    if cdf:
        name = Path(str(cdf)).stem if any(c in str(cdf) for c in "/\\") else str(cdf)
    elif w.get("size_uniform_mean_bytes"):
        name = f"uniform sizes, mean {float(w['size_uniform_mean_bytes']) / 1000:g} KB"
    elif w.get("trace"):
        name = f"trace {Path(str(w['trace'])).name}"
    else:
        name = "unknown workload"
    pattern = w.get("pattern")
    if pattern and pattern != "all_to_all":
        name += f" ({pattern})"
    return name


def _flatten(value: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for k, v in value.items():
            out.update(_flatten(v, f"{prefix}{k}."))
        return out
    return {prefix[:-1]: json.dumps(value, sort_keys=True) if isinstance(value, (list, dict)) else value}


def _ignored(key: str) -> bool:
    return any(key == k or key.startswith(k + ".") for k in _IGNORED_KEYS)


def _read_run(summary_path: Path, root: Path) -> Run:
    summary = json.loads(summary_path.read_text(encoding="utf-8"))
    if not isinstance(summary, Mapping) or not isinstance(summary.get("bins"), Mapping):
        raise ValueError("not a run summary (no 'bins')")
    config = summary.get("config")
    if not isinstance(config, Mapping):
        cfg_path = summary_path.with_name(CONFIG_FILE)
        config = json.loads(cfg_path.read_text(encoding="utf-8")) if cfg_path.exists() else {}
    load = (config.get("workload") or {}).get("load")
    seed = summary.get("seed", config.get("seed"))
    scheme = summary.get("scheme") or (config.get("scheme") or {}).get("name") or "unknown scheme"
    rel = summary_path.parent.relative_to(root)
    return Run(
        path=summary_path.parent,
        run_id="." if str(rel) == "." else rel.as_posix(),
        summary=summary,
        config=config,
        workload=_workload_name(config),
        scheme=str(scheme),
        load=float(load) if isinstance(load, (int, float)) and not isinstance(load, bool) else None,
        seed=int(seed) if isinstance(seed, int) and not isinstance(seed, bool) else None,
        written=summary_path.stat().st_mtime,
    )


def _label_runs(runs: list[Run]) -> list[Run]:
    """Give each run its series label: its experiment's ``label`` when every run of its (workload, scheme) has
    one; else the scheme, plus the config keys that differ between runs of the same (workload, scheme) apart
    from load and seed."""
    from dataclasses import replace

    groups: dict[tuple[str, str], list[int]] = {}
    for i, r in enumerate(runs):
        groups.setdefault((r.workload, r.scheme), []).append(i)
    labels = [r.scheme for r in runs]
    for idx in groups.values():
        # an experiment that names its series (top-level ``label``) is labelled by that name
        if all(runs[i].config.get("label") for i in idx):
            for i in idx:
                labels[i] = str(runs[i].config["label"])
            continue
        flat = [{k: v for k, v in _flatten(runs[i].config).items() if not _ignored(k)} for i in idx]
        keys = sorted(set().union(*flat))
        varying = [k for k in keys if len({json.dumps(f.get(k), sort_keys=True, default=str) for f in flat}) > 1]
        if varying:
            for i, f in zip(idx, flat):
                labels[i] = f"{runs[i].scheme} (" + ", ".join(f"{k}={f.get(k)}" for k in varying) + ")"
    return [replace(r, label=lab) for r, lab in zip(runs, labels)]


def discover_runs(results_dir: str | Path, *, exclude: Sequence[Path] = ()) -> tuple[list[Run], list[str]]:
    """Every run under ``results_dir`` (any depth; hidden folders and ``exclude`` skipped), in path order, and a
    list of "path: reason" for summary files that could not be read."""
    root = Path(results_dir)
    if not root.is_dir():
        raise ReportError(f"RESULTS_DIR: {root} is not a directory")
    root = root.resolve()
    skip = [Path(p).resolve() for p in exclude]
    runs, problems = [], []
    for path in sorted(root.rglob(SUMMARY_FILE)):
        rel_parts = path.relative_to(root).parts
        if any(p.startswith(".") for p in rel_parts) or any(path.is_relative_to(s) for s in skip):
            continue
        try:
            runs.append(_read_run(path, root))
        except (OSError, ValueError) as e:  # json.JSONDecodeError is a ValueError
            problems.append(f"{path.relative_to(root).as_posix()}: {' '.join(str(e).split())}")
    return _label_runs(runs), problems


# --------------------------------------------------------------------------------------------------------------
# Paper claims


@dataclass(frozen=True)
class PaperClaim:
    """One line of the paper comparison: what the paper says, how fctlab computes its own number from the runs,
    and that number.

    ``value`` is a number (shown with ``unit``) or text; ``source`` cites the paper and section; ``note`` is free
    text (e.g. "fctlab agrees", "scale small: few flows").
    """

    statement: str
    recipe: str
    value: float | str | None
    source: str = ""
    unit: str = ""
    note: str = ""

    @classmethod
    def coerce(cls, item: PaperClaim | Mapping[str, Any] | Sequence[Any]) -> PaperClaim:
        """A claim from a PaperClaim, a dict of its fields, or a (statement, recipe, value[, source]) tuple."""
        if isinstance(item, PaperClaim):
            return item
        if isinstance(item, Mapping):
            return cls(**item)
        if isinstance(item, (tuple, list)) and 3 <= len(item) <= 6:
            return cls(*item)
        raise TypeError(f"a paper claim is a PaperClaim, a dict or a (statement, recipe, value) tuple, got {item!r}")

    def value_text(self) -> str:
        """The value as shown in the report."""
        v = self.value
        if v is None or (isinstance(v, float) and not math.isfinite(v)):
            return "n/a"
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            text = f"{v:,.3g}" if abs(v) < 1000 else f"{v:,.0f}"
        else:
            text = str(v)
        return f"{text} {self.unit}".strip() if self.unit and self.unit != "%" else text + self.unit


# --------------------------------------------------------------------------------------------------------------
# The report


@dataclass(frozen=True)
class ReportFiles:
    """What :meth:`Report.write` wrote: the HTML page and every figure (PNG and SVG)."""

    html: Path
    figures: list[Path] = field(default_factory=list)


class Report:
    """Runs of a results directory, grouped and averaged over seeds, ready to be written as figures and HTML.

    ``metric`` is "fct" or "slowdown" (what the figures plot; the tables always show FCT, and slowdown too when it
    is the metric). ``normalize_to`` names a scheme (or series label): figures then plot each value divided by
    that scheme's value at the same load.
    """

    def __init__(
        self,
        runs: Sequence[Run],
        *,
        root: str | Path,
        metric: str = "fct",
        normalize_to: str | None = None,
        skipped: Sequence[str] = (),
        title: str | None = None,
    ):
        if metric not in METRICS:
            raise ReportError(f"--metric: must be one of {', '.join(METRICS)}, got {metric!r}")
        if not runs and skipped:
            more = f" (and {len(skipped) - 1} more)" if len(skipped) > 1 else ""
            raise ReportError(f"RESULTS_DIR: no readable runs under {root}: {skipped[0]}{more}")
        if not runs:
            raise ReportError(f"RESULTS_DIR: no runs (no {SUMMARY_FILE}) found under {root}")
        self.runs = list(runs)
        self.root = Path(root)
        self.metric = metric
        self.skipped = list(skipped)
        self.title = title or f"fctlab report: {self.root.name or self.root}"
        self.claims: list[Any] = []  # Claim or PaperClaim
        self.tables: list[tuple[str, str]] = []
        self.figures: list[tuple[str, Path]] = []
        #: Draw the per-workload figures (off: their tables only).
        self.generic_figures = True
        self.workloads = list(dict.fromkeys(r.workload for r in sorted(self.runs, key=lambda r: r.workload)))
        self.normalize_to = normalize_to
        if normalize_to is not None:
            # Checked now, so a typo fails before anything is drawn.
            if not any(self._reference_label(w) for w in self.workloads):
                known = sorted({r.label for r in self.runs} | {r.scheme for r in self.runs})
                raise ReportError(
                    f"--normalize-to: no runs of scheme {normalize_to!r}; schemes in {self.root}: {', '.join(known)}"
                )
        self._table = self._aggregate()

    @classmethod
    def from_dir(
        cls,
        results_dir: str | Path,
        *,
        metric: str = "fct",
        normalize_to: str | None = None,
        exclude: Sequence[Path] = (),
    ) -> Report:
        """Find the runs under ``results_dir`` (skipping its ``report/`` folder and ``exclude``) and group them."""
        root = Path(results_dir)
        runs, skipped = discover_runs(root, exclude=[root / REPORT_DIR, *exclude])
        return cls(runs, root=root.resolve(), metric=metric, normalize_to=normalize_to, skipped=skipped)

    # -- data ----------------------------------------------------------------------------------------------------

    def _reference_label(self, workload: str) -> str | None:
        """The series label that ``normalize_to`` designates in one workload, if any."""
        if self.normalize_to is None:
            return None
        labels = {r.label for r in self.runs if r.workload == workload}
        if self.normalize_to in labels:
            return self.normalize_to
        same_scheme = sorted({r.label for r in self.runs if r.workload == workload and r.scheme == self.normalize_to})
        return same_scheme[0] if len(same_scheme) == 1 else None

    def _aggregate(self) -> Any:
        """One row per (workload, label, load): seed count, flow totals, and per bin and statistic the mean over
        seeds with its min and max."""
        import numpy as np
        import pandas as pd

        rows = []
        for r in self.runs:
            row: dict[str, Any] = {
                "workload": r.workload,
                "label": r.label,
                "scheme": r.scheme,
                "load": r.load if r.load is not None else np.nan,
                "seed": r.seed,
                "flows": r.summary.get("measured_flows", r.bin("all").get("count")),
                "unfinished": r.bin("all").get("unfinished"),
                "hit_time_limit": bool(r.summary.get("hit_time_limit")),
            }
            for b in SUMMARY_BINS:
                row[f"{b}.count"] = r.bin(b).get("count")
                for stat in _STATS:
                    v = r.bin(b).get(stat)
                    row[f"{b}.{stat}"] = np.nan if v is None else float(v)
            rows.append(row)
        df = pd.DataFrame(rows)
        keys = ["workload", "label", "scheme", "load"]
        agg: dict[str, Any] = {
            "flows": lambda s: int(pd.to_numeric(s, errors="coerce").fillna(0).sum()),
            "unfinished": lambda s: int(pd.to_numeric(s, errors="coerce").fillna(0).sum()),
            "hit_time_limit": "any",
        }
        for b in SUMMARY_BINS:
            agg[f"{b}.count"] = lambda s: int(pd.to_numeric(s, errors="coerce").fillna(0).sum())
        stat_cols = [f"{b}.{s}" for b in SUMMARY_BINS for s in _STATS]
        grouped = df.groupby(keys, dropna=False, sort=True)
        out = grouped.agg(agg)
        # Runs of one group differ only in their seed (a run without a seed counts as one sample too).
        out.insert(0, "seeds", grouped.size())
        means = grouped[stat_cols].mean()
        lows = grouped[stat_cols].min().add_suffix(".lo")
        highs = grouped[stat_cols].max().add_suffix(".hi")
        return pd.concat([out, means, lows, highs], axis=1).reset_index()

    @property
    def table(self) -> Any:
        """The aggregated table (pandas DataFrame): one row per (workload, label, scheme, load), with ``seeds``,
        ``flows`` and ``unfinished`` (summed over seeds), and ``<bin>.<stat>`` (mean over seeds), ``.lo`` and
        ``.hi`` (min and max over seeds) for every bin and statistic of summary.json."""
        return self._table.copy()

    def points(self, workload: str) -> Any:
        """The long-form points of one workload for :func:`fctlab.plot.plot_vs_load` (this report's metric).

        Without ``normalize_to``: the mean over seeds, and the min and max over seeds as the spread. With it: the
        mean over seeds divided by the reference's mean over seeds at the same load; the spread is then the min
        and max of the per-seed ratios (each run against the reference run of the same seed, which saw the same
        flows), so that it shows how consistent the difference is rather than how much the workload varies.
        """
        import pandas as pd

        mean_key, p99_key, _ = METRICS[self.metric]
        t = self._table[self._table["workload"] == workload]
        ref = self._reference_label(workload)
        ref_rows = {r["load"]: r for _, r in t[t["label"] == ref].iterrows()} if ref else {}
        ref_runs = {(r.load, r.seed): r for r in self.runs if r.workload == workload and r.label == ref}
        rows = []
        for _, r in t.iterrows():
            group = [x for x in self.runs if x.workload == workload and x.label == r["label"] and x.load == r["load"]]
            for b in SUMMARY_BINS:
                for stat, key in (("mean", mean_key), ("p99", p99_key)):
                    value, lo, hi = r[f"{b}.{key}"], math.nan, math.nan
                    if ref is None:
                        if r["seeds"] > 1:
                            lo, hi = r[f"{b}.{key}.lo"], r[f"{b}.{key}.hi"]
                    else:
                        base = ref_rows.get(r["load"])
                        value = _ratio(value, None if base is None else base[f"{b}.{key}"])
                        paired = []
                        for x in group:
                            mate = ref_runs.get((x.load, x.seed))
                            q = _ratio(x.bin(b).get(key), None if mate is None else mate.bin(b).get(key))
                            if not math.isnan(q):
                                paired.append(q)
                        if len(paired) > 1:
                            lo, hi = min(paired), max(paired)
                    rows.append({"label": r["label"], "load": r["load"], "bin": b, "stat": stat, "value": value,
                                 "lo": lo, "hi": hi})
        return pd.DataFrame(rows, columns=["label", "load", "bin", "stat", "value", "lo", "hi"])

    def add_paper_claims(self, claims: Iterable[Any]) -> None:
        """Add rows to the "paper comparison" section: :class:`fctlab.claims.Claim` records, or anything
        :meth:`PaperClaim.coerce` takes."""
        from fctlab.claims import Claim

        self.claims.extend(c if isinstance(c, Claim) else PaperClaim.coerce(c) for c in claims)

    def add_tables(self, tables: Iterable[tuple[str, str]]) -> None:
        """Add (title, plain-text table) pairs, shown after the paper comparison as HTML tables (the reproduction
        recipes' own tables, e.g. QCLIMB's Table 3; :func:`text_table_html`)."""
        self.tables.extend((str(t), str(body)) for t, body in tables)

    def add_figures(self, figures: Iterable[tuple[str, str | Path]]) -> None:
        """Add (caption, PNG path) pairs: figures drawn elsewhere (a recipe's own figure types, e.g. Homa's slowdown
        by message-size percentile), shown after the paper comparison with their captions. The PNG is embedded;
        an SVG beside it is named in the caption."""
        for caption, path in figures:
            p = Path(path)
            if p.suffix != ".png" or not p.is_file():
                raise ReportError(f"figures: {p} is not a PNG file")
            self.figures.append((str(caption), p))

    def _figures_section(self) -> str:
        if not self.figures:
            return ""
        parts = "".join(_figure_html(caption, path) for caption, path in self.figures)
        return f'<section id="paper-figures"><h2>The paper\'s figures, from fctlab\'s runs</h2>{parts}</section>'

    def _tables_section(self) -> str:
        if not self.tables:
            return ""
        e = html.escape
        parts = "".join(f"<h3>{e(t)}</h3>{text_table_html(body)}" for t, body in self.tables)
        return f'<section id="recipe-tables"><h2>Recipe tables</h2>{parts}</section>'

    # -- output --------------------------------------------------------------------------------------------------

    def write(self, out_dir: str | Path | None = None) -> ReportFiles:
        """Write the figures (``figures/*.png`` and ``.svg``) and ``index.html`` to ``out_dir`` (default:
        ``RESULTS_DIR/report``); returns the paths written."""
        from fctlab.results import atomic_write

        out = Path(out_dir) if out_dir is not None else self.root / REPORT_DIR
        out.mkdir(parents=True, exist_ok=True)
        figures: list[Path] = []
        sections = []
        for workload in self.workloads:
            figs = self._figures(workload, out / "figures") if self.generic_figures else []
            figures.extend(p for pair in figs for p in pair[1])
            sections.append(self._workload_section(workload, figs))
        for _, png in self.figures:
            figures.extend(p for p in (png, png.with_suffix(".svg")) if p.exists())
        page = self._page(sections)
        index = out / "index.html"
        atomic_write(index, lambda f: f.write(page.encode("utf-8")))
        return ReportFiles(html=index, figures=figures)

    def _figures(self, workload: str, fig_dir: Path) -> list[tuple[str, list[Path]]]:
        """Draw the figures of one workload; returns (caption, [png, svg]) per figure."""
        from fctlab.plot import plot_fct_bins, plot_vs_load

        t = self._table[self._table["workload"] == workload]
        loads = sorted({x for x in t["load"] if not _isnan(x)})
        ref = self._reference_label(workload)
        what = "FCT" if self.metric == "fct" else "normalised FCT (slowdown)"
        slug = _slug(workload)
        suffix = f"_vs_{_slug(ref)}" if ref else ""
        out = []
        if len(loads) >= 2:
            caption = f"{workload}: mean and 99th-percentile {what} against the load, per flow-size bin"
            if ref:
                caption += f", relative to {ref} at the same load"
            seeds = sorted(set(int(s) for s in t["seeds"]))
            if seeds != [1]:
                caption += f"; mean over {_seed_text(seeds)}"
                caption += (
                    " (error bars: min to max over seeds of the ratio to the same seed's run)"
                    if ref
                    else " (error bars: min to max over seeds)"
                )
            title = f"{workload}: {what} vs load" + (f" (relative to {ref})" if ref else "")
            paths = plot_vs_load(
                self.points(workload),
                fig_dir / f"{slug}_{self.metric}_vs_load{suffix}",
                metric=self.metric,
                relative_to=ref,
                title=title,
                titles=bin_titles(r.summary for r in self.runs),
            )
            out.append((caption, paths))
        groups = [(ld, t[t["load"] == ld]) for ld in loads] if len(loads) < 2 else []
        if not loads:
            groups = [(None, t)]
        for ld, rows in groups:
            summaries = {}
            for _, r in rows.iterrows():
                summaries[str(r["label"])] = {"bins": {b: _bin_from_row(r, b) for b in SUMMARY_BINS}}
            load_text = "" if ld is None else f" at load {ld:g}"
            caption = f"{workload}{load_text}: mean and 99th-percentile {what} per flow-size bin"
            if ref and ref in summaries:
                caption += f", relative to {ref}"
            name = f"{slug}_{self.metric}_bins" + ("" if ld is None else f"_load{ld:g}") + suffix
            paths = plot_fct_bins(
                summaries,
                fig_dir / name,
                metric=self.metric,
                normalize_to=ref if ref in summaries else None,
                title=f"{workload}{load_text}: {what} by flow size",
            )
            out.append((caption, paths))
        return out

    # -- HTML ----------------------------------------------------------------------------------------------------

    def _workload_section(self, workload: str, figs: list[tuple[str, list[Path]]]) -> str:
        e = html.escape
        parts = [f'<section class="workload" id="workload-{_slug(workload)}">', f"<h2>{e(workload)}</h2>"]
        for caption, paths in figs:
            png = next(p for p in paths if p.suffix == ".png")
            parts.append(_figure_html(caption, png))
        parts.append(self._results_table(workload, "fct"))
        if self.metric == "slowdown":
            parts.append(self._results_table(workload, "slowdown"))
        parts.append("</section>")
        return "\n".join(parts)

    def _results_table(self, workload: str, metric: str) -> str:
        e = html.escape
        t = self._table[self._table["workload"] == workload].sort_values(["label", "load"])
        mean_key, p99_key, _ = METRICS[metric]
        unit = "us" if metric == "fct" else "FCT / ideal FCT"
        caption = (
            f"{workload}: mean and 99th-percentile {'FCT (microseconds)' if metric == 'fct' else 'slowdown'} per "
            "flow-size bin; flows and unfinished summed over seeds, statistics averaged over seeds"
        )
        head1 = ['<th rowspan="2">scheme</th>', '<th rowspan="2">load</th>', '<th rowspan="2">seeds</th>',
                 '<th rowspan="2">flows</th>', '<th rowspan="2">unfinished</th>']
        head2 = []
        titles = bin_titles(r.summary for r in self.runs)
        # bins without a finished flow in any row of this workload get no columns (a note names them)
        shown = [b for b in SUMMARY_BINS if t[f"{b}.{mean_key}"].notna().any()] or ["all"]
        empty = [b for b in SUMMARY_BINS if b not in shown]
        for b in shown:
            head1.append(f'<th colspan="2" class="bin">{e(titles[b])}</th>')
            head2.extend(["<th>mean</th>", "<th>p99</th>"])
        body = []
        previous = None
        for _, r in t.iterrows():
            label = str(r["label"])
            cls = ' class="first"' if label != previous else ""
            unfinished = int(r["unfinished"])
            cells = [
                f'<th scope="row">{e(label) if label != previous else ""}</th>',
                f"<td>{_load_text(r['load'])}</td>",
                f"<td>{int(r['seeds'])}</td>",
                f"<td>{int(r['flows']):,}</td>",
                f'<td{" class=warn" if unfinished or r["hit_time_limit"] else ""}>{unfinished:,}'
                f"{' (time limit)' if r['hit_time_limit'] else ''}</td>",
            ]
            for b in shown:
                for key in (mean_key, p99_key):
                    cells.append(f"<td>{_num(r[f'{b}.{key}'], metric)}</td>")
            body.append(f"<tr{cls}>{''.join(cells)}</tr>")
            previous = label
        table_id = f"table-{_slug(workload)}-{metric}"
        return (
            f'<div class="scroll"><table class="results" id="{table_id}">'
            f"<caption>{e(caption)}</caption>"
            f"<thead><tr>{''.join(head1)}</tr><tr>{''.join(head2)}</tr></thead>"
            f"<tbody>{''.join(body)}</tbody></table></div>"
            f'<p class="unit">Unit: {e(unit)}. "-": no finished flow in the bin.'
            + (f" Left out, no finished flow in any run: {e(', '.join(empty))}." if empty else "") + "</p>"
        )

    def _claims_section(self) -> str:
        return claims_html(self.claims)

    def _runs_section(self) -> str:
        e = html.escape
        rows = []
        # application throughput (D3, PDQ) when some run has flows with deadlines
        deadlines = any(r.summary.get("deadline_flows") for r in self.runs)
        for r in sorted(self.runs, key=lambda r: (r.workload, r.label, r.load or 0.0, r.seed or 0, r.run_id)):
            s = r.summary
            cells = [
                e(r.run_id), e(r.workload), e(r.label), "-" if r.load is None else f"{r.load:g}",
                "-" if r.seed is None else str(r.seed), _int(s.get("flows")), _int(s.get("unfinished_flows")),
                _int(s.get("drops")),
                "-" if s.get("sim_time_ns") is None else f"{s['sim_time_ns'] / 1e6:,.3f}",
                "-" if s.get("wall_seconds") is None else f"{s['wall_seconds']:,.2f}",
            ]
            if deadlines:
                app = s.get("application_throughput")
                cells += [_int(s.get("deadline_flows")), "-" if app is None else f"{100 * app:.1f}%",
                          _int(s.get("terminated_flows"))]
            rows.append("<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
        skipped = ""
        if self.skipped:
            items = "".join(f"<li>{e(s)}</li>" for s in self.skipped)
            skipped = f'<p class="warn">Summary files that could not be read (left out):</p><ul>{items}</ul>'
        return (
            f'<section id="runs"><details><summary>All {len(self.runs)} runs</summary>'
            '<div class="scroll"><table class="runs"><thead><tr><th>run</th><th>workload</th><th>series</th>'
            "<th>load</th><th>seed</th><th>flows</th><th>unfinished</th><th>drops</th><th>simulated (ms)</th>"
            "<th>wall (s)</th>"
            + ("<th>deadline flows</th><th>application throughput</th><th>terminated</th>" if deadlines else "")
            + f"</tr></thead><tbody>{''.join(rows)}</tbody></table></div></details>{skipped}"
            "</section>"
        )

    def _page(self, sections: list[str]) -> str:
        from fctlab import __version__

        e = html.escape
        now = _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0)
        first = _dt.datetime.fromtimestamp(min(r.written for r in self.runs), _dt.timezone.utc).replace(microsecond=0)
        last = _dt.datetime.fromtimestamp(max(r.written for r in self.runs), _dt.timezone.utc).replace(microsecond=0)
        labels = sorted({r.label for r in self.runs})
        loads = sorted({r.load for r in self.runs if r.load is not None})
        seeds = sorted({r.seed for r in self.runs if r.seed is not None})
        warn_runs = [r for r in self.runs if r.bin("all").get("unfinished") or r.summary.get("hit_time_limit")]
        facts = [
            ("results", str(self.root)),
            ("runs", f"{len(self.runs)}" + (f" ({len(self.skipped)} unreadable, left out)" if self.skipped else "")),
            ("workloads", ", ".join(self.workloads)),
            ("schemes", ", ".join(labels)),
            ("loads", ", ".join(f"{x:g}" for x in loads) or "-"),
            ("seeds", ", ".join(str(s) for s in seeds) or "-"),
            ("figures show", ("FCT" if self.metric == "fct" else "slowdown (FCT / ideal FCT)")
             + (f", relative to {self.normalize_to}" if self.normalize_to else "")),
            ("runs written", f"{first:%Y-%m-%d %H:%M} to {last:%Y-%m-%d %H:%M} UTC"),
            ("report made", f"{now:%Y-%m-%d %H:%M:%S} UTC by fctlab {__version__}"),
        ]
        dl = "".join(f"<dt>{e(k)}</dt><dd>{e(v)}</dd>" for k, v in facts)
        warning = ""
        if warn_runs:
            warning = (
                f'<p class="warn">{len(warn_runs)} run(s) have unfinished flows or hit the time limit; their '
                "statistics cover the finished flows only (see the unfinished column).</p>"
            )
        warning += _check_warnings_html(self.runs)
        toc = "".join(f'<li><a href="#workload-{_slug(w)}">{e(w)}</a></li>' for w in self.workloads)
        if self.tables:
            toc = '<li><a href="#recipe-tables">Recipe tables</a></li>' + toc
        if self.figures:
            toc = '<li><a href="#paper-figures">The paper\'s figures</a></li>' + toc
        if self.claims:
            toc = '<li><a href="#paper-comparison">Paper comparison</a></li>' + toc
        titles = bin_titles(r.summary for r in self.runs)
        if titles["small"] == "small (0, 100 KiB)":
            bins_text = ("small (0, 100 KiB), medium [100 KiB, 10 MiB], large (10 MiB, inf), with KiB = 1,024 bytes "
                         "and MiB = 1,048,576 bytes (the PIAS ns-2 scripts' bins, output.bins = \"ns2\")")
        elif titles["small"] == "small":
            bins_text = "the runs' own (their output.bins differ; each run's summary.json gives its edges)"
        else:
            bins_text = ("small (0, 100 KB], medium (100 KB, 10 MB], large (10 MB, inf), with KB = 1,000 bytes and "
                         "MB = 1,000,000 bytes")
        notes = (
            f"<p>Size bins: {e(bins_text)}. Each run's statistics are over its finished, measured (neither "
            "warm-up nor cool-down) flows; the 99th "
            "percentile is numpy's linear interpolation (docs/results.md). Runs that differ only in their seed are "
            "averaged: each number is the mean over seeds of the runs' own statistics. FCT is the time the "
            "receiver holds every byte, minus the flow's arrival; slowdown is FCT over the flow's ideal FCT in "
            "the idle fabric.</p>"
        )
        return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="fctlab {e(__version__)}">
<title>{e(self.title)}</title>
<style>{_CSS}</style>
</head>
<body>
<header>
<h1>{e(self.title)}</h1>
<p class="lead">Flow completion times of {len(self.runs)} simulated run(s), by workload, scheme, load and
flow size.</p>
<dl class="facts">{dl}</dl>
{warning}
<nav><ul>{toc}</ul></nav>
</header>
<main>
{self._claims_section()}
{self._figures_section()}
{self._tables_section()}
{"".join(sections)}
{self._runs_section()}
</main>
<footer>{notes}</footer>
</body>
</html>
"""


_CSS = """
:root { color-scheme: light; }
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
  margin: 0 auto; max-width: 1440px; padding: 0 24px 48px; color: #1d2330; background: #fff; line-height: 1.45; }
h1 { font-size: 1.7em; margin: 28px 0 4px; }
h2 { font-size: 1.35em; margin: 36px 0 10px; padding-bottom: 4px; border-bottom: 2px solid #d8dde6; }
pre.table { font-size: 0.85em; line-height: 1.3; white-space: pre; }
.lead { color: #4a5366; margin: 0 0 12px; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: 2px 16px; margin: 0 0 12px;
  font-size: 0.93em; }
dl.facts dt { color: #5a6375; }
dl.facts dd { margin: 0; word-break: break-all; }
nav ul { list-style: none; padding: 0; display: flex; flex-wrap: wrap; gap: 6px 18px; margin: 8px 0; }
nav a { color: #1f5fbf; }
figure { margin: 14px 0 22px; }
figure img { max-width: 100%; height: auto; border: 1px solid #e3e7ee; }
figcaption { font-size: 0.9em; color: #4a5366; margin-top: 4px; }
figcaption .file { color: #8a92a3; }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; font-size: 0.86em; margin: 8px 0 4px; font-variant-numeric: tabular-nums; }
caption { caption-side: top; text-align: left; font-weight: 600; padding: 4px 0 6px; }
th, td { padding: 3px 9px; border-bottom: 1px solid #e3e7ee; text-align: right; white-space: nowrap; }
thead th { background: #f1f4f9; border-bottom: 1px solid #c9d0dc; font-weight: 600; text-align: center; }
tbody th { text-align: left; font-weight: 600; }
tr.first td, tr.first th { border-top: 1px solid #c9d0dc; }
tbody tr:nth-child(even) td { background: #fafbfd; }
table.recipe td { text-align: left; }
table.recipe td.num { text-align: right; }
h3 { font-size: 1.05em; margin: 22px 0 4px; }
table.claims td, table.runs td { text-align: left; white-space: normal; vertical-align: top; }
table.claims td.value { text-align: right; font-weight: 600; white-space: nowrap; }
table.claims td.verdict { font-weight: 600; white-space: nowrap; }
table.claims td.reproduced { color: #1a7f37; background: #eaf7ee; }
table.claims td.differs { color: #b42318; background: #fdecea; }
table.claims td.not_run { color: #6b7280; background: #f3f4f6; }
.src { color: #6a7385; font-size: 0.9em; margin-top: 2px; }
.warn { color: #a3440b; }
td.warn { font-weight: 600; }
.unit { font-size: 0.82em; color: #6a7385; margin: 0 0 8px; }
details summary { cursor: pointer; font-weight: 600; margin: 28px 0 6px; }
footer { margin-top: 36px; border-top: 1px solid #e3e7ee; font-size: 0.85em; color: #5a6375; }
"""


def _grid(lines: list[str]) -> list[tuple[int, int]] | None:
    """The column spans of a plain-text table (columns separated by at least two spaces on every line), or None
    when the lines do not make one with at least two columns."""
    width = max(len(x) for x in lines)
    padded = [x.ljust(width) for x in lines]
    blank = [all(p[i] == " " for p in padded) for i in range(width)]
    spans, start, i = [], None, 0
    while i < width:
        if not blank[i]:
            if start is None:
                start = i
            i += 1
            continue
        j = i
        while j < width and blank[j]:
            j += 1
        if start is not None and (j - i >= 2 or j == width):
            spans.append((start, i))
            start = None
        elif start is not None:
            pass  # a single space inside a column
        i = j
    if start is not None:
        spans.append((start, width))
    return spans if len(spans) >= 2 else None


def _header_cells(line: str) -> int:
    return len([c for c in re.split(r" {2,}", line.strip()) if c])


def text_table_html(text: str) -> str:
    """A recipe's plain-text table (columns padded and separated by two spaces or more, its first line the
    header, as :func:`fctlab.analyze.format_table` writes them) as an HTML table; up to two lines before the table
    and every line after it become notes. Text that holds no such table stays preformatted (in a box that
    scrolls sideways)."""
    e = html.escape
    lines = [x.rstrip() for x in text.splitlines()]
    while lines and not lines[-1]:
        lines.pop()
    found = None
    for start in range(min(3, max(len(lines) - 1, 0))):
        want = _header_cells(lines[start])
        for k in range(len(lines), start + 1, -1):  # the longest block of lines from ``start`` that is a table
            block = lines[start:k]
            if any(not x.strip() for x in block):
                continue
            spans = _grid(block)
            if spans is not None and len(spans) == want:
                found = (start, k, spans)
                break
        if found:
            break
    if found is None:
        return f'<div class="scroll"><pre class="table">{e(text)}</pre></div>'
    start, k, spans = found
    cells = [[x.ljust(spans[-1][1])[a:b].strip() for a, b in spans] for x in lines[start:k]]
    # a column is numeric (right-aligned) when its body cells look like numbers
    numeric = [all(re.fullmatch(r"[-+~<>]?[\d.,]+(e[-+]?\d+)?\s*(%|x|ms|us|s)?( \([^)]*\))?|-|n/a|", row[c])
                   for row in cells[1:]) for c in range(len(spans))]
    head = "".join(f"<th>{e(c)}</th>" for c in cells[0])
    body = "".join(
        "<tr>" + "".join(f'<td{" class=num" if numeric[c] else ""}>{e(v)}</td>' for c, v in enumerate(row)) + "</tr>"
        for row in cells[1:])
    before = "".join(f'<p class="unit">{e(x)}</p>' for x in lines[:start] if x.strip())
    after = "".join(f'<p class="unit">{e(x)}</p>' for x in lines[k:] if x.strip())
    return (f'{before}<div class="scroll"><table class="recipe"><thead><tr>{head}</tr></thead><tbody>{body}</tbody>'
            f"</table></div>{after}")


def _figure_html(caption: str, png: Path) -> str:
    """One figure: the PNG embedded as base64, its caption and the names of its files."""
    e = html.escape
    data = base64.b64encode(png.read_bytes()).decode("ascii")
    svg = png.with_suffix(".svg")
    files = f"figures/{e(png.name)}" + (f", figures/{e(svg.name)}" if svg.exists() else "")
    return (f'<figure><img src="data:image/png;base64,{data}" alt="{e(caption)}">'
            f'<figcaption>{e(caption)} <span class="file">(files: {files})</span></figcaption></figure>')


def _check_warnings_html(runs: Sequence[Any]) -> str:
    """The pre-run check's warnings (summary.json ``warnings``, :mod:`fctlab.check`), each once with the runs it
    concerns: so that a reader of the results sees that a comparison may not mean what it seems."""
    e = html.escape
    seen: dict[str, list[str]] = {}
    for r in runs:
        for w in r.summary.get("warnings") or ():
            seen.setdefault(str(w), []).append(r.run_id)
    if not seen:
        return ""
    items = "".join(
        f"<li>{e(w)} <small>({e(ids[0]) if len(ids) == 1 else f'{e(ids[0])} and {len(ids) - 1} more'})</small></li>"
        for w, ids in seen.items()
    )
    return (f'<div class="warn"><p>Pre-run warnings: settings that may make a comparison meaningless on its fabric '
            f"(fctlab check):</p><ul>{items}</ul></div>")


def _isnan(x: Any) -> bool:
    return x is None or (isinstance(x, float) and math.isnan(x))


def _num(value: Any, metric: str) -> str:
    if _isnan(value):
        return "-"
    return f"{value / 1000.0:,.1f}" if metric == "fct" else f"{value:,.2f}"


def _ratio(value: Any, reference: Any) -> float:
    if _isnan(value) or _isnan(reference) or not reference:
        return math.nan
    return float(value) / float(reference)


def _load_text(load: Any) -> str:
    return "-" if _isnan(load) else f"{load:g}"


def _int(value: Any) -> str:
    return "-" if value is None else f"{int(value):,}"


def _seed_text(seeds: list[int]) -> str:
    return f"{seeds[0]} seed(s)" if len(seeds) == 1 else f"{seeds[0]}-{seeds[-1]} seeds"


def _slug(text: str | None) -> str:
    return re.sub(r"[^A-Za-z0-9.]+", "-", str(text)).strip("-").lower() or "x"


def _bin_from_row(row: Any, b: str) -> dict[str, Any]:
    out: dict[str, Any] = {"count": int(row[f"{b}.count"])}
    for stat in _STATS:
        v = row[f"{b}.{stat}"]
        out[stat] = None if _isnan(v) else float(v)
    return out


#: How the claims table names each unit in its column headers (a unit not listed is shown as it is).
UNIT_NAMES = {
    "%": "%",
    "x": "x, times",
    "points": "percentage points",
    "ms": "ms",
    "us": "us",
}


def _claim_number(value: Any) -> str:
    """A claim's number without its unit (the unit is in the column's header); a list in brackets."""
    from fctlab.claims import value_text

    return value_text(value, "")


def _paper_number(value: Any) -> str:
    from fctlab.claims import value_text

    if isinstance(value, list) and len(value) == 2 and all(isinstance(v, (int, float)) for v in value):
        return f"{value_text(value[0], '')} to {value_text(value[1], '')}"
    return value if isinstance(value, str) else value_text(value, "")


def claims_html(claims: Sequence[Any]) -> str:
    """The "paper comparison" section for ``claims`` (Claim records or PaperClaim rows; "" when there are none).

    Claims are grouped by unit, one table per unit, so that each number column holds one unit, named in its header
    (the numbers themselves carry none); the groups follow the order of their first claim."""
    if not claims:
        return ""
    from fctlab.claims import Claim

    e = html.escape
    groups: dict[str, list[str]] = {}
    for c in claims:
        src = f'<div class=src>{e(c.source)}</div>' if c.source else ""
        if isinstance(c, Claim):
            d = c.to_dict()
            why = d["mechanism"]
            if d["cause"]:
                why = f"({d['cause'].replace('_', ' ')}) {why}".strip()
            note = f'<div class=src>{e(d["note"])}</div>' if d["note"] else ""
            groups.setdefault(c.unit, []).append(
                f'<tr id="claim-{e(c.id)}">'
                f"<td>{e(c.statement)}{src}</td>"
                f"<td>{e(c.how)}<div class=src>check: {e(d['check_text'])}</div></td>"
                f'<td class="value">{e(_paper_number(c.paper_value))}</td>'
                f'<td class="value">{e(_claim_number(c.value))}</td>'
                f'<td class="verdict {d["verdict"]}">{e(d["verdict"].replace("_", " "))}</td>'
                f"<td>{e(why)}{note}</td>"
                "</tr>"
            )
        else:
            number = c.value if isinstance(c.value, str) else _claim_number(c.value)
            groups.setdefault(c.unit, []).append(
                "<tr>"
                f"<td>{e(c.statement)}{src}</td>"
                f"<td>{e(c.recipe)}</td>"
                '<td class="value">-</td>'
                f'<td class="value">{e(number)}</td>'
                '<td class="verdict">-</td>'
                f"<td>{e(c.note)}</td>"
                "</tr>"
            )
    tables = []
    for unit, rows in groups.items():
        name = UNIT_NAMES.get(unit, unit)
        caption = f"Claims in {name}" if unit else "Claims without a unit (ratios, counts, orders)"
        in_unit = f" ({e(name)})" if unit else ""
        tables.append(
            f'<div class="scroll"><table class="claims" data-unit="{e(unit)}"><caption>{e(caption)}</caption>'
            "<thead><tr><th>the paper says</th><th>how fctlab's number is computed</th>"
            f"<th>paper{in_unit}</th><th>fctlab{in_unit}</th><th>verdict</th>"
            "<th>why it differs / note</th></tr></thead>"
            f"<tbody>{''.join(rows)}</tbody></table></div>"
        )
    return f'<section id="paper-comparison"><h2>Paper comparison</h2>{"".join(tables)}</section>'


def write_report(
    results_dir: str | Path,
    out: str | Path | None = None,
    *,
    metric: str = "fct",
    normalize_to: str | None = None,
    claims: Iterable[Any] = (),
    tables: Iterable[tuple[str, str]] = (),
    figures: Iterable[tuple[str, str | Path]] = (),
    generic_figures: bool = True,
) -> ReportFiles:
    """Find the runs under ``results_dir`` and write their report to ``out`` (default ``results_dir/report``),
    with the paper ``claims``, extra plain-text ``tables`` (title, text) and figures already drawn (caption, PNG
    path: a recipe's own figure types) if given; ``generic_figures=False`` leaves out the per-workload figures
    (the tables stay).

    Raises :class:`ReportError` (a ValueError naming the argument) when there are no runs or an option is bad.
    """
    exclude = [Path(out)] if out is not None else []
    report = Report.from_dir(results_dir, metric=metric, normalize_to=normalize_to, exclude=exclude)
    report.add_paper_claims(claims)
    report.add_tables(tables)
    report.add_figures(figures)
    report.generic_figures = generic_figures
    return report.write(out)
