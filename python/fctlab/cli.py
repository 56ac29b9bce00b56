"""The ``fctlab`` command line: ``run``, ``compare``, ``workloads``, ``schemes``, plus ``report`` and ``thresholds``
(from :mod:`fctlab.cli_report`), ``sweep`` (from :mod:`fctlab.cli_sweep`), ``predict`` (from
:mod:`fctlab.cli_predict`) and ``reproduce`` (recipes in :mod:`fctlab.reproduce`).

Bad input never reaches the engine: every command validates the whole experiment (and builds its flows) first;
on a problem it prints one line naming the key to stderr and exits with code 2, having written nothing (not even
the output directory). Exit code 1 means the engine or the file system failed after validation.
"""

from __future__ import annotations

import os
import sys
import threading
from importlib import import_module
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Optional

import typer

if TYPE_CHECKING:
    from fctlab.config import Experiment
    from fctlab.simulation import Result

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    # help texts are plain text: rich markup would swallow "[sweep]" and other bracketed words
    rich_markup_mode=None,
    help="fctlab: packet-level simulation of data-center flow scheduling.",
)

EXIT_FAILED = 1
EXIT_BAD_INPUT = 2


def _show_version(value: bool) -> None:
    if value:
        from fctlab import __version__

        sys.stdout.write(f"fctlab {__version__}\n")
        raise typer.Exit(0)


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option("--version", is_eager=True, callback=_show_version, help="Print fctlab's version and exit."),
    ] = False,
) -> None:
    """fctlab: packet-level simulation of data-center flow scheduling."""

_SetOption = Annotated[
    Optional[list[str]],
    typer.Option("--set", help="Override one key of the experiment: --set workload.load=0.7 (repeatable)."),
]
_OutOption = Annotated[
    Optional[Path],
    typer.Option("--out", "-o", help="Results directory (default: output.dir of the experiment)."),
]
_ThreadsOption = Annotated[
    Optional[int],
    typer.Option("--threads", "-t", help="Engine threads, 1 or 2 (default: 2 when the machine has 2 cores and "
                 "the fabric gains from it). The results are the same either way."),
]


def _check_threads(requested: int | None) -> None:
    if requested is not None and requested not in (1, 2):
        raise _fail(f"--threads: must be 1 or 2 (got {requested})", EXIT_BAD_INPUT)


def _threads(requested: int | None, exp: Experiment) -> int:
    """The engine threads for one run at a time: as asked, else what suits the experiment's fabric."""
    from fctlab.simulation import default_threads

    return requested if requested is not None else default_threads(exp)


def _fail(message: str, code: int) -> typer.Exit:
    sys.stderr.write(f"error: {' '.join(message.split())}\n")
    sys.stderr.flush()
    return typer.Exit(code)


def _console(stderr: bool = False) -> Any:
    from rich.console import Console

    return Console(stderr=stderr, highlight=False, soft_wrap=True)


def _print(text: str) -> None:
    _console().print(text, markup=False)


def _out_dir(out: Path | None, exp: Experiment, *, single_runs: bool = True) -> Path:
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


def _run_with_progress(exp: Experiment, flows: Any, label: str, threads: int = 1) -> Result:
    """Run the engine in a worker thread; on a terminal, show flows finished / total polled from the engine."""
    from fctlab import _core
    from fctlab.simulation import simulate

    progress = _core.Progress()
    box: dict[str, Any] = {}

    def work() -> None:
        try:
            box["result"] = simulate(exp, progress=progress, flows=flows, threads=threads)
        except BaseException as e:  # handed to the main thread
            box["error"] = e

    # A daemon thread: Ctrl-C ends the process without waiting for the engine to finish.
    worker = threading.Thread(target=work, name="fctlab-engine", daemon=True)
    worker.start()
    try:
        _wait(worker, progress, len(flows), label)
    except KeyboardInterrupt:
        raise _fail("interrupted; nothing was written for this run", 130) from None
    if "error" in box:
        raise box["error"]
    return box["result"]


