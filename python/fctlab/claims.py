"""The papers' claims as data: one :class:`Claim` per statement a recipe checks, written as ``claims.json`` next to
the recipe's report and read back by the HTML report and by the generated tables of docs/reproduce-*.md.

A claim holds the paper's statement and where it is made, the paper's value (a number, a ``[lo, hi]`` range, or
text for a qualitative statement), fctlab's value (a number, a list of numbers when the statement is about several
loads or series, or None when the study was not run), how fctlab's value is computed, and a small typed *check*.
The verdict is computed from the value and the check, never written by hand:

* ``not_run`` when there is no value, or a list value misses an entry (a series or part of the study did not
  run), or the recipe does not measure it;
* ``reproduced`` when the check passes; ``differs`` otherwise.

Check kinds (each a dict, made by the functions below; a list value is checked element by element, every element
must pass):

* :func:`near`: ``|value - target| <= tol`` (``tol`` absolute, or relative to ``|target|``);
* :func:`in_range`: ``lo - tol <= value <= hi + tol``;
* :func:`above` / :func:`below`: ``value > bound + margin`` / ``value < bound - margin``, strictly;
* :func:`order`: the value is one number per series (or a list of such lists, one per point) and each is strictly
  greater than the next by more than ``margin`` (relative to the smaller when ``relative``);
* :func:`all_of`: every sub-check passes, each on ``value[item]`` when the sub-check names an ``item``;
* :func:`unmeasured`: the recipe does not measure the claim (its value must be null: always ``not_run``).

Strict comparisons mean a tie never passes an ordering or a comparison. For ``differs`` the record carries the
mechanism (why fctlab's number differs, as far as it is known) and its cause: ``paper_omission`` (the paper leaves
out something the result depends on and fctlab had to choose), ``fctlab_option`` (a documented fctlab option or
model choice), or ``unexplained``. The recipes supply the mechanism for claims known to differ; it is shown only
when the claim does differ.

``python -m fctlab.claims docs`` rewrites the generated claim tables of docs/reproduce-*.md from the committed
docs/claims/<recipe>-<scale>.json files (between ``<!-- claims:NAME -->`` and ``<!-- /claims -->``);
``python -m fctlab.claims check`` fails when a table or a file is out of date or invalid.
"""

from __future__ import annotations

import json
import math
import re
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: The file's format version.
SCHEMA_VERSION = 1
#: The file's name, written next to the report's index.html.
CLAIMS_FILE = "claims.json"
VERDICTS = ("reproduced", "differs", "not_run")
CAUSES = ("paper_omission", "fctlab_option", "unexplained", "")
CHECK_KINDS = ("near", "in_range", "above", "below", "order", "all_of", "unmeasured")

class ClaimsError(ValueError):
    """A claims record or file that does not follow the schema (the message names the record and the field)."""


# --------------------------------------------------------------------------------------------------------------
# Checks


def near(target: float, tol: float, *, relative: bool = False) -> dict[str, Any]:
    """Within ``tol`` of ``target`` (absolute in the value's unit, or a fraction of ``|target|``)."""
    return {"kind": "near", "target": target, "tol": tol, "relative": relative}


def percent_near(target: float) -> dict[str, Any]:
    """A percentage the paper gives (a reduction, a gap): within 5 points of it, or half of it when that is
    smaller, so that a claimed gain is never reproduced by no gain (``|target| / 2`` keeps the sign)."""
    return near(target, min(5.0, abs(target) / 2))


def percent_range(lo: float, hi: float) -> dict[str, Any]:
    """A range of percentages the paper gives: inside it, widened by 5 points, or by half the lower end when that
    is positive and smaller (so a claimed gain is never met by none)."""
    return in_range(lo, hi, min(5.0, lo / 2) if lo > 0 else 5.0)


def in_range(lo: float, hi: float, tol: float = 0.0) -> dict[str, Any]:
    """Inside ``[lo - tol, hi + tol]``."""
    return {"kind": "in_range", "lo": lo, "hi": hi, "tol": tol}


