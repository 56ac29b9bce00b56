"""The ``run``, ``compare`` and ``calibrate`` commands: one experiment, once, once per scheme, or at both levels."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Optional

import typer

from fctlab.cli._common import (
    EXIT_BAD_INPUT,
    EXIT_FAILED,
    STRICT_HELP,
    check_rerun,
    console,
    fail,
    note,
    output_dir,
    run_with_progress,
    say,
    signals_interrupt,
    warn_before_run,
)

if TYPE_CHECKING:
    from fctlab.config import Experiment


def register(app: typer.Typer) -> None:
    """Add ``run``, ``compare``, ``calibrate`` to a typer app (``fctlab.cli`` calls this)."""
    app.command("run")(run)
    app.command("compare")(compare)
    app.command("calibrate")(calibrate)


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
    typer.Option("--threads", "-t", help="Engine threads, any number >= 1: one for the hosts, the others for groups "
                 "of switches; a fabric that cannot use them all uses fewer and says so in the summary's "
                 "engine.threads_note (default: 2 when the machine has 2 cores and the fabric gains from it). "
                 "The results are the same whatever the number."),
]
_StrictOption = Annotated[bool, typer.Option("--strict", help=STRICT_HELP)]


def _check_threads(requested: int | None) -> None:
    if requested is not None and requested < 1:
        raise fail(f"--threads: must be >= 1 (got {requested})", EXIT_BAD_INPUT)


def _threads(requested: int | None, exp: Experiment) -> int:
    """The engine threads for one run at a time: as asked, else what suits the experiment's fabric."""
    from fctlab.simulation import default_threads

    return requested if requested is not None else default_threads(exp)


def prepare(experiment: Path, sets: list[str] | None) -> tuple[Experiment, Any]:
    """Load + validate the experiment and build its flows (without pandas for a generated workload, so the
    engine starts before pandas loads); ConfigError on any bad input."""
    from fctlab.config import load_experiment
    from fctlab.simulation import workload_columns

    exp = load_experiment(experiment, overrides=sets or ())
    return exp, workload_columns(exp)


def _notes(exp: Experiment, flows: Any, runs: list[Experiment] | None = None) -> list[str]:
    """What to tell the user about the flows before they run; ConfigError when none could run, or when the flows
    are not what the scheme or level of ``exp`` (or of each of ``runs``) can take."""
    from fctlab.simulation import check_flows, workload_notes

    for each in runs or [exp]:
        check_flows(each, flows)
    return workload_notes(exp, flows)


def _say_notes(notes: list[str]) -> None:
    for note in notes:
        sys.stderr.write(f"note: {note}\n")
    sys.stderr.flush()


def run(
    experiment: Annotated[Path, typer.Argument(help="Experiment TOML file.")],
    out: _OutOption = None,
    sets: _SetOption = None,
    threads: _ThreadsOption = None,
    strict: _StrictOption = False,
    overwrite: Annotated[bool, typer.Option(
        "--overwrite", help="Replace results of another configuration in the results directory (the same "
        "configuration is always written again).")] = False,
) -> None:
    """Run one experiment; write flows.parquet, summary.json and config.json to the results directory."""
    from fctlab.config import ConfigError

    _check_threads(threads)
    try:
        exp, flows = prepare(experiment, sets)
        notes = _notes(exp, flows)
        out_dir = output_dir(out, exp)
        check_rerun(out_dir, exp, overwrite)
    except ConfigError as e:
        raise fail(str(e), EXIT_BAD_INPUT) from None
    _say_notes(notes)
    warn_before_run(exp, flows, strict)
    with signals_interrupt():  # SIGTERM / SIGHUP end the run as Ctrl-C does
        try:
            result = run_with_progress(exp, flows, f"{exp.name} ({exp.scheme})", _threads(threads, exp), out_dir)
        except typer.Exit:  # (a RuntimeError subclass in click)
            raise
        except (ValueError, RuntimeError) as e:
            raise fail(f"engine: {e}", EXIT_FAILED) from None
        del flows  # the result table holds what is written: free the workload before writing
        from fctlab.analyze import summary_table
        from fctlab.results import write_results

        try:
            write_results(result, out_dir)
        except OSError as e:
            raise fail(f"writing results to {out_dir}: {e}", EXIT_FAILED) from None
        except KeyboardInterrupt as e:  # (its temporary file is removed by the write itself)
            raise fail(f"interrupted while writing the results; {out_dir} may hold some of this run's files and "
                       "none of its temporary ones: run the command again", getattr(e, "exit_code", 130)) from None
    summary = result.summary
    del result  # the catalog reads the written files: free the table before DuckDB loads
    _record_in_catalog(out_dir, out_dir)
    say(f"{exp.name}: scheme {exp.scheme}, seed {exp.seed}")
    say(summary_table(summary))
    note(f"results written to {out_dir}")