def _wait(worker: threading.Thread, progress: Any, total: int, label: str) -> None:
    """Wait for the engine thread, drawing a progress bar on stderr when it is a terminal."""
    _import_while_running()
    if sys.stderr.isatty():
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TextColumn("flows"),
                   TimeElapsedColumn())
        with Progress(*columns, console=_console(stderr=True), transient=True) as bar:
            task = bar.add_task(label, total=total)
            while worker.is_alive():
                worker.join(0.1)
                bar.update(task, completed=progress.flows_done)
    else:
        sys.stderr.write(f"running {label}: {total:,} flows\n")
        sys.stderr.flush()
        while worker.is_alive():
            worker.join(0.5)


def _import_while_running() -> None:
    """Import what comes after the engine (pandas for the result table, pyarrow to write it, rich to print)
    while it runs: it releases the GIL, so on a second core this costs no wall time (about 0.7 s of imports
    otherwise spent after the run). Not DuckDB: its ~13 MiB would add to the peak memory of writing the table
    (the catalog is recorded after the table is freed). A module that fails to import is left to fail where it
    is used."""
    for name in ("pandas", "pyarrow.parquet", "rich.console", "fctlab.results"):
        try:
            import_module(name)
        except Exception:  # noqa: BLE001
            pass


def _prepare(experiment: Path, sets: list[str] | None) -> tuple[Experiment, Any]:
    """Load + validate the experiment and build its flows (without pandas for a generated workload, so the
    engine starts before pandas loads); ConfigError on any bad input."""
    from fctlab.config import load_experiment
    from fctlab.simulation import workload_columns

    exp = load_experiment(experiment, overrides=sets or ())
    return exp, workload_columns(exp)


def _notes(exp: Experiment, flows: Any) -> list[str]:
    """What to tell the user about the flows before they run (ConfigError when none could run)."""
    from fctlab.simulation import workload_notes

    return workload_notes(exp, flows)


def _say_notes(notes: list[str]) -> None:
    for note in notes:
        sys.stderr.write(f"note: {note}\n")
    sys.stderr.flush()


@app.command()
def run(
    experiment: Annotated[Path, typer.Argument(help="Experiment TOML file.")],
    out: _OutOption = None,
    sets: _SetOption = None,
    threads: _ThreadsOption = None,
) -> None:
    """Run one experiment; write flows.parquet, summary.json and config.json to the results directory."""
    from fctlab.config import ConfigError

    _check_threads(threads)
    try:
        exp, flows = _prepare(experiment, sets)
        notes = _notes(exp, flows)
        out_dir = _out_dir(out, exp)
    except ConfigError as e:
        raise _fail(str(e), EXIT_BAD_INPUT) from None
    _say_notes(notes)
    try:
        result = _run_with_progress(exp, flows, f"{exp.name} ({exp.scheme})", _threads(threads, exp))
    except typer.Exit:  # (a RuntimeError subclass in click)
        raise
    except (ValueError, RuntimeError) as e:
        raise _fail(f"engine: {e}", EXIT_FAILED) from None
    del flows  # the result table holds what is written: free the workload before writing
    from fctlab.analyze import summary_table
    from fctlab.results import write_results

    try:
        write_results(result, out_dir)
    except OSError as e:
        raise _fail(f"writing results to {out_dir}: {e}", EXIT_FAILED) from None
    summary = result.summary
    del result  # the catalog reads the written files: free the table before DuckDB loads
    _record_in_catalog(out_dir, out_dir)
    _print(f"{exp.name}: scheme {exp.scheme}, seed {exp.seed}")
    _print(summary_table(summary))
    _console(stderr=True).print(f"results written to {out_dir}", markup=False)


def _record_in_catalog(root: Path, run_dir: Path) -> None:
    """Index a written run in ROOT/catalog.duckdb. The results are already on disk; the catalog is an index
    that can be rebuilt, so a failure here is a warning, not an error."""
    from fctlab import catalog

    try:
        catalog.record_run(root, run_dir)
    except Exception as e:  # noqa: BLE001
        _console(stderr=True).print(
            f"warning: catalog not updated ({e}); fctlab.catalog.rebuild({str(root)!r}) recreates it", markup=False
        )


