"""Shared fixtures of the Python tests."""

from __future__ import annotations

#: The smallest useful experiment: 20 web-search flows on a 4-host switch (runs in milliseconds).
TINY = """\
seed = 7
[topology]
kind = "single_switch"
hosts = 4
[workload]
cdf = "websearch"
load = 0.5
flows = 20
"""


def assert_claims_file(results_dir, recipe: str, scale: str = "tiny") -> dict:
    """A recipe run's report/claims.json: schema-valid (unique ids, verdicts the numbers give), for ``recipe`` at
    ``scale``, with a record for every claim its claims function gives now."""
    from pathlib import Path

    from fctlab import recipes
    from fctlab.claims import read_claims

    doc = read_claims(Path(results_dir) / "report" / "claims.json")
    assert (doc["recipe"], doc["scale"]) == (recipe, scale)
    assert [r["id"] for r in doc["claims"]] == [c.id for c in recipes.get(recipe).claims(results_dir)]
    return doc


def assert_claims_valid(results_dir, recipe: str, claims) -> dict:
    """``claims`` (recipe's claims of ``results_dir``) written as claims.json and read back: schema-valid, unique
    ids, every verdict the numbers'."""
    from fctlab.claims import read_claims, write_claims

    doc = read_claims(write_claims(results_dir, recipe, "test", claims))
    assert len(doc["claims"]) == len(claims)
    return doc
