"""Old home of the ``fctlab sweep`` command, kept for one release: it now lives in :mod:`fctlab.cli.sweep`."""

from fctlab.cli.sweep import Terminated, register, signals_interrupt, sweep

__all__ = ["register", "sweep", "signals_interrupt", "Terminated"]
