"""The ``fctlab`` command line: one typer :data:`app` over one module per command group.

- :mod:`fctlab.cli.run`: ``run``, ``compare``, ``calibrate``
- :mod:`fctlab.cli.check`: ``check`` (the pre-run check of meaning and cost)
- :mod:`fctlab.cli.workloads`: ``workloads``
- :mod:`fctlab.cli.schemes`: ``schemes``
- :mod:`fctlab.cli.reproduce`: ``reproduce``, ``demo`` (recipes in :mod:`fctlab.recipes`)
- :mod:`fctlab.cli.report`: ``report``, ``thresholds``, ``hyline-band``
- :mod:`fctlab.cli.sweep`: ``sweep``
- :mod:`fctlab.cli.tune`: ``tune``
- :mod:`fctlab.cli.predict`: the ``predict`` group

What they share (exit codes, the one-line error, progress, signals) is in ``fctlab.cli._common``; a command
module never imports another. Bad input never reaches the engine: every command validates the whole experiment
(and builds its flows) first; on a problem it prints one line naming the key to stderr and exits with code 2,
having written nothing (not even the output directory). Exit code 1 means the engine or the file system failed
after validation.
"""

from __future__ import annotations

import sys
import threading
from typing import Annotated, Any

import typer

from fctlab.cli import check, predict, report, reproduce, run, schemes, sweep, tune, workloads
from fctlab.cli._common import EXIT_BAD_INPUT, EXIT_FAILED

# (the exit codes, and the commands whose names are not also a command group's module, at their old paths for
# one release: ``fctlab.cli.run`` and the like are now the modules, the commands one level down)
from fctlab.cli.reproduce import demo
from fctlab.cli.run import calibrate, compare

__all__ = ["app", "main", "EXIT_BAD_INPUT", "EXIT_FAILED", "calibrate", "compare", "demo"]

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
