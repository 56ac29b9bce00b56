"""`fctlab tune`: the search finds a known optimum within its budget, resumes without rerunning trials (also
after a trial was interrupted), is deterministic for fixed seeds, refuses bad spaces with one line naming the
key before anything is written, and confirms a flow-level screen at the packet level."""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest
from typer.testing import CliRunner

pytest.importorskip("optuna")

from fctlab.cli import app  # noqa: E402
from fctlab.config import ConfigError  # noqa: E402
from fctlab.tune import Knob, parse_objective, space_from_dict, toml_document, tune  # noqa: E402

EXPERIMENT = """\
name = "tiny"
seed = 1
[topology]
kind = "leaf_spine"
leaves = 2
hosts_per_leaf = 4
spines = 1
host_link_gbps = 10
core_link_gbps = 40
host_link_delay_ns = 20200
core_link_delay_ns = 200
[switch]
queues = 4
buffer_bytes = 360000
ecn_threshold_bytes = 97500
[transport]
init_cwnd_packets = 70
rto_min_us = 2000
[scheme]
name = "pias"
thresholds_bytes = [10000, 100000, 1000000]
[run]
level = "flow"
[workload]
pattern = "all_to_all"
cdf = "websearch"
load = 0.6
flows = 60
warmup_flows = 6
"""

G_SPACE = {"transport": {"dctcp_g": {"kind": "float", "low": 0.01, "high": 1.0}}}


@pytest.fixture
def exp_file(tmp_path):
    p = tmp_path / "exp.toml"
    p.write_text(EXPERIMENT)
    return p


class Bowl:
    """A callable objective with a known minimum at ``transport.dctcp_g`` = 0.3, counting its calls."""

    def __init__(self) -> None:
        self.calls = 0
        self.interrupt_at: int | None = None

    def __call__(self, result) -> float:
        self.calls += 1
        if self.interrupt_at is not None and self.calls == self.interrupt_at:
            raise KeyboardInterrupt
        g = result.experiment.engine["transport"]["dctcp_g"]
        return (g - 0.3) ** 2


def _trials(report):
    return report.trials[["trial", "state", "objective", "transport.dctcp_g"]].reset_index(drop=True)


def test_the_search_finds_a_known_optimum_within_its_budget(exp_file, tmp_path):
    bowl = Bowl()
    report = tune(exp_file, G_SPACE, bowl, 30, study_dir=tmp_path / "s", sampler_seed=1, best_run=False)
    assert bowl.calls == 30
    assert abs(report.best["transport.dctcp_g"] - 0.3) < 0.03
    # best.toml is the experiment with the best value, ready for `fctlab run`
    import tomllib

    best = tomllib.loads((tmp_path / "s" / "best.toml").read_text())
    assert best["transport"]["dctcp_g"] == report.best["transport.dctcp_g"]
    assert best["scheme"]["thresholds_bytes"] == [10000, 100000, 1000000]
    # random search with the same budget gets the knob less close than TPE here (a check that TPE is used)
    rand = tune(exp_file, G_SPACE, Bowl(), 30, study_dir=tmp_path / "r", sampler="random", sampler_seed=1,
                best_run=False, report=False)
    assert report.best_values[0] <= rand.best_values[0]


def test_a_study_resumes_without_rerunning_its_trials(exp_file, tmp_path):
    first = Bowl()
    tune(exp_file, G_SPACE, first, 5, study_dir=tmp_path / "s", best_run=False, report=False)
    assert first.calls == 5
    again = Bowl()
    report = tune(exp_file, G_SPACE, again, 10, study_dir=tmp_path / "s", best_run=False, report=False)
    assert again.calls == 5 and report.ran == 5 and report.resumed == 5
    assert len(report.trials) == 10
    # the same trials as a study of 10 never stopped
    straight = tune(exp_file, G_SPACE, Bowl(), 10, study_dir=tmp_path / "t", best_run=False, report=False)
    pd.testing.assert_frame_equal(_trials(report), _trials(straight))
    # budget reached: nothing runs
    idle = Bowl()
    assert tune(exp_file, G_SPACE, idle, 10, study_dir=tmp_path / "s", best_run=False, report=False).ran == 0
    assert idle.calls == 0


