"""The reference pages generated from the code: ``python -m fctlab.reference`` writes them, ``--check`` exits 1
when one is stale (tests/test_reference.py runs it).

* docs/reference/keys.md and docs/reference/experiment.schema.json: every key of an experiment file. The engine's
  sections come from the JSON Schema the engine emits (``fctlab._core.config_schema()``: ``schemars`` derives it
  from the config types in crates/sim/src/config/, so a key's meaning is its doc comment, its default the
  engine's ``Default``, an enum's values and their doc comments its allowed values); ``[workload]`` and
  ``[output]`` from the pydantic models of :mod:`fctlab.config` (a field's docstring is its description). The
  engine's range checks are code, not schema: the page's "checked" column is read from the calls that make them
  in crates/sim/src/config/mod.rs (``check_int``, ``check_pos``, ``check_delay`` and ``err(key, "must ...")``),
  found by pattern; a key the checks name that the schema lacks fails the test. Units come from the key's
  suffix (``_ns``, ``_bytes``, ...), the naming rule every key follows.
* docs/reference/trace-columns.md: the trace file's columns, from :data:`fctlab.workloads.trace.TRACE_COLUMNS`
  (the list :func:`~fctlab.workloads.trace.read_trace` checks files against) and the engine's flow columns
  (``_core.flow_columns()``) they become; which schemes read a column is computed from the scheme rows.
* docs/reference/schemes.md: the engine's scheme table (``_core.scheme_rows()``, :mod:`fctlab.scheme_table`),
  with each scheme's defaults per preset.
* docs/reference/results.md: flows.parquet's columns and summary.json's keys, from the tables in
  :mod:`fctlab.results`, which tests check against what a run writes.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
DOCS = REPO / "docs"
REFERENCE = DOCS / "reference"
CONFIG_SOURCE = REPO / "crates" / "sim" / "src" / "config" / "mod.rs"

GENERATED = "Generated from the code by `python -m fctlab.reference`; do not edit (a test fails when it is stale)."

#: Key suffix -> unit: every key that carries a unit says it in its name.
UNITS = (
    ("_ns", "ns"),
    ("_us", "us"),
    ("_ms", "ms"),
    ("_ps", "ps"),
    ("_gbps", "Gbit/s"),
    ("_bps", "bit/s"),
    ("_hz", "Hz"),
    ("_bytes", "bytes"),
    ("_packets", "packets"),
    ("_segments", "segments"),
    ("_rtts", "RTTs"),
    ("_bdp", "BDPs"),
)


def unit_of(key: str) -> str:
    """The unit a key's name states ("" for none)."""
    for suffix, unit in UNITS:
        if key.endswith(suffix):
            return unit
    return ""


# --------------------------------------------------------------------------------------------------------------
# Markdown helpers


def _outside_code(text: str, fix: Callable[[str], str]) -> str:
    """Apply ``fix`` to the parts of ``text`` outside backtick code spans."""
    parts = text.split("`")
    return "`".join(fix(p) if i % 2 == 0 else p for i, p in enumerate(parts))


def md_text(text: str | None) -> str:
    """A doc comment or docstring as one line of Markdown for a table cell: whitespace collapsed, rustdoc links
    (``[`X`]``) and reST literals (````x````) made code spans, ``|`` escaped and a ``<`` that could open an HTML
    tag outside code spans too."""
    if not text:
        return ""
    text = " ".join(text.split())
    text = text.replace("``", "`")
    text = re.sub(r"\[(`[^`]+`)\](?!\()", r"\1", text)
    text = _outside_code(text, lambda s: re.sub(r"<(?=[A-Za-z/!?])", "&lt;", s))
    return text.replace("|", "\\|")


def code(value: Any) -> str:
    """A value as inline code (JSON spelling: strings quoted, ``true``)."""
    return f"`{json.dumps(value)}`"


