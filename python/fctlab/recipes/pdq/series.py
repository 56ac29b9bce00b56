"""What the PDQ recipe's figures share: its series (one constant), the tree's link delay, query aggregation's
mean size and deadline, and reading the recipe's runs back."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fctlab.recipes.common import RunRow, available
from fctlab.recipes.common import load_runs as recipe_runs

__all__ = ["DEADLINE_MS", "LINK_DELAY_NS", "MEAN_KB", "SCHEMES", "TCP_2012", "RunRow", "Series", "available",
           "load_runs"]


@dataclass(frozen=True)
class Series:
    """One line of a figure: a scheme, with its own ``[scheme]`` keys and ``[transport]`` keys."""

    label: str
    scheme: str
    keys: tuple[tuple[str, Any], ...] = ()
    transport: tuple[tuple[str, Any], ...] = ()


#: TCP as the PDQ paper's era ran it, beside the engine's TCP: a handshake before the data, an initial window of
#: 2 segments (ns-2's ``windowInit_`` default of the time; Linux used 3, RFC 3390, until 2.6.39 in 2011) and an
#: RTOmin of 200 ms (ns-2's ``minrto_`` and Linux's ``TCP_RTO_MIN``), which the incast the paper names for TCP's
#: many-flow slowdown comes from. The paper gives none of these; the engine's own TCP (no handshake, 10
#: segments, 200 us RTOmin) is today's datacenter TCP.
TCP_2012: tuple[tuple[str, Any], ...] = (("handshake", True), ("init_cwnd_packets", 2), ("rto_min_us", 200_000.0))


#: The schemes of Figures 3, 4 and 9, in the paper's order; the first is the reference of the normalised figures.
SCHEMES: tuple[Series, ...] = (
    Series("PDQ(Full)", "pdq"),
    Series("PDQ(ES+ET)", "pdq-es-et"),
    Series("PDQ(ES)", "pdq-es"),
    Series("PDQ(Basic)", "pdq-basic"),
    Series("D3", "d3"),
    Series("RCP", "rcp"),
    Series("TCP", "tcp"),
    Series("TCP (2012)", "tcp", transport=TCP_2012),
)
#: Every link's propagation delay (ns): base RTT 129 us across the root switch.
LINK_DELAY_NS = 10_000
#: Flow sizes are uniform with this mean (KB); deadlines exponential with this mean (ms).
MEAN_KB = 100
DEADLINE_MS = 20.0


def load_runs(results_dir: str | Path) -> list[RunRow]:
    """Every run of the recipe in ``results_dir`` with its sweep values."""
    return recipe_runs(results_dir, ("figure",))