def test_an_interrupted_trial_runs_again_first_on_resume(exp_file, tmp_path):
    bowl = Bowl()
    bowl.interrupt_at = 4
    with pytest.raises(KeyboardInterrupt):
        tune(exp_file, G_SPACE, bowl, 8, study_dir=tmp_path / "s", best_run=False, report=False)
    report = tune(exp_file, G_SPACE, Bowl(), 8, study_dir=tmp_path / "s", best_run=False, report=False)
    assert report.resumed == 3 and report.ran == 5
    straight = tune(exp_file, G_SPACE, Bowl(), 8, study_dir=tmp_path / "t", best_run=False, report=False)
    assert list(_trials(report)["transport.dctcp_g"]) == list(_trials(straight)["transport.dctcp_g"])


def test_two_studies_with_the_same_seeds_run_the_same_trials(exp_file, tmp_path):
    space = {"scheme": {"thresholds_bytes": {"kind": "increasing", "low": 1000, "high": 20_000_000}}}
    a = tune(exp_file, space, "small_p99_fct", 8, study_dir=tmp_path / "a", sampler_seed=7, best_run=False, report=False)
    b = tune(exp_file, space, "small_p99_fct", 8, study_dir=tmp_path / "b", sampler_seed=7, best_run=False, report=False)
    cols = ["trial", "objective", "scheme.thresholds_bytes"]
    pd.testing.assert_frame_equal(a.trials[cols], b.trials[cols])
    c = tune(exp_file, space, "small_p99_fct", 8, study_dir=tmp_path / "c", sampler_seed=8, best_run=False, report=False)
    assert list(map(list, c.trials["scheme.thresholds_bytes"])) != list(map(list, a.trials["scheme.thresholds_bytes"]))
    for t in a.trials["scheme.thresholds_bytes"]:  # three thresholds (4 queues), increasing, in range
        assert len(t) == 3 and list(t) == sorted(set(t)) and 1000 <= t[0] and t[-1] <= 20_000_000
    # the study's own derivation of the objective: trials.parquet holds what the summary says
    assert a.trials["objective"].notna().all()


def test_a_different_setup_in_the_same_study_dir_is_refused(exp_file, tmp_path):
    tune(exp_file, G_SPACE, "mean_fct", 2, study_dir=tmp_path / "s", best_run=False, report=False)
    with pytest.raises(ConfigError, match="--study-dir.*another setup.*objectives"):
        tune(exp_file, G_SPACE, "small_p99_fct", 3, study_dir=tmp_path / "s", best_run=False, report=False)


@pytest.mark.parametrize("space, key, why", [
    ("[scheme.no_such_knob]\nkind = 'float'\nlow = 1\nhigh = 2\n", "scheme.no_such_knob", "unknown key"),
    ("[transport.dctcp_g]\nkind = 'float'\nlow = 0.5\nhigh = 0.5\n", "transport.dctcp_g", "low must be below high"),
    ("[routing.mode]\nkind = 'categorical'\nchoices = []\n", "routing.mode", "non-empty"),
    ("[transport.init_cwnd_packets]\nkind = 'float'\nlow = 1\nhigh = 9\n", "transport.init_cwnd_packets",
     "integer key"),
    ("[scheme.thresholds_bytes]\nkind = 'int'\nlow = 1\nhigh = 9\n", "scheme.thresholds_bytes", "list key"),
    ("[routing.mode]\nkind = 'categorical'\nchoices = ['ecmp', 'teleport']\n", "routing.mode", "teleport"),
    ("[transport.dctcp_g]\nkind = 'fancy'\nlow = 0.1\nhigh = 0.5\n", "transport.dctcp_g", "kind must be"),
])
def test_a_bad_space_is_refused_with_one_line_naming_the_key(exp_file, tmp_path, space, key, why):
    (tmp_path / "space.toml").write_text(space)
    study = tmp_path / "study"
    result = CliRunner().invoke(app, ["tune", str(exp_file), "--space", str(tmp_path / "space.toml"),
                                      "--objective", "mean_fct", "--budget", "3", "--study-dir", str(study)])
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {key}") and why in lines[0], lines
    assert not study.exists()


def test_objectives_parse_without_eval():
    o = parse_objective("0.5*small_p99_fct + 0.5 * large_mean_fct - mean_slowdown*2")
    assert o.terms == ((0.5, "small_p99_fct"), (0.5, "large_mean_fct"), (-2.0, "mean_slowdown"))
    for bad in ("small_p99_fct + __import__('os')", "nonsense", "2*", "small_p99_fct large_mean_fct"):
        with pytest.raises(ConfigError, match="--objective"):
            parse_objective(bad)