def table(header: Sequence[str], rows: Iterable[Sequence[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cell or " " for cell in row) + " |" for row in rows]
    return lines


# --------------------------------------------------------------------------------------------------------------
# The engine's schema and range checks


def engine_schema() -> dict[str, Any]:
    from fctlab import _core

    return dict(json.loads(_core.config_schema()))


def _const(expr: str, consts: dict[str, str]) -> str:
    """A bound as written in the range checks: a literal or named constant evaluated, an expression of other keys
    written with their dotted names."""
    expr = re.sub(r"\s+as u\d+", "", expr.strip())
    expr = consts.get(expr, expr)
    expr = re.sub(r"\s+as u\d+", "", expr.strip())
    number = expr.replace("_", "")
    if m := re.fullmatch(r"1\s*<<\s*(\d+)", number):
        return f"{1 << int(m.group(1)):,}"
    if number == "u32::MAX":
        return f"{2**32 - 1:,}"
    if re.fullmatch(r"\d+", number):
        return f"{int(number):,}"
    if re.fullmatch(r"\d+\.0", number):
        return f"{int(float(number)):,}"
    if re.fullmatch(r"[\d.]+e\d+", number):
        return number
    expr = re.sub(r"\bsc\.", "scheme.", expr.replace("self.", ""))
    return f"`{expr}`"


def range_checks(source: str | None = None) -> dict[str, list[str]]:
    """What the engine's range checks (crates/sim/src/config/mod.rs) allow, by dotted key (a topology kind's keys
    as ``topology.<kind>.<key>``), as phrases: the bounds of its ``check_int``/``check_pos``/``check_delay``
    calls and the messages of its ``err(key, "must ...")`` refusals."""
    text = CONFIG_SOURCE.read_text() if source is None else source
    consts = {m.group(1): m.group(2) for m in re.finditer(r"(?:const|let) (\w+)(?:: \w+)? = ([^;]+);", text)}
    # the topology's checks are one match arm per kind: their keys are named topology.<kind>.<key> here
    arms = [(m.start(), _snake(m.group(1))) for m in re.finditer(r"TopologyConfig::(\w+)\(t\) => \{", text)]
    arms_end = text.find("CheckPoint::Topology)")

    def kind_key(key: str, at: int) -> str:
        if not key.startswith("topology.") or not arms or not arms[0][0] < at < arms_end:
            return key
        kind = [k for start, k in arms if start < at][-1]
        return f"topology.{kind}.{key.removeprefix('topology.')}"

    found: dict[str, list[str]] = {}

    def add(key: str, phrase: str) -> None:
        if phrase not in found.setdefault(key, []):
            found[key].append(phrase)

    def calls(body: str, key_pattern: str) -> Iterable[tuple[str, str, list[str]]]:
        for m in re.finditer(rf"(check_int|check_pos|check_delay)\(\s*({key_pattern}),([^;]*?)\)\?;", body, re.S):
            args = [a.strip() for a in m.group(3).split(",")]
            yield m.group(1), kind_key(m.group(2).strip('"'), m.start()), args

    def phrase(fn: str, args: list[str]) -> str:
        if fn == "check_int":
            return f"{_const(args[1], consts)} to {_const(args[2], consts)}"
        if fn == "check_pos":
            return f"> 0 and <= {_const(args[1], consts)}"
        return "0 to 1e9"

    for fn, key, args in calls(text, r'"[a-z0-9_.]+"'):
        add(key, phrase(fn, args))
    # loops over (key, value) pairs checked alike
    for m in re.finditer(r"for \(key, v\) in \[(.*?)\]\s*\{(.*?)\n\s{8}\}", text, re.S):
        keys = re.findall(r'\(\s*"([a-z0-9_.]+)",', m.group(1))
        for fn, _, args in calls(m.group(2), "key"):
            for key in keys:
                add(key, phrase(fn, args))
        if not list(calls(m.group(2), "key")):
            body = re.search(r'format!\("((?:[^"\\]|\\.)*)"', m.group(2))
            if body and body.group(1).startswith("must"):
                for key in keys:
                    add(key, _message(body.group(1)))
    for m in re.finditer(r'err\(\s*"([a-z0-9_.]+)",\s*(?:format!\(\s*)?"((?:[^"\\]|\\.)*)"', text, re.S):
        if m.group(2).startswith("must"):
            msg = _message(m.group(2))
            if msg:
                add(kind_key(m.group(1), m.start()), msg)
    return found


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)([A-Z])", r"_\1", name).lower()


