"""The ``workloads`` command: the flow-size CDFs shipped with fctlab."""

from __future__ import annotations

import typer

from fctlab.cli._common import say


def register(app: typer.Typer) -> None:
    """Add ``workloads`` to a typer app (``fctlab.cli`` calls this)."""
    app.command("workloads")(workloads)


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
    say(format_table(header, rows, "lrrrl"))
    say("KB = 1,000 bytes, MB = 1,000,000 bytes. Use a name as workload.cdf, or give the path of your own CDF file.")


def _size(n: float) -> str:
    """Bytes in decimal units: 850 B, 71.5 KB, 1.67 MB."""
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if n >= scale:
            return f"{n / scale:.3g} {unit}" if n / scale < 100 else f"{n / scale:,.0f} {unit}"
    return f"{n:.0f} B"
