"""The recipes package: one registry that imports nothing until asked, a Recipe value per name, the old module
paths still working, and the package's import rules (no circle, no other module's private names)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from fctlab import recipes, reproduce
from fctlab.recipes.common import Recipe

PACKAGE = Path(recipes.__file__).parent
#: Private names of modules outside the recipes that a recipe may import: the engine's binding only.
PRIVATE_ALLOWED = {("fctlab", "_core")}


def test_importing_the_registry_imports_no_recipe():
    code = ("import sys, fctlab.recipes as r; "
            "print(sorted(m for m in sys.modules if m.startswith('fctlab.recipes.')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_every_name_gives_its_recipe():
    assert recipes.names() == ("pias", "demo", "qclimb-testbed", "qclimb-sim", "pdq", "homa", "rax", "hyline",
                               "information")
    for name in recipes.names():
        r = recipes.get(name)
        assert isinstance(r, Recipe) and r.name == name and r.summary
        assert callable(r.sweep) and callable(r.claims)
    with pytest.raises(ValueError, match="recipe: unknown 'nope'; known: pias, demo"):
        recipes.get("nope")


def test_old_tables_are_views_of_the_registry():
    assert list(reproduce.RECIPES) == list(recipes.names())
    assert set(reproduce.RECIPE_TABLES) == {"qclimb-testbed", "qclimb-sim", "pdq", "homa", "rax", "hyline",
                                            "information"}
    assert set(reproduce.RECIPE_PHASES) == {"pdq"}
    sweep, claims, summary = reproduce.RECIPES["rax"]
    assert (sweep, claims, summary) == (recipes.get("rax").sweep, recipes.get("rax").claims,
                                        recipes.get("rax").summary)
    assert reproduce.RECIPE_TABLES.get("pias", reproduce.comparison_tables) is reproduce.comparison_tables
    with pytest.raises(ValueError, match="thresholds: only recipe pias"):
        reproduce.recipe_sweep("rax", "tiny", "unused", thresholds="ns2")


def test_old_module_paths_are_the_new_modules():
    from fctlab import reproduce_homa, reproduce_hyline, reproduce_pdq, reproduce_pdq_scale, reproduce_rax
    from fctlab.recipes import homa, hyline, rax
    from fctlab.recipes.pdq import recipe, scale

    assert reproduce_homa is homa and reproduce_hyline is hyline and reproduce_rax is rax
    assert reproduce_pdq is recipe and reproduce_pdq_scale is scale


def _module_name(path: Path) -> str:
    rel = path.relative_to(PACKAGE.parent.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(path: Path) -> list[tuple[str, str | None]]:
    """(module, name) for every ``from module import name`` and (module, None) for every ``import module`` in
    the file, at any depth."""
    out: list[tuple[str, str | None]] = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out += [(node.module, a.name) for a in node.names]
        elif isinstance(node, ast.Import):
            out += [(a.name, None) for a in node.names]
    return out


def test_recipes_import_no_circle_and_no_private_name():
    modules = {_module_name(p): p for p in PACKAGE.rglob("*.py")}
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for m, path in modules.items():
        for module, name in _imports(path):
            target = f"{module}.{name}" if name and f"{module}.{name}" in modules else module
            if target in modules and target != m:
                graph[m].add(target)
            if name and name.startswith("_") and not name.startswith("__") and target not in modules:
                assert (module, name) in PRIVATE_ALLOWED, f"{m} imports the private {module}.{name}"
    seen: dict[str, int] = {}

    def visit(m: str, stack: list[str]) -> None:
        if seen.get(m) == 1:
            raise AssertionError("import circle: " + " -> ".join([*stack, m]))
        if seen.get(m) == 2:
            return
        seen[m] = 1
        for n in sorted(graph[m]):
            visit(n, [*stack, m])
        seen[m] = 2

    for m in sorted(graph):
        visit(m, [])
