"""The optimal references of fctlab.optimal on hand-worked examples and against brute force."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from fctlab.theory import pdq_optimum as optimal


def test_srpt_completes_shortest_first():
    # 3000, 1000 and 2000 bytes with no headers at 8 bits per ns: 3000, 1000, 2000 ns alone
    p = optimal.transmission_ns([3000, 1000, 2000], 8e9, mss_bytes=10_000, header_bytes=0)
    assert p.tolist() == [3000.0, 1000.0, 2000.0]
    fct = optimal.srpt_fct_ns(p)
    assert fct.tolist() == [6000.0, 1000.0, 3000.0]
    assert fct.mean() == pytest.approx(10_000 / 3)
    assert optimal.srpt_fct_ns(p, latency_ns=[10, 20, 30]).tolist() == [6010.0, 1020.0, 3030.0]


def test_srpt_beats_every_order_on_small_cases():
    rng = np.random.default_rng(0)
    for _ in range(50):
        p = rng.integers(1, 20, 5).astype(float)
        best = min(np.cumsum(p[list(o)]).sum() for o in itertools.permutations(range(5)))
        assert optimal.srpt_fct_ns(p).sum() == pytest.approx(best)


def test_transmission_counts_headers_per_packet():
    # 1461 bytes are two packets: 1461 + 80 wire bytes at 1 Gbps
    assert optimal.transmission_ns([1461], 1e9).tolist() == [1541 * 8.0]
    assert optimal.latency_from_ideal([20_000.0], [1460], 1e9).tolist() == [20_000.0 - 12_000.0]


def test_moore_hodgson_drops_the_longest_when_edf_is_late():
    # EDF order A (p 2, d 3), B (p 4, d 5), C (p 1, d 6): B ends at 6 > 5, so the longest so far (B) goes;
    # A and C are on time. All three need 7 > 6, so two is the most.
    on = optimal.moore_hodgson([2, 4, 1], [3, 5, 6])
    assert on.tolist() == [True, False, True]


def test_moore_hodgson_drops_an_earlier_job_when_it_is_the_longest():
    # A (p 4, d 4) and B (p 1, d 5) fit; C (p 2, d 6) ends at 7 > 6: the longest taken is A, not C
    on = optimal.moore_hodgson([4, 1, 2], [4, 5, 6])
    assert on.tolist() == [False, True, True]


def test_moore_hodgson_on_time_exactly_at_the_due_time_and_skips_nan():
    assert optimal.moore_hodgson([1, 1], [1, 2]).tolist() == [True, True]
    assert optimal.moore_hodgson([1, 5], [np.nan, 1]).tolist() == [False, False]


def test_moore_hodgson_matches_brute_force():
    rng = np.random.default_rng(1)
    for _ in range(200):
        n = int(rng.integers(1, 7))
        p = rng.integers(1, 10, n).astype(float)
        d = rng.integers(1, 25, n).astype(float)
        best = 0
        for k in range(n, 0, -1):
            for subset in itertools.combinations(range(n), k):
                s = sorted(subset, key=lambda j: d[j])
                if np.all(np.cumsum(p[s]) <= d[s]):
                    best = k
                    break
            if best:
                break
        on = optimal.moore_hodgson(p, d)
        assert on.sum() == best
        s = sorted(np.flatnonzero(on), key=lambda j: d[j])
        assert np.all(np.cumsum(p[s]) <= d[s])


def test_optimal_application_throughput():
    # the first example as flows with latency 1 and deadlines one later; a flow without a deadline is not counted
    share = optimal.optimal_application_throughput([2, 4, 1, 9], [4, 6, 7, np.nan], latency_ns=1.0)
    assert share == pytest.approx(2 / 3)
    assert optimal.optimal_application_throughput([1.0], [np.nan]) is None
