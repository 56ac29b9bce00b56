"""Reproduction recipes: each runs one paper's key comparison and sets fctlab's numbers beside the paper's
statements in the HTML report (``fctlab reproduce NAME``).

:data:`REGISTRY` is the one table of recipes: a name and where its :class:`~fctlab.recipes.common.Recipe`
value lives (``module:attribute``). Importing this package imports no recipe; :func:`get` imports the one asked
for (some pull in pandas, the predictor's libraries or matplotlib). :mod:`fctlab.recipes.runner` runs a recipe
and writes its report.

Adding a recipe: a module here exporting a ``Recipe`` (copy a small one: :mod:`fctlab.recipes.rax`) whose claims
function returns :class:`fctlab.claims.Claim` records with stable ids, one row below, its paper in
:data:`fctlab.claims.PAPERS`, a page in docs/ with a generated claims table (``<!-- claims:NAME-SCALE -->``, filled
from docs/claims/NAME-SCALE.json by ``python -m fctlab.claims docs``) and a test in tests/.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fctlab.recipes.common import Recipe

#: name -> "module:attribute" of its Recipe value, in the order the CLI lists them.
REGISTRY: dict[str, str] = {
    "pias": "fctlab.recipes.pias:RECIPE",
    "demo": "fctlab.recipes.demo:RECIPE",
    "qclimb-testbed": "fctlab.recipes.qclimb:TESTBED_RECIPE",
    "qclimb-sim": "fctlab.recipes.qclimb:SIM_RECIPE",
    "pdq": "fctlab.recipes.pdq.recipe:RECIPE",
    "homa": "fctlab.recipes.homa:RECIPE",
    "rax": "fctlab.recipes.rax:RECIPE",
    "hyline": "fctlab.recipes.hyline:RECIPE",
    "information": "fctlab.recipes.information:RECIPE",
}


def names() -> tuple[str, ...]:
    """Every recipe's name, without importing any."""
    return tuple(REGISTRY)


def get(name: str) -> Recipe:
    """Recipe ``name`` (its module imported now); ValueError naming the known ones when there is none."""
    if name not in REGISTRY:
        raise ValueError(f"recipe: unknown {name!r}; known: {', '.join(REGISTRY)}")
    module, _, attribute = REGISTRY[name].partition(":")
    recipe: Recipe = getattr(import_module(module), attribute)
    return recipe
