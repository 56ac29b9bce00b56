"""The schemes the engine runs, read from its table of rows (``_core.scheme_rows()``, ``config::SCHEMES`` in
the engine), and the text ``fctlab schemes`` prints from them: each scheme's summary and the switch and
transport parameters it runs with by default, once per preset that changes them.

Nothing about a scheme is written here: its protocol, presets, shown keys and whether it needs thresholds
come from its row, its parameter values from ``_core.scheme_defaults``.
"""

from __future__ import annotations

import functools
import json
from typing import Any

#: The parameters shown for every scheme, as (section, key).
COMMON_KEYS = (
    ("switch", "buffer_bytes"),
    ("switch", "ecn"),
    ("transport", "kind"),
    ("transport", "init_cwnd_packets"),
    ("transport", "max_cwnd_packets"),
    ("transport", "rto_min_us"),
    ("transport", "rto_fixed"),
    ("transport", "dupack_threshold"),
    ("scheme", "probe_after_timeouts"),
)

#: The keys a preset may state in the fabric's terms: (section, absolute key) -> (relative key, unit). The engine
#: resolves them from the longest base RTT of the fabric the run builds and that path's BDP (``net::scale``).
RELATIVE_KEYS = {
    ("transport", "rto_min_us"): ("rto_min_rtts", "base RTT"),
    ("transport", "init_cwnd_packets"): ("init_cwnd_bdp", "BDP"),
    ("transport", "max_cwnd_packets"): ("max_cwnd_bdp", "BDP"),
    ("switch", "buffer_bytes"): ("buffer_bdp", "BDP"),
}

#: What ``fctlab schemes`` says under the table about the values that scale.
SCALING_NOTE = (
    "Values written 'N x base RTT' or 'N x BDP' scale with the fabric the run builds: the engine resolves them "
    "from the longest base RTT (a full-size packet out and an ACK back on the idle fabric, store and forward) and "
    "that path's bandwidth-delay product, in full-size packets for windows and bytes rounded up to whole packets "
    "for buffers; an absolute key given explicitly (transport.rto_min_us, ...) always wins. The other presets' "
    "values are absolute, for their papers' own fabrics (pfabric_ns2: the pFabric ns-2 scripts' ~15 us RTT; pias: "
    "the PIAS fabric's ~85 us). `fctlab check EXP.toml` prints the resolved values for an experiment."
)

THRESHOLDS_NOTE = "derived from workload.cdf and load if not given (fctlab thresholds)"


@functools.cache
def _rows() -> tuple[dict[str, Any], ...]:
    from fctlab import _core

    return tuple(json.loads(_core.scheme_rows()))


def rows() -> list[dict[str, Any]]:
    """Every scheme's row, in the engine's order: name, summary, family, protocol, tagging, rank_queue,
    flow_level (model and text, or None), window, setup_rtts, needs_thresholds, presets, keys, timer (the key of
    its timeout's duration and how the analysis names it), and tcp_kind (the ``transport.kind`` the scheme runs,
    None when its family has a transport of its own)."""
    return [dict(r) for r in _rows()]


def row(name: str) -> dict[str, Any] | None:
    """Scheme ``name``'s row, or None for a name the engine does not run."""
    return next((dict(r) for r in _rows() if r["name"] == name), None)


def threshold_schemes() -> tuple[str, ...]:
    """The schemes that tag by demotion thresholds (``scheme.thresholds_bytes``), which fctlab derives when none
    are given."""
    return tuple(r["name"] for r in _rows() if r["needs_thresholds"])


def defaults_shown(row: dict[str, Any], preset: str) -> dict[str, Any]:
    """The parameters ``render`` shows for one scheme and preset, by dotted key, in order."""
    from fctlab import _core

    cfg = json.loads(_core.scheme_defaults(row["name"], preset))
    shown: dict[str, Any] = {}
    for section, key in COMMON_KEYS:
        value = cfg[section][key]
        relative, unit = RELATIVE_KEYS.get((section, key), (None, ""))
        if relative is not None and cfg[section].get(relative) is not None:
            value = f"{cfg[section][relative]:g} x {unit}"
        if (section, key) == ("transport", "kind"):
            value = value or row["tcp_kind"]
            if value is None:
                continue  # a transport of its own: no TCP kind to show
        shown[f"{section}.{key}"] = value
    for key in row["keys"]:
        shown[f"scheme.{key}"] = cfg["scheme"][key]
    if row["needs_thresholds"]:
        shown["scheme.thresholds_bytes"] = THRESHOLDS_NOTE
    return shown


def render() -> str:
    """The text of ``fctlab schemes``: per scheme, ``name: summary``, then its defaults (one line per preset
    when it has more than one)."""
    lines = []
    for row in rows():
        lines.append(f"{row['name']}: {row['summary']}")
        presets = row["presets"]
        for preset in presets:
            label = f"  preset {preset!r}" if len(presets) > 1 else "  defaults"
            shown = ", ".join(f"{k} = {v}" for k, v in defaults_shown(row, preset).items())
            lines.append(f"{label}: {shown}")
    return "\n".join(lines)