def test_a_weighted_objective_is_the_weighted_sum_of_the_summary(exp_file, tmp_path):
    report = tune(exp_file, G_SPACE, ["small_p99_fct", "0.25*small_p99_fct + 2*all_mean_fct"], 2,
                  study_dir=tmp_path / "s")
    summary = json.loads((tmp_path / "s" / "best" / "summary.json").read_text())
    small, all_mean = summary["bins"]["small"]["p99_fct_ns"] / 1e3, summary["bins"]["all"]["mean_fct_ns"] / 1e3
    row = report.trials.iloc[0]
    assert math.isclose(row["objective_0"], small)  # the knob does not change a flow-level PIAS run
    assert math.isclose(row["objective_1"], 0.25 * small + 2 * all_mean)
    assert (tmp_path / "s" / "pareto.png").is_file() and (tmp_path / "s" / "report.html").is_file()
    from fctlab import catalog

    runs, _ = catalog.load(tmp_path / "s", flows=False)
    assert list(runs["run_id"]) == ["best"]


def test_a_flow_level_screen_is_confirmed_at_the_packet_level(exp_file, tmp_path):
    space = {"scheme": {"thresholds_bytes": {"kind": "increasing", "low": 1000, "high": 20_000_000}}}
    report = tune(exp_file, space, "small_p99_fct", 6, study_dir=tmp_path / "s", screen="flow", confirm=3,
                  overrides=["run.level=packet"], best_run=False, report=False)
    a = report.agreement
    assert a is not None and a["confirmed"] == 3 and -1 <= a["spearman"] <= 1 and -1 <= a["kendall"] <= 1
    t = report.trials
    assert (t["stage"] == "search").sum() == 6 and set(t[t["stage"] == "search"]["level"]) == {"flow"}
    assert set(t[t["stage"] == "confirm"]["level"]) == {"packet"} and (t["stage"] == "confirm").sum() == 3
    assert report.best_number == a["packet_best_trial"]
    import tomllib

    assert tomllib.loads((tmp_path / "s" / "best.toml").read_text())["run"]["level"] == "packet"


def test_increasing_draws_are_increasing_within_the_range():
    knob = Knob("scheme.thresholds_bytes", "increasing", low=1000, high=10_000_000, length=7)
    for first, fr in ((1000.0, [0.0] * 6), (9_999_000.0, [1.0] * 6), (5e4, [0.3, 0.9, 0.01, 0.5, 0.5, 0.99])):
        s = knob.sequence(first, fr)
        assert len(s) == 7 and all(b > a for a, b in zip(s, s[1:]))
    assert knob.sequence(1e4, [0.5]) == [10000, round(math.sqrt(1e4 * 1e7))]


def test_toml_document_round_trips():
    import tomllib

    data = {"name": "x", "seed": 3, "scheme": {"name": "pias", "thresholds_bytes": [1, 2]},
            "topology": {"kind": "leaf_spine", "host_link_gbps": 10.0}, "workload": {"load": 1e-05, "cdf": "a\"b"}}
    assert tomllib.loads(toml_document(data, ["head"])) == data


def test_space_keys_are_checked_against_the_resolved_experiment(exp_file):
    from fctlab.config import load_experiment

    base = load_experiment(exp_file)
    sp = space_from_dict({"workload.load": {"kind": "float", "low": 0.3, "high": 0.8},
                          "scheme": {"rax_base": {"kind": "float", "low": 1.5, "high": 6}}}, base)
    assert [k.key for k in sp.knobs] == ["workload.load", "scheme.rax_base"]
    with pytest.raises(ConfigError, match=r"^workload.load: the value 1.5"):
        space_from_dict({"workload.load": {"kind": "float", "low": 0.3, "high": 1.5}}, base)


def test_the_baseline_is_trial_0_with_the_derived_thresholds(exp_file, tmp_path):
    from fctlab.config import load_experiment

    exp_file.write_text(EXPERIMENT.replace("thresholds_bytes = [10000, 100000, 1000000]\n", ""))
    derived = load_experiment(exp_file).derived_thresholds["thresholds_bytes"]
    space = {"scheme": {"thresholds_bytes": {"kind": "increasing", "low": 1000, "high": 20_000_000}}}
    report = tune(exp_file, space, "mean_fct", 2, study_dir=tmp_path / "s", baseline=True, best_run=False,
                  report=False)
    assert list(report.trials["scheme.thresholds_bytes"][0]) == list(derived)
    import fctlab

    by_hand = load_experiment(exp_file, [f"scheme.thresholds_bytes={list(derived)}"]).with_overrides([])
    expected = fctlab.simulate(by_hand).summary["bins"]["all"]["mean_fct_ns"] / 1e3
    assert math.isclose(report.trials["objective"][0], expected)
    with pytest.raises(ConfigError, match=r"^scheme.thresholds_bytes: --baseline"):
        tune(exp_file, {"scheme": {"thresholds_bytes": {"kind": "increasing", "low": 1_000_000, "high": 20_000_000}}},
             "mean_fct", 2, study_dir=tmp_path / "u", baseline=True)
    assert not (tmp_path / "u").exists()


