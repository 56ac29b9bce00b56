"""The recipes' old home, kept for one release: the recipes live in :mod:`fctlab.recipes` (the registry),
:mod:`fctlab.recipes.runner` (running one) and one module per paper (:mod:`fctlab.recipes.pias`,
:mod:`fctlab.recipes.demo`, ...). This module keeps the names it had: recipe pias's and the demo's, and the recipe
tables as views of the registry that import a recipe only when it is asked for.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

from fctlab import recipes
from fctlab.recipes.common import SCALES, Recipe, comparison_tables
from fctlab.recipes.demo import DEMO_VARIANTS, demo_sweep, no_claims
from fctlab.recipes.pias import (
    PIAS_NS2, PIAS_SCALES, PIAS_THRESHOLDS, PIAS_VARIANTS, PIAS_WORKLOADS, Scale, Variant, pias_base, pias_claims,
    pias_point, pias_sweep, pias_variants,
)
from fctlab.recipes.runner import build, reproduce, tables

__all__ = [
    "DEMO_VARIANTS", "PIAS_NS2", "PIAS_SCALES", "PIAS_THRESHOLDS", "PIAS_VARIANTS", "PIAS_WORKLOADS", "RECIPES",
    "RECIPE_PHASES", "RECIPE_TABLES", "SCALES", "Scale", "Variant", "comparison_tables", "demo_sweep", "no_claims",
    "pias_base", "pias_claims", "pias_point", "pias_sweep", "pias_variants", "recipe_sweep", "recipe_tables",
    "reproduce",
]


class _View(Mapping[str, Any]):
    """A read-only view of the registry: name -> ``pick(recipe)``, for the recipes where that is not None. Testing
    a name imports that recipe only; iterating imports them all."""

    def __init__(self, pick: Callable[[Recipe], Any]) -> None:
        self._pick = pick

    def __getitem__(self, name: str) -> Any:
        if name not in recipes.REGISTRY:
            raise KeyError(name)
        value = self._pick(recipes.get(name))
        if value is None:
            raise KeyError(name)
        return value

    def __contains__(self, name: object) -> bool:
        try:
            self[name]  # type: ignore[index]
        except KeyError:
            return False
        return True

    def __iter__(self) -> Iterator[str]:
        return (name for name in recipes.REGISTRY if name in self)

    def __len__(self) -> int:
        return sum(1 for _ in self)


class _Recipes(_View):
    """name -> (sweep function, claims function, summary), every recipe; the names are known without importing
    any recipe."""

    def __init__(self) -> None:
        super().__init__(lambda r: (r.sweep, r.claims, r.summary))

    def __contains__(self, name: object) -> bool:
        return name in recipes.REGISTRY

    def __iter__(self) -> Iterator[str]:
        return iter(recipes.REGISTRY)

    def __len__(self) -> int:
        return len(recipes.REGISTRY)


#: name -> (sweep function, claims function, summary).
RECIPES: Mapping[str, tuple[Callable[..., Any], Callable[[str | Path], list[Any]], str]] = _Recipes()
#: Recipes with their own result tables (the others: :func:`comparison_tables`).
RECIPE_TABLES: Mapping[str, Callable[[str | Path], list[tuple[str, str]]]] = _View(lambda r: r.tables)
#: Recipes with runs that depend on earlier results: (scale, out_dir) -> the sweeps to run after the first.
RECIPE_PHASES: Mapping[str, Callable[[str, str | Path], Any]] = _View(lambda r: r.phases)


def recipe_sweep(name: str, scale: str, out_dir: str | Path, thresholds: str | None = None):
    """The sweep of recipe ``name`` at ``scale``, writing into ``out_dir`` (:func:`fctlab.recipes.runner.build`)."""
    return build(name, scale, out_dir, thresholds)


def recipe_tables(name: str, results_dir: str | Path) -> list[tuple[str, str]]:
    """(title, plain-text table) pairs for recipe ``name``'s results (:func:`fctlab.recipes.runner.tables`)."""
    return tables(name, results_dir)
