"""The scheme matrix of README.md and docs/index.md: generated from the engine's scheme rows and the committed
claims, and stale when either changed without ``python -m fctlab.frontdoor``; README.md stays a front door."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from fctlab import frontdoor
from fctlab.scheme_table import rows

ROOT = Path(__file__).resolve().parent.parent


def _matrix_rows(text: str) -> dict[str, list[str]]:
    block = text.split(frontdoor.MARKERS[0], 1)[1].split(frontdoor.MARKERS[1], 1)[0]
    out = {}
    for line in block.splitlines():
        m = re.match(r"\| \[([a-z0-9-]+)\]\(", line)
        if m:
            out[m.group(1)] = [c.strip() for c in line.strip("|").split("|")]
    return out


def test_the_matrices_are_current():
    stale = frontdoor.render(ROOT)
    assert not stale, f"stale scheme matrix in {sorted(str(p.relative_to(ROOT)) for p in stale)}: run " \
                      "`python -m fctlab.frontdoor`"


def test_a_changed_claim_makes_the_matrix_stale(tmp_path):
    (tmp_path / "docs" / "claims").mkdir(parents=True)
    for page in (ROOT / "docs").glob("schemes-*.md"):
        (tmp_path / "docs" / page.name).write_text(page.read_text())
    (tmp_path / "README.md").write_text((ROOT / "README.md").read_text())
    (tmp_path / "docs" / "index.md").write_text((ROOT / "docs" / "index.md").read_text())
    for path in (ROOT / "docs" / "claims").glob("*.json"):
        doc = json.loads(path.read_text())
        if doc["recipe"] == "homa":
            for c in doc["claims"]:
                c["verdict"] = "reproduced"
        (tmp_path / "docs" / "claims" / path.name).write_text(json.dumps(doc))
    stale = frontdoor.render(tmp_path)
    assert set(stale) == {tmp_path / "README.md", tmp_path / "docs" / "index.md"}
    homa = _matrix_rows(stale[tmp_path / "README.md"])["homa"]
    assert homa[4] == "5 / 5"


def test_every_scheme_has_a_row_saying_what_it_runs_on():
    table = _matrix_rows((ROOT / "README.md").read_text())
    assert list(table) == [r["name"] for r in rows()]
    for r in rows():
        cells = table[r["name"]]
        # the flow level: a cross for exactly the schemes whose row has no fluid model, else a tick or a half
        # circle by its calibration
        if r["flow_level"] is None:
            assert cells[2] == frontdoor.NO, r["name"]
        else:
            assert cells[2] == frontdoor.YES or frontdoor.PARTLY in cells[2], r["name"]
        # every scheme runs at the packet level, some with gaps that its page lists
        assert cells[1] == frontdoor.YES or frontdoor.PARTLY in cells[1]
    # independently of the generator: every scheme has a flow-level model (docs/flow-level.md's table)
    assert {n for n, c in table.items() if c[2] == frontdoor.NO} == set()


def test_the_claim_counts_match_the_claims_files():
    table = _matrix_rows((ROOT / "README.md").read_text())
    pias = json.loads((ROOT / "docs" / "claims" / "pias-small.json").read_text())
    reproduced = sum(c["verdict"] == "reproduced" for c in pias["claims"])
    ran = sum(c["verdict"] != "not_run" for c in pias["claims"])
    assert table["pias"][4] == f"{reproduced} / {ran}"
    assert "testbed" in table["qclimb"][4] and "sim" in table["qclimb"][4]


def test_every_scheme_is_on_one_page_and_its_gaps_are_listed_there():
    page_of, gaps = frontdoor.scheme_pages(ROOT)
    assert set(page_of) == {r["name"] for r in rows()}
    for name in gaps:
        text = (ROOT / "docs" / page_of[name]).read_text()
        section = text.split("\n## Known gaps\n", 1)
        assert len(section) == 2 and "known-gaps: " in section[1], page_of[name]
    # independently: the schemes without a flow-level model have known gaps (that is one of them)
    assert {"homa", "hyline", "qjump"} <= gaps


def test_a_scheme_on_two_pages_or_gaps_off_its_page_is_refused(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "schemes-a.md").write_text("# A\n\n<!-- schemes: tcp dctcp -->\n")
    (tmp_path / "docs" / "schemes-b.md").write_text("# B\n\n<!-- schemes: dctcp -->\n")
    with pytest.raises(ValueError, match="dctcp"):
        frontdoor.scheme_pages(tmp_path)
    (tmp_path / "docs" / "schemes-b.md").write_text("# B\n\n<!-- schemes: homa -->\n<!-- known-gaps: tcp -->\n")
    (tmp_path / "docs" / "schemes-a.md").write_text("# A\n\n<!-- schemes: tcp -->\n")
    with pytest.raises(ValueError, match="does not cover"):
        frontdoor.scheme_pages(tmp_path)


def test_the_readme_is_a_front_door():
    text = (ROOT / "README.md").read_text()
    assert len(text.encode()) < 10_000
    # the two set-up commands, exactly, and the demo's figure
    assert "bash scripts/demo.sh" in text and "bash scripts/test.sh" in text
    assert (ROOT / "docs" / "img" / "demo-fct.png").is_file() and "docs/img/demo-fct.png" in text
    for link in re.findall(r"\]\(((?:docs/)[^)#]+)", text):
        assert (ROOT / link).is_file(), link


def test_the_flow_level_column_follows_the_calibration_matrix(tmp_path):
    """✓ only when every cell of the scheme is within 10% on the mean and p99 of every bin; the latest line of a
    cell is the one that counts; a scheme with no cell is ◐ "not in the calibration matrix"."""
    (tmp_path / "docs" / "claims").mkdir(parents=True)
    for page in (ROOT / "docs").glob("schemes-*.md"):
        (tmp_path / "docs" / page.name).write_text(page.read_text())
    for name in ("README.md", "docs/index.md"):
        (tmp_path / name).write_text((ROOT / name).read_text())

    def cell(scheme, load, flow_small_mean):
        bins = {b: {"count": 10, "mean_fct_ns": 100.0, "p99_fct_ns": 200.0} for b in ("small", "medium", "large")}
        flow = json.loads(json.dumps(bins))
        flow["small"]["mean_fct_ns"] = flow_small_mean
        return json.dumps({"key": [scheme, load, 10, "ecmp", "leaf_spine144", 5000], "packet": bins, "flow": flow})

    lines = [cell("dctcp", 0.3, 150.0), cell("dctcp", 0.3, 95.0),  # re-measured: the second line counts
             cell("dctcp", 0.8, 109.0), cell("pias", 0.3, 100.0), cell("pias", 0.8, 88.0)]
    (tmp_path / frontdoor.CALIBRATION).parent.mkdir(parents=True)
    (tmp_path / frontdoor.CALIBRATION).write_text("\n".join(lines) + "\n")
    worst = frontdoor.calibration_worst(tmp_path)
    assert worst["dctcp"][0] == pytest.approx(9.0) and worst["pias"][0] == pytest.approx(-12.0)
    assert "small mean, 0.8" in worst["pias"][1]
    stale = frontdoor.render(tmp_path)
    rows_ = _matrix_rows(stale[tmp_path / "README.md"])
    assert rows_["dctcp"][2] == frontdoor.YES
    assert frontdoor.PARTLY in rows_["pias"][2] and "-12%" in rows_["pias"][2]
    assert "not in the calibration matrix" in rows_["las"][2]
