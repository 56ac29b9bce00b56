"""Summary statistics per size bin on hand-built flow tables, with the expected numbers worked out by hand."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from fctlab.analyze import compare_table, size_bin, summarize, summary_table, timeout_notes

NAN = float("nan")

# flow_id, size_bytes, fct_ns, slowdown, finished, warmup
ROWS = [
    (0, 50_000, 100.0, 1.0, True, True),  # warm-up: excluded from every bin
    (1, 100_000, 200.0, 2.0, True, False),  # exactly 100 KB: small
    (2, 1, 400.0, 4.0, True, False),
    (3, 100_001, 1000.0, 1.5, True, False),  # just above 100 KB: medium
    (4, 10_000_000, 3000.0, 2.5, True, False),  # exactly 10 MB: medium
    (5, 10_000_001, 9000.0, 3.0, True, False),  # just above 10 MB: large
    (6, 20_000_000, NAN, NAN, False, False),  # unfinished large flow
    (7, 5_000, 600.0, 6.0, True, False),
]

STATS = {
    "drops": 5,
    "ecn_marks": 7,
    "sim_time_ps": 123_456_000,
    "wall_seconds": 0.5,
    "events": 1000,
    "events_per_second": 2000.0,
    "hit_time_limit": False,
    "some_new_counter": [1, 2],
}


def table(rows=ROWS) -> pd.DataFrame:
    df = pd.DataFrame(rows, columns=["flow_id", "size_bytes", "fct_ns", "slowdown", "finished", "warmup"])
    df["size_bin"] = size_bin(df["size_bytes"].to_numpy())
    return df


def test_bin_edges_belong_to_the_lower_bin():
    sizes = [1, 99_999, 100_000, 100_001, 9_999_999, 10_000_000, 10_000_001, 10**12]
    assert list(size_bin(sizes)) == ["small", "small", "small", "medium", "medium", "medium", "large", "large"]


def test_per_bin_statistics_match_hand_computation():
    s = summarize(table(), STATS)
    small, medium, large, every = (s["bins"][b] for b in ("small", "medium", "large", "all"))

    # small: flows 1, 2, 7 -> FCT 200, 400, 600; p99 at rank 0.99 x 2 = 1.98 -> 400 + 0.98 x 200 = 596
    assert (small["count"], small["finished"], small["unfinished"]) == (3, 3, 0)
    assert small["mean_fct_ns"] == pytest.approx(400.0)
    assert small["p99_fct_ns"] == pytest.approx(596.0)
    assert small["mean_slowdown"] == pytest.approx(4.0)
    assert small["p99_slowdown"] == pytest.approx(5.96)

    # medium: flows 3, 4 -> 1000, 3000; p99 at rank 0.99 -> 1000 + 0.99 x 2000 = 2980
    assert (medium["count"], medium["finished"]) == (2, 2)
    assert medium["mean_fct_ns"] == pytest.approx(2000.0)
    assert medium["p99_fct_ns"] == pytest.approx(2980.0)
    assert medium["mean_slowdown"] == pytest.approx(2.0)
    assert medium["p99_slowdown"] == pytest.approx(2.49)

    # large: flow 5 finished (9000), flow 6 not
    assert (large["count"], large["finished"], large["unfinished"]) == (2, 1, 1)
    assert large["mean_fct_ns"] == pytest.approx(9000.0)
    assert large["p99_fct_ns"] == pytest.approx(9000.0)
    assert large["mean_slowdown"] == pytest.approx(3.0)

    # all: 7 measured, 6 finished: sorted FCT 200 400 600 1000 3000 9000, mean 14200 / 6;
    # p99 at rank 0.99 x 5 = 4.95 -> 3000 + 0.95 x 6000 = 8700
    assert (every["count"], every["finished"], every["unfinished"]) == (7, 6, 1)
    assert every["mean_fct_ns"] == pytest.approx(14200 / 6)
    assert every["p99_fct_ns"] == pytest.approx(8700.0)
    assert every["mean_slowdown"] == pytest.approx(19 / 6)
    assert every["p99_slowdown"] == pytest.approx(5.9)


def test_run_totals_and_engine_counters():
    s = summarize(table(), STATS, config={"name": "t", "seed": 3, "scheme": {"name": "tcp"}})
    assert s["flows"] == 8
    assert s["warmup_flows"] == 1
    assert s["measured_flows"] == 7
    assert s["finished_flows"] == 7
    assert s["unfinished_flows"] == 1
    assert s["drops"] == 5 and s["ecn_marks"] == 7
    assert s["sim_time_ns"] == 123_456.0
    assert s["wall_seconds"] == 0.5 and s["events"] == 1000 and s["events_per_second"] == 2000.0
    assert s["engine"]["some_new_counter"] == [1, 2]  # unknown engine keys pass through
    assert (s["name"], s["seed"], s["scheme"]) == ("t", 3, "tcp")
    assert s["config"]["name"] == "t"
    assert "linear" in s["percentiles"]


def test_warmup_flows_are_excluded():
    rows = [r[:5] + (False,) for r in ROWS]  # nothing is warm-up now: flow 0 (FCT 100) joins the small bin
    small = summarize(table(rows), STATS)["bins"]["small"]
    assert small["count"] == 4
    assert small["mean_fct_ns"] == pytest.approx((100 + 200 + 400 + 600) / 4)


def test_empty_bin_has_null_statistics_and_strict_json():
    rows = [r for r in ROWS if r[1] <= 100_000]
    s = summarize(table(rows), STATS)
    assert s["bins"]["large"]["count"] == 0
    assert s["bins"]["large"]["mean_fct_ns"] is None
    assert s["bins"]["large"]["p99_slowdown"] is None
    json.dumps(s, allow_nan=False)  # no NaN anywhere


def test_bin_with_only_unfinished_flows():
    rows = [(0, 20_000_000, NAN, NAN, False, False), (1, 1000, 50.0, 1.0, True, False)]
    s = summarize(table(rows), STATS)
    assert s["bins"]["large"] == {
        "min_bytes_exclusive": 10_000_000,
        "max_bytes": None,
        "count": 1,
        "finished": 0,
        "unfinished": 1,
        "mean_fct_ns": None,
        "p99_fct_ns": None,
        "mean_slowdown": None,
        "p99_slowdown": None,
        "with_timeouts": 0,
        "no_timeout_finished": 0,
        "no_timeout_mean_fct_ns": None,
        "no_timeout_p99_fct_ns": None,
        "no_timeout_mean_slowdown": None,
    }


def test_missing_engine_counters_become_null():
    s = summarize(table(), {})
    assert s["drops"] is None and s["sim_time_ns"] is None
    assert "flows" in summary_table(s)  # the table still renders


def test_summary_table_shows_microseconds():
    text = summary_table(summarize(table(), STATS))
    lines = text.splitlines()
    assert lines[0].split()[0] == "bin"
    small = next(line for line in lines if line.startswith("small"))
    # mean 400 ns = 0.4 us, p99 596 ns = 0.6 us
    assert small.split()[1:5] == ["3", "3", "0.4", "0.6"]
    assert any(line.startswith("all") for line in lines)
    assert "1 unfinished" in text and "drops 5" in text
    assert "PFC" not in text  # no engine counter, no line on it


def test_pfc_counters_in_the_summary_and_its_table():
    stats = {**STATS, "pfc_pause_frames": 12, "pfc_resume_frames": 12,
             "pfc_paused_ps_per_tier": {"host_nic": 3_000_000, "switch_down": 0}}
    s = summarize(table(), stats)
    assert (s["pfc_pause_frames"], s["pfc_resume_frames"]) == (12, 12)
    assert s["pfc_paused_us_per_tier"] == {"host_nic": 3.0, "switch_down": 0.0}
    assert "PFC pauses 12" in summary_table(s)


def test_compare_table_lists_every_run_per_bin():
    a = summarize(table(), STATS)
    rows = [r[:2] + (r[2] * 2 if not math.isnan(r[2]) else NAN,) + r[3:] for r in ROWS]
    b = summarize(table(rows), STATS)
    text = compare_table({"tcp": a, "dctcp": b})
    lines = text.splitlines()
    assert len(lines) == 1 + 4 * 2
    small_tcp, small_dctcp = lines[1], lines[2]
    assert small_tcp.split()[:2] == ["small", "tcp"]
    assert small_dctcp.split()[0] == "dctcp"
    assert small_tcp.split()[3] == "0.4" and small_dctcp.split()[2] == "0.8"


def test_size_bin_accepts_numpy_unsigned():
    assert list(size_bin(np.array([100_000, 100_001], dtype=np.uint64))) == ["small", "medium"]


def test_size_bin_shapes_and_nan_like_before():
    # NaN compares false to both edges: large, as np.where(s <= 100 KB, ..., np.where(s <= 10 MB, ...)) gave
    assert list(size_bin(np.array([np.nan, 0.5, 2e7]))) == ["large", "small", "large"]
    zero_d = size_bin(np.uint64(5))
    assert zero_d.shape == () and zero_d.dtype == object and zero_d.item() == "small"
    assert size_bin(np.array([], dtype=np.int64)).dtype == object


# flow_id, size_bytes, fct_ns, slowdown, finished, warmup, timeouts
TIMEOUT_ROWS = [
    (0, 1_000, 100.0, 1.0, True, False, 0),
    (1, 2_000, 300.0, 3.0, True, False, 0),
    (2, 3_000, 2_000_100.0, 2000.0, True, False, 1),  # one RTO of 2 ms
    (3, 4_000, NAN, NAN, False, False, 3),  # timed out and never finished: counted, not in any FCT
    (4, 5_000, 500.0, 5.0, True, True, 2),  # warm-up: in no bin
    (5, 200_000, 1_000.0, 2.0, True, False, 0),
]


def timeout_table(rows=TIMEOUT_ROWS) -> pd.DataFrame:
    df = table([r[:6] for r in rows])
    df["timeouts"] = [r[6] for r in rows]
    return df


def test_statistics_without_the_flows_that_timed_out():
    small = summarize(timeout_table(), STATS)["bins"]["small"]
    # measured small flows 0..3; flows 2 and 3 had timeouts; no-timeout FCTs: 100, 300
    assert (small["count"], small["finished"], small["with_timeouts"], small["no_timeout_finished"]) == (4, 3, 2, 2)
    assert small["mean_fct_ns"] == pytest.approx((100 + 300 + 2_000_100) / 3)
    assert small["no_timeout_mean_fct_ns"] == pytest.approx(200.0)
    assert small["no_timeout_p99_fct_ns"] == pytest.approx(100 + 0.99 * 200)
    assert small["no_timeout_mean_slowdown"] == pytest.approx(2.0)
    every = summarize(timeout_table(), STATS)["bins"]["all"]
    assert (every["with_timeouts"], every["no_timeout_finished"]) == (2, 3)
    assert every["no_timeout_mean_fct_ns"] == pytest.approx(1400 / 3)


def test_a_table_without_a_timeouts_column_counts_none():
    small = summarize(table(), STATS)["bins"]["small"]
    assert small["with_timeouts"] == 0 and small["no_timeout_mean_fct_ns"] == small["mean_fct_ns"]


def test_ns2_bin_edges_are_100_kib_and_10_mib():
    sizes = [102_399, 102_400, 10_485_760, 10_485_761]
    assert list(size_bin(sizes, "ns2")) == ["small", "medium", "medium", "large"]
    assert list(size_bin(sizes)) == ["medium", "medium", "large", "large"]
    rows = [(i, size, 10.0 * (i + 1), 1.0, True, False) for i, size in enumerate(sizes)]
    s = summarize(table(rows), STATS, config={"output": {"bins": "ns2"}})
    assert [s["bins"][b]["count"] for b in ("small", "medium", "large")] == [1, 2, 1]
    assert s["bins"]["small"]["max_bytes"] == 102_399 and s["bins"]["medium"]["max_bytes"] == 10_485_760
    assert s["bins"]["medium"]["mean_fct_ns"] == pytest.approx(25.0) and s["bin_edges"] == "ns2"
    papers = summarize(table(rows), STATS)
    assert [papers["bins"][b]["count"] for b in ("small", "medium", "large")] == [0, 2, 2]
    assert papers["bin_edges"] == "papers"
    with pytest.raises(ValueError, match="output.bins"):
        size_bin(sizes, "kib")


def test_a_p99_set_by_timeouts_is_explained_in_one_line():
    # 40 small flows without a timeout (FCT 100..490 ns), 2 with one (2 ms); one flow of 200 KB, no timeout
    rows = [(i, 1_000, 100.0 + 10 * i, 1.0, True, False, 0) for i in range(40)]
    rows += [(40, 1_000, 2_000_100.0, 2000.0, True, False, 1), (41, 1_000, 2_000_200.0, 2000.0, True, False, 1)]
    rows += [(42, 200_000, 1_000.0, 2.0, True, False, 0)]
    s = summarize(timeout_table(rows), STATS, config={"transport": {"rto_min_us": 2000.0}})
    notes = timeout_notes({"PIAS": s})
    # small: p99 at rank 0.99 x 41 = 40.59, between 2,000,100 and 2,000,200: 2,000,159 ns; without the two,
    # p99 at rank 0.99 x 39 = 38.61 -> 480 + 0.61 x 10 = 486.1 ns. "all": 2,000,158 ns, and without the two
    # (41 flows, the 1,000 ns one last) rank 39.6 -> 490 + 0.6 x 510 = 796 ns. medium: no timeouts, no note
    assert notes == [
        "note: PIAS, small flows: p99 FCT 2,000.2 us comes from the 2 of 42 flows that hit a timeout (RTOmin 2 ms); "
        "0.5 us without them",
        "note: PIAS, all flows: p99 FCT 2,000.2 us comes from the 2 of 43 flows that hit a timeout (RTOmin 2 ms); "
        "0.8 us without them",
    ]
    text = compare_table({"PIAS": s})
    assert text.splitlines()[-2:] == notes
    s["scheme"] = "PIAS"
    assert summary_table(s).splitlines()[-2:] == notes  # one run's table too
    # no timeouts, no note; timeouts in more than a tenth of the flows are no tail effect, no note either
    assert timeout_notes({"tcp": summarize(table(), STATS)}) == []
    assert timeout_notes({"tcp": summarize(timeout_table(), STATS)}) == []  # 2 of 4 small flows


def test_bins_text_names_the_edges():
    from fctlab.analyze import bins_text

    assert bins_text() == "small <= 100 KB < medium <= 10 MB < large"
    assert bins_text("ns2") == "small < 100 KiB <= medium <= 10 MiB < large"
    with pytest.raises(ValueError, match="^output.bins"):
        bins_text("kib")


# --------------------------------------------------------------------------------------------------------------
# The summary's percentile: numpy.percentile's own result, float for float


from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from hypothesis.extra.numpy import arrays  # noqa: E402

from fctlab.analyze import percentile  # noqa: E402


@settings(max_examples=400, deadline=None)
@given(
    arrays(np.float64, st.integers(1, 300),
           elements=st.floats(allow_nan=False, allow_infinity=True, allow_subnormal=True, width=64)),
    st.sampled_from([99.0, 50.0, 0.0, 100.0, 90.0, 99.9, 1.0, 37.5]),
)
def test_the_percentile_is_numpys_bit_for_bit(values, q):
    with np.errstate(invalid="ignore"):  # (numpy warns on inf - inf; the result is what is compared)
        want = np.percentile(values, q, method="linear")
    got = percentile(values.copy(), q)
    assert (np.isnan(want) and np.isnan(got)) or (got == want and np.signbit(got) == np.signbit(want)), (got, want)


def test_the_percentile_on_flow_times_and_what_it_leaves_to_numpy():
    rng = np.random.default_rng(3)
    for n in (1, 2, 3, 99, 100, 101, 1_000, 20_000):
        fct = rng.lognormal(11, 2, n)
        fct[rng.integers(0, n, n // 10)] = fct[0]  # ties
        assert percentile(fct) == np.percentile(fct, 99.0)
        assert percentile(np.sort(fct)) == np.percentile(fct, 99.0)
    # NaN and other dtypes: numpy's own answer
    assert np.isnan(percentile(np.array([1.0, np.nan, 3.0])))
    assert percentile(np.arange(101, dtype=np.int64)) == 99.0
    # the input is not reordered
    a = np.array([3.0, 1.0, 2.0])
    percentile(a)
    assert a.tolist() == [3.0, 1.0, 2.0]
