"""Old home of the ``report``, ``thresholds`` and ``hyline-band`` commands, kept for one release: they now live
in :mod:`fctlab.cli.report`."""

from fctlab.cli.report import EXIT_BAD_INPUT, EXIT_FAILED, hyline_band, register, report, thresholds

__all__ = ["register", "report", "thresholds", "hyline_band", "EXIT_FAILED", "EXIT_BAD_INPUT"]