def above(bound: float, margin: float) -> dict[str, Any]:
    """Strictly greater than ``bound + margin``."""
    return {"kind": "above", "bound": bound, "margin": margin}


def below(bound: float, margin: float) -> dict[str, Any]:
    """Strictly less than ``bound - margin``."""
    return {"kind": "below", "bound": bound, "margin": margin}


def order(labels: Sequence[str], margin: float, *, relative: bool = False) -> dict[str, Any]:
    """The value's entries (one per label, in the labels' order) strictly decrease, each gap above ``margin``
    (a fraction of the smaller entry when ``relative``)."""
    return {"kind": "order", "labels": list(labels), "margin": margin, "relative": relative}


def all_of(*checks: dict[str, Any]) -> dict[str, Any]:
    """Every one of ``checks`` passes (give a sub-check an ``item`` with :func:`on`)."""
    return {"kind": "all_of", "checks": list(checks)}


def on(item: int, check: dict[str, Any], label: str = "") -> dict[str, Any]:
    """``check`` applied to ``value[item]`` (inside :func:`all_of`); ``label`` names that entry."""
    return {**check, "item": item, **({"label": label} if label else {})}


def unmeasured() -> dict[str, Any]:
    """No check: the recipe does not measure this claim (the value must be None; the verdict is ``not_run``)."""
    return {"kind": "unmeasured"}


