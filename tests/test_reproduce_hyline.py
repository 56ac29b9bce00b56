"""The HyLine recipe: its points carry the paper's fabric and Table I, and it runs end to end at tiny scale (two
of its series, to keep the test short)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from fctlab.recipes import hyline as rh
from fctlab.cli import app
from conftest import assert_claims_file
from fctlab.reproduce import RECIPES

TWO = (rh.SCHEMES[0], rh.SCHEMES[3])  # HyLine and DCTCP


def test_recipe_is_registered():
    assert "hyline" in RECIPES


def test_points_carry_the_papers_fabric_and_table_1():
    sweep = rh.hyline_sweep("small")
    by = {(p.values["study"], p.values["workload"], p.values["load"], p.values["variant"]): p.experiment
          for p in sweep.points}
    exp = by[("main", "websearch", 0.5, "HyLine")]
    topo = exp.engine["topology"]
    assert (topo["kind"], topo["k"], topo["hosts_per_edge"]) == ("fat_tree", 8, 8)
    assert (topo["host_link_gbps"], topo["core_link_delay_ns"]) == (1.0, 25_000.0)
    assert exp.engine["routing"]["mode"] == "ecmp"
    sc = exp.engine["scheme"]
    assert (sc["hyline_threshold_bytes"], sc["hyline_tcost_us"], sc["hyline_large_rto_min_us"]) == (
        1_000_000, 100.0, 1_000_000.0)
    assert exp.engine["switch"]["buffer_bytes"] == 225 * 1500
    assert (exp.engine["transport"]["init_cwnd_packets"], exp.engine["transport"]["rto_min_us"]) == (25, 4000.0)
    pf = by[("main", "websearch", 0.5, "pFabric")].engine
    assert pf["switch"]["buffer_bytes"] == 50 * 1500
    assert (pf["transport"]["init_cwnd_packets"], pf["transport"]["rto_min_us"]) == (25, 1000.0)
    for name in ("DCTCP", "TCP"):
        t = by[("main", "websearch", 0.5, name)].engine["transport"]
        assert (t["init_cwnd_packets"], t["rto_min_us"]) == (10, 4000.0)
    assert by[("main", "datamining", 0.7, "Qjump")].engine["scheme"]["name"] == "qjump"
    assert {k[1] for k in by if k[0] == "mix"} == {"light", "heavy"}
    ths = {k[3] for k in by if k[0] == "threshold"}
    assert len(ths) == 5 and "HyLine H=1000000" in ths
    if rh.engine_has_pfc():
        assert by[("main", "websearch", 0.5, "HyLine")].engine["switch"]["pfc"] is True
        assert ("pfc", "websearch", 0.9, "HyLine no PFC") in by


def test_recipe_runs_end_to_end_at_tiny_scale(tmp_path, monkeypatch):
    monkeypatch.setattr(rh, "SCHEMES", TWO)
    out = tmp_path / "hyline"
    result = CliRunner().invoke(app, ["reproduce", "hyline", "--scale", "tiny", "--out", str(out), "--workers", "1"])
    assert result.exit_code == 0, result.output
    assert (out / "report" / "index.html").is_file()
    assert (out / "report" / "figures" / "hyline-websearch.png").is_file()
    assert json.loads((out / rh.RECIPE_FILE).read_text()) == {"scale": "tiny", "series": ["HyLine", "DCTCP"]}
    data = rh.figure_data(out)
    main = data["main"]["websearch"]
    for label in ("HyLine", "DCTCP"):
        e = main[label][0.5]
        assert e["all"]["n"] == sum(e[name]["n"] for name, _, _ in rh.RANGES)
        assert e["all"]["afct"] >= 1.0 - 1e-9 and 0.0 <= e["all"]["app_throughput"] <= 1.0
    # the manager's statistics exist for HyLine's second-class flows only
    assert main["HyLine"][0.5]["(1MB,10MB]"]["man"]["flows"] > 0
    assert "man" not in main["HyLine"][0.5]["(0,100KB]"] and "man" not in main["DCTCP"][0.5]["(1MB,10MB]"]
    claims = {c.statement: c for c in rh.hyline_claims(out)}
    assert any("Qjump" in s and claims[s].value is None for s in claims)  # no Qjump series here
    assert isinstance(next(c for s, c in claims.items() if "DCTCP" in s).value, float)
    doc = assert_claims_file(out, "hyline")
    assert {r["id"]: r["verdict"] for r in doc["claims"]}["websearch-vs-qjump"] == "not_run"


def test_bad_scale_fails_before_running(tmp_path):
    with pytest.raises(ValueError, match="scale: must be one of tiny, small, paper"):
        rh.hyline_sweep("huge")
