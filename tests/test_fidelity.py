"""Fidelity against analytic results: DCTCP on one bottleneck behaves like processor sharing.

Poisson arrivals of equal-size flows (1 MB) from 8 senders to one receiver over a 10 Gb/s bottleneck at offered
load rho. Under processor sharing (M/G/1-PS) the mean completion time of a flow of size x is x / (C (1 - rho)),
whatever the size distribution, so the mean slowdown is 1 / (1 - rho). DCTCP's short queues make it a close
approximation; TCP fills the buffer and is not checked here.
"""

from __future__ import annotations

import numpy as np
import pytest

import fctlab
from fctlab import workloads as wl


def run_bottleneck(rho: float, flows: int = 3000, scheme: str = "dctcp"):
    exp = fctlab.experiment_from_dict(
        {
            "seed": 3,
            "topology": {
                "kind": "dumbbell",
                "senders": 8,
                "receivers": 1,
                "host_link_gbps": 10,
                "core_link_gbps": 10,
                "host_link_delay_ns": 1000,
                "core_link_delay_ns": 1000,
            },
            "switch": {"buffer_bytes": 1_000_000, "ecn_threshold_bytes": 30_000},
            "transport": {"init_cwnd_packets": 10, "rto_min_us": 1000},
            "scheme": {"name": scheme},
            "workload": {"cdf": "websearch", "load": 0.5, "flows": 10},  # replaced by the flows below
        },
        base_dir=".",
    )
    cdf = wl.Cdf.from_points("1MB", np.array([1e6, 1e6]), np.array([0.0, 1.0]), unit_bytes=1460)
    # all_to_all's load is per sender link; 8 senders share the bottleneck, so each offers rho / 8
    table = wl.all_to_all(
        hosts=9, cdf=cdf, load=rho / 8, host_link_bps=10e9, flows=flows,
        rng=np.random.default_rng(7), senders=list(range(8)), receivers=[8],
    )
    return fctlab.simulate(exp, flows=table)


@pytest.mark.parametrize("rho", [0.3, 0.5])
def test_dctcp_mean_slowdown_matches_processor_sharing(rho):
    result = run_bottleneck(rho)
    assert result.flows["finished"].all()
    steady = result.flows[result.flows["flow_id"] >= 300]  # drop the first 10% (empty-system start)
    ps = 1.0 / (1.0 - rho)
    measured = steady["slowdown"].mean()
    assert abs(measured - ps) / ps < 0.15, f"rho={rho}: mean slowdown {measured:.3f}, processor sharing {ps:.3f}"


def test_bottleneck_is_never_faster_than_line_rate():
    result = run_bottleneck(0.5, flows=500)
    f = result.flows
    wire = np.ceil(f["size_bytes"] / 1460) * 1500
    busy_ns = wire.sum() * 8 / 10e9 * 1e9
    span_ns = f["finish_ns"].max() - f["start_ns"].min()
    assert span_ns >= busy_ns
    assert (f["slowdown"] >= 1.0).all()


def srpt_mean_response(service_s, probs, lam):
    """Mean response time of M/G/1 under preemptive SRPT for a discrete service-time distribution.

    Schrage & Miller (1966): a job of size x waits W(x) = lam * m2(x) / (2 (1 - rho(x-)) (1 - rho(x))) with
    m2(x) = E[min(S, x)^2] and rho(x) the load of jobs of size <= x (rho(x-): < x; jobs of equal size are served
    in arrival order), then spends integral_0^x dt / (1 - rho(t-)) in service, preempted by smaller jobs.
    """
    s = np.asarray(service_s, float)
    p = np.asarray(probs, float)
    order = np.argsort(s)
    s, p = s[order], p[order]
    total = 0.0
    for k, x in enumerate(s):
        rho_below = lam * np.sum(s[:k] * p[:k])
        rho_upto = lam * np.sum(s[: k + 1] * p[: k + 1])
        m2 = np.sum(s[: k + 1] ** 2 * p[: k + 1]) + x * x * (1 - np.sum(p[: k + 1]))
        wait = lam * m2 / (2 * (1 - rho_below) * (1 - rho_upto))
        residence, prev = 0.0, 0.0
        for j in range(k + 1):
            residence += (s[j] - prev) / (1 - lam * np.sum(s[:j] * p[:j]))
            prev = s[j]
        total += p[k] * (wait + residence)
    return total


