"""What the ``fctlab`` commands share: exit codes, the one-line error, printing, the results directory check,
the engine run with its progress bar, the sweep progress view, signal handling and the table of a sweep's
results. Command modules import from here and never from each other.

Bad input never reaches the engine: a command validates everything first; on a problem it prints one line,
``error: ...``, naming the key or argument, to stderr and exits with code 2 having written nothing. Exit code 1
means the engine or the file system failed after validation; 130 an interrupt (Ctrl-C), 128 + the signal's
number for SIGTERM and SIGHUP.
"""

from __future__ import annotations

import contextlib
import sys
import threading
from collections.abc import Iterator
from importlib import import_module
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fctlab.config import Experiment
    from fctlab.simulation import Result
    from fctlab.sweep import Point, RunEvent, SweepReport

__all__ = [
    "EXIT_FAILED", "EXIT_BAD_INPUT", "CommandExit", "fail", "is_exit", "echo", "console", "say", "note", "output_dir", "check_rerun", "run_with_progress",
    "eta_text", "Terminated", "signals_interrupt", "ProgressView", "print_results", "warn_before_run", "warn_sweep_points",
    "STRICT_HELP",
]

STRICT_HELP = "Refuse to run (exit 2) when the pre-run check warns (fctlab check lists its rules)."

EXIT_FAILED = 1
EXIT_BAD_INPUT = 2


class CommandExit(Exception):
    """What ends a command with an exit code when it runs without typer (``fctlab run`` from the command line,
    :mod:`fctlab.cli._run`); under typer the same is ``typer.Exit``. Not a RuntimeError (click's Exit is one), so
    a command's ``except RuntimeError`` around the engine never takes it for the engine's error."""

    def __init__(self, code: int = 0):
        super().__init__(code)
        self.exit_code = code


#: True while a command runs without typer (set by :func:`fctlab.cli._run.main_without_typer`): :func:`fail`
#: then returns a :class:`CommandExit`, and this module never imports typer.
WITHOUT_TYPER = False


def exit_with(code: int) -> Exception:
    """The exception that ends the running command with ``code``: ``typer.Exit`` under typer, else
    :class:`CommandExit`."""
    if WITHOUT_TYPER:
        return CommandExit(code)
    import typer

    return typer.Exit(code)


def is_exit(e: BaseException) -> bool:
    """Whether ``e`` is a command's exit (:func:`exit_with`), to be raised on rather than reported."""
    if isinstance(e, CommandExit):
        return True
    typer = sys.modules.get("typer")
    return typer is not None and isinstance(e, typer.Exit)


def fail(message: str, code: int = EXIT_BAD_INPUT) -> Exception:
    """Print ``error: MESSAGE`` (on one line) to stderr; the exit (:func:`exit_with`) to raise with ``code``."""
    sys.stderr.write(f"error: {' '.join(message.split())}\n")
    sys.stderr.flush()
    return exit_with(code)


def echo(text: str) -> None:
    """One line on stdout, as is."""
    sys.stdout.write(text + "\n")


def console(stderr: bool = False) -> Any:
    from rich.console import Console

    return Console(stderr=stderr, highlight=False, soft_wrap=True)


def say(text: str) -> None:
    """Text on stdout as is (plain: no rich console, whose import costs a flow-level run a tenth of a second)."""
    sys.stdout.write(text + "\n")


def note(text: str) -> None:
    """A line on stderr as is (e.g. where the results were written)."""
    sys.stderr.write(text + "\n")
    sys.stderr.flush()


def output_dir(out: Path | None, exp: Experiment, *, single_runs: bool = True) -> Path:
    """The results directory, checked before anything runs (it is only created when results are written): it
    must be a directory that can be created and written. ``single_runs`` (run, compare): it must not be a
    folder another fctlab process is writing, nor a sweep's results folder."""
    from fctlab import catalog
    from fctlab.config import ConfigError
    from fctlab.results import check_output_dir

    if out is None:
        if exp.output.dir is None:
            raise ConfigError("--out", "missing: give --out DIR or output.dir in the experiment")
        out = Path(exp.output.dir)
    check_output_dir(out)
    if single_runs:
        catalog.check_not_being_written(out)
        if (out / "runs").is_dir() and any((out / "runs").glob("*/config.json")):
            raise ConfigError("--out", f"{out} holds a sweep's results (runs/); write this run to another folder")
    return out


