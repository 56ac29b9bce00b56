"""The report of a results directory: run discovery in every layout, seed averaging, figures, the self-contained
HTML page (parsed in Python and rendered in headless Chromium), paper claims, and the ``report`` command."""

from __future__ import annotations

import json
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import fctlab
import pytest
import typer
from fctlab.cli.report import register
from fctlab.report import PaperClaim, Report, ReportError, discover_runs, write_report
from typer.testing import CliRunner

from chromium_page import CHROMIUM, check_page, chromium, screenshot

SCHEMES = ("tcp", "dctcp")
# load -> seeds: two seeds at the first load, to check the averaging.
LOADS = {0.4: (1, 2), 0.7: (1,)}
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _experiment(scheme: str, load: float, seed: int):
    return fctlab.experiment_from_dict({
        "name": f"tiny-{scheme}-{load}-{seed}",
        "seed": seed,
        "topology": {"kind": "single_switch", "hosts": 4},
        "workload": {"cdf": "websearch", "load": load, "flows": 50},
        "scheme": {"name": scheme},
    })


@pytest.fixture(scope="session")
def sweep_dir(tmp_path_factory) -> Path:
    """A sweep-like results folder: DIR/runs/<run_id>/ for 2 schemes x 2 loads (3 seeds' worth of runs each)."""
    root = tmp_path_factory.mktemp("sweep")
    for scheme in SCHEMES:
        for load, seeds in LOADS.items():
            for seed in seeds:
                result = fctlab.simulate(_experiment(scheme, load, seed))
                fctlab.write_results(result, root / "runs" / f"{scheme}-load{load}-seed{seed}")
    (root / "catalog.duckdb").write_bytes(b"not read by the report")
    return root


@pytest.fixture(scope="session")
def report_files(sweep_dir, tmp_path_factory):
    """The default report of the sweep, written once to its own folder."""
    out = tmp_path_factory.mktemp("report")
    rep = Report.from_dir(sweep_dir)
    rep.add_paper_claims([
        PaperClaim(
            statement="PIAS vs DCTCP, small-flow average FCT: up to 50% lower",
            recipe="1 - dctcp / tcp small-flow mean FCT at the highest load",
            value=12.5,
            source="PIAS, HotNets 2014, §4.1",
            unit="%",
            note="test claim",
        ),
        ("a claim given as a tuple", "no recipe yet", None),
    ])
    return rep.write(out)


def _summary(run_dir: Path) -> dict:
    return json.loads((run_dir / "summary.json").read_text())


# -- discovery and grouping ------------------------------------------------------------------------------------


def test_discovers_every_run_of_a_sweep(sweep_dir):
    runs, skipped = discover_runs(sweep_dir)
    assert skipped == []
    assert len(runs) == len(SCHEMES) * sum(len(s) for s in LOADS.values())
    assert {r.label for r in runs} == set(SCHEMES)
    assert {r.workload for r in runs} == {"websearch"}
    assert {r.load for r in runs} == set(LOADS)
    assert all(r.run_id.startswith("runs/") for r in runs)


def test_seeds_are_averaged_and_counted(sweep_dir):
    table = Report.from_dir(sweep_dir).table
    assert len(table) == len(SCHEMES) * len(LOADS)
    row = table[(table["label"] == "dctcp") & (table["load"] == 0.4)].iloc[0]
    s1, s2 = (_summary(sweep_dir / "runs" / f"dctcp-load0.4-seed{s}") for s in (1, 2))
    assert row["seeds"] == 2
    assert row["flows"] == s1["measured_flows"] + s2["measured_flows"]
    for b in ("small", "all"):
        for stat in ("mean_fct_ns", "p99_fct_ns", "mean_slowdown"):
            want = (s1["bins"][b][stat] + s2["bins"][b][stat]) / 2
            assert row[f"{b}.{stat}"] == pytest.approx(want)
            assert row[f"{b}.{stat}.lo"] == pytest.approx(min(s1["bins"][b][stat], s2["bins"][b][stat]))
    single = table[(table["label"] == "tcp") & (table["load"] == 0.7)].iloc[0]
    assert single["seeds"] == 1


