"""Input faults the engine would find only once it runs are refused before anything runs: exit 2, one line naming
the file, its 1-based row and column (or the key), nothing written, no engine started."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from fctlab.cli import app

runner = CliRunner()

LEAF_SPINE = """\
seed = 1
[topology]
kind = "leaf_spine"
leaves = 2
hosts_per_leaf = 4
spines = 2
[scheme]
name = "dctcp"
[workload]
"""
QCLIMB_THRESHOLDS = "scheme.thresholds_bytes=[10000,20000,30000,40000,50000,60000,70000]"


def invoke(*args: object):
    return runner.invoke(app, [str(a) for a in args])


def trace(tmp_path: Path, header: str, *rows: str) -> Path:
    path = tmp_path / "flows.csv"
    path.write_text(header + "\n" + "\n".join(rows) + "\n")
    return path


def experiment(tmp_path: Path, workload: str) -> Path:
    path = tmp_path / "exp.toml"
    path.write_text(LEAF_SPINE + workload)
    return path


def refused(result, out: Path, *names: str) -> str:
    """The run exited 2 with one error line naming each of ``names``, before the engine started, writing nothing."""
    err = result.stderr if hasattr(result, "stderr") else result.output
    assert result.exit_code == 2, err
    lines = [line for line in err.splitlines() if line.startswith("error:")]
    assert len(lines) == 1, err
    for name in names:
        assert name in lines[0], lines[0]
    assert "running" not in err and "panic" not in err.lower(), err
    assert not out.exists()
    return lines[0]


# (what, trace header, trace rows, --set overrides, the names the message must give)
TRACE_FAULTS = [
    ("path past its pair's paths", "src,dst,size_bytes,start_ns,path", ["0,4,1000,0,-1", "1,5,1000,5,7"],
     ["scheme.name=pias", QCLIMB_THRESHOLDS], ["flows.csv", "column 'path'", "row 2 (line 3)", "paths 0 to 1"]),
    ("path on a same-leaf pair", "src,dst,size_bytes,start_ns,path", ["0,1,1000,0,1"],
     ["scheme.name=pias", QCLIMB_THRESHOLDS], ["column 'path'", "row 1 (line 2)", "1 equal-cost paths"]),
    ("path with pfabric", "src,dst,size_bytes,start_ns,path", ["0,4,1000,0,-1", "0,5,1000,1,0"],
     ["scheme.name=pfabric"], ["column 'path'", "row 2 (line 3)", "pfabric"]),
    ("path at the flow level", "src,dst,size_bytes,start_ns,path", ["0,4,1000,0,0"],
     ["run.level=flow"], ["column 'path'", "row 1 (line 2)", "flow level"]),
    ("rates with homa", "src,dst,size_bytes,start_ns,gen_rate_bps", ["0,4,1000,0,1e9"],
     ["scheme.name=homa"], ["column 'gen_rate_bps'", "row 1 (line 2)", "homa"]),
    ("rates with pdq", "src,dst,size_bytes,start_ns,gen_rate_bps", ["0,4,1000,0,1e9"],
     ["scheme.name=pdq"], ["column 'gen_rate_bps'", "row 1 (line 2)", "pdq"]),
    ("rates at the flow level", "src,dst,size_bytes,start_ns,gen_rate_bps", ["0,4,1000,0,1e9"],
     ["run.level=flow"], ["column 'gen_rate_bps'", "row 1 (line 2)", "flow level"]),
    ("homa estimates without the column", "src,dst,size_bytes,start_ns", ["0,4,1000,0"],
     ["scheme.name=homa", "scheme.homa_sizes=estimate"], ["flows.csv", "estimate_bytes"]),
    ("qclimb without bounds", "src,dst,size_bytes,start_ns", ["0,4,1000,0"],
     ["scheme.name=qclimb", QCLIMB_THRESHOLDS], ["flows.csv", "lower_bytes"]),
    ("pfabric by estimate without estimates", "src,dst,size_bytes,start_ns", ["0,4,1000,0"],
     ["scheme.name=pfabric", "scheme.rank=estimate"], ["flows.csv", "estimate_bytes", "true sizes"]),
    # sorted by start time: the file's row, not the flow id, is named
    ("10 TB with dctcp", "src,dst,size_bytes,start_ns", ["0,4,1000,9", "1,5,10000000000000,0"],
     [], ["column 'size_bytes'", "row 2 (line 3)", "dctcp"]),
    ("10 TB with pdq", "src,dst,size_bytes,start_ns", ["1,5,10000000000000,0"],
     ["scheme.name=pdq"], ["column 'size_bytes'", "row 1 (line 2)", "pdq"]),
    ("2^62 B with homa", "src,dst,size_bytes,start_ns", ["1,5,4611686018427387904,0"],
     ["scheme.name=homa"], ["column 'size_bytes'", "row 1 (line 2)"]),
]


@pytest.mark.parametrize("what,header,rows,sets,names", TRACE_FAULTS, ids=[t[0] for t in TRACE_FAULTS])
def test_trace_faults_are_refused_before_the_run(tmp_path, what, header, rows, sets, names):
    flows = trace(tmp_path, header, *rows)
    exp = experiment(tmp_path, f"trace = {str(flows)!r}\n")
    out = tmp_path / "out"
    args = ["run", exp, "--out", out]
    for s in sets:
        args += ["--set", s]
    line = refused(invoke(*args), out, "workload.trace", *names)
    assert "flow 0" not in line and "flow 1 " not in line  # rows, not 0-based flow ids


def test_qclimb_at_the_flow_level_on_a_cdf_workload_is_refused_before_the_run(tmp_path):
    quick = Path(__file__).parent.parent / "examples" / "quick.toml"
    out = tmp_path / "q"
    r = invoke("run", quick, "--out", out, "--set", "scheme.name=qclimb", "--set", "run.level=flow",
               "--set", "workload.flows=500")
    refused(r, out, "lower_bytes", "upper_bytes")


def test_pfabric_by_estimate_without_estimates_is_refused_in_the_python_api():
    from fctlab.config import ConfigError, experiment_from_dict
    from fctlab.simulation import simulate

    exp = experiment_from_dict({"topology": {"kind": "single_switch", "hosts": 4},
                                "scheme": {"name": "pfabric", "rank": "estimate"},
                                "workload": {"cdf": "websearch", "load": 0.5, "flows": 20}})
    with pytest.raises(ConfigError, match="estimate_bytes"):
        simulate(exp)


def test_after_flow_names_its_row_one_way(tmp_path):
    from fctlab.workloads import WorkloadError, read_trace

    path = trace(tmp_path, "src,dst,size_bytes,start_ns,after_flow", "0,1,10,0,-1", "1,2,10,0,1")
    with pytest.raises(WorkloadError) as e:
        read_trace(path)
    msg = str(e.value)
    assert "row 2 (line 3)" in msg and "may name 0 to 0, or -1" in msg and "rows count from 0 here" not in msg
