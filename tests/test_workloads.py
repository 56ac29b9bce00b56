"""Tests of fctlab.workloads: CDF sampling (ns-2 Empirical semantics), exact means, arrival processes and load,
traffic patterns, traces and the errors bad input gets."""

from __future__ import annotations

import ast
import math
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fctlab import workloads as wl
from fctlab.workloads import Cdf, WorkloadError

SHIPPED = sorted(p.stem for p in wl.DATA_DIR.glob("*.cdf"))
PACKET_TABLES = {"websearch", "datamining"}
FLOW_COLUMNS = {
    "flow_id": np.uint32,
    "src": np.uint32,
    "dst": np.uint32,
    "size_bytes": np.uint64,
    "start_ps": np.uint64,
    "priority": np.uint8,
}


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def constant_cdf(tmp_path: Path, size: int) -> Cdf:
    """A CDF whose every sample is `size` bytes, so that lambda can be computed by hand."""
    return wl.load_cdf(write(tmp_path, "const.cdf", f"# every flow is {size} bytes\n{size} 0\n{size} 1\n"))


def brute_force_mean(cdf: Cdf, points_per_unit: int) -> tuple[float, float]:
    """Mean of the sampled size by the midpoint rule on a fine grid of u inside every CDF segment, and a bound on
    the grid's error.

    Independent of the module's closed form: it only evaluates the sampling rule (interpolate, round up to whole
    units, at least one unit) at many u and averages. On a step function the midpoint rule errs by at most one
    grid cell per step, hence the bound.
    """
    unit = cdf.unit_bytes
    s, p = cdf.sizes, cdf.probs
    total = p[0] * max(1.0, math.ceil(s[0] / unit)) * unit
    bound = 0.0
    for a, b, p0, p1 in zip(s[:-1], s[1:], p[:-1], p[1:], strict=True):
        if p1 <= p0:
            continue
        n = int((b - a) / unit * points_per_unit) + 1000
        t = (np.arange(n) + 0.5) / n
        values = np.maximum(np.ceil((a + t * (b - a)) / unit), 1.0) * unit
        total += (p1 - p0) * values.mean()
        steps = np.count_nonzero(np.diff(values)) + 1
        bound += (p1 - p0) * steps * unit / n
    return float(total), bound


def assert_flow_table(df: pd.DataFrame) -> None:
    for col, dtype in FLOW_COLUMNS.items():
        assert df[col].dtype == dtype, col
    assert np.array_equal(df["flow_id"].to_numpy(), np.arange(len(df)))
    assert np.all(np.diff(df["start_ps"].to_numpy().astype(np.int64)) >= 0)
    assert np.all(df["src"].to_numpy() != df["dst"].to_numpy())


# ---------------------------------------------------------------------------------------------------------------
# CDF files
# ---------------------------------------------------------------------------------------------------------------


def test_package_imports_nothing_else_from_fctlab():
    imported = set()
    for path in Path(wl.__file__).parent.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                imported |= {a.name for a in node.names}
            elif isinstance(node, ast.ImportFrom):
                assert node.level == 0, "no relative imports"
                imported.add(node.module)
    imported = {m for m in imported if not m.startswith("fctlab.workloads.")}
    assert {m.split(".")[0] for m in imported} - set(sys.stdlib_module_names) <= {"numpy", "pandas", "pyarrow"}


def test_list_cdfs_has_every_shipped_file_with_its_header():
    cdfs = wl.list_cdfs()
    assert [c.name for c in cdfs] == SHIPPED
    assert {"websearch", "datamining", "homa_w3_google_all_rpc"} <= set(SHIPPED)
    for c in cdfs:
        assert c.header == tuple(line for line in c.path.read_text().splitlines() if line.startswith("#"))
        assert any("source" in line for line in c.header), c.name
        assert c.unit_bytes == (1460 if c.name in PACKET_TABLES else 1), c.name
        assert c.probs[-1] == 1.0
        assert np.all(np.diff(c.sizes) >= 0) and np.all(np.diff(c.probs) >= 0)
        with pytest.raises(ValueError):
            c.sizes[0] = 1.0  # the arrays are read-only


