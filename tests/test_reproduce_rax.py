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
    assert len(by) == len(sweep.points) == 2 * 2 * 3 + 2 * 2 * 5
    tb = by[("testbed", "RAX", "websearch", 0.9)].engine
    assert tb["topology"]["hosts"] == 10 and tb["topology"]["host_link_gbps"] == 1.0
    assert (tb["switch"]["queues"], tb["switch"]["ecn_threshold_bytes"]) == (8, 20_000)
    assert (tb["transport"]["rto_min_us"], tb["transport"]["send_buffer_bytes"]) == (10_000, 2_000_000)
    assert tb["scheme"]["name"] == "rax" and tb["transport"]["kind"] is None
    w = by[("testbed", "RAX", "websearch", 0.9)].workload
    # every flow to the receiver, host 0, whose load is 0.9
    assert w.receivers == [0] and w.senders == list(range(1, 10)) and w.load == pytest.approx(0.1)
    assert (w.gen_rate_dist, w.gen_rate_cdf) == ("cdf", "fileserver")
    sim = by[("sim", "RAX", "websearch", 0.8)]
    assert sim.engine["topology"]["kind"] == "leaf_spine" and sim.engine["routing"]["mode"] == "spray"
    assert sim.workload.gen_rate_scale == 10.0
    pf = by[("sim", "pFabric (rem. time)", "websearch", 0.8)].engine
    assert (pf["scheme"]["name"], pf["scheme"]["rank"]) == ("pfabric", "remaining_time")
    assert by[("sim", "RAX+", "datamining", 0.5)].engine["scheme"]["name"] == "rax-plus"


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


def test_bad_scale_fails_before_running(tmp_path):
    with pytest.raises(ValueError, match="scale"):
        rr.rax_sweep("huge")
