"""The ``fctlab sweep`` command (wired into the ``fctlab`` app by :func:`register`): run every point of an
experiment's ``[sweep]`` axes, in parallel, resumably, and record them in ``DIR/catalog.duckdb``.

Exit codes as for ``fctlab run``: 2 for bad input (nothing written), 1 when a run failed (the others still
ran and are kept), 130 when interrupted by Ctrl-C, 128 + the signal's number for SIGTERM and SIGHUP (finished
runs are kept; the same command resumes).
"""

from __future__ import annotations

import contextlib
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Optional

import typer

if TYPE_CHECKING:
    from fctlab.sweep import Point, RunEvent, SweepReport


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
) -> None:
    """Run every point of the experiment's [sweep] axes; write DIR/runs/<run_id>/ for each and the catalog
    DIR/catalog.duckdb. Runs that already have results are skipped, so the same command resumes a killed sweep."""
    from fctlab.cli import EXIT_BAD_INPUT, EXIT_FAILED, _fail, _out_dir
    from fctlab.config import ConfigError
    from fctlab.sweep import check_executor, default_workers, load_sweep, run_sweep

    try:
        spec = load_sweep(experiment, overrides=sets or ())
        out_dir = _out_dir(out, spec.base, single_runs=False)
        if workers is not None and workers < 1:
            raise ConfigError("--workers", f"must be >= 1 (got {workers})")
        check_executor(executor, address)
    except ConfigError as e:
        raise _fail(str(e), EXIT_BAD_INPUT) from None
    n_workers = workers or default_workers()
    view = _ProgressView(spec.name, executor, n_workers, address)
    try:
        with view, signals_interrupt():
            report = run_sweep(
                spec, out_dir, workers=n_workers, executor=executor, address=address,  # type: ignore[arg-type]
                progress=view.update, on_plan=view.plan, on_note=view.note,
            )
    except ConfigError as e:
        raise _fail(str(e), EXIT_BAD_INPUT) from None
    except KeyboardInterrupt as e:
        raise _fail(
            f"interrupted: finished runs are kept in {out_dir}; run the same command again to resume",
            getattr(e, "exit_code", 130),
        ) from None
    _print_results(report, [p.run_id for p in spec.points])
    if report.failed:
        for run_id, message in report.failed.items():
            sys.stderr.write(f"failed: {run_id}: {message}\n")
        raise _fail(f"{len(report.failed)} of {report.total} runs failed (listed above); rerun to retry them",
                    EXIT_FAILED)


class Terminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP, raised in the main thread so that it ends a sweep as Ctrl-C does."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.exit_code = 128 + signum


@contextlib.contextmanager
def signals_interrupt() -> Iterator[None]:
    """While a sweep runs, SIGTERM and SIGHUP (a closed terminal) stop it as Ctrl-C does: its workers are
    stopped, its lock released, finished runs kept; the exit code is 128 + the signal's number."""
    import signal

    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: Any) -> None:
        raise Terminated(signum)

    sigs = [getattr(signal, name) for name in ("SIGTERM", "SIGHUP") if hasattr(signal, name)]
    old = {sig: signal.signal(sig, handler) for sig in sigs}
    try:
        yield
    finally:
        for sig, previous in old.items():
            signal.signal(sig, previous)


class _ProgressView:
    """Runs done / total: a rich progress bar when stderr is a terminal, otherwise one line per finished run."""

    def __init__(self, name: str, executor: str, workers: int, address: str | None):
        self.name = name
        self.where = f"ray at {address}" if address else f"{workers} {'Ray CPUs' if executor == 'ray' else 'local workers'}"
        self.tty = sys.stderr.isatty()
        self.bar: Any = None
        self.task: Any = None

    def __enter__(self) -> _ProgressView:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.bar is not None:
            self.bar.stop()

    def _line(self, text: str) -> None:
        if self.bar is not None:
            self.bar.console.print(text, markup=False, highlight=False)
        else:
            sys.stderr.write(text + "\n")
            sys.stderr.flush()

    def note(self, text: str) -> None:
        self._line(f"note: {' '.join(text.split())}")

    def plan(self, todo: list[Point], skipped: list[Point]) -> None:
        total = len(todo) + len(skipped)
        done = f" ({len(skipped)} already done, skipped)" if skipped else ""
        self._line(f"sweep {self.name}: {total} runs{done}; {len(todo)} to run on {self.where}")
        if self.tty and todo:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            self.bar = Progress(
                TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TextColumn("runs"),
                TimeElapsedColumn(), console=Console(stderr=True, highlight=False), transient=False,
            )
            self.bar.start()
            self.task = self.bar.add_task(self.name, total=len(todo))

    def update(self, event: RunEvent) -> None:
        if event.ok:
            info = event.info
            text = (f"[{event.done}/{event.total}] done {event.run_id} in {event.wall_seconds:.1f} s "
                    f"({info.get('flows', 0):,} flows, {info.get('unfinished', 0):,} unfinished)")
        else:
            text = f"[{event.done}/{event.total}] FAILED {event.run_id}: {event.error}"
        if self.bar is not None:
            self.bar.update(self.task, completed=event.done)
            if not event.ok:
                self._line(text)
        else:
            self._line(text)


def _print_results(report: SweepReport, order: list[str]) -> None:
    """A table of this sweep's runs from the catalog, then where everything is."""
    from rich.console import Console

    from fctlab import catalog
    from fctlab.analyze import format_table

    console = Console(highlight=False, soft_wrap=True)
    err = Console(stderr=True, highlight=False, soft_wrap=True)
    try:
        runs, _ = catalog.load(report.out_dir, flows=False)
    except Exception as e:  # the runs are written; only the table is missing
        err.print(f"warning: cannot read the catalog ({' '.join(str(e).split())})", markup=False)
        runs = None
    if runs is not None:
        by_id = {r["run_id"]: r for r in runs.to_dict("records")}

        def us(v: Any) -> str:
            return "-" if v is None or v != v else f"{v / 1000:,.1f}"

        rows = []
        for run_id in order:
            r = by_id.get(run_id)
            if r is None:
                continue
            rows.append([run_id, f"{r['flows']:,}", f"{r['unfinished']:,}", us(r["all_mean_fct_ns"]),
                         us(r["small_mean_fct_ns"]), us(r["small_p99_fct_ns"])])
        if rows:
            header = ["run", "flows", "unfinished", "mean FCT (us)", "small mean (us)", "small p99 (us)"]
            console.print(format_table(header, rows, "lrrrrr"), markup=False)
    if report.catalog_error:
        err.print(f"warning: the catalog could not be updated ({report.catalog_error}); "
                  f"fctlab.catalog.rebuild({str(report.out_dir)!r}) recreates it", markup=False)
    err.print(
        f"{report.total} runs: {len(report.ran)} ran, {len(report.skipped)} skipped (already done), "
        f"{len(report.failed)} failed, in {report.wall_seconds:.1f} s; results in {report.out_dir / 'runs'}, "
        f"catalog {report.out_dir / 'catalog.duckdb'}",
        markup=False,
    )