def test_load_cdf_by_name_and_by_path(tmp_path):
    assert wl.load_cdf("websearch") is wl.load_cdf("websearch")
    by_path = wl.load_cdf(wl.DATA_DIR / "websearch.cdf")
    assert np.array_equal(by_path.sizes, wl.load_cdf("websearch").sizes)
    user = write(tmp_path, "mine.cdf", "# my table\n# original units: packets\n\n1460 0\n2920 0.5\n14600 1.0000004\n")
    c = wl.load_cdf(str(user))
    assert c.name == "mine" and c.unit_bytes == 1460 and c.probs[-1] == 1.0
    assert c.header == ("# my table", "# original units: packets")


@pytest.mark.parametrize("name", SHIPPED)
def test_sample_mean_matches_exact_mean(name):
    cdf = wl.load_cdf(name)
    x = cdf.sample(np.random.default_rng(20240601), 200_000)
    assert x.dtype == np.int64
    se = x.std(ddof=1) / math.sqrt(len(x))
    assert abs(x.mean() - cdf.mean_bytes) < 4 * se, (x.mean(), cdf.mean_bytes, se)
    unit = cdf.unit_bytes
    assert np.all(x % unit == 0)
    assert x.min() >= unit * max(1, math.ceil(cdf.sizes[0] / unit))
    assert x.max() <= cdf.sizes[-1]


@pytest.mark.parametrize(
    ("name", "points_per_unit", "pias_mean_bytes"),
    [
        # PIAS-NS2 run scripts: meanFlowSize = 1138 * 1460. The exact mean of the ns-2 sampling is 1141.405 packets
        # (1140.98 without the round-up), 0.30% above the scripts' figure.
        ("websearch", 200, 1138 * 1460),
        # meanFlowSize = 5117 * 1460; the exact mean is 5116.85 packets, 0.003% below.
        ("datamining", 10, 5117 * 1460),
    ],
)
def test_exact_mean_against_brute_force_and_pias(name, points_per_unit, pias_mean_bytes):
    cdf = wl.load_cdf(name)
    assert cdf.mean_bytes == pytest.approx(brute_force_mean(cdf, points_per_unit)[0], rel=1e-6)
    assert cdf.mean_bytes == pytest.approx(pias_mean_bytes, rel=0.01)


def test_ns2_semantics_on_hand_checked_points():
    ws = wl.load_cdf("websearch")
    # u up to 0.15 is the vertical step at 6 packets.
    assert ws.quantile(0.0) == ws.quantile(0.1) == ws.quantile(0.15) == 6 * 1460
    # Halfway between 6 packets (0.15) and 13 packets (0.2): 9.5 packets, rounded up to 10.
    assert ws.quantile(0.175) == 10 * 1460
    assert ws.quantile(1.0) == 20000 * 1460
    assert list(ws.quantile(np.array([0.15, 0.175]))) == [8760, 14600]
    # A first point above probability 0 (as in homa_w3) is an atom: u below it returns the first size.
    atom = Cdf.from_points("atom", [100, 200], [0.4, 1.0])
    x = atom.sample(np.random.default_rng(1), 100_000)
    assert np.mean(x == 100) == pytest.approx(0.4 + 0.6 / 100, abs=0.01)
    assert atom.mean_bytes == pytest.approx(0.4 * 100 + 0.6 * 150.5)
    # Zero sizes still give one unit; a byte table starting at 0 never yields 0.
    zero = Cdf.from_points("zero", [0, 0, 3], [0, 0.5, 1.0], unit_bytes=2)
    assert set(np.unique(zero.sample(np.random.default_rng(2), 10_000))) == {2, 4}
    assert zero.mean_bytes == pytest.approx(0.5 * 2 + 0.5 * (2 * 2 / 3 + 4 / 3))


