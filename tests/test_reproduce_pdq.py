"""The PDQ recipe: its points carry the paper's setup, its binary searches bisect as documented, and it runs end
to end at tiny scale. The engine's deadline-aware schemes are substituted by TCP and DCTCP (a test parameter),
so these tests exercise the recipe, not PDQ."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from fctlab.recipes.pdq import recipe as rp
from fctlab.recipes.pdq import scale as ps
from fctlab.cli import app
from conftest import assert_claims_file
from fctlab.reproduce import RECIPES

#: The schemes the test engine has, under the paper's labels.
STAND_INS = (rp.Series("PDQ(Full)", "tcp"), rp.Series("D3", "dctcp"))


def test_recipe_is_registered():
    assert "pdq" in RECIPES


def test_series_are_one_constant_in_the_papers_order():
    assert [s.label for s in rp.SCHEMES] == ["PDQ(Full)", "PDQ(ES+ET)", "PDQ(ES)", "PDQ(Basic)", "D3", "RCP", "TCP",
                                            "TCP (2012)"]
    assert [s.scheme for s in rp.SCHEMES] == ["pdq", "pdq-es-et", "pdq-es", "pdq-basic", "d3", "rcp", "tcp", "tcp"]


def test_tcp_2012_runs_with_the_eras_handshake_window_and_rtomin():
    """The "TCP (2012)" series: a handshake, an initial window of 2 segments and RTOmin 200 ms in its runs'
    [transport]; the engine's TCP series keeps the engine's defaults."""
    series = {s.label: s for s in rp.SCHEMES}
    sweep = rp.pdq_sweep("tiny", schemes=[series["TCP"], series["TCP (2012)"]])
    by_variant = {}
    for point in sweep.points:
        by_variant.setdefault(point.values["variant"], point.experiment.engine["transport"])
    old = by_variant["TCP (2012)"]
    assert (old["handshake"], old["init_cwnd_packets"], old["rto_min_us"]) == (True, 2, 200_000.0)
    new = by_variant["TCP"]
    assert (new["handshake"], new["init_cwnd_packets"], new["rto_min_us"]) != (True, 2, 200_000.0)


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
    # the report leads with the paper's key figures (application throughput and FCT against the number of
    # flows), and draws no fixed-size-bin figures for the scenarios
    page = (out / "report" / "index.html").read_text()
    assert page.index("figures/pdq-3a.png") < page.index("figures/pdq-3d.png") < page.index("figures/pdq-3b.png")
    assert "_fct_bins" not in page and "_fct_vs_load" not in page
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
    claims = {c.id: c for c in rp.pdq_claims(out)}
    assert len(claims) == 14
    doc = assert_claims_file(out, "pdq")
    verdicts = {r["id"]: r["verdict"] for r in doc["claims"]}
    # figure 8 ran on the 16-server fat-tree at both levels, with a table and a plot
    scale = ps.scale_data(out)
    assert set(scale[("fat_tree", "no")]) == {"PDQ(Full) (flow)", "PDQ(Full) (packet)", "D3 (flow)", "D3 (packet)"}
    assert (out / "report" / "figures" / "pdq-8-fat_tree-fct.png").is_file()
    # figures 6 and 7 need scheme pdq: left out with a note, their claims without a value
    assert not any(r.values["figure"] in rp.DYNAMICS for r in rp.load_runs(out))
    assert [verdicts[i] for i in ("fig6-seamless-42ms", "fig7-utilization", "fig7-queue")] == ["not_run"] * 3
    # Figure 4 is read from the absolute FCTs: PDQ(Full)'s on Staggered Prob(0.7) against its worst other pattern
    worst = claims["fig4-staggered-worst"]
    fct = data["4b"]["PDQ(Full)"]
    if "Staggered Prob(0.7)" in fct and len(fct) > 1:
        assert worst.value == [fct["Staggered Prob(0.7)"],
                               max(v for p, v in fct.items() if p != "Staggered Prob(0.7)")]
    else:
        assert worst.verdict == "not_run"
    assert "figures 6 and 7" in result.output
    assert "PDQ" in result.output and "Figure 3c" in result.output
    # resumable: a second run runs nothing again
    again = CliRunner().invoke(app, ["reproduce", "pdq", "--scale", "tiny", "--out", str(out), "--workers", "1"])
    assert again.exit_code == 0 and "0 to run" in again.output


def test_bad_scale_fails_before_running(tmp_path):
    with pytest.raises(ValueError, match="scale"):
        rp.pdq_sweep("huge")
    result = CliRunner().invoke(app, ["reproduce", "pdq", "--scale", "huge", "--out", str(tmp_path / "x")])
    assert result.exit_code == 2 and not (tmp_path / "x").exists()


def test_dynamics_points_monitor_the_aggregator_with_the_papers_flows(tmp_path):
    from fctlab import workloads

    sweep = rp.pdq_sweep("small", out_dir=tmp_path)
    dyn = [p for p in sweep.points if p.values["figure"] in rp.DYNAMICS]
    assert sorted((p.values["figure"], p.values["x"], p.values["variant"], p.values["seed"]) for p in dyn) == [
        ("6", 5, "PDQ(Full)", 1), ("7", 50, "PDQ(Full)", 1)]
    for p in dyn:
        run = p.experiment.engine["run"]
        assert run["monitor_host"] == rp.RECEIVER and run["monitor_interval_us"] == 100.0
        assert p.experiment.engine["scheme"]["name"] == "pdq"
    trace = {p.values["figure"]: workloads.read_trace(p.experiment.workload.trace) for p in dyn}
    six = trace["6"]
    assert list(six["size_bytes"]) == [1_000_000 + 10_000 * i for i in range(5)]
    assert list(six["src"]) == [1, 2, 3, 4, 5] and set(six["dst"]) == {rp.RECEIVER}
    assert set(six["start_ps"]) == {0}
    seven = trace["7"]
    assert len(seven) == 51 and seven["size_bytes"].iloc[0] == 6_000_000 and seven["start_ps"].iloc[0] == 0
    assert list(seven["size_bytes"].iloc[1:]) == [20_000 + 10 * k for k in range(50)]
    assert set(seven["start_ps"].iloc[1:]) == {10_000_000_000} and set(seven["dst"]) == {rp.RECEIVER}
    assert set(seven["src"].iloc[1:]) == set(range(2, 12))  # the other hosts in turn, not the long flow's
    assert (tmp_path / "traces" / "pdq-6.csv").is_file()
    # the other scales run the same two points
    for scale in ("tiny", "paper"):
        assert sum(p.values["figure"] in rp.DYNAMICS for p in rp.pdq_sweep(scale, out_dir=tmp_path).points) == 2


def test_monitor_rates_from_a_hand_made_series():
    """Constant delivery of 10,950 B of payload per 100 us: 0.876 Gb/s, 11,250 wire bytes = 90% of 1 Gb/s."""
    n = 40
    mon = {"host": 0, "interval_ps": 100_000_000, "time_ps": [100_000_000 * (i + 1) for i in range(n)],
           "queue_bytes": [3000] * n, "delivered_bytes": [10_950 * (i + 1) for i in range(n)], "flows": [7, 9],
           "flow_delivered_bytes": [[10_950 * (i + 1) for i in range(n)], [0] * n]}
    r = rp.monitor_rates(mon, smooth_us=500)
    assert r["total_gbps"] == pytest.approx([0.876] * (n + 1 - 5))
    assert r["utilization"] == pytest.approx([0.9] * (n + 1 - 5))
    assert r["flows"][7] == pytest.approx(r["total_gbps"]) and not r["flows"][9].any()
    assert r["time_ms"][0] == pytest.approx(0.25)  # the middle of the first window, from the assumed sample at 0
    assert list(r["queue_packets"]) == [2.0] * n
    assert rp.utilization_between(mon, 1.0, 3.0) == pytest.approx(0.9)
    assert rp.utilization_between(mon, 1.05, 2.35) == pytest.approx(0.9)  # between samples: interpolated
    # no smoothing: one interval; a 10 Gb/s link
    assert rp.monitor_rates(mon, smooth_us=0, link_gbps=10)["utilization"] == pytest.approx([0.09] * n)


def test_dynamics_figures_with_pdq(tmp_path):
    """Figures 6 and 7 run with the engine's PDQ: tables, plots and claims."""
    from fctlab.sweep import Sweep, run_sweep

    full = rp.pdq_sweep("tiny", out_dir=tmp_path, schemes=rp.SCHEMES[:1])
    points = [p for p in full.points if p.values["figure"] in rp.DYNAMICS]
    outcome = run_sweep(Sweep(name="dyn", axes={}, points=points), tmp_path, workers=2)
    assert not outcome.failed
    dyn = rp.dynamics_data(tmp_path)
    six, seven = dyn["6"][0], dyn["7"][0]
    # five flows one after the other, most critical first, in about the ideal time, with a small queue
    assert six["unfinished"] == 0 and six["in_order"] and six["order"] == [0, 1, 2, 3, 4]
    assert six["ideal_ms"] == pytest.approx(8 * sum(1e6 + 1e4 * i + 40 * -(-(1e6 + 1e4 * i) // 1460)
                                                    for i in range(5)) / 1e9 * 1e3)
    assert six["ideal_ms"] < six["done_ms"] < 1.1 * six["ideal_ms"]
    assert six["max_queue_packets"] < 20 and six["drops"] == 0
    assert seven["unfinished"] == 0 and rp.BURST_START_MS < seven["burst_end_ms"] < seven["long_done_ms"]
    assert 0.5 < seven["utilization"] <= 1.01
    lo, hi = seven["queue_range"]
    assert 0 <= lo <= seven["queue_median"] <= hi
    tables = dict(rp.pdq_tables(tmp_path))
    assert rp.DYNAMICS_TITLES["6"] in tables and "0-1-2-3-4" in tables[rp.DYNAMICS_TITLES["6"]]
    assert rp.DYNAMICS_TITLES["7"] in tables
    figures = rp.pdq_figures(tmp_path)
    for fig in rp.DYNAMICS:
        png = tmp_path / "report" / "figures" / f"pdq-{fig}.png"
        assert png.is_file() and (rp.DYNAMICS_TITLES[fig], png) in figures
    claims = {c.id: c for c in rp.pdq_claims(tmp_path)}
    c6, c7 = claims["fig6-seamless-42ms"], claims["fig7-utilization"]
    assert claims["fig7-queue"].value == [hi]
    assert c6.value == pytest.approx(six["done_ms"]) and "0-1-2-3-4" in c6.note
    assert c7.value == pytest.approx(100 * seven["utilization"]) and "packets" in c7.note


def test_scale_points_carry_the_fabrics_and_permutation_traffic():
    """Figure 8: 10 flows per server to a random partner, the fat-tree also with deadlines, the packet level only
    up to the scale's size limit; every series sees the same flows."""
    from fctlab.simulation import build_flows

    sweep = ps.scale_sweep("small")
    by = {(p.values["topology"], p.values["x"], p.values["deadlines"], p.values["level"], p.values["variant"]): p
          for p in sweep.points}
    exp = by[("fat_tree", 128, "no", "flow", "PDQ(Full)")].experiment
    topo = exp.engine["topology"]
    assert (topo["kind"], topo["k"], topo["host_link_gbps"], topo["core_link_gbps"]) == ("fat_tree", 8, 1.0, 1.0)
    assert exp.engine["run"]["level"] == "flow" and exp.engine["scheme"]["name"] == "pdq"
    w = exp.workload
    assert (w.pattern, w.flows, w.size_uniform_mean_bytes, w.deadline_mean_ms) == ("permutation", 1280, 100_000, None)
    assert by[("fat_tree", 128, "yes", "packet", "RCP")].experiment.workload.deadline_mean_ms == 20.0
    assert not any(k[2] == "yes" and k[0] != "fat_tree" for k in by)
    limit = ps.SIZES["small"].packet_max_servers
    assert all(k[1] <= limit for k in by if k[3] == "packet")
    f = build_flows(by[("fat_tree", 128, "no", "flow", "PDQ(Full)")].experiment)
    g = build_flows(by[("fat_tree", 128, "no", "packet", "RCP")].experiment)
    assert f.equals(g)
    # a permutation: each server sends its 10 flows to one partner, and receives from exactly one server
    pairs = f.groupby("src")["dst"].nunique()
    assert len(pairs) == 128 and (pairs == 1).all() and f["dst"].nunique() == 128
    assert (f.groupby("src").size() == 10).all() and (f["src"] != f["dst"]).all()
    assert {ps.servers(k, s) for k, s in (("fat_tree", 16), ("bcube", 32), ("jellyfish", 128))} == {1024}
    # BCube with dual-port servers and Jellyfish with 24-port switches, 16 of them to the network
    bc = by[("bcube", 64, "no", "packet", "PDQ(Full)")].experiment.engine["topology"]
    assert (bc["kind"], bc["n"], bc["k"], bc["host_link_gbps"]) == ("bcube", 8, 1, 1.0)
    jf = by[("jellyfish", 136, "no", "flow", "RCP")].experiment.engine["topology"]
    assert (jf["kind"], jf["switches"], jf["ports"], jf["network_ports"]) == ("jellyfish", 17, 24, 16)
    assert {k[0] for k in by} == set(ps.TOPOLOGIES) and not any("topology" in n for n in sweep.notes)


def test_scale_ratio_shares_by_hand():
    import numpy as np

    r = np.array([0.25, 0.5, 0.7, 1.0, 1.5, 2.0, 3.0, 0.4, 0.45, 0.9])
    assert ps.ratio_shares(r) == {"halved": 0.4, "slower": 0.3, "twice": 0.2}
    assert ps.ratio_shares(np.zeros(0)) is None


def test_scale_ratios_of_one_scheme_against_itself_are_one(tmp_path):
    """Figure 8e pairs flows by id across two runs on the same flows: the same scheme twice gives ratio 1."""
    import numpy as np

    from fctlab.sweep import Sweep, run_sweep

    same = (rp.Series("PDQ(Full)", "dctcp"), rp.Series("RCP", "dctcp"))
    sweep = ps.scale_sweep("small", schemes=same)
    points = [p for p in sweep.points if p.values["topology"] == "fat_tree" and p.values["x"] == 128
              and p.values["level"] == "flow" and p.values["deadlines"] == "no"]
    assert len(points) == 2
    assert not run_sweep(Sweep(name="f8", axes={}, points=points), tmp_path, workers=1).failed
    ratios = ps.fct_ratios(tmp_path)
    assert len(ratios) == 1280 and np.all(ratios == 1.0)
    assert ps.ratio_shares(ratios) == {"halved": 0.0, "slower": 0.0, "twice": 0.0}


def test_figure_8_means_need_every_seed():
    """A seed with unfinished flows leaves the cell empty rather than a mean of the seeds that finished."""
    assert ps._mean([4.0, 6.0]) == 5.0
    assert ps._mean([4.0, None]) is None
    assert ps._mean([4.0, float("nan")]) is None
    assert ps._mean([]) is None
