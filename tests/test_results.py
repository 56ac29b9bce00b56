"""The per-flow table, result files (atomic writes), end-to-end runs through the Python API, determinism."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest

import fctlab
from fctlab.results import write_results
from fctlab.simulation import FLOW_COLUMNS, NEVER_PS, flow_table

TINY = """\
seed = 7
[topology]
kind = "single_switch"
hosts = 4
[workload]
cdf = "websearch"
load = 0.5
flows = 20
warmup_flows = 2
"""


def tiny(tmp_path: Path, overrides=()) -> fctlab.Experiment:
    path = tmp_path / "tiny.toml"
    path.write_text(TINY)
    return fctlab.load_experiment(path, overrides=overrides)


# ---------------------------------------------------------------------------------------------------------------
# The flow table, from synthetic engine columns (no engine needed)


def synthetic():
    workload = pd.DataFrame({
        "flow_id": np.arange(4, dtype=np.uint32),
        "src": np.array([0, 1, 2, 3], dtype=np.uint32),
        "dst": np.array([1, 2, 3, 0], dtype=np.uint32),
        "size_bytes": np.array([100_000, 100_001, 10_000_000, 10_000_001], dtype=np.uint64),
        "start_ps": np.array([1_000, 1_000, 500, 2_000_000_000_001], dtype=np.uint64),
        "query_id": np.array([0, 0, 1, 1], dtype=np.uint32),
    })
    columns = {
        "finish_ps": np.array([3_500, NEVER_PS, 10_500, 2_000_000_009_002], dtype=np.uint64),
        "sender_done_ps": np.array([4_000, NEVER_PS, 11_000, NEVER_PS], dtype=np.uint64),
        "ideal_fct_ps": np.array([1_250, 700, 5_000, 9_001], dtype=np.uint64),
        "retransmits": np.array([0, 3, 1, 0], dtype=np.uint32),
        "timeouts": np.array([0, 1, 0, 0], dtype=np.uint32),
        "bytes_sent": np.array([100_000, 50_000, 10_000_000, 10_000_001], dtype=np.uint64),
        "bytes_delivered": np.array([100_000, 40_000, 10_000_000, 10_000_001], dtype=np.uint64),
        "bytes_dropped": np.array([0, 10_000, 0, 0], dtype=np.uint64),
        "ecn_marked": np.array([0, 2, 5, 0], dtype=np.uint32),
        "probes": np.array([0, 0, 1, 0], dtype=np.uint32),
        "fast_recoveries": np.array([0, 0, 0, 0], dtype=np.uint32),
        "priority_losses": np.array([0, 0, 0, 0], dtype=np.uint32),
        "spurious_retransmits": np.array([0, 1, 0, 0], dtype=np.uint32),
        "ooo_max_segments": np.array([0, 3, 0, 0], dtype=np.uint32),
    }
    return workload, columns


def test_flow_table_converts_and_joins():
    workload, columns = synthetic()
    df = flow_table(workload, columns, warmup_flows=2, default_priority=3)
    assert list(df.columns) == [*FLOW_COLUMNS, "query_id"]
    assert df["start_ns"].tolist() == [1.0, 1.0, 0.5, 2_000_000_000.001]
    assert df["fct_ns"].iloc[0] == 2.5
    assert df["fct_ns"].iloc[2] == 10.0
    assert df["fct_ns"].iloc[3] == 9.001  # subtracted in integer ps before conversion: exact
    assert df["finish_ns"].iloc[3] == 2_000_000_009.002
    assert math.isnan(df["finish_ns"].iloc[1]) and math.isnan(df["fct_ns"].iloc[1])
    assert math.isnan(df["slowdown"].iloc[1]) and math.isnan(df["sender_done_ns"].iloc[1])
    assert df["slowdown"].iloc[0] == 2.0 and df["slowdown"].iloc[2] == 2.0
    assert df["ideal_fct_ns"].tolist() == [1.25, 0.7, 5.0, 9.001]
    assert df["finished"].tolist() == [True, False, True, True]
    assert df["size_bin"].tolist() == ["small", "medium", "medium", "large"]
    assert df["priority"].tolist() == [3, 3, 3, 3]  # no priority column: the scheme's
    assert df["retransmits"].tolist() == [0, 3, 1, 0]
    assert df["bytes_dropped"].tolist() == [0, 10_000, 0, 0]
    assert df["query_id"].tolist() == [0, 0, 1, 1]


def test_flow_table_consuming_the_engine_columns_gives_the_same_table():
    workload, columns = synthetic()
    kept = flow_table(workload, dict(columns), warmup_flows=2, default_priority=3)
    taken = dict(columns)
    consumed = flow_table(workload, taken, warmup_flows=2, default_priority=3, consume=True)
    pd.testing.assert_frame_equal(consumed, kept)
    assert taken == {}  # every engine column was taken out (and so can be freed) as it was converted
    # without consume, the caller's columns are left alone
    again = dict(columns)
    flow_table(workload, again, warmup_flows=2, default_priority=3)
    assert again.keys() == columns.keys()


def test_warmup_is_by_start_time_then_flow_id():
    workload, columns = synthetic()
    df = flow_table(workload, columns, warmup_flows=2, default_priority=0)
    # Flow 2 starts first (500 ps); flows 0 and 1 tie at 1000 ps, and the lower id wins.
    assert df["warmup"].tolist() == [True, False, True, False]
    assert flow_table(workload, columns, warmup_flows=0, default_priority=0)["warmup"].sum() == 0


def test_trace_priority_is_kept():
    workload, columns = synthetic()
    workload["priority"] = np.array([1, 2, 3, 4], dtype=np.uint8)
    df = flow_table(workload, columns, warmup_flows=0, default_priority=0)
    assert df["priority"].tolist() == [1, 2, 3, 4]


# ---------------------------------------------------------------------------------------------------------------
# Result files


def synthetic_result() -> fctlab.Result:
    from fctlab.analyze import summarize

    workload, columns = synthetic()
    df = flow_table(workload, columns, warmup_flows=1, default_priority=0)
    config = {"name": "synthetic", "seed": 1, "output": {"compression": "zstd"}}
    return fctlab.Result(flows=df, summary=summarize(df, {"drops": 1}, config), stats={"drops": 1}, config=config)


def test_write_results_writes_three_files_and_no_temporaries(tmp_path):
    out = tmp_path / "a" / "b"
    paths = write_results(synthetic_result(), out)
    assert sorted(p.name for p in out.iterdir()) == ["config.json", "flows.parquet", "summary.json"]
    assert set(paths) == {"flows", "summary", "config"}
    summary = json.loads((out / "summary.json").read_text())  # strict JSON: NaN became null
    assert summary["unfinished_flows"] == 1
    assert json.loads((out / "config.json").read_text())["name"] == "synthetic"
    table = pq.read_table(out / "flows.parquet")
    assert table.column_names == [*FLOW_COLUMNS, "query_id"]
    back = fctlab.read_results(out)
    pd.testing.assert_frame_equal(back.flows, synthetic_result().flows, check_dtype=False)
    assert back.summary == summary


def test_failed_write_leaves_no_file(tmp_path, monkeypatch):
    import fctlab.results

    def broken(df, where, *args):
        where.write(b"PAR1 half a file")
        raise OSError("disk full")

    monkeypatch.setattr(fctlab.results, "write_frame_parquet", broken)
    out = tmp_path / "out"
    with pytest.raises(OSError, match="disk full"):
        write_results(synthetic_result(), out)
    assert list(out.iterdir()) == []  # neither flows.parquet nor a temporary file


def test_failed_rewrite_keeps_the_old_file(tmp_path, monkeypatch):
    out = tmp_path / "out"
    write_results(synthetic_result(), out)
    before = (out / "flows.parquet").read_bytes()

    import fctlab.results

    def broken(df, where, *args):
        where.write(b"PAR1")
        raise KeyboardInterrupt  # a kill mid-write

    monkeypatch.setattr(fctlab.results, "write_frame_parquet", broken)
    with pytest.raises(KeyboardInterrupt):
        write_results(synthetic_result(), out)
    assert (out / "flows.parquet").read_bytes() == before
    assert sorted(p.name for p in out.iterdir()) == ["config.json", "flows.parquet", "summary.json"]


def test_flows_are_written_in_row_groups_and_read_back_whole(tmp_path, monkeypatch):
    import fctlab.results

    monkeypatch.setattr(fctlab.results, "PARQUET_ROWS", 2)
    r = synthetic_result()
    write_results(r, tmp_path)
    meta = pq.ParquetFile(tmp_path / "flows.parquet").metadata
    assert meta.num_rows == len(r.flows) and meta.num_row_groups == -(-len(r.flows) // 2)
    pd.testing.assert_frame_equal(fctlab.read_results(tmp_path).flows, r.flows, check_dtype=False)


def test_plot_writes_png_and_svg(tmp_path):
    from fctlab.plot import plot_fct_bins

    r = synthetic_result()
    written = plot_fct_bins({"tcp": r, "dctcp": r.summary}, tmp_path / "fct_bins")
    assert [p.name for p in written] == ["fct_bins.png", "fct_bins.svg"]
    assert (tmp_path / "fct_bins.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert b"<svg" in (tmp_path / "fct_bins.svg").read_bytes()[:2000]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fct_bins.png", "fct_bins.svg"]


# ---------------------------------------------------------------------------------------------------------------
# End to end through the engine


def test_tiny_run_through_the_api(tmp_path):
    exp = tiny(tmp_path)
    result = fctlab.simulate(exp)
    df = result.flows
    assert list(df.columns) == list(FLOW_COLUMNS)
    assert len(df) == 20
    assert df["flow_id"].tolist() == list(range(20))
    assert df["finished"].all(), df[~df["finished"]]
    assert (df["slowdown"] >= 1.0).all()
    assert (df["fct_ns"] >= df["ideal_fct_ns"]).all()
    assert df["warmup"].sum() == 2
    assert (df["bytes_sent"] == df["bytes_delivered"] + df["bytes_dropped"]).all()
    s = result.summary
    assert s["flows"] == 20 and s["measured_flows"] == 18 and s["unfinished_flows"] == 0
    assert s["bins"]["all"]["count"] == 18
    assert sum(s["bins"][b]["count"] for b in ("small", "medium", "large")) == 18
    assert s["events"] > 0 and s["sim_time_ns"] > 0
    assert s["config"]["workload"]["cdf"] == "websearch"
    paths = fctlab.write_results(result, tmp_path / "out")
    assert pq.read_table(paths["flows"]).num_rows == 20


def test_same_seed_same_results_different_seed_different(tmp_path):
    a = fctlab.simulate(tiny(tmp_path)).flows
    b = fctlab.simulate(tiny(tmp_path)).flows
    pd.testing.assert_frame_equal(a, b)
    c = fctlab.simulate(tiny(tmp_path, overrides=["seed=8"])).flows
    assert not a[["size_bytes", "start_ns"]].equals(c[["size_bytes", "start_ns"]])


def test_simulate_on_flow_columns_equals_simulate_on_the_dataframe(tmp_path):
    # the command line hands simulate the pandas-free workload; the API user a DataFrame: same run, same results
    from fctlab.simulation import build_flows, workload_columns

    exp = tiny(tmp_path)
    a = fctlab.simulate(exp, flows=build_flows(exp))
    b = fctlab.simulate(exp, flows=workload_columns(exp))
    pd.testing.assert_frame_equal(a.flows, b.flows)
    wall = ("wall_seconds", "events_per_second", "htsim_equivalent_events_per_second")
    strip = lambda s: {k: strip(v) if isinstance(v, dict) else v for k, v in s.items() if k not in wall}  # noqa: E731
    assert strip(a.summary) == strip(b.summary)


def test_schemes_share_the_same_flows(tmp_path):
    tcp = fctlab.simulate(tiny(tmp_path, overrides=["scheme.name=tcp"])).flows
    dctcp = fctlab.simulate(tiny(tmp_path, overrides=["scheme.name=dctcp"])).flows
    cols = ["flow_id", "src", "dst", "size_bytes", "start_ns"]
    pd.testing.assert_frame_equal(tcp[cols], dctcp[cols])


def test_trace_run_keeps_trace_columns(tmp_path):
    (tmp_path / "t.csv").write_text(
        "src,dst,size_bytes,start_ns,priority,lower_bytes,upper_bytes\n"
        "0,1,3000,0,1,1000,5000\n2,3,150000,100,0,100000,200000\n1,0,2000,50,2,0,4000\n"
    )
    (tmp_path / "trace.toml").write_text(TINY.split("[workload]")[0] + "[workload]\ntrace = 't.csv'\n")
    result = fctlab.simulate(fctlab.load_experiment(tmp_path / "trace.toml"))
    df = result.flows
    assert list(df.columns) == [*FLOW_COLUMNS, "lower_bytes", "upper_bytes"]
    assert df["start_ns"].tolist() == [0.0, 50.0, 100.0]  # sorted by start, renumbered
    assert df["priority"].tolist() == [1, 2, 0]
    assert df["upper_bytes"].tolist() == [5000, 4000, 200000]
    assert df["finished"].all()


def test_incast_run_keeps_query_ids():
    exp = fctlab.experiment_from_dict({
        "seed": 3,
        "topology": {"kind": "single_switch", "hosts": 8},
        "workload": {"pattern": "incast", "fan_in": 3, "response_bytes": 20_000, "queries": 4, "load": 0.3},
    })
    df = fctlab.simulate(exp).flows
    assert len(df) == 12 and df["finished"].all()
    assert df.groupby("query_id")["dst"].nunique().eq(1).all()  # one aggregator per query
    assert (df["size_bytes"] == 20_000).all()


def _one_segment(rto_min_us: float):
    """One 1,460 B flow over the 10 Gb/s dumbbell (3 links of 1 us): the segment is received at 6.6 us and
    its ACK is back at 9.696 us."""
    exp = fctlab.experiment_from_dict(
        {
            "topology": {"kind": "dumbbell", "senders": 1, "receivers": 1, "host_link_gbps": 10,
                         "core_link_gbps": 10, "host_link_delay_ns": 1000, "core_link_delay_ns": 1000},
            "transport": {"rto_min_us": rto_min_us},
            "scheme": {"name": "tcp"},
            "workload": {"cdf": "websearch", "load": 0.5, "flows": 1},
        },
        base_dir=".",
    )
    table = pd.DataFrame({"flow_id": [0], "src": [0], "dst": [1], "size_bytes": [1460], "start_ps": [0],
                          "priority": [0]})
    return fctlab.simulate(exp, flows=table)


def test_spurious_retransmissions_are_counted_per_flow_and_per_run():
    # an RTO of 3 us, below the round trip: retransmissions at 3 us and (backed off) 9 us, both of a segment the
    # receiver already holds (the second arrives after the flow is over)
    r = _one_segment(3.0)
    f = r.flows.iloc[0]
    assert f["fct_ns"] == 6600.0
    assert (f["timeouts"], f["retransmits"], f["spurious_retransmits"]) == (2, 2, 2)
    assert (r.summary["retransmits"], r.summary["spurious_retransmits"]) == (2, 2)
    # an RTO above the round trip: a clean run
    r = _one_segment(50.0)
    assert int(r.flows["spurious_retransmits"].sum()) == 0
    assert (r.summary["retransmits"], r.summary["spurious_retransmits"]) == (0, 0)


# ---------------------------------------------------------------------------------------------------------------
# Cool-down: the last flows load the network while the measured ones finish, and are not summarised


def test_cooldown_is_the_last_flows_by_start_time_then_flow_id():
    workload, columns = synthetic()
    df = flow_table(workload, columns, warmup_flows=1, cooldown_flows=2, default_priority=0)
    # start order: flow 2 (500 ps), flows 0 and 1 (1000 ps, tie: lower id first), flow 3
    assert df["warmup"].tolist() == [False, False, True, False]
    assert df["cooldown"].tolist() == [False, True, False, True]
    assert flow_table(workload, columns, warmup_flows=0, default_priority=0)["cooldown"].sum() == 0


COOL = """\
seed = 3
[topology]
kind = "single_switch"
hosts = 4
[workload]
cdf = "websearch"
load = 0.8
flows = 60
cooldown_flows = 20
"""


def test_cooldown_flows_load_the_network_and_are_left_out_of_the_summary(tmp_path):
    from fctlab.analyze import summarize
    from fctlab.simulation import build_flows

    path = tmp_path / "cool.toml"
    path.write_text(COOL)
    exp = fctlab.load_experiment(path)
    r = fctlab.simulate(exp)
    df = r.flows
    cool = df["cooldown"].to_numpy()
    assert cool.sum() == 20 and cool[-20:].all()  # generated flows are in start order: the last 20
    assert df.loc[cool, "finished"].all() and df.loc[cool, "bytes_sent"].gt(0).all()  # simulated in full
    s = r.summary
    assert (s["flows"], s["cooldown_flows"], s["measured_flows"]) == (60, 20, 40)
    assert s["bins"]["all"]["count"] == 40
    # the bins describe exactly the other 40 flows
    assert summarize(df[~cool].drop(columns="cooldown"), r.stats)["bins"] == s["bins"]
    # the same 40 flows alone: without the cool-down flows on the links, the last of them finish in an emptying
    # network, and sooner on average
    alone = fctlab.simulate(exp.with_overrides(["workload.cooldown_flows=0"]), flows=build_flows(exp).head(40))
    measured = df.loc[~cool, "fct_ns"].to_numpy()
    assert alone.flows["fct_ns"].mean() < 0.95 * measured.mean()
    out = tmp_path / "out"
    write_results(r, out)
    assert pq.read_table(out / "flows.parquet").column("cooldown").to_pylist() == cool.tolist()


def test_output_bins_ns2_sets_the_size_bin_column(tmp_path):
    path = tmp_path / "t.toml"
    path.write_text(TINY)
    exp = fctlab.load_experiment(path, overrides=["output.bins=ns2"])
    r = fctlab.simulate(exp)
    sizes = r.flows["size_bytes"]
    assert r.summary["bin_edges"] == "ns2"
    assert (r.flows.loc[sizes > 102_399, "size_bin"] != "small").all()
    small = sizes <= 102_399
    assert r.summary["bins"]["small"]["count"] == int(small.sum()) and (r.flows.loc[small, "size_bin"] == "small").all()


# ---------------------------------------------------------------------------------------------------------------
# The command line's table: numpy columns written without pandas, the same file and summary as the DataFrame's

_VARIANTS = {
    "plain": (TINY, []),
    "flow level": (TINY, ["run.level=flow"]),
    # half the flows with a deadline: met_deadline holds true, false and null
    "deadlines": (TINY + "deadline_mean_ms = 0.5\ndeadline_fraction = 0.5\n", []),
    # query_id (uint32)
    "incast": (TINY.split("[workload]")[0] + "[workload]\npattern = 'incast'\nfan_in = 3\nresponse_bytes = 20000\n"
               "queries = 5\nload = 0.5\n", []),
    # lower / upper / estimate_bytes (uint64) and the application's generation rate (float64)
    "size error, generation rate": (
        TINY + "gen_rate_dist = 'fixed'\ngen_rate_bps = 2e8\n"
        "size_error = {model = 'bounds', coverage = 0.9, width = 4}\n", []),
}


@pytest.mark.parametrize("variant", list(_VARIANTS))
def test_the_columns_table_writes_the_file_and_summary_pandas_writes(tmp_path, variant):
    from fctlab.analyze import summarize
    from fctlab.simulation import FlowTable, Result

    text, overrides = _VARIANTS[variant]
    path = tmp_path / "exp.toml"
    path.write_text(text)
    exp = fctlab.load_experiment(path, overrides=overrides)
    res = fctlab.simulate(exp, frame=False)
    assert isinstance(res.flows, FlowTable)
    frame = res.flows.frame()
    framed = Result(flows=frame, summary=res.summary, stats=res.stats, config=res.config)
    write_results(res, tmp_path / "columns")
    write_results(framed, tmp_path / "frame")
    a = (tmp_path / "columns" / "flows.parquet").read_bytes()
    b = (tmp_path / "frame" / "flows.parquet").read_bytes()
    assert a == b  # byte for byte: the same schema, pandas metadata, values, nulls and row groups
    back = pd.read_parquet(tmp_path / "columns" / "flows.parquet")
    pd.testing.assert_frame_equal(back, frame)
    assert list(back.columns)[:len(FLOW_COLUMNS)] == list(FLOW_COLUMNS)
    # the summary from the numpy columns is the DataFrame's
    assert summarize(res.flows, res.stats, res.config) == summarize(frame, res.stats, res.config)
    if variant == "deadlines":
        assert back["met_deadline"].isna().any() and back["met_deadline"].notna().any()
    # simulate()'s default is the DataFrame, with the same rows
    pd.testing.assert_frame_equal(fctlab.simulate(exp).flows, frame)


def test_the_columns_writer_spans_row_groups(tmp_path, monkeypatch):
    """More rows than one row group: the slices of every column line up (a few rows per group here)."""
    from fctlab import results
    from fctlab.simulation import Result

    monkeypatch.setattr(results, "PARQUET_ROWS", 7)
    exp = tiny(tmp_path, ["workload.deadline_mean_ms=0.5", "workload.deadline_fraction=0.5"])
    res = fctlab.simulate(exp, frame=False)
    frame = res.flows.frame()
    write_results(res, tmp_path / "columns")
    write_results(Result(flows=frame, summary=res.summary, stats=res.stats, config=res.config), tmp_path / "frame")
    assert pq.ParquetFile(tmp_path / "columns" / "flows.parquet").num_row_groups == 3  # 20 rows: 7 + 7 + 6
    assert (tmp_path / "columns" / "flows.parquet").read_bytes() == (tmp_path / "frame" / "flows.parquet").read_bytes()
