"""Deadlines (drawn, floored, from a trace), what a run says about them (met_deadline, application throughput),
and the sending patterns of the PDQ paper's §5.3 (aggregation, stride, staggered, permutation without a load)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

import fctlab
from fctlab import workloads as wl
from fctlab.analyze import deadline_stats, summary_table
from fctlab.cli import app
from fctlab.config import ConfigError, experiment_from_dict
from fctlab.simulation import NEVER_PS, build_flows, flow_table
from fctlab.workloads import WorkloadError

from conftest import TINY  # noqa: E402  (the shared tiny experiment)

#: 4 leaves x 3 hosts, 1 spine at 1 Gbps: the PDQ paper's tree.
TREE = {"kind": "leaf_spine", "leaves": 4, "hosts_per_leaf": 3, "spines": 1, "link_gbps": 1, "link_delay_ns": 10_000}


def tree_exp(**workload):
    return experiment_from_dict({"seed": 3, "topology": dict(TREE), "workload": workload})


# --------------------------------------------------------------------------------------------------------------
# Deadlines drawn for a generated workload


def test_deadlines_are_deterministic_and_floored_at_the_transmission_time():
    sizes = np.array([1, 1460, 1461, 100_000, 10_000_000], dtype=np.int64)
    d1 = wl.deadlines(np.random.default_rng(5), sizes, mean_ms=0.001, host_link_bps=1e9, mss_bytes=1460,
                      header_bytes=40)
    d2 = wl.deadlines(np.random.default_rng(5), sizes, mean_ms=0.001, host_link_bps=1e9, mss_bytes=1460,
                      header_bytes=40)
    assert np.array_equal(d1, d2)
    # wire bytes by hand: 1 + 40; 1460 + 40; 1461 + 2 x 40; 100,000 + 69 x 40; 10 MB + 6850 x 40
    wire = np.array([41, 1500, 1541, 102_760, 10_274_000], dtype=np.float64)
    tx_ns = wire * 8.0  # at 1 Gbps a byte takes 8 ns
    assert np.array_equal(wl.wire_bytes(sizes, 1460, 40), wire.astype(np.int64))
    assert np.all(d1 >= tx_ns)
    # a 1 us mean: the large flows' draws are all below their transmission time, so they sit on the floor
    assert np.array_equal(d1[3:], tx_ns[3:])


def test_deadlines_follow_the_exponential_mean_when_the_floor_is_small():
    sizes = np.full(20_000, 1000, dtype=np.int64)
    d = wl.deadlines(np.random.default_rng(1), sizes, mean_ms=20.0, host_link_bps=1e9, mss_bytes=1460,
                     header_bytes=40)
    assert d.mean() == pytest.approx(20e6, rel=0.03)


def test_deadline_fraction_and_size_cut():
    sizes = np.array([1000, 50_000] * 5000, dtype=np.int64)
    d = wl.deadlines(np.random.default_rng(2), sizes, mean_ms=20.0, host_link_bps=1e9, mss_bytes=1460,
                     header_bytes=40, max_bytes=40_000)
    assert np.all(np.isnan(d[sizes > 40_000])) and not np.any(np.isnan(d[sizes <= 40_000]))
    d = wl.deadlines(np.random.default_rng(2), sizes, mean_ms=20.0, host_link_bps=1e9, mss_bytes=1460,
                     header_bytes=40, fraction=0.25)
    assert np.mean(~np.isnan(d)) == pytest.approx(0.25, abs=0.02)


def test_experiment_draws_deadlines_from_its_seed():
    exp = tree_exp(pattern="aggregation", flows=10, size_uniform_mean_bytes=100_000, deadline_mean_ms=20)
    a, b = build_flows(exp), build_flows(exp)
    assert np.array_equal(a["deadline_ns"].to_numpy(), b["deadline_ns"].to_numpy())
    other = build_flows(exp.with_overrides(["seed=4"]))
    assert not np.array_equal(a["deadline_ns"].to_numpy(), other["deadline_ns"].to_numpy())
    tx_ns = wl.wire_bytes(a["size_bytes"].to_numpy(), 1460, 40) * 8.0
    assert np.all(a["deadline_ns"].to_numpy() >= tx_ns)


def test_deadline_floor_is_the_ideal_fct_by_default():
    """A mean far below every flow's time: every deadline sits on its floor, which by default is the flow's ideal
    FCT as the run reports it (propagation and store-and-forward included), so a lone flow of a scheme without
    set-up can meet it; with deadline_floor = "transmission" the floor is the transmission time alone, which no
    flow can meet."""
    w = {"pattern": "aggregation", "flows": 11, "size_uniform_mean_bytes": 50_000, "deadline_mean_ms": 1e-6}
    res = fctlab.simulate(tree_exp(**w))
    f = res.flows
    # (the engine rounds start + D up to the picosecond)
    assert np.allclose(f["deadline_ns"], f["ideal_fct_ns"], rtol=0, atol=0.002)
    # the tree's paths: 2 hops under a leaf (65 us RTT), 4 across the root; the floor is above the transmission
    tx_ns = wl.wire_bytes(f["size_bytes"].to_numpy(), 1460, 40) * 8.0
    extra = f["deadline_ns"].to_numpy() - tx_ns
    assert extra.min() > 2 * 10_000 and extra.max() < 4 * 10_000 + 4 * 12_000 + 1
    tx = build_flows(tree_exp(**w, deadline_floor="transmission"))
    assert np.array_equal(tx["deadline_ns"].to_numpy(), tx_ns)
    # one flow alone (TCP, no set-up: it takes exactly its ideal FCT) meets a deadline on the ideal floor, and
    # misses one on the transmission floor
    alone = {"pattern": "aggregation", "flows": 1, "size_uniform_mean_bytes": 50_000, "deadline_mean_ms": 1e-6}
    assert fctlab.simulate(tree_exp(**alone)).summary["application_throughput"] == 1.0
    missed = fctlab.simulate(tree_exp(**alone, deadline_floor="transmission"))
    assert missed.summary["application_throughput"] == 0.0


def test_ideal_fct_of_the_engine_matches_a_run_and_rejects_bad_hosts():
    from fctlab import _core

    exp = experiment_from_dict(_toml_dict(TINY))
    res = fctlab.simulate(exp)
    f = res.flows
    got = _core.ideal_fct_ns(exp.engine_json(), f["src"].to_numpy(np.uint32), f["dst"].to_numpy(np.uint32),
                             f["size_bytes"].to_numpy(np.uint64))
    assert np.allclose(got, f["ideal_fct_ns"].to_numpy(), rtol=0, atol=0.001)
    with pytest.raises(ValueError, match="not in the topology"):
        _core.ideal_fct_ns(exp.engine_json(), np.array([0], np.uint32), np.array([10_000], np.uint32),
                           np.array([1000], np.uint64))
    with pytest.raises(ValueError, match="same length"):
        _core.ideal_fct_ns(exp.engine_json(), np.array([0, 1], np.uint32), np.array([1], np.uint32),
                           np.array([1000], np.uint64))


def test_run_with_deadlines_reports_them(tmp_path):
    exp = tree_exp(pattern="aggregation", flows=6, size_uniform_mean_bytes=20_000, deadline_mean_ms=0.3)
    res = fctlab.simulate(exp)
    f = res.flows
    assert f["met_deadline"].notna().all()
    due = f["start_ns"] + f["deadline_ns"]
    assert (f["met_deadline"].astype(bool) == (f["finished"] & (f["finish_ns"] <= due))).all()
    s = res.summary
    assert s["deadline_flows"] == 6 and s["terminated_flows"] == 0
    assert s["application_throughput"] == pytest.approx(f["met_deadline"].astype(bool).mean())
    assert "application throughput" in summary_table(s)
    fctlab.write_results(res, tmp_path / "run")
    back = pd.read_parquet(tmp_path / "run" / "flows.parquet")
    assert back["met_deadline"].tolist() == f["met_deadline"].tolist()


def test_run_without_deadlines_has_null_deadline_columns():
    exp = experiment_from_dict(_toml_dict(TINY))
    res = fctlab.simulate(exp)
    assert res.flows["deadline_ns"].isna().all() and res.flows["met_deadline"].isna().all()
    assert not res.flows["terminated"].any()
    assert res.summary["deadline_flows"] == 0 and res.summary["application_throughput"] is None
    assert "application throughput" not in summary_table(res.summary)


def _toml_dict(text: str) -> dict:
    import tomllib

    return tomllib.loads(text)


# --------------------------------------------------------------------------------------------------------------
# met_deadline and application throughput on a hand-made table


def test_met_deadline_and_application_throughput_by_hand():
    # five flows starting at 0: deadline 100 ns each but the last (none)
    workload = pd.DataFrame({
        "flow_id": np.arange(5, dtype=np.uint32), "src": [0] * 5, "dst": [1] * 5, "size_bytes": [1000] * 5,
        "start_ps": np.zeros(5, dtype=np.uint64), "deadline_ns": [100.0, 100.0, 100.0, 100.0, np.nan],
    })
    never = NEVER_PS
    columns = {
        # on time (exactly at the deadline), late, unfinished, terminated, no deadline
        "finish_ps": np.array([100_000, 100_001, never, never, 5_000], dtype=np.uint64),
        "terminated": np.array([False, False, False, True, False]),
        "ideal_fct_ps": np.full(5, 1000, dtype=np.uint64), "sender_done_ps": np.full(5, never, dtype=np.uint64),
    }
    for c in ("retransmits", "timeouts", "bytes_sent", "bytes_delivered", "bytes_dropped", "ecn_marked", "probes",
              "fast_recoveries", "priority_losses", "spurious_retransmits", "ooo_max_segments"):
        columns[c] = np.zeros(5, dtype=np.uint64)
    table = flow_table(workload, columns, warmup_flows=0, default_priority=0)
    assert table["met_deadline"].tolist() == [True, False, False, False, pd.NA]
    stats = deadline_stats(table)
    assert stats == {"deadline_flows": 4, "met_deadline_flows": 1, "application_throughput": 0.25,
                     "terminated_flows": 1}
    # the measured flows only: without the first flow, none of three met its deadline
    measured = np.array([False, True, True, True, True])
    assert deadline_stats(table, measured)["application_throughput"] == 0.0


# --------------------------------------------------------------------------------------------------------------
# Sending patterns


def test_aggregation_splits_flows_floor_and_ceil():
    df = wl.aggregation(hosts=12, sizes=wl.UniformSizes(100_000), flows=25, rng=np.random.default_rng(0), receiver=4)
    assert (df["dst"] == 4).all() and 4 not in set(df["src"])
    counts = df.groupby("src").size()
    assert len(counts) == 11 and set(counts) == {2, 3} and counts.sum() == 25
    assert (counts == 3).sum() == 25 % 11
    assert (df["start_ps"] == 0).all()
    spread = wl.aggregation(hosts=12, sizes=wl.UniformSizes(100_000), flows=25, rng=np.random.default_rng(0),
                            start_spread_ns=1000)
    assert spread["start_ps"].max() < 1_000_000 and spread["start_ps"].nunique() > 1


def test_uniform_sizes_are_d3s():
    u = wl.UniformSizes(100_000)
    assert (u.lo_bytes, u.hi_bytes, u.mean_bytes) == (2_000, 198_000, 100_000)
    s = u.sample(np.random.default_rng(0), 50_000)
    assert s.min() >= 2_000 and s.max() <= 198_000
    assert s.mean() == pytest.approx(100_000, rel=0.01)


@pytest.mark.parametrize("stride", [1, 6, 13])
def test_stride_maps_x_to_x_plus_i(stride):
    df = wl.stride(hosts=12, sizes=wl.UniformSizes(1000), flows=36, rng=np.random.default_rng(0), stride=stride)
    assert ((df["src"].astype(int) + stride) % 12 == df["dst"].astype(int)).all()
    assert sorted(df["src"].value_counts()) == [3] * 12


def test_permutation_without_load_is_a_bijection_without_fixed_points():
    for seed in range(20):
        df = wl.permutation(hosts=12, cdf=wl.UniformSizes(1000), load=None, host_link_bps=None, flows=24,
                            rng=np.random.default_rng(seed))
        pairs = df[["src", "dst"]].drop_duplicates()
        assert len(pairs) == 12 and pairs["src"].nunique() == 12 and pairs["dst"].nunique() == 12
        assert (pairs["src"] != pairs["dst"]).all()
        assert (df["start_ps"] == 0).all()


@pytest.mark.parametrize("p", [0.0, 0.3, 0.7, 1.0])
def test_staggered_keeps_a_fraction_p_under_the_rack(p):
    racks = np.arange(12) // 3
    df = wl.staggered(hosts=12, racks=racks, sizes=wl.UniformSizes(1000), flows=20_000,
                      rng=np.random.default_rng(11), p=p)
    src, dst = df["src"].to_numpy(), df["dst"].to_numpy()
    assert not np.any(src == dst) and dst.max() < 12
    local = racks[src] == racks[dst]
    assert local.mean() == pytest.approx(p, abs=0.015)
    # destinations are spread over every candidate
    if 0 < p < 1:
        assert len(set(zip(src.tolist(), dst.tolist()))) == 12 * 11


def test_staggered_errors():
    with pytest.raises(WorkloadError, match="at least 2 hosts under every rack"):
        wl.staggered(hosts=4, racks=[0, 1, 2, 3], sizes=wl.UniformSizes(1000), flows=4,
                     rng=np.random.default_rng(0), p=0.5)
    with pytest.raises(WorkloadError, match="second rack"):
        wl.staggered(hosts=4, racks=[0, 0, 0, 0], sizes=wl.UniformSizes(1000), flows=4,
                     rng=np.random.default_rng(0), p=0.5)


def test_patterns_from_an_experiment():
    flows = build_flows(tree_exp(pattern="staggered", staggered_p=0.5, flows=2000, size_uniform_mean_bytes=1000))
    assert len(flows) == 2000
    racks = flows["src"].to_numpy() // 3 == flows["dst"].to_numpy() // 3
    assert racks.mean() == pytest.approx(0.5, abs=0.05)
    flows = build_flows(tree_exp(pattern="stride", stride=6, flows=12, cdf="websearch"))
    assert ((flows["src"] + 6) % 12 == flows["dst"]).all()
    flows = build_flows(tree_exp(pattern="stride", stride=1, flows=50, cdf="websearch", load=0.5))
    assert flows["start_ps"].min() > 0 and ((flows["src"] + 1) % 12 == flows["dst"]).all()


# --------------------------------------------------------------------------------------------------------------
# Bad input: one line naming the key, nothing written


@pytest.mark.parametrize(
    "workload, key",
    [
        ({"pattern": "aggregation", "flows": 4, "size_uniform_mean_bytes": 1e5, "deadline_mean_ms": -1},
         "workload.deadline_mean_ms"),
        ({"pattern": "aggregation", "flows": 4, "size_uniform_mean_bytes": 1e5, "deadline_fraction": 0.5},
         "workload.deadline_fraction"),
        ({"pattern": "aggregation", "flows": 4, "size_uniform_mean_bytes": 1e5, "deadline_mean_ms": 20,
          "deadline_fraction": 1.5}, "workload.deadline_fraction"),
        ({"pattern": "aggregation", "flows": 4, "size_uniform_mean_bytes": 1e5, "load": 0.5}, "workload.load"),
        ({"pattern": "aggregation", "flows": 4, "size_uniform_mean_bytes": 1e5, "deadline_floor": "ideal"},
         "workload.deadline_floor"),
        ({"pattern": "aggregation", "flows": 4, "size_uniform_mean_bytes": 1e5, "deadline_mean_ms": 20,
          "deadline_floor": "zero"}, "workload.deadline_floor"),
        ({"pattern": "aggregation", "flows": 4}, "workload.cdf"),
        ({"pattern": "aggregation", "flows": 4, "size_uniform_mean_bytes": 1e5, "cdf": "websearch"},
         "workload.size_uniform_mean_bytes"),
        ({"pattern": "aggregation", "flows": 4, "size_uniform_mean_bytes": 1e5, "receiver": 12}, "workload.receiver"),
        ({"pattern": "stride", "flows": 4, "size_uniform_mean_bytes": 1e5}, "workload.stride"),
        ({"pattern": "stride", "flows": 4, "size_uniform_mean_bytes": 1e5, "stride": 24}, "workload.stride"),
        ({"pattern": "staggered", "flows": 4, "size_uniform_mean_bytes": 1e5}, "workload.staggered_p"),
        ({"pattern": "staggered", "flows": 4, "size_uniform_mean_bytes": 1e5, "staggered_p": 1.2},
         "workload.staggered_p"),
        ({"pattern": "permutation", "flows": 4, "size_uniform_mean_bytes": 1e5, "stride": 2}, "workload.stride"),
        ({"pattern": "permutation", "flows": 4, "cdf": "websearch", "load": 0.5, "start_spread_ns": 10},
         "workload.start_spread_ns"),
    ],
)
def test_bad_workload_keys_are_named(workload, key):
    with pytest.raises(ConfigError) as e:
        tree_exp(**workload)
    assert str(e.value).startswith(f"{key}:"), str(e.value)


@pytest.mark.parametrize("cell, match", [("0", "must be > 0"), ("-5", "must be > 0"), ("abc", "not a number")])
def test_bad_deadline_column_is_named_and_nothing_is_written(tmp_path, cell, match):
    trace = tmp_path / "t.csv"
    trace.write_text(f"src,dst,size_bytes,start_ns,deadline_ns\n0,1,1000,0,5000\n1,2,1000,10,{cell}\n")
    exp = tmp_path / "exp.toml"
    exp.write_text(TINY.split("[workload]")[0] + f"[workload]\ntrace = '{trace}'\n")
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["run", str(exp), "--out", str(out)])
    assert result.exit_code == 2, result.output
    assert "workload.trace" in result.output and "deadline_ns" in result.output and "row 2" in result.output
    assert match in result.output
    assert not out.exists()


def test_trace_deadlines_count_from_the_start(tmp_path):
    trace = tmp_path / "t.csv"
    trace.write_text("src,dst,size_bytes,start_ns,deadline_ns\n0,1,1000,0,1e9\n1,2,1000,1000,\n2,3,1000,2000,1\n")
    exp = tmp_path / "exp.toml"
    exp.write_text(TINY.split("[workload]")[0] + f"[workload]\ntrace = '{trace}'\n")
    res = fctlab.simulate(fctlab.load_experiment(exp))
    f = res.flows
    assert f["met_deadline"].tolist() == [True, pd.NA, False]  # 1 s is plenty, 1 ns is too short
    assert res.summary["deadline_flows"] == 2 and res.summary["application_throughput"] == 0.5


def test_catalog_holds_application_throughput(tmp_path):
    exp = tree_exp(pattern="aggregation", flows=4, size_uniform_mean_bytes=10_000, deadline_mean_ms=50)
    fctlab.write_results(fctlab.simulate(exp), tmp_path / "a")
    fctlab.write_results(fctlab.simulate(experiment_from_dict(_toml_dict(TINY))), tmp_path / "b")
    from fctlab import catalog

    catalog.rebuild(tmp_path)
    runs, flows = fctlab.catalog(tmp_path)
    by_id = runs.set_index("run_id")
    assert by_id.loc["a", "deadline_flows"] == 4 and by_id.loc["a", "application_throughput"] == 1.0
    assert by_id.loc["b", "deadline_flows"] == 0 and pd.isna(by_id.loc["b", "application_throughput"])
    assert "met_deadline" in flows.columns and len(flows) == 24


def test_report_shows_application_throughput_only_with_deadline_runs(tmp_path):
    from fctlab.report import write_report

    plain = tmp_path / "plain"
    fctlab.write_results(fctlab.simulate(experiment_from_dict(_toml_dict(TINY))), plain / "b")
    html = write_report(plain).html.read_text()
    assert "application throughput" not in html
    mixed = tmp_path / "mixed"
    fctlab.write_results(fctlab.simulate(experiment_from_dict(_toml_dict(TINY))), mixed / "b")
    exp = tree_exp(pattern="aggregation", flows=4, size_uniform_mean_bytes=10_000, deadline_mean_ms=50)
    fctlab.write_results(fctlab.simulate(exp), mixed / "a")
    html = write_report(mixed).html.read_text()
    assert "application throughput" in html and "100.0%" in html


def test_incast_gets_deadlines_and_keeps_its_flows():
    w = {"pattern": "incast", "fan_in": 3, "response_bytes": 20_000, "queries": 5, "query_rate_hz": 1000}
    plain = build_flows(tree_exp(**w))
    with_d = build_flows(tree_exp(**w, deadline_mean_ms=5))
    assert with_d["deadline_ns"].notna().all()
    assert plain.equals(with_d.drop(columns=["deadline_ns"]))
