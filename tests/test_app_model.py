"""The application model from Python: generation rates drawn per flow (fixed, uniform, log-uniform, a rate
CDF), the shipped rate CDFs, the workload keys and their errors, and what a run reports (``app_done_ns``, the
ideal FCT of a rate-limited flow, RAX's ``copy_rate_bps``)."""

from __future__ import annotations

import numpy as np
import pytest

import fctlab
from fctlab import workloads as wl
from fctlab.config import ConfigError, experiment_from_dict
from fctlab.workloads import WorkloadError

#: two hosts on one 10 Gbps switch, 1 us links
PAIR = {"kind": "single_switch", "hosts": 2, "host_link_gbps": 10.0, "host_link_delay_ns": 1000.0}


def exp(scheme: str = "dctcp", **workload):
    w = {"pattern": "permutation", "size_uniform_mean_bytes": 1_000_000, "flows": 2, **workload}
    return experiment_from_dict({"seed": 1, "topology": dict(PAIR), "scheme": {"name": scheme}, "workload": w})


def test_rates_are_drawn_from_each_distribution():
    rng = np.random.default_rng
    assert (wl.gen_rates(rng(1), 5, dist="fixed", rate_bps=2e9) == 2_000_000_000).all()
    u = wl.gen_rates(rng(1), 20_000, dist="uniform", min_bps=1e8, max_bps=1e9)
    assert u.min() >= 1e8 and u.max() <= 1e9 and u.mean() == pytest.approx(5.5e8, rel=0.02)
    lu = wl.gen_rates(rng(1), 20_000, dist="log_uniform", min_bps=1e8, max_bps=1e11)
    # uniform in log: each decade holds a third of the draws
    assert np.mean(lu < 1e9) == pytest.approx(1 / 3, abs=0.02)
    fs = wl.gen_rates(rng(1), 50_000, dist="cdf", cdf=wl.load_rate_cdf("fileserver"), scale=10)
    assert fs.min() >= 1e9 and fs.max() <= 1e12
    assert np.array_equal(wl.gen_rates(rng(7), 100, dist="cdf", cdf=wl.load_rate_cdf("mailserver")),
                          wl.gen_rates(rng(7), 100, dist="cdf", cdf=wl.load_rate_cdf("mailserver")))
    with pytest.raises(WorkloadError, match="gen_rate_max_bps"):
        wl.gen_rates(rng(1), 3, dist="uniform", min_bps=2e9, max_bps=1e9)
    with pytest.raises(WorkloadError, match="gen_rate_dist"):
        wl.gen_rates(rng(1), 3, dist="normal")


def test_the_shipped_rate_cdfs_keep_the_papers_range_and_ratio():
    names = {c.name for c in wl.list_rate_cdfs()}
    assert names == {"fileserver", "mailserver", "hdfs_terasort"}
    means = {}
    for name in names:
        c = wl.load_rate_cdf(name)
        assert c.sizes[0] == 1e8 and c.sizes[-1] == 1e11, "100 Mbps to 100 Gbps"
        assert any("RAX" in h for h in c.header), "the header names its source"
        means[name] = wl.gen_rates(np.random.default_rng(3), 400_000, dist="cdf", cdf=c).mean()
    # the paper: the file server generates 1.4x faster than the mail server on average
    assert means["fileserver"] / means["mailserver"] == pytest.approx(1.4, rel=0.03)