def test_normalised_points_pair_runs_seed_by_seed(sweep_dir):
    pts = Report.from_dir(sweep_dir, normalize_to="tcp").points("websearch")
    mine = pts[(pts["bin"] == "all") & (pts["stat"] == "mean")].set_index(["label", "load"])
    assert mine.loc[("tcp", 0.4), "value"] == pytest.approx(1.0)
    assert mine.loc[("tcp", 0.4), "lo"] == pytest.approx(1.0) == mine.loc[("tcp", 0.4), "hi"]
    key = "mean_fct_ns"
    d = [_summary(sweep_dir / "runs" / f"dctcp-load0.4-seed{s}")["bins"]["all"][key] for s in (1, 2)]
    t = [_summary(sweep_dir / "runs" / f"tcp-load0.4-seed{s}")["bins"]["all"][key] for s in (1, 2)]
    assert mine.loc[("dctcp", 0.4), "value"] == pytest.approx(sum(d) / sum(t))
    ratios = sorted(a / b for a, b in zip(d, t))
    assert (mine.loc[("dctcp", 0.4), "lo"], mine.loc[("dctcp", 0.4), "hi"]) == pytest.approx(tuple(ratios))
    # One seed at 0.7: no spread.
    assert mine.loc[("dctcp", 0.7)].isna()["lo"]


def test_runs_of_one_scheme_that_differ_get_distinct_labels(sweep_dir, tmp_path):
    for name, queues in (("a", 2), ("b", 8)):
        dest = tmp_path / name
        shutil.copytree(sweep_dir / "runs" / "dctcp-load0.4-seed1", dest)
        summary = _summary(dest)
        summary["config"]["switch"]["queues"] = queues
        (dest / "summary.json").write_text(json.dumps(summary))
    runs, _ = discover_runs(tmp_path)
    assert sorted(r.label for r in runs) == ["dctcp (switch.queues=2)", "dctcp (switch.queues=8)"]


def test_unreadable_summaries_are_listed_not_fatal(sweep_dir, tmp_path):
    shutil.copytree(sweep_dir / "runs" / "tcp-load0.7-seed1", tmp_path / "good")
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "summary.json").write_text("{ not json")
    runs, skipped = discover_runs(tmp_path)
    assert len(runs) == 1 and len(skipped) == 1 and skipped[0].startswith("bad/summary.json:")


# -- files and figures -----------------------------------------------------------------------------------------


def test_report_writes_html_and_figures(report_files):
    assert report_files.html.name == "index.html" and report_files.html.stat().st_size > 0
    names = sorted(p.name for p in report_files.figures)
    assert names == ["websearch_fct_vs_load.png", "websearch_fct_vs_load.svg"]
    for p in report_files.figures:
        data = p.read_bytes()
        assert data.startswith(PNG_MAGIC) if p.suffix == ".png" else b"<svg" in data[:2000]


def test_single_run_and_compare_layouts_get_bar_charts(sweep_dir, tmp_path):
    single = tmp_path / "single"
    shutil.copytree(sweep_dir / "runs" / "dctcp-load0.7-seed1", single)
    files = write_report(single)
    assert files.html == single / "report" / "index.html"
    assert [p.name for p in files.figures] == ["websearch_fct_bins_load0.7.png", "websearch_fct_bins_load0.7.svg"]

    compare = tmp_path / "compare"
    for scheme in SCHEMES:
        shutil.copytree(sweep_dir / "runs" / f"{scheme}-load0.7-seed1", compare / scheme)
    rep = Report.from_dir(compare, normalize_to="dctcp")
    assert {r.run_id for r in rep.runs} == set(SCHEMES)
    files = rep.write()
    assert [p.name for p in files.figures][0] == "websearch_fct_bins_load0.7_vs_dctcp.png"
    # A second report does not read the first one's folder as runs.
    assert len(Report.from_dir(compare).runs) == 2


def test_slowdown_normalised_report(sweep_dir, tmp_path):
    files = write_report(sweep_dir, tmp_path, metric="slowdown", normalize_to="dctcp")
    assert [p.name for p in files.figures] == [
        "websearch_slowdown_vs_load_vs_dctcp.png",
        "websearch_slowdown_vs_load_vs_dctcp.svg",
    ]
    page = files.html.read_text()
    assert 'id="table-websearch-slowdown"' in page and 'id="table-websearch-fct"' in page
    assert "relative to dctcp" in page


