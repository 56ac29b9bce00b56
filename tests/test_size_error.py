"""Synthetic imprecise sizes (``[workload] size_error``) and ``scheme.size_info`` from the front end: the error
models' statistics against their definitions, determinism, the flows left as they were, one-line refusals, and
a run that asks for a column the workload lacks exiting 2 before it starts, naming the column."""

from __future__ import annotations

import copy
import math

import numpy as np
import pytest
from typer.testing import CliRunner

from fctlab.cli import app
from fctlab.config import ConfigError, experiment_from_dict
from fctlab.simulation import build_flows, simulate
from fctlab.workloads.size_error import bounds_spread, size_error_columns

from conftest import TINY  # noqa: E402

RAW = {"name": "se", "seed": 11, "topology": {"kind": "single_switch", "hosts": 8},
       "scheme": {"name": "pfabric"},
       "workload": {"pattern": "all_to_all", "cdf": "websearch", "load": 0.5, "flows": 300}}


def _with(**error):
    raw = copy.deepcopy(RAW)
    raw["workload"]["size_error"] = error
    return raw


@pytest.mark.parametrize("sigma", [0.25, 0.5, 1.0, 2.0])
def test_lognormal_has_median_ratio_one_and_log_sd_sigma(sigma):
    size = np.full(40_000, 1_000_000.0)
    est = size_error_columns(size, 3, {"model": "lognormal", "sigma": sigma})["estimate_bytes"].astype(float)
    log_ratio = np.log(est / size)
    # the sample median and sd of 40,000 normal draws are within 0.02 sigma and 1% of the truth (~4 s.e.)
    assert abs(np.median(log_ratio)) < 0.02 * sigma
    assert abs(log_ratio.std() / sigma - 1) < 0.015


def test_lognormal_sigma_zero_is_exact_and_sizes_are_kept():
    size = np.array([1, 7, 1460, 123_456, 9_999_999], dtype=float)
    est = size_error_columns(size, 3, {"model": "lognormal", "sigma": 0.0})["estimate_bytes"]
    assert est.tolist() == size.astype(int).tolist()


@pytest.mark.parametrize(("coverage", "width"), [(0.5, 2.0), (0.9, 4.0), (0.99, 10.0)])
def test_bounds_cover_the_true_size_at_the_target_rate_with_the_given_width(coverage, width):
    rng = np.random.default_rng(0)
    size = np.floor(np.exp(rng.uniform(np.log(2_000), np.log(30e6), 40_000)))
    cols = size_error_columns(size, 9, {"model": "bounds", "coverage": coverage, "width": width})
    lo, hi = cols["lower_bytes"].astype(float), cols["upper_bytes"].astype(float)
    inside = np.mean((lo <= size) & (size <= hi))
    # binomial s.e. at 40,000 draws is below 0.0025; rounding outward adds a hair of coverage
    assert abs(inside - coverage) < 0.01
    assert np.all(lo <= hi)
    assert np.allclose(hi / np.maximum(lo, 1), width, rtol=0.01)
    # the centre (written as the estimate) lies between the bounds, with log-error spread t
    est = cols["estimate_bytes"].astype(float)
    assert np.all((lo <= est) & (est <= hi + 1))
    t = bounds_spread(coverage, width)
    assert abs(np.log(est / size).std() / t - 1) < 0.02
    # coverage 1: every interval centred on the true size
    full = size_error_columns(size, 9, {"model": "bounds", "coverage": 1.0, "width": width})
    assert np.all((full["lower_bytes"] <= size) & (size <= full["upper_bytes"]))


