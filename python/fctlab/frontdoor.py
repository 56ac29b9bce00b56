"""The feature matrix of README.md and docs/index.md: one row per scheme the engine runs, saying whether it runs
at the packet level and at the flow level, which recipe reproduces its paper and how many of that paper's
claims fctlab reproduces. Generated, never written by hand:

- the schemes, their order and whether each has a flow-level model come from the engine's scheme rows
  (:func:`fctlab.scheme_table.rows`, what ``fctlab schemes`` prints);
- the recipes come from :data:`fctlab.recipes.REGISTRY`, and the claim counts from the committed
  ``docs/claims/*.json`` (the same files that fill the claims tables of docs/reproduce-*.md);
- which page documents a scheme, and whether that page lists known gaps for it, come from the scheme pages
  themselves: each ``docs/schemes-*.md`` names the schemes it covers in a ``<!-- schemes: a b -->`` line and,
  in its "Known gaps" section, those with parts not built or not matching their paper in a
  ``<!-- known-gaps: a b -->`` line. No scheme is named here (tests/test_scheme_names.py).

``python -m fctlab.frontdoor`` rewrites the matrices between their markers; ``python -m fctlab.frontdoor check``
exits 1 when one is stale (tests/test_frontdoor.py does the same).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any, Sequence

#: The scheme pages, relative to the repository root, and the markers read from them.
SCHEME_PAGES = "docs/schemes-*.md"
_COVERS = re.compile(r"^<!-- schemes: ([a-z0-9 -]+) -->$", re.M)
_GAPS = re.compile(r"^<!-- known-gaps: ([a-z0-9 -]+) -->$", re.M)


def scheme_pages(root: Path) -> tuple[dict[str, str], set[str]]:
    """Which page (relative to docs/) documents each scheme, and the schemes with known gaps on their page;
    ValueError for a scheme on two pages, or with gaps on a page that does not cover it."""
    page_of: dict[str, str] = {}
    gaps: set[str] = set()
    for path in sorted(root.glob(SCHEME_PAGES)):
        text = path.read_text(encoding="utf-8")
        covered = {n for m in _COVERS.finditer(text) for n in m.group(1).split()}
        for name in covered:
            if name in page_of:
                raise ValueError(f"scheme {name!r} is covered by docs/{page_of[name]} and docs/{path.name}")
            page_of[name] = path.name
        listed = {n for m in _GAPS.finditer(text) for n in m.group(1).split()}
        if listed - covered:
            raise ValueError(f"docs/{path.name}: known gaps for schemes it does not cover: {sorted(listed - covered)}")
        gaps |= listed
    return page_of, gaps

#: The symbols and what they mean (the legend printed under the matrix).
YES, PARTLY, NO, NONE = "✓", "◐", "✗", "–"
LEGEND = (
    f"{YES} runs · {PARTLY} runs, with known gaps (the symbol links to them) · {NO} not built yet · "
    f"{NONE} none (a baseline or variant without a recipe or claims of its own). Flow level: fluid rates without "
    f"packets; {YES} within {{tol}}% of the packet level on the mean and p99 of every size bin in every cell of "
    f"the calibration matrix, {PARTLY} beyond that in some cell or not in the matrix (the symbol links to the "
    "per-bin errors; hover for the worst cell). "
    "Claims: of the paper's statements its recipe checks at `small` scale, how many fctlab reproduces / how many "
    "it ran; the recipe's page says why each other one differs."
)

#: The calibration matrix's results (benchmarks/calibrate_matrix.py), and the error a flow level may have in every
#: one of a scheme's cells to be marked as within it.
CALIBRATION = Path("benchmarks") / "results" / "calibrate_matrix.jsonl"
CALIBRATION_TOL = 10.0
CALIBRATION_ANCHOR = "flow-level.md#the-calibration-matrix"


def calibration_worst(root: Path) -> dict[str, tuple[float, str]]:
    """Per scheme, the calibration matrix's largest flow-level error in percent (flow / packet - 1 of the mean or
    the p99 of the small, medium or large bin) and where it is, over each cell's latest measurement (a cell is
    its key: scheme, load, initial window, routing, fabric, flows and any further setting)."""
    path = root / CALIBRATION
    latest: dict[str, dict[str, Any]] = {}
    if path.exists():
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                rec = json.loads(line)
                latest[json.dumps(rec["key"])] = rec
    worst: dict[str, tuple[float, str]] = {}
    for rec in latest.values():
        for b in ("small", "medium", "large"):
            for stat in ("mean_fct_ns", "p99_fct_ns"):
                pk, fl = rec["packet"][b].get(stat), rec["flow"][b].get(stat)
                if not pk or fl is None:
                    continue
                err = 100.0 * (fl / pk - 1.0)
                scheme = rec["key"][0]
                if scheme not in worst or abs(err) > abs(worst[scheme][0]):
                    what = f"{b} {'mean' if stat == 'mean_fct_ns' else 'p99'}"
                    worst[scheme] = (err, f"{what}, {', '.join(str(k) for k in rec['key'][1:])}")
    return worst

MARKERS = ("<!-- scheme-matrix:begin (generated by python -m fctlab.frontdoor; do not edit) -->",
           "<!-- scheme-matrix:end -->")

#: The files holding a matrix, and the prefix of their links into docs/.
TARGETS = {"README.md": "docs/", "docs/index.md": ""}


def _recipes_of(scheme: str, recipes: Sequence[str]) -> list[str]:
    """The recipes reproducing ``scheme``'s own paper: the recipe of its name, or of its name's first part for a
    variant (``pdq-es`` -> ``pdq``, ``rax-plus`` -> ``rax``), or named after it (``qclimb`` -> ``qclimb-sim``)."""
    own = [r for r in recipes if r == scheme or r.startswith(scheme + "-")]
    if own:
        return own
    return [r for r in recipes if scheme.startswith(r + "-")]


def _claims(root: Path) -> dict[str, dict[str, Any]]:
    """The committed claims documents by recipe name."""
    out = {}
    for path in sorted((root / "docs" / "claims").glob("*.json")):
        doc = json.loads(path.read_text(encoding="utf-8"))
        out[doc["recipe"]] = doc
    return out


def matrix(root: Path, prefix: str) -> str:
    """The Markdown matrix and its legend; links into docs/ start with ``prefix``."""
    from fctlab import recipes as registry
    from fctlab.scheme_table import rows

    names = [r for r in registry.names() if r != "demo"]
    claims = _claims(root)
    page_of, gaps = scheme_pages(root)
    worst = calibration_worst(root)
    lines = ["| scheme | packet level | flow level | recipe | paper claims reproduced |", "|---|:-:|:-:|---|---|"]
    for row in rows():
        name = row["name"]
        if name not in page_of:
            raise ValueError(f"scheme {name!r} is on no scheme page (a <!-- schemes: ... --> line of {SCHEME_PAGES})")
        page = page_of[name]
        packet = f"[{PARTLY}]({prefix}{page}#known-gaps)" if name in gaps else YES
        if row["flow_level"] is None:
            flow = NO
        elif name in worst and abs(worst[name][0]) <= CALIBRATION_TOL:
            flow = YES
        else:
            title = (f"worst cell {worst[name][0]:+.0f}% ({worst[name][1]})" if name in worst
                     else "not in the calibration matrix")
            flow = f'[{PARTLY}]({prefix}{CALIBRATION_ANCHOR} "{title}")'
        own = _recipes_of(name, names)
        recipe_pages = {r: f"reproduce-{r.split('-')[0]}.md" for r in own}
        recipe = ", ".join(f"[{r}]({prefix}{recipe_pages[r]})" for r in own) or NONE
        counts = []
        for r in own:
            doc = claims.get(r)
            # a variant's recipe is its base scheme's: its claims are counted on that row
            if doc is None or not (r == name or r.startswith(name + "-")):
                continue
            verdicts = [c["verdict"] for c in doc["claims"]]
            ran = sum(v != "not_run" for v in verdicts)
            counts.append(f"{sum(v == 'reproduced' for v in verdicts)} / {ran}"
                          + (f" ({r.split('-', 1)[1]})" if r != name else ""))
        lines.append(f"| [{name}]({prefix}{page}) | {packet} | {flow} | {recipe} | {', '.join(counts) or NONE} |")
    return "\n".join(lines) + "\n\n" + LEGEND.replace("{prefix}", prefix).replace("{tol}", f"{CALIBRATION_TOL:g}") + "\n"


_BLOCK = re.compile(re.escape(MARKERS[0]) + r"\n.*?" + re.escape(MARKERS[1]), re.S)


def render(root: Path) -> dict[Path, str]:
    """Each target whose matrix is stale, with its new text."""
    out = {}
    for rel, prefix in TARGETS.items():
        path = root / rel
        text = path.read_text(encoding="utf-8")
        if not _BLOCK.search(text):
            raise ValueError(f"{rel}: no scheme-matrix markers")
        new = _BLOCK.sub(lambda _m: f"{MARKERS[0]}\n{matrix(root, prefix)}{MARKERS[1]}", text)
        if new != text:
            out[path] = new
    return out


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    from fctlab.claims import repo_root

    stale = render(repo_root())
    if args[:1] == ["check"]:
        for path in stale:
            print(f"{path}: its scheme matrix is out of date (python -m fctlab.frontdoor)", file=sys.stderr)
        return 1 if stale else 0
    for path, text in stale.items():
        path.write_text(text, encoding="utf-8")
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
