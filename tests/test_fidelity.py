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
