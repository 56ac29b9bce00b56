"""The information recipe: every size-aware scheme with each level of size information on the same flows, the
refused fallbacks left out, its tables and claims computed from summaries written by hand (independent numbers),
and the whole recipe end to end at tiny scale."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from fctlab.cli import app
from fctlab.recipes import information as ri
from conftest import assert_claims_file


def test_points_cover_every_scheme_and_information_level():
    sweep = ri.information_sweep("small")
    by = {(p.values["scheme"], p.values["info"], p.values["workload.cdf"], p.values["load"]): p.experiment
          for p in sweep.points}
    levels = 1 + len(ri.SIGMAS) + 2  # exact, the estimates, bounds, none
    per = 1 + len(ri.SCHEMES) * levels - len(ri.NO_FALLBACK)
    assert len(by) == len(sweep.points) == 2 * 2 * per
    assert ("Homa", "none", "websearch", 0.5) not in by and ("HyLine", "none", "datamining", 0.8) not in by
    pf = by[("pFabric", "est s=0.5", "websearch", 0.8)]
    assert pf.engine["scheme"]["size_info"] == "estimate"
    assert pf.workload.size_error.model_dump() == {"model": "lognormal", "sigma": 0.5, "coverage": None,
                                                   "width": None}
    qc = by[("QCLIMB", "bounds", "datamining", 0.5)]
    assert qc.engine["scheme"]["size_info"] == "bounds" and qc.workload.size_error.coverage == 0.9
    assert qc.engine["scheme"]["thresholds_bytes"] == by[("PIAS", "none", "datamining", 0.5)].engine["scheme"][
        "thresholds_bytes"]
    assert by[("PDQ", "none", "websearch", 0.5)].engine["scheme"]["size_info"] == "none"
    # one fabric, one flow set per (workload, load): every run has the same seed, topology and routing
    for key, exp in by.items():
        assert exp.seed == 1 and exp.engine["routing"]["mode"] == "ecmp", key
        assert exp.engine["topology"]["hosts_per_leaf"] == 8 and exp.workload.flows == 1_000, key


def _summary(root, scheme, info, workload, load, all_ms, small_ms):
    d = root / "runs" / f"{scheme}-{info}-{workload}-{load}".replace(" ", "_").replace("=", "")
    d.mkdir(parents=True)
    bins = {b: {"count": 10, "mean_fct_ns": v * 1e6, "p99_fct_ns": 3 * v * 1e6} for b, v in
            (("all", all_ms), ("small", small_ms))}
    (d / "summary.json").write_text(json.dumps({"bins": bins}))
    (d / "config.json").write_text(json.dumps({"sweep_point": {"axes": {
        "scheme": scheme, "info": info, "workload.cdf": workload, "load": load}}}))


def test_claims_and_tables_from_hand_written_summaries(tmp_path):
    # pFabric: exact 1 ms overall, 0.1 ms small; with the estimate 1.5 ms and 0.5 ms (1.5x, 5x); bounds 0.3 ms
    _summary(tmp_path, "pFabric", "exact", "websearch", 0.5, 1.0, 0.1)
    _summary(tmp_path, "pFabric", "est s=1", "websearch", 0.5, 1.5, 0.5)
    _summary(tmp_path, "pFabric", "bounds", "websearch", 0.5, 1.2, 0.3)
    _summary(tmp_path, "Homa", "est s=1", "websearch", 0.5, 2.0, 0.4)
    _summary(tmp_path, "QCLIMB", "bounds", "websearch", 0.5, 1.35, 0.06)
    claims = {c.id: c for c in ri.information_claims(tmp_path)}
    assert claims["pfabric-imprecise-all-mean"].value == pytest.approx(1.5)
    assert claims["pfabric-imprecise-all-mean"].verdict == "reproduced"
    assert claims["pfabric-imprecise-small-mean"].value == pytest.approx(5.0)
    # 1 - 1.35 / 1.5 = 10% below pFabric; 1 - 1.35 / 2 = 32.5% below Homa; small: 1 - 0.06 / 0.5 = 88%
    assert claims["qclimb-vs-pfabric-imprecise-all-mean"].value == pytest.approx(10.0)
    assert claims["qclimb-vs-homa-imprecise-all-mean"].value == pytest.approx(32.5)
    assert claims["qclimb-vs-pfabric-imprecise-small-mean"].value == pytest.approx(88.0)
    assert claims["qclimb-vs-pfabric-imprecise-small-mean"].verdict == "reproduced"
    assert claims["pfabric-bounds-beat-estimate-small"].value == pytest.approx(0.6)
    assert claims["pfabric-bounds-beat-estimate-small"].verdict == "reproduced"
    # a tie does not pass: the estimate no worse than exact is not the paper's slowdown
    _summary(tmp_path, "pFabric", "exact", "datamining", 0.5, 1.0, 0.1)
    _summary(tmp_path, "pFabric", "est s=1", "datamining", 0.5, 1.0, 0.1)
    (tmp_path / "runs" / "pFabric-est_s1-websearch-0.5" / "config.json").unlink()
    assert {c.id: c for c in ri.information_claims(tmp_path)}["pfabric-imprecise-all-mean"].verdict == "differs"
    (title, table), = [t for t in ri.information_tables(tmp_path) if t[0].startswith("websearch")]
    row = [ln for ln in table.splitlines() if ln.startswith("pFabric  bounds")][0].split()
    assert row[2:] == ["1.200", "3.600", "0.300", "0.900", "1.20", "1.20", "3.00", "3.00"]


def test_recipe_runs_end_to_end_at_tiny_scale(tmp_path):
    out = tmp_path / "information"
    result = CliRunner().invoke(app, ["reproduce", "information", "--scale", "tiny", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert (out / "report" / "index.html").is_file()
    assert (out / "report" / "figures" / "information.png").is_file()
    claims = ri.information_claims(out)
    assert all(c.value is not None for c in claims)
    doc = assert_claims_file(out, "information")
    assert {r["verdict"] for r in doc["claims"]} <= {"reproduced", "differs"}
    assert "websearch at load 0.5" in result.output


def test_bad_scale_fails_before_running():
    with pytest.raises(ValueError, match="scale"):
        ri.information_sweep("huge")
