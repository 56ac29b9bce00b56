"""Flow dependencies (``after_flow``) and QCLIMB flows handed to PIAS (``qclimb``), from trace to results."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import fctlab
from fctlab.workloads import WorkloadError, read_trace


def single_switch(trace: Path, scheme: str = "dctcp", run=None, **extra) -> fctlab.Experiment:
    raw = {
        "run": run or {},
        "seed": 1,
        "topology": {"kind": "single_switch", "hosts": 4, "host_link_gbps": 10, "host_link_delay_ns": 1000},
        "scheme": {"name": scheme, **extra},
        "workload": {"trace": str(trace)},
    }
    return fctlab.config.experiment_from_dict(raw)


def test_trace_rows_are_renumbered_with_their_parents(tmp_path):
    # row 2 waits for row 0, which starts last: after sorting by start time, the ids move and so must after_flow
    p = tmp_path / "t.csv"
    p.write_text("src,dst,size_bytes,start_ns,after_flow\n0,1,5000,300,-1\n2,1,100,0,-1\n1,0,2000,0,0\n")
    df = read_trace(p)
    assert list(df["size_bytes"]) == [100, 5000, 2000]  # the waiting flow sorts after its parent
    assert list(df["after_flow"]) == [-1, -1, 1]


def test_trace_after_flow_must_name_an_earlier_row(tmp_path):
    p = tmp_path / "t.csv"
    p.write_text("src,dst,size_bytes,start_ns,after_flow\n0,1,5000,0,1\n2,1,100,0,-1\n")
    with pytest.raises(WorkloadError, match=r"column 'after_flow', row 1 \(line 2\).*earlier row"):
        read_trace(p)


def test_trace_qclimb_column_reads_booleans(tmp_path):
    p = tmp_path / "t.csv"
    p.write_text("src,dst,size_bytes,start_ns,qclimb\n0,1,5,0,true\n0,2,5,1,0\n0,3,5,2,1\n")
    assert list(read_trace(p)["qclimb"]) == [True, False, True]
    p.write_text("src,dst,size_bytes,start_ns,qclimb\n0,1,5,0,maybe\n")
    with pytest.raises(WorkloadError, match="'qclimb'.*not true/false"):
        read_trace(p)


def test_a_chain_runs_back_to_back_at_ideal_fct(tmp_path):
    # a request/response chain on an idle switch: each flow starts the instant its parent finishes
    p = tmp_path / "chain.csv"
    p.write_text("src,dst,size_bytes,start_ns,after_flow\n0,1,20000,1000,-1\n1,0,300,0,0\n0,1,50000,0,1\n")
    res = fctlab.simulate(single_switch(p))
    f = res.flows.sort_values("flow_id")
    assert f["started"].all() and f["finished"].all()
    assert f["start_ns"].iloc[0] == 1000
    np.testing.assert_array_equal(f["start_ns"].to_numpy()[1:], f["finish_ns"].to_numpy()[:-1])
    # the parent's receiver sends its last ACK at the very instant the child starts there: the child's first
    # packet waits behind that ACK on the NIC (40 B at 10 Gb/s = 32 ns), and is otherwise alone on its path
    np.testing.assert_allclose(f["fct_ns"] - f["ideal_fct_ns"], [0.0, 32.0, 32.0])
    assert list(f["after_flow"]) == [-1, 0, 1]


def test_children_of_an_unfinished_flow_are_reported_not_started(tmp_path):
    p = tmp_path / "t.csv"
    p.write_text("src,dst,size_bytes,start_ns,after_flow\n0,1,50000000,0,-1\n1,0,300,5,0\n")
    exp = single_switch(p, run={"time_limit_ms": 0.1})
    f = fctlab.simulate(exp).flows.sort_values("flow_id")
    assert list(f["started"]) == [True, False]
    assert list(f["finished"]) == [False, False]
    assert f["start_ns"].iloc[1] == 5  # the requested start, kept for a flow that never began


def test_qclimb_flows_handed_to_pias_run_as_pias(tmp_path):
    # every flow opted out: a QCLIMB run is then exactly a PIAS run with the same thresholds
    rng = np.random.default_rng(3)
    n = 40
    src = rng.integers(0, 3, n)
    df = pd.DataFrame({
        "src": src, "dst": 3, "size_bytes": rng.integers(1000, 400_000, n), "start_ns": np.sort(rng.uniform(0, 2e5, n)),
        "lower_bytes": 1, "upper_bytes": 1, "qclimb": False,
    })
    p = tmp_path / "t.csv"
    df.to_csv(p, index=False)
    th = [20_000, 60_000, 200_000]
    q = fctlab.simulate(single_switch(p, "qclimb", thresholds_bytes=th, probe_after_timeouts=2)).flows
    pias = fctlab.simulate(single_switch(p, "pias", thresholds_bytes=th, probe_after_timeouts=2)).flows
    np.testing.assert_array_equal(q["finish_ns"], pias["finish_ns"])
    df["qclimb"] = True
    df.to_csv(p, index=False)
    on = fctlab.simulate(single_switch(p, "qclimb", thresholds_bytes=th, probe_after_timeouts=2)).flows
    assert not np.array_equal(on["finish_ns"], pias["finish_ns"])


def test_out_of_order_bytes_per_receiving_host_are_reported(tmp_path):
    p = tmp_path / "t.csv"
    pd.DataFrame({"src": [0, 1, 2], "dst": 3, "size_bytes": [900_000, 300_000, 80_000], "start_ns": [0, 10, 20],
                  "lower_bytes": [600_000, 250_000, 60_000], "upper_bytes": [1_000_000, 400_000, 90_000]}
                 ).to_csv(p, index=False)
    res = fctlab.simulate(single_switch(p, "qclimb", thresholds_bytes=[20_000, 60_000, 200_000]))
    eng = res.summary["engine"]
    assert len(eng["ooo_host_max_bytes"]) == 4
    assert eng["ooo_host_max_bytes"][:3] == [0, 0, 0]
    held = res.flows["ooo_max_segments"].max()
    assert held > 0, "climbing flows must reorder"
    assert eng["ooo_host_max_bytes"][3] >= held * 1460 - 1460
    assert 0 < eng["ooo_host_mean_bytes"][3] <= eng["ooo_host_insert_mean_bytes"][3] <= eng["ooo_host_max_bytes"][3]