def _num(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _leaves(value: Any) -> list[float]:
    return [x for v in value for x in _leaves(v)] if isinstance(value, list) else [value]


def passes(check: Mapping[str, Any], value: Any) -> bool:
    """Does ``value`` pass ``check``? (A value with a missing or non-finite number never passes.)"""
    kind = check["kind"]
    if kind == "unmeasured":
        return False
    if kind == "all_of":
        return all(passes(c, value if "item" not in c else value[c["item"]]) for c in check["checks"])
    if kind == "order":
        rows = value if value and isinstance(value[0], list) else [value]
        for row in rows:
            if len(row) != len(check["labels"]) or not all(_num(x) for x in row):
                return False
            for a, b in zip(row, row[1:]):
                gap = (a - b) / abs(b) if check["relative"] else a - b
                if check["relative"] and b == 0:
                    return False
                if not gap > check["margin"]:
                    return False
        return True
    xs = _leaves(value)
    if not xs or not all(_num(x) for x in xs):
        return False
    if kind == "near":
        tol = check["tol"] * abs(check["target"]) if check["relative"] else check["tol"]
        return all(abs(x - check["target"]) <= tol for x in xs)
    if kind == "in_range":
        return all(check["lo"] - check["tol"] <= x <= check["hi"] + check["tol"] for x in xs)
    if kind == "above":
        return all(x > check["bound"] + check["margin"] for x in xs)
    if kind == "below":
        return all(x < check["bound"] - check["margin"] for x in xs)
    raise ClaimsError(f"check: unknown kind {kind!r}; known: {', '.join(CHECK_KINDS)}")


def _g(x: float) -> str:
    return f"{x:g}"


def check_text(check: Mapping[str, Any], unit: str = "") -> str:
    """The check in words, e.g. "within ±5 points of 50%" (a tolerance or margin on a percentage is in points)."""
    u = _unit(unit)

    def amount(x: float) -> str:
        return f"{_g(x)} points" if unit == "%" else f"{_g(x)}{u}"

    kind = check["kind"]
    if kind == "unmeasured":
        return "none (not measured)"
    where = f"{check['label']}: " if check.get("label") else (f"entry {check['item']}: " if "item" in check else "")
    if kind == "near":
        tol = f"±{_g(100 * check['tol'])}% (relative)" if check["relative"] else f"±{amount(check['tol'])}"
        text = f"within {tol} of {_g(check['target'])}{u}"
    elif kind == "in_range":
        widen = f" widened by {amount(check['tol'])}" if check["tol"] else ""
        text = f"inside [{_g(check['lo'])}, {_g(check['hi'])}]{u}{widen}"
    elif kind in ("above", "below"):
        text = f"{'>' if kind == 'above' else '<'} {_g(check['bound'])}{u}" + (
            f" by more than {amount(check['margin'])}" if check["margin"] else " (strictly)")
    elif kind == "order":
        gap = f"{_g(100 * check['margin'])}% (relative)" if check["relative"] else amount(check["margin"])
        text = " > ".join(check["labels"]) + (f", each gap > {gap}" if check["margin"] else " (strictly)")
    else:
        text = " and ".join(check_text(c, unit) for c in check["checks"])
    return where + text


# --------------------------------------------------------------------------------------------------------------
# Claims


@dataclass(frozen=True)
class Claim:
    """One statement of a paper and fctlab's answer to it (see the module's docstring). ``verdict`` is computed
    from ``value`` and ``check``; ``mechanism`` and ``cause`` explain a claim that differs (the recipe's
    expectation; shown only when it does)."""

    id: str
    statement: str
    source: str
    paper_value: float | list[float] | str
    value: float | list[Any] | None
    unit: str
    how: str
    check: dict[str, Any]
    mechanism: str = ""
    cause: str = ""
    note: str = ""
    #: A reason the value is missing by design (the recipe does not measure this): always ``not_run``.
    not_run_reason: str = field(default="")

    @property
    def verdict(self) -> str:
        if self.value is None or self.not_run_reason or (not isinstance(self.value, list) and not _num(self.value)):
            return "not_run"
        if isinstance(self.value, list) and not (_leaves(self.value) and all(_num(x) for x in _leaves(self.value))):
            return "not_run"  # an entry is missing: part of the study did not run
        return "reproduced" if passes(self.check, self.value) else "differs"

    # the old PaperClaim's names, for the CLI's printout
    @property
    def recipe(self) -> str:
        return self.how

    def value_text(self) -> str:
        """fctlab's value as shown in the report and the docs."""
        return value_text(self.value, self.unit)

    def paper_text(self) -> str:
        pv = self.paper_value
        if isinstance(pv, list):
            return f"{_fmt(pv[0])}-{_fmt(pv[1])}{_unit(self.unit)}"
        return pv if isinstance(pv, str) else f"{_fmt(pv)}{_unit(self.unit)}"

    def to_dict(self) -> dict[str, Any]:
        verdict = self.verdict
        differs = verdict == "differs"
        return {
            "id": self.id, "statement": self.statement, "source": self.source, "paper_value": self.paper_value,
            "value": _clean(self.value), "unit": self.unit, "how": self.how, "check": self.check,
            "check_text": check_text(self.check, self.unit), "verdict": verdict,
            "mechanism": (self.mechanism if differs else self.not_run_reason if verdict == "not_run" else ""),
            "cause": (self.cause or "unexplained") if differs else "",
            "note": self.note,
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Claim:
        """A claim from a validated record (the verdict is recomputed; :func:`read_claims` checks they agree)."""
        not_run = d["mechanism"] if d["verdict"] == "not_run" and d["value"] is not None else ""
        return cls(id=d["id"], statement=d["statement"], source=d["source"], paper_value=d["paper_value"],
                   value=d["value"], unit=d["unit"], how=d["how"], check=d["check"],
                   mechanism=d["mechanism"] if d["verdict"] == "differs" else "", cause=d["cause"], note=d["note"],
                   not_run_reason=not_run)


def _unit(unit: str) -> str:
    return unit if unit in ("%", "x", "") else f" {unit}"


def _fmt(v: Any) -> str:
    if not _num(v):
        return "n/a"
    return f"{v:,.3g}" if abs(v) < 1000 else f"{v:,.0f}"


def value_text(value: Any, unit: str) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, list):
        return "[" + ", ".join(value_text(v, "") for v in value) + "]" + _unit(unit)
    return _fmt(value) + _unit(unit)


def _clean(value: Any) -> Any:
    """JSON-safe: NaN and infinities become None, numpy numbers plain floats."""
    if isinstance(value, list):
        return [_clean(v) for v in value]
    if value is None or isinstance(value, str):
        return value
    v = float(value)
    return v if math.isfinite(v) else None


# --------------------------------------------------------------------------------------------------------------
# The schema


#: claims.json's schema (JSON Schema, draft 2020-12; :func:`validate` checks it without the jsonschema package).
NUMBER_TREE = {"anyOf": [{"type": "number"}, {"type": "null"}, {"type": "array", "items": {"$ref": "#/$defs/tree"}}]}
SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "required": ["schema", "recipe", "scale", "paper", "fctlab_version", "claims"],
    "additionalProperties": False,
    "$defs": {"tree": NUMBER_TREE},
    "properties": {
        "schema": {"const": SCHEMA_VERSION},
        "recipe": {"type": "string", "minLength": 1},
        "scale": {"type": "string"},
        "paper": {"type": "string"},
        "fctlab_version": {"type": "string"},
        "claims": {"type": "array", "items": {
            "type": "object",
            "additionalProperties": False,
            "required": ["id", "statement", "source", "paper_value", "value", "unit", "how", "check", "check_text",
                         "verdict", "mechanism", "cause", "note"],
            "properties": {
                "id": {"type": "string", "pattern": "^[a-z0-9][a-z0-9-]*$"},
                "statement": {"type": "string", "minLength": 1},
                "source": {"type": "string", "minLength": 1},
                "paper_value": {"anyOf": [{"type": "number"}, {"type": "string", "minLength": 1},
                                          {"type": "array", "items": {"type": "number"}, "minItems": 2,
                                           "maxItems": 2}]},
                "value": {"$ref": "#/$defs/tree"},
                "unit": {"type": "string"},
                "how": {"type": "string", "minLength": 1},
                "check": {"type": "object", "required": ["kind"],
                          "properties": {"kind": {"enum": list(CHECK_KINDS)}}},
                "check_text": {"type": "string"},
                "verdict": {"enum": list(VERDICTS)},
                "mechanism": {"type": "string"},
                "cause": {"enum": list(CAUSES)},
                "note": {"type": "string"},
            },
        }},
    },
}

