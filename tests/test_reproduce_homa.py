"""The Homa recipe: its points carry the paper's fabric and workloads, its size bins follow the size CDFs, and it
runs end to end at tiny scale (two of its series, to keep the test short)."""

from __future__ import annotations

import json
import math

import pytest
from typer.testing import CliRunner

from fctlab.recipes import homa as rh
from fctlab.cli import app
from chromium_page import CHROMIUM, check_page
from conftest import assert_claims_file
from fctlab.reproduce import RECIPES

#: A shorter list of series for the end-to-end test: Homa, and PIAS (which also takes derived thresholds).
TWO = (rh.SCHEMES[0], next(s for s in rh.SCHEMES if s.label == "PIAS"))


def test_recipe_is_registered():
    assert "homa" in RECIPES


def test_points_carry_the_papers_fabric_and_workloads():
    sweep = rh.homa_sweep("small")
    by = {(p.values["workload"], p.values["load"], p.values["variant"], p.values["seed"]): p.experiment
          for p in sweep.points if p.values["kind"] == "size"}
    exp = by[("W5", 0.8, "Homa", 1)]
    topo = exp.engine["topology"]
    assert (topo["kind"], topo["leaves"], topo["hosts_per_leaf"], topo["spines"]) == ("leaf_spine", 9, 16, 4)
    assert (topo["host_link_gbps"], topo["core_link_gbps"]) == (10.0, 40.0)
    assert (topo["host_link_delay_ns"], topo["core_link_delay_ns"]) == (1000.0, 200.0)
    assert exp.engine["routing"]["mode"] == "spray"
    assert exp.engine["switch"]["queues"] == 8
    assert exp.engine["switch"]["buffer_bytes"] == rh.BUFFER_BYTES
    w = exp.workload
    # the load counts wire bytes as the authors' adjustLoadFac.py does, per scheme: a payload load below 0.8
    assert (w.pattern, w.cdf, w.load_bytes) == ("all_to_all", "homa_w5_dctcp_websearch", "payload")
    assert w.load == pytest.approx(0.8 * 0.898, abs=0.002)
    assert by[("W1", 0.8, "pFabric", 1)].workload.load == pytest.approx(0.8 * 0.693, abs=0.002)
    # the authors' Homa: tail boost, per-packet levels, the configuration's scheduled levels per workload
    homa = by[("W2", 0.8, "Homa", 1)].engine["scheme"]
    assert (homa["homa_tail_boost"], homa["homa_unscheduled_priority"]) == (True, "remaining")
    assert (homa["homa_unscheduled_levels"], homa["homa_overcommit"]) == (5, 3)
    plain = by[("W2", 0.8, "Homa (engine defaults)", 1)].engine["scheme"]
    assert (plain["homa_tail_boost"], plain["homa_unscheduled_priority"]) == (False, "message")
    # runs sized by simulated time: W1's arrivals span 2 ms at its offered rate
    mean = 185.0
    assert w.flows > 20_000
    w1 = by[("W1", 0.8, "Homa", 1)].workload
    assert w1.flows == pytest.approx(w1.load * 10e9 * 144 / (8 * mean) * 2e-3, rel=0.01)
    # pFabric keeps its preset's small queues; PIAS gets thresholds for its workload and load; DCTCP one queue
    assert by[("W5", 0.8, "pFabric", 1)].engine["switch"]["buffer_bytes"] == 36_000
    pias = by[("W4", 0.5, "PIAS", 1)].engine
    assert len(pias["scheme"]["thresholds_bytes"]) == 7 and pias["switch"]["ecn_threshold_bytes"] == 22_500
    assert by[("W4", 0.8, "DCTCP", 1)].engine["switch"]["queues"] == 1
    # every workload at 0.8, the sweep workload at the other loads too
    assert {k[0] for k in by if k[1] == 0.8} == set(rh.WORKLOADS)
    assert {k[1] for k in by if k[0] == "W4"} == {0.5, 0.8}
    assert any("pHost" in n for n in sweep.notes) and any("estimate" in n for n in sweep.notes)