def test_bad_options_and_empty_folders_are_refused(sweep_dir, tmp_path):
    with pytest.raises(ReportError, match="--normalize-to"):
        Report.from_dir(sweep_dir, normalize_to="pfabric")
    with pytest.raises(ReportError, match="--metric"):
        Report.from_dir(sweep_dir, metric="throughput")
    with pytest.raises(ReportError, match="no runs"):
        Report.from_dir(tmp_path)
    with pytest.raises(ReportError, match="not a directory"):
        Report.from_dir(tmp_path / "missing")
    assert list(tmp_path.iterdir()) == []


def test_paper_claims_accept_tuples_and_dicts():
    assert PaperClaim.coerce(("s", "r", 1.0)).value == 1.0
    assert PaperClaim.coerce({"statement": "s", "recipe": "r", "value": "x"}).value_text() == "x"
    assert PaperClaim("s", "r", 12.345, unit="%").value_text() == "12.3%"
    assert PaperClaim("s", "r", 48.2, unit="us").value_text() == "48.2 us"
    assert PaperClaim("s", "r", None).value_text() == "n/a"
    with pytest.raises(TypeError):
        PaperClaim.coerce("just text")


def test_plot_fct_bins_takes_metric_and_reference(sweep_dir, tmp_path):
    from fctlab.plot import plot_fct_bins

    summaries = {s: _summary(sweep_dir / "runs" / f"{s}-load0.7-seed1") for s in SCHEMES}
    written = plot_fct_bins(summaries, tmp_path / "bars", metric="slowdown", normalize_to="dctcp")
    assert [p.name for p in written] == ["bars.png", "bars.svg"]
    with pytest.raises(ValueError, match="normalize_to"):
        plot_fct_bins(summaries, tmp_path / "bars", normalize_to="homa")
    with pytest.raises(ValueError, match="metric"):
        plot_fct_bins(summaries, tmp_path / "bars", metric="goodput")


def test_plot_vs_load_divides_by_the_reference(sweep_dir, tmp_path):
    from fctlab.plot import plot_vs_load

    pts = Report.from_dir(sweep_dir).points("websearch")
    written = plot_vs_load(pts, tmp_path / "lines", normalize_to="tcp")
    assert [p.name for p in written] == ["lines.png", "lines.svg"]
    assert written[0].read_bytes().startswith(PNG_MAGIC)
    with pytest.raises(ValueError, match="normalize_to"):
        plot_vs_load(pts, tmp_path / "lines", normalize_to="homa")
    with pytest.raises(ValueError, match="not both"):
        plot_vs_load(pts, tmp_path / "lines", normalize_to="tcp", relative_to="tcp")


# -- the page --------------------------------------------------------------------------------------------------