_CHECK_FIELDS = {
    "near": {"target": "number", "tol": "number", "relative": "bool"},
    "in_range": {"lo": "number", "hi": "number", "tol": "number"},
    "above": {"bound": "number", "margin": "number"},
    "below": {"bound": "number", "margin": "number"},
    "order": {"labels": "labels", "margin": "number", "relative": "bool"},
    "all_of": {"checks": "checks"},
    "unmeasured": {},
}
_RECORD_TYPES = {"id": str, "statement": str, "source": str, "unit": str, "how": str, "check_text": str,
                 "mechanism": str, "note": str}
_SLUG = re.compile(r"^[a-z0-9][a-z0-9-]*$")


def _check_check(check: Any, where: str, nested: bool = False) -> None:
    if not isinstance(check, Mapping):
        raise ClaimsError(f"{where}: check must be an object (got {check!r})")
    kind = check.get("kind")
    if kind not in _CHECK_FIELDS:
        raise ClaimsError(f"{where}: check.kind must be one of {', '.join(CHECK_KINDS)} (got {kind!r})")
    fields = _CHECK_FIELDS[kind]
    allowed = set(fields) | {"kind"} | ({"item", "label"} if nested else set())
    extra = set(check) - allowed
    if extra:
        raise ClaimsError(f"{where}: check ({kind}) has unknown field(s) {', '.join(sorted(extra))}")
    for name, typ in fields.items():
        if name not in check:
            raise ClaimsError(f"{where}: check ({kind}) needs {name}")
        v = check[name]
        if typ == "number" and not _num(v):
            raise ClaimsError(f"{where}: check.{name} must be a finite number (got {v!r})")
        if typ == "bool" and not isinstance(v, bool):
            raise ClaimsError(f"{where}: check.{name} must be true or false (got {v!r})")
        if typ == "labels" and (not isinstance(v, list) or len(v) < 2 or not all(isinstance(x, str) for x in v)):
            raise ClaimsError(f"{where}: check.labels must be two or more names (got {v!r})")
        if typ == "checks":
            if not isinstance(v, list) or not v:
                raise ClaimsError(f"{where}: check.checks must be a non-empty list")
            for i, c in enumerate(v):
                _check_check(c, f"{where}, check.checks[{i}]", nested=True)
    for name in ("tol", "margin"):
        if name in check and _num(check[name]) and check[name] < 0:
            raise ClaimsError(f"{where}: check.{name} must be >= 0 (got {check[name]})")
    if kind == "in_range" and check["lo"] > check["hi"]:
        raise ClaimsError(f"{where}: check.lo must be <= check.hi (got {check['lo']} > {check['hi']})")
    if "item" in check and (not isinstance(check["item"], int) or isinstance(check["item"], bool)
                            or check["item"] < 0):
        raise ClaimsError(f"{where}: check.item must be an index >= 0 (got {check['item']!r})")