def warn_before_run(exp: Experiment, flows: Any, strict: bool = False, label: str = "") -> None:
    """The pre-run check (:mod:`fctlab.check`): print each warning to stderr, ``warning: KEY: ...``, and the
    cost estimate of a packet-level run expected to take more than ~30 s; with ``strict``, any warning refuses
    the run (exit 2, nothing written)."""
    from fctlab.check import SHOW_ABOVE_SECONDS, check

    c = check(exp, flows)
    prefix = f"{label}: " if label else ""
    for w in c.warnings:
        sys.stderr.write(f"warning: {prefix}{' '.join(w.split())}\n")
    if c.cost is not None and c.cost.seconds > SHOW_ABOVE_SECONDS:
        sys.stderr.write(f"estimate: {prefix}{c.cost.text()}\n")
    sys.stderr.flush()
    if strict and c.warnings:
        raise fail(f"{prefix}{len(c.warnings)} warning(s) from the pre-run check and --strict: not run", EXIT_BAD_INPUT)


def warn_sweep_points(points: list[Point], strict: bool = False) -> int:
    """The pre-run check's rules that need no flows (:func:`fctlab.check.check_config`), for every point of a sweep (each warning once, with the runs it concerns;
    the rules on flows are recorded in each run's summary.json); with ``strict``, any warning refuses the sweep."""
    from fctlab.check import check_config

    import json

    seen: dict[str, list[str]] = {}
    by_config: dict[str, list[str]] = {}  # points that differ only in the workload or the seed share their check
    for p in points:
        key = json.dumps([p.experiment.engine, p.experiment.raw.get("scheme", {})], sort_keys=True, default=str)
        if key not in by_config:
            by_config[key] = check_config(p.experiment).warnings
        for w in by_config[key]:
            seen.setdefault(w, []).append(p.run_id)
    for w, runs in seen.items():
        where = runs[0] if len(runs) == 1 else f"{runs[0]} and {len(runs) - 1} more"
        sys.stderr.write(f"warning: {' '.join(w.split())} ({where})\n")
    sys.stderr.flush()
    if strict and seen:
        raise fail(f"{len(seen)} warning(s) from the pre-run check and --strict: nothing run", EXIT_BAD_INPUT)
    return len(seen)


def check_rerun(out: Path, exp: Experiment, overwrite: bool) -> None:
    """Before a single run writes to ``out``: remove the temporary files a killed write left there, and refuse
    (ConfigError on ``--out``) a folder holding the finished results of another configuration unless
    ``overwrite``; results of the same configuration are simply written again (the rule sweeps follow)."""
    from fctlab.config import ConfigError
    from fctlab.rundir import clean_temporaries, run_state

    clean_temporaries(out)
    state, why = run_state(out, exp.to_dict())
    if state == "conflict" and not overwrite:
        raise ConfigError("--out", f"{out}: {why}; give --overwrite to replace it, or write to another folder")


def run_with_progress(exp: Experiment, flows: Any, label: str, threads: int = 1,
                      write_to: Path | None = None) -> Result:
    """Run the engine in a worker thread; show flows finished / total polled from the engine (a bar with the
    time left on a terminal, a line every ~10 s otherwise). ``write_to``: the results folder, which a flow-level
    run writes its flows.parquet to while it runs (:func:`fctlab.simulation.simulate`)."""
    from fctlab import _core
    from fctlab.simulation import simulate

    progress = _core.Progress()
    box: dict[str, Any] = {}

    def work() -> None:
        try:
            # numpy columns, not a DataFrame: the commands only summarise and write the table (no pandas)
            box["result"] = simulate(exp, progress=progress, flows=flows, threads=threads, frame=False,
                                     write_to=write_to)
        except BaseException as e:  # handed to the main thread
            box["error"] = e

    # A daemon thread: Ctrl-C ends the process without waiting for the engine to finish.
    worker = threading.Thread(target=work, name="fctlab-engine", daemon=True)
    worker.start()
    try:
        _wait(worker, progress, len(flows), label)
    except KeyboardInterrupt as e:  # Ctrl-C, or SIGTERM / SIGHUP under signals_interrupt (Terminated)
        raise fail("interrupted; nothing was written for this run", getattr(e, "exit_code", 130)) from None
    if "error" in box:
        raise box["error"]
    return box["result"]


#: Seconds between the plain progress lines written when stderr is not a terminal (CI, notebooks, logs).
PLAIN_PROGRESS_SECONDS = 10.0


def eta_text(done: float, total: float, elapsed: float) -> str:
    """``12,345 of 20,000 (62%), 41 s elapsed, about 25 s left`` (the time left extrapolated from the rate so
    far; unknown until something is done)."""
    share = f" ({100 * done / total:.0f}%)" if total else ""
    left = "time left unknown yet" if done <= 0 or done >= total else f"about {_duration(elapsed * (total - done) / done)} left"
    return f"{done:,.0f} of {total:,.0f}{share}, {_duration(elapsed)} elapsed, {left}"