@app.command()
def compare(
    experiment: Annotated[Path, typer.Argument(help="Experiment TOML file.")],
    schemes: Annotated[
        Optional[list[str]],
        typer.Option(
            "--scheme",
            help="A scheme to run (repeatable): --scheme tcp --scheme dctcp. For pias, pass queue thresholds with "
            "--set 'scheme.thresholds_bytes=[...]' (`fctlab thresholds --cdf websearch --load 0.6 --queues 8` "
            "derives them).",
        ),
    ] = None,
    out: _OutOption = None,
    sets: _SetOption = None,
    threads: _ThreadsOption = None,
) -> None:
    """Run the same experiment (same flows, same seed) once per scheme; print a per-bin comparison and write
    DIR/<scheme>/ for each run plus DIR/fct_bins.png and .svg."""
    from fctlab.config import ConfigError

    _check_threads(threads)
    try:
        if not schemes:
            raise ConfigError("--scheme", "give at least one scheme, e.g. --scheme tcp --scheme dctcp")
        if len(set(schemes)) != len(schemes):
            raise ConfigError("--scheme", f"a scheme is listed twice ({', '.join(schemes)})")
        base, flows = _prepare(experiment, sets)
        if base.raw.get("transport", {}).get("kind") is not None:
            raise ConfigError(
                "transport.kind",
                f"is set ({base.raw['transport']['kind']!r}), so every scheme would use that transport; "
                "remove it to compare schemes",
            )
        variants = {}
        for scheme in schemes:
            if not scheme or "/" in scheme or scheme.startswith("."):
                raise ConfigError("--scheme", f"bad scheme name {scheme!r}")
            variants[scheme] = base.with_overrides([f"scheme.name={scheme}"])
        notes = _notes(base, flows)
        out_dir = _out_dir(out, base)
    except ConfigError as e:
        raise _fail(str(e), EXIT_BAD_INPUT) from None
    _say_notes(notes)

    from fctlab.analyze import bins_text, compare_table
    from fctlab.plot import plot_fct_bins
    from fctlab.results import write_json, write_results

    summaries = {}
    for scheme, exp in variants.items():
        try:
            result = _run_with_progress(exp, flows, f"{exp.name} ({scheme})", _threads(threads, exp))
            write_results(result, out_dir / scheme)
        except typer.Exit:
            raise
        except (ValueError, RuntimeError) as e:
            raise _fail(f"engine ({scheme}): {e}", EXIT_FAILED) from None
        except OSError as e:
            raise _fail(f"writing results to {out_dir / scheme}: {e}", EXIT_FAILED) from None
        _record_in_catalog(out_dir, out_dir / scheme)
        summaries[scheme] = result.summary
        _console(stderr=True).print(
            f"{scheme}: done ({result.summary['unfinished_flows']:,} unfinished); results in {out_dir / scheme}",
            markup=False,
        )
    try:
        plots = plot_fct_bins(summaries, out_dir / "fct_bins")
        write_json(out_dir / "compare.json", {
            "experiment": base.name,
            "seed": base.seed,
            "schemes": list(summaries),
            "bins": {scheme: s["bins"] for scheme, s in summaries.items()},
        })
    except OSError as e:
        raise _fail(f"writing to {out_dir}: {e}", EXIT_FAILED) from None
    _print(f"{base.name}: {len(flows):,} flows, seed {base.seed}; FCT by flow size ({bins_text(base.output.bins)})")
    _print(compare_table(summaries))
    _console(stderr=True).print(f"plot: {', '.join(str(p) for p in plots)}", markup=False)