def test_fraction_at_most_and_describe():
    ws = wl.load_cdf("websearch")
    x = ws.sample(np.random.default_rng(3), 200_000)
    share = ws.fraction_at_most(100_000)
    assert np.mean(x <= 100_000) == pytest.approx(share, abs=4 * math.sqrt(share * (1 - share) / len(x)))
    d = wl.describe(ws)
    assert d["name"] == "websearch" and d["mean_bytes"] == ws.mean_bytes and d["share_le_100kb"] == share
    assert d["median_bytes"] == ws.quantile(0.5) and d["p99_bytes"] == ws.quantile(0.99)
    assert any("PIAS-NS2" in s for s in d["sources"])


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("100 0\nabc 1\n", r"line 3: non-numeric"),
        ("100 0\n50 1\n", r"line 3: size 50 is smaller"),
        ("100 0\n200 0.6\n300 0.5\n400 1\n", r"line 4: cumulative probability 0.5 is smaller"),
        ("100 0\n200 0.9\n", r"last cumulative probability is 0.9,"),
        ("100 1\n", r"at least 2 points"),
        ("100 0 7\n200 1\n", r"line 2: expected 'size_bytes cumulative_probability'"),
        ("100 0\n200 nan\n", r"line 3: cumulative probability nan"),
        ("-5 0\n200 1\n", r"line 2: size -5 must be"),
        ("100 0\n200 1.5\n", r"line 3: cumulative probability 1.5"),
    ],
)
def test_bad_cdf_file(tmp_path, text, match):
    # Line 1 is a comment, so the data start on line 2.
    path = write(tmp_path, "bad.cdf", "# a bad table\n" + text)
    with pytest.raises(WorkloadError, match=match) as info:
        wl.load_cdf(path)
    assert "bad.cdf" in str(info.value)


def test_unknown_cdf_name_lists_known_names():
    with pytest.raises(WorkloadError, match=r"unknown workload CDF 'websearh'.*known names: .*websearch"):
        wl.load_cdf("websearh")
    with pytest.raises(WorkloadError, match="no such CDF file"):
        wl.load_cdf("/nonexistent/x.cdf")


# Random valid small CDFs: sizes and probabilities non-decreasing, last probability 1, the first possibly above 0.
@st.composite
def small_cdfs(draw):
    n = draw(st.integers(2, 8))
    sizes = sorted(draw(st.lists(st.integers(0, 5000), min_size=n, max_size=n)))
    probs = sorted(draw(st.lists(st.floats(0.0, 1.0), min_size=n - 1, max_size=n - 1))) + [1.0]
    unit = draw(st.sampled_from([1, 7, 1460]))
    return Cdf.from_points("random", sizes, probs, unit_bytes=unit)


@settings(max_examples=150, deadline=None)
@given(cdf=small_cdfs(), seed=st.integers(0, 2**32 - 1))
def test_sample_property(cdf, seed):
    unit = cdf.unit_bytes
    x = cdf.sample(np.random.default_rng(seed), 2000)
    low = unit * max(1, math.ceil(cdf.sizes[0] / unit))
    high = unit * max(1, math.ceil(cdf.sizes[-1] / unit))
    assert np.all(x % unit == 0)
    assert np.all((x >= low) & (x <= high))
    assert low * (1 - 1e-12) <= cdf.mean_bytes <= high * (1 + 1e-12)
    brute, bound = brute_force_mean(cdf, 200)
    assert abs(cdf.mean_bytes - brute) <= bound + 1e-9 * brute
    q = cdf.quantile(np.linspace(0, 1, 101))
    assert np.all(np.diff(q) >= 0) and q[0] == low


# ---------------------------------------------------------------------------------------------------------------
# Traffic patterns
# ---------------------------------------------------------------------------------------------------------------


def test_poisson_arrivals_match_hand_computed_rate(tmp_path):
    cdf = constant_cdf(tmp_path, 100_000)
    # lambda = 0.5 * 1e9 b/s * 4 senders / (8 b/B * 100000 B) = 2500 flows/s: mean gap 400 us = 4e8 ps.
    df = wl.all_to_all(hosts=4, cdf=cdf, load=0.5, host_link_bps=1e9, flows=20_000, rng=np.random.default_rng(5))
    assert_flow_table(df)
    starts = df["start_ps"].to_numpy().astype(np.float64)
    gaps = np.diff(np.concatenate([[0.0], starts]))
    assert gaps.mean() == pytest.approx(4e8, rel=0.03)
    # Exponential gaps: the standard deviation equals the mean.
    assert gaps.std() == pytest.approx(4e8, rel=0.05)
    assert np.all(df["size_bytes"] == 100_000)


