"""The README's performance table and docs/performance.md's ns-3 comparison are generated from the committed
files in benchmarks/results/ by benchmarks/perf_table.py; stale when a result changed without ``--write``.
No benchmark runs here."""

from __future__ import annotations

import importlib.util
import json
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent


def _load(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


perf_table = _load("perf_table", ROOT / "benchmarks" / "perf_table.py")
ns3_dctcp = _load("ns3_dctcp", ROOT / "benchmarks" / "peers" / "ns3_dctcp.py")


def test_the_tables_are_current():
    stale = perf_table.render(ROOT)
    assert not stale, f"stale performance table in {sorted(str(p.relative_to(ROOT)) for p in stale)}: run " \
                      "python benchmarks/perf_table.py --write"


def test_every_headline_row_has_a_date_and_a_source():
    rows = perf_table.headline_rows()
    assert rows, "no rows in benchmarks/results/headline/"
    for r in rows:
        assert r["date"][:2] == "20" and len(r["date"]) == 10, r
        assert r["source"], r
        assert "figure" in r or {"wall_seconds", "htsim_equivalent_events_per_second", "peak_rss_mib"} <= set(r)
    assert [r["row"] for r in rows] == sorted({r["row"] for r in rows}), "two rows share a position"


def test_a_changed_result_makes_the_readme_stale(tmp_path):
    """Copy the results and the two pages, change one number: the copy is stale until rewritten, then current."""
    results = tmp_path / "results"
    shutil.copytree(ROOT / "benchmarks" / "results", results, ignore=shutil.ignore_patterns("*.jsonl"))
    (tmp_path / "docs").mkdir()
    for name in perf_table.TARGETS:
        shutil.copy(ROOT / name, tmp_path / name)
    assert perf_table.render(tmp_path, results) == []
    row = sorted((results / "headline").glob("*.json"))[0]
    doc = json.loads(row.read_text())
    doc.pop("figure", None)
    doc.update(wall_seconds=12.345, htsim_equivalent_events_per_second=1.5e6, peak_rss_mib=100, bold=False)
    row.write_text(json.dumps(doc))
    assert perf_table.render(tmp_path, results, write=True) == [tmp_path / n for n in perf_table.TARGETS]
    assert "| 12.35 s, 1.5 M htsim-equivalent events/s, 100 MiB |" in (tmp_path / "README.md").read_text()
    assert perf_table.render(tmp_path, results) == []


def test_the_readme_stays_a_front_door():
    assert (ROOT / "README.md").stat().st_size < 10 * 1024


@pytest.mark.parametrize("n", [1, 2, 7, 100, 1001])
def test_the_ns3_side_percentile_is_numpys_linear(n):
    xs = list(np.random.default_rng(n).exponential(100.0, n))
    for q in (0, 50, 99, 100):
        assert ns3_dctcp._percentile(xs, q) == pytest.approx(np.percentile(xs, q, method="linear"), rel=1e-12)


def test_bin_stats_bins_as_the_results_do():
    """The papers' bins (fctlab.analyze): small <= 100 KB < medium <= 10 MB < large; unfinished flows counted."""
    sizes = [100_000, 100_001, 10_000_000, 10_000_001, 5]
    fcts = [1000.0, 2000.0, 4000.0, None, 3000.0]
    st = ns3_dctcp.bin_stats(sizes, fcts)
    assert st["small"]["flows"] == 2 and st["small"]["mean_us"] == pytest.approx(2.0)
    assert st["medium"]["flows"] == 2 and st["medium"]["mean_us"] == pytest.approx(3.0)
    assert st["large"]["flows"] == 0 and st["large"]["unfinished"] == 1
    assert st["all"]["flows"] == 4 and st["all"]["unfinished"] == 1


def test_public_args_drop_the_interpreter_path():
    assert ns3_dctcp._public_args(["--flows", "10", "--ns3-python", "/x/python", "--write"]) == ["--flows", "10",
                                                                                                 "--write"]
    assert ns3_dctcp._public_args(["--ns3-python=/x/python"]) == []


def test_the_ns3_bins_are_fctlabs():
    from fctlab.analyze import SIZE_BINS

    assert {name: (lo, hi if hi is not None else float("inf")) for name, lo, hi in ns3_dctcp.BINS} == SIZE_BINS
