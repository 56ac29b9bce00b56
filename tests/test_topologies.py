"""The bcube and jellyfish topologies from the command line: tiny experiments run at the packet and the flow
level, the rack of each host for the staggered pattern, and bad keys refused with the key named and nothing
written."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from fctlab.cli import app
from fctlab.fabric import host_pods
from fctlab.simulation import host_racks

runner = CliRunner()

BCUBE = '[topology]\nkind = "bcube"\nn = 3\nk = 1\n'
JELLYFISH = '[topology]\nkind = "jellyfish"\nswitches = 6\nports = 5\nnetwork_ports = 3\n'
WORKLOAD = '[workload]\npattern = "permutation"\ncdf = "websearch"\nload = 0.5\nflows = 24\n'


def run(tmp_path: Path, text: str, *extra: str):
    path = tmp_path / "exp.toml"
    path.write_text("seed = 3\n" + text)
    out = tmp_path / "out"
    return runner.invoke(app, ["run", str(path), "--out", str(out), *extra]), out


@pytest.mark.parametrize("topology", [BCUBE, JELLYFISH], ids=["bcube", "jellyfish"])
@pytest.mark.parametrize("level", ["packet", "flow"])
@pytest.mark.parametrize("scheme", ["dctcp", "pdq"])
def test_a_tiny_experiment_runs_at_both_levels(tmp_path, topology, level, scheme):
    text = topology + WORKLOAD + f'[scheme]\nname = "{scheme}"\n[run]\nlevel = "{level}"\n'
    result, out = run(tmp_path, text)
    assert result.exit_code == 0, result.stderr
    table = pq.read_table(out / "flows.parquet").to_pandas()
    assert len(table) == 24 and table["finished"].all()
    assert (table["fct_ns"] >= table["ideal_fct_ns"]).all()
    config = json.loads((out / "config.json").read_text())
    kind = "bcube" if topology is BCUBE else "jellyfish"
    assert config["topology"]["kind"] == kind


def test_racks_for_the_staggered_pattern(tmp_path):
    # a BCube server's rack is its level-0 switch: servers that differ in the lowest digit only
    bcube = {"topology": {"kind": "bcube", "n": 3, "k": 1, "host_link_gbps": 1.0, "host_link_delay_ns": 1e4}}
    assert host_racks(bcube).tolist() == [0, 0, 0, 1, 1, 1, 2, 2, 2]
    jelly = {"topology": {"kind": "jellyfish", "switches": 6, "ports": 5, "network_ports": 3}}
    assert host_racks(jelly).tolist() == [0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5]
    text = BCUBE + WORKLOAD.replace("permutation", "staggered") + "staggered_p = 0.5\n"
    result, out = run(tmp_path, text)
    assert result.exit_code == 0, result.stderr
    assert pq.read_table(out / "flows.parquet").to_pandas()["finished"].all()


def test_inter_pod_pairs_on_a_fat_tree(tmp_path):
    # k = 4 with 2 hosts per edge switch: 16 hosts, pods of 4; an experiment with pairs = "inter_pod" keeps every
    # flow between pods
    fat = {"topology": {"kind": "fat_tree", "k": 4, "hosts_per_edge": 2}}
    assert host_pods(fat).tolist() == [0] * 4 + [1] * 4 + [2] * 4 + [3] * 4
    assert host_racks(fat).tolist() == [h // 2 for h in range(16)]
    text = ('[topology]\nkind = "fat_tree"\nk = 4\nhosts_per_edge = 2\n[workload]\ncdf = "websearch"\n'
            'load = 0.3\nflows = 200\npairs = "inter_pod"\n[scheme]\nname = "dctcp"\n')
    result, out = run(tmp_path, text)
    assert result.exit_code == 0, result.stderr
    table = pq.read_table(out / "flows.parquet").to_pandas()
    assert len(table) == 200 and (table["src"] // 4 != table["dst"] // 4).all()
    bad = text.replace('cdf = "websearch"\nload = 0.3\n', 'pattern = "permutation"\ncdf = "websearch"\n')
    (tmp_path / "bad").mkdir()
    result, out2 = run(tmp_path / "bad", bad)
    assert result.exit_code == 2 and "workload.pairs" in result.stderr, result.stderr
    assert not out2.exists()


BAD = [
    ("bcube n", BCUBE.replace("n = 3", "n = 1"), "topology.n"),
    ("bcube too large", BCUBE.replace("n = 3", "n = 100"), "topology.n"),
    ("bcube k", BCUBE.replace("k = 1", "k = 40"), "topology.k"),
    ("bcube unknown key", BCUBE + "switches = 4\n", "topology.switches"),
    ("bcube core link", BCUBE + "core_link_gbps = 10\n", "topology.core_link_gbps"),
    ("jellyfish network ports", JELLYFISH.replace("network_ports = 3", "network_ports = 5"), "topology.network_ports"),
    ("jellyfish switches", JELLYFISH.replace("switches = 6", "switches = 3"), "topology.switches"),
    ("jellyfish disconnected", JELLYFISH.replace("network_ports = 3", "network_ports = 1"), "topology.network_ports"),
    ("jellyfish unknown key", JELLYFISH + "k = 4\n", "topology.k"),
    ("jellyfish seed", JELLYFISH + "graph_seed = -1\n", "topology.graph_seed"),
]


@pytest.mark.parametrize(("text", "key"), [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_bad_keys_name_the_key_and_write_nothing(tmp_path, text, key):
    result, out = run(tmp_path, text + WORKLOAD)
    assert result.exit_code == 2, (result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert key in lines[0], lines[0]
    assert not out.exists()
