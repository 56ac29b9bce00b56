"""Connection reuse from the front: the trace's conn column, its checks, and transport.connections."""

import pytest

import fctlab
from fctlab.config import ConfigError
from fctlab.workloads import WorkloadError, read_trace

BASE = {
    "topology": {"kind": "dumbbell", "senders": 2, "receivers": 1},
    "scheme": {"name": "dctcp"},
}


def _trace(tmp_path, rows, header="src,dst,size_bytes,start_ns,conn"):
    p = tmp_path / "t.csv"
    p.write_text(header + "\n" + "\n".join(rows) + "\n")
    return p


def _exp(trace, connections):
    raw = {**BASE, "transport": {"connections": connections}, "workload": {"trace": str(trace)}}
    return fctlab.config.experiment_from_dict(raw)


def test_flows_of_one_trace_connection_share_its_state(tmp_path):
    # three messages from host 0 to host 2 on connection 5, far apart; one on connection 6 from host 1
    t = _trace(tmp_path, ["0,2,30000,0,5", "0,2,30000,1000000,5", "1,2,30000,1500000,6", "0,2,30000,2000000,5"])
    assert list(read_trace(t)["conn"]) == [5, 5, 6, 5]
    r = fctlab.simulate(_exp(t, "trace"))
    assert (r.stats["connections_opened"], r.stats["connections_reused"]) == (2, 2)
    assert r.flows["finished"].all()
    # per flow, the ids are carried in the table but every flow opens its own connection
    r = fctlab.simulate(_exp(t, "per_flow"))
    assert (r.stats["connections_opened"], r.stats["connections_reused"]) == (4, 0)
    assert list(r.flows["conn"]) == [5, 5, 6, 5]


def test_a_connection_joins_one_pair_of_hosts(tmp_path):
    t = _trace(tmp_path, ["0,2,1000,0,5", "1,2,1000,10,5"])
    with pytest.raises(WorkloadError, match=r"column 'conn', row 2 .*connection 5 joins host 0 to 2"):
        read_trace(t)


def test_trace_connections_need_the_conn_column(tmp_path):
    t = _trace(tmp_path, ["0,2,1000,0"], header="src,dst,size_bytes,start_ns")
    with pytest.raises(ConfigError) as e:
        _exp(t, "trace")
    assert e.value.key == "transport.connections" and "conn column" in str(e.value)
    raw = {**BASE, "transport": {"connections": "trace"},
           "workload": {"cdf": "websearch", "load": 0.5, "flows": 10}}
    with pytest.raises(ConfigError, match="transport.connections"):
        fctlab.config.experiment_from_dict(raw)
    with pytest.raises(ConfigError, match="transport.connections"):
        _exp(t, "per_socket")