def test_offered_load_recomputed_from_flows():
    cdf = wl.load_cdf("websearch")
    hosts, rate_bps, load = 16, 10e9, 0.6
    df = wl.all_to_all(
        hosts=hosts, cdf=cdf, load=load, host_link_bps=rate_bps, flows=50_000, rng=np.random.default_rng(6)
    )
    duration_s = float(df["start_ps"].iloc[-1]) / 1e12
    offered = df["size_bytes"].sum() * 8 / duration_s / (hosts * rate_bps)
    assert offered == pytest.approx(load, rel=0.05)


def test_all_to_all_pairs_and_receiver_subset():
    cdf = wl.load_cdf("datamining")
    df = wl.all_to_all(hosts=8, cdf=cdf, load=0.3, host_link_bps=1e10, flows=40_000, rng=np.random.default_rng(7))
    assert_flow_table(df)
    counts = pd.crosstab(df["src"], df["dst"]).to_numpy()
    assert np.all(np.diag(counts) == 0)
    # 56 ordered pairs, about 714 flows each: every pair within 20% of uniform.
    off = counts[~np.eye(8, dtype=bool)]
    assert np.all(np.abs(off / off.mean() - 1) < 0.2)

    sub = wl.all_to_all(
        hosts=8,
        cdf=cdf,
        load=0.3,
        host_link_bps=1e10,
        flows=5_000,
        rng=np.random.default_rng(8),
        senders=[0, 1, 2],
        receivers=[2, 3],
    )
    assert set(sub["src"]) == {0, 1, 2} and set(sub["dst"]) == {2, 3}
    assert np.all(sub.loc[sub["src"] == 2, "dst"] == 3)


def test_all_to_all_between_groups_uniform_over_the_other_groups():
    # 12 hosts in 3 pods of 4: every flow leaves its pod, and each of the 12 x 8 inter-pod pairs is equally likely
    cdf = wl.load_cdf("datamining")
    pods = np.repeat([0, 1, 2], 4)
    df = wl.all_to_all(hosts=12, cdf=cdf, load=0.3, host_link_bps=1e10, flows=60_000, rng=np.random.default_rng(3),
                       groups=pods)
    assert_flow_table(df)
    assert np.all(pods[df["src"].to_numpy()] != pods[df["dst"].to_numpy()])
    counts = pd.crosstab(df["src"], df["dst"]).to_numpy()
    assert counts.shape == (12, 12)
    inter = counts[pods[:, None] != pods[None, :]]
    assert np.all(counts[pods[:, None] == pods[None, :]] == 0)
    assert np.all(np.abs(inter / inter.mean() - 1) < 0.2)  # about 625 flows per pair
    # the same draws as all pairs for the arrivals, sources and sizes: only the destinations differ
    ref = wl.all_to_all(hosts=12, cdf=cdf, load=0.3, host_link_bps=1e10, flows=60_000, rng=np.random.default_rng(3))
    for col in ("start_ps", "src", "size_bytes"):
        assert np.array_equal(df[col].to_numpy(), ref[col].to_numpy()), col
    # receivers limited to one pod: senders in that pod have none outside it
    with pytest.raises(WorkloadError, match="sender 0 has no receiver outside its own group"):
        wl.all_to_all(hosts=12, cdf=cdf, load=0.3, host_link_bps=1e10, flows=10, rng=np.random.default_rng(3),
                      groups=pods, receivers=[1, 2, 3])
    with pytest.raises(WorkloadError, match="one group per host"):
        wl.all_to_all(hosts=12, cdf=cdf, load=0.3, host_link_bps=1e10, flows=10, rng=np.random.default_rng(3),
                      groups=[0, 1])


def test_permutation_maps_each_source_to_one_destination():
    df = wl.permutation(
        hosts=10, cdf=wl.load_cdf("websearch"), load=0.5, host_link_bps=1e10, flows=5_000, rng=np.random.default_rng(9)
    )
    assert_flow_table(df)
    assert df.groupby("src")["dst"].nunique().eq(1).all()
    partner = df.groupby("src")["dst"].first()
    assert len(partner) == 10 and partner.is_unique  # a derangement: every host also receives from exactly one


