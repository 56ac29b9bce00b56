"""Recipe ``demo`` (also ``fctlab demo``): a small version of the PIAS comparison, the README's main job.

DCTCP, PIAS and pFabric on a 32-host leaf-spine with the PIAS ns-2 delays, switch settings and TCP
(:mod:`fctlab.recipes.pias`), web search at load 0.6. It has no paper statements; its report compares the three
bin by bin.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fctlab.recipes.common import Points, Recipe, check_scale
from fctlab.recipes.pias import Scale, Variant, pias_point

DEMO_VARIANTS = (
    Variant("DCTCP", "dctcp", queues=1),
    Variant("PIAS", "pias", queues=8, thresholds="derived"),
    Variant("pFabric", "pfabric", preset="pias"),
)
#: Flows per run at each scale.
DEMO_FLOWS = {"tiny": 200, "small": 2_000, "paper": 20_000}


def demo_sweep(scale: str = "small"):
    """DCTCP, PIAS (8 queues, thresholds by the PIAS paper's method for web search at load 0.6) and pFabric (as
    PIAS ran it) on a 32-host leaf-spine (4 leaves x 8 hosts, 2 spines, 10/40 Gbps, PIAS ns-2 delays, switch
    settings and TCP), web search at load 0.6, 2,000 flows (the first and last tenth not measured): a minute or
    less on 2 cores."""
    from fctlab.sweep import Sweep

    flows = check_scale(scale, DEMO_FLOWS)
    sc = Scale(loads=(0.6,), flows=flows, warmup_flows=flows // 10, cooldown_flows=flows // 10)
    b = Points()
    for variant in DEMO_VARIANTS:
        raw = pias_point(variant, "websearch", 0.6, sc, seed=1)
        raw["name"] = "demo"
        raw["topology"].update(leaves=4, hosts_per_leaf=8, spines=2)
        b.add({"variant": variant.label}, raw)
    return Sweep(name=f"demo-{scale}", axes={"variant": [v.label for v in DEMO_VARIANTS]}, points=b.points)


def no_claims(results_dir: str | Path) -> list[Any]:
    return []


RECIPE = Recipe(
    name="demo",
    summary="a small DCTCP vs PIAS vs pFabric comparison (the README's main job)",
    sweep=demo_sweep,
    claims=no_claims,
)
