"""A scheme's facts live in its row of the engine's scheme table (``config::SCHEMES``, read here through
``fctlab.scheme_table``), not in Python: no module of the package outside the recipes (which are experiments:
data that names the schemes they compare) writes a scheme's name as a string. A new scheme then needs no
Python edit."""

from __future__ import annotations

import ast
from pathlib import Path

from fctlab import scheme_table

PACKAGE = Path(__file__).resolve().parents[1] / "python" / "fctlab"

#: Literals equal to a scheme's name that mean something else, as (module path, literal): why.
NOT_SCHEMES = {
    ("simulation.py", "qclimb"): "the trace's `qclimb` flow column",
    ("workloads/trace.py", "qclimb"): "the trace's `qclimb` flow column, and QCLIMB's tagging (a row's `tagging`)",
    ("workloads/trace.py", "tcp"): "the TCP family (a row's `family`), whose schemes read some trace columns",
    ("workloads/trace.py", "homa"): "the Homa family (a row's `family`)",
    ("workloads/trace.py", "pfabric"): "pFabric's rank queue (a row's `rank_queue`)",
    ("workloads/trace.py", "d3"): "D3's protocol (a row's `protocol`), which reads deadlines",
    ("workloads/trace.py", "pdq"): "PDQ's protocol (a row's `protocol`), which reads deadlines",
    ("results.py", "qclimb"): "flows.parquet's `qclimb` column",
    ("cli/reproduce.py", "pias"): "the recipe named pias (its --thresholds option)",
    ("check.py", "qclimb"): "the trace's `qclimb` flow column, and the tagging (a row's `tagging`) that reads it",
}


def scheme_literals(names: set[str]) -> list[tuple[str, int, str]]:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel.startswith("recipes/") or rel.startswith("reproduce"):
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in names:
                found.append((rel, node.lineno, node.value))
    return found


def test_python_names_no_scheme_outside_the_recipes():
    names = {row["name"] for row in scheme_table.rows()}
    assert {"pias", "homa", "pdq-es-et"} <= names  # the rows are read, not empty
    stray = [f for f in scheme_literals(names) if (f[0], f[2]) not in NOT_SCHEMES]
    assert not stray, f"scheme names written in Python (their facts belong in the engine's rows): {stray}"
    seen = {(f[0], f[2]) for f in scheme_literals(names)}
    assert set(NOT_SCHEMES) <= seen, f"remove from NOT_SCHEMES: {set(NOT_SCHEMES) - seen}"


def test_the_scan_finds_a_scheme_name(tmp_path, monkeypatch):
    (tmp_path / "mod.py").write_text('RANKED = ("pfabric", "las")\n')
    monkeypatch.setattr(f"{__name__}.PACKAGE", tmp_path)
    assert scheme_literals({"pfabric", "las", "pias"}) == [("mod.py", 1, "pfabric"), ("mod.py", 1, "las")]


def test_threshold_schemes_and_timers_come_from_the_rows():
    assert scheme_table.threshold_schemes() == tuple(r["name"] for r in scheme_table.rows() if r["needs_thresholds"])
    assert set(scheme_table.threshold_schemes()) == {"pias", "qclimb"}
    timers = {r["name"]: r["timer"] for r in scheme_table.rows()}
    assert timers["homa"] == {"key": "scheme.homa_resend_timeout_us", "label": "RESEND after"}
    assert all(t == {"key": "transport.rto_min_us", "label": "RTOmin"} for n, t in timers.items() if n != "homa")