def test_incast_queries():
    hosts, fan_in, resp = 12, 5, 20_000
    df = wl.incast(
        hosts=hosts, fan_in=fan_in, response_bytes=resp, queries=3_000, query_rate_hz=1e4, rng=np.random.default_rng(10)
    )
    assert_flow_table(df)
    assert df["query_id"].dtype == np.uint32
    assert len(df) == 3_000 * fan_in and np.all(df["size_bytes"] == resp)
    per_query = df.groupby("query_id").agg(
        n=("src", "size"), srcs=("src", "nunique"), dsts=("dst", "nunique"), starts=("start_ps", "nunique")
    )
    assert (per_query["n"] == fan_in).all() and (per_query["srcs"] == fan_in).all()
    assert (per_query["dsts"] == 1).all() and (per_query["starts"] == 1).all()
    # Rate from load: lambda_q = 0.4 * 1e10 * 12 / (8 * 5 * 20000) = 60000 queries/s, mean gap 1/60000 s.
    by_load = wl.incast(
        hosts=hosts,
        fan_in=fan_in,
        response_bytes=resp,
        queries=20_000,
        load=0.4,
        host_link_bps=1e10,
        rng=np.random.default_rng(11),
    )
    q_starts = by_load.groupby("query_id")["start_ps"].first().to_numpy().astype(np.float64)
    assert q_starts[-1] / len(q_starts) == pytest.approx(1e12 / 60_000, rel=0.03)


@pytest.mark.parametrize("pattern", ["all_to_all", "permutation", "incast"])
def test_seed_determinism(pattern):
    def make(seed):
        rng = np.random.default_rng(seed)
        if pattern == "incast":
            return wl.incast(hosts=16, fan_in=8, response_bytes=1000, queries=500, query_rate_hz=1e3, rng=rng)
        return getattr(wl, pattern)(
            hosts=16, cdf=wl.load_cdf("websearch"), load=0.7, host_link_bps=1e10, flows=2_000, rng=rng
        )

    pd.testing.assert_frame_equal(make(42), make(42))
    assert not make(42).equals(make(43))


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"load": 0.0}, "load"),
        ({"load": 1.5}, r"load must be within \(0, 1\]"),
        ({"load": float("nan")}, "load"),
        ({"flows": 0}, "flows must be >= 1"),
        ({"flows": 2.5}, "flows must be an integer"),
        ({"hosts": 1}, "hosts must be >= 2"),
        ({"host_link_bps": -1.0}, "host_link_bps"),
        ({"senders": [0, 99]}, r"senders\[1\] must be <= 3"),
        ({"receivers": []}, "receivers must not be empty"),
        ({"senders": [0], "receivers": [0]}, "receivers: sender 0 has no receiver"),
        ({"rng": 42}, "rng must be a numpy.random.Generator"),
        ({"cdf": "websearch"}, "cdf must be a Cdf"),
    ],
)
def test_bad_generator_arguments(kwargs, match):
    args = {
        "hosts": 4,
        "cdf": wl.load_cdf("websearch"),
        "load": 0.5,
        "host_link_bps": 1e10,
        "flows": 10,
        "rng": np.random.default_rng(0),
    }
    with pytest.raises(WorkloadError, match=match):
        wl.all_to_all(**{**args, **kwargs})


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"fan_in": 4}, r"fan_in must be < hosts \(4\)"),
        ({"fan_in": 0}, "fan_in must be >= 1"),
        ({"response_bytes": 0}, "response_bytes"),
        ({"queries": 0}, "queries"),
        ({"load": 0.5}, "exactly one of query_rate_hz or load"),
        ({"query_rate_hz": None}, "exactly one of query_rate_hz or load"),
        ({"query_rate_hz": None, "load": 0.5}, "host_link_bps is required"),
        ({"query_rate_hz": -3.0}, "query_rate_hz"),
    ],
)
def test_bad_incast_arguments(kwargs, match):
    args = {
        "hosts": 4,
        "fan_in": 2,
        "response_bytes": 100,
        "queries": 10,
        "rng": np.random.default_rng(0),
        "query_rate_hz": 100.0,
    }
    with pytest.raises(WorkloadError, match=match):
        wl.incast(**{**args, **kwargs})


# ---------------------------------------------------------------------------------------------------------------
# Traces
# ---------------------------------------------------------------------------------------------------------------