def test_size_bins_are_the_deciles_of_the_size_cdf():
    from fctlab.workloads import load_cdf

    for w, name in rh.WORKLOADS.items():
        bins = rh.size_bins(w)
        assert bins[0][0] == 0 and math.isinf(bins[-1][1])
        assert all(a[1] == b[0] for a, b in zip(bins, bins[1:]))
        assert len(bins) <= 10
        cdf = load_cdf(name)
        assert bins[0][1] == cdf.quantile(0.1)


def test_recipe_runs_end_to_end_at_tiny_scale(tmp_path, monkeypatch):
    monkeypatch.setattr(rh, "SCHEMES", TWO)
    out = tmp_path / "homa"
    result = CliRunner().invoke(app, ["reproduce", "homa", "--scale", "tiny", "--out", str(out), "--workers", "1"])
    assert result.exit_code == 0, result.output
    assert (out / "report" / "index.html").is_file()
    for w in rh.WORKLOADS:
        assert (out / "report" / "figures" / f"homa-{w}.png").is_file()
    assert (out / "report" / "figures" / "homa-load.png").is_file()
    assert json.loads((out / rh.RECIPE_FILE).read_text()) == {"scale": "tiny", "series": ["Homa", "PIAS"]}
    data = rh.figure_data(out)
    for w in rh.WORKLOADS:
        for label in ("Homa", "PIAS"):
            rows = data["bins"][w][label]
            assert len(rows) == len(rh.size_bins(w))
            assert sum(r["n"] for r in rows) == data["all"][w][label]["n"]
            assert all(r["p99"] is None or r["p99"] >= r["p50"] >= 1.0 - 1e-9 for r in rows)
    assert set(data["load"]["W4"]["Homa"]) == {0.5, 0.8}
    claims = {c.statement: c for c in rh.homa_claims(out)}
    assert len(claims) == 5
    short = next(c for s, c in claims.items() if "short messages" in s)
    assert len(short.value) == 3 and min(short.value) >= 1.0 and short.verdict in ("reproduced", "differs")
    assert next(c for s, c in claims.items() if "pFabric across" in s).verdict == "not_run"  # no pFabric series here
    # the sustainable-load sweep ran (W4 at 0.8 over 4 ms, Homa and PIAS): one gap, Homa's highest load minus
    # PIAS's, or, when a scheme's backlog still grows at that lowest load (4 ms is far too short to settle), not run
    # with that reason
    sustain = next(c for s, c in claims.items() if "higher loads" in s)
    if sustain.verdict == "not_run":
        assert sustain.value is None and "too short" in sustain.not_run_reason
    else:
        assert len(sustain.value) == 1 and sustain.verdict in ("reproduced", "differs")
    ku = rh.keep_up(out)
    assert set(ku) == {"Homa", "PIAS"} and all(0 < v[0.8]["offered"] for v in ku.values())
    assert "Sustainable load" in result.output
    assert_claims_file(out, "homa")
    assert "W1 (homa_w1_fb_memcached_etc)" in result.output and "pHost" in result.output
    # the paper's figure type: slowdown against the message-size percentile, each point a group of equally many
    # finished messages in size order, the groups covering 0-100% once
    curves = rh.percentile_curves(out)
    for w in rh.WORKLOADS:
        for label in ("Homa", "PIAS"):
            pts = curves[w][label]
            finished = data["all"][w][label]["n"] - data["all"][w][label]["unfinished"]
            assert sum(p["n"] for p in pts) == finished
            assert pts[0]["lo"] == 0.0 and pts[-1]["hi"] == 100.0
            assert all(a["hi"] == b["lo"] and a["size"] <= b["size"] for a, b in zip(pts, pts[1:]))
            assert max(p["n"] for p in pts) - min(p["n"] for p in pts) <= 1
            assert all(p["p99"] >= p["p50"] >= 1.0 - 1e-9 for p in pts)
    # the report shows them (and no fixed-bin figures, in whose first bin W1-W3 lie whole), and loads cleanly
    page = (out / "report" / "index.html").read_text()
    assert 'id="paper-figures"' in page and page.count("<img ") == len(rh.WORKLOADS) + 1
    assert "message-size percentile" in page
    if CHROMIUM.exists():
        found = check_page(out / "report" / "index.html", tmp_path)
        assert found["images"] == len(rh.WORKLOADS) + 1 and found["broken"] == [] and found["errors"] == []
        assert found["width"] <= 1400  # nothing wider than the window: wide tables scroll in their own box
    # resumable: a second run runs nothing again
    again = CliRunner().invoke(app, ["reproduce", "homa", "--scale", "tiny", "--out", str(out), "--workers", "1"])
    assert again.exit_code == 0 and "0 to run" in again.output