def _record_in_catalog(root: Path, run_dir: Path) -> None:
    """Note a written run for ROOT/catalog.duckdb, which records it when it is next read or written
    (:func:`fctlab.catalog.record_later`: DuckDB is not imported by a run). The results are already on disk; the
    catalog is an index that can be rebuilt, so a failure here is a warning, not an error."""
    from fctlab import catalog

    try:
        catalog.record_later(root, run_dir)
    except Exception as e:  # noqa: BLE001
        console(stderr=True).print(
            f"warning: catalog not updated ({e}); fctlab.catalog.rebuild({str(root)!r}) recreates it", markup=False
        )


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
    strict: _StrictOption = False,
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
        base, flows = prepare(experiment, sets)
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
        notes = _notes(base, flows, list(variants.values()))
        out_dir = output_dir(out, base)
    except ConfigError as e:
        raise fail(str(e), EXIT_BAD_INPUT) from None
    _say_notes(notes)
    for scheme, exp in variants.items():
        warn_before_run(exp, flows, strict, label=scheme)

    from fctlab.analyze import bins_text, compare_table
    from fctlab.plot import plot_fct_bins
    from fctlab.results import write_json, write_results

    summaries = {}
    for scheme, exp in variants.items():
        try:
            result = run_with_progress(exp, flows, f"{exp.name} ({scheme})", _threads(threads, exp), out_dir / scheme)
            write_results(result, out_dir / scheme)
        except typer.Exit:
            raise
        except (ValueError, RuntimeError) as e:
            raise fail(f"engine ({scheme}): {e}", EXIT_FAILED) from None
        except OSError as e:
            raise fail(f"writing results to {out_dir / scheme}: {e}", EXIT_FAILED) from None
        _record_in_catalog(out_dir, out_dir / scheme)
        summaries[scheme] = result.summary
        console(stderr=True).print(
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
        raise fail(f"writing to {out_dir}: {e}", EXIT_FAILED) from None
    say(f"{base.name}: {len(flows):,} flows, seed {base.seed}; FCT by flow size ({bins_text(base.output.bins)})")
    say(compare_table(summaries))
    console(stderr=True).print(f"plot: {', '.join(str(p) for p in plots)}", markup=False)


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
        base, flows = prepare(experiment, sets)
        packet = base.with_overrides(["run.level=packet"])
        flow = base.with_overrides(["run.level=flow"])
        notes = _notes(base, flows, [packet, flow])
    except ConfigError as e:
        raise fail(str(e), EXIT_BAD_INPUT) from None
    _say_notes(notes)
    from fctlab.analyze import SUMMARY_BINS, bins_text, fmt_scaled, format_table

    summaries, walls = {}, {}
    for label, exp in (("packet", packet), ("flow", flow)):
        start = time.perf_counter()
        try:
            result = run_with_progress(exp, flows, f"{exp.name} ({label} level)", _threads(threads, exp))
        except typer.Exit:
            raise
        except (ValueError, RuntimeError) as e:
            raise fail(f"engine ({label} level): {e}", EXIT_FAILED) from None
        walls[label] = time.perf_counter() - start
        summaries[label] = result.summary

    def err(a: Any, b: Any) -> str:
        return "-" if a in (None, 0) or b is None else f"{100 * (b / a - 1):+.1f}%"

    rows = []
    for name in SUMMARY_BINS:
        p, f = summaries["packet"]["bins"][name], summaries["flow"]["bins"][name]
        row = [name, f"{p['count']:,}"]
        for key, scale in (("mean_fct_ns", 1000.0), ("p99_fct_ns", 1000.0), ("mean_slowdown", 1.0)):
            row += [fmt_scaled(p.get(key), scale, 1 if scale > 1 else 2), fmt_scaled(f.get(key), scale, 1 if scale > 1 else 2),
                    err(p.get(key), f.get(key))]
        rows.append(row)
    header = ["bin", "flows", "mean FCT packet (us)", "flow", "error", "p99 FCT packet (us)", "flow", "error",
              "mean slowdown packet", "flow", "error"]
    say(f"{base.name}: {len(flows):,} flows, seed {base.seed}, scheme {base.raw.get('scheme', {}).get('name')}; "
           f"flow level against packet level ({bins_text(base.output.bins)})")
    say(format_table(header, rows, "lr" + "r" * 9))
    say(f"time: packet level {walls['packet']:.2f} s, flow level {walls['flow']:.2f} s "
           f"({walls['packet'] / max(walls['flow'], 1e-9):.1f}x)")
