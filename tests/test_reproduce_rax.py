"""The RAX recipe: its points carry the paper's two settings (the 1 GbE testbed and the 10/40 Gbps simulation),
and it runs end to end at tiny scale with a claims table."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from fctlab.recipes import rax as rr
from fctlab.cli import app
from fctlab.reproduce import RECIPES
from conftest import assert_claims_file


def test_recipe_is_registered():
    assert "rax" in RECIPES


def test_points_carry_the_papers_settings():
    sweep = rr.rax_sweep("small")
    by = {(p.values["setting"], p.values["variant"], p.values["workload.cdf"], p.values["load"]): p.experiment
          for p in sweep.points}
    # testbed: 4 schemes (pFabric by remaining time as the headroom's reference); simulation: 5; the E study: 4
    # bases x 3 first thresholds under the recipe's reading, 4 bases as printed
    assert len(by) == len(sweep.points) == 2 * 2 * 4 + 2 * 2 * 5 + 4 * 3 + 4
    tb = by[("testbed", "RAX", "websearch", 0.9)].engine
    assert tb["topology"]["hosts"] == 10 and tb["topology"]["host_link_gbps"] == 1.0
    assert (tb["switch"]["queues"], tb["switch"]["ecn_threshold_bytes"]) == (8, 20_000)
    assert (tb["transport"]["rto_min_us"], tb["transport"]["send_buffer_bytes"]) == (10_000, 2_000_000)
    assert tb["scheme"]["name"] == "rax" and tb["transport"]["kind"] is None
    w = by[("testbed", "RAX", "websearch", 0.9)].workload
    # every flow to the receiver, host 0, whose load is 0.9
    assert w.receivers == [0] and w.senders == list(range(1, 10)) and w.load == pytest.approx(0.1)
    assert (w.gen_rate_dist, w.gen_rate_cdf) == ("cdf", "fileserver")
    # the authors' traffic generator: its load is the wire bandwidth, rate-limited flows are written in 64 KB chunks
    assert (w.load_bytes, w.write_chunk_bytes) == ("wire", 65_536)
    assert (tb["scheme"]["rax_thresholds"], tb["scheme"]["rax_base"], tb["scheme"]["rax_q1_us"]) == ("span", 2.0, 0.0)
    assert by[("testbed", "pFabric (rem. time)", "websearch", 0.5)].engine["scheme"]["rank"] == "remaining_time"
    sim = by[("sim", "RAX", "websearch", 0.8)]
    assert sim.engine["topology"]["kind"] == "leaf_spine" and sim.engine["routing"]["mode"] == "spray"
    assert sim.workload.gen_rate_scale == 10.0
    pf = by[("sim", "pFabric (rem. time)", "websearch", 0.8)].engine
    assert (pf["scheme"]["name"], pf["scheme"]["rank"]) == ("pfabric", "remaining_time")
    assert by[("sim", "RAX+", "datamining", 0.5)].engine["scheme"]["name"] == "rax-plus"
    assert sim.workload.write_chunk_bytes is None, "the ns-2 simulation's application is not the generator"


def test_e_study_is_in_the_sweep():
    """The paper's Fig. 13: E from 2 to 5 and Q_1 from 960 to 1,920 us on the testbed's web search, at the
    highest load; under the recipe's reading, and E 2-5 with Eq. 3 as printed."""
    sweep = rr.rax_sweep("small")
    study = {p.values["variant"]: p.experiment.engine["scheme"] for p in sweep.points
             if p.values["variant"].startswith(rr.E_STUDY_PREFIX)}
    got = {(sc["rax_thresholds"], sc["rax_base"], sc["rax_q1_us"]) for sc in study.values()}
    want = {("span", e, q1) for e in (2.0, 3.0, 4.0, 5.0) for q1 in (960.0, 1_280.0, 1_920.0)}
    want |= {("literal", e, 1_280.0) for e in (2.0, 3.0, 4.0, 5.0)}
    assert got == want
    loads = {p.values["load"] for p in sweep.points if p.values["variant"].startswith(rr.E_STUDY_PREFIX)}
    assert loads == {0.9}
    # the study's runs carry their own labels: the claims (by label "RAX") never read them
    assert all(label != "RAX" for label in study)


