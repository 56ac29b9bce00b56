"""The ``schemes`` command: every scheme with what it does and the parameters it runs with by default."""

from __future__ import annotations

import typer

from fctlab.cli._common import say


def register(app: typer.Typer) -> None:
    """Add ``schemes`` to a typer app (``fctlab.cli`` calls this)."""
    app.command("schemes")(schemes)


def schemes() -> None:
    """List every scheme with what it does and the switch/transport parameters it runs with by default."""
    import json

    from fctlab import _core

    for name, what in _core.schemes():
        say(f"{name}: {what}")
        presets = ["native", "pias"] if name == "pfabric" else ["native"]
        for preset in presets:
            cfg = json.loads(_core.scheme_defaults(name, preset))
            keys = {
                "switch.buffer_bytes": cfg["switch"]["buffer_bytes"],
                "switch.ecn": cfg["switch"]["ecn"],
                "transport.kind": cfg["transport"]["kind"] or ("tcp" if name in ("tcp", "pfabric", "las") else "dctcp"),
                "transport.init_cwnd_packets": cfg["transport"]["init_cwnd_packets"],
                "transport.max_cwnd_packets": cfg["transport"]["max_cwnd_packets"],
                "transport.rto_min_us": cfg["transport"]["rto_min_us"],
                "transport.rto_fixed": cfg["transport"]["rto_fixed"],
                "transport.dupack_threshold": cfg["transport"]["dupack_threshold"],
                "scheme.probe_after_timeouts": cfg["scheme"]["probe_after_timeouts"],
            }
            if name == "pfabric":
                keys["scheme.rank"] = cfg["scheme"]["rank"]
            if name == "l2dct":
                for k in ("l2dct_w_min", "l2dct_w_max", "l2dct_size_min_bytes", "l2dct_size_max_bytes"):
                    keys[f"scheme.{k}"] = cfg["scheme"][k]
            if name in ("pias", "qclimb"):
                keys["scheme.thresholds_bytes"] = "derived from workload.cdf and load if not given (fctlab thresholds)"
            label = f"  preset {preset!r}" if len(presets) > 1 else "  defaults"
            shown = ", ".join(f"{k} = {v}" for k, v in keys.items())
            say(f"{label}: {shown}")
