"""fctlab's Python import rules, checked on the source (the AST of every module under python/fctlab):

1. no module imports another module's private name: ``from fctlab.x import _name``, ``import fctlab.x._y``, or
   ``x._name`` read off an imported fctlab module ``x``. A module whose own name is private (``fctlab.cli._common``)
   may be imported by its package's modules only. ``fctlab._core`` is the compiled binding, and public to all.
2. no import circle among fctlab modules. Both module-level and function-level (lazy) imports count, since a
   lazy import is still a dependency; imports under ``if TYPE_CHECKING:`` do not (they never run). A package's
   ``__init__`` is not counted as imported by its submodules (Python runs it first, but the submodule does not
   depend on it).

A violation that has to exist for a while is listed in ALLOWED_PRIVATE / ALLOWED_CIRCLES below (both empty), so
that it is in plain sight and any other fails.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1] / "python"
PACKAGE = ROOT / "fctlab"
BINDING = "fctlab._core"

# Violations allowed, each as (importing module, what it reaches for): none. The sets stay so that a
# violation that must exist for a while is listed here, in plain sight, and removed when fixed.
ALLOWED_PRIVATE: set[tuple[str, str]] = set()
# Circles allowed, each as the set of modules on it: none.
ALLOWED_CIRCLES: set[frozenset[str]] = set()


def module_name(path: Path, root: Path = ROOT) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules(package: Path = PACKAGE, root: Path = ROOT) -> dict[str, Path]:
    return {module_name(p, root): p for p in sorted(package.rglob("*.py"))}


def _is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    """ids of the nodes under ``if TYPE_CHECKING:`` blocks."""
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and (
            (isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING")
            or (isinstance(node.test, ast.Attribute) and node.test.attr == "TYPE_CHECKING")
        ):
            for child in node.body:
                skip |= {id(n) for n in ast.walk(child)}
    return skip


def _resolve(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    base = module.split(".")
    if not is_package:
        base = base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def imports(module: str, path: Path, known: set[str]) -> Iterator[tuple[str, str | None, int]]:
    """(imported module, name taken from it or None, line) for every fctlab import that runs."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    skip = _type_checking_nodes(tree)
    is_package = path.name == "__init__.py"
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "fctlab":
                    yield alias.name, None, node.lineno
        elif isinstance(node, ast.ImportFrom):
            target = _resolve(module, is_package, node)
            if target.split(".")[0] != "fctlab":
                continue
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                if sub in known:  # ``from fctlab import workloads``: the submodule itself
                    yield sub, None, node.lineno
                else:
                    yield target, alias.name, node.lineno


def attribute_reads(path: Path, known: set[str]) -> Iterator[tuple[str, str, int]]:
    """(module, private attribute, line) for ``x._name`` where ``x`` is a name bound to a fctlab module by an import."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    bound: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and not node.level and node.module and node.module.startswith("fctlab"):
            for alias in node.names:
                if f"{node.module}.{alias.name}" in known:
                    bound[alias.asname or alias.name] = f"{node.module}.{alias.name}"
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname and alias.name in known:
                    bound[alias.asname] = alias.name
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in bound
                and _is_private(node.attr)):
            yield bound[node.value.id], node.attr, node.lineno


def private_violations(mods: dict[str, Path]) -> list[tuple[str, str, int]]:
    """(importing module, reached name, line) for every import of another module's private name."""
    known = set(mods)
    found = []
    for module, path in mods.items():
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        reached = [(t, n, line) for t, n, line in imports(module, path, known)]
        reached += [(t, n, line) for t, n, line in attribute_reads(path, known)]
        for target, name, line in reached:
            if target == BINDING or target == module:
                continue
            full = f"{target}.{name}" if name else target
            parts = full.split(".")
            for i, part in enumerate(parts[1:], start=1):
                if not _is_private(part):
                    continue
                owner = ".".join(parts[:i])  # the package or module that owns the private name
                if ".".join(parts[: i + 1]) == BINDING:
                    continue
                # a private submodule is open to its own package's modules (and their subpackages)
                if ".".join(parts[: i + 1]) in known and (package == owner or package.startswith(owner + ".")):
                    continue
                found.append((module, full, line))
                break
    return found


