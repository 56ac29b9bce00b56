"""The PDQ recipe: its points carry the paper's setup, its binary searches bisect as documented, and it runs end
to end at tiny scale. The engine's deadline-aware schemes are substituted by TCP and DCTCP (a test parameter),
so these tests exercise the recipe, not PDQ."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from fctlab import reproduce_pdq as rp
from fctlab.cli import app
from fctlab.reproduce import RECIPES

#: The schemes the test engine has, under the paper's labels.
STAND_INS = (rp.Series("PDQ(Full)", "tcp"), rp.Series("D3", "dctcp"))


def test_recipe_is_registered():
    assert "pdq" in RECIPES


def test_series_are_one_constant_in_the_papers_order():
    assert [s.label for s in rp.SCHEMES] == ["PDQ(Full)", "PDQ(ES+ET)", "PDQ(ES)", "PDQ(Basic)", "D3", "RCP", "TCP"]
    assert [s.scheme for s in rp.SCHEMES] == ["pdq", "pdq-es-et", "pdq-es", "pdq-basic", "d3", "rcp", "tcp"]


def test_schemes_the_engine_lacks_are_left_out_with_a_note():
    kept, notes = rp.available(rp.SCHEMES)
    from fctlab import _core

    have = {n for n, _ in _core.schemes()}
    assert [s.scheme for s in kept] == [s.scheme for s in rp.SCHEMES if s.scheme in have]
    assert len(notes) == len(rp.SCHEMES) - len(kept)


def test_points_carry_the_papers_tree_and_query_aggregation():
    sweep = rp.pdq_sweep("small", schemes=STAND_INS)
    by = {(p.values["figure"], p.values["x"], p.values["variant"], p.values["seed"]): p.experiment
          for p in sweep.points}
    exp = by[("3a", 25, "PDQ(Full)", 1)]
    topo = exp.engine["topology"]
    assert (topo["kind"], topo["leaves"], topo["hosts_per_leaf"], topo["spines"]) == ("leaf_spine", 4, 3, 1)
    assert topo["host_link_gbps"] == topo["core_link_gbps"] == 1.0
    assert topo["host_link_delay_ns"] == topo["core_link_delay_ns"] == rp.LINK_DELAY_NS
    w = exp.workload
    assert (w.pattern, w.flows, w.receiver, w.size_uniform_mean_bytes, w.deadline_mean_ms) == (
        "aggregation", 25, 0, 100_000, 20.0)
    assert by[("3d", 25, "PDQ(Full)", 1)].workload.deadline_mean_ms is None
    assert by[("3e", 350, "D3", 2)].workload.flows == 3
    assert by[("3b", 200, "D3", 2)].workload.size_uniform_mean_bytes == 200_000
    assert by[("4b", "Stride(N/2)", "D3", 1)].workload.stride == 6
    # every series sees the same flows
    from fctlab.simulation import build_flows

    a, b = build_flows(by[("3a", 10, "PDQ(Full)", 2)]), build_flows(by[("3a", 10, "D3", 2)])
    assert a.equals(b)
    # with the real schemes: the loss experiment drops packets on the aggregator's link only, both ways, and
    # figure 10 varies PDQ's criticality; nothing is left out
    real = rp.pdq_sweep("small")
    lossy = [p.experiment for p in real.points if p.values["figure"] == "9a" and p.values["x"] > 0]
    assert lossy and all(e.engine["link_loss"]["hosts"] == [rp.RECEIVER] for e in lossy)
    assert any(p.values["figure"] == "10" for p in real.points)
    assert not any("left out" in n for n in real.notes)


def test_binary_search_finds_the_largest_passing_count(tmp_path, monkeypatch):
    """Probes answered by a fake: application throughput 1 up to 37 flows, 0.9 above (seeds averaged)."""
    answers = {}

    def fake(out_dir, values):
        answers[(values["figure"], values["x"], values["variant"], values["flows"], values["seed"])] = True
        return 1.0 if values["flows"] <= 37 else 0.9

    monkeypatch.setattr(rp, "_app_throughput", fake)
    rounds = list(rp.pdq_searches("small", tmp_path, schemes=STAND_INS[:1]))
    # bisection of [0, 66): 33 passes, 49 and 41 fail, 37 passes, 39 and 38 fail: 37 in six rounds
    assert len(rounds) == 6
    probed = [k[3] for k in answers if k[0] == "3c" and k[1] == 20.0 and k[4] == 1]
    assert probed == [33, 49, 41, 37, 39, 38]
    assert all(len(r.points) == len({p.run_id for p in r.points}) for r in rounds)


def test_recipe_runs_end_to_end_at_tiny_scale(tmp_path, monkeypatch):
    monkeypatch.setattr(rp, "SCHEMES", STAND_INS)
    out = tmp_path / "pdq"
    result = CliRunner().invoke(app, ["reproduce", "pdq", "--scale", "tiny", "--out", str(out), "--workers", "1"])
    assert result.exit_code == 0, result.output
    assert (out / "report" / "index.html").is_file()
    assert (out / "report" / "figures" / "pdq-3a.png").is_file()
    assert json.loads((out / rp.RECIPE_FILE).read_text())["scale"] == "tiny"
    data = rp.figure_data(out)
    for fig in ("3a", "3b", "3c", "3d", "3e", "4a", "4b"):
        assert set(data[fig]) >= {"PDQ(Full)", "D3"}, fig
    # one flow alone meets its deadline, and the optimum is never below a scheme
    assert data["3a"]["PDQ(Full)"][1] == 1.0
    for label in ("PDQ(Full)", "D3"):
        for x, v in data["3a"][label].items():
            assert v <= data["3a"]["Optimal"][x] + 1e-12
        for x, v in data["3d"][label].items():
            assert v >= 1.0 - 1e-9
        assert 0 <= data["3c"][label][20.0] <= rp.PDQ_SCALES["tiny"].search_max
    assert data["3c"]["Optimal"][20.0] >= max(data["3c"][x][20.0] for x in ("PDQ(Full)", "D3"))
    claims = {c.statement.split(" (Fig")[0]: c for c in rp.pdq_claims(out)}
    assert len(claims) == 4
    assert "PDQ" in result.output and "Figure 3c" in result.output
    # resumable: a second run runs nothing again
    again = CliRunner().invoke(app, ["reproduce", "pdq", "--scale", "tiny", "--out", str(out), "--workers", "1"])
    assert again.exit_code == 0 and "0 to run" in again.output


def test_bad_scale_fails_before_running(tmp_path):
    with pytest.raises(ValueError, match="scale"):
        rp.pdq_sweep("huge")
    result = CliRunner().invoke(app, ["reproduce", "pdq", "--scale", "huge", "--out", str(tmp_path / "x")])
    assert result.exit_code == 2 and not (tmp_path / "x").exists()
