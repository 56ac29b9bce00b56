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


# --------------------------------------------------------------------------------------------------------------
# A results folder of another configuration, stale temporaries, damaged catalogs and summaries

from conftest import TINY  # noqa: E402


def tiny(tmp_path: Path) -> Path:
    path = tmp_path / "tiny.toml"
    path.write_text(TINY)
    return path


def test_run_refuses_a_folder_of_another_configuration_unless_overwrite(tmp_path):
    exp, out = tiny(tmp_path), tmp_path / "out"
    assert invoke("run", exp, "--out", out).exit_code == 0
    stale = out / ".flows.parquet.123.abcd.tmp"
    stale.write_bytes(b"half")
    # the same configuration runs again (and the killed write's temporary is removed)
    assert invoke("run", exp, "--out", out).exit_code == 0
    assert not stale.exists()
    before = (out / "summary.json").read_bytes()
    r = invoke("run", exp, "--out", out, "--set", "workload.load=0.3")
    assert r.exit_code == 2
    assert "--out" in r.output and "workload.load" in r.output and "--overwrite" in r.output
    assert (out / "summary.json").read_bytes() == before
    r = invoke("run", exp, "--out", out, "--set", "workload.load=0.3", "--overwrite")
    assert r.exit_code == 0, r.output
    assert (out / "summary.json").read_bytes() != before


def test_a_catalog_left_without_its_runs_table_is_rebuilt_from_the_folders(tmp_path):
    import duckdb

    from fctlab import catalog

    exp, root = tiny(tmp_path), tmp_path / "cmp"
    r = invoke("compare", exp, "--scheme", "tcp", "--scheme", "dctcp", "--out", root)
    assert r.exit_code == 0, r.output
    assert catalog.sync(root) and (root / "catalog.duckdb").is_file()  # (the runs compare noted, recorded)
    # a write killed before it committed: a database without the runs table
    (root / "catalog.duckdb").unlink()
    duckdb.connect(str(root / "catalog.duckdb")).close()
    catalog.record_run(root, root / "tcp")
    runs, _ = catalog.load(root, flows=False)
    assert sorted(runs["run_id"]) == ["dctcp", "tcp"]  # the other run's folder is not forgotten


def test_a_catalog_whose_rows_do_not_read_back_is_moved_aside(tmp_path, capsys):
    import duckdb

    from fctlab import catalog

    exp, root = tiny(tmp_path), tmp_path / "cmp"
    assert invoke("compare", exp, "--scheme", "tcp", "--scheme", "dctcp", "--out", root).exit_code == 0
    assert catalog.sync(root)  # (the runs compare noted, recorded)
    con = duckdb.connect(str(root / "catalog.duckdb"))
    con.execute("UPDATE runs SET summary = '{not json'")
    con.close()
    catalog.record_run(root, root / "tcp")
    assert (root / "catalog.duckdb.corrupt").is_file()
    assert "catalog.duckdb.corrupt" in capsys.readouterr().err
    runs, _ = catalog.load(root, flows=False)
    assert sorted(runs["run_id"]) == ["dctcp", "tcp"]


def test_report_names_an_unreadable_summary(tmp_path):
    exp, out = tiny(tmp_path), tmp_path / "out"
    assert invoke("run", exp, "--out", out).exit_code == 0
    (out / "summary.json").write_text("{half")
    r = invoke("report", out)
    assert r.exit_code == 2
    assert "summary.json" in r.output and "no runs (no" not in r.output


# --------------------------------------------------------------------------------------------------------------
# Generation rates and what stopped a run

def test_a_rate_cdf_from_zero_is_refused(tmp_path):
    cdf = tmp_path / "rates.cdf"
    cdf.write_text("0 0\n1e9 1\n")
    exp = tiny(tmp_path)
    out = tmp_path / "out"
    r = invoke("run", exp, "--out", out, "--set", "workload.gen_rate_dist=cdf", "--set", f"workload.gen_rate_cdf={cdf}")
    refused(r, out, "workload.gen_rate_cdf", "> 0")
    cdf.write_text("1e6 0\n1e9 1\n")
    assert invoke("run", exp, "--out", out, "--set", "workload.gen_rate_dist=cdf",
                  "--set", f"workload.gen_rate_cdf={cdf}").exit_code == 0


def test_slow_rates_are_warned_about_and_the_stop_is_explained(tmp_path):
    flows = trace(tmp_path, "src,dst,size_bytes,start_ns,gen_rate_bps", "0,1,100000,0,1", "1,2,1000,0,1e9")
    exp = tmp_path / "exp.toml"
    exp.write_text(f'[topology]\nkind = "single_switch"\nhosts = 4\n[workload]\ntrace = {str(flows)!r}\n')
    r = invoke("run", exp, "--out", tmp_path / "out")
    assert r.exit_code == 0, r.output
    assert "1 of 2 flows generate their data" in r.output and "1 bit/s" in r.output
    assert "HIT THE TIME LIMIT" not in r.output
    assert "nothing left to simulate before the time limit (60000 ms) after" in r.output