class _Page(HTMLParser):
    """Every start tag with its attributes, and the text of <style> blocks."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str]]] = []
        self.style = ""
        self._in_style = False

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, {k: v or "" for k, v in attrs}))
        self._in_style = tag == "style"

    def handle_endtag(self, tag):
        self._in_style = False

    def handle_data(self, data):
        if self._in_style:
            self.style += data


def test_page_is_self_contained(report_files):
    page = _Page()
    page.feed(report_files.html.read_text(encoding="utf-8"))
    tags = [t for t, _ in page.tags]
    assert "script" not in tags and "link" not in tags and "iframe" not in tags
    images = [a for t, a in page.tags if t == "img"]
    assert len(images) == 1
    assert all(a["src"].startswith("data:image/png;base64,") for a in images)
    for tag, attrs in page.tags:
        for name, value in attrs.items():
            v = value.strip().lower()
            assert not v.startswith(("http://", "https://", "//")), (tag, name, value[:80])
            if name == "href":
                assert v.startswith("#"), (tag, value)  # only in-page links
    assert "url(" not in page.style and "@import" not in page.style
    # The tables: one per workload, every (scheme, load) a row; the claims and the run list.
    tables = [a for t, a in page.tags if t == "table"]
    assert {"id": "table-websearch-fct", "class": "results"} in tables
    assert any(a.get("class") == "claims" for a in tables) and any(a.get("class") == "runs" for a in tables)
    text = report_files.html.read_text(encoding="utf-8")
    assert "PIAS vs DCTCP, small-flow average FCT: up to 50% lower" in text
    # one unit per claims table: the unit in the number columns' headers, the numbers bare
    assert "<th>paper (%)</th><th>fctlab (%)</th>" in text and '<td class="value">12.5</td>' in text
    assert "runs</dt><dd>6</dd>" in text


def _chromium(*args: str, user_dir: Path) -> subprocess.CompletedProcess:
    return chromium(*args, user_dir=user_dir, timeout=120)


@pytest.mark.skipif(
    not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium (apt-get install chromium)"
)
def test_page_renders_in_headless_chromium(report_files, tmp_path):
    url = report_files.html.resolve().as_uri()
    dom = _chromium("--dump-dom", url, user_dir=tmp_path / "profile-dom")
    assert dom.returncode == 0, dom.stderr[-2000:]
    html = dom.stdout
    assert 'id="table-websearch-fct"' in html
    assert html.count("<tr") >= 1 + 2 + len(SCHEMES) * len(LOADS)
    page = _Page()
    page.feed(html)
    images = [a for t, a in page.tags if t == "img"]
    assert images and all(a["src"].startswith("data:image/png;base64,") for a in images)

    # no console or script error, every image decoded, nothing wider than the window
    found = check_page(report_files.html, tmp_path)
    assert found == {**found, "images": len(images), "broken": [], "errors": []}
    assert found["width"] <= 1400

    shot = screenshot(report_files.html, tmp_path / "page.png", tmp_path)
    assert shot.stat().st_size > 10_000
    assert shot.read_bytes().startswith(PNG_MAGIC)


def test_probe_finds_a_broken_image_and_a_console_error(tmp_path):
    """The page check itself: a page with an image that does not decode and a script that logs an error."""
    if not CHROMIUM.exists():
        pytest.skip("needs Debian's chromium at /usr/bin/chromium")
    bad = tmp_path / "bad.html"
    bad.write_text('<!DOCTYPE html><html><head><title>x</title></head><body><img alt="broken" '
                   'src="data:image/png;base64,AAAA"><script>console.error("boom")</script></body></html>')
    found = check_page(bad, tmp_path)
    assert found["images"] == 1 and found["broken"] == ["broken"]
    assert "boom" in found["errors"] and any(e.startswith("failed to load IMG") for e in found["errors"])


@pytest.mark.skipif(
    not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium (apt-get install chromium)"
)
def test_demo_recipe_report_renders_cleanly(tmp_path):
    """The demo recipe at tiny scale: its report (one load: bars per size bin, linear from zero) loads in
    Chromium with no error and every image decoded, and has no empty panel."""
    from fctlab.recipes.runner import reproduce

    out = tmp_path / "demo"
    outcome, files = reproduce("demo", out, scale="tiny", workers=2)
    assert not outcome.failed
    text = files.html.read_text()
    assert text.count("<img ") == 1 and "no finished flows" not in text
    found = check_page(files.html, tmp_path)
    assert found["images"] == 1 and found["broken"] == [] and found["errors"] == [] and found["width"] <= 1400


# -- the command -----------------------------------------------------------------------------------------------


def _app() -> typer.Typer:
    app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)

    @app.callback()
    def _main() -> None:
        """Test front with the report commands only."""

    register(app)
    return app


runner = CliRunner()


def test_command_writes_and_says_where(sweep_dir, tmp_path):
    out = tmp_path / "rep"
    r = runner.invoke(_app(), ["report", str(sweep_dir), "--out", str(out), "--normalize-to", "tcp"])
    assert r.exit_code == 0, r.stderr
    assert f"report: {out / 'index.html'}" in r.stdout
    assert (out / "index.html").is_file() and (out / "figures" / "websearch_fct_vs_load_vs_tcp.png").is_file()


@pytest.mark.parametrize(
    ("args", "name"),
    [
        (["--metric", "goodput"], "--metric"),
        (["--normalize-to", "pfabric"], "--normalize-to"),
    ],
)
def test_command_bad_options_exit_2(sweep_dir, tmp_path, args, name):
    out = tmp_path / "rep"
    r = runner.invoke(_app(), ["report", str(sweep_dir), "--out", str(out), *args])
    assert r.exit_code == 2, (r.stdout, r.stderr)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {name}:")
    assert not out.exists()


def test_command_on_a_folder_without_runs_exits_2(tmp_path):
    for target in (tmp_path, tmp_path / "missing"):
        r = runner.invoke(_app(), ["report", str(target)])
        assert r.exit_code == 2, (r.stdout, r.stderr)
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: RESULTS_DIR:"), r.stderr
    assert list(tmp_path.iterdir()) == []


def test_bin_titles_follow_the_runs_bin_edges(sweep_dir, tmp_path):
    from fctlab.plot import bin_titles

    assert bin_titles([{"bins": {}}])["small"] == "small (0, 100 KB]"  # written before output.bins: the papers'
    assert bin_titles([{"bin_edges": "ns2"}])["small"] == "small (0, 100 KiB)"
    assert bin_titles([{"bin_edges": "ns2"}, {"bin_edges": "papers"}])["small"] == "small"
    # a copy of the sweep's runs, re-summarised with the ns-2 edges: the report's table titles say KiB
    root = tmp_path / "ns2"
    shutil.copytree(sweep_dir, root)
    for path in root.glob("runs/*/summary.json"):
        s = json.loads(path.read_text())
        s["bin_edges"] = "ns2"
        path.write_text(json.dumps(s))
    html = Report.from_dir(root).write(tmp_path / "out").html.read_text()
    assert "medium [100 KiB, 10 MiB]" in html and "100 KB]" not in html and "KiB = 1,024 bytes" in html


# -- figures and tables of the page ------------------------------------------------------------------------------


def test_value_axis_is_log_only_over_a_wide_range():
    from matplotlib.figure import Figure

    from fctlab.plot import value_axis

    ax = Figure().add_subplot()
    # 3.9 against 4.5: a 15% difference reads as one on a linear axis from zero, not as 8x on a log axis
    assert value_axis(ax, [3.9, 4.5, None, float("nan")]) == "linear"
    lo, hi = ax.get_ylim()
    assert ax.get_yscale() == "linear" and lo == 0.0 and 4.5 < hi < 4.5 * 1.1
    ax = Figure().add_subplot()
    assert value_axis(ax, [1.2, 2.0], floor=1.0) == "linear" and 0.9 < ax.get_ylim()[0] < 1.0  # room below 1
    ax = Figure().add_subplot()
    assert value_axis(ax, [50.0, 120.0, 25_000.0]) == "log" and ax.get_yscale() == "log"
    ax = Figure().add_subplot()  # bars: never log, however wide
    assert value_axis(ax, [50.0, 25_000.0], wide=float("inf")) == "linear" and ax.get_ylim()[0] == 0.0


def test_plot_fct_bins_leaves_out_empty_bins(tmp_path):
    from fctlab.plot import plot_fct_bins

    def bin_(count, mean):
        return {"count": count, "mean_fct_ns": mean, "p99_fct_ns": None if mean is None else 2 * mean,
                "mean_slowdown": None, "p99_slowdown": None}

    summaries = {lab: {"bins": {"small": bin_(10, 1e5 * k), "medium": bin_(3, 4e6 * k), "large": bin_(0, None),
                                "all": bin_(13, 1e6 * k)}} for lab, k in (("a", 1.0), ("b", 1.2))}
    # the figure's panels are the bins with a value: three, and a note (checked through the drawn figure's text)
    import matplotlib.figure

    texts: list[str] = []
    grids: list[tuple] = []
    text, subplots = matplotlib.figure.Figure.text, matplotlib.figure.Figure.subplots

    def spy_text(self, x, y, s, *args, **kwargs):
        texts.append(s)
        return text(self, x, y, s, *args, **kwargs)

    def spy_subplots(self, *args, **kwargs):
        grids.append(args)
        return subplots(self, *args, **kwargs)

    matplotlib.figure.Figure.text, matplotlib.figure.Figure.subplots = spy_text, spy_subplots
    try:
        png, svg = plot_fct_bins(summaries, tmp_path / "bins.png")
    finally:
        matplotlib.figure.Figure.text, matplotlib.figure.Figure.subplots = text, subplots
    assert png.read_bytes().startswith(PNG_MAGIC) and svg.is_file()
    assert grids == [(2, 3)]  # mean and p99 rows; small, medium, all
    assert "no finished flows in bin large (left out)" in texts


def test_recipe_text_tables_become_html_tables():
    from fctlab.analyze import format_table
    from fctlab.report import text_table_html

    text = format_table(["bin", "run", "mean FCT (us)", "vs DCTCP"],
                        [["small", "DCTCP", "109.0", "1.00x"], ["", "PIAS", "1,103.3", "-5.6%"]], "llrr")
    out = text_table_html(text + "\npaper: a note under the table")
    assert out.count("<tr>") == 3 and "<th>mean FCT (us)</th>" in out
    assert "<td></td><td>PIAS</td><td class=num>1,103.3</td><td class=num>-5.6%</td>" in out
    assert '<p class="unit">paper: a note under the table</p>' in out
    # not a table: kept as preformatted text
    assert text_table_html("one line only") == '<div class="scroll"><pre class="table">one line only</pre></div>'
    # a caption line before the header is a note above the table
    out = text_table_html("FCT in us\n" + text)
    assert out.startswith('<p class="unit">FCT in us</p><div class="scroll"><table') and out.count("<tr>") == 3


def test_claims_are_grouped_by_unit_with_the_unit_in_the_headers():
    from fctlab.claims import Claim, near
    from fctlab.report import claims_html

    def claim(i, unit, paper, value):
        return Claim(id=f"c{i}", statement=f"claim {i}", source="paper", paper_value=paper, value=value, unit=unit,
                     how="computed", check=near(1.0, 0.5))

    out = claims_html([claim(1, "%", [10.0, 20.0], 15.0), claim(2, "x", 3.0, 1.2), claim(3, "%", 50.0, [4.0, 5.5])])
    assert out.count('<table class="claims"') == 2
    pct, times = out.split('<table class="claims"')[1:]
    assert "<th>paper (%)</th><th>fctlab (%)</th>" in pct and "claim 1" in pct and "claim 3" in pct
    assert '<td class="value">10 to 20</td><td class="value">15</td>' in pct
    assert '<td class="value">[4, 5.5]</td>' in pct and "%</td>" not in pct
    assert "<th>paper (x, times)</th>" in times and '<td class="value">1.2</td>' in times


def test_results_table_leaves_out_bins_without_flows(tmp_path):
    """A workload whose flows are all small (Homa's W1) gets no medium and large columns, and a note says so."""
    def bin_(count, mean):
        return {"count": count, "finished": count, "unfinished": 0, "mean_fct_ns": mean,
                "p99_fct_ns": None if mean is None else 2 * mean, "mean_slowdown": None, "p99_slowdown": None}

    for scheme, k in (("tcp", 1.0), ("dctcp", 0.8)):
        run = tmp_path / "runs" / scheme
        run.mkdir(parents=True)
        (run / "summary.json").write_text(json.dumps({
            "scheme": scheme, "seed": 1, "flows": 10,
            "config": {"scheme": {"name": scheme}, "workload": {"cdf": "tiny_rpc", "load": 0.5}, "seed": 1},
            "bins": {"small": bin_(10, 5e3 * k), "medium": bin_(0, None), "large": bin_(0, None),
                     "all": bin_(10, 5e3 * k)}}))
    page = Report.from_dir(tmp_path).write(tmp_path / "out").html.read_text()
    table = page[page.index('id="table-tiny-rpc-fct"'):]
    table = table[:table.index("</table>")]
    assert "small (0, 100 KB]" in table and "all flows" in table
    assert "medium (100 KB" not in table and "large (10 MB" not in table
    assert "Left out, no finished flow in any run: medium, large." in page
