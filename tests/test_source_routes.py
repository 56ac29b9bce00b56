"""Source routes from the front: a trace's path column reaches the engine (-1: ECMP), the flows follow it, and a
path past a pair's equal-cost paths is a clear error."""

import pytest

import fctlab
from fctlab.config import experiment_from_dict
from fctlab.workloads import WorkloadError, read_trace

BASE = {
    "topology": {"kind": "fat_tree", "k": 4},
    "scheme": {"name": "tcp"},
    "switch": {"buffer_bytes": 2_000_000},
    "transport": {"init_cwnd_packets": 40, "max_cwnd_packets": 40},
}


def _run(tmp_path, rows):
    p = tmp_path / "t.csv"
    p.write_text("src,dst,size_bytes,start_ns,path\n" + "\n".join(rows) + "\n")
    exp = experiment_from_dict({**BASE, "workload": {"trace": str(p)}})
    return fctlab.simulate(exp), p


def test_flows_on_one_path_share_it_and_on_two_do_not(tmp_path):
    # hosts 0 and 1 share an edge switch; to hosts 7 and 12 in other pods there are 4 paths each
    shared, p = _run(tmp_path, ["0,7,3000000,0,1", "1,12,3000000,0,1"])
    assert list(read_trace(p)["path"]) == [1, 1]
    apart, _ = _run(tmp_path, ["0,7,3000000,0,0", "1,12,3000000,0,2"])
    ecmp, _ = _run(tmp_path, ["0,7,3000000,0,-1", "1,12,3000000,0,-1"])
    s, a = shared.flows, apart.flows
    assert (s["slowdown"] > 1.7).all() and (a["slowdown"] < 1.2).all()
    assert list(apart.flows["path"]) == [0, 2]
    assert ecmp.flows["finished"].all()


def test_a_path_past_the_pairs_paths_is_an_error(tmp_path):
    with pytest.raises(ValueError, match=r"column 'path', row 1 \(line 2\): path 4 does not exist: host 0 has 4 "
                       "equal-cost paths to host 7"):
        _run(tmp_path, ["0,7,1000,0,4"])
    p = tmp_path / "bad.csv"
    p.write_text("src,dst,size_bytes,start_ns,path\n0,7,1000,0,-2\n")
    with pytest.raises(WorkloadError, match="path"):
        read_trace(p)
