"""Argument checks shared by the workload modules, and the one error they raise.

Every check raises :class:`WorkloadError` with a message naming the argument, so that a caller (the command
line, an experiment file) can point at the key at fault.
"""

from __future__ import annotations

import math
import operator
from typing import Any

import numpy as np

__all__ = [
    "WorkloadError", "U32_MAX", "I64_MAX", "check_int", "check_positive", "check_nonnegative", "check_load",
    "check_rng", "fmt_number", "first_true",
]

# flow_id, src and dst are uint32 in the flow table.
U32_MAX = int(np.iinfo(np.uint32).max)
I64_MAX = int(np.iinfo(np.int64).max)


class WorkloadError(ValueError):
    """A workload file, trace or generator argument is invalid. The message names the culprit."""


def check_int(what: str, value: Any, *, minimum: int | None = None, maximum: int | None = None) -> int:
    if isinstance(value, (bool, np.bool_)):
        raise WorkloadError(f"{what} must be an integer, got {value!r}")
    try:
        v = operator.index(value)
    except TypeError:
        raise WorkloadError(f"{what} must be an integer, got {value!r}") from None
    if minimum is not None and v < minimum:
        raise WorkloadError(f"{what} must be >= {minimum}, got {v}")
    if maximum is not None and v > maximum:
        raise WorkloadError(f"{what} must be <= {maximum}, got {v}")
    return v


def check_positive(what: str, value: Any) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise WorkloadError(f"{what} must be a positive number, got {value!r}") from None
    if isinstance(value, bool) or not math.isfinite(v) or v <= 0:
        raise WorkloadError(f"{what} must be a positive finite number, got {value!r}")
    return v


def check_load(load: Any) -> float:
    v = check_positive("load", load)
    if v > 1.0:
        raise WorkloadError(f"load must be within (0, 1], got {load!r}")
    return v


def check_rng(rng: Any) -> np.random.Generator:
    if not isinstance(rng, np.random.Generator):
        raise WorkloadError(
            f"rng must be a numpy.random.Generator (numpy.random.default_rng(seed)), got {type(rng).__name__}"
        )
    return rng


def check_nonnegative(what: str, value: Any) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise WorkloadError(f"{what} must be a number >= 0, got {value!r}") from None
    if isinstance(value, bool) or not math.isfinite(v) or v < 0:
        raise WorkloadError(f"{what} must be a finite number >= 0, got {value!r}")
    return v


def fmt_number(value: Any) -> str:
    """A number as a user wrote it: 300, 10.5, nan (numpy scalars would print as np.float64(...))."""
    v = float(value)
    return str(int(v)) if v.is_integer() else repr(v)


def first_true(mask: np.ndarray) -> int | None:
    idx = np.flatnonzero(mask)
    return int(idx[0]) if len(idx) else None
