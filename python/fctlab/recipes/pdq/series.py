"""What the PDQ recipe's figures share: its series (one constant), the tree's link delay, query aggregation's
mean size and deadline, and reading the recipe's runs back."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fctlab.recipes.common import RunRow, available
from fctlab.recipes.common import load_runs as recipe_runs

__all__ = ["DEADLINE_MS", "LINK_DELAY_NS", "MEAN_KB", "SCHEMES", "RunRow", "Series", "available", "load_runs"]


@dataclass(frozen=True)
class Series:
    """One line of a figure: a scheme, with its own ``[scheme]`` keys."""

    label: str
    scheme: str
    keys: tuple[tuple[str, Any], ...] = ()


#: The schemes of Figures 3, 4 and 9, in the paper's order; the first is the reference of the normalised figures.
SCHEMES: tuple[Series, ...] = (
    Series("PDQ(Full)", "pdq"),
    Series("PDQ(ES+ET)", "pdq-es-et"),
    Series("PDQ(ES)", "pdq-es"),
    Series("PDQ(Basic)", "pdq-basic"),
    Series("D3", "d3"),
    Series("RCP", "rcp"),
    Series("TCP", "tcp"),
)
#: Every link's propagation delay (ns): base RTT 129 us across the root switch.
LINK_DELAY_NS = 10_000
#: Flow sizes are uniform with this mean (KB); deadlines exponential with this mean (ms).
MEAN_KB = 100
DEADLINE_MS = 20.0


def load_runs(results_dir: str | Path) -> list[RunRow]:
    """Every run of the recipe in ``results_dir`` with its sweep values."""
    return recipe_runs(results_dir, ("figure",))