def test_trials_run_two_at_a_time_in_worker_processes(exp_file, tmp_path):
    space = {"scheme": {"thresholds_bytes": {"kind": "increasing", "low": 1000, "high": 20_000_000}}}
    a = tune(exp_file, space, "small_p99_fct", 4, study_dir=tmp_path / "a", workers=2, best_run=False, report=False)
    b = tune(exp_file, space, "small_p99_fct", 4, study_dir=tmp_path / "b", workers=2, best_run=False, report=False)
    cols = ["trial", "objective", "scheme.thresholds_bytes"]
    pd.testing.assert_frame_equal(a.trials[cols], b.trials[cols])
    # a worker's summary gives the same objective as a run in this process with the same thresholds
    one = tune(exp_file, {"scheme": {"thresholds_bytes": {"kind": "categorical",
                                                          "choices": [list(a.trials["scheme.thresholds_bytes"][1])]}}},
               "small_p99_fct", 1, study_dir=tmp_path / "c", best_run=False, report=False)
    assert one.trials["objective"][0] == a.trials["objective"][1]
    with pytest.raises(ConfigError, match="^--workers: a callable objective"):
        tune(exp_file, G_SPACE, Bowl(), 2, study_dir=tmp_path / "d", workers=2)


def test_trials_run_as_ray_tasks_give_the_worker_processes_trials(exp_file, tmp_path):
    """The cluster path: each round's trials run as Ray tasks (a local Ray here) and the study is the one the
    local worker processes run, trial for trial (the sampler, not the executor, decides the knobs)."""
    pytest.importorskip("ray", reason="ray is not installed (pip install 'fctlab[ray]'); CI installs it")
    space = {"scheme": {"thresholds_bytes": {"kind": "increasing", "low": 1000, "high": 20_000_000}}}
    local = tune(exp_file, space, "small_p99_fct", 4, study_dir=tmp_path / "local", workers=2, best_run=False,
                 report=False)
    on_ray = tune(exp_file, space, "small_p99_fct", 4, study_dir=tmp_path / "ray", workers=2, executor="ray",
                  best_run=False, report=False)
    cols = ["trial", "objective", "scheme.thresholds_bytes"]
    pd.testing.assert_frame_equal(local.trials[cols], on_ray.trials[cols])
    assert on_ray.trials["objective"].notna().all()


def test_a_knob_the_study_sets_itself_is_refused(exp_file, tmp_path):
    space = {"workload": {"load": {"kind": "float", "low": 0.3, "high": 0.7}}}
    with pytest.raises(ConfigError, match=r"^workload.load: is set by --loads"):
        tune(exp_file, space, "mean_fct", 2, study_dir=tmp_path / "s", loads=[0.5, 0.6])
    with pytest.raises(ConfigError, match=r"^run.level: is set by --screen"):
        tune(exp_file, {"run": {"level": {"kind": "categorical", "choices": ["flow", "packet"]}}}, "mean_fct", 2,
             study_dir=tmp_path / "s", screen="flow")
    assert not (tmp_path / "s").exists()


def test_a_trial_left_running_by_a_killed_process_runs_again_first(exp_file, tmp_path):
    import optuna

    tune(exp_file, G_SPACE, "mean_fct", 3, study_dir=tmp_path / "s", best_run=False, report=False)
    # what SIGKILL leaves: a trial asked for and never told
    study = optuna.load_study(study_name="fctlab-tune", storage=f"sqlite:///{tmp_path / 's' / 'study.db'}")
    study.enqueue_trial({"transport.dctcp_g": 0.123})
    stale = study.ask()
    stale.suggest_float("transport.dctcp_g", 0.01, 1.0)  # (tune draws the knobs right after asking)
    assert stale.params == {"transport.dctcp_g": 0.123}
    report = tune(exp_file, G_SPACE, "mean_fct", 5, study_dir=tmp_path / "s", best_run=False, report=False)
    assert report.resumed == 3 and report.ran == 2
    t = report.trials
    assert len(t) == 5 and t["transport.dctcp_g"].iloc[3] == 0.123  # the killed trial is not a row; its knobs ran