def test_workload_keys_are_checked():
    with pytest.raises(ConfigError, match="workload.gen_rate_bps: needs workload.gen_rate_dist"):
        exp(gen_rate_bps=1e9)
    with pytest.raises(ConfigError, match="workload.gen_rate_bps: missing"):
        exp(gen_rate_dist="fixed")
    with pytest.raises(ConfigError, match="workload.gen_rate_cdf: not used"):
        exp(gen_rate_dist="fixed", gen_rate_bps=1e9, gen_rate_cdf="fileserver")
    with pytest.raises(ConfigError, match="workload.gen_rate_max_bps"):
        exp(gen_rate_dist="uniform", gen_rate_min_bps=2e9, gen_rate_max_bps=1e9)
    with pytest.raises(ConfigError, match="workload.gen_rate_cdf"):
        exp(gen_rate_dist="cdf", gen_rate_cdf="no_such_rates")
    with pytest.raises(ConfigError, match="workload.cached_fraction"):
        exp(cached_fraction=0.5)
    with pytest.raises(ConfigError, match="transport.send_buffer_bytes"):
        experiment_from_dict({"topology": dict(PAIR), "transport": {"send_buffer_bytes": 100},
                              "workload": {"pattern": "permutation", "size_uniform_mean_bytes": 1e5, "flows": 2}})
    with pytest.raises(ConfigError, match="scheme.rank"):
        experiment_from_dict({"topology": dict(PAIR), "scheme": {"name": "dctcp", "rank": "remaining_time"},
                              "workload": {"pattern": "permutation", "size_uniform_mean_bytes": 1e5, "flows": 2}})


def test_a_rate_limited_run_reports_when_the_application_finished_and_its_ideal():
    res = fctlab.simulate(exp(gen_rate_dist="fixed", gen_rate_bps=1e9, cached_fraction=0.25))
    f = res.flows
    assert f["finished"].all()
    gen_ns = (f["size_bytes"] - f["cached_bytes"]) * 8.0
    assert np.allclose(f["app_done_ns"] - f["start_ns"], gen_ns, atol=1.0)
    assert (f["fct_ns"] >= gen_ns).all() and (f["ideal_fct_ns"] >= gen_ns).all()
    assert (f["slowdown"] < 1.01).all(), "two flows on their own links: each at its ideal"
    assert f["copy_rate_bps"].isna().all(), "measured by RAX only"
    plain = fctlab.simulate(exp()).flows
    assert np.array_equal(plain["app_done_ns"], plain["start_ns"])


def test_rax_measures_the_copy_rate():
    res = fctlab.simulate(exp("rax", gen_rate_dist="fixed", gen_rate_bps=2e9, size_uniform_mean_bytes=4e6))
    # from the line rate (10 Gbit/s), one EWMA step (alpha 0.25) per 100 us sample: within 5% after ~15 samples,
    # i.e. for flows generated over 1.5 ms or more
    f = res.flows
    long = f["size_bytes"] * 8 / 2e9 >= 2e-3
    assert long.any()
    assert f.loc[long, "copy_rate_bps"].to_numpy() == pytest.approx(2e9, rel=0.05)
    assert "rax_reorderings" in res.stats


def test_chunked_writes_write_the_first_chunk_at_once():
    """``write_chunk_bytes``: the traffic generator's first 64 KB write happens at the flow's start, the rest is
    generated at the rate, so the application finishes (size - chunk) x 8 / rate after the start; a flow of at most
    one chunk is written at once whatever its rate."""
    chunk = 65_536
    res = fctlab.simulate(exp(gen_rate_dist="fixed", gen_rate_bps=1e9, write_chunk_bytes=chunk, flows=6,
                              size_uniform_mean_bytes=80_000))
    f = res.flows
    assert np.array_equal(f["cached_bytes"], np.minimum(f["size_bytes"], chunk))
    small = f["size_bytes"] <= chunk
    assert small.any() and (~small).any()
    assert (f.loc[small, "app_done_ns"] == f.loc[small, "start_ns"]).all()
    gen_ns = (f["size_bytes"] - chunk).clip(lower=0) * 8.0
    assert np.allclose(f["app_done_ns"] - f["start_ns"], gen_ns, atol=1.0)
    # with cached_fraction as well, the larger of the two is written at once
    both = fctlab.simulate(exp(gen_rate_dist="fixed", gen_rate_bps=1e9, write_chunk_bytes=chunk, flows=6,
                               cached_fraction=0.9, size_uniform_mean_bytes=80_000)).flows
    want = np.maximum(np.floor(both["size_bytes"] * 0.9), np.minimum(both["size_bytes"], chunk))
    assert np.array_equal(both["cached_bytes"], want.astype(np.int64))
    with pytest.raises(ConfigError, match="workload.write_chunk_bytes"):
        exp(write_chunk_bytes=chunk)
