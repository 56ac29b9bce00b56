"""The engine's scheme rows, and the ``fctlab schemes`` text rendered from them, agree for every scheme."""

from __future__ import annotations

import json

from fctlab import _core, scheme_table


def blocks() -> dict[str, list[str]]:
    """render()'s lines grouped by scheme: the summary line first, then its defaults lines."""
    out: dict[str, list[str]] = {}
    name = None
    for line in scheme_table.render().splitlines():
        if not line.startswith("  "):
            name = line.split(":", 1)[0]
            out[name] = [line]
        else:
            assert name is not None
            out[name].append(line)
    return out


def parse_defaults(line: str) -> tuple[str, dict[str, str]]:
    label, rest = line.strip().split(": ", 1)
    pairs = dict(part.split(" = ", 1) for part in rest.split(", ") if " = " in part)
    return label, pairs


def test_every_scheme_has_one_row_in_the_engines_order():
    rows = scheme_table.rows()
    names = [r["name"] for r in rows]
    assert names == [n for n, _ in _core.schemes()], "the old listing and the rows agree"
    assert len(set(names)) == len(names)
    for row in rows:
        for field in ("summary", "family", "protocol", "tagging", "rank_queue", "flow_level", "window",
                      "setup_rtts", "needs_thresholds", "presets", "keys", "tcp_kind"):
            assert field in row, (row["name"], field)
        assert row["presets"][0] == "native"


def test_render_agrees_with_the_rows():
    rows = {r["name"]: r for r in scheme_table.rows()}
    shown = blocks()
    assert list(shown) == list(rows), "every scheme once, in order"
    for name, row in rows.items():
        lines = shown[name]
        assert lines[0] == f"{name}: {row['summary']}"
        presets = row["presets"]
        assert len(lines) == 1 + len(presets), name
        for preset, line in zip(presets, lines[1:]):
            label, pairs = parse_defaults(line)
            assert label == (f"preset {preset!r}" if len(presets) > 1 else "defaults"), name
            cfg = json.loads(_core.scheme_defaults(name, preset))
            kind = cfg["transport"]["kind"] or row["tcp_kind"]
            if kind is None:
                assert "transport.kind" not in pairs, name
            else:
                assert pairs["transport.kind"] == kind, name
            for (section, key), (relative, unit) in scheme_table.RELATIVE_KEYS.items():
                if cfg[section].get(relative) is not None:
                    expected = f"{cfg[section][relative]:g} x {unit}"
                else:
                    expected = str(cfg[section][key])
                assert pairs[f"{section}.{key}"] == expected, (name, preset, key)
            for key in row["keys"]:
                assert pairs[f"scheme.{key}"] == str(cfg["scheme"][key]), (name, key)
            assert ("scheme.thresholds_bytes" in pairs) == row["needs_thresholds"], name


def test_transport_kind_is_the_one_the_scheme_runs():
    rows = {r["name"]: r for r in scheme_table.rows()}
    for name in ("hyline", "qjump", "tcp", "pfabric", "las"):
        assert rows[name]["tcp_kind"] == "tcp", name
    for name in ("dctcp", "pias", "l2dct", "qclimb", "rax", "rax-plus"):
        assert rows[name]["tcp_kind"] == "dctcp", name
    for name in ("rcp", "d3", "pdq", "homa"):
        assert rows[name]["tcp_kind"] is None, name
    shown = blocks()
    for name in ("hyline", "qjump"):
        assert "transport.kind = tcp," in shown[name][1], shown[name]
    # the engine runs them on TCP too: a parsed config says so
    for name in ("hyline", "qjump"):
        cfg = json.loads(_core.validate_config(json.dumps({"scheme": {"name": name}})))
        assert cfg["scheme"]["name"] == name


def test_presets_that_change_something_are_listed():
    shown = blocks()
    assert [line.split(":")[0].strip() for line in shown["l2dct"][1:]] == ["preset 'native'", "preset 'pias'"]
    assert "scheme.l2dct_w_min" in shown["l2dct"][2]
    assert "scheme.l2dct_increase = normalized" in shown["l2dct"][2]
    # a preset is listed because it changes something, and the line shows what
    for name, lines in shown.items():
        assert len(set(lines[1:])) == len(lines) - 1, name
    assert len(shown["pfabric"]) == 4 and "scheme.rank" in shown["pfabric"][1]
    assert len(shown["dctcp"]) == 2 and shown["dctcp"][1].startswith("  defaults: ")


def test_flow_level_models_are_named():
    rows = {r["name"]: r for r in scheme_table.rows()}
    assert rows["pfabric"]["flow_level"] == {"model": "srpt", "text": "SRPT"}
    assert rows["pdq"]["flow_level"]["model"] == {"critical": {"size_aware": True}}
    assert rows["homa"]["flow_level"]["model"] == "homa"
    assert rows["qjump"]["flow_level"]["model"] == rows["hyline"]["flow_level"]["model"] == "mlfq"
    assert rows["rcp"]["setup_rtts"] == 1 and not rows["rcp"]["window"]


def test_pfabric_native_is_stated_in_the_fabrics_terms_and_the_ns2_values_are_labelled():
    label, pairs = parse_defaults(blocks()["pfabric"][1])
    assert label == "preset 'native'"
    assert pairs["transport.rto_min_us"] == "3 x base RTT"
    assert pairs["transport.init_cwnd_packets"] == "1 x BDP"
    assert pairs["transport.max_cwnd_packets"] == "1.25 x BDP"
    assert pairs["switch.buffer_bytes"] == "2 x BDP"
    label, pairs = parse_defaults(blocks()["pfabric"][2])
    assert label == "preset 'pfabric_ns2'"
    assert (pairs["transport.rto_min_us"], pairs["transport.init_cwnd_packets"], pairs["switch.buffer_bytes"]) == (
        "45.0", "12", "36000")