def test_bad_scale_fails_before_running(tmp_path):
    with pytest.raises(ValueError, match="scale: must be one of tiny, small, paper"):
        rh.homa_sweep("huge")
    result = CliRunner().invoke(app, ["reproduce", "homa", "--scale", "huge", "--out", str(tmp_path / "x")])
    assert result.exit_code != 0
    assert "--scale" in result.output and "huge" in result.output
    assert not (tmp_path / "x").exists()


def test_wire_bytes_count_as_the_authors_script():
    """HomaSimulation's adjustLoadFac.py by hand: Homa's 9,328 unscheduled bytes are 6 packets of 1,442 B and 676 B,
    6 x 1,538 + 676 + 96 = 10,000 B on the wire; 1,456 B more is one scheduled packet (1,538 B) and its 84 B grant,
    1 B more a scheduled packet of 1 + 82 B and its grant.
    pFabric's accounting: 1,500 B per 1,460 B and a 40 B ACK per packet."""
    got = rh.wire_bytes([1, 1_442, 9_328, 9_328 + 1_456, 9_328 + 1], "homa").tolist()
    assert got == [97, 1_538, 10_000, 10_000 + 1_538 + 84, 10_000 + 1 + 82 + 84]
    assert rh.wire_bytes([1, 1_460, 1_461], "tcp").tolist() == [81, 1_540, 1_540 + 81]
    # the authors' factors (homaTransportConfig.ini: loadFactor = $rlf * f) from these distributions
    for w, f in {"W1": 0.657, "W2": 0.796, "W3": 0.887, "W4": 0.898, "W5": 0.898}.items():
        assert rh.wire_factor(w, "homa") == pytest.approx(f, abs=0.005), w
    with pytest.raises(ValueError, match="kind"):
        rh.wire_bytes([1], "udp")


def test_w5_runs_keep_arriving_until_its_largest_messages_finish():
    """The cool-down (messages that load the fabric and are not measured) spans 3 / (1 - 0.8) = 15 mean ideal FCTs
    of the largest size decile, so a measured message of that decile that arrives last still finishes under load
    (processor sharing at 0.8: about 5 x its ideal). W5's top decile (above 4.87 MB) has a mean ideal FCT near
    16 ms on a 10 Gbps link, so at small scale its cool-down is 239 ms of the 400 ms run, where it was the
    last tenth (40 ms: 14-30% of the top decile's measured messages finished after the arrivals stopped)."""
    sc = rh.HOMA_SCALES["small"]
    assert rh.top_ideal_s("W5") == pytest.approx(0.01595, rel=0.02)
    sweep = rh.homa_sweep("small")
    by = {(p.values["workload"], p.values["variant"]): p.experiment.workload for p in sweep.points
          if p.values["kind"] == "size" and p.values["load"] == 0.8}
    w5 = by[("W5", "Homa")]
    cool_ms = sc.span_ms["W5"] * w5.cooldown_flows / w5.flows
    assert 0.99 * 3 / (1 - 0.8) * 15.95 <= cool_ms <= 0.6 * 400  # 239 ms of the 400 ms
    # W1-W3's top deciles are microseconds: a tenth is already longer
    assert by[("W1", "Homa")].cooldown_flows == by[("W1", "Homa")].flows // 10
    # the authors' Homa without its tail boost runs on W4 and W5 only, at 0.8
    nb = {(p.values["workload"], p.values["load"]) for p in sweep.points if p.values["variant"] == "Homa (no tail boost)"}
    assert nb == {("W4", 0.8), ("W5", 0.8)}
    assert by[("W5", "Homa (no tail boost)")].cooldown_flows == w5.cooldown_flows