def test_read_trace_csv_and_parquet(tmp_path):
    raw = pd.DataFrame(
        {
            "src": [3, 0, 1, 2],
            "dst": [1, 2, 0, 3],
            "size_bytes": [5000, 1000, 2000, 3000],
            "start_ns": [30.0, 1.2344, 1.2344, 2.0006],
            "priority": [1, 2, 3, 4],
            "lower_bytes": [0, 0, 1000, 2000],
            "upper_bytes": [10000, 1000, 4000, 4000],
            "deadline_ns": [float("nan"), 5e6, 1e6, 1e6],
        }
    )
    raw.to_csv(tmp_path / "t.csv", index=False)
    raw.to_parquet(tmp_path / "t.parquet", index=False)
    for name in ("t.csv", "t.parquet"):
        df = wl.read_trace(tmp_path / name)
        assert_flow_table(df)
        # Sorted by start, ties kept in file order, fractional ns rounded to the nearest ps.
        assert df["start_ps"].tolist() == [1234, 1234, 2001, 30_000]
        assert df["src"].tolist() == [0, 1, 2, 3]
        assert df["priority"].tolist() == [2, 3, 4, 1]
        assert df["lower_bytes"].dtype == np.uint64 and df["upper_bytes"].tolist() == [1000, 4000, 4000, 10000]
        assert np.isnan(df["deadline_ns"].iloc[-1])
        assert "start_ns" not in df.columns
    minimal = write(tmp_path, "m.csv", "src, dst, size_bytes, start_ns\n0, 1, 10, 5\n")
    df = wl.read_trace(minimal)
    assert df["priority"].tolist() == [0] and df["start_ps"].tolist() == [5000]


@pytest.mark.parametrize(
    ("csv", "match"),
    [
        ("src,dst,size_bytes\n0,1,10\n", r"missing required column 'start_ns'"),
        ("src,dst,size_bytes,start_ns,flow_id\n0,1,10,0,7\n", r"unknown column 'flow_id'"),
        (
            "src,dst,size_bytes,start_ns\n0,1,10,0\n0,1,-5,1\n",
            r"column 'size_bytes', row 2 \(line 3\): -5.* must be >= 1",
        ),
        (
            "src,dst,size_bytes,start_ns\n0,1,10,0\n0,1,10.5,1\n",
            r"column 'size_bytes', row 2 \(line 3\): 10.5 is not an integer",
        ),
        ("src,dst,size_bytes,start_ns\n0,1,0,0\n", r"column 'size_bytes', row 1 \(line 2\): 0 must be >= 1"),
        ("src,dst,size_bytes,start_ns\n0,1,10,0\n2,2,10,0\n", r"column 'dst', row 2 \(line 3\): src == dst"),
        ("src,dst,size_bytes,start_ns\n0,1,10,-1\n", r"column 'start_ns', row 1 \(line 2\): negative start"),
        ("src,dst,size_bytes,start_ns\n0,1,10,0\n0,1,,1\n", r"column 'size_bytes', row 2 \(line 3\): missing value"),
        ("src,dst,size_bytes,start_ns\n0,1,10,0\n0,x,10,1\n", r"column 'dst', row 2 \(line 3\): not a number"),
        (
            "src,dst,size_bytes,start_ns,priority\n0,1,10,0,300\n",
            r"column 'priority', row 1 \(line 2\): 300 must be <= 255",
        ),
    ],
)
def test_bad_trace(tmp_path, csv, match):
    with pytest.raises(WorkloadError, match=match):
        wl.read_trace(write(tmp_path, "bad.csv", csv))


def test_bad_trace_parquet_names_row(tmp_path):
    pd.DataFrame({"src": [0, 1], "dst": [1, 2], "size_bytes": [10.0, float("nan")], "start_ns": [0, 1]}).to_parquet(
        tmp_path / "b.parquet"
    )
    with pytest.raises(WorkloadError, match=r"column 'size_bytes', row 2: missing value"):
        wl.read_trace(tmp_path / "b.parquet")
    with pytest.raises(WorkloadError, match=r"\.csv or \.parquet"):
        wl.read_trace(write(tmp_path, "t.txt", "x"))