TWO_SIZES = (100 * 1460, 1000 * 1460)
TWO_PROBS = (0.8, 0.2)


def two_size_flows(rho, flows, seed=7):
    sizes = np.array(TWO_SIZES, float)
    cdf = wl.Cdf.from_points(
        "two", np.array([sizes[0], sizes[0], sizes[1], sizes[1]]), np.array([0, 0.8, 0.8, 1.0]), unit_bytes=1460
    )
    table = wl.all_to_all(
        hosts=9, cdf=cdf, load=rho / 8, host_link_bps=10e9, flows=flows,
        rng=np.random.default_rng(seed), senders=list(range(8)), receivers=[8],
    )
    return cdf, table


def test_srpt_formula_matches_a_direct_simulation_of_srpt():
    """The formula above against an independent event-by-event M/G/1-SRPT simulation of the same arrivals."""
    import heapq

    cdf, table = two_size_flows(0.6, 60_000)
    arrivals = table["start_ps"].to_numpy() / 1e12
    service = np.ceil(table["size_bytes"].to_numpy() / 1460) * 1500 * 8 / 10e9
    t, heap, done, i, n = 0.0, [], np.zeros(len(arrivals)), 0, len(arrivals)
    while i < n or heap:
        if not heap:
            t = max(t, arrivals[i])
            heapq.heappush(heap, (service[i], i))
            i += 1
            continue
        remaining, j = heap[0]
        if i >= n or t + remaining <= arrivals[i]:
            t += remaining
            heapq.heappop(heap)
            done[j] = t
        else:
            heapq.heapreplace(heap, (remaining - (arrivals[i] - t), j))
            t = arrivals[i]
            heapq.heappush(heap, (service[i], i))
            i += 1
    simulated = (done - arrivals)[6000:].mean()
    lam = 0.6 * 10e9 / (8 * cdf.mean_bytes)
    svc = np.ceil(np.array(TWO_SIZES) / 1460) * 1500 * 8 / 10e9
    assert simulated == pytest.approx(srpt_mean_response(svc, TWO_PROBS, lam), rel=0.05)


def test_pfabric_approaches_srpt_and_beats_dctcp_on_one_bottleneck():
    """pFabric approximates SRPT: on one 10 Gb/s bottleneck with Poisson arrivals its mean FCT is within 25% of
    the M/G/1-SRPT mean (it cannot be below it: SRPT is optimal), and below DCTCP's."""
    rho = 0.5
    cdf, table = two_size_flows(rho, 3000)
    svc = np.ceil(np.array(TWO_SIZES) / 1460) * 1500 * 8 / 10e9
    srpt_ns = srpt_mean_response(svc, TWO_PROBS, rho * 10e9 / (8 * cdf.mean_bytes)) * 1e9
    means = {}
    for scheme in ("pfabric", "dctcp"):
        overrides = {"scheme": {"name": scheme}}
        if scheme == "dctcp":
            overrides["switch"] = {"buffer_bytes": 1_000_000, "ecn_threshold_bytes": 30_000}
            overrides["transport"] = {"rto_min_us": 1000}
        exp = fctlab.experiment_from_dict(
            {
                "seed": 3,
                "topology": {
                    "kind": "dumbbell", "senders": 8, "receivers": 1, "host_link_gbps": 10,
                    "core_link_gbps": 10, "host_link_delay_ns": 1000, "core_link_delay_ns": 1000,
                },
                "workload": {"cdf": "websearch", "load": 0.5, "flows": 10},
                **overrides,
            },
            base_dir=".",
        )
        result = fctlab.simulate(exp, flows=table)
        assert result.flows["finished"].all(), scheme
        means[scheme] = result.flows.loc[result.flows["flow_id"] >= 300, "fct_ns"].mean()
    assert srpt_ns <= means["pfabric"] <= 1.25 * srpt_ns, (means, srpt_ns)
    assert means["pfabric"] < means["dctcp"], means