def _check_tree(v: Any, where: str) -> None:
    if v is None or _num(v):
        return
    if isinstance(v, list):
        for x in v:
            _check_tree(x, where)
        return
    raise ClaimsError(f"{where}: value must be a number, null or a list of them (got {v!r})")


def validate_record(rec: Any, where: str = "claim") -> None:
    """Raise :class:`ClaimsError` naming ``where`` and the field when ``rec`` does not follow the schema, or when
    its verdict is not the one its value and check give."""
    if not isinstance(rec, Mapping):
        raise ClaimsError(f"{where}: must be an object (got {type(rec).__name__})")
    props = SCHEMA["properties"]["claims"]["items"]
    missing = [k for k in props["required"] if k not in rec]
    if missing:
        raise ClaimsError(f"{where}: missing field(s) {', '.join(missing)}")
    extra = sorted(set(rec) - set(props["required"]))
    if extra:
        raise ClaimsError(f"{where}: unknown field(s) {', '.join(extra)}")
    where = f"{where} ({rec['id']!r})" if isinstance(rec["id"], str) else where
    for name, typ in _RECORD_TYPES.items():
        if not isinstance(rec[name], typ):
            raise ClaimsError(f"{where}: {name} must be a string (got {rec[name]!r})")
    if not _SLUG.match(rec["id"]):
        raise ClaimsError(f"{where}: id must be a slug of a-z, 0-9 and '-' (got {rec['id']!r})")
    for name in ("statement", "source", "how"):
        if not rec[name].strip():
            raise ClaimsError(f"{where}: {name} must not be empty")
    pv = rec["paper_value"]
    ok = (_num(pv) or (isinstance(pv, str) and pv.strip())
          or (isinstance(pv, list) and len(pv) == 2 and all(_num(x) for x in pv) and pv[0] <= pv[1]))
    if not ok:
        raise ClaimsError(f"{where}: paper_value must be a number, a [lo, hi] range or text (got {pv!r})")
    _check_tree(rec["value"], where)
    _check_check(rec["check"], where)
    if rec["check"]["kind"] == "unmeasured" and rec["value"] is not None:
        raise ClaimsError(f"{where}: a claim with no check (unmeasured) must have no value")
    if rec["verdict"] not in VERDICTS:
        raise ClaimsError(f"{where}: verdict must be one of {', '.join(VERDICTS)} (got {rec['verdict']!r})")
    if rec["cause"] not in CAUSES:
        raise ClaimsError(f"{where}: cause must be one of {', '.join(c for c in CAUSES if c)} or empty "
                          f"(got {rec['cause']!r})")
    if rec["verdict"] == "differs" and not rec["cause"]:
        raise ClaimsError(f"{where}: a claim that differs needs a cause")
    if rec["verdict"] != "differs" and rec["cause"]:
        raise ClaimsError(f"{where}: cause is for a claim that differs (verdict {rec['verdict']})")
    if rec["verdict"] == "differs" and rec["cause"] != "unexplained" and not rec["mechanism"].strip():
        raise ClaimsError(f"{where}: a claim that differs by cause {rec['cause']} needs its mechanism")
    # the verdict is the numbers', not a hand-written one
    try:
        expected = Claim.from_dict(rec).verdict
    except (KeyError, IndexError, TypeError) as e:
        raise ClaimsError(f"{where}: the check does not fit the value ({e})") from None
    if rec["verdict"] != expected:
        raise ClaimsError(f"{where}: verdict {rec['verdict']!r} is not what the value and check give ({expected!r})")


