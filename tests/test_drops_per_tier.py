"""Drops per tier (summary.json's `drops_per_tier`): where the dropping ports sit, in path order, adding up to
`drops`, the same on one and two engine threads."""

from __future__ import annotations

import fctlab

FABRIC = [
    "topology.kind=leaf_spine",
    "topology.leaves=2",
    "topology.hosts_per_leaf=8",
    "topology.spines=2",
    "workload.flows=300",
    "workload.load=0.8",
    "switch.buffer_bytes=60000",
]


def _run(scheme: str, threads: int):
    exp = fctlab.load_experiment("examples/quick.toml", overrides=[*FABRIC, f"scheme.name={scheme}"])
    return fctlab.simulate(exp, threads=threads)


def test_drops_per_tier_add_up_in_path_order_on_any_thread_count():
    for scheme in ("tcp", "pfabric"):
        one, two = _run(scheme, 1), _run(scheme, 2)
        tiers = one.summary["drops_per_tier"]
        assert list(tiers) == ["host_nic", "leaf_up", "spine_down", "leaf_down"]
        assert sum(tiers.values()) == one.summary["drops"] > 0
        assert two.summary["drops_per_tier"] == tiers
        probes = one.stats["probe_drops_per_tier"]
        assert list(probes) == list(tiers) and all(probes[k] <= tiers[k] for k in tiers)
