"""The DuckDB catalog of a results folder: record_run for single runs, rebuild from the run folders, load as
DataFrames, SQL over the runs table and the flows view."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

import fctlab
from fctlab import catalog
from fctlab.config import experiment_from_dict

TINY = {
    "seed": 3,
    "topology": {"kind": "single_switch", "hosts": 4},
    "workload": {"cdf": "websearch", "load": 0.5, "flows": 20},
}


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    """Two runs written as `fctlab compare` lays them out: DIR/tcp/ and DIR/dctcp/."""
    root = tmp_path_factory.mktemp("compare")
    for scheme in ("tcp", "dctcp"):
        exp = experiment_from_dict({**TINY, "scheme": {"name": scheme}})
        fctlab.write_results(fctlab.simulate(exp), root / scheme)
    return root


def copy_of(results: Path, tmp_path: Path) -> Path:
    out = tmp_path / "results"
    shutil.copytree(results, out)
    return out


def test_record_run_adds_one_row_per_run_and_replaces_on_rerecord(results, tmp_path):
    root = copy_of(results, tmp_path)
    assert catalog.record_run(root, root / "tcp") == "tcp"
    assert catalog.record_run(root, root / "dctcp") == "dctcp"
    assert catalog.record_run(root, root / "tcp") == "tcp"  # again: replaced, not duplicated
    runs, flows = fctlab.catalog(root)
    assert list(runs.run_id) == ["dctcp", "tcp"]
    summary = json.loads((root / "tcp" / "summary.json").read_text())
    row = runs.set_index("run_id").loc["tcp"]
    assert row["flows_path"] == "tcp/flows.parquet"
    assert (row["scheme"], row["seed"], row["load"], row["cdf"]) == ("tcp", 3, 0.5, "websearch")
    assert row["flows"] == 20 and row["unfinished"] == summary["unfinished_flows"]
    for b in ("small", "medium", "large", "all"):
        for s in ("count", "mean_fct_ns", "p99_fct_ns", "mean_slowdown", "p99_slowdown"):
            want = summary["bins"][b][s]
            got = row[f"{b}_{s}"]
            assert (pd.isna(got) and want is None) or got == want, (b, s)
    assert json.loads(row["summary"])["bins"] == summary["bins"]
    assert "config" not in json.loads(row["summary"])
    assert json.loads(row["config"])["scheme"]["name"] == "tcp"
    assert pd.api.types.is_datetime64_any_dtype(runs["recorded_at"])
    # No sweep: no axis columns.
    assert list(runs.columns[:3]) == ["run_id", "flows_path", "name"]
    assert len(flows) == 40 and list(flows.columns[:2]) == ["run_id", "flow_id"]
    own = pd.read_parquet(root / "dctcp" / "flows.parquet")
    pd.testing.assert_frame_equal(flows[flows.run_id == "dctcp"].drop(columns="run_id").reset_index(drop=True), own)


def test_record_later_notes_runs_that_the_next_read_records(results, tmp_path):
    """What `fctlab run` does: a line per run in .catalog-pending, no DuckDB; the next read records them as
    record_run would (the same rows), and forgets the note."""
    root = copy_of(results, tmp_path)
    code = (f"import sys; from fctlab import catalog; catalog.record_later({str(root)!r}, {str(root / 'tcp')!r}); "
            "assert 'duckdb' not in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True)
    assert catalog.record_later(root, root / "dctcp") == "dctcp"
    assert catalog.record_later(root, root / "tcp") == "tcp"  # twice: one row
    assert not (root / catalog.CATALOG_FILE).exists()
    assert (root / catalog.PENDING_FILE).read_text().splitlines() == ["tcp\ttcp", "dctcp\tdctcp", "tcp\ttcp"]
    runs, flows = fctlab.catalog(root)
    assert list(runs.run_id) == ["dctcp", "tcp"] and len(flows) == 40
    assert not (root / catalog.PENDING_FILE).exists()
    # the same rows as record_run's (the time a row was recorded is the summary's)
    other = copy_of(results, tmp_path / "other")
    catalog.record_run(other, other / "tcp")
    catalog.record_run(other, other / "dctcp")
    direct, _ = fctlab.catalog(other, flows=False)
    pd.testing.assert_frame_equal(runs.drop(columns="recorded_at"), direct.drop(columns="recorded_at"))
    # a noted run whose folder is gone by the time it is recorded is left out; record_run records what is noted
    shutil.copytree(root / "tcp", root / "gone")
    catalog.record_later(root, root / "gone")
    shutil.rmtree(root / "gone")
    shutil.copytree(root / "tcp", root / "tcp2")
    catalog.record_later(root, root / "tcp2")
    catalog.record_run(root, root / "dctcp")
    assert not (root / catalog.PENDING_FILE).exists()
    runs, _ = fctlab.catalog(root, flows=False)
    assert list(runs.run_id) == ["dctcp", "tcp", "tcp2"]


def test_a_reader_leaves_the_note_while_a_writer_holds_the_lock(results, tmp_path):
    root = copy_of(results, tmp_path)
    catalog.record_run(root, root / "tcp")  # (a new catalog records every run folder: tcp and dctcp)
    shutil.copytree(root / "tcp", root / "tcp2")
    catalog.record_later(root, root / "tcp2")
    hold = subprocess.Popen([sys.executable, "-c", (
        f"import sys, time; from fctlab import catalog\nwith catalog.writer_lock({str(root)!r}):\n"
        "    print('held', flush=True); time.sleep(30)")], stdout=subprocess.PIPE, text=True)
    try:
        assert hold.stdout.readline().strip() == "held"
        assert catalog.sync(root) is False
        runs, _ = fctlab.catalog(root, flows=False)  # the catalog as it is
        assert list(runs.run_id) == ["dctcp", "tcp"] and (root / catalog.PENDING_FILE).exists()
    finally:
        hold.kill()
        hold.wait()
        hold.stdout.close()
    runs, _ = fctlab.catalog(root, flows=False)
    assert list(runs.run_id) == ["dctcp", "tcp", "tcp2"]


def test_record_run_over_a_runs_table_it_cannot_read_rebuilds_from_the_folders(results, tmp_path):
    # a catalog whose runs table has another shape (another fctlab version): the run folders are the truth
    import duckdb

    root = copy_of(results, tmp_path)
    con = duckdb.connect(str(root / catalog.CATALOG_FILE))
    con.execute("CREATE TABLE runs (id INTEGER)")
    con.close()
    assert catalog.record_run(root, root / "tcp") == "tcp"
    runs, flows = fctlab.catalog(root)
    assert list(runs.run_id) == ["dctcp", "tcp"] and len(flows) == 40


def test_a_run_in_the_root_itself_is_named_after_the_folder(results, tmp_path):
    root = tmp_path / "quick-tcp"
    shutil.copytree(results / "tcp", root)
    assert catalog.record_run(root, root) == "quick-tcp"
    runs, flows = fctlab.catalog(root)
    assert list(runs.flows_path) == ["flows.parquet"] and len(flows) == 20
    with pytest.raises(ValueError, match="not inside"):
        catalog.record_run(root / "tcp-elsewhere", root)


def test_rebuild_from_the_run_folders_and_after_a_move(results, tmp_path):
    root = copy_of(results, tmp_path)
    assert catalog.rebuild(root) == 2
    runs_a, flows_a = fctlab.catalog(root)
    (root / "catalog.duckdb").unlink()
    assert catalog.rebuild(root) == 2
    runs_b, flows_b = fctlab.catalog(root)
    pd.testing.assert_frame_equal(runs_a, runs_b)
    pd.testing.assert_frame_equal(flows_a, flows_b)

    moved = tmp_path / "moved"
    root.rename(moved)
    # load() finds flow files relative to the folder, so it works before a rebuild...
    runs_c, flows_c = fctlab.catalog(moved)
    pd.testing.assert_frame_equal(flows_a, flows_c)
    # ...and after one, so does SQL over the flows view (which holds absolute paths).
    catalog.rebuild(moved)
    con = catalog.connect(moved)
    try:
        assert con.execute("SELECT count(*) FROM flows").fetchone() == (40,)
        per_scheme = con.execute(
            "SELECT r.scheme, avg(f.fct_ns) FROM flows f JOIN runs r USING (run_id) GROUP BY r.scheme ORDER BY 1"
        ).fetchall()
    finally:
        con.close()
    for scheme, mean in per_scheme:
        assert mean == pytest.approx(flows_a[flows_a.run_id == scheme].fct_ns.mean())


def test_rebuild_drops_deleted_runs_and_an_empty_folder_has_an_empty_catalog(results, tmp_path):
    root = copy_of(results, tmp_path)
    catalog.rebuild(root)
    shutil.rmtree(root / "tcp")
    assert catalog.rebuild(root) == 1
    runs, flows = fctlab.catalog(root)
    assert list(runs.run_id) == ["dctcp"] and set(flows.run_id) == {"dctcp"}
    empty = tmp_path / "empty"
    empty.mkdir()
    assert catalog.rebuild(empty) == 0
    runs, flows = fctlab.catalog(empty)
    assert len(runs) == 0 and len(flows) == 0
    con = catalog.connect(empty)
    try:
        assert con.execute("SELECT count(*) FROM flows").fetchone() == (0,)
    finally:
        con.close()


def test_load_without_a_catalog_says_how_to_make_one(tmp_path):
    with pytest.raises(FileNotFoundError, match="rebuild"):
        fctlab.catalog(tmp_path)


def test_axis_columns_are_typed_from_their_values():
    rows = []
    for i, axes in enumerate([
        {"workload.load": 0.5, "seed": 1, "switch.queues": 2, "scheme.name": "tcp", "run.flag": True, "t": {"a": 1}},
        {"workload.load": 1, "seed": 2, "switch.queues": 4, "scheme.name": "dctcp", "run.flag": False},
    ]):
        config = {"sweep_point": {"run_id": str(i), "axes": axes}, "seed": axes["seed"]}
        rows.append(catalog._row(str(i), f"runs/{i}/flows.parquet", config, {"seed": axes["seed"]},
                                 pd.Timestamp("2026-01-01").to_pydatetime()))
    table = catalog._table(rows)
    names = table.column_names
    assert names[:2] == ["run_id", "flows_path"]
    # seed is a fixed column already; the other axes follow flows_path in order of first appearance.
    assert names[2:7] == ["workload.load", "switch.queues", "scheme.name", "run.flag", "t"]
    assert str(table.schema.field("workload.load").type) == "double"  # 0.5 and 1 -> float
    assert str(table.schema.field("switch.queues").type) == "int64"
    assert str(table.schema.field("scheme.name").type) == "string"
    assert str(table.schema.field("run.flag").type) == "bool"
    assert table.column("t").to_pylist() == ['{"a": 1}', None]
    assert names.count("seed") == 1


def test_catalog_is_callable_and_lazy():
    assert callable(fctlab.catalog) and fctlab.catalog.load is catalog.load
    assert callable(fctlab.catalog.rebuild) and callable(fctlab.catalog.record_run)
    code = "import sys, fctlab; fctlab.load_sweep; assert 'duckdb' not in sys.modules and 'fctlab.catalog' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)
