"""The typer app of the ``fctlab`` command line (:data:`app`): the root options and every command group,
registered in the order of ``--help``. ``fctlab.cli`` imports it on first use."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from fctlab.cli import check, predict, report, reproduce, run, schemes, sweep, tune, workloads

__all__ = ["app"]

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    # help texts are plain text: rich markup would swallow "[sweep]" and other bracketed words
    rich_markup_mode=None,
    help="fctlab: packet-level simulation of data-center flow scheduling.",
)


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


# the order of --help
for _group in (run, check, workloads, schemes, reproduce, report, sweep, tune, predict):
    _group.register(app)


