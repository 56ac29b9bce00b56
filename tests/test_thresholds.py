"""PIAS threshold derivation (PIAS paper §3): the closed form against a numerical optimiser of the same objective,
the paper's recursion, byte thresholds from the CDF, the published presets, bad input and the command."""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pytest
import typer
from fctlab import thresholds as th
from fctlab.cli.report import register
from fctlab.workloads import Cdf, list_cdfs, load_cdf
from scipy.optimize import brentq
from typer.testing import CliRunner

LOADS = [0.05, 0.3, 0.5, 0.6, 0.8, 0.9, 0.99]
QUEUES = [2, 3, 4, 8, 16]
REFERENCE = Path(__file__).resolve().parents[1] / "docs" / "reference-parameters.md"


# -- the optimisation ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("queues", QUEUES)
@pytest.mark.parametrize("load", LOADS)
def test_paper_closed_form_and_numeric_optimiser_agree(load, queues):
    paper = th.paper_shares(load, queues)
    numeric = th.numeric_shares(load, queues)
    assert th.objective(paper, load) == pytest.approx(th.objective(numeric, load), rel=1e-9, abs=1e-12)
    # The numeric search never beats the closed form: it is the maximum.
    assert th.objective(numeric, load) <= th.objective(paper, load) + 1e-12
    # And it finds the same point, not just the same value.
    np.testing.assert_allclose(np.cumsum(numeric), np.cumsum(paper), atol=2e-4)


def test_derive_methods_agree_on_the_objective():
    for cdf in ("websearch", "datamining"):
        a = th.derive(cdf, 0.6, 8, method="paper")
        b = th.derive(cdf, 0.6, 8, method="numeric")
        assert a.objective == pytest.approx(b.objective, rel=1e-9)
        assert a.fct_bound == pytest.approx(b.fct_bound, rel=1e-9)


@pytest.mark.parametrize("queues", QUEUES)
@pytest.mark.parametrize("load", LOADS)
def test_shares_follow_the_papers_recursion(load, queues):
    """Eqs. (4)-(5): every theta_l is theta_1 times (1 - rho * (theta_1 + ... + theta_{l-1})), for l = 2..K,
    i.e. every ratio of eq. (2) equals the first; and the shares are a distribution (sum 1, all >= 0)."""
    theta = th.paper_shares(load, queues)
    assert np.all(theta > 0)
    assert theta.sum() == pytest.approx(1.0, abs=1e-12)
    for q in range(1, queues):
        assert theta[q] == pytest.approx(theta[0] * (1 - load * theta[:q].sum()), rel=1e-9)
    ratios = theta / (1 - load * np.concatenate(([0.0], np.cumsum(theta)[:-1])))
    np.testing.assert_allclose(ratios, ratios[0], rtol=1e-9)


@pytest.mark.parametrize("load", [0.2, 0.6, 0.9])
def test_theta_1_is_what_the_sum_constraint_gives(load):
    """The paper: express every theta_l through theta_1, then sum(theta) = 1 fixes theta_1. Solve that equation
    numerically and compare with the closed form (1 - (1 - rho)^(1/K)) / rho."""
    for queues in (2, 4, 8):

        def excess(t1: float, queues: int = queues) -> float:
            theta = [t1]
            for _ in range(1, queues):
                theta.append(t1 * (1 - load * sum(theta)))
            return sum(theta) - 1.0

        t1 = brentq(excess, 1e-9, 1.0, xtol=1e-15)
        assert th.paper_shares(load, queues)[0] == pytest.approx(t1, rel=1e-9)
        assert t1 == pytest.approx((1 - (1 - load) ** (1 / queues)) / load, rel=1e-9)


@pytest.mark.parametrize("load", [0.1, 0.6, 0.9])
def test_the_recursion_read_literally_overshoots(load):
    """theta_l = 1 - rho * S_{l-1}, as printed, gives theta_1 + theta_2 = 1 + (1 - rho) theta_1 > 1: no share
    vector satisfies it, which is why the module scales it by theta_1 (see its docstring)."""
    for t1 in (1e-3, 0.2, 0.5, 1.0):
        for queues in (2, 8):
            theta = th.literal_recursion(t1, load, queues)
            assert theta[:2].sum() == pytest.approx(1 + (1 - load) * t1)
            assert theta.sum() > 1.0


def test_eq1_and_eq2_are_the_same_problem():
    """T (eq. 1, minimised) = 1 - (1 - rho) T'' (eq. 2, maximised) for any shares."""
    rng = np.random.default_rng(3)
    for _ in range(50):
        k = int(rng.integers(2, 10))
        theta = rng.dirichlet(np.ones(k))
        rho = float(rng.uniform(0.01, 0.99))
        assert th.average_fct_bound(theta, rho) == pytest.approx(1 - (1 - rho) * th.objective(theta, rho), rel=1e-12)


