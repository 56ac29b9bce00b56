"""Sweeps: axes expand to the right points in the right order, bad axes fail before anything runs, every run is
written and catalogued, a rerun executes only what is missing, schemes share flows, 2 workers = 1 worker = Ray."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest
import typer
from typer.testing import CliRunner

import fctlab
from fctlab import catalog
from fctlab.cli import app as main_app
from fctlab.cli.sweep import register
from fctlab.config import ConfigError
from fctlab.sweep import load_sweep, run_id_for, run_sweep, sweep_from_dict

BASE = """\
seed = 7
[topology]
kind = "single_switch"
hosts = 4
[workload]
cdf = "websearch"
load = 0.5
flows = 25
"""
# 2 schemes x 2 loads: 4 tiny runs.
SWEEP = BASE + """
[sweep]
scheme = ["tcp", "dctcp"]
"workload.load" = [0.3, 0.6]
"""
IDS = [
    "scheme.name=tcp,workload.load=0.3",
    "scheme.name=tcp,workload.load=0.6",
    "scheme.name=dctcp,workload.load=0.3",
    "scheme.name=dctcp,workload.load=0.6",
]


def make_app() -> typer.Typer:
    """The sweep command on an app of its own (the fctlab CLI wires it the same way)."""
    app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)

    @app.callback()
    def _root() -> None:
        """fctlab (test app)."""

    register(app)
    return app


runner = CliRunner()


def sweep_cli(*args: object):
    return runner.invoke(make_app(), ["sweep", *(str(a) for a in args)])


def exp_file(tmp_path: Path, text: str = SWEEP, name: str = "exp.toml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def run_dir(out: Path, run_id: str) -> Path:
    return out / "runs" / run_id


# --------------------------------------------------------------------------------------------------------------
# Axes -> points


def test_product_order_values_and_run_ids(tmp_path):
    text = BASE + '[sweep]\nscheme = ["tcp", "dctcp"]\n"workload.load" = [0.3, 0.6]\nseed = [1, 2]\n'
    sweep = load_sweep(exp_file(tmp_path, text))
    assert list(sweep.axes) == ["scheme.name", "workload.load", "seed"]
    got = [(p.experiment.scheme, p.experiment.workload.load, p.experiment.seed) for p in sweep.points]
    want = [(s, ld, sd) for s in ("tcp", "dctcp") for ld in (0.3, 0.6) for sd in (1, 2)]  # first axis slowest
    assert got == want
    assert sweep.points[0].run_id == "scheme.name=tcp,workload.load=0.3,seed=1"
    assert sweep.points[-1].run_id == "scheme.name=dctcp,workload.load=0.6,seed=2"
    assert [p.index for p in sweep.points] == list(range(8))
    # Only the axis keys change; everything else is the base experiment's.
    assert {p.experiment.workload.flows for p in sweep.points} == {25}


def test_nested_tables_aliases_and_set_give_the_same_axes(tmp_path):
    nested = BASE + '[sweep.scheme]\nname = ["tcp", "dctcp"]\n[sweep.workload]\nload = [0.3, 0.6]\n'
    a = load_sweep(exp_file(tmp_path, nested, "a.toml"))
    b = load_sweep(exp_file(tmp_path, SWEEP, "b.toml"))
    assert a.axes == b.axes
    assert [p.run_id for p in a.points] == [p.run_id for p in b.points] == IDS
    # --set sweep.X replaces an axis in place (alias or full key) or appends a new one.
    c = load_sweep(exp_file(tmp_path), ["sweep.load=[0.4]", "sweep.switch.queues=[2, 4]", "switch.buffer_bytes=90000"])
    assert list(c.axes) == ["scheme.name", "workload.load", "switch.queues"]
    assert c.axes["workload.load"] == [0.4]
    assert [p.run_id for p in c.points][:2] == [
        "scheme.name=tcp,workload.load=0.4,switch.queues=2",
        "scheme.name=tcp,workload.load=0.4,switch.queues=4",
    ]
    assert {p.experiment.engine["switch"]["buffer_bytes"] for p in c.points} == {90000}
    # A file without [sweep] becomes a sweep with --set alone.
    d = load_sweep(exp_file(tmp_path, BASE, "d.toml"), ["sweep.seed=[1, 2]"])
    assert [p.run_id for p in d.points] == ["seed=1", "seed=2"]


def test_run_id_rule():
    assert run_id_for({"scheme.name": "dctcp", "workload.load": 0.6, "seed": 1}) == "scheme.name=dctcp,workload.load=0.6,seed=1"
    assert run_id_for({"run.flag": True, "x.y": 1e-05}) == "run.flag=true,x.y=1e-05"
    # Characters a file name should not hold become _; tables and lists are compact JSON.
    assert run_id_for({"workload.cdf": "/data/my cdf.txt"}) == "workload.cdf=_data_my_cdf.txt"
    assert run_id_for({"workload.senders": [0, 1]}) == "workload.senders=_0_1_"
    long = run_id_for({"workload.cdf": "x" * 300})
    assert len(long) == 200 and long.startswith("workload.cdf=xxx") and long[-17] == "~"
    assert long != run_id_for({"workload.cdf": "x" * 301})


# --------------------------------------------------------------------------------------------------------------
# Bad axes: one line naming the axis (and the value), exit 2, nothing written

BAD_AXES = [
    ("unknown key", '"switch.queus" = [2, 4]', [], "sweep.switch.queus", "queus"),
    ("unknown section", 'colour = ["red"]', [], "sweep.colour", "red"),
    ("empty list", "load = []", [], "sweep.workload.load", "at least one value"),
    ("not a list", "load = 0.5", [], "sweep.workload.load", "0.5"),
    ("bad value in the 3rd element", "load = [0.3, 0.6, 1.5]", [], "sweep.workload.load", "value 3 of 3 (1.5)"),
    ("bad scheme", 'scheme = ["tcp", "nope"]', [], "sweep.scheme.name", "'nope'"),
    ("engine range", '"switch.queues" = [4, 0]', [], "sweep.switch.queues", "value 2 of 2 (0)"),
    ("path through a value", '"workload.cdf.x" = [1]', [], "sweep.workload.cdf.x", "is a value"),
    ("duplicate value", "seed = [1, 2, 1]", [], "sweep.seed", "twice"),
    ("alias and full key", 'load = [0.3]\n"workload.load" = [0.6]', [], "sweep.workload.load", "same key"),
    ("bad key syntax", '"workload..load" = [0.3]', [], "sweep.workload..load", "bad axis key"),
    ("--set on an axis", "load = [0.3, 0.6]", ["--set", "workload.load=0.4"], "--set workload.load=0.4", "sweep axis"),
    ("--set empty axis", "load = [0.3, 0.6]", ["--set", "sweep.seed=[]"], "sweep.seed", "at least one value"),
    ("no axes", "", [], "sweep", "no axes"),
    ("flows that do not fit", '"workload.senders" = [[0, 1], [0, 9]]', [], "sweep.workload.senders", "[0, 9]"),
]


@pytest.mark.parametrize(("axes", "extra", "key", "detail"), [b[1:] for b in BAD_AXES], ids=[b[0] for b in BAD_AXES])
def test_bad_axes_fail_before_anything_runs(tmp_path, axes, extra, key, detail):
    out = tmp_path / "out"
    result = sweep_cli(exp_file(tmp_path, BASE + "[sweep]\n" + axes + "\n"), "--out", out, *extra)
    assert result.exit_code == 2, (result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith(f"error: {key}: "), lines[0]
    assert detail in lines[0], lines[0]
    assert not out.exists()


def test_an_axis_that_breaks_other_keys_names_the_point(tmp_path):
    # 25 flows cannot keep 20 warm-up flows: the error is at workload.warmup_flows, and names the point that
    # caused it (an axis over topology.kind drops the old kind's keys, so it no longer breaks topology.hosts)
    with pytest.raises(ConfigError) as err:
        load_sweep(exp_file(tmp_path, BASE.replace("flows = 25", "flows = 25\nwarmup_flows = 20")
                            + '[sweep]\n"workload.flows" = [25, 10]\n'))
    assert err.value.key == "workload.warmup_flows"
    assert "in sweep point workload.flows=10" in str(err.value)


def test_bad_options_exit_2_and_write_nothing(tmp_path):
    out = tmp_path / "out"
    for args, key in (
        (["--workers", "0"], "--workers"),
        (["--executor", "slurm"], "--executor"),
        (["--address", "auto"], "--address"),
    ):
        result = sweep_cli(exp_file(tmp_path), "--out", out, *args)
        assert result.exit_code == 2, result.stderr
        assert result.stderr.startswith(f"error: {key}: "), result.stderr
    assert not out.exists()


def test_run_refuses_a_sweep_file(tmp_path):
    out = tmp_path / "out"
    result = runner.invoke(main_app, ["run", str(exp_file(tmp_path)), "--out", str(out)])
    assert result.exit_code == 2
    assert result.stderr.startswith("error: sweep: ") and "fctlab sweep" in result.stderr
    assert not out.exists()
    with pytest.raises(ConfigError, match="fctlab sweep"):
        fctlab.load_experiment(exp_file(tmp_path))


# --------------------------------------------------------------------------------------------------------------
# Running, catalog, resume


@pytest.fixture(scope="module")
def swept(tmp_path_factory):
    """The 4-run sweep, run once through the CLI with 2 workers (the tests below only read it)."""
    tmp = tmp_path_factory.mktemp("swept")
    out = tmp / "out"
    result = sweep_cli(exp_file(tmp), "--out", out, "--workers", "2")
    assert result.exit_code == 0, (result.stdout, result.stderr)
    return tmp, out, result


def test_sweep_writes_every_run_and_the_catalog(swept):
    tmp, out, result = swept
    for run_id in IDS:
        d = run_dir(out, run_id)
        assert sorted(p.name for p in d.iterdir()) == ["config.json", "flows.parquet", "summary.json"]
        config = json.loads((d / "config.json").read_text())
        assert config["sweep_point"]["run_id"] == run_id
        assert config["scheme"]["name"] == run_id.split(",")[0].split("=")[1]
    # One line per finished run when stderr is not a terminal, and a table of the runs on stdout.
    assert sum(line.startswith("[") and " done " in line for line in result.stderr.splitlines()) == 4
    assert "4 runs: 4 ran, 0 skipped" in result.stderr
    assert all(run_id in result.stdout for run_id in IDS)

    runs, flows = fctlab.catalog(out)
    assert list(runs["run_id"]) == sorted(IDS)
    assert list(runs.columns[:4]) == ["run_id", "flows_path", "scheme.name", "workload.load"]
    for row in runs.to_dict("records"):
        summary = json.loads((run_dir(out, row["run_id"]) / "summary.json").read_text())
        assert row["flows_path"] == f"runs/{row['run_id']}/flows.parquet"
        assert row["scheme"] == row["scheme.name"] == summary["scheme"]
        assert row["load"] == row["workload.load"]
        assert row["seed"] == 7 and row["cdf"] == "websearch" and row["topology"] == "single_switch"
        assert row["flows"] == 25 and row["finished"] + row["unfinished"] == 25
        assert row["small_mean_fct_ns"] == summary["bins"]["small"]["mean_fct_ns"]
        assert row["all_p99_slowdown"] == summary["bins"]["all"]["p99_slowdown"]
        assert row["events"] == summary["events"] and row["wall_seconds"] == summary["wall_seconds"]
        assert json.loads(row["config"])["workload"]["load"] == row["load"]
    # The flows DataFrame and the SQL view hold every flow of every run, tagged with its run id.
    assert len(flows) == 4 * 25
    for run_id in IDS:
        own = pd.read_parquet(run_dir(out, run_id) / "flows.parquet")
        mine = flows[flows["run_id"] == run_id].drop(columns="run_id").reset_index(drop=True)
        pd.testing.assert_frame_equal(mine, own)
    con = catalog.connect(out)
    try:
        per_run = con.execute("SELECT run_id, count(*) FROM flows GROUP BY run_id ORDER BY run_id").fetchall()
        joined = con.execute(
            'SELECT count(*) FROM flows JOIN runs USING (run_id) WHERE runs."scheme.name" = \'tcp\''
        ).fetchone()
    finally:
        con.close()
    assert per_run == [(run_id, 25) for run_id in sorted(IDS)]
    assert joined == (50,)


def test_same_flows_across_schemes(swept):
    _, out, _ = swept
    _, flows = fctlab.catalog(out)
    cols = ["flow_id", "src", "dst", "size_bytes", "start_ns"]
    for load in ("0.3", "0.6"):
        tcp = flows[flows.run_id == f"scheme.name=tcp,workload.load={load}"][cols].reset_index(drop=True)
        dctcp = flows[flows.run_id == f"scheme.name=dctcp,workload.load={load}"][cols].reset_index(drop=True)
        pd.testing.assert_frame_equal(tcp, dctcp)
    # ...and different loads give different arrivals (the check above can fail).
    a = flows[flows.run_id == IDS[0]]["start_ns"].to_numpy()
    b = flows[flows.run_id == IDS[1]]["start_ns"].to_numpy()
    assert (a != b).any()


def test_workers_2_gives_the_same_bytes_as_workers_1(swept, tmp_path):
    tmp, out2, _ = swept
    out1 = tmp_path / "out1"
    report = run_sweep(load_sweep(tmp / "exp.toml"), out1, workers=1)
    assert report.ok and sorted(report.ran) == sorted(IDS)
    for run_id in IDS:
        assert (run_dir(out1, run_id) / "flows.parquet").read_bytes() == (run_dir(out2, run_id) / "flows.parquet").read_bytes()
        s1 = json.loads((run_dir(out1, run_id) / "summary.json").read_text())
        s2 = json.loads((run_dir(out2, run_id) / "summary.json").read_text())
        assert s1["bins"] == s2["bins"] and s1["events"] == s2["events"]


def test_resume_runs_only_what_is_missing(swept, tmp_path):
    tmp, done_out, _ = swept
    out = tmp_path / "out"
    shutil.copytree(done_out, out)
    catalog.rebuild(out)  # the copy's flows view points at the copy
    gone, half = IDS[1], IDS[2]
    shutil.rmtree(run_dir(out, gone))
    # A run killed while writing: flows.parquet and config.json written, summary.json (written last) missing,
    # plus a temporary file of the write that was cut off.
    (run_dir(out, half) / "summary.json").unlink()
    (run_dir(out, half) / ".flows.parquet.123.abcd.tmp").write_bytes(b"half")
    kept = {r: (run_dir(out, r) / "flows.parquet").stat().st_mtime_ns for r in (IDS[0], IDS[3])}

    executed = []
    report = run_sweep(load_sweep(tmp / "exp.toml"), out, workers=2, progress=lambda e: executed.append(e.run_id))
    assert sorted(executed) == sorted([gone, half])
    assert sorted(report.ran) == sorted([gone, half])
    assert report.skipped == [IDS[0], IDS[3]]
    assert {r: (run_dir(out, r) / "flows.parquet").stat().st_mtime_ns for r in kept} == kept
    assert not list(run_dir(out, half).glob(".*.tmp"))
    for run_id in IDS:  # the rerun results are the same bits
        assert (run_dir(out, run_id) / "flows.parquet").read_bytes() == (run_dir(done_out, run_id) / "flows.parquet").read_bytes()
    runs, flows = fctlab.catalog(out)
    assert list(runs.run_id) == sorted(IDS) and len(flows) == 100

    # Everything done: the CLI says so and runs nothing.
    result = sweep_cli(tmp / "exp.toml", "--out", out)
    assert result.exit_code == 0, result.stderr
    assert "4 runs: 0 ran, 4 skipped" in result.stderr
    assert " done " not in result.stderr


def test_a_run_dir_of_another_config_is_an_error(swept, tmp_path):
    tmp, done_out, _ = swept
    out = tmp_path / "out"
    shutil.copytree(done_out, out)
    before = {p: p.stat().st_mtime_ns for p in out.rglob("*.parquet")}
    result = sweep_cli(tmp / "exp.toml", "--out", out, "--set", "workload.flows=30")
    assert result.exit_code == 2
    line = result.stderr.strip()
    assert line.startswith("error: --out: ") and IDS[0] in line and "workload.flows: stored 25, now 30" in line
    assert {p: p.stat().st_mtime_ns for p in out.rglob("*.parquet")} == before
    # Moving or renaming the experiment file does not matter (provenance is not compared).
    moved = tmp_path / "elsewhere" / "renamed.toml"
    moved.parent.mkdir()
    shutil.copy(tmp / "exp.toml", moved)
    report = run_sweep(load_sweep(moved), out)
    assert report.ran == [] and len(report.skipped) == 4
    # Other bin edges give another summary: not done (the output section is otherwise provenance)
    result = sweep_cli(tmp / "exp.toml", "--out", out, "--set", "output.bins=ns2")
    assert result.exit_code == 2 and 'output: stored null, now {"bins": "ns2"}' in result.stderr
    assert run_sweep(load_sweep(tmp / "exp.toml", overrides=["output.compression=snappy"]), out).ran == []


def test_runs_written_before_an_engine_key_existed_are_resumed(swept, tmp_path):
    """A run folder whose config.json lacks an engine key added later (here the QCLIMB loss-repair option and the
    receive window, removed by hand) counts as done when the key's default is what is asked; asking for another
    value is still a conflict."""
    tmp, done_out, _ = swept
    out = tmp_path / "out"
    shutil.copytree(done_out, out)
    for run_id in IDS:
        path = run_dir(out, run_id) / "config.json"
        cfg = json.loads(path.read_text())
        del cfg["scheme"]["priority_loss_repair"]
        del cfg["transport"]["rwnd_bytes"]
        del cfg["output"]["bins"]  # written before output.bins: the papers' edges
        del cfg["workload"]["cooldown_flows"]  # and before the cool-down: none
        path.write_text(json.dumps(cfg))
    report = run_sweep(load_sweep(tmp / "exp.toml"), out)
    assert report.ran == [] and len(report.skipped) == 4
    result = sweep_cli(tmp / "exp.toml", "--out", out, "--set", "transport.rwnd_bytes=100000")
    assert result.exit_code == 2
    assert "transport.rwnd_bytes: stored 0, now 100000" in result.stderr  # the default it ran with


def test_a_failed_run_is_reported_and_the_others_are_kept(tmp_path):
    # Two traces; the second disappears after validation, so its run fails in the worker.
    for name, size in (("a.csv", 20_000), ("b.csv", 30_000)):
        (tmp_path / name).write_text("src,dst,size_bytes,start_ns\n" + "".join(
            f"{i % 4},{(i + 1) % 4},{size},{i * 1000}\n" for i in range(20)))
    text = BASE.split("[workload]")[0] + '[workload]\n[sweep]\n"workload.trace" = ["a.csv", "b.csv"]\n'
    sweep = load_sweep(exp_file(tmp_path, text))
    (tmp_path / "b.csv").unlink()
    events = []
    report = run_sweep(sweep, tmp_path / "out", workers=2, progress=events.append)
    assert report.ran == ["workload.trace=a.csv"]
    assert list(report.failed) == ["workload.trace=b.csv"]
    assert "workload.trace" in report.failed["workload.trace=b.csv"] and "\n" not in report.failed["workload.trace=b.csv"]
    assert sorted(e.ok for e in events) == [False, True]
    assert (run_dir(tmp_path / "out", "workload.trace=a.csv") / "summary.json").is_file()
    assert not (run_dir(tmp_path / "out", "workload.trace=b.csv") / "summary.json").exists()
    runs, _ = fctlab.catalog(tmp_path / "out", flows=False)
    assert list(runs.run_id) == ["workload.trace=a.csv"]


def test_a_second_writer_of_the_same_folder_is_refused(tmp_path):
    sweep = sweep_from_dict({"seed": 1, "topology": {"kind": "single_switch", "hosts": 4},
                             "workload": {"cdf": "websearch", "load": 0.5, "flows": 20}, "sweep": {"seed": [1]}})
    out = tmp_path / "out"
    with catalog.writer_lock(out):
        with pytest.raises(ConfigError, match="another fctlab process"):
            run_sweep(sweep, out, workers=1)
    assert not (out / "runs").exists()


# --------------------------------------------------------------------------------------------------------------
# Ray


def test_ray_executor_matches_local(swept, tmp_path):
    pytest.importorskip("ray", reason="ray is not installed (pip install 'fctlab[ray]'); CI installs it")
    tmp, local_out, _ = swept
    out = tmp_path / "ray"
    result = sweep_cli(tmp / "exp.toml", "--out", out, "--executor", "ray", "--workers", "2",
                       "--set", "sweep.scheme=[\"dctcp\"]")
    assert result.exit_code == 0, (result.stdout, result.stderr)
    assert "2 runs: 2 ran" in result.stderr
    for run_id in IDS[2:]:
        assert (run_dir(out, run_id) / "flows.parquet").read_bytes() == (run_dir(local_out, run_id) / "flows.parquet").read_bytes()
    runs, flows = fctlab.catalog(out)
    assert list(runs.run_id) == IDS[2:] and len(flows) == 50
