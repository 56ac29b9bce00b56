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


def test_points_carry_the_authors_fabric_traffic_and_scripts():
    sweep = rh.hyline_sweep("small")
    by = {(p.values["study"], p.values["workload"], p.values["load"], p.values["variant"]): p.experiment
          for p in sweep.points}
    exp = by[("main", "websearch", 0.5, "HyLine")]
    topo = exp.engine["topology"]
    # the authors' fabric: k = 8 with k/2 hosts per edge switch, 128 hosts, no oversubscribed tier
    assert (topo["kind"], topo["k"], topo["hosts_per_edge"]) == ("fat_tree", 8, 4)
    assert exp.hosts == 128 and topo["hosts_per_edge"] <= topo["k"] // 2
    assert (topo["host_link_gbps"], topo["core_link_delay_ns"]) == (1.0, 25_000.0)
    assert exp.engine["routing"]["mode"] == "ecmp"
    # inter-pod pairs at the scripts' per-pair rate, counted on wire bytes
    w = exp.workload
    assert (w.pairs, w.load_bytes) == ("inter_pod", "wire")
    assert w.load == pytest.approx(0.5 * 112 / 127, abs=1e-6)
    sc = exp.engine["scheme"]
    assert (sc["hyline_threshold_bytes"], sc["hyline_tcost_us"], sc["hyline_large_rto_min_us"]) == (
        1_000_000, 100.0, 1_000_000.0)
    assert exp.engine["switch"]["buffer_bytes"] == 226 * 1460
    t = exp.engine["transport"]
    assert (t["init_cwnd_packets"], t["max_cwnd_packets"], t["rto_min_us"], t["dupack_threshold"]) == (
        25, 50, 4000.0, 0)
    pf = by[("main", "websearch", 0.5, "pFabric")].engine
    assert pf["switch"]["buffer_bytes"] == 50 * 1500
    t = pf["transport"]
    assert (t["init_cwnd_packets"], t["max_cwnd_packets"], t["rto_min_us"]) == (25, 49, 1000.0)
    for name in ("DCTCP", "TCP"):
        e = by[("main", "websearch", 0.5, name)].engine
        t = e["transport"]
        assert (t["init_cwnd_packets"], t["max_cwnd_packets"], t["rto_min_us"], t["dupack_threshold"]) == (
            25, 226, 4000.0, 3)
        assert e["switch"]["buffer_bytes"] == 226 * 1460
    assert by[("main", "websearch", 0.5, "DCTCP")].engine["switch"]["ecn_threshold_bytes"] == 15 * 1460
    # a new connection, with its handshake, per flow for every scheme
    assert all(p.experiment.engine["transport"]["handshake"] for p in sweep.points)
    qj = by[("main", "datamining", 0.7, "Qjump")].engine["scheme"]
    assert (qj["name"], qj["qjump_queue"]) == ("qjump", "ranked")
    # FCT where the scripts take it: the last byte's ACK at the sender
    assert all(p.experiment.engine["run"]["fct_at"] == "sender" for p in sweep.points)
    assert {k[1] for k in by if k[0] == "mix"} == {"light", "light_l1460", "heavy"}
    ths = {k[3] for k in by if k[0] == "threshold"}
    assert len(ths) == 5 and "HyLine H=1000000" in ths
    big = by[("fabric", "websearch", 0.6, "HyLine (256 hosts)")]
    assert big.hosts == 256
    # runs sized by simulated time: Light's arrivals span 50 ms at least (a fixed 3,000 spanned 3.3 ms)
    light = by[("mix", "light", 0.6, "HyLine")].workload
    mean = 26535.4
    span_s = light.flows * 8 * mean / (light.load * 1e9 * 128 * 1460 / 1500)
    assert span_s >= 0.05 and light.flows <= 20_000
    if rh.engine_has_pfc():
        sw = by[("main", "websearch", 0.5, "HyLine")].engine["switch"]
        assert sw["pfc"] is True and (sw["pfc_pause_packets"], sw["pfc_resume_packets"]) == (221, 210)
        assert ("pfc", "websearch", 0.9, "HyLine no PFC") in by


def test_recipe_runs_end_to_end_at_tiny_scale(tmp_path, monkeypatch):
    monkeypatch.setattr(rh, "SCHEMES", TWO)
    out = tmp_path / "hyline"
    result = CliRunner().invoke(app, ["reproduce", "hyline", "--scale", "tiny", "--out", str(out), "--workers", "1"])
    assert result.exit_code == 0, result.output
    assert (out / "report" / "index.html").is_file()
    assert (out / "report" / "figures" / "hyline-websearch.png").is_file()
    page = (out / "report" / "index.html").read_text()
    # its own figure (the paper's four size ranges) in the page, no fixed-bin figures beside it
    assert "figures/hyline-websearch.png" in page and page.count("<img ") == 1
    assert "reductions against DCTCP (up to 88%)" in page  # the paper's number drawn beside the series run
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
