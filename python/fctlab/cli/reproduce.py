"""The ``reproduce`` and ``demo`` commands: a paper's key comparison (the recipes of :mod:`fctlab.recipes`)
run as sweeps, then its tables, claims and HTML report."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from fctlab.cli._common import (
    EXIT_BAD_INPUT,
    EXIT_FAILED,
    ProgressView,
    console,
    fail,
    print_results,
    say,
    signals_interrupt,
)


def register(app: typer.Typer) -> None:
    """Add ``reproduce``, ``demo`` to a typer app (``fctlab.cli`` calls this)."""
    app.command("reproduce")(reproduce)
    app.command("demo")(demo)


def reproduce(
    recipe: Annotated[
        str,
        typer.Argument(help="Which paper's comparison: pias, qclimb-testbed, qclimb-sim, pdq, homa, rax, hyline "
                            "or information (or demo)."),
    ],
    scale: Annotated[
        str, typer.Option("--scale", help="small (minutes on 2 cores), paper (hours), or tiny (a smoke test).")
    ] = "small",
    out: Annotated[Optional[Path], typer.Option("--out", "-o", help="Results folder.")] = None,
    workers: Annotated[Optional[int], typer.Option("--workers", "-j", help="Runs at once (default: CPUs).")] = None,
    executor: Annotated[str, typer.Option("--executor", help="local or ray.")] = "local",
    address: Annotated[Optional[str], typer.Option("--address", help="Ray cluster address.")] = None,
    thresholds: Annotated[
        Optional[str],
        typer.Option("--thresholds", help="pias only: PIAS's thresholds from the paper's method at every queue "
                     "count (derived, the default), the ns-2 scripts' 8-queue sets (ns2), or both series."),
    ] = None,
) -> None:
    """Run a paper's key comparison and write a report that sets fctlab's numbers beside the paper's statements.
    Resumable: runs that already have results are kept."""
    _run_recipe(recipe, scale, out, workers, executor, address, thresholds)


def demo(
    out: Annotated[Path, typer.Option("--out", "-o", help="Results folder.")] = Path("results/demo"),
    workers: Annotated[Optional[int], typer.Option("--workers", "-j", help="Runs at once (default: CPUs).")] = None,
) -> None:
    """The main job: DCTCP, PIAS and pFabric on a 32-host leaf-spine with web-search traffic at load 0.6 (the PIAS
    paper's setup, scaled down). Prints FCT per flow-size bin and writes plots and an HTML report."""
    _run_recipe("demo", "small", out, workers, "local", None)


def _run_recipe(recipe: str, scale: str, out: Path | None, workers: int | None, executor: str,
                address: str | None, thresholds: str | None = None) -> None:
    from fctlab.config import ConfigError
    from fctlab import recipes
    from fctlab.recipes import runner
    from fctlab.recipes.common import SCALES
    from fctlab.recipes.pias import PIAS_THRESHOLDS
    from fctlab.sweep import check_executor, default_workers, run_sweep

    if recipe not in recipes.names():
        raise fail(f"recipe: unknown {recipe!r}; known: {', '.join(recipes.names())}", EXIT_BAD_INPUT)
    if scale not in SCALES:
        raise fail(f"--scale: must be one of {', '.join(SCALES)} (got {scale!r})", EXIT_BAD_INPUT)
    if thresholds is not None and recipe != "pias":
        raise fail(f"--thresholds: only recipe pias has a choice of thresholds (got recipe {recipe!r})",
                    EXIT_BAD_INPUT)
    if thresholds is not None and thresholds not in PIAS_THRESHOLDS:
        raise fail(f"--thresholds: must be one of {', '.join(PIAS_THRESHOLDS)} (got {thresholds!r})",
                    EXIT_BAD_INPUT)
    out_dir = out if out is not None else Path("results") / f"reproduce-{recipe}-{scale}"
    try:
        if workers is not None and workers < 1:
            raise ConfigError("--workers", f"must be >= 1 (got {workers})")
        check_executor(executor, address)
        spec = runner.build(recipe, scale, out_dir, thresholds)
    except (ConfigError, ValueError) as e:
        raise fail(str(e), EXIT_BAD_INPUT) from None
    n_workers = workers or default_workers()
    view = ProgressView(spec.name, executor, n_workers, address)
    try:
        def run_one(sweep: Any) -> Any:
            # the first sweep under the view made above, each later phase (binary searches) under its own
            sweep_view = view if sweep is spec else ProgressView(sweep.name, executor, n_workers, address)
            with sweep_view, signals_interrupt():
                return run_sweep(sweep, out_dir, workers=n_workers, executor=executor,  # type: ignore[arg-type]
                                 address=address, progress=sweep_view.update, on_plan=sweep_view.plan,
                                 on_note=sweep_view.note)

        report = runner.run_sweeps(recipe, scale, out_dir, spec, run_one)
    except ConfigError as e:
        raise fail(str(e), EXIT_BAD_INPUT) from None
    except KeyboardInterrupt as e:
        raise fail(f"interrupted: finished runs are kept in {out_dir}; run the same command again to resume",
                    getattr(e, "exit_code", 130)) from None
    print_results(report, [p.run_id for p in spec.points])
    tables = runner.tables(recipe, out_dir)
    own_tables = runner.has_own_tables(recipe)
    for title, table in tables:
        suffix = "" if own_tables else ": FCT by flow size (small <= 100 KB < medium <= 10 MB < large)"
        say(f"\n{title}{suffix}")
        say(table)
    files, claims, claims_path = runner.write_outputs(recipe, scale, out_dir, tables if own_tables else ())
    for claim in claims:
        say(f"{claim.statement}\n    paper: {claim.paper_text()}  fctlab: {claim.value_text()}  -> {claim.verdict}"
            + (f"  ({claim.note})" if claim.note else ""))
    console(stderr=True).print(f"report: {files.html}; claims: {claims_path}; figures: "
                                f"{', '.join(str(f) for f in files.figures)}", markup=False)
    if report.failed:
        for run_id, message in report.failed.items():
            sys.stderr.write(f"failed: {run_id}: {message}\n")
        raise fail(f"{len(report.failed)} of {report.total} runs failed; rerun to retry them", EXIT_FAILED)
