"""The pre-run check of meaning (fctlab.check, ``fctlab check``): one test per rule, each against a number worked
out here by hand, and the first-day example (Homa, pFabric and PIAS on a k = 8 fat-tree) it was built for."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from fctlab import check as rules
from fctlab.cli import app
from fctlab.config import experiment_from_dict
from fctlab.simulation import simulate, workload_columns

runner = CliRunner()

#: The k = 8 fat-tree's default links (1 Gbps, 25 us each): the longest path crosses 6 links each way. A full
#: data packet (1,500 B: 12 us per link) out and an ACK (40 B: 0.32 us) back: 6 x 37 + 6 x 25.32 = 373.92 us;
#: its BDP at 1 Gbps: 46,740 B = 31.16 packets of 1,500 B.
FT8_RTT_US = 6 * (12 + 25) + 6 * (0.32 + 25)
FT8_BDP_PACKETS = FT8_RTT_US * 1e-6 * 1e9 / 8 / 1500


def ft8(name: str = "pfabric", flows: int = 200, **sections) -> dict:
    d = {"name": "ft8", "seed": 1, "topology": {"kind": "fat_tree", "k": 8}, "scheme": {"name": name},
         "workload": {"pattern": "all_to_all", "cdf": "datamining", "load": 0.7, "flows": flows}}
    for key, value in sections.items():
        d.setdefault(key, {}).update(value)
    return d


def findings(data: dict, tmp_path: Path | None = None) -> dict[str, str]:
    exp = experiment_from_dict(data, base_dir=tmp_path)
    c = rules.check(exp, workload_columns(exp))
    out: dict[str, str] = {}
    for f in c.findings:
        out[f.key] = out.get(f.key, "") + f.message
    return out


def test_fabric_yardsticks_by_hand():
    exp = experiment_from_dict(ft8())
    c = rules.check_config(exp)
    assert c.base_rtt_ns == pytest.approx(FT8_RTT_US * 1000)
    assert c.hops == 6
    assert c.bdp_packets == pytest.approx(FT8_BDP_PACKETS)


def test_first_day_example_is_meaningful_with_the_scaled_pfabric_and_warned_with_the_ns2_values():
    """Homa vs pFabric vs PIAS on the k = 8 fat-tree, data mining at 0.7: pFabric's native preset now scales
    (RTO 3 RTTs, window 1 BDP, cap 1.25 BDP, queue 2 BDP) and nothing is warned about; the ns-2 scripts' absolute
    values (RTO 45 us, queue 36 KB) are, naming the key and the number; PIAS's RFC 6298 floor of 200 us is below
    the 374 us RTT."""
    exp = experiment_from_dict(ft8())
    t, s = exp.engine["transport"], exp.engine["switch"]
    assert t["rto_min_us"] == pytest.approx(3 * FT8_RTT_US)
    assert t["init_cwnd_packets"] == round(FT8_BDP_PACKETS) == 31
    assert t["max_cwnd_packets"] == round(1.25 * FT8_BDP_PACKETS) == 39
    assert s["buffer_bytes"] == 1500 * int(np.ceil(2 * FT8_BDP_PACKETS))
    assert findings(ft8()) == {}
    old = findings(ft8(scheme={"preset": "pfabric_ns2"}))
    assert "fixed RTO is 45 us" in old["transport.rto_min_us"] and "pfabric_ns2" in old["transport.rto_min_us"]
    assert "36,000 B" in old["switch.buffer_bytes"]
    pias = findings(ft8("pias"))
    assert "200 us" in pias["transport.rto_min_us"] and "373.9 us" in pias["transport.rto_min_us"]
    assert findings(ft8("homa")) == {}


def test_rto_floor_below_the_rtt():
    assert "transport.rto_min_us" in findings(ft8("dctcp", transport={"rto_min_us": 370}))
    # (380 us is above the base RTT; it is still below a round trip behind two queues at the ECN threshold, 780 us
    # each at 1 Gbps: test_rto_floor_below_a_round_trip_behind_standing_queues)
    assert "below the longest base RTT" not in findings(ft8("dctcp", transport={"rto_min_us": 380}))["transport.rto_min_us"]
    assert "transport.rto_min_us" not in findings(ft8("dctcp", transport={"rto_min_us": 2000}))
    f = findings(ft8("dctcp", transport={"rto_min_us": 1000, "rto_init_us": 300}))
    assert "transport.rto_init_us" in f


def test_fixed_rto_below_two_rtts():
    two = 2 * FT8_RTT_US
    assert "transport.rto_min_us" in findings(ft8(transport={"rto_min_us": two - 1}))
    assert "transport.rto_min_us" not in findings(ft8(transport={"rto_min_us": two + 1}))


def test_window_below_a_quarter_of_the_bdp():
    quarter = FT8_BDP_PACKETS / 4  # 7.79
    f = findings(ft8("tcp", transport={"init_cwnd_packets": 7, "rto_min_us": 10_000}))
    assert "transport.init_cwnd_packets" in f and "31.2 packets" in f["transport.init_cwnd_packets"]
    assert 7 < quarter < 8
    assert findings(ft8("tcp", transport={"init_cwnd_packets": 8, "rto_min_us": 10_000})) == {}
    f = findings(ft8("tcp", transport={"max_cwnd_packets": 7, "rto_min_us": 10_000}))
    assert "transport.max_cwnd_packets" in f


def test_ecn_threshold_above_the_buffer_and_buffer_below_the_bdp():
    f = findings(ft8("dctcp", transport={"rto_min_us": 10_000}, switch={"ecn_threshold_bytes": 400_000}))
    assert list(f) == ["switch.ecn_threshold_bytes"] and "360,000 B" in f["switch.ecn_threshold_bytes"]
    f = findings(ft8("dctcp", transport={"rto_min_us": 10_000}, switch={"buffer_bytes": 46_500, "ecn_threshold_bytes": 20_000}))
    assert list(f) == ["switch.buffer_bytes"] and "46,740 B" in f["switch.buffer_bytes"]
    assert findings(ft8("dctcp", transport={"rto_min_us": 10_000}, switch={"buffer_bytes": 47_000, "ecn_threshold_bytes": 20_000})) == {}


TINY = {"name": "tiny", "seed": 7, "topology": {"kind": "single_switch", "hosts": 4},
        "workload": {"cdf": "websearch", "load": 0.5, "flows": 20}}


def tiny(**sections) -> dict:
    d = json.loads(json.dumps(TINY))
    for key, value in sections.items():
        d.setdefault(key, {}).update(value)
    return d


def test_flows_that_start_after_the_time_limit():
    exp = experiment_from_dict(tiny())
    start = np.sort(workload_columns(exp)["start_ps"].astype(np.float64))
    # a limit just past the 8th arrival: 12 of 20 start after it
    limit_ms = (start[7] + 1) / 1e9
    f = findings(tiny(run={"time_limit_ms": limit_ms}))
    assert "12 of 20 flows" in f["run.time_limit_ms"]
    limit_ms = (start[11] + 1) / 1e9  # 8 of 20 late: not most
    assert "of 20 flows" not in findings(tiny(run={"time_limit_ms": limit_ms})).get("run.time_limit_ms", "")


def test_last_arrivals_leave_the_largest_flow_no_time():
    exp = experiment_from_dict(tiny())
    fl = workload_columns(exp)
    last_ms = float(fl["start_ps"].max()) / 1e9
    # the largest flow at half of a 25 Gbps link
    need_ms = float(fl["size_bytes"].max()) * 8 / (25e9 * 0.5) * 1e3
    f = findings(tiny(run={"time_limit_ms": last_ms + 0.9 * need_ms}))
    assert "largest" in f["run.time_limit_ms"]
    assert "run.time_limit_ms" not in findings(tiny(run={"time_limit_ms": last_ms + 1.1 * need_ms}))


def test_keys_without_effect(tmp_path):
    f = findings(tiny(scheme={"name": "pias", "pias_count": "per_connection", "thresholds_bytes": [1, 2, 3, 4, 5, 6, 7]}))
    assert "scheme.pias_count" in f
    f = findings(tiny(scheme={"name": "pias", "pias_count": "per_connection", "thresholds_bytes": [1, 2, 3, 4, 5, 6, 7]},
                      transport={"connections": "per_host_pair"}))
    assert "scheme.pias_count" not in f
    f = findings(tiny(scheme={"name": "pias", "thresholds_bytes": [10_000, 100_000, 1_000_000]}))
    assert "3 thresholds for 8 queues" in f["scheme.thresholds_bytes"]
    assert "scheme.thresholds_bytes" not in findings(tiny(scheme={"name": "pias", "thresholds_bytes": [1, 2, 3]},
                                                          switch={"queues": 4}))
    f = findings(tiny(scheme={"name": "homa", "homa_unscheduled_levels": 2, "homa_unscheduled_cutoffs_bytes": [5000]}))
    assert "scheme.homa_unscheduled_levels" in f
    assert findings(tiny(scheme={"name": "homa", "homa_unscheduled_levels": 2})) == {}
    f = findings(tiny(scheme={"name": "dctcp", "priority": 8}))
    assert "scheme.priority" in f
    assert "scheme.priority" not in findings(tiny(scheme={"name": "dctcp", "priority": 7}))
    f = findings(tiny(scheme={"name": "qjump"}, switch={"queues": 2}))
    assert "8 levels" in f["switch.queues"]
    assert "switch.queues" not in findings(tiny(scheme={"name": "qjump"}))


def _trace(tmp_path: Path, header: str, rows: list[str]) -> str:
    p = tmp_path / "t.csv"
    p.write_text(header + "\n" + "\n".join(rows) + "\n")
    return str(p)


def test_trace_columns_without_effect(tmp_path):
    t = _trace(tmp_path, "src,dst,size_bytes,start_ns,conn", ["0,2,1000,0,5", "0,2,2000,100,5"])
    base = {"name": "t", "seed": 1, "topology": {"kind": "single_switch", "hosts": 4}, "workload": {"trace": t}}
    assert "transport.connections" in findings(base, tmp_path)
    with_trace = {**base, "transport": {"connections": "trace"}}
    assert "transport.connections" not in findings(with_trace, tmp_path)
    t = _trace(tmp_path, "src,dst,size_bytes,start_ns,qclimb", ["0,2,1000,0,1", "1,3,2000,100,0"])
    base["workload"] = {"trace": t}
    assert "qclimb column" in findings(base, tmp_path)["scheme.name"]


def test_load_per_tier_on_an_oversubscribed_fabric():
    """All-to-all on a 2:1 leaf-spine (4 leaves of 8 hosts at 10 Gbps, 1 spine at 40 Gbps): a flow leaves its
    rack with probability 24/31, so the leaves' uplinks carry 8 x 10 x 24/31 / 40 = 1.55 x the host load."""
    topo = {"kind": "leaf_spine", "leaves": 4, "hosts_per_leaf": 8, "spines": 1, "host_link_gbps": 10,
            "core_link_gbps": 40}

    def data(load: float) -> dict:
        return {"name": "ls", "seed": 3, "topology": topo, "scheme": {"name": "dctcp"},
                "transport": {"rto_min_us": 1000},
                "workload": {"pattern": "all_to_all", "cdf": "websearch", "load": load, "flows": 4000}}

    exp = experiment_from_dict(data(0.8))
    tiers = {name: (mean, mx) for name, _, mean, mx in rules.tier_loads(exp, workload_columns(exp))[0]}
    ratio = tiers["leaf_up"][0] / tiers["host_nic"][0]
    assert ratio == pytest.approx(8 * 10 * 24 / 31 / 40, rel=0.1)
    assert "leaf_up links" in findings(data(0.8))["workload.load"]
    assert "workload.load" not in findings(data(0.4))