@app.command()
def calibrate(
    experiment: Annotated[Path, typer.Argument(help="Experiment TOML file.")],
    sets: _SetOption = None,
    threads: _ThreadsOption = None,
) -> None:
    """Run one experiment at the packet level and at the flow level (run.level = "flow") on the same flows and
    print, per size bin, how far the flow level is from the packet level (mean and p99 FCT, mean slowdown) and
    the time each took. Writes nothing."""
    import time

    from fctlab.config import ConfigError

    _check_threads(threads)
    try:
        base, flows = _prepare(experiment, sets)
        packet = base.with_overrides(["run.level=packet"])
        flow = base.with_overrides(["run.level=flow"])
        notes = _notes(base, flows)
    except ConfigError as e:
        raise _fail(str(e), EXIT_BAD_INPUT) from None
    _say_notes(notes)
    from fctlab.analyze import SUMMARY_BINS, _fmt, bins_text, format_table

    summaries, walls = {}, {}
    for label, exp in (("packet", packet), ("flow", flow)):
        start = time.perf_counter()
        try:
            result = _run_with_progress(exp, flows, f"{exp.name} ({label} level)", _threads(threads, exp))
        except typer.Exit:
            raise
        except (ValueError, RuntimeError) as e:
            raise _fail(f"engine ({label} level): {e}", EXIT_FAILED) from None
        walls[label] = time.perf_counter() - start
        summaries[label] = result.summary

    def err(a: Any, b: Any) -> str:
        return "-" if a in (None, 0) or b is None else f"{100 * (b / a - 1):+.1f}%"

    rows = []
    for name in SUMMARY_BINS:
        p, f = summaries["packet"]["bins"][name], summaries["flow"]["bins"][name]
        row = [name, f"{p['count']:,}"]
        for key, scale in (("mean_fct_ns", 1000.0), ("p99_fct_ns", 1000.0), ("mean_slowdown", 1.0)):
            row += [_fmt(p.get(key), scale, 1 if scale > 1 else 2), _fmt(f.get(key), scale, 1 if scale > 1 else 2),
                    err(p.get(key), f.get(key))]
        rows.append(row)
    header = ["bin", "flows", "mean FCT packet (us)", "flow", "error", "p99 FCT packet (us)", "flow", "error",
              "mean slowdown packet", "flow", "error"]
    _print(f"{base.name}: {len(flows):,} flows, seed {base.seed}, scheme {base.raw.get('scheme', {}).get('name')}; "
           f"flow level against packet level ({bins_text(base.output.bins)})")
    _print(format_table(header, rows, "lr" + "r" * 9))
    _print(f"time: packet level {walls['packet']:.2f} s, flow level {walls['flow']:.2f} s "
           f"({walls['packet'] / max(walls['flow'], 1e-9):.1f}x)")


@app.command()
def workloads() -> None:
    """List the flow-size CDFs shipped with fctlab: mean and median size, share of small flows, source."""
    from fctlab.analyze import format_table
    from fctlab.workloads import describe, list_cdfs

    header = ["name", "mean", "median", "<= 100 KB", "source"]
    rows = []
    for cdf in list_cdfs():
        d = describe(cdf)
        source = d.get("title") or (d["sources"][0] if d.get("sources") else "")
        rows.append([
            d["name"],
            _size(d["mean_bytes"]),
            _size(d["median_bytes"]),
            f"{d['share_le_100kb']:.1%}",
            source,
        ])
    _print(format_table(header, rows, "lrrrl"))
    _print("KB = 1,000 bytes, MB = 1,000,000 bytes. Use a name as workload.cdf, or give the path of your own CDF file.")


def _size(n: float) -> str:
    """Bytes in decimal units: 850 B, 71.5 KB, 1.67 MB."""
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if n >= scale:
            return f"{n / scale:.3g} {unit}" if n / scale < 100 else f"{n / scale:,.0f} {unit}"
    return f"{n:.0f} B"