def _sustain_run(tmp_path, variant, load, limit_ms, backlog, offered):
    """A fake run of the sustainable-load sweep: one message of ``offered`` bytes with ``backlog`` undelivered."""
    import pandas as pd

    from fctlab.sweep import RecipeRun

    d = tmp_path / f"{variant}-{load}-{limit_ms}"
    d.mkdir(exist_ok=True)
    pd.DataFrame({"size_bytes": [offered], "start_ns": [0.0], "bytes_delivered": [offered - backlog]}).to_parquet(
        d / "flows.parquet")
    return RecipeRun(values={"kind": "sustain", "workload": "W4", "load": load, "variant": variant, "seed": 1,
                             "limit_ms": limit_ms}, summary={}, path=d)


def test_sustained_load_is_where_the_backlog_stops_growing_and_ties_do_not_pass(tmp_path, monkeypatch):
    """By hand: between half the run and its end 1,000 more bytes arrive. A backlog that grows by 40 of them (4%)
    keeps up; by 60 (6%) it does not. Homa keeping up to 0.9 and pFabric to 0.85 reproduces the claim; both
    keeping up at every load is a tie, which does not; a scheme failing at the lowest load leaves it not run."""
    def runs(table):
        out = []
        for variant, growth in table.items():
            for load, g in growth.items():
                out += [_sustain_run(tmp_path, variant, load, 30.0, 500, 1_000),
                        _sustain_run(tmp_path, variant, load, 60.0, 500 + g, 2_000)]
        return out

    table = {"Homa": {0.85: 10, 0.9: 40, 0.95: 60}, "pFabric": {0.85: 0, 0.9: 60, 0.95: 200},
             "PIAS": {0.85: 40, 0.9: 70, 0.95: 90}}
    monkeypatch.setattr(rh, "sustain_runs", lambda _: runs(table))
    ku = rh.keep_up(tmp_path)
    assert ku["Homa"][0.9]["growth"] == pytest.approx(0.04) and ku["Homa"][0.9]["keeps_up"] == 1.0
    assert ku["Homa"][0.95]["keeps_up"] == 0.0
    assert [rh.highest_sustained(ku[v]) for v in ("Homa", "pFabric", "PIAS")] == [0.9, 0.85, 0.85]
    monkeypatch.setattr(rh, "figure_data", lambda _: {"bins": {}, "short": {}, "load": {}})
    claim = next(c for c in rh.homa_claims(tmp_path) if c.id == "sustains-higher-load")
    assert claim.value == pytest.approx([0.05, 0.05]) and claim.verdict == "reproduced"
    # a tie: everyone keeps up at every load
    for v in table.values():
        v.update({x: 0 for x in v})
    claim = next(c for c in rh.homa_claims(tmp_path) if c.id == "sustains-higher-load")
    assert claim.value == [0.0, 0.0] and claim.verdict == "differs"
    # a window too short to see the backlog level off: a scheme that does not keep up at the lowest load (where
    # the per-size runs finish everything) leaves the claim not run, with the reason
    table["pFabric"][0.85] = 60
    claim = next(c for c in rh.homa_claims(tmp_path) if c.id == "sustains-higher-load")
    assert claim.value is None and claim.verdict == "not_run" and "too short" in claim.not_run_reason