def test_stop_reason_tells_the_clock_from_the_events():
    from fctlab.analyze import stop_reason

    cfg = {"run": {"time_limit_ms": 10.0}}
    assert stop_reason({"sim_time_ns": 10e6, "unfinished_flows": 3, "config": cfg}).startswith("STOPPED AT THE TIME")
    assert "after 0.07 ms" in stop_reason({"sim_time_ns": 7e4, "unfinished_flows": 3, "config": cfg})


# --------------------------------------------------------------------------------------------------------------
# Progress

def test_simulate_calls_a_progress_callback_until_every_flow_is_counted():
    from fctlab.config import experiment_from_dict
    from fctlab.simulation import simulate

    exp = experiment_from_dict({"topology": {"kind": "single_switch", "hosts": 4},
                                "workload": {"cdf": "websearch", "load": 0.5, "flows": 50}})
    calls: list[tuple[int, int]] = []
    result = simulate(exp, progress=lambda done, total: calls.append((done, total)))
    assert calls and calls[-1] == (int(result.flows["finished"].sum()), 50)
    assert all(t == 50 for _, t in calls) and [d for d, _ in calls] == sorted(d for d, _ in calls)
    with pytest.raises(ValueError, match="progress"):
        simulate(exp, progress=3)


def test_the_flow_level_advances_the_progress_counter():
    """The flow level updates the engine's counter as the packet level does (it stayed at 0 before): at the end
    it holds every finished flow and the run's simulated time, and a callback's last report counts them all."""
    from fctlab import _core
    from fctlab.config import experiment_from_dict
    from fctlab.simulation import simulate

    exp = experiment_from_dict({"topology": {"kind": "single_switch", "hosts": 4}, "run": {"level": "flow"},
                                "workload": {"cdf": "websearch", "load": 0.5, "flows": 50}})
    counter = _core.Progress()
    result = simulate(exp, progress=counter)
    assert counter.flows_done == int(result.flows["finished"].sum()) == 50
    assert counter.sim_time_ps == result.stats["sim_time_ps"] > 0
    calls: list[tuple[int, int]] = []
    simulate(exp, progress=lambda done, total: calls.append((done, total)))
    assert calls[-1] == (50, 50)


def test_eta_text():
    from fctlab.cli._common import eta_text

    assert eta_text(0, 100, 5) == "0 of 100 (0%), 5 s elapsed, time left unknown yet"
    assert eta_text(25, 100, 10) == "25 of 100 (25%), 10 s elapsed, about 30 s left"
    assert eta_text(1, 100, 60).endswith("about 1.6 h left")
    assert eta_text(3, 4, 150).endswith("about 50 s left")


def test_a_plain_progress_line_comes_every_interval_off_a_terminal(monkeypatch, capsys):
    import threading

    from fctlab.cli import _common

    done = threading.Event()

    class Counter:
        """Seven flows done; the engine (the worker) ends once the count has been shown three times."""

        reads = 0

        @property
        def flows_done(self) -> int:
            Counter.reads += 1
            if Counter.reads == 3:
                done.set()
            return 7

    monkeypatch.setattr(_common, "PLAIN_PROGRESS_SECONDS", 0.0)  # a line at every poll
    worker = threading.Thread(target=done.wait)
    worker.start()
    _common._wait(worker, Counter(), 10, "demo")
    err = capsys.readouterr().err
    assert err.startswith("running demo: 10 flows\n")
    assert len(err.splitlines()) == 4, err  # the first line and one per poll until the worker ended
    assert all("7 of 10 (70%)" in line and "left" in line for line in err.splitlines()[1:]), err


# --------------------------------------------------------------------------------------------------------------
# Switching the topology kind with --set

def test_switching_the_topology_kind_drops_the_old_kinds_keys():
    from fctlab.config import ConfigError, load_experiment

    quick = Path(__file__).parent.parent / "examples" / "quick.toml"
    exp = load_experiment(quick, overrides=["topology.kind=fat_tree", "workload.warmup_flows=0"])
    topo = exp.engine["topology"]
    assert topo["kind"] == "fat_tree" and "hosts_per_leaf" not in topo and "spines" not in topo
    # keys both kinds take keep the file's values
    assert (topo["host_link_delay_ns"], topo["core_link_gbps"]) == (20200.0, 40.0)
    # a key the new kind does not take, given by an override, is still refused by name
    with pytest.raises(ConfigError, match="topology.spines"):
        load_experiment(quick, overrides=["topology.kind=fat_tree", "topology.spines=3"])
    # the same kind set again changes nothing
    same = load_experiment(quick, overrides=["topology.kind=leaf_spine"])
    assert same.engine["topology"]["hosts_per_leaf"] == 8