def test_objective_by_hand():
    # K = 2, rho = 0.5, theta = (0.5, 0.5): T'' = 0.5 / 1 + 0.5 / (1 - 0.25) = 0.5 + 2/3
    assert th.objective([0.5, 0.5], 0.5) == pytest.approx(0.5 + 2 / 3)
    # T_1 = 0.5 * 0.5 / 1 = 0.25 weighted by 1; T_2 = 0.5 * 0.5 / 0.75 = 1/3 weighted by 0.5
    assert th.average_fct_bound([0.5, 0.5], 0.5) == pytest.approx(0.25 + 1 / 6)
    # One queue's worth of flows in queue 1 only: K = 2 optimum theta_1 = (1 - sqrt(1 - rho)) / rho
    assert th.paper_shares(0.75, 2)[0] == pytest.approx((1 - math.sqrt(0.25)) / 0.75)


# -- bytes ---------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("cdf", [c.name for c in list_cdfs()])
def test_thresholds_increase_and_stay_within_the_cdf(cdf):
    dist = load_cdf(cdf)
    lowest, highest = dist.quantile(0.0), dist.quantile(1.0)
    for load in (0.3, 0.6, 0.9):
        for queues in (2, 8, 16):
            t = th.derive(cdf, load, queues)
            alpha = t.thresholds_bytes
            assert len(alpha) == queues - 1 and len(t.shares) == queues == len(t.realized_shares)
            assert all(b > a for a, b in zip(alpha, alpha[1:])), alpha
            assert lowest <= alpha[0] and alpha[-1] <= highest
            assert all(a % dist.unit_bytes == 0 for a in alpha)
            assert sum(t.realized_shares) == pytest.approx(1.0)
            assert min(t.realized_shares) >= 0.0


def test_byte_thresholds_come_from_the_inverse_cdf():
    t = th.derive("websearch", 0.6, 8)
    dist = load_cdf("websearch")
    # Where the CDF is continuous the thresholds are exactly F^-1(S_j), and F of them is S_j up to one packet.
    for s, a in zip(t.cumulative, t.thresholds_bytes):
        assert a == dist.quantile(s)
        assert dist.fraction_at_most(a - dist.unit_bytes) < s <= dist.fraction_at_most(a) + 1e-12
    # websearch at 0.6 (hand-checked): 11, 25, 47, 201, 845, 1901, 4243 packets of 1460 bytes.
    assert [round(p) for p in t.thresholds_packets] == [11, 25, 47, 201, 845, 1901, 4243]


def test_atoms_of_the_cdf_are_stepped_over():
    """data mining has half its flows at one packet: several targets fall on that atom, and the thresholds are
    pushed apart by one packet each (the constraint alpha_{j-1} < alpha_j)."""
    t = th.derive("datamining", 0.6, 8)
    assert t.thresholds_bytes[:3] == (1460, 2920, 4380)
    assert t.realized_shares[0] == pytest.approx(0.5)
    assert t.realized_objective < t.objective


def test_a_cdf_with_too_few_sizes_for_the_queues_is_refused():
    tiny = Cdf.from_points("tiny", [1, 3], [0.0, 1.0])
    assert th.derive(tiny, 0.5, 3).thresholds_bytes == (2, 3)
    with pytest.raises(th.ThresholdError, match="^queues:"):
        th.derive(tiny, 0.5, 8)


# -- bad input -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"load": 0.0}, "load"),
        ({"load": 1.0}, "load"),
        ({"load": -0.2}, "load"),
        ({"load": 1.5}, "load"),
        ({"load": float("nan")}, "load"),
        ({"load": "high"}, "load"),
        ({"load": True}, "load"),
        ({"queues": 1}, "queues"),
        ({"queues": 65}, "queues"),
        ({"queues": 2.5}, "queues"),
        ({"queues": True}, "queues"),
        ({"cdf": "no_such_workload"}, "cdf"),
        ({"cdf": "/no/such/file.cdf"}, "cdf"),
        ({"cdf": 3}, "cdf"),
        ({"method": "guess"}, "method"),
    ],
)
def test_bad_input_names_the_argument(kwargs, name):
    args = {"cdf": "websearch", "load": 0.6, "queues": 8, "method": "paper", **kwargs}
    with pytest.raises(ValueError, match=f"^{name}:") as info:
        th.derive(**args)
    assert isinstance(info.value, th.ThresholdError)


# -- presets ---------------------------------------------------------------------------------------------------