def _message(text: str) -> str:
    """A refusal's message as a phrase: continuation lines joined, the value it quotes cut off."""
    text = re.sub(r"\\\n\s*", "", text).replace('\\"', '"')
    text = text.split(" (got")[0]
    text = re.sub(r"\s*\([^()]*\{[^}]*\}[^()]*\)", "", text)  # a parenthesis that quotes a value
    return "" if "{" in text else text


# --------------------------------------------------------------------------------------------------------------
# docs/reference/keys.md


def _resolve(schema: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    """A property's schema with its ``$ref`` followed (the property's own keys win)."""
    if "$ref" in node:
        target = schema["$defs"][node["$ref"].split("/")[-1]]
        return {**target, **{k: v for k, v in node.items() if k != "$ref"}}
    if "anyOf" in node:  # an optional enum: Option<T> is anyOf [T's $ref, null]
        return {**node, "anyOf": [_resolve(schema, a) for a in node["anyOf"]]}
    return node


def _variants(node: dict[str, Any]) -> list[tuple[Any, str]]:
    """An enum's values and their descriptions (empty for a non-enum)."""
    if "enum" in node:
        return [(v, "") for v in node["enum"]]
    out: list[tuple[Any, str]] = []
    for alt in node.get("oneOf") or node.get("anyOf") or []:
        if "const" in alt:
            out.append((alt["const"], alt.get("description", "")))
        elif "enum" in alt and len(alt["enum"]) == 1:
            out.append((alt["enum"][0], alt.get("description", "")))
        elif "enum" in alt or "oneOf" in alt:
            out += _variants(alt)
    return out


def _type_name(node: dict[str, Any]) -> str:
    """The type of a key's value in words, ", optional" when it may be null (left out)."""
    types = node.get("type")
    alts = node.get("anyOf") or node.get("oneOf") or []
    nullable = (isinstance(types, list) and "null" in types) or any(a.get("type") == "null" for a in alts)
    if _variants(node):
        name = "string"
    elif isinstance(types, list):
        name = _type_name({**node, "type": next((t for t in types if t != "null"), "null")})
    elif alts:
        name = _type_name(next((a for a in alts if a.get("type") != "null"), {}))
    elif types == "array":
        name = f"list of {_type_name(node.get('items', {}))}s"
    else:
        name = str(types)
    return f"{name}, optional" if nullable and not name.endswith("optional") else name


def _bounds(node: dict[str, Any]) -> str:
    """The bounds a pydantic field states (``ge``, ``gt``, ``le``)."""
    alts = [a for a in node.get("anyOf", [node]) if a.get("type") != "null"]
    if not alts:
        return ""
    n = alts[0]
    said = [f"{op} {n[key]:g}" for key, op in
            (("minimum", ">="), ("exclusiveMinimum", ">"), ("maximum", "<="), ("exclusiveMaximum", "<")) if key in n]
    return " and ".join(said)


def _default(value: Any) -> str:
    return "(none)" if value is None else code(value)


class KeyRow:
    """One key of the reference: dotted name and its table cells."""

    def __init__(self, key: str, node: dict[str, Any], schema: dict[str, Any], checks: list[str] | None = None):
        self.key = key
        self.node = _resolve(schema, node)
        self.variants = _variants(self.node)
        self.meaning = node.get("description") or self.node.get("description") or ""
        allowed = ", ".join(code(v) for v, _ in self.variants)
        # (the schema's bounds are the type's, e.g. >= 0 for an unsigned field: shown where no check says more)
        self.allowed = "; ".join(x for x in [allowed, *(checks or [_bounds(self.node)])] if x)

    def cells(self) -> list[str]:
        name = self.key.rsplit(".", 1)[-1]
        unit = "" if self.variants else unit_of(name)
        return [f"`{name}`", _type_name(self.node), unit, _default(self.node.get("default")),
                md_text(self.allowed), md_text(self.meaning)]


KEY_HEADER = ("key", "type", "unit", "default", "allowed", "meaning")


def _section(title: str, intro: str, rows: list[KeyRow]) -> list[str]:
    lines = [f"## {title}", ""]
    if intro:
        lines += [md_text(intro), ""]
    lines += table(KEY_HEADER, (r.cells() for r in rows))
    described = [r for r in rows if any(d for _, d in r.variants)]
    for r in described:
        lines += ["", f"Values of `{r.key}`:", ""]
        lines += [f"- {code(v)}: {md_text(d) or '(no description)'}" for v, d in r.variants]
    return lines + [""]


def key_rows() -> dict[str, list[KeyRow]]:
    """Every key of an experiment file by section (``topology.<kind>`` for the topology kinds' keys), in the
    order the page lists them."""
    from fctlab.config import OutputConfig, WorkloadConfig

    schema = engine_schema()
    checks = range_checks()
    sections: dict[str, list[KeyRow]] = {"": [KeyRow("seed", schema["properties"]["seed"], schema, checks.get("seed"))]}
    for section, prop in schema["properties"].items():
        if section == "seed":
            continue
        node = _resolve(schema, prop)
        if section == "topology":
            for alt in node["oneOf"]:
                kind = alt["properties"]["kind"]["const"]
                sections[f"topology.{kind}"] = [
                    KeyRow(f"topology.{key}", p, schema, checks.get(f"topology.{kind}.{key}"))
                    for key, p in alt["properties"].items() if key != "kind"
                ]
            continue
        sections[section] = [
            KeyRow(f"{section}.{key}", p, schema, checks.get(f"{section}.{key}"))
            for key, p in node["properties"].items()
        ]
    for section, model in (("workload", WorkloadConfig), ("output", OutputConfig)):
        py = model.model_json_schema()
        sections[section] = [KeyRow(f"{section}.{key}", p, py) for key, p in py["properties"].items()]
    return sections


def keys_without_meaning() -> list[str]:
    """Keys whose doc comment or docstring is missing (the test requires none)."""
    return [r.key for rows in key_rows().values() for r in rows if not r.meaning.strip()]


def _preset_changes() -> list[list[str]]:
    """Per scheme and preset, the keys its preset sets to other values than the engine's defaults."""
    from fctlab import _core
    from fctlab.scheme_table import rows

    base = json.loads(_core.defaults())
    out = []
    for row in rows():
        for preset in row["presets"]:
            cfg = json.loads(_core.scheme_defaults(row["name"], preset))
            changed = [
                f"`{section}.{key}` = {code(value)}"
                for section, values in cfg.items() if isinstance(values, dict)
                for key, value in values.items()
                if (section, key) not in (("scheme", "name"), ("scheme", "preset"))
                and base.get(section, {}).get(key) != value
            ]
            out.append([f"`{row['name']}`", f"`{preset}`", "; ".join(changed) or "(none)"])
    return out


def keys_markdown() -> str:
    from fctlab.config import ENGINE_SECTIONS, TOPOLOGY_SHORTHANDS

    schema = engine_schema()
    sections = key_rows()
    topology = _resolve(schema, schema["properties"]["topology"])
    default_kind = schema["properties"]["topology"]["default"]["kind"]
    lines = [
        "# Configuration keys",
        "",
        GENERATED,
        "",
        "Every key of an experiment file, by section. The engine's sections (`"
        + "`, `".join(f"[{s}]" for s in ENGINE_SECTIONS)
        + "`) are described by the engine's own JSON Schema, [experiment.schema.json](experiment.schema.json) "
        "(`fctlab._core.config_schema()`): a key's meaning is the doc comment on its field in "
        "`crates/sim/src/config/`, its default the engine's default. A scheme's preset fills other values for the "
        "keys a config leaves out ([below](#defaults-a-schemes-preset-sets)). *allowed* lists an enum's values and "
        "what the engine's range checks accept; checks that relate several keys are in the meanings. `[workload]` "
        "and `[output]` are read by the Python front (`fctlab.config`). How the sections fit together: "
        "[the experiment file](../experiment.md).",
        "",
        "Units: a key's name ends in its unit (`_ns`, `_us`, `_ms`, `_gbps`, `_bps`, `_bytes`, `_packets`, `_rtts` "
        "(base RTTs), `_bdp` (bandwidth-delay products) ...); a key without a unit suffix is a count, a ratio or a "
        "choice. In a TOML file an *optional* key is left out for \"none\".",
        "",
    ]
    lines += _section("Top level", "", sections[""])
    lines += ["## `[topology]`", ""]
    lines.append(md_text(topology.get("description", "")))
    lines += ["", f"`kind` chooses the shape (default {code(default_kind)}); each kind has its own keys and "
              "defaults:", ""]
    for alt in topology["oneOf"]:
        kind = alt["properties"]["kind"]["const"]
        lines.append(f"- [{code(kind)}](#kind-{kind}): {md_text(alt.get('description', ''))}")
    lines += ["", "Two shorthands fill the host and core keys of a kind when those are not given (`fctlab.config`): "
              + "; ".join(f"`{s}` sets " + " and ".join(f"`{k}`" for k in keys)
                          for s, keys in TOPOLOGY_SHORTHANDS.items())
              + ".", ""]
    for alt in topology["oneOf"]:
        kind = alt["properties"]["kind"]["const"]
        lines += [f"### kind {kind}", ""]
        lines += table(KEY_HEADER, (r.cells() for r in sections[f"topology.{kind}"]))
        lines.append("")
    for section in ENGINE_SECTIONS:
        if section == "topology":
            continue
        node = _resolve(schema, schema["properties"][section])
        intro = node.get("description") or schema["properties"][section].get("description", "")
        lines += _section(f"`[{section}]`", intro, sections[section])
    from fctlab.config import OutputConfig, WorkloadConfig

    lines += _section("`[workload]`", WorkloadConfig.__doc__ or "", sections["workload"])
    lines += _section("`[output]`", OutputConfig.__doc__ or "", sections["output"])
    lines += [
        "## Defaults a scheme's preset sets",
        "",
        "The keys a config leaves out take the scheme's published values for its `scheme.preset` (engine: "
        "`scheme_defaults`), then the defaults above. Per scheme and preset, the keys whose value differs from the "
        "defaults above (`*_rtts` and `*_bdp` keys are resolved against the fabric the run builds):",
        "",
    ]
    lines += table(("scheme", "preset", "keys set"), _preset_changes())
    return "\n".join(lines) + "\n"


def experiment_schema() -> dict[str, Any]:
    """The JSON Schema of a whole experiment file: the engine's sections (its own schema), ``[workload]`` and
    ``[output]`` (the pydantic models), the top-level ``name``/``label``, the topology shorthands, and the
    ``[sweep]`` table that only ``fctlab sweep`` reads."""
    from fctlab.config import TOPOLOGY_SHORTHANDS, OutputConfig, WorkloadConfig

    schema = engine_schema()
    schema["title"] = "fctlab experiment"
    schema["description"] = (
        "An fctlab experiment file (TOML). The engine's sections as the engine parses them (crates/sim/src/config/); "
        "[workload] and [output] as fctlab.config reads them. Generated by python -m fctlab.reference."
    )
    props = schema["properties"]
    props["name"] = {"type": "string", "description": "The experiment's name (results and reports)."}
    props["label"] = {"type": "string", "description": "The run's series label in reports (default: the scheme)."}
    props["sweep"] = {"type": "object", "description": "Sweep axes: read by fctlab sweep only (docs/experiment.md)."}
    for section, model in (("workload", WorkloadConfig), ("output", OutputConfig)):
        py = model.model_json_schema()
        schema["$defs"].update(py.pop("$defs", {}))
        name = model.__name__
        schema["$defs"][name] = py
        props[section] = {"$ref": f"#/$defs/{name}", "description": md_text(model.__doc__).split(":")[0]}
    for alt in schema["$defs"]["TopologyConfig"]["oneOf"]:
        for shorthand, keys in TOPOLOGY_SHORTHANDS.items():
            takes = [k for k in keys if k in alt["properties"]]
            if takes:
                alt["properties"][shorthand] = {
                    "type": "number",
                    "description": f"Shorthand (fctlab.config): sets {' and '.join(takes)} when not given.",
                }
    return schema


# --------------------------------------------------------------------------------------------------------------
# docs/reference/trace-columns.md


def trace_columns_markdown() -> str:
    from fctlab import _core
    from fctlab.scheme_table import rows
    from fctlab.workloads.trace import TRACE_COLUMNS

    engine = {c["name"]: c for c in json.loads(_core.flow_columns())}
    schemes = rows()
    summary, details = [], []
    for c in TRACE_COLUMNS:
        readers = [r["name"] for r in schemes if c.reads(r)]
        who = "every scheme" if len(readers) == len(schemes) else ", ".join(f"`{n}`" for n in readers)
        if c.when:
            who += f"; {c.when}"
        summary.append([
            f"[`{c.name}`](#{c.name})", c.type, c.unit, "yes" if c.required else "no",
            md_text(c.empty) if c.empty else "refused", f"`{c.engine}` ({engine[c.engine]['dtype']})",
        ])
        details += [f"### {c.name}", "", md_text(c.meaning[:1].upper() + c.meaning[1:]) + ".", "",
                    f"Read by: {md_text(who)}.", ""]
    lines = [
        "# Trace columns",
        "",
        GENERATED,
        "",
        "A trace (`workload.trace`, a `.csv` or `.parquet` file) gives the flows of a run, one row each. These are "
        "its columns: the first four are required, any other column is refused. Errors name the column and the "
        "first bad row (data rows count from 1; in a CSV the header is line 1). *empty cell* says what an empty "
        "cell (NaN) means where one is allowed; *engine column* is the flow column the engine receives "
        "(`fctlab._core.flow_columns()`). Under each column, which schemes read it: the others accept it and "
        "ignore it, except where the engine refuses it (a source route or a generation rate for a scheme that "
        "cannot take them).",
        "",
    ]
    lines += table(("column", "type", "unit", "required", "empty cell", "engine column"), summary)
    lines += [
        "",
        "Host ids are checked against the topology (0 to hosts - 1; [keys](keys.md#topology)). Flows are "
        "numbered by start time (`flow_id` in the results); `after_flow` is renumbered with them.",
        "",
        "## Each column",
        "",
    ]
    return "\n".join(lines + details).rstrip() + "\n"


# --------------------------------------------------------------------------------------------------------------
# docs/reference/schemes.md


def schemes_markdown() -> str:
    from fctlab.scheme_table import SCALING_NOTE, defaults_shown, rows

    def flow_level(r: dict[str, Any]) -> str:
        return md_text(r["flow_level"]["text"]) if r["flow_level"] else "no"

    def queue(r: dict[str, Any]) -> str:
        return "strict-priority FIFOs" if r["rank_queue"] == "none" else f"rank queue ({r['rank_queue']})"

    lines = [
        "# Schemes",
        "",
        GENERATED,
        "",
        "The schemes the engine runs (`scheme.name`; `fctlab schemes` prints the same rows), from the engine's "
        "table of scheme rows (`config::SCHEMES`). *family* is the transport family that runs it, *protocol* what "
        "its hosts speak, *tagging* how hosts choose a packet's priority, *switch queue* the switches' discipline, "
        "*flow level* the flow level's model of it (`run.level = \"flow\"`). How each works and its sources: "
        "[schemes](../schemes.md).",
        "",
    ]
    body = [
        [f"`{r['name']}`", r["family"], r["protocol"], r["tagging"], queue(r), flow_level(r),
         ", ".join(f"`{p}`" for p in r["presets"]), md_text(r["summary"])]
        for r in rows()
    ]
    lines += table(("scheme", "family", "protocol", "tagging", "switch queue", "flow level", "presets", "summary"),
                   body)
    lines += ["", "## Defaults", "", md_text(SCALING_NOTE), ""]
    for r in rows():
        presets = r["presets"]
        shown = {p: defaults_shown(r, p) for p in presets}
        keys = list(shown[presets[0]])
        lines += [f"### {r['name']}", ""]
        header = ("key", *(f"`{p}`" for p in presets)) if len(presets) > 1 else ("key", "default")

        def cell(v: Any) -> str:
            return md_text(v) if isinstance(v, str) and " " in v else code(v)

        lines += table(header, ([f"`{k}`", *(cell(shown[p].get(k)) for p in presets)] for k in keys))
        lines.append("")
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------------------------
# docs/reference/results.md


def results_markdown() -> str:
    from fctlab.results import BIN_KEYS, EXTRA_RESULT_COLUMNS, FLOW_RESULT_COLUMNS, SUMMARY_KEYS

    def cols(fields: Iterable[Any]) -> list[str]:
        return table(("column", "type", "unit", "meaning"),
                     ([f"`{f.name}`", f.dtype, f.unit, md_text(f.meaning)] for f in fields))

    def keys(fields: Iterable[Any]) -> list[str]:
        return table(("key", "unit", "meaning"), ([f"`{f.name}`", f.unit, md_text(f.meaning)] for f in fields))

    lines = [
        "# Results",
        "",
        GENERATED,
        "",
        "What a run writes (`fctlab run`, `fctlab.write_results`): `flows.parquet` and `summary.json`, from the "
        "tables in `fctlab.results` that tests check against a run's output. Definitions (FCT, ideal FCT, "
        "slowdown, size bins) and the other files: [results](../results.md).",
        "",
        "## `flows.parquet` columns",
        "",
        "One row per flow, in `flow_id` order. Types are pandas dtypes (`boolean`: nullable). Times are ns as "
        "float64, exact to the picosecond; NaN (null in Parquet) marks a value that does not exist.",
        "",
    ]
    lines += cols(FLOW_RESULT_COLUMNS)
    lines += ["", "Columns that follow only when the workload gives them:", ""]
    lines += cols(EXTRA_RESULT_COLUMNS)
    lines += ["", "## `summary.json` keys", ""]
    lines += keys(SUMMARY_KEYS)
    lines += ["", "### Each bin", "", "`bins.small`, `bins.medium`, `bins.large` and `bins.all` each hold:", ""]
    lines += keys(BIN_KEYS)
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------------------------------------------
# All pages


def pages() -> dict[Path, str]:
    """Every generated file and its text."""
    return {
        REFERENCE / "keys.md": keys_markdown(),
        REFERENCE / "experiment.schema.json": json.dumps(experiment_schema(), indent=1, sort_keys=True) + "\n",
        REFERENCE / "trace-columns.md": trace_columns_markdown(),
        REFERENCE / "schemes.md": schemes_markdown(),
        REFERENCE / "results.md": results_markdown(),
    }


def stale() -> list[Path]:
    """The generated files whose text differs from what the code gives now (or that are missing)."""
    return [p for p, text in pages().items() if not p.is_file() or p.read_text() != text]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m fctlab.reference", description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if a page is stale")
    args = parser.parse_args(argv)
    if args.check:
        old = stale()
        for p in old:
            print(f"stale: {p.relative_to(REPO)} (regenerate: python -m fctlab.reference)", file=sys.stderr)
        return 1 if old else 0
    REFERENCE.mkdir(parents=True, exist_ok=True)
    for p, text in pages().items():
        if not p.is_file() or p.read_text() != text:
            p.write_text(text)
            print(f"wrote {p.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
