"""Synthetic imprecise size information for any workload (``[workload] size_error``): the columns a trained
predictor writes (``estimate_bytes``; ``lower_bytes`` and ``upper_bytes``), drawn from a stated error model instead,
so that a study of imprecise sizes (``scheme.size_info``) needs no trained model and its error is known exactly.

Two models:

* ``{model = "lognormal", sigma = s}``: a multiplicative log-normal error, ``estimate = size x exp(s Z)`` with
  Z ~ N(0, 1) per flow, rounded to a whole byte (at least 1). The ratio estimate / size has median 1 and its
  logarithm standard deviation ``s``: ``s = 0.5`` puts half the estimates within a factor 1.4 of the truth and
  95% within a factor 2.7; ``s = 2`` is wrong by more than 3.9x for half the flows.
* ``{model = "bounds", coverage = c, width = w}``: an interval [lower, upper] with ``upper / lower = w`` around
  a noisy centre: in logarithms the centre is ``ln size + t Z`` and the interval ``centre -+ ln(w) / 2``, with
  ``t`` chosen so that the interval holds the true size with probability ``c`` (``t = (ln(w) / 2) /
  Phi^-1((1 + c) / 2)``; ``c = 1`` centres every interval on the true size). lower is rounded down, upper up (a
  size inside the real interval stays inside). The centre, rounded, is written as ``estimate_bytes`` too, so one
  draw gives a scheme a point estimate consistent with its bounds (its log-error standard deviation is ``t``).

Each model draws from its own generator, seeded from the experiment's seed and a fixed stream tag, after the
flows: the flows are the same with or without a model, and every sigma (or width) reuses the same Z per flow, so
a sweep over sigma changes only the error's scale (common random numbers). Deterministic from the seed.
"""

from __future__ import annotations

import math
from statistics import NormalDist
from typing import Any

import numpy as np

__all__ = ["SIZE_ERROR_MODELS", "SIZE_ERROR_STREAM", "size_error_columns", "bounds_spread"]

#: The models and their keys.
SIZE_ERROR_MODELS = {"lognormal": ("sigma",), "bounds": ("coverage", "width")}
#: The tag that separates the error's random stream from the flows' (numpy SeedSequence entropy: [seed, tag]).
SIZE_ERROR_STREAM = 0x51_2E_E7


def bounds_spread(coverage: float, width: float) -> float:
    """The standard deviation (natural log) of the bounds' centre that makes an interval of ``width`` (upper /
    lower) hold the true size with probability ``coverage``."""
    half = math.log(width) / 2.0
    if coverage >= 1.0:
        return 0.0
    return half / NormalDist().inv_cdf((1.0 + coverage) / 2.0)


def size_error_columns(size_bytes: np.ndarray, seed: int, model: dict[str, Any]) -> dict[str, np.ndarray]:
    """The columns model ``model`` (a validated ``workload.size_error``) writes for flows of ``size_bytes``:
    ``estimate_bytes`` (lognormal), or ``lower_bytes``, ``upper_bytes`` and ``estimate_bytes`` (bounds), as
    uint64 arrays, drawn from the generator of (``seed``, :data:`SIZE_ERROR_STREAM`)."""
    size = np.asarray(size_bytes, dtype=np.float64)
    rng = np.random.default_rng([int(seed), SIZE_ERROR_STREAM])
    z = rng.standard_normal(len(size))
    if model["model"] == "lognormal":
        est = np.maximum(1.0, np.rint(size * np.exp(float(model["sigma"]) * z)))
        return {"estimate_bytes": est.astype(np.uint64)}
    width = float(model["width"])
    t = bounds_spread(float(model["coverage"]), width)
    log_centre = np.log(np.maximum(size, 1.0)) + t * z
    half = math.log(width) / 2.0
    lower = np.floor(np.exp(log_centre - half))
    upper = np.maximum(np.ceil(np.exp(log_centre + half)), lower)
    est = np.maximum(1.0, np.rint(np.exp(log_centre)))
    return {"lower_bytes": lower.astype(np.uint64), "upper_bytes": upper.astype(np.uint64),
            "estimate_bytes": est.astype(np.uint64)}
