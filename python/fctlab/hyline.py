"""Old home of HyLine's threshold band, kept for one release: it now lives in :mod:`fctlab.theory.hyline_band`."""

from fctlab.theory.hyline_band import (
    FIRST_CLASS_SHARE,
    Band,
    BandError,
    band,
    first_class_share,
    mean_size,
    moments_below,
    plot_band,
    waiting_time,
)

__all__ = [
    "FIRST_CLASS_SHARE", "Band", "BandError", "band", "first_class_share", "mean_size", "moments_below", "plot_band",
    "waiting_time",
]