def test_presets_are_the_published_table():
    assert th.preset("websearch", 0.6) == [1395760, 2016260, 2508280, 2960880, 3353620, 3724460, 3883600]
    assert th.preset("datamining", 0.6) == [1226400, 1798720, 2360820, 17447000, 17867480, 31381240, 37551200]
    assert th.preset("websearch", 0.9)[0] == 759 * 1460
    assert len(th.list_presets()) == 10
    for workload, load, alpha in th.list_presets():
        assert workload in ("websearch", "datamining") and load in (0.5, 0.6, 0.7, 0.8, 0.9)
        assert len(alpha) == 7
        assert all(a % 1460 == 0 for a in alpha)
        assert all(b > a for a, b in zip(alpha, alpha[1:]))


def test_presets_match_reference_parameters_file():
    text = REFERENCE.read_text(encoding="utf-8")
    rows = re.findall(r"^\|\s*(0\.\d)\s*\|([\d ]+)\|([\d ]+)\|\s*$", text, flags=re.M)
    assert len(rows) == 5
    for load, web, mining in rows:
        assert th.preset("websearch", float(load)) == [int(x) for x in web.split()]
        assert th.preset("datamining", float(load)) == [int(x) for x in mining.split()]


def test_bad_preset_arguments_name_the_argument():
    with pytest.raises(ValueError, match="^cdf:"):
        th.preset("hadoop", 0.6)
    with pytest.raises(ValueError, match="^load:"):
        th.preset("websearch", 0.65)
    with pytest.raises(ValueError, match="^load:"):
        th.preset("websearch", 1.5)


def test_evaluate_presets_on_their_cdf():
    e = th.evaluate("websearch", 0.6, th.preset("websearch", 0.6))
    assert e.method == "given" and e.queues == 8
    assert sum(e.shares) == pytest.approx(1.0)
    # The presets put most web-search flows in the first queue; the §3 model rates them below its optimum.
    assert e.shares[0] > 0.7
    assert e.objective < th.derive("websearch", 0.6, 8).objective
    with pytest.raises(ValueError, match="^thresholds_bytes:"):
        th.evaluate("websearch", 0.6, [5000, 4000])


# -- the command -----------------------------------------------------------------------------------------------


def _app() -> typer.Typer:
    app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)

    @app.callback()
    def _main() -> None:
        """Test front with the report commands only."""

    register(app)
    return app


runner = CliRunner()


def invoke(*args: str):
    return runner.invoke(_app(), list(args))


def test_command_prints_bytes_packets_and_shares():
    r = invoke("thresholds", "--cdf", "websearch", "--load", "0.6", "--queues", "8")
    assert r.exit_code == 0, r.stderr
    t = th.derive("websearch", 0.6, 8)
    out = r.stdout
    assert "thresholds (bytes): " + " ".join(str(a) for a in t.thresholds_bytes) in out
    for a, p in zip(t.thresholds_bytes, t.thresholds_packets):
        assert f"{a:,}" in out and f"{p:,.0f}" in out
    for s in t.shares:
        assert f"{s:.4f}" in out
    assert "published PIAS ns-2 preset" in out and "1395760" in out


def test_command_numeric_method():
    r = invoke("thresholds", "--cdf", "datamining", "--load", "0.5", "--queues", "4", "--method", "numeric")
    assert r.exit_code == 0, r.stderr
    assert "method: numeric" in r.stdout


def test_command_lists_presets():
    r = invoke("thresholds", "--preset")
    assert r.exit_code == 0, r.stderr
    for _workload, _load, alpha in th.list_presets():
        assert f"{alpha[0]:,}" in r.stdout
    r = invoke("thresholds", "--preset", "--cdf", "datamining", "--load", "0.6")
    assert r.exit_code == 0 and "17,447,000" in r.stdout and "1,395,760" not in r.stdout


@pytest.mark.parametrize(
    ("args", "name"),
    [
        (["--cdf", "websearch", "--load", "1.2"], "--load"),
        (["--cdf", "websearch", "--load", "zero"], "--load"),
        (["--cdf", "websearch"], "--load"),
        (["--load", "0.5"], "--cdf"),
        (["--cdf", "nope", "--load", "0.5"], "--cdf"),
        (["--cdf", "websearch", "--load", "0.5", "--queues", "1"], "--queues"),
        (["--cdf", "websearch", "--load", "0.5", "--queues", "65"], "--queues"),
        (["--cdf", "websearch", "--load", "0.5", "--queues", "eight"], "--queues"),
        (["--cdf", "websearch", "--load", "0.5", "--method", "best"], "--method"),
        (["--preset", "--cdf", "hadoop"], "--cdf"),
        (["--preset", "--load", "0.45"], "--load"),
    ],
)
def test_command_bad_arguments_exit_2_with_one_line(args, name):
    r = invoke("thresholds", *args)
    assert r.exit_code == 2, (r.stdout, r.stderr)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {name}:"), r.stderr
    assert r.stdout == ""