def test_error_models_are_deterministic_and_leave_the_flows_alone():
    plain = build_flows(experiment_from_dict(RAW))
    a = build_flows(experiment_from_dict(_with(model="lognormal", sigma=0.5)))
    b = build_flows(experiment_from_dict(_with(model="lognormal", sigma=0.5)))
    c = build_flows(experiment_from_dict(_with(model="lognormal", sigma=1.0)))
    for col in ("src", "dst", "size_bytes", "start_ps"):
        assert np.array_equal(plain[col], a[col]) and np.array_equal(plain[col], c[col])
    assert np.array_equal(a["estimate_bytes"], b["estimate_bytes"])
    # common random numbers: sigma scales the same draw per flow
    la = np.log(a["estimate_bytes"] / a["size_bytes"])
    lc = np.log(c["estimate_bytes"] / c["size_bytes"])
    assert np.corrcoef(la, lc)[0, 1] > 0.99
    raw = _with(model="lognormal", sigma=0.5)
    raw["seed"] = 12
    d = build_flows(experiment_from_dict(raw))
    assert not np.array_equal(d["estimate_bytes"], a["estimate_bytes"])


@pytest.mark.parametrize(("error", "message"), [
    ({"model": "lognormal"}, "needs sigma"),
    ({"model": "bounds", "coverage": 0.9}, "missing width"),
    ({"model": "bounds", "coverage": 1.5, "width": 4}, "less than or equal to 1"),
    ({"model": "bounds", "coverage": 0.9, "width": 1}, "greater than 1"),
    ({"model": "lognormal", "sigma": 1, "width": 3}, "width is not a key"),
    ({"model": "gauss", "sigma": 1}, "lognormal"),
])
def test_bad_models_are_refused_in_one_line(error, message):
    with pytest.raises(ConfigError) as e:
        experiment_from_dict(_with(**error))
    assert e.value.key.startswith("workload.size_error")
    assert message in str(e.value) and "\n" not in str(e.value)


def test_a_scheme_reads_the_model_columns():
    raw = _with(model="lognormal", sigma=2.0)
    raw["workload"]["flows"] = 120
    exact = simulate(experiment_from_dict(raw)).flows["fct_ns"].to_numpy()
    raw["scheme"]["size_info"] = "estimate"
    est = simulate(experiment_from_dict(raw)).flows["fct_ns"].to_numpy()
    assert not np.array_equal(exact, est)
    raw = _with(model="bounds", coverage=0.9, width=4.0)
    raw["workload"]["flows"] = 120
    raw["scheme"]["size_info"] = "bounds"
    assert np.all(np.isfinite(simulate(experiment_from_dict(raw)).flows["fct_ns"].to_numpy()))


@pytest.mark.parametrize(("info", "column"), [("estimate", "estimate_bytes"), ("bounds", "lower_bytes"),
                                              ("upper", "upper_bytes")])
def test_cli_refuses_a_missing_column_before_running(tmp_path, info, column):
    text = TINY + f'[scheme]\nname = "pfabric"\nsize_info = "{info}"\n'
    path = tmp_path / "exp.toml"
    path.write_text(text)
    result = CliRunner().invoke(app, ["run", str(path), "--out", str(tmp_path / "out")])
    assert result.exit_code == 2, (result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and column in lines[0] and "pfabric" in lines[0], result.stderr
    assert not (tmp_path / "out").exists()
    # with a model that writes the column, it runs
    model = 'size_error = {model = "lognormal", sigma = 0.5}' if info == "estimate" else \
        'size_error = {model = "bounds", coverage = 0.9, width = 4}'
    path.write_text(TINY + model + "\n" + f'[scheme]\nname = "pfabric"\nsize_info = "{info}"\n')
    result = CliRunner().invoke(app, ["run", str(path), "--out", str(tmp_path / "out2")])
    assert result.exit_code == 0, result.stderr


def test_engine_refusals_reach_the_front_end_in_one_line():
    raw = copy.deepcopy(RAW)
    raw["scheme"] = {"name": "homa", "size_info": "none"}
    with pytest.raises(ConfigError) as e:
        experiment_from_dict(raw)
    assert e.value.key == "scheme.size_info" and "homa" in str(e.value)
    assert math.isfinite(bounds_spread(0.9, 4.0))