def test_check_hosts(tmp_path):
    df = wl.read_trace(write(tmp_path, "t.csv", "src,dst,size_bytes,start_ns\n0,1,10,0\n1,0,10,1\n2,7,10,2\n"))
    wl.check_hosts(df, 8)
    with pytest.raises(WorkloadError, match=r"flow_id 2 .*dst 7 is not a host"):
        wl.check_hosts(df, 4)


def test_wire_load_counts_headers_like_the_ns2_scripts():
    # the same seed draws the same exponential gaps; a wire load of rho is a payload load of rho x 1460/1500,
    # so every start time stretches by 1500/1460
    from fctlab.config import ConfigError, experiment_from_dict
    from fctlab.simulation import build_flows

    raw = {
        "topology": {"kind": "single_switch", "hosts": 8},
        "scheme": {"name": "dctcp"},
        "workload": {"cdf": "websearch", "load": 0.5, "flows": 300},
    }
    payload = build_flows(experiment_from_dict(raw))
    raw["workload"]["load_bytes"] = "wire"
    wire = build_flows(experiment_from_dict(raw))
    np.testing.assert_array_equal(wire["size_bytes"], payload["size_bytes"])
    ratio = wire["start_ps"].to_numpy(dtype=float) / payload["start_ps"].to_numpy(dtype=float)
    np.testing.assert_allclose(ratio, 1500 / 1460, rtol=1e-7)  # (start times are rounded to 1 ps)
    raw["workload"]["load_bytes"] = "bytes"
    with pytest.raises(ConfigError, match="workload.load_bytes"):
        experiment_from_dict(raw)


@pytest.mark.parametrize("workload", [
    {"cdf": "websearch", "load": 0.5, "flows": 300},
    {"pattern": "permutation", "cdf": "datamining", "load": 0.4, "flows": 200},
    {"pattern": "incast", "fan_in": 3, "response_bytes": 20_000, "queries": 30, "load": 0.3},
])
def test_workload_columns_are_build_flows_without_pandas(workload):
    # the command line's pandas-free workload is the same table as build_flows (and the public generators)
    from fctlab.config import experiment_from_dict
    from fctlab.simulation import build_flows, workload_columns

    exp = experiment_from_dict({"seed": 3, "topology": {"kind": "single_switch", "hosts": 8},
                                "scheme": {"name": "dctcp"}, "workload": workload})
    cols = workload_columns(exp)
    assert isinstance(cols, wl.FlowColumns)
    frame = build_flows(exp)
    assert cols.frame().equals(frame) and list(cols.columns) == list(frame.columns) and len(cols) == len(frame)
    assert "priority" not in cols and "src" in cols
    for name in frame.columns:
        np.testing.assert_array_equal(wl.column(cols, name, np.int64), wl.column(frame, name, np.int64))


def test_import_workloads_does_not_load_pandas():
    import subprocess

    code = ("import sys, numpy as np, fctlab.workloads as wl; "
            "t = wl.PATTERNS['all_to_all'].columns(hosts=4, cdf=wl.load_cdf('websearch'), load=0.5, host_link_bps=1e10, flows=50, "
            "rng=np.random.default_rng(1)); wl.check_hosts(t, 4); assert len(t) == 50; "
            "assert 'pandas' not in sys.modules, 'pandas imported'")
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.parametrize("name, share", [("hyline_light", 0.97), ("hyline_light_l1460", 0.97),
                                         ("hyline_heavy", 0.40)])
def test_hylines_synthetic_workloads_have_the_papers_share_of_small_flows(name, share):
    """HyLine's Light and Heavy workloads (bounded Pareto): the share of flows under 100 KB that the paper gives."""
    cdf = wl.load_cdf(name)
    assert cdf.fraction_at_most(100_000) == pytest.approx(share, abs=1e-6)
    x = cdf.sample(np.random.default_rng(5), 100_000)
    assert np.mean(x <= 100_000) == pytest.approx(share, abs=0.005)
    assert x.min() >= (1_460 if name.endswith("l1460") else 5_000) and x.max() <= 29_200_000


def test_the_shipped_names_are_those_of_the_shipped_cdfs():
    # (what an experiment's workload.cdf is checked against, without reading every file)
    names = wl.cdf_names()
    assert names == sorted(c.name for c in wl.list_cdfs())
    assert {"websearch", "datamining"} <= set(names)
