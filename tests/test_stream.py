"""A flow-level run that streams its table to flows.parquet while the engine runs (``simulate(write_to=...)``,
what ``fctlab run`` does) writes the same flows.parquet, byte for byte, and the same summary.json as a run whose
table is returned whole and written afterwards: with flows that finish out of id order, several batches (the
row groups made small here), a time limit that leaves flows unfinished, and flows a scheme gives up on."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

import fctlab
from fctlab import results
from fctlab.results import write_results

#: 300 web search flows on a small fat-tree at load 0.6: many in flight at once, finishing out of order.
BASE = {
    "seed": 5,
    "topology": {"kind": "fat_tree", "k": 4},
    "scheme": {"name": "dctcp"},
    "routing": {"mode": "spray"},
    "run": {"level": "flow"},
    "workload": {"cdf": "websearch", "load": 0.6, "flows": 300, "warmup_flows": 20, "cooldown_flows": 10},
}

#: Keys of summary.json that measure the run's wall time, not its results.
WALL = ("wall_seconds", "events_per_second")


def _summary(path: Path) -> dict:
    s = json.loads(path.read_text())
    for key in WALL:
        s.pop(key, None)
        s["engine"].pop(key, None)
    return s


def _both(tmp_path: Path, raw: dict) -> tuple[Path, Path, fctlab.Result]:
    exp = fctlab.experiment_from_dict(raw, base_dir=".")
    whole = fctlab.simulate(exp, frame=False)
    assert whole.flows_file is None
    write_results(whole, tmp_path / "whole")
    streamed = fctlab.simulate(exp, frame=False, write_to=tmp_path / "streamed")
    assert streamed.flows is None and streamed.flows_file == tmp_path / "streamed" / "flows.parquet"
    write_results(streamed, tmp_path / "streamed")
    return tmp_path / "whole", tmp_path / "streamed", whole


def _same(a: Path, b: Path) -> None:
    assert (a / "flows.parquet").read_bytes() == (b / "flows.parquet").read_bytes()
    assert _summary(a / "summary.json") == _summary(b / "summary.json")
    assert json.loads((a / "config.json").read_text()) == json.loads((b / "config.json").read_text())


@pytest.mark.parametrize("rows", [64, 65_536])
def test_streamed_run_writes_the_same_files(tmp_path, monkeypatch, rows):
    monkeypatch.setattr(results, "PARQUET_ROWS", rows)
    a, b, whole = _both(tmp_path, BASE)
    _same(a, b)
    finish = whole.flows["finish_ns"]
    assert np.count_nonzero(np.diff(finish) < 0) > 30  # (flows that finish before the flow before them)
    assert pq.ParquetFile(b / "flows.parquet").num_row_groups == -(-300 // rows)


def test_streamed_run_at_a_time_limit(tmp_path, monkeypatch):
    monkeypatch.setattr(results, "PARQUET_ROWS", 50)
    raw = {**BASE, "run": {"level": "flow", "time_limit_ms": 200.0}}
    a, b, whole = _both(tmp_path, raw)
    _same(a, b)
    s = json.loads((b / "summary.json").read_text())
    assert s["hit_time_limit"] and 50 < s["unfinished_flows"] < 290


def test_streamed_run_with_flows_given_up(tmp_path, monkeypatch):
    monkeypatch.setattr(results, "PARQUET_ROWS", 40)
    raw = {**BASE, "scheme": {"name": "d3"}, "routing": {"mode": "ecmp"},
           "workload": {**BASE["workload"], "deadline_mean_ms": 0.5}}
    a, b, _ = _both(tmp_path, raw)
    _same(a, b)
    s = json.loads((b / "summary.json").read_text())
    assert s["terminated_flows"] > 5 and s["deadline_flows"] > 100


def test_packet_level_ignores_write_to(tmp_path):
    raw = {**BASE, "run": {"level": "packet"}, "workload": {**BASE["workload"], "flows": 40}}
    exp = fctlab.experiment_from_dict(raw, base_dir=".")
    r = fctlab.simulate(exp, frame=False, write_to=tmp_path / "p")
    assert r.flows_file is None and len(r.flows) == 40


def test_an_engine_error_leaves_no_file(tmp_path, monkeypatch):
    exp = fctlab.experiment_from_dict(BASE, base_dir=".")

    def refuse(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(results.RowGroupWriter, "write", refuse)
    with pytest.raises(OSError, match="disk full"):
        fctlab.simulate(exp, frame=False, write_to=tmp_path / "s")
    assert list((tmp_path / "s").iterdir()) == []


def test_streamed_run_where_pandas_writes_the_table(tmp_path, monkeypatch):
    # a table the writer cannot describe without pandas: the batches are joined and written whole, as without
    # streaming
    monkeypatch.setattr(results, "PARQUET_ROWS", 64)
    monkeypatch.setattr(results, "pandas_metadata", lambda table, pa: None)
    a, b, _ = _both(tmp_path, BASE)
    _same(a, b)
