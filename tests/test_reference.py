"""The generated references (docs/reference/, ``python -m fctlab.reference``): current, complete, and true to what
the engine parses and a run writes."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

import pandas as pd
import pytest

from fctlab import _core, reference

REPO = Path(__file__).resolve().parents[1]


def test_the_reference_pages_are_current():
    stale = [str(p.relative_to(REPO)) for p in reference.stale()]
    assert not stale, f"stale: {stale}; regenerate with `python -m fctlab.reference`"


def test_check_fails_on_a_stale_page_and_writing_fixes_it(tmp_path, monkeypatch):
    monkeypatch.setattr(reference, "REFERENCE", tmp_path / "reference")
    monkeypatch.setattr(reference, "REPO", tmp_path)
    assert reference.main(["--check"]) == 1, "missing pages are stale"
    assert reference.main([]) == 0
    assert reference.main(["--check"]) == 0
    page = tmp_path / "reference" / "keys.md"
    page.write_text(page.read_text().replace("Seed of the run", "Seed of a run"))
    assert reference.main(["--check"]) == 1


def test_every_key_has_a_meaning():
    assert reference.keys_without_meaning() == [], "write the doc comment (Rust) or docstring (pydantic) of these"


def test_every_engine_key_is_on_the_page():
    page = (REPO / "docs" / "reference" / "keys.md").read_text()
    defaults = json.loads(_core.defaults())
    for section, values in defaults.items():
        if section in ("seed", "topology"):
            continue
        for key in values:
            assert f"| `{key}` |" in page, f"{section}.{key}"
    for kind in _core.topology_kinds():
        for key in json.loads(_core.default_topology(kind)):
            assert f"| `{key}` |" in page or key == "kind", f"topology.{key} ({kind})"


def test_the_schema_defaults_are_the_engines():
    schema = reference.engine_schema()
    defaults = json.loads(_core.defaults())
    for section, prop in schema["properties"].items():
        assert prop["default"] == defaults[section], section
    for alt in schema["$defs"]["TopologyConfig"]["oneOf"]:
        kind = alt["properties"]["kind"]["const"]
        engine = json.loads(_core.default_topology(kind))
        assert {k: p["default"] for k, p in alt["properties"].items() if k != "kind"} == {
            k: v for k, v in engine.items() if k != "kind"
        }, kind


def test_enum_values_are_what_the_engine_accepts():
    rows = {r.key: r for rs in reference.key_rows().values() for r in rs}
    assert [v for v, _ in rows["run.fct_at"].variants] == ["receiver", "sender"]
    assert {v for v, _ in rows["scheme.name"].variants} == {n for n, _ in _core.schemes()}
    for value, _ in rows["switch.ecn"].variants:
        _core.validate_config(json.dumps({"switch": {"ecn": value}}))
    with pytest.raises(ValueError, match="switch.ecn"):
        _core.validate_config(json.dumps({"switch": {"ecn": "sometimes"}}))


def test_range_checks_are_read_from_the_engine_and_hold():
    checks = reference.range_checks()
    keys = {r.key for rs in reference.key_rows().values() for r in rs}
    assert len(checks) >= 90, "the patterns no longer find the engine's range checks"
    unknown = [k for k in checks if re.sub(r"^topology\.\w+\.", "topology.", k) not in keys]
    assert not unknown, f"checks of keys the schema lacks: {unknown}"
    assert checks["switch.queues"] == ["1 to 64"]
    assert checks["topology.fat_tree.k"] == ["must be an even number between 2 and 64"]
    assert checks["topology.bcube.k"] == ["0 to 11"]
    # the bounds the page states are the engine's: just inside passes, just outside is refused naming the key
    _core.validate_config(json.dumps({"switch": {"queues": 64}}))
    with pytest.raises(ValueError, match=r"^switch\.queues"):
        _core.validate_config(json.dumps({"switch": {"queues": 65}}))
    _core.validate_config(json.dumps({"topology": {"kind": "bcube", "k": 1, "n": 2}}))
    with pytest.raises(ValueError, match=r"^topology\.k"):
        _core.validate_config(json.dumps({"topology": {"kind": "bcube", "k": 12, "n": 2}}))


def test_the_experiment_schema_accepts_the_examples():
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads((REPO / "docs" / "reference" / "experiment.schema.json").read_text())
    validator = jsonschema.Draft202012Validator(schema)
    files = sorted((REPO / "examples").glob("*.toml"))
    assert files
    for path in files:
        errors = [e.message for e in validator.iter_errors(tomllib.loads(path.read_text()))]
        assert not errors, f"{path.name}: {errors}"
    bad = {"switch": {"queues": "eight"}, "workload": {"lode": 0.5}}
    assert len(list(validator.iter_errors(bad))) == 2


def test_trace_columns_are_the_ones_read_trace_takes_and_the_engine_receives():
    from fctlab.workloads.trace import TRACE_COLUMNS, TRACE_OPTIONAL, TRACE_REQUIRED

    engine = {c["name"] for c in json.loads(_core.flow_columns())}
    assert {c.engine for c in TRACE_COLUMNS} <= engine
    # every engine column a user can give comes from a trace column (cached_bytes comes from the workload)
    assert engine - {c.engine for c in TRACE_COLUMNS} == {"cached_bytes"}
    assert TRACE_REQUIRED + TRACE_OPTIONAL == tuple(c.name for c in TRACE_COLUMNS)
    assert all(c.type in ("integer", "number", "boolean") for c in TRACE_COLUMNS)
    page = (REPO / "docs" / "reference" / "trace-columns.md").read_text()
    rows = {cells[0]: cells for cells in (
        [c.strip() for c in line.strip("|").split("|")] for line in page.splitlines() if line.startswith("| [`")
    )}
    assert list(rows) == [f"[`{c.name}`](#{c.name})" for c in TRACE_COLUMNS]
    assert rows["[`qclimb`](#qclimb)"][1:] == ["boolean", "", "no", "refused", "`qclimb` (bool)"]
    assert rows["[`deadline_ns`](#deadline_ns)"][4] == "no deadline"
    src = page.split("### src")[1].split("###")[0]
    assert "Read by: every scheme." in src
    assert "Read by: `qclimb`." in page.split("### qclimb")[1]


def _dtype(series: pd.Series) -> str:
    if isinstance(series.dtype, pd.BooleanDtype):
        return "boolean"
    if pd.api.types.is_string_dtype(series.dtype) and series.dtype != object:
        return "string"
    return str(series.dtype)


def test_the_results_tables_are_what_a_run_writes(tmp_path):
    import fctlab
    from fctlab.config import experiment_from_dict
    from fctlab.results import BIN_KEYS, EXTRA_RESULT_COLUMNS, FLOW_RESULT_COLUMNS, SUMMARY_KEYS

    trace = tmp_path / "t.csv"
    pd.DataFrame({
        "src": [0, 1, 2, 3], "dst": [1, 2, 3, 0], "size_bytes": [1000, 20_000, 3000, 400_000],
        "start_ns": [0, 10, 20, 30], "lower_bytes": [500, 10_000, 1000, 1000],
        "upper_bytes": [2000, 30_000, 4000, 500_000], "estimate_bytes": [900, 20_000, 3000, 400_000],
        "after_flow": [-1, 0, -1, -1], "gen_rate_bps": [1e9] * 4, "qclimb": [1, 1, 0, 1],
    }).to_csv(trace, index=False)
    exp = experiment_from_dict(
        {"seed": 1, "name": "t", "topology": {"kind": "single_switch", "hosts": 4},
         "scheme": {"name": "qclimb", "thresholds_bytes": [10_000]}, "switch": {"queues": 2},
         "workload": {"trace": str(trace), "cached_fraction": 0.5}},
        base_dir=tmp_path,
    )
    result = fctlab.simulate(exp)
    flows = result.flows
    expected = [*FLOW_RESULT_COLUMNS, *(c for c in EXTRA_RESULT_COLUMNS if c.name in flows.columns)]
    assert list(flows.columns) == [c.name for c in expected]
    assert {c.name: _dtype(flows[c.name]) for c in expected} == {c.name: c.dtype for c in expected}
    documented = {k.name for k in SUMMARY_KEYS}
    assert set(result.summary) <= documented, set(result.summary) - documented
    assert set(result.summary["bins"]["small"]) == {k.name for k in BIN_KEYS}

    incast = experiment_from_dict(
        {"seed": 1, "name": "i", "topology": {"kind": "single_switch", "hosts": 4},
         "workload": {"pattern": "incast", "fan_in": 2, "response_bytes": 2000, "queries": 2, "query_rate_hz": 1000}},
        base_dir=tmp_path,
    )
    flows = fctlab.simulate(incast).flows
    assert _dtype(flows["query_id"]) == next(c.dtype for c in EXTRA_RESULT_COLUMNS if c.name == "query_id")


def test_pages_link_only_to_pages_that_exist():
    for page in (REPO / "docs" / "reference").glob("*.md"):
        for target in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", page.read_text()):
            if "://" not in target:
                assert (page.parent / target).resolve().exists(), f"{page.name}: {target}"