def import_graph(mods: dict[str, Path]) -> dict[str, set[str]]:
    known = set(mods)
    graph: dict[str, set[str]] = {m: set() for m in mods}
    for module, path in mods.items():
        for target, _name, _line in imports(module, path, known):
            while target and target not in known:  # ``import fctlab.x.y`` of an unknown name: its module
                target = target.rpartition(".")[0]
            if target and target != module and target != "fctlab":
                graph[module].add(target)
    return graph


def circles(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[frozenset[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = set()
            while True:
                w = stack.pop()
                on.discard(w)
                comp.add(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(frozenset(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_no_module_imports_another_modules_private_names():
    found = [v for v in private_violations(modules()) if (v[0], v[1]) not in ALLOWED_PRIVATE]
    assert not found, "private names imported across modules (make them public in their home):\n" + "\n".join(
        f"  {m} line {line}: {name}" for m, name, line in found)


def test_allowlist_holds_only_violations_that_exist():
    seen = {(m, name) for m, name, _ in private_violations(modules())}
    assert ALLOWED_PRIVATE <= seen, f"fixed, remove from ALLOWED_PRIVATE: {sorted(ALLOWED_PRIVATE - seen)}"
    found = set(circles(import_graph(modules())))
    assert ALLOWED_CIRCLES <= found, f"fixed, remove from ALLOWED_CIRCLES: {ALLOWED_CIRCLES - found}"


def test_no_import_circle():
    found = [c for c in circles(import_graph(modules())) if c not in ALLOWED_CIRCLES]
    assert not found, "import circles among fctlab modules:\n" + "\n".join(f"  {sorted(c)}" for c in found)


# The checks themselves, on a small package written for the test: each must fail on a new violation.


def _write(root: Path, files: dict[str, str]) -> dict[str, Path]:
    for rel, text in files.items():
        p = root / "fctlab" / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return modules(root / "fctlab", root)


@pytest.mark.parametrize("source, reached", [
    ("from fctlab.a import _hidden\n", "fctlab.a._hidden"),
    ("def f():\n    from fctlab.a import _hidden\n", "fctlab.a._hidden"),
    ("from fctlab import a\nx = a._hidden\n", "fctlab.a._hidden"),
    ("from fctlab.pkg._inner import thing\n", "fctlab.pkg._inner.thing"),
])
def test_a_new_private_import_is_caught(tmp_path, source, reached):
    mods = _write(tmp_path, {"__init__.py": "", "a.py": "_hidden = 1\n", "pkg/__init__.py": "",
                             "pkg/_inner.py": "thing = 1\n", "b.py": source})
    assert [(m, name) for m, name, _ in private_violations(mods)] == [("fctlab.b", reached)]


def test_allowed_imports_are_not_caught(tmp_path):
    mods = _write(tmp_path, {
        "__init__.py": "", "a.py": "public = 1\n_own = 2\nprint(_own)\n",
        "pkg/__init__.py": "from fctlab.pkg._inner import thing\n", "pkg/_inner.py": "thing = 1\n",
        "pkg/user.py": "from fctlab.pkg._inner import thing\nfrom fctlab import _core\nfrom fctlab.a import public\n",
        "b.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from fctlab.a import _own\n",
    })
    assert private_violations(mods) == []


@pytest.mark.parametrize("a_source", [
    "from fctlab.b import y\n",
    "def f():\n    from fctlab import b\n",
    "import fctlab.b\n",
])
def test_a_new_circle_is_caught(tmp_path, a_source):
    mods = _write(tmp_path, {"__init__.py": "", "a.py": a_source + "x = 1\n", "b.py": "from fctlab.a import x\ny = 2\n",
                             "c.py": "from fctlab.a import x\n"})
    assert circles(import_graph(mods)) == [frozenset({"fctlab.a", "fctlab.b"})]


def test_type_checking_imports_make_no_circle(tmp_path):
    mods = _write(tmp_path, {
        "__init__.py": "", "a.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from fctlab.b import y\nx = 1\n",
        "b.py": "from fctlab.a import x\ny = 2\n",
    })
    assert circles(import_graph(mods)) == []