def validate(doc: Any, where: str = "claims.json") -> None:
    """Raise :class:`ClaimsError` when ``doc`` (a parsed claims.json) does not follow :data:`SCHEMA`."""
    if not isinstance(doc, Mapping):
        raise ClaimsError(f"{where}: must be an object")
    top = SCHEMA["required"]
    missing = [k for k in top if k not in doc]
    if missing:
        raise ClaimsError(f"{where}: missing field(s) {', '.join(missing)}")
    extra = sorted(set(doc) - set(top))
    if extra:
        raise ClaimsError(f"{where}: unknown field(s) {', '.join(extra)}")
    if doc["schema"] != SCHEMA_VERSION:
        raise ClaimsError(f"{where}: schema must be {SCHEMA_VERSION} (got {doc['schema']!r})")
    for name in ("recipe", "scale", "paper", "fctlab_version"):
        if not isinstance(doc[name], str):
            raise ClaimsError(f"{where}: {name} must be a string (got {doc[name]!r})")
    if not isinstance(doc["claims"], list):
        raise ClaimsError(f"{where}: claims must be a list")
    seen: set[str] = set()
    for i, rec in enumerate(doc["claims"]):
        validate_record(rec, f"{where}: claims[{i}]")
        if rec["id"] in seen:
            raise ClaimsError(f"{where}: claims[{i}]: id {rec['id']!r} is not unique")
        seen.add(rec["id"])


def claims_doc(recipe: str, scale: str, claims: Iterable[Claim], paper: str = "") -> dict[str, Any]:
    """The content of claims.json (validated); ``paper`` cites the paper the recipe reproduces."""
    from fctlab import __version__

    doc = {"schema": SCHEMA_VERSION, "recipe": recipe, "scale": scale, "paper": paper,
           "fctlab_version": str(__version__),
           "claims": [as_claim(c, i).to_dict() for i, c in enumerate(claims)]}
    validate(doc, f"{recipe} claims")
    return doc


def write_claims(out_dir: str | Path, recipe: str, scale: str, claims: Iterable[Claim], paper: str = "",
                 report_dir: str = "report") -> Path:
    """Write ``<out_dir>/report/claims.json`` (next to the report's index.html) for recipe ``recipe`` at
    ``scale``, citing ``paper``; returns its path."""
    from fctlab.results import write_json

    path = Path(out_dir) / report_dir / CLAIMS_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    write_json(path, claims_doc(recipe, scale, claims, paper))
    return path


def read_claims(path: str | Path) -> dict[str, Any]:
    """A claims.json file, validated (:class:`ClaimsError` naming the file otherwise)."""
    path = Path(path)
    try:
        doc = json.loads(path.read_text())
    except ValueError as e:
        raise ClaimsError(f"{path}: not JSON ({e})") from None
    validate(doc, str(path))
    return doc


def as_claim(item: Any, index: int = 0) -> Claim:
    """``item`` as a :class:`Claim`: itself, or a plain :class:`fctlab.report.PaperClaim` row (a statement with a
    number and no paper value or check) as a claim that is ``not_run`` for want of a check."""
    if isinstance(item, Claim):
        return item
    slug = re.sub(r"[^a-z0-9]+", "-", str(getattr(item, "statement", "claim")).lower()).strip("-")[:48] or "claim"
    return Claim(id=f"{index + 1}-{slug}".strip("-"), statement=item.statement, source=item.source or "-",
                 paper_value="not stated", value=item.value if _num(item.value) else None, unit=item.unit,
                 how=item.recipe or "-", check=near(0.0, 0.0), note=item.note,
                 not_run_reason="no check: the statement has no paper value to test against")


