"""HyLine's threshold band (§IV-E): the M/G/1-SRPT waiting time and load share against closed forms, the paper's
choice of H = 1 MB inside the band for web search at load 0.6 on 1 Gbps, and the command's output and errors."""

from __future__ import annotations

import numpy as np
import pytest
from typer.testing import CliRunner

from fctlab.theory import hyline_band as hyline
from fctlab.cli import app
from fctlab.workloads import Cdf

C = 1e9 / 8  # bytes per second at 1 Gbps


def test_one_size_waits_as_the_formula_gives():
    """All flows of size D: below D nothing is shorter (rho(h) = 0, E[W] = lambda h^2 / 2); from D on,
    E[W] = lambda D_x^2 / (2 (1 - rho)^2) with D_x = D / C."""
    d = 100_000.0
    cdf = Cdf.from_points("one", np.array([d, d]), np.array([0.0, 1.0]))
    rho = 0.5
    lam = rho * C / d
    h = 40_000.0
    assert hyline.waiting_time(cdf, rho, 1e9, h) == pytest.approx(lam * (h / C) ** 2 / 2, rel=1e-12)
    assert hyline.waiting_time(cdf, rho, 1e9, d) == pytest.approx(lam * (d / C) ** 2 / (2 * (1 - rho) ** 2))
    assert hyline.first_class_share(cdf, h) == 0.0
    assert hyline.first_class_share(cdf, d) == pytest.approx(1.0)


def test_uniform_sizes_match_closed_forms():
    """Sizes uniform on [0, L]: F(h) = h / L, E[S; S <= h] = h^2 / (2 L), E[S^2; S <= h] = h^3 / (3 L)."""
    big = 1_000_000.0
    cdf = Cdf.from_points("uniform", np.array([0.0, big]), np.array([0.0, 1.0]))
    rho, h = 0.7, 300_000.0
    lam = rho * C / (big / 2)
    m2 = h**3 / (3 * big) / C**2
    rho_h = lam * (h**2 / (2 * big)) / C
    expected = lam * (m2 + (h / C) ** 2 * (1 - h / big)) / (2 * (1 - rho_h) ** 2)
    assert hyline.waiting_time(cdf, rho, 1e9, h) == pytest.approx(expected, rel=1e-12)
    assert hyline.first_class_share(cdf, h) == pytest.approx((h / big) ** 2)
    # the band's ends meet their conditions to within a byte
    b = hyline.band(cdf, rho, 1e9, 100e-6)
    assert hyline.waiting_time(cdf, rho, 1e9, b.lower) >= 100e-6 > hyline.waiting_time(cdf, rho, 1e9, b.lower - 1)
    assert hyline.first_class_share(cdf, b.upper) <= 0.1 < hyline.first_class_share(cdf, b.upper + 2)
    assert b.upper == pytest.approx(big * 0.1**0.5, abs=2)


def test_the_papers_threshold_lies_in_its_band():
    """Web search on 1 Gbps with T_cost = 100 us: the paper picks H = 1 MB from the band at load 0.6; the band's
    lower end falls as the load rises (flows wait longer), its upper end does not depend on the load."""
    bands = {rho: hyline.band("websearch", rho, 1e9, 100e-6) for rho in (0.3, 0.6, 0.9)}
    b = bands[0.6]
    assert b.lower < 1_000_000 < b.upper
    assert bands[0.3].lower > b.lower > bands[0.9].lower
    assert bands[0.3].upper == b.upper == bands[0.9].upper
    # a T_cost longer than any flow's wait leaves no lower bound
    assert hyline.band("websearch", 0.1, 1e9, 1e3).lower is None


def test_bad_arguments_are_named():
    with pytest.raises(hyline.BandError, match="load"):
        hyline.band("websearch", 1.0, 1e9, 1e-4)
    with pytest.raises(hyline.BandError, match="T_cost"):
        hyline.band("websearch", 0.5, 1e9, 0.0)


def test_command_prints_the_band_and_writes_the_plot(tmp_path):
    plot = tmp_path / "band.png"
    r = CliRunner().invoke(app, ["hyline-band", "--cdf", "websearch", "--load", "0.6", "--link-gbps", "1",
                                 "--tcost-us", "100", "--plot", str(plot)])
    assert r.exit_code == 0, r.output
    assert "band: 411," in r.output and "1,596," in r.output
    assert plot.stat().st_size > 10_000
    args = ["hyline-band", "--load", "0.6", "--tcost-us", "-3", "--plot", str(tmp_path / "x.png")]
    bad = CliRunner().invoke(app, args)
    assert bad.exit_code == 2
    assert "--tcost-us" in bad.output
    assert not (tmp_path / "x.png").exists()