# --------------------------------------------------------------------------------------------------------------
# Interrupting a run

@pytest.mark.parametrize("signame", ["SIGTERM", "SIGINT"])
def test_a_run_stopped_by_a_signal_says_so_and_writes_nothing(tmp_path, signame):
    import os
    import signal
    import subprocess
    import sys

    import fctlab

    exp = tmp_path / "long.toml"
    exp.write_text(TINY.replace("flows = 20", "flows = 300000"))  # tens of seconds
    env = dict(os.environ, PYTHONPATH=str(Path(fctlab.__file__).resolve().parents[1]))
    # (Ctrl-C's default restored in the child: a test suite started in the background inherits SIGINT ignored,
    # and Python then keeps ignoring it, as a background process should)
    proc = subprocess.Popen(
        [sys.executable, "-c", "from fctlab.cli import main; main()", "run", str(exp), "--out", str(tmp_path / "out")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        assert proc.stderr is not None
        line = ""
        while not line.startswith("running long"):  # the engine has started once this line is out
            line = proc.stderr.readline()
            assert line, "the run ended before it started"
        proc.send_signal(getattr(signal, signame))
        _, rest = proc.communicate(timeout=60)
        assert proc.returncode == (130 if signame == "SIGINT" else 128 + signal.SIGTERM), rest
        assert "interrupted; nothing was written for this run" in rest
        assert not (tmp_path / "out").exists()
    finally:
        if proc.poll() is None:
            proc.kill()


# --------------------------------------------------------------------------------------------------------------
# No input reaches a panic: trace sizes x schemes x levels

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

#: every scheme, with what it needs to run on a bare trace
_SCHEME_SETS = {
    "tcp": [], "dctcp": [], "pfabric": [], "las": [], "l2dct": [], "homa": [], "rcp": [], "d3": [], "pdq": [],
    "hyline": [], "qjump": [], "rax": [], "rax-plus": [],
    "pias": ["scheme.thresholds_bytes=[10000, 20000, 30000, 40000, 50000, 60000, 70000]"],
    "qclimb": ["scheme.thresholds_bytes=[10000, 20000, 30000, 40000, 50000, 60000, 70000]", "scheme.qclimb_info=precise"],
}


def _schemes() -> list[str]:
    from fctlab import _core

    return sorted(name for name, _ in _core.schemes())


@settings(max_examples=60, deadline=None, derandomize=True)
@given(
    sizes=st.lists(st.one_of(st.integers(1, 10**7), st.integers(1, 2**64 - 1),
                             st.sampled_from([4_294_967_293 * 1460, 4_294_967_294 * 1460, 10**13, 2**62])),
                   min_size=1, max_size=3),
    scheme=st.sampled_from(_schemes()),
    level=st.sampled_from(["packet", "flow"]),
)
def test_no_trace_size_scheme_or_level_reaches_a_panic(sizes, scheme, level):
    import tempfile

    from fctlab.config import ConfigError, experiment_from_dict
    from fctlab.simulation import simulate
    from fctlab.workloads import WorkloadError

    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "t.csv"
        path.write_text("src,dst,size_bytes,start_ns\n" + "".join(f"{i % 3},3,{s},{i}\n" for i, s in enumerate(sizes)))
        raw = {"topology": {"kind": "single_switch", "hosts": 4}, "scheme": {"name": scheme},
               "run": {"level": level, "time_limit_ms": 0.05}, "workload": {"trace": str(path)}}
        sets = [*_SCHEME_SETS.get(scheme, []), "routing.mode=ecmp"]
        try:
            exp = experiment_from_dict(raw, overrides=sets)
            result = simulate(exp)
        except (ConfigError, WorkloadError) as e:
            assert "engine failed" not in str(e) and "panick" not in str(e)
            return
        assert len(result.flows) == len(sizes)


def test_a_sweep_over_topology_kinds_drops_each_points_old_keys():
    from fctlab.config import read_experiment_file
    from fctlab.sweep import sweep_from_dict

    quick = Path(__file__).parent.parent / "examples" / "quick.toml"
    raw = read_experiment_file(quick)
    raw["sweep"] = {"topology": {"kind": ["leaf_spine", "fat_tree"]}}
    sweep = sweep_from_dict(raw, base_dir=quick.parent, build_flows=False)
    leaf, fat = (p.experiment.engine["topology"] for p in sweep.points)
    assert leaf["hosts_per_leaf"] == 8 and fat["kind"] == "fat_tree" and "hosts_per_leaf" not in fat
    # and a base override on a sweep file
    del raw["sweep"]
    raw["sweep"] = {"workload": {"load": [0.5, 0.6]}}
    sweep = sweep_from_dict(raw, base_dir=quick.parent, overrides=["topology.kind=fat_tree"], build_flows=False)
    assert all(p.experiment.engine["topology"]["kind"] == "fat_tree" for p in sweep.points)
