"""The ``fctlab`` command line: one typer :data:`app` (built in ``fctlab.cli._app``) over one module per command
group.

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

``fctlab run EXPERIMENT [options]`` typed in its plain form is read without typer (``fctlab.cli._run``, the
same command body; typer's import and the building of every command's parameters were about 15% of a flow-level
run): :func:`main` hands anything else, ``--help`` and every error included, to the typer app. Importing this
package loads neither typer nor the command modules: :data:`app` and the commands re-exported here are imported
on first use.
"""

from __future__ import annotations

import sys
import threading
from importlib import import_module
from typing import Any

from fctlab.cli._common import EXIT_BAD_INPUT, EXIT_FAILED

__all__ = ["app", "main", "EXIT_BAD_INPUT", "EXIT_FAILED", "calibrate", "compare", "demo"]

# name -> module that defines it, imported on first use (the exit codes, and the commands whose names are not
# also a command group's module, stay at their old paths: ``fctlab.cli.run`` and the like are the modules, the
# commands one level down)
_LAZY = {"app": "fctlab.cli._app", "calibrate": "fctlab.cli.run", "compare": "fctlab.cli.run",
         "demo": "fctlab.cli.reproduce"}
#: The command modules, attributes of this package once imported (as they were when it imported them all).
_COMMAND_MODULES = ("check", "predict", "report", "reproduce", "run", "schemes", "sweep", "tune", "workloads")


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(import_module(_LAZY[name]), name)
    elif name in _COMMAND_MODULES:
        value = import_module(f"fctlab.cli.{name}")
    else:
        raise AttributeError(f"module 'fctlab.cli' has no attribute {name!r}")
    globals()[name] = value
    return value


def main() -> None:
    """Entry point of the ``fctlab`` script: ``fctlab run`` in its plain form without typer
    (:func:`fctlab.cli._run.main_without_typer`), anything else by the typer :data:`app`."""
    try:
        if sys.argv[1:2] == ["run"]:
            from fctlab.cli._run import main_without_typer

            code = main_without_typer(sys.argv[1:])
            if code is not None:
                sys.exit(code)
        from fctlab.cli._app import app

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
