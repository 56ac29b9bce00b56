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
    console,
    fail,
    is_exit,
    output_dir,
    run_with_progress,
    say,
    warn_before_run,
)
# the run command's body and what the three commands share, kept free of typer (fctlab.cli._run)
from fctlab.cli._run import check_threads, flow_notes, prepare, record_in_catalog, run_command, say_notes, threads_for

__all__ = ["register", "run", "compare", "calibrate", "prepare"]


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
    run_command(experiment, out, sets, threads, strict, overwrite)


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

    check_threads(threads)
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
        notes = flow_notes(base, flows, list(variants.values()))
        out_dir = output_dir(out, base)
    except ConfigError as e:
        raise fail(str(e), EXIT_BAD_INPUT) from None
    say_notes(notes)
    for scheme, exp in variants.items():
        warn_before_run(exp, flows, strict, label=scheme)

    from fctlab.analyze import bins_text, compare_table
    from fctlab.plot import plot_fct_bins
    from fctlab.results import write_json, write_results

    summaries = {}
    for scheme, exp in variants.items():
        try:
            result = run_with_progress(exp, flows, f"{exp.name} ({scheme})", threads_for(threads, exp), out_dir / scheme)
            write_results(result, out_dir / scheme)
        except (ValueError, RuntimeError) as e:
            if is_exit(e):
                raise
            raise fail(f"engine ({scheme}): {e}", EXIT_FAILED) from None
        except OSError as e:
            raise fail(f"writing results to {out_dir / scheme}: {e}", EXIT_FAILED) from None
        record_in_catalog(out_dir, out_dir / scheme)
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

    check_threads(threads)
    try:
        base, flows = prepare(experiment, sets)
        packet = base.with_overrides(["run.level=packet"])
        flow = base.with_overrides(["run.level=flow"])
        notes = flow_notes(base, flows, [packet, flow])
    except ConfigError as e:
        raise fail(str(e), EXIT_BAD_INPUT) from None
    say_notes(notes)
    from fctlab.analyze import SUMMARY_BINS, bins_text, fmt_scaled, format_table

    summaries, walls = {}, {}
    for label, exp in (("packet", packet), ("flow", flow)):
        start = time.perf_counter()
        try:
            result = run_with_progress(exp, flows, f"{exp.name} ({label} level)", threads_for(threads, exp))
        except (ValueError, RuntimeError) as e:
            if is_exit(e):
                raise
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