def test_headroom_column_and_study_table(tmp_path):
    """The tables give each scheme's mean over pFabric by remaining time's, the headroom line (DCTCP / pFabric),
    and the E study's reductions, from summaries written by hand (independent numbers)."""
    import json

    def summary(label, topo, load, all_us, medium_us, scheme=None):
        bins = {b: {"count": 10, "mean_fct_ns": v * 1e3, "p99_fct_ns": v * 2e3, "mean_slowdown": 2.0,
                    "p99_slowdown": 4.0, "unfinished": 0}
                for b, v in (("small", 1.0), ("medium", medium_us), ("large", 100.0), ("all", all_us))}
        cfg = {"label": label, "topology": {"kind": topo}, "workload": {"cdf": "websearch", "load": load},
               "scheme": scheme or {"name": "dctcp"}}
        d = tmp_path / "runs" / label.replace(" ", "_")
        d.mkdir(parents=True)
        (d / "summary.json").write_text(json.dumps({"config": cfg, "bins": bins}))

    summary("DCTCP", "single_switch", 0.1, 150.0, 300.0)
    summary("PIAS", "single_switch", 0.1, 120.0, 200.0)
    summary("pFabric (rem. time)", "single_switch", 0.1, 100.0, 120.0)
    summary(rr.e_study_label(3.0, 1280.0, "span"), "single_switch", 0.1, 90.0, 150.0,
            {"name": "rax", "rax_base": 3.0, "rax_q1_us": 1280.0, "rax_thresholds": "span"})
    tables = dict(rr.rax_tables(tmp_path))
    main = tables["testbed: websearch at load 0.9"]
    assert "mean / pFabric (rem. time)" in main
    assert "headroom (DCTCP / pFabric (rem. time), mean FCT): all 1.50x, medium 2.50x" in main
    assert "RAX E=" not in main
    (title, study), = [(t, v) for t, v in tables.items() if t.startswith("E study")]
    row = [ln for ln in study.splitlines() if ln.startswith("span")][0].split()
    # E 3, Q1 1,280 us: thresholds from 3.84 ms to 1.28 ms x 3^7 = 2,799 ms; 1 - 90/150 = +40.0% vs DCTCP,
    # 1 - 150/300 = +50.0% on medium flows, 1 - 90/120 = +25.0% and 1 - 150/200 = +25.0% vs PIAS
    assert row == ["span", "3", "1280", "3.84", "2,799", "90", "150", "+40.0%", "+50.0%", "+25.0%", "+25.0%"]


def test_recipe_runs_end_to_end_at_tiny_scale(tmp_path):
    out = tmp_path / "rax"
    result = CliRunner().invoke(app, ["reproduce", "rax", "--scale", "tiny", "--out", str(out), "--workers", "1"])
    assert result.exit_code == 0, result.output
    assert (out / "report" / "index.html").is_file()
    claims = rr.rax_claims(out)
    assert len(claims) == 12
    # tiny runs web search only: its claims have values, data mining's none
    assert all(c.value is not None for c in claims if "data mining" not in c.statement)
    assert [c.verdict for c in claims if "data mining" in c.statement] == ["not_run", "not_run"]
    doc = assert_claims_file(out, "rax")
    assert {r["verdict"] for r in doc["claims"]} <= {"reproduced", "differs", "not_run"}
    assert "testbed: websearch at load 0.7" in result.output
    # one figure per setting, workload and load: mean FCT per size bin, bars, with the paper's marks
    page = (out / "report" / "index.html").read_text()
    assert "figures/rax-testbed-websearch-load0.7.png" in page and "figures/rax-simulation-websearch-load0.6.png" in page
    assert "black marks" in page and "_fct_vs_load" not in page


def test_bad_scale_fails_before_running(tmp_path):
    with pytest.raises(ValueError, match="scale"):
        rr.rax_sweep("huge")
