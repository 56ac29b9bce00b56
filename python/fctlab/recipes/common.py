"""What every recipe shares: the :class:`Recipe` value a recipe module exports, the scales, the check of a scale
name, the choice of the series this engine has, the collection of validated sweep points, reading a recipe's runs
back, the default comparison tables, and the small helpers of the tables, figures and paper statements.

Only the standard library is imported here at module level: a recipe module stays cheap to import, and the heavy
libraries (pandas, matplotlib) are imported by the functions that need them.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fctlab.sweep import RecipeRun, available_series, recipe_runs

#: Every recipe's scales: a smoke test, minutes on 2 cores, and the paper's sizes (hours).
SCALES = ("tiny", "small", "paper")

#: One finished run of a recipe's sweep (its values, summary and folder).
RunRow = RecipeRun


@dataclass(frozen=True)
class Recipe:
    """One paper's comparison: how to build its sweeps, and how to read its results back.

    ``sweep(scale, ...)`` builds the first sweep (with ``out_dir=`` when ``needs_out_dir``: the recipe prepares
    trace files there, or records its scale); ``phases(scale, out_dir)`` yields the sweeps to run after it, one
    at a time, each made from what the previous ones wrote (binary searches); ``tables(results_dir)`` gives the
    recipe's own (title, plain-text table) pairs (None: the generic :func:`comparison_tables`, which the report
    leaves out); ``claims(results_dir)`` gives the paper's claims as :class:`fctlab.claims.Claim` records (each
    with the paper's value, fctlab's and a check; the runner writes them to ``report/claims.json``);
    ``figures(results_dir)`` draws the paper's own figure types into ``report/figures`` and returns (caption, PNG
    path) pairs, which the report shows above its generic per-workload figures; ``metric`` is what those generic
    figures plot ("fct", or "slowdown": FCT over ideal FCT, the papers' "normalised FCT"). ``options`` names
    the keyword options ``sweep`` takes beyond the scale (recipe pias: ``thresholds``); ``paper`` cites the paper."""

    name: str
    summary: str
    sweep: Callable[..., Any]
    claims: Callable[[str | Path], list[Any]]  # list[fctlab.claims.Claim]
    tables: Callable[[str | Path], list[tuple[str, str]]] | None = None
    figures: Callable[[str | Path], list[tuple[str, Path]]] | None = None
    metric: str = "fct"
    #: Whether the report draws its generic per-workload figures (FCT per fixed size bin) besides the recipe's
    #: own: off where they would mislead (Homa's W1-W3 lie wholly in the first bin; PDQ's workloads are its
    #: figures' scenarios, drawn by the recipe).
    generic_figures: bool = True
    phases: Callable[[str, str | Path], Iterable[Any]] | None = None
    needs_out_dir: bool = False
    scales: tuple[str, ...] = SCALES
    options: tuple[str, ...] = ()
    #: The paper the recipe reproduces (cited in its claims.json).
    paper: str = ""

    def build(self, scale: str, out_dir: str | Path, **options: Any) -> Any:
        """The first sweep at ``scale``, writing into ``out_dir``; ``options``: see :attr:`options`."""
        if self.needs_out_dir:
            return self.sweep(scale, out_dir=out_dir, **options)
        return self.sweep(scale, **options)

    def later(self, scale: str, out_dir: str | Path) -> Iterable[Any]:
        """The sweeps that follow the first (none for most recipes)."""
        return () if self.phases is None else self.phases(scale, out_dir)

    def result_figures(self, results_dir: str | Path) -> list[tuple[str, Path]]:
        """The recipe's own figures, drawn now (none when it has no figures of its own)."""
        return [] if self.figures is None else self.figures(results_dir)

    def result_tables(self, results_dir: str | Path) -> list[tuple[str, str]]:
        """The recipe's tables, or the generic comparison when it has none of its own."""
        return (comparison_tables if self.tables is None else self.tables)(results_dir)


def check_scale(scale: str, table: dict[str, Any]) -> Any:
    """``table[scale]``, or ValueError naming the scales."""
    if scale not in table:
        raise ValueError(f"scale: must be one of {', '.join(SCALES)} (got {scale!r})")
    return table[scale]


def available(schemes: Sequence[Any]) -> tuple[list[Any], list[str]]:
    """The series whose scheme this engine has, and a note for each one it has not (`sweep.available_series`)."""
    return available_series(schemes)


def load_runs(results_dir: str | Path, axes: Sequence[str]) -> list[RunRow]:
    """Every finished run in ``results_dir`` whose sweep point has all of ``axes``."""
    return recipe_runs(results_dir, axes)


class Points:
    """Collects a recipe's sweep points, each validated as it is added."""

    def __init__(self) -> None:
        self.points: list[Any] = []

    def add(self, values: dict[str, Any], raw: dict[str, Any]) -> None:
        from fctlab.config import experiment_from_dict
        from fctlab.sweep import Point, run_id_for

        exp = experiment_from_dict(raw)
        self.points.append(Point(index=len(self.points), run_id=run_id_for(values), values=values, experiment=exp,
                                 raw=raw))

    def try_add(self, items: list[tuple[dict[str, Any], dict[str, Any]]]) -> str | None:
        """Add every point of ``items``, or none when the engine refuses one: then the refusal, one line."""
        from fctlab.config import ConfigError, experiment_from_dict

        try:
            for _, raw in items:
                experiment_from_dict(raw)
        except ConfigError as e:
            return str(e)
        for values, raw in items:
            self.add(values, raw)
        return None

    def sweep(self, name: str, notes: Sequence[str] = ()) -> Any:
        """The points as a sweep whose axes are the values the points take (`sweep.sweep_of_points`)."""
        from fctlab.sweep import sweep_of_points

        return sweep_of_points(name, self.points, notes)


def record(out_dir: str | Path | None, file_name: str, scale: str, series: Sequence[Any]) -> None:
    """Write which scale and series made a results folder (read back by the recipe's tables); nothing without a
    folder."""
    if out_dir is None:
        return
    from fctlab.results import write_json

    Path(out_dir).mkdir(parents=True, exist_ok=True)
    write_json(Path(out_dir) / file_name, {"scale": scale, "series": [s.label for s in series]})


def comparison_tables(results_dir: str | Path) -> list[tuple[str, str]]:
    """Per (workload, load): a plain-text table comparing the runs' labels bin by bin."""
    from fctlab.analyze import compare_table

    groups: dict[tuple[str, float], dict[str, Any]] = {}
    for path in sorted(Path(results_dir).glob("runs/*/summary.json")):
        s = json.loads(path.read_text())
        cfg = s.get("config") or {}
        w = cfg.get("workload") or {}
        label = cfg.get("label") or s.get("scheme") or path.parent.name
        groups.setdefault((w.get("cdf"), w.get("load")), {})[label] = s
    return [(f"{w} at load {load}", compare_table(runs)) for (w, load), runs in sorted(groups.items(), key=str)]


# --------------------------------------------------------------------------------------------------------------
# Tables, figures and statements


def fmt(v: float | None, spec: str = ".2f") -> str:
    """``v`` formatted, or "-" when there is none."""
    return "-" if v is None else format(v, spec)


def order(labels: Iterable[str], known: Sequence[str]) -> list[str]:
    """``labels`` once each: those in ``known`` in its order, then the others as first seen."""
    seen = list(dict.fromkeys(labels))
    return [x for x in known if x in seen] + [x for x in seen if x not in known]


def median(xs: Sequence[float]) -> float | None:
    """The median, or None of nothing."""
    s = sorted(xs)
    if not s:
        return None
    m = len(s) // 2
    return s[m] if len(s) % 2 else (s[m - 1] + s[m]) / 2


def figure(figsize: tuple[float, float] = (6.4, 4.0)) -> Any:
    """A matplotlib figure drawn without a display (constrained layout)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=figsize, layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def save_figure(fig: Any, root: Path, name: str) -> Path:
    """Write ``fig`` as ``root/report/figures/<name>.png`` and ``.svg``, each file replaced whole; returns the
    PNG's path."""
    from fctlab.plot import save_atomic

    for suffix in ("png", "svg"):
        save_atomic(fig, Path(root) / "report" / "figures" / f"{name}.{suffix}", suffix)
    return Path(root) / "report" / "figures" / f"{name}.png"
