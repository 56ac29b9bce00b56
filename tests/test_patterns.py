"""workloads.generate draws a pattern from workload keys exactly as the pattern's public function does."""

from __future__ import annotations

import numpy as np
import pytest

import fctlab.workloads as wl


def _rng() -> np.random.Generator:
    return np.random.default_rng(11)


CDF = wl.load_cdf("websearch")
CASES = [
    ("all_to_all", dict(load=0.5, flows=200, senders=[0, 1, 2], receivers=[3, 4, 5]),
     lambda: wl.all_to_all(hosts=8, cdf=CDF, load=0.5, host_link_bps=1e10, flows=200, rng=_rng(), senders=[0, 1, 2],
                           receivers=[3, 4, 5])),
    ("permutation", dict(load=None, flows=40, start_spread_ns=300.0),
     lambda: wl.permutation(hosts=8, cdf=CDF, load=None, host_link_bps=None, flows=40, rng=_rng(),
                            start_spread_ns=300.0)),
    ("incast", dict(load=0.3, fan_in=3, response_bytes=20_000, queries=20),
     lambda: wl.incast(hosts=8, fan_in=3, response_bytes=20_000, queries=20, rng=_rng(), load=0.3,
                       host_link_bps=1e10)),
    ("aggregation", dict(flows=30, receiver=2),
     lambda: wl.aggregation(hosts=8, sizes=CDF, flows=30, rng=_rng(), receiver=2)),
    ("stride", dict(load=0.4, flows=50, stride=3),
     lambda: wl.stride(hosts=8, sizes=CDF, flows=50, rng=_rng(), stride=3, load=0.4, host_link_bps=1e10)),
    ("staggered", dict(load=0.4, flows=50, staggered_p=0.5, racks=np.arange(8) // 4),
     lambda: wl.staggered(hosts=8, racks=np.arange(8) // 4, sizes=CDF, flows=50, rng=_rng(), p=0.5, load=0.4,
                          host_link_bps=1e10)),
]


@pytest.mark.parametrize("pattern, keys, public", CASES, ids=[c[0] for c in CASES])
def test_generate_is_the_public_generator(pattern, keys, public):
    sizes = CDF if wl.PATTERNS[pattern].uses_sizes else None
    got = wl.generate(pattern, rng=_rng(), hosts=8, host_link_bps=1e10, sizes=sizes, **keys)
    assert isinstance(got, wl.FlowColumns)
    assert got.frame().equals(public())


def test_every_pattern_is_tested_and_unknown_ones_are_refused():
    assert {c[0] for c in CASES} == set(wl.PATTERNS)
    with pytest.raises(wl.WorkloadError, match="unknown pattern 'ring'"):
        wl.generate("ring", rng=_rng(), hosts=8, host_link_bps=1e10)