def test_estimate_counts_packets_times_their_paths_ports():
    """On the k = 8 fat-tree a flow crosses 2 ports under its edge switch, 4 within its pod, 6 across pods
    (hosts 4 per edge, 16 per pod)."""
    exp = experiment_from_dict(ft8(flows=50))
    fl = workload_columns(exp)
    c = rules.check(exp, fl)
    ports = [2 if s // 4 == d // 4 else 4 if s // 16 == d // 16 else 6 for s, d in zip(fl["src"], fl["dst"])]
    packets = [int(np.ceil(max(int(s), 1) / 1460)) for s in fl["size_bytes"]]
    assert c.cost.packet_hops == sum(p * n for p, n in zip(ports, packets))
    assert c.cost.events == 2 * c.cost.packet_hops
    assert c.cost.seconds == pytest.approx(rules.FIXED_SECONDS + 50 * rules.SECONDS_PER_FLOW
                                           + c.cost.events / rules.EVENTS_PER_SECOND)
    assert "MiB" in c.cost.text()


def _write(tmp_path: Path, data: dict) -> Path:
    """A TOML file of a two-level experiment dict (tables of scalars)."""
    lines = [f"{k} = {json.dumps(v)}" for k, v in data.items() if not isinstance(v, dict)]
    for section, table in data.items():
        if isinstance(table, dict):
            lines.append(f"[{section}]")
            lines += [f"{k} = {json.dumps(v)}" for k, v in table.items()]
    p = tmp_path / "exp.toml"
    p.write_text("\n".join(lines) + "\n")
    return p


def test_cli_check_strict_and_warnings_in_the_summary_and_report(tmp_path):
    data = tiny(transport={"rto_min_us": 1.0})
    p = _write(tmp_path, data)
    r = runner.invoke(app, ["check", str(p)])
    assert r.exit_code == 0, r.output
    assert "warning: transport.rto_min_us" in r.output and "longest base RTT" in r.output
    r = runner.invoke(app, ["check", str(p), "--strict"])
    assert r.exit_code == 2
    out = tmp_path / "out"
    r = runner.invoke(app, ["run", str(p), "--out", str(out), "--strict"])
    assert r.exit_code == 2 and not out.exists()
    r = runner.invoke(app, ["run", str(p), "--out", str(out)])
    assert r.exit_code == 0, r.output
    summary = json.loads((out / "summary.json").read_text())
    assert any(w.startswith("transport.rto_min_us:") for w in summary["warnings"])
    from fctlab.report import write_report

    html = write_report(out).html.read_text()
    assert "transport.rto_min_us" in html and "Pre-run warnings" in html
    clean = _write(tmp_path, tiny(transport={"rto_min_us": 1000.0}))
    assert runner.invoke(app, ["check", str(clean), "--strict"]).exit_code == 0
    assert simulate(experiment_from_dict(tiny(transport={"rto_min_us": 1000.0}))).summary["warnings"] == []


def test_sweep_prints_each_warning_once_and_strict_refuses(tmp_path):
    text = ('name = "sw"\nseed = 7\n[topology]\nkind = "single_switch"\nhosts = 4\n[transport]\nrto_min_us = 1.0\n'
            '[workload]\ncdf = "websearch"\nload = 0.5\nflows = 20\n[sweep]\n"workload.load" = [0.3, 0.5]\n')
    p = tmp_path / "sw.toml"
    p.write_text(text)
    out = tmp_path / "out"
    r = runner.invoke(app, ["sweep", str(p), "--out", str(out), "--strict", "--workers", "1"])
    assert r.exit_code == 2 and not out.exists()
    lines = [line for line in r.output.splitlines() if line.startswith("warning: transport.rto_min_us")]
    assert len(lines) == 1 and "and 1 more" in lines[0], r.output
    r = runner.invoke(app, ["check", str(p)])
    assert r.exit_code == 0 and "2 runs, 1 warning(s)" in r.output, r.output
    assert runner.invoke(app, ["check", str(p), "--strict"]).exit_code == 2
    assert runner.invoke(app, ["check", str(p), "--set", "transport.rto_min_us=1000", "--strict"]).exit_code == 0


def test_rto_floor_below_a_round_trip_behind_standing_queues():
    """The 144-host leaf-spine (longest base RTT 84.68 us at 10 Gbps, BDP 105,850 B), DCTCP with ECN at 97,500 B:
    a round trip behind the threshold at two congested ports takes 84.68 + 2 x 78 = 240.68 us. The engine's
    200 us RTO floor is above the base RTT (no base-RTT warning) but below that, and is warned about; 250 us is
    not. Without ECN the queue is one full port buffer: 360,000 B = 288 us, so 250 us is warned about too."""
    def leafspine(rto: float, ecn: str = "port") -> dict:
        return {"name": "ls", "seed": 1, "topology": {"kind": "leaf_spine"},
                "switch": {"buffer": "port", "buffer_bytes": 360_000, "ecn": ecn, "ecn_threshold_bytes": 97_500},
                "transport": {"rto_min_us": rto, "init_cwnd_packets": 70}, "scheme": {"name": "dctcp"},
                "workload": {"pattern": "all_to_all", "cdf": "websearch", "load": 0.6, "flows": 200}}

    exp = experiment_from_dict(leafspine(200.0))
    c = rules.check_config(exp)
    rtt_us = c.base_rtt_ns / 1000
    assert rtt_us == pytest.approx(84.68, abs=0.01)
    queued, why = rules._queued_rtt_us(exp.engine["switch"], rtt_us, c.bdp_bytes)
    assert queued == pytest.approx(rtt_us + 2 * 97_500 * 8 / 10e3)
    assert "97,500 B" in why
    assert "about 241 us" in findings(leafspine(200.0))["transport.rto_min_us"]
    assert "transport.rto_min_us" not in findings(leafspine(250.0))
    assert "a full port buffer, 360,000 B = 288 us" in findings(leafspine(250.0, ecn="off"))["transport.rto_min_us"]