# --------------------------------------------------------------------------------------------------------------
# The docs' generated tables

DOCS_CLAIMS = "docs/claims"
_MARKER = re.compile(r"(<!-- claims:(?P<name>[a-z0-9-]+) -->\n)(?P<body>.*?)(<!-- /claims -->)", re.S)


def _cell(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def markdown_table(doc: Mapping[str, Any]) -> str:
    """The claims of one claims.json as a Markdown table (what docs/reproduce-*.md show)."""
    counts = {v: sum(r["verdict"] == v for r in doc["claims"]) for v in VERDICTS}
    lines = [
        f"Generated from `docs/claims/{doc['recipe']}-{doc['scale']}.json` (scale **{doc['scale']}**, fctlab "
        f"{doc['fctlab_version']}) by `python -m fctlab.claims docs`; do not edit by hand. "
        f"{counts['reproduced']} reproduced, {counts['differs']} differ, {counts['not_run']} not run.",
        "",
        "| id | the paper says | source | paper | fctlab | check | verdict | why it differs / note |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in doc["claims"]:
        c = Claim.from_dict(r)
        why = r["mechanism"]
        if r["cause"]:
            why = f"({r['cause'].replace('_', ' ')}) {why}".strip()
        if r["note"]:
            why = f"{why}; {r['note']}" if why else r["note"]
        lines.append("| " + " | ".join(_cell(x) for x in (
            r["id"], r["statement"], r["source"], c.paper_text(), c.value_text(), r["check_text"],
            f"**{r['verdict']}**" if r["verdict"] == "differs" else r["verdict"], why)) + " |")
    return "\n".join(lines) + "\n"


def docs_tables(root: str | Path) -> dict[Path, str]:
    """Each docs page with a claims marker and its text with the tables regenerated (unchanged pages left out)."""
    root = Path(root)
    out = {}
    for page in sorted((root / "docs").glob("*.md")):
        text = page.read_text()

        def sub(m: re.Match[str]) -> str:
            doc = read_claims(root / DOCS_CLAIMS / f"{m.group('name')}.json")
            return m.group(1) + markdown_table(doc) + m.group(4)

        new = _MARKER.sub(sub, text)
        if new != text:
            out[page] = new
    return out


def repo_root() -> Path:
    """The source checkout this package runs from (the folder with docs/ and pyproject.toml), else the current
    folder: where the generated pages live (claims tables here, the scheme matrix in fctlab.frontdoor)."""
    here = Path(__file__).resolve()
    for p in here.parents:
        if (p / "docs").is_dir() and (p / "pyproject.toml").is_file():
            return p
    return Path.cwd()


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] not in ("docs", "check", "write"):
        print("usage: python -m fctlab.claims docs | check | write RESULTS_DIR RECIPE SCALE [DOCS_JSON]",
              file=sys.stderr)
        return 2
    # run as ``python -m fctlab.claims`` this file is __main__, a second copy of the module: use the one the
    # recipes import, so that their Claim records are this module's
    import fctlab.claims as mod

    root = mod.repo_root()
    if args[0] == "write":
        # the claims of an existing results folder (no runs): <results>/report/claims.json, and optionally a copy
        from fctlab import recipes

        results, name, scale = args[1], args[2], args[3]
        recipe = recipes.get(name)
        path = mod.write_claims(results, name, scale, recipe.claims(results), recipe.paper)
        if len(args) > 4:
            Path(args[4]).write_text(path.read_text())
        print(path)
        return 0
    for path in sorted((root / mod.DOCS_CLAIMS).glob("*.json")):
        mod.read_claims(path)
    changed = mod.docs_tables(root)
    if args[0] == "check":
        for page in changed:
            print(f"{page}: its claims tables are out of date (python -m fctlab.claims docs)", file=sys.stderr)
        return 1 if changed else 0
    for page, text in changed.items():
        page.write_text(text)
        print(f"rewrote {page}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