@app.command()
def schemes() -> None:
    """List every scheme with what it does and the switch/transport parameters it runs with by default."""
    import json

    from fctlab import _core

    for name, what in _core.schemes():
        _print(f"{name}: {what}")
        presets = ["native", "pias"] if name == "pfabric" else ["native"]
        for preset in presets:
            cfg = json.loads(_core.scheme_defaults(name, preset))
            keys = {
                "switch.buffer_bytes": cfg["switch"]["buffer_bytes"],
                "switch.ecn": cfg["switch"]["ecn"],
                "transport.kind": cfg["transport"]["kind"] or ("tcp" if name in ("tcp", "pfabric", "las") else "dctcp"),
                "transport.init_cwnd_packets": cfg["transport"]["init_cwnd_packets"],
                "transport.max_cwnd_packets": cfg["transport"]["max_cwnd_packets"],
                "transport.rto_min_us": cfg["transport"]["rto_min_us"],
                "transport.rto_fixed": cfg["transport"]["rto_fixed"],
                "transport.dupack_threshold": cfg["transport"]["dupack_threshold"],
                "scheme.probe_after_timeouts": cfg["scheme"]["probe_after_timeouts"],
            }
            if name == "pfabric":
                keys["scheme.rank"] = cfg["scheme"]["rank"]
            if name == "l2dct":
                for k in ("l2dct_w_min", "l2dct_w_max", "l2dct_size_min_bytes", "l2dct_size_max_bytes"):
                    keys[f"scheme.{k}"] = cfg["scheme"][k]
            if name in ("pias", "qclimb"):
                keys["scheme.thresholds_bytes"] = "derived from workload.cdf and load if not given (fctlab thresholds)"
            label = f"  preset {preset!r}" if len(presets) > 1 else "  defaults"
            shown = ", ".join(f"{k} = {v}" for k, v in keys.items())
            _print(f"{label}: {shown}")


