"""The papers' claims as data (fctlab.claims): verdicts computed from the numbers for every check kind (a tie never
reproduces an ordering or a strict comparison), not_run without a value, the schema refusing bad records with a
message naming the record and field, claims.json next to the report and read back by it, and the docs' generated
tables matching the committed files. Each recipe's tiny-run test (tests/test_reproduce*.py) checks the claims.json
its run writes."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from fctlab import claims as cl
from fctlab.claims import Claim, ClaimsError

ROOT = Path(__file__).resolve().parents[1]


def claim(value, check, **kw) -> Claim:
    base = dict(id="c", statement="s", source="paper, Fig. 1", paper_value=1.0, value=value, unit="%", how="h",
                check=check)
    return Claim(**{**base, **kw})


@pytest.mark.parametrize("value, check, verdict", [
    (52.0, cl.near(50, 5), "reproduced"),
    (55.0, cl.near(50, 5), "reproduced"),  # the tolerance's edge is inside
    (55.1, cl.near(50, 5), "differs"),
    (44.0, cl.near(50, 0.1, relative=True), "differs"),
    (46.0, cl.near(50, 0.1, relative=True), "reproduced"),
    ([48.0, 53.0], cl.near(50, 5), "reproduced"),
    ([48.0, 58.0], cl.near(50, 5), "differs"),  # every element must pass
    (30.0, cl.in_range(10, 31), "reproduced"),
    (33.0, cl.in_range(10, 31, 2), "reproduced"),
    (33.1, cl.in_range(10, 31, 2), "differs"),
    (1.0, cl.above(1.0, 0.0), "differs"),  # a tie is not greater
    (1.05, cl.above(1.0, 0.1), "differs"),
    (1.2, cl.above(1.0, 0.1), "reproduced"),
    (1.0, cl.below(1.0, 0.0), "differs"),
    (0.5, cl.below(1.0, 0.1), "reproduced"),
    ([3.0, 2.0, 1.0], cl.order(["a", "b", "c"], 0.5), "reproduced"),
    ([3.0, 3.0, 1.0], cl.order(["a", "b", "c"], 0.0), "differs"),  # a tie breaks an order
    ([3.0, 2.9, 1.0], cl.order(["a", "b", "c"], 0.5), "differs"),  # a gap under the margin
    ([[3.0, 2.0], [2.0, 2.0]], cl.order(["a", "b"], 0.0), "differs"),  # every point must be ordered
    ([[3.0, 2.0], [2.5, 2.0]], cl.order(["a", "b"], 0.1, relative=True), "reproduced"),
    ([2.0, 1.0], cl.order(["a", "b", "c"], 0.0), "differs"),  # one entry per label
    ([20.0, 15.0], cl.all_of(cl.on(0, cl.below(26.4, 0)), cl.on(1, cl.above(20.0, 0))), "differs"),
    ([20.0, 30.0], cl.all_of(cl.on(0, cl.below(26.4, 0)), cl.on(1, cl.above(20.0, 0))), "reproduced"),
    (float("nan"), cl.near(0, 1), "not_run"),  # no number: nothing to check
    ([1.0, float("nan")], cl.near(1, 1), "not_run"),  # a missing entry: part of the study did not run
])
def test_verdict_is_computed_from_the_numbers(value, check, verdict):
    c = claim(value, check)
    assert c.verdict == verdict
    cl.validate_record(c.to_dict())


def test_missing_value_is_not_run():
    assert claim(None, cl.near(1, 1)).verdict == "not_run"
    assert claim([], cl.near(1, 1)).verdict == "not_run"
    assert claim([None, None], cl.near(1, 1)).verdict == "not_run"
    assert claim([1.0, None], cl.near(1, 1)).verdict == "not_run"
    assert claim([[1.0, 2.0], [None, 1.0]], cl.order(["a", "b"], 0)).verdict == "not_run"
    c = claim(None, cl.unmeasured(), not_run_reason="the recipe does not measure this")
    d = c.to_dict()
    assert d["verdict"] == "not_run" and d["mechanism"] == "the recipe does not measure this" and d["cause"] == ""


def test_mechanism_and_cause_only_when_it_differs():
    kw = dict(mechanism="the paper gives no RTT", cause="paper_omission")
    assert claim(100.0, cl.near(50, 5), **kw).to_dict()["mechanism"] == "the paper gives no RTT"
    ok = claim(50.0, cl.near(50, 5), **kw).to_dict()
    assert (ok["mechanism"], ok["cause"]) == ("", "")
    # a claim that differs with no known mechanism says so
    assert claim(100.0, cl.near(50, 5)).to_dict()["cause"] == "unexplained"


def good_record() -> dict:
    return claim(52.0, cl.near(50, 5), mechanism="m", cause="fctlab_option").to_dict()


@pytest.mark.parametrize("change, message", [
    (lambda r: r.pop("verdict"), "missing field"),
    (lambda r: r.update(extra=1), "unknown field"),
    (lambda r: r.update(id="Bad Id"), "id must be a slug"),
    (lambda r: r.update(verdict="differs", cause="unexplained"), "is not what the value and check give"),
    (lambda r: r.update(verdict="maybe"), "verdict must be one of"),
    (lambda r: r.update(paper_value=[3, 1]), "paper_value must be"),
    (lambda r: r.update(value="41%"), "value must be a number"),
    (lambda r: r.update(check={"kind": "roughly"}), "check.kind must be one of"),
    (lambda r: r.update(check={"kind": "near", "target": 50}), "needs tol"),
    (lambda r: r.update(check=cl.above(0, -1)), "margin must be >= 0"),
    (lambda r: r.update(cause="paper_omission"), "cause is for a claim that differs"),
    (lambda r: r.update(statement=""), "statement must not be empty"),
    (lambda r: r.update(check=cl.unmeasured()), "unmeasured"),
])
def test_schema_refuses_a_bad_record_clearly(change, message):
    rec = good_record()
    cl.validate_record(rec)
    change(rec)
    with pytest.raises(ClaimsError, match=message):
        cl.validate_record(rec, "claims[0]")


def test_differs_needs_a_cause_and_its_mechanism():
    rec = claim(100.0, cl.near(50, 5), mechanism="m", cause="fctlab_option").to_dict()
    cl.validate_record(rec)
    with pytest.raises(ClaimsError, match="needs a cause"):
        cl.validate_record({**rec, "cause": ""})
    with pytest.raises(ClaimsError, match="needs its mechanism"):
        cl.validate_record({**rec, "mechanism": ""})


def test_file_round_trip_and_duplicate_ids(tmp_path):
    cs = [claim(52.0, cl.near(50, 5), id="a"), claim(None, cl.near(50, 5), id="b")]
    path = cl.write_claims(tmp_path, "rax", "tiny", cs, "Wang et al., RAX")
    assert path == tmp_path / "report" / "claims.json"
    doc = cl.read_claims(path)
    assert (doc["recipe"], doc["scale"], doc["schema"]) == ("rax", "tiny", cl.SCHEMA_VERSION)
    assert "RAX" in doc["paper"] and doc["fctlab_version"]
    assert [r["verdict"] for r in doc["claims"]] == ["reproduced", "not_run"]
    assert [Claim.from_dict(r) for r in doc["claims"]] == cs
    bad = copy.deepcopy(doc)
    bad["claims"][1]["id"] = "a"
    path.write_text(json.dumps(bad))
    with pytest.raises(ClaimsError, match="id 'a' is not unique"):
        cl.read_claims(path)
    with pytest.raises(ClaimsError, match="id 'a' is not unique"):
        cl.write_claims(tmp_path, "rax", "tiny", [cs[0], cs[0]])


def test_the_report_shows_the_paper_value_verdict_and_mechanism():
    from fctlab.report import claims_html

    html = claims_html([claim(80.0, cl.near(50, 5), id="far", mechanism="because of X", cause="paper_omission"),
                        claim(50.0, cl.near(50, 5), id="close")])
    assert 'id="claim-far"' in html and "because of X" in html and "(paper omission)" in html
    assert 'class="verdict differs"' in html and 'class="verdict reproduced"' in html
    assert "within ±5 points of 50%" in html


def test_docs_claims_files_are_valid_and_the_docs_tables_match_them():
    files = sorted((ROOT / cl.DOCS_CLAIMS).glob("*.json"))
    for path in files:
        doc = cl.read_claims(path)
        assert path.stem == f"{doc['recipe']}-{doc['scale']}"
    assert cl.docs_tables(ROOT) == {}, "run: python -m fctlab.claims docs"
    marked = {m.group("name") for page in (ROOT / "docs").glob("*.md")
              for m in cl._MARKER.finditer(page.read_text())}
    assert marked == {p.stem for p in files}