def _duration(seconds: float) -> str:
    seconds = max(0.0, seconds)
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def _wait(worker: threading.Thread, progress: Any, total: int, label: str) -> None:
    """Wait for the engine thread: a progress bar with the time left on stderr when it is a terminal, else a
    plain line every PLAIN_PROGRESS_SECONDS; both with the simulated time reached when the counter has it."""
    import time

    _import_while_running()
    if sys.stderr.isatty():
        from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn,
                                   TimeRemainingColumn)

        columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TextColumn("flows"),
                   TextColumn("{task.fields[simulated]}"), TimeElapsedColumn(), TextColumn("left"),
                   TimeRemainingColumn())
        with Progress(*columns, console=console(stderr=True), transient=True) as bar:
            task = bar.add_task(label, total=total, simulated="")
            while worker.is_alive():
                worker.join(0.1)
                bar.update(task, completed=progress.flows_done, simulated=_simulated(progress))
    else:
        sys.stderr.write(f"running {label}: {total:,} flows\n")
        sys.stderr.flush()
        start = time.monotonic()
        next_line = start + PLAIN_PROGRESS_SECONDS
        while worker.is_alive():
            worker.join(0.5)
            now = time.monotonic()
            if worker.is_alive() and now >= next_line:
                sim = _simulated(progress)
                sys.stderr.write(f"  {label}: {eta_text(progress.flows_done, total, now - start)} (flows finished"
                                 f"{'; ' + sim if sim else ''})\n")
                sys.stderr.flush()
                next_line = now + PLAIN_PROGRESS_SECONDS


def _simulated(progress: Any) -> str:
    """``4.21 ms simulated``: the simulated time the engine's counter has reached ("" for a counter without one,
    or before the first event)."""
    ps = getattr(progress, "sim_time_ps", 0) or 0
    if ps <= 0:
        return ""
    if ps >= 10**12:
        return f"{ps / 1e12:.3f} s simulated"
    return f"{ps / 1e9:.2f} ms simulated"


def _import_while_running() -> None:
    """Import what comes after the engine (pyarrow to write the result table) while it runs: it
    releases the GIL, so on a second core this costs no wall time. Not pandas: the result table is numpy
    columns written by pyarrow (:class:`fctlab.simulation.FlowTable`). Not DuckDB: its ~13 MiB would add to the
    peak memory of writing the table (the catalog is recorded after the table is freed). A module that fails to
    import is left to fail where it is used."""
    for name in ("pyarrow.parquet", "fctlab.results"):
        try:
            import_module(name)
        except Exception:  # noqa: BLE001
            pass


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


class ProgressView:
    """Runs done / total: a rich progress bar when stderr is a terminal, otherwise one line per finished run."""

    def __init__(self, name: str, executor: str, workers: int, address: str | None):
        self.name = name
        self.where = f"ray at {address}" if address else f"{workers} {'Ray CPUs' if executor == 'ray' else 'local workers'}"
        self.tty = sys.stderr.isatty()
        self.bar: Any = None
        self.task: Any = None
        self.started: float | None = None

    def __enter__(self) -> ProgressView:
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
        import time

        self.started = time.monotonic()
        if self.tty and todo:
            from rich.console import Console
            from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn,
                                       TimeRemainingColumn)

            self.bar = Progress(
                TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TextColumn("runs"),
                TimeElapsedColumn(), TextColumn("left"), TimeRemainingColumn(),
                console=Console(stderr=True, highlight=False), transient=False,
            )
            self.bar.start()
            self.task = self.bar.add_task(self.name, total=len(todo))

    def update(self, event: RunEvent) -> None:
        import time

        if self.started is None:
            self.started = time.monotonic()
        left = eta_text(event.done, event.total, time.monotonic() - self.started).split(", ", 1)[1]
        if event.ok:
            info = event.info
            text = (f"[{event.done}/{event.total}] done {event.run_id} in {event.wall_seconds:.1f} s "
                    f"({info.get('flows', 0):,} flows, {info.get('unfinished', 0):,} unfinished); sweep: {left}")
        else:
            text = f"[{event.done}/{event.total}] FAILED {event.run_id}: {event.error}"
        if self.bar is not None:
            self.bar.update(self.task, completed=event.done)
            if not event.ok:
                self._line(text)
        else:
            self._line(text)


def print_results(report: SweepReport, order: list[str]) -> None:
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