def test_homa_approaches_srpt_on_one_bottleneck():
    """Homa's receiver grants in SRPT order: on the same bottleneck and flows as pFabric above, its mean FCT is
    within 25% of the M/G/1-SRPT mean (not below it) and below DCTCP's; and every flow finishes."""
    rho = 0.5
    cdf, table = two_size_flows(rho, 3000)
    svc = np.ceil(np.array(TWO_SIZES) / 1460) * 1500 * 8 / 10e9
    srpt_ns = srpt_mean_response(svc, TWO_PROBS, rho * 10e9 / (8 * cdf.mean_bytes)) * 1e9
    exp = fctlab.experiment_from_dict(
        {
            "seed": 3,
            "topology": {
                "kind": "dumbbell", "senders": 8, "receivers": 1, "host_link_gbps": 10,
                "core_link_gbps": 10, "host_link_delay_ns": 1000, "core_link_delay_ns": 1000,
            },
            "switch": {"buffer_bytes": 1_000_000},
            "scheme": {"name": "homa"},
            "workload": {"cdf": "websearch", "load": 0.5, "flows": 10},
        },
        base_dir=".",
    )
    result = fctlab.simulate(exp, flows=table)
    f = result.flows
    assert f["finished"].all()
    assert (f["retransmits"] == 0).all() and result.summary["engine"]["drops"] == 0
    mean = f.loc[f["flow_id"] >= 300, "fct_ns"].mean()
    assert srpt_ns <= mean <= 1.25 * srpt_ns, (mean, srpt_ns)


def test_flow_level_matches_the_queueing_results_on_one_bottleneck():
    """The flow level (run.level = "flow") on the same bottleneck and Poisson arrivals: DCTCP as max-min fair
    sharing is processor sharing (mean slowdown 1 / (1 - rho), up to its slow start and latency), pFabric as SRPT
    is within 10% of the M/G/1-SRPT mean (and not below it)."""
    rho = 0.5
    cdf, table = two_size_flows(rho, 6000)
    svc = np.ceil(np.array(TWO_SIZES) / 1460) * 1500 * 8 / 10e9
    srpt_ns = srpt_mean_response(svc, TWO_PROBS, rho * 10e9 / (8 * cdf.mean_bytes)) * 1e9
    means = {}
    for scheme in ("pfabric", "dctcp"):
        exp = fctlab.experiment_from_dict(
            {
                "seed": 3,
                "topology": {
                    "kind": "dumbbell", "senders": 8, "receivers": 1, "host_link_gbps": 10,
                    "core_link_gbps": 10, "host_link_delay_ns": 1000, "core_link_delay_ns": 1000,
                },
                "scheme": {"name": scheme},
                "transport": {"init_cwnd_packets": 1000},
                "run": {"level": "flow"},
                "workload": {"cdf": "websearch", "load": 0.5, "flows": 10},
            },
            base_dir=".",
        )
        result = fctlab.simulate(exp, flows=table)
        f = result.flows
        assert f["finished"].all(), scheme
        means[scheme] = f.loc[f["flow_id"] >= 600, ["fct_ns", "slowdown"]].mean()
    assert srpt_ns <= means["pfabric"]["fct_ns"] <= 1.10 * srpt_ns, (means, srpt_ns)
    ps = 1.0 / (1.0 - rho)
    assert abs(means["dctcp"]["slowdown"] - ps) / ps < 0.10, (means["dctcp"], ps)
