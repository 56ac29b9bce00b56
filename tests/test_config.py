"""The experiment model: parsing, engine defaults, shorthands, overrides, paths, and one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fctlab import _core
from fctlab.config import (
    ConfigError,
    experiment_from_dict,
    load_experiment,
    parse_override,
)

REPO = Path(__file__).resolve().parents[1]

from conftest import TINY  # noqa: E402  (the shared tiny experiment)


def write(tmp_path: Path, text: str, name: str = "exp.toml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def error_of(tmp_path: Path, text: str, overrides=()) -> ConfigError:
    with pytest.raises(ConfigError) as info:
        load_experiment(write(tmp_path, text), overrides=overrides)
    message = str(info.value)
    assert "\n" not in message, "a config error is one line"
    return info.value


def test_tiny_experiment_gets_engine_defaults(tmp_path):
    exp = load_experiment(write(tmp_path, TINY))
    defaults = json.loads(_core.defaults())
    assert exp.name == "exp"
    assert exp.seed == 7 and exp.engine["seed"] == 7
    assert exp.hosts == 4
    assert exp.engine["topology"]["kind"] == "single_switch"
    # Sections the file does not give come from the engine, not from Python constants.
    for section in ("switch", "host", "routing", "transport", "scheme", "run"):
        assert exp.engine[section] == defaults[section]
    assert exp.host_link_bps == exp.engine["topology"]["host_link_gbps"] * 1e9
    assert exp.workload.pattern == "all_to_all"
    assert exp.workload.warmup_flows == 0
    assert exp.scheme == defaults["scheme"]["name"]
    json.dumps(exp.to_dict())  # the resolved experiment is JSON


def test_missing_seed_uses_the_engine_default(tmp_path):
    exp = load_experiment(write(tmp_path, TINY.replace("seed = 7\n", "")))
    assert exp.seed == json.loads(_core.defaults())["seed"]


def test_topology_kind_defaults_to_the_engines(tmp_path):
    exp = load_experiment(write(tmp_path, TINY.replace('kind = "single_switch"\nhosts = 4\n', "spines = 2\n")))
    default_kind = json.loads(_core.defaults())["topology"]["kind"]
    assert exp.engine["topology"]["kind"] == default_kind
    assert exp.engine["topology"]["spines"] == 2


def test_link_shorthands_fill_host_and_core_keys(tmp_path):
    text = TINY.replace(
        'kind = "single_switch"\nhosts = 4\n',
        'kind = "leaf_spine"\nleaves = 2\nhosts_per_leaf = 2\nspines = 1\nlink_gbps = 25\nlink_delay_ns = 500\n'
        "core_link_gbps = 100\n",
    )
    topo = load_experiment(write(tmp_path, text)).engine["topology"]
    assert topo["host_link_gbps"] == 25.0
    assert topo["core_link_gbps"] == 100.0  # an explicit key wins over the shorthand
    assert topo["host_link_delay_ns"] == 500.0 and topo["core_link_delay_ns"] == 500.0
    assert "link_gbps" not in topo


def test_link_shorthand_on_single_switch_sets_host_keys_only(tmp_path):
    exp = load_experiment(write(tmp_path, TINY.replace("hosts = 4\n", "hosts = 4\nlink_gbps = 40\n")))
    assert exp.engine["topology"]["host_link_gbps"] == 40.0
    assert "core_link_gbps" not in exp.engine["topology"]


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("a=3", 3),
        ("a=0.25", 0.25),
        ("a=true", True),
        ('a="x y"', "x y"),
        ("a=fat_tree", "fat_tree"),
        ("a=[1, 2]", [1, 2]),
        ("a=data/my.cdf", "data/my.cdf"),
        ("a=", ""),
    ],
)
def test_override_values_are_toml_or_bare_strings(text, value):
    assert parse_override(text) == (["a"], value)


@pytest.mark.parametrize("item", ["workload.load", "=3", "a..b=1", "a b=1"])
def test_malformed_overrides_are_errors(item):
    with pytest.raises(ConfigError) as info:
        parse_override(item)
    assert str(info.value).startswith("--set ")


def test_overrides_change_the_experiment(tmp_path):
    exp = load_experiment(
        write(tmp_path, TINY),
        overrides=["workload.load=0.3", "scheme.name=tcp", "switch.queues=2", "name=renamed"],
    )
    assert exp.workload.load == 0.3
    assert exp.scheme == "tcp"
    assert exp.engine["switch"]["queues"] == 2
    assert exp.name == "renamed"
    assert exp.overrides == ("workload.load=0.3", "scheme.name=tcp", "switch.queues=2", "name=renamed")
    variant = exp.with_overrides(["scheme.name=dctcp"])
    assert variant.scheme == "dctcp" and variant.workload.load == 0.3
    assert variant.overrides[-1] == "scheme.name=dctcp"


def test_override_can_switch_topology_kind(tmp_path):
    exp = load_experiment(write(tmp_path, TINY.replace("hosts = 4\n", "")), overrides=["topology.kind=dumbbell"])
    assert exp.engine["topology"]["kind"] == "dumbbell"


@pytest.mark.parametrize(
    ("text", "overrides", "key"),
    [
        ("colour = 1\n" + TINY, (), "colour"),
        (TINY.replace("hosts = 4", "hosts = 4\nhostz = 1"), (), "topology.hostz"),
        (TINY + "[switch]\nqueus = 3\n", (), "switch.queus"),
        (TINY + "[host]\nnic = 1\n", (), "host.nic"),
        (TINY + "[routing]\nmodus = 'ecmp'\n", (), "routing.modus"),
        (TINY + "[transport]\nmss = 1\n", (), "transport.mss"),
        (TINY + "[scheme]\nnme = 'tcp'\n", (), "scheme.nme"),
        (TINY + "[run]\nlimit = 1\n", (), "run.limit"),
        (TINY.replace("flows = 20", "flows = 20\nflow = 3"), (), "workload.flow"),
        (TINY + "[output]\ndirectory = 'x'\n", (), "output.directory"),
        (TINY.replace("load = 0.5", "load = 1.5"), (), "workload.load"),
        (TINY.replace("load = 0.5", "load = 0"), (), "workload.load"),
        (TINY.replace("load = 0.5", 'load = "high"'), (), "workload.load"),
        (TINY.replace("flows = 20", "flows = 0"), (), "workload.flows"),
        (TINY.replace("flows = 20", "flows = 2.5"), (), "workload.flows"),
        (TINY.replace("flows = 20", "flows = 20\nwarmup_flows = 20"), (), "workload.warmup_flows"),
        (TINY.replace("flows = 20", "flows = 20\nwarmup_flows=9\ncooldown_flows=11"), (), "workload.cooldown_flows"),
        (TINY.replace("flows = 20", "flows = 20\ncooldown_flows = -1"), (), "workload.cooldown_flows"),
        (TINY + "[output]\nbins = 'kib'\n", (), "output.bins"),
        (TINY.replace("hosts = 4", "hosts = 1"), (), "topology.hosts"),
        (TINY.replace('kind = "single_switch"', 'kind = "torus"'), (), "topology.kind"),
        (TINY + "[switch]\nqueues = 0\n", (), "switch.queues"),
        (TINY + "[switch]\nqueues = 'many'\n", (), "switch.queues"),
        (TINY + "[scheme]\nname = 'pfabricc'\n", (), "scheme.name"),
        (TINY.replace("seed = 7", "seed = -1"), (), "seed"),
        (TINY.replace("seed = 7", 'seed = "x"'), (), "seed"),
        ("switch = 3\n" + TINY, (), "switch"),
        (TINY.replace('cdf = "websearch"', 'cdf = "nosuch"'), (), "workload.cdf"),
        (TINY.replace('cdf = "websearch"', 'cdf = "missing/x.cdf"'), (), "workload.cdf"),
        (TINY.replace("flows = 20", "flows = 20\nfan_in = 2"), (), "workload.fan_in"),
        (TINY.replace("flows = 20", "flows = 20\nsenders = [9]"), (), "workload.senders"),
        (TINY.replace("flows = 20", "flows = 20\npattern = 'ring'"), (), "workload.pattern"),
        (TINY.replace('cdf = "websearch"\n', ""), (), "workload.cdf"),
        (TINY, ("workload.lod=0.3",), "workload.lod"),
        (TINY, ("switch.queues=0",), "switch.queues"),
        # switching the kind drops the file's single_switch keys, but not one given alongside
        (TINY, ("topology.kind=fat_tree", "topology.hosts=4"), "topology.hosts"),
        (TINY, ("workload.load.x=1",), "workload.load"),
    ],
)
def test_errors_name_the_key(tmp_path, text, overrides, key):
    err = error_of(tmp_path, text, overrides)
    assert str(err).startswith(f"{key}:") or str(err).startswith(f"--set {key}"), str(err)


@pytest.mark.parametrize(
    ("extra", "key", "words"),
    [
        ("[switch]\npfc = true\npfc_resume_packets = 215\n", "switch.pfc_resume_packets", "below switch.pfc_pause"),
        ("[switch]\npfc = true\nbuffer_bytes = 150000\n", "switch.pfc_pause_packets", "full packets"),
        ("[switch]\nqueues = 2\npfc_queues = [2]\n", "switch.pfc_queues", "queue 2 does not exist"),
        ("[switch]\npfc = true\n[scheme]\nname = 'pfabric'\n", "switch.pfc", "rank queue"),
        ("[switch]\npfc = 'yes'\n", "switch.pfc", ""),
    ],
)
def test_pfc_keys_are_checked_by_the_engine(tmp_path, extra, key, words):
    err = error_of(tmp_path, TINY + extra)
    assert err.key == key and words in str(err), str(err)


def test_pfc_counters_reach_the_summary(tmp_path):
    from fctlab import simulate

    off = simulate(load_experiment(write(tmp_path, TINY)))
    assert off.summary["pfc_pause_frames"] == 0 and off.summary["pfc_resume_frames"] == 0
    assert set(off.summary["pfc_paused_us_per_tier"]) == set(off.summary["drops_per_tier"])
    exp = load_experiment(write(tmp_path, TINY + "[switch]\npfc = true\nqueues = 2\n"))
    assert exp.engine["switch"]["pfc"] is True and exp.engine["switch"]["pfc_queues"] is None
    on = simulate(exp)
    assert on.summary["pfc_pause_frames"] == on.summary["pfc_resume_frames"]


def test_load_error_message_is_exact(tmp_path):
    err = error_of(tmp_path, TINY.replace("load = 0.5", "load = 1.5"))
    assert str(err) == "workload.load: must be > 0 and <= 1 (got 1.5)"
    assert err.key == "workload.load"


def test_unknown_key_lists_allowed_keys(tmp_path):
    assert "expected one of" in str(error_of(tmp_path, TINY + "[switch]\nqueus = 3\n"))
    assert "cdf" in str(error_of(tmp_path, TINY.replace("flows = 20", "flows = 20\nflow = 3")))


def test_missing_file_and_syntax_error_name_the_file(tmp_path):
    with pytest.raises(ConfigError, match="not found"):
        load_experiment(tmp_path / "nope.toml")
    err = error_of(tmp_path, TINY + "[switch\n")
    assert "exp.toml" in str(err) and "TOML syntax error" in str(err)


def test_missing_workload_section(tmp_path):
    err = error_of(tmp_path, "seed = 1\n")
    assert err.key == "workload"


def test_relative_cdf_path_resolves_against_the_experiment(tmp_path, monkeypatch):
    (tmp_path / "exps" / "cdfs").mkdir(parents=True)
    (tmp_path / "exps" / "cdfs" / "mine.cdf").write_text("# my flows\n1000 0\n2000 0.5\n4000 1\n")
    path = write(tmp_path / "exps", TINY.replace('"websearch"', '"cdfs/mine.cdf"'))
    monkeypatch.chdir(tmp_path)  # the current directory does not matter
    exp = load_experiment(path)
    assert exp.workload.cdf == str(tmp_path / "exps" / "cdfs" / "mine.cdf")


def test_bad_cdf_file_is_a_config_error(tmp_path):
    (tmp_path / "bad.cdf").write_text("1000 0.5\n500 1\n")
    err = error_of(tmp_path, TINY.replace('"websearch"', '"bad.cdf"'))
    assert err.key == "workload.cdf"


def test_trace_workload(tmp_path):
    (tmp_path / "t.csv").write_text("src,dst,size_bytes,start_ns,priority\n0,1,1000,0,1\n2,3,5000,10.5,0\n")
    exp = load_experiment(write(tmp_path, TINY.split("[workload]")[0] + "[workload]\ntrace = 't.csv'\n"))
    assert exp.workload.trace == str(tmp_path / "t.csv")
    assert exp.workload.pattern is None


@pytest.mark.parametrize(
    ("workload", "key"),
    [
        ("trace = 'nope.csv'\n", "workload.trace"),
        ("trace = 't.csv'\ncdf = 'websearch'\n", "workload.cdf"),
        ("trace = 't.csv'\npattern = 'incast'\n", "workload.pattern"),
        ("trace = 'far.csv'\n", "workload.trace"),  # host 9 is not in a 4-host topology
        ("trace = 'bad.csv'\n", "workload.trace"),  # unknown column
        ("trace = 't.csv'\nwarmup_flows = 2\n", "workload.warmup_flows"),
        ("trace = 't.csv'\ncooldown_flows = 2\n", "workload.cooldown_flows"),
    ],
)
def test_trace_errors(tmp_path, workload, key):
    (tmp_path / "t.csv").write_text("src,dst,size_bytes,start_ns\n0,1,1000,0\n2,3,5000,10\n")
    (tmp_path / "far.csv").write_text("src,dst,size_bytes,start_ns\n0,9,1000,0\n")
    (tmp_path / "bad.csv").write_text("src,dst,size_bytes,start_ns,colour\n0,1,1000,0,red\n")
    err = error_of(tmp_path, TINY.split("[workload]")[0] + "[workload]\n" + workload)
    assert err.key == key, str(err)


def test_incast_workload(tmp_path):
    base = TINY.split("[workload]")[0] + "[workload]\npattern = 'incast'\nfan_in = 3\nresponse_bytes = 20000\n"
    exp = load_experiment(write(tmp_path, base + "queries = 5\nquery_rate_hz = 1000\n"))
    assert exp.workload.fan_in == 3
    assert error_of(tmp_path, base + "queries = 5\n").key == "workload.query_rate_hz"
    assert error_of(tmp_path, base + "queries = 5\nload = 0.5\nquery_rate_hz = 10\n").key == "workload.query_rate_hz"
    assert error_of(tmp_path, base.replace("fan_in = 3", "fan_in = 4") + "queries = 5\nload = 0.5\n").key == (
        "workload.fan_in"
    )
    assert error_of(tmp_path, base + "queries = 5\nload = 0.5\ncdf = 'websearch'\n").key == "workload.cdf"
    assert error_of(tmp_path, base + "load = 0.5\n").key == "workload.queries"


def test_experiment_from_dict():
    exp = experiment_from_dict(
        {"seed": 3, "topology": {"kind": "single_switch", "hosts": 4},
         "workload": {"cdf": "websearch", "load": 0.4, "flows": 5}}
    )
    assert exp.seed == 3 and exp.name == "experiment"
    with pytest.raises(ConfigError, match=r"^workload\.flows:"):
        experiment_from_dict({"workload": {"cdf": "websearch", "load": 0.4, "flows": -1}})


def test_output_dir_resolves_against_the_experiment(tmp_path):
    exp = load_experiment(write(tmp_path, TINY + "[output]\ndir = 'res'\ncompression = 'snappy'\n"))
    assert exp.output.dir == str(tmp_path / "res")
    assert exp.output.compression == "snappy"


def test_examples_load():
    from fctlab.sweep import load_sweep

    for path in sorted((REPO / "examples").glob("*.toml")):
        if "[sweep]" in path.read_text():
            assert len(load_sweep(path).points) >= 2, path
            continue
        exp = load_experiment(path)
        assert exp.workload.flows and exp.workload.flows >= 1, path


def test_config_error_survives_pickling():
    import pickle

    err = pickle.loads(pickle.dumps(ConfigError("workload.load", "must be > 0 and <= 1 (got 2)")))
    assert err.key == "workload.load" and str(err) == "workload.load: must be > 0 and <= 1 (got 2)"


# ---------------------------------------------------------------------------------------------------------------
# PIAS and QCLIMB without thresholds: derived from the workload's CDF and load


def test_pias_without_thresholds_derives_them_from_the_workload(tmp_path):
    from fctlab import simulate, thresholds

    exp = load_experiment(write(tmp_path, TINY + "[scheme]\nname = 'pias'\n"))
    want = list(thresholds.derive("websearch", 0.5, 8).thresholds_bytes)
    assert exp.engine["scheme"]["thresholds_bytes"] == want
    assert exp.derived_thresholds == {"method": "PIAS paper §3", "cdf": "websearch", "load": 0.5, "queues": 8,
                                      "thresholds_bytes": want}
    summary = simulate(exp).summary
    assert summary["thresholds_derived"] is True and summary["derived_thresholds"]["thresholds_bytes"] == want
    from fctlab.analyze import summary_table

    assert f"derived by the PIAS paper's method for websearch at load 0.5, 8 queues: {want[0]:,}, " in (
        summary_table(summary))
    # for the queues the switch has, and again for a variant (here 4 queues)
    four = exp.with_overrides(["switch.queues=4"])
    assert four.engine["scheme"]["thresholds_bytes"] == list(thresholds.derive("websearch", 0.5, 4).thresholds_bytes)
    # qclimb too
    q = load_experiment(write(tmp_path, TINY + "[scheme]\nname = 'qclimb'\n[switch]\nqueues = 2\n"))
    assert q.engine["scheme"]["thresholds_bytes"] == list(thresholds.derive("websearch", 0.5, 2).thresholds_bytes)


def test_given_thresholds_are_kept_and_other_schemes_have_none(tmp_path):
    from fctlab import simulate

    exp = load_experiment(write(tmp_path, TINY + "[scheme]\nname = 'pias'\nthresholds_bytes = [10000, 20000]\n"))
    assert exp.engine["scheme"]["thresholds_bytes"] == [10000, 20000] and exp.derived_thresholds is None
    assert simulate(exp).summary["thresholds_derived"] is False
    dctcp = load_experiment(write(tmp_path, TINY))
    assert dctcp.engine["scheme"]["thresholds_bytes"] == [] and dctcp.derived_thresholds is None
    assert "thresholds_derived" not in simulate(dctcp).summary


def test_thresholds_that_cannot_be_derived_are_asked_for(tmp_path):
    (tmp_path / "t.csv").write_text("src,dst,size_bytes,start_ns\n0,1,1000,0\n2,3,5000,10\n")
    trace = TINY.split("[workload]")[0] + "[workload]\ntrace = 't.csv'\n[scheme]\nname = 'pias'\n"
    err = error_of(tmp_path, trace)  # a trace has no CDF: the engine's error stands
    assert err.key == "scheme.thresholds_bytes" and "needs its queue thresholds" in str(err)
    err = error_of(tmp_path, TINY.replace("load = 0.5", "load = 1.0") + "[scheme]\nname = 'pias'\n")
    assert err.key == "scheme.thresholds_bytes" and "workload.load < 1" in str(err)
    err = error_of(tmp_path, TINY.replace("load = 0.5", "load = 1.5") + "[scheme]\nname = 'pias'\n")
    assert err.key == "workload.load"
