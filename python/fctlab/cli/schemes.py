"""The ``schemes`` command: every scheme with what it does and the parameters it runs with by default."""

from __future__ import annotations

import typer

from fctlab.cli._common import say


def register(app: typer.Typer) -> None:
    """Add ``schemes`` to a typer app (``fctlab.cli`` calls this)."""
    app.command("schemes")(schemes)


def schemes() -> None:
    """List every scheme with what it does and the switch/transport parameters it runs with by default."""
    from fctlab import scheme_table

    say(scheme_table.render())
    say("")
    say(scheme_table.SCALING_NOTE)
