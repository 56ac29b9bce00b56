"""Running a recipe: build its first sweep, run it and the sweeps that follow it (one loop for the CLI and the
API), then read its tables and claims and write ``report/claims.json`` and the report (:func:`write_outputs`).

The CLI runs each sweep under its own progress view: it passes :func:`run_sweeps` a function that runs one sweep;
:func:`reproduce` is the same with :func:`fctlab.sweep.run_sweep` plainly.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from fctlab import recipes


def build(name: str, scale: str, out_dir: str | Path, thresholds: str | None = None) -> Any:
    """The first sweep of recipe ``name`` at ``scale``, writing into ``out_dir`` (recipes that replay traces
    prepare them under ``out_dir/traces`` here). ``thresholds`` (recipe pias only): its PIAS series
    (:func:`fctlab.recipes.pias.pias_variants`)."""
    recipe = recipes.get(name)
    if thresholds is not None and "thresholds" not in recipe.options:
        # (pias is the only recipe with the option: the message names it)
        raise ValueError(f"thresholds: only recipe pias has a choice of thresholds (got recipe {name!r})")
    options = {} if thresholds is None else {"thresholds": thresholds}
    return recipe.build(scale, out_dir, **options)


def run_sweeps(name: str, scale: str, out_dir: str | Path, first: Any, run_one: Callable[[Any], Any]) -> Any:
    """Run ``first`` (the recipe's sweep from :func:`build`) with ``run_one`` (a sweep -> its report), then each
    sweep of the recipe's later phases in turn, each made from what the previous ones wrote. Returns the first
    report with every later one's failed, total, ran and skipped added."""
    outcome = run_one(first)
    for phase in recipes.get(name).later(scale, out_dir):
        later = run_one(phase)
        outcome.failed.update(later.failed)
        outcome.total += later.total
        outcome.ran += later.ran
        outcome.skipped += later.skipped
    return outcome


def tables(name: str, results_dir: str | Path) -> list[tuple[str, str]]:
    """(title, plain-text table) pairs for recipe ``name``'s results (the generic comparison when it has no
    tables of its own)."""
    return recipes.get(name).result_tables(results_dir)


def has_own_tables(name: str) -> bool:
    """Does recipe ``name`` have its own tables (which then go into its report)?"""
    return recipes.get(name).tables is not None


def write_outputs(name: str, scale: str, out_dir: str | Path, tables: Any = ()) -> tuple[Any, list[Any], Path]:
    """Compute recipe ``name``'s claims from the runs in ``out_dir``, write them as ``out_dir/report/claims.json``
    (:func:`fctlab.claims.write_claims`), then the HTML report, whose paper comparison is read back from that
    file, with the recipe's own figures (drawn now) above the generic ones. Returns (report files, the claims as
    read back, the claims file)."""
    from fctlab.claims import Claim, read_claims, write_claims
    from fctlab.report import write_report

    recipe = recipes.get(name)
    path = write_claims(out_dir, name, scale, recipe.claims(out_dir), recipe.paper)
    claims = [Claim.from_dict(r) for r in read_claims(path)["claims"]]
    figures = recipe.result_figures(out_dir)
    files = write_report(out_dir, claims=claims, normalize_to=None, tables=tables, figures=figures,
                         metric=recipe.metric, generic_figures=recipe.generic_figures)
    return files, claims, path


def reproduce(name: str, out_dir: str | Path, *, scale: str = "small", workers: int | None = None,
              executor: str = "local", address: str | None = None, progress: Any = None, on_plan: Any = None,
              thresholds: str | None = None) -> tuple[Any, Any]:
    """Run recipe ``name`` at ``scale`` into ``out_dir`` (resumable: finished runs are kept) and write its
    report with the paper's claims beside fctlab's numbers (``report/claims.json`` and ``report/index.html``).
    ``thresholds``: recipe pias's threshold source. Returns (sweep report, report files)."""
    from fctlab.sweep import run_sweep

    recipe = recipes.get(name)
    first = build(name, scale, out_dir, thresholds)

    def run_one(sweep: Any) -> Any:
        return run_sweep(sweep, out_dir, workers=workers, executor=executor, address=address,
                         progress=progress, on_plan=on_plan)

    outcome = run_sweeps(name, scale, out_dir, first, run_one)
    own = recipe.tables(out_dir) if recipe.tables is not None else ()
    files, _, _ = write_outputs(name, scale, out_dir, own)
    return outcome, files