@app.command()
def reproduce(
    recipe: Annotated[
        str,
        typer.Argument(help="Which paper's comparison: pias, qclimb-testbed, qclimb-sim, pdq, homa, rax or hyline (or demo)."),
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


@app.command()
def demo(
    out: Annotated[Path, typer.Option("--out", "-o", help="Results folder.")] = Path("results/demo"),
    workers: Annotated[Optional[int], typer.Option("--workers", "-j", help="Runs at once (default: CPUs).")] = None,
) -> None:
    """The main job: DCTCP, PIAS and pFabric on a 32-host leaf-spine with web-search traffic at load 0.6 (the PIAS
    paper's setup, scaled down). Prints FCT per flow-size bin and writes plots and an HTML report."""
    _run_recipe("demo", "small", out, workers, "local", None)


def _run_recipe(recipe: str, scale: str, out: Path | None, workers: int | None, executor: str,
                address: str | None, thresholds: str | None = None) -> None:
    from fctlab.cli_sweep import _print_results, _ProgressView, signals_interrupt
    from fctlab.config import ConfigError
    from fctlab.reproduce import (
        PIAS_THRESHOLDS, RECIPE_PHASES, RECIPE_TABLES, RECIPES, SCALES, recipe_sweep, recipe_tables,
    )
    from fctlab.report import write_report
    from fctlab.sweep import check_executor, default_workers, run_sweep

    if recipe not in RECIPES:
        raise _fail(f"recipe: unknown {recipe!r}; known: {', '.join(RECIPES)}", EXIT_BAD_INPUT)
    if scale not in SCALES:
        raise _fail(f"--scale: must be one of {', '.join(SCALES)} (got {scale!r})", EXIT_BAD_INPUT)
    if thresholds is not None and recipe != "pias":
        raise _fail(f"--thresholds: only recipe pias has a choice of thresholds (got recipe {recipe!r})",
                    EXIT_BAD_INPUT)
    if thresholds is not None and thresholds not in PIAS_THRESHOLDS:
        raise _fail(f"--thresholds: must be one of {', '.join(PIAS_THRESHOLDS)} (got {thresholds!r})",
                    EXIT_BAD_INPUT)
    _, make_claims, _ = RECIPES[recipe]
    out_dir = out if out is not None else Path("results") / f"reproduce-{recipe}-{scale}"
    try:
        if workers is not None and workers < 1:
            raise ConfigError("--workers", f"must be >= 1 (got {workers})")
        check_executor(executor, address)
        spec = recipe_sweep(recipe, scale, out_dir, thresholds)
    except (ConfigError, ValueError) as e:
        raise _fail(str(e), EXIT_BAD_INPUT) from None
    n_workers = workers or default_workers()
    view = _ProgressView(spec.name, executor, n_workers, address)
    try:
        with view, signals_interrupt():
            report = run_sweep(spec, out_dir, workers=n_workers, executor=executor, address=address,  # type: ignore[arg-type]
                               progress=view.update, on_plan=view.plan, on_note=view.note)
        # recipes with runs chosen from earlier results (binary searches) run them in rounds
        for phase in RECIPE_PHASES.get(recipe, lambda *_: ())(scale, out_dir):
            phase_view = _ProgressView(phase.name, executor, n_workers, address)
            with phase_view, signals_interrupt():
                later = run_sweep(phase, out_dir, workers=n_workers, executor=executor,  # type: ignore[arg-type]
                                  address=address, progress=phase_view.update, on_plan=phase_view.plan,
                                  on_note=phase_view.note)
            report.failed.update(later.failed)
            report.total += later.total
            report.ran += later.ran
            report.skipped += later.skipped
    except ConfigError as e:
        raise _fail(str(e), EXIT_BAD_INPUT) from None
    except KeyboardInterrupt as e:
        raise _fail(f"interrupted: finished runs are kept in {out_dir}; run the same command again to resume",
                    getattr(e, "exit_code", 130)) from None
    _print_results(report, [p.run_id for p in spec.points])
    tables = recipe_tables(recipe, out_dir)
    for title, table in tables:
        suffix = "" if recipe in RECIPE_TABLES else ": FCT by flow size (small <= 100 KB < medium <= 10 MB < large)"
        _print(f"\n{title}{suffix}")
        _print(table)
    claims = make_claims(out_dir)
    files = write_report(out_dir, claims=claims, tables=tables if recipe in RECIPE_TABLES else ())
    for claim in claims:
        _print(f"{claim.statement}\n    fctlab: {claim.value_text()}  ({claim.note})")
    _console(stderr=True).print(f"report: {files.html}; figures: {', '.join(str(f) for f in files.figures)}",
                                markup=False)
    if report.failed:
        for run_id, message in report.failed.items():
            sys.stderr.write(f"failed: {run_id}: {message}\n")
        raise _fail(f"{len(report.failed)} of {report.total} runs failed; rerun to retry them", EXIT_FAILED)


from fctlab.cli_report import register as _register_report_commands  # noqa: E402  (report, thresholds)
from fctlab.cli_sweep import register as _register_sweep  # noqa: E402  (sweep)
from fctlab.cli_predict import register as _register_predict  # noqa: E402  (predict)

_register_report_commands(app)
_register_sweep(app)
_register_predict(app)


def main() -> None:
    """Entry point of the ``fctlab`` script."""
    try:
        app()
    except SystemExit as e:
        _exit_now(e.code)
        raise


def _exit_now(code: Any) -> None:
    """End the process with ``code`` without Python's own shutdown, which tears down every module (pandas,
    pyarrow, duckdb...) one object at a time: about 0.1 s that a finished command does not need. Exit handlers
    (atexit) still run and stdout/stderr are flushed, as mypy's hard exit does. Returns (for the normal shutdown)
    when a non-daemon thread is still running, since that shutdown would wait for it, or when the code is not
    an integer (Python prints such a code)."""
    import atexit
    import os

    if code is None:
        code = 0
    if not isinstance(code, int) or isinstance(code, bool):
        return
    main_thread = threading.main_thread()
    if any(t is not main_thread and not t.daemon and t.is_alive() for t in threading.enumerate()):
        return
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:  # noqa: BLE001  (e.g. a closed pipe: nothing more can be said on it)
            pass
    os._exit(code)


if __name__ == "__main__":
    main()
