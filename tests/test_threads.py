"""Two engine threads (hosts on one, switches on the other) give the same results as one, bit for bit.

The Rust tests (crates/sim/tests/fifo_path.rs) check this on the engine's own scenarios; these check it
through the Python API and the CLI, on the schemes whose ports differ most (FIFO fast path, strict-priority
queues with demotion, rank queues, QCLIMB's out-of-order handling).
"""

from __future__ import annotations

import json

import pandas as pd
import pytest
from typer.testing import CliRunner

import fctlab
from fctlab.cli import app

# a busy small fabric: 2 leaves x 8 hosts, 2 spines, high load, small buffers so that there are drops
FABRIC = [
    "topology.kind=leaf_spine",
    "topology.leaves=2",
    "topology.hosts_per_leaf=8",
    "topology.spines=2",
    "workload.flows=300",
    "workload.load=0.8",
    "switch.buffer_bytes=60000",
]

WALL = {
    "wall_seconds",
    "events_per_second",
    "htsim_equivalent_events_per_second",
    "max_event_queue_len",
    "threads",
    "thread_wait_seconds",
}


def _run(scheme: str, threads: int, extra: list[str] | None = None):
    exp = fctlab.load_experiment(
        "examples/quick.toml", overrides=[*FABRIC, f"scheme.name={scheme}", *(extra or [])]
    )
    return fctlab.simulate(exp, threads=threads)


@pytest.mark.parametrize(
    ("scheme", "extra"),
    [
        ("dctcp", ["routing.mode=spray"]),
        ("tcp", []),
        ("pias", ["switch.queues=4", "scheme.thresholds_bytes=[20000, 200000, 2000000]"]),
        ("pfabric", []),
        ("qclimb", ["switch.queues=4", "scheme.thresholds_bytes=[20000, 200000, 2000000]", "scheme.qclimb_info=precise"]),
    ],
)
def test_two_threads_same_flows_and_stats(scheme, extra):
    one = _run(scheme, 1, extra)
    two = _run(scheme, 2, extra)
    pd.testing.assert_frame_equal(one.flows, two.flows)
    assert {k: v for k, v in one.stats.items() if k not in WALL} == {
        k: v for k, v in two.stats.items() if k not in WALL
    }
    assert one.stats["events"] > 0 and one.flows["finished"].all()
    assert (one.stats["threads"], two.stats["threads"]) == (1, 2)
    assert one.stats["thread_wait_seconds"] == [] and len(two.stats["thread_wait_seconds"]) == 2


def test_drops_are_counted_on_both_sides():
    one = _run("tcp", 1)
    two = _run("tcp", 2)
    assert one.stats["drops"] > 0
    assert one.flows["bytes_dropped"].sum() == two.flows["bytes_dropped"].sum() > 0


def test_drops_per_tier_add_up_in_path_order_on_any_thread_count():
    # summary.json's drops_per_tier: where the dropping ports sit, in path order, adding up to drops
    for scheme in ("tcp", "pfabric"):
        one, two = _run(scheme, 1), _run(scheme, 2)
        tiers = one.summary["drops_per_tier"]
        assert list(tiers) == ["host_nic", "leaf_up", "spine_down", "leaf_down"]
        assert sum(tiers.values()) == one.summary["drops"] > 0
        assert two.summary["drops_per_tier"] == tiers
        probes = one.stats["probe_drops_per_tier"]
        assert list(probes) == list(tiers) and all(probes[k] <= tiers[k] for k in tiers)


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "2"])
def test_bad_thread_count_is_an_error(bad):
    exp = fctlab.load_experiment("examples/quick.toml", overrides=["workload.flows=10", "workload.warmup_flows=0"])
    with pytest.raises(ValueError, match="threads"):
        fctlab.simulate(exp, threads=bad)


def test_cli_threads_option_writes_the_same_results(tmp_path):
    runner = CliRunner()
    outs = []
    for n in (1, 2):
        out = tmp_path / f"t{n}"
        args = ["run", "examples/quick.toml", "--out", str(out), "--threads", str(n)]
        for s in FABRIC:
            args += ["--set", s]
        result = runner.invoke(app, args)
        assert result.exit_code == 0, result.stderr
        outs.append(out)
    a, b = (pd.read_parquet(o / "flows.parquet") for o in outs)
    pd.testing.assert_frame_equal(a, b)
    sa, sb = (json.loads((o / "summary.json").read_text()) for o in outs)
    assert sa["bins"] == sb["bins"]


def test_default_threads_follow_the_fabric_and_the_machine(tmp_path, monkeypatch):
    from conftest import TINY

    from fctlab import simulation

    reference = fctlab.load_experiment("examples/leafspine144-websearch.toml")
    path = tmp_path / "tiny.toml"
    path.write_text(TINY)  # one switch, 1 us host links: the sides would wait on each other every few events
    testbed = fctlab.load_experiment(path)
    monkeypatch.setattr(simulation.os, "cpu_count", lambda: 4)
    assert simulation.default_threads(reference) == 2
    assert simulation.default_threads(testbed) == 1
    monkeypatch.setattr(simulation.os, "cpu_count", lambda: 1)
    assert simulation.default_threads(reference) == 1
