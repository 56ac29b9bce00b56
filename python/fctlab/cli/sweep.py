"""The ``fctlab sweep`` command : run every point of an
experiment's ``[sweep]`` axes, in parallel, resumably, and record them in ``DIR/catalog.duckdb``.

Exit codes as for ``fctlab run``: 2 for bad input (nothing written), 1 when a run failed (the others still
ran and are kept), 130 when interrupted by Ctrl-C, 128 + the signal's number for SIGTERM and SIGHUP (finished
runs are kept; the same command resumes).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Optional

import typer

from fctlab.cli._common import (
    EXIT_BAD_INPUT,
    EXIT_FAILED,
    STRICT_HELP,
    ProgressView,
    Terminated,
    fail,
    output_dir,
    print_results,
    signals_interrupt,
    warn_sweep_points,
)

__all__ = ["register", "sweep", "signals_interrupt", "Terminated"]


def register(app: typer.Typer) -> None:
    """Add the ``sweep`` command to a typer app (the ``fctlab`` CLI calls this)."""
    app.command("sweep")(sweep)


def sweep(
    experiment: Annotated[Path, typer.Argument(help="Experiment TOML file with a [sweep] table of axes.")],
    out: Annotated[
        Optional[Path], typer.Option("--out", "-o", help="Results folder (default: output.dir of the experiment).")
    ] = None,
    sets: Annotated[
        Optional[list[str]],
        typer.Option(
            "--set",
            help="Override a key (--set switch.queues=4) or an axis (--set 'sweep.workload.load=[0.5,0.7]'); repeatable.",
        ),
    ] = None,
    workers: Annotated[
        Optional[int], typer.Option("--workers", "-j", help="Runs at once (default: the CPUs available).")
    ] = None,
    executor: Annotated[str, typer.Option("--executor", help="local (worker processes) or ray.")] = "local",
    address: Annotated[
        Optional[str], typer.Option("--address", help="Ray cluster address (default: start a local Ray).")
    ] = None,
    strict: Annotated[bool, typer.Option("--strict", help=STRICT_HELP)] = False,
) -> None:
    """Run every point of the experiment's [sweep] axes; write DIR/runs/<run_id>/ for each and the catalog
    DIR/catalog.duckdb. Runs that already have results are skipped, so the same command resumes a killed sweep."""
    from fctlab.config import ConfigError
    from fctlab.sweep import check_executor, default_workers, load_sweep, run_sweep

    try:
        spec = load_sweep(experiment, overrides=sets or ())
        out_dir = output_dir(out, spec.base, single_runs=False)
        if workers is not None and workers < 1:
            raise ConfigError("--workers", f"must be >= 1 (got {workers})")
        check_executor(executor, address)
    except ConfigError as e:
        raise fail(str(e), EXIT_BAD_INPUT) from None
    warn_sweep_points(spec.points, strict)
    n_workers = workers or default_workers()
    view = ProgressView(spec.name, executor, n_workers, address)
    try:
        with view, signals_interrupt():
            report = run_sweep(
                spec, out_dir, workers=n_workers, executor=executor, address=address,  # type: ignore[arg-type]
                progress=view.update, on_plan=view.plan, on_note=view.note,
            )
    except ConfigError as e:
        raise fail(str(e), EXIT_BAD_INPUT) from None
    except KeyboardInterrupt as e:
        raise fail(
            f"interrupted: finished runs are kept in {out_dir}; run the same command again to resume",
            getattr(e, "exit_code", 130),
        ) from None
    print_results(report, [p.run_id for p in spec.points])
    if report.failed:
        for run_id, message in report.failed.items():
            sys.stderr.write(f"failed: {run_id}: {message}\n")
        raise fail(f"{len(report.failed)} of {report.total} runs failed (listed above); rerun to retry them",
                    EXIT_FAILED)

