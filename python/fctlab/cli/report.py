"""The ``report``, ``thresholds`` and ``hyline-band`` commands of the ``fctlab`` command line.

``register(app)`` adds them to a Typer app (``fctlab.cli`` calls it). Like the other commands, bad arguments
print one line, ``error: ...``, naming the argument, and exit with code 2 having written nothing; numbers are taken
as text and checked here so that even a malformed one gets that one line rather than a usage box.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from fctlab.cli._common import EXIT_BAD_INPUT, EXIT_FAILED, echo, fail  # EXIT_BAD_INPUT: for the old fctlab.cli_report


def report(
    results_dir: Annotated[Path, typer.Argument(help="Results directory: a run, a sweep (runs/<id>/) or a compare.")],
    metric: Annotated[str, typer.Option("--metric", help="What the figures plot: fct or slowdown.")] = "fct",
    normalize_to: Annotated[
        Optional[str], typer.Option("--normalize-to", help="Plot values relative to this scheme at the same load.")
    ] = None,
    out: Annotated[
        Optional[Path], typer.Option("--out", "-o", help="Output directory (default: RESULTS_DIR/report).")
    ] = None,
) -> None:
    """Write figures (PNG and SVG) and one self-contained HTML page for the runs under RESULTS_DIR."""
    from fctlab.report import REPORT_DIR, Report, ReportError

    try:
        if not results_dir.is_dir():
            raise ReportError(f"RESULTS_DIR: {results_dir} is not a directory")
        if out is not None and out.exists() and not out.is_dir():
            raise ReportError(f"--out: {out} exists and is not a directory")
        exclude = [out] if out is not None else []
        rep = Report.from_dir(results_dir, metric=metric, normalize_to=normalize_to, exclude=exclude)
    except ReportError as e:
        raise fail(str(e)) from None
    try:
        files = rep.write(out if out is not None else results_dir / REPORT_DIR)
    except OSError as e:
        raise fail(f"writing the report: {e}", EXIT_FAILED) from None
    echo(f"report: {files.html}")
    echo(f"figures: {len(files.figures)} files in {files.html.parent / 'figures'}")
    for p in files.figures:
        echo(f"  {p.name}")
    if rep.skipped:
        sys.stderr.write(f"warning: {len(rep.skipped)} summary file(s) could not be read and were left out\n")


def _parse_load(text: str | None) -> float:
    if text is None:
        raise ValueError("--load: missing; give the offered load, e.g. --load 0.6")
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"--load: must be a number strictly between 0 and 1, got {text!r}") from None
    if not 0.0 < value < 1.0:
        raise ValueError(f"--load: must be strictly between 0 and 1, got {text}")
    return value


def _parse_positive(option: str, text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"{option}: must be a positive number, got {text!r}") from None
    if not (value > 0 and value < float("inf")):
        raise ValueError(f"{option}: must be a positive number, got {text}")
    return value


def _parse_queues(text: str) -> int:
    from fctlab.thresholds import MAX_QUEUES, MIN_QUEUES

    try:
        value = int(text)
    except ValueError:
        raise ValueError(f"--queues: must be a whole number from {MIN_QUEUES} to {MAX_QUEUES}, got {text!r}") from None
    if not MIN_QUEUES <= value <= MAX_QUEUES:
        raise ValueError(f"--queues: must be from {MIN_QUEUES} to {MAX_QUEUES}, got {value}")
    return value


def _packets(n_bytes: int) -> str:
    from fctlab.workloads import NS2_PACKET_BYTES

    q = n_bytes / NS2_PACKET_BYTES
    return f"{q:,.0f}" if q.is_integer() else f"{q:,.2f}"


def _threshold_rows(t: Any) -> list[list[str]]:
    rows = []
    for j in range(t.queues):
        low = "0" if j == 0 else f"{t.thresholds_bytes[j - 1]:,}"
        high = "inf" if j == t.queues - 1 else f"{t.thresholds_bytes[j]:,}"
        pk = "" if j == t.queues - 1 else _packets(t.thresholds_bytes[j])
        rows.append([f"{j + 1}", f"({low}, {high}]", pk, f"{t.shares[j]:.4f}", f"{t.realized_shares[j]:.4f}"])
    return rows


def _show_presets(cdf: str | None, load: float | None) -> None:
    from fctlab.analyze import format_table
    from fctlab.thresholds import PRESET_SOURCE, evaluate, list_presets, preset

    if cdf is not None and load is not None:
        items = [(cdf, load, preset(cdf, load))]  # raises the error naming what is wrong
    else:
        items = [(w, ld, v) for w, ld, v in list_presets() if cdf is None or w == cdf]
        if not items:
            preset(cdf or "", 0.5)  # raises the error that names the known workloads
        if load is not None:
            items = [(w, ld, v) for w, ld, v in items if abs(ld - load) < 1e-9]
            if not items:
                known = ", ".join(f"{x:g}" for x in sorted({ld for _, ld, _ in list_presets()}))
                raise ValueError(f"--load: no PIAS preset at load {load:g}; preset loads: {known}")
    header = ["workload", "load", *(f"alpha_{j}" for j in range(1, 8))]
    echo("PIAS ns-2 demotion thresholds, 8 queues, in bytes (packets of 1460 B below each):")
    rows = []
    for w, ld, v in items:
        rows.append([w, f"{ld:g}", *(f"{x:,}" for x in v)])
        rows.append(["", "", *(f"({_packets(x)})" for x in v)])
    echo(format_table(header, rows, "lr" + "r" * 7))
    if len(items) == 1:
        w, ld, v = items[0]
        given = evaluate(w, ld, v)
        echo(f"shares of flows per queue on {w}: " + " ".join(f"{x:.4f}" for x in given.shares)
             + f"; PIAS §3 objective (eq. 2) {given.objective:.6f}")
    echo(f"source: {PRESET_SOURCE}")
    echo("a flow stays in queue j while its bytes sent are <= alpha_j")


def thresholds(
    cdf: Annotated[Optional[str], typer.Option("--cdf", help="Flow-size CDF: a shipped name or a file.")] = None,
    load: Annotated[Optional[str], typer.Option("--load", help="Offered load, strictly between 0 and 1.")] = None,
    queues: Annotated[str, typer.Option("--queues", help="Number of priority queues K, 2 to 64.")] = "8",
    method: Annotated[str, typer.Option("--method", help="paper (closed form of §3) or numeric (SLSQP).")] = "paper",
    presets: Annotated[
        bool, typer.Option("--preset", help="Show the published PIAS ns-2 thresholds (filtered by --cdf/--load).")
    ] = False,
) -> None:
    """PIAS demotion thresholds for a workload and load, derived as in the PIAS paper (§3), or its presets."""
    from fctlab.analyze import format_table
    from fctlab.thresholds import METHODS, PRESETS, ThresholdError, derive, evaluate

    try:
        if presets:
            _show_presets(cdf, None if load is None else _parse_load(load))
            return
        if cdf is None:
            raise ValueError("--cdf: missing; give a workload CDF name (see fctlab workloads) or a file path")
        rho = _parse_load(load)
        k = _parse_queues(queues)
        if method not in METHODS:
            raise ValueError(f"--method: must be one of {', '.join(METHODS)}, got {method!r}")
        t = derive(cdf, rho, k, method)
    except ThresholdError as e:
        raise fail(f"--{e}") from None
    except ValueError as e:
        raise fail(str(e)) from None

    echo(f"PIAS thresholds for {t.cdf} at load {t.load:g}, {t.queues} queues (method: {t.method})")
    header = ["queue", "flow bytes sent", "alpha (packets)", "target share", "share on this CDF"]
    echo(format_table(header, _threshold_rows(t), "rlrrr"))
    echo("thresholds (bytes): " + " ".join(str(a) for a in t.thresholds_bytes))
    echo(
        f"objective (PIAS eq. 2, maximised): {t.objective:.6f} at the target shares, {t.realized_objective:.6f} "
        f"with the byte thresholds; average-FCT bound (eq. 1): {t.fct_bound:.6f} / {t.realized_fct_bound:.6f}"
    )
    key = (t.cdf, round(t.load, 9))
    if t.queues == 8 and key in PRESETS:
        given = evaluate(t.cdf, t.load, PRESETS[key])
        echo("published PIAS ns-2 preset (fctlab thresholds --preset): "
             + " ".join(str(a) for a in PRESETS[key]))
        echo("  its shares on this CDF: " + " ".join(f"{x:.4f}" for x in given.shares)
             + f"; objective (eq. 2) {given.objective:.6f}, bound (eq. 1) {given.fct_bound:.6f}")


def hyline_band(
    cdf: Annotated[str, typer.Option("--cdf", help="Flow-size CDF: a shipped name or a file.")] = "websearch",
    load: Annotated[str, typer.Option("--load", help="Offered load, strictly between 0 and 1.")] = "0.6",
    link_gbps: Annotated[str, typer.Option("--link-gbps", help="Link rate C in Gbps.")] = "1",
    tcost_us: Annotated[str, typer.Option("--tcost-us", help="T_cost: the delay of reaching the manager, us.")] = "100",
    share: Annotated[str, typer.Option("--share", help="Cap on the first class's share of the load.")] = "0.1",
    plot: Annotated[
        Optional[Path], typer.Option("--plot", help="Write the paper's Figure 3 here (PNG or PDF).")
    ] = None,
) -> None:
    """HyLine's band for its class threshold H (HyLine paper §IV-E): the M/G/1-SRPT wait of a flow of size H at
    least T_cost (lower bound), and the first class's share of the load at most 0.1 (upper bound)."""
    from fctlab.theory.hyline_band import BandError, band, first_class_share, plot_band, waiting_time
    from fctlab.workloads import WorkloadError, load_cdf

    try:
        rho = _parse_load(load)
        gbps = _parse_positive("--link-gbps", link_gbps)
        tcost = _parse_positive("--tcost-us", tcost_us)
        cap = _parse_positive("--share", share)
        if cap > 1:
            raise ValueError(f"--share: must be at most 1, got {share}")
        if plot is not None and plot.suffix.lower() not in (".png", ".pdf"):
            raise ValueError(f"--plot: the file must end in .png or .pdf, got {plot}")
        c = load_cdf(cdf)
        b = band(c, rho, gbps * 1e9, tcost * 1e-6, cap)
    except WorkloadError as e:
        raise fail(f"--cdf: {e}") from None
    except (BandError, ValueError) as e:
        raise fail(str(e)) from None

    def size(x: float | None) -> str:
        return "none in the CDF's range" if x is None else f"{x:,.0f} B"

    echo(f"HyLine threshold band for {b.cdf} at load {rho:g} on {gbps:g} Gbps, T_cost {tcost:g} us")
    echo(f"  lower bound (M/G/1-SRPT wait of a flow of size H >= T_cost): H >= {size(b.lower)}")
    echo(f"  upper bound (first class's share of the load <= {cap:g}): H <= {size(b.upper)}")
    echo("  the band is empty" if b.empty else f"  band: {size(b.lower)} .. {size(b.upper)}")
    header = ["H", "E[W(H)] (us)", "rho(H) / rho"]
    rows = [
        [f"{h:,.0f} B", f"{waiting_time(c, rho, gbps * 1e9, h) * 1e6:.1f}", f"{first_class_share(c, h):.4f}"]
        for h in (100e3, 300e3, 1e6, 3e6, 10e6)
        if h <= c.sizes[-1]
    ]
    from fctlab.analyze import format_table

    echo(format_table(header, rows, "rrr"))
    if plot is not None:
        plot.parent.mkdir(parents=True, exist_ok=True)
        plot_band(c, (0.1, 0.3, 0.5, 0.6, 0.7, 0.8, 0.9), gbps * 1e9, tcost * 1e-6, rho, plot, cap)
        echo(f"plot written to {plot}")


def register(app: typer.Typer) -> None:
    """Add the ``report``, ``thresholds`` and ``hyline-band`` commands to ``app``."""
    app.command("report")(report)
    app.command("thresholds")(thresholds)
    app.command("hyline-band")(hyline_band)
