"""Whether a results folder already holds a run of a configuration (what a resumed sweep and ``fctlab run``
decide on before running), and the removal of the temporary files a killed write left there. Kept apart from
:mod:`fctlab.sweep` so that a single run does not import the sweep machinery for it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

#: Key of config.json that records which sweep point a run is (ignored when comparing configs on resume).
POINT_KEY = "sweep_point"
#: Keys of config.json that label a run or say where it came from rather than what it simulates (the name
#: defaults to the file's name); resume ignores them, so an experiment file may be moved or renamed.
PROVENANCE_KEYS = ("name", "source", "overrides", "output", POINT_KEY)


def comparable_config(config: Mapping[str, Any]) -> dict[str, Any]:
    """A resolved config as JSON would store it, without the keys that only say where it came from."""
    from fctlab.results import jsonable

    data = json.loads(json.dumps(jsonable(config), allow_nan=False))
    return _without_provenance(data)


def _without_provenance(data: Mapping[str, Any]) -> dict[str, Any]:
    """``data`` without :data:`PROVENANCE_KEYS`, except ``output.bins`` when it is not the default: the bin
    edges change what the summary says. Python-side keys at their defaults are left out, so that runs written
    before the keys existed (which ran with those defaults) compare equal: ``output.bins = "papers"`` and
    ``workload.cooldown_flows = 0``."""
    out = {k: v for k, v in data.items() if k not in PROVENANCE_KEYS}
    bins = (data.get("output") or {}).get("bins", "papers") if isinstance(data.get("output"), dict) else "papers"
    if bins != "papers":
        out["output"] = {"bins": bins}
    workload = out.get("workload")
    if isinstance(workload, dict) and workload.get("cooldown_flows") == 0:
        out["workload"] = {k: v for k, v in workload.items() if k != "cooldown_flows"}
    return out


def _first_difference(a: Any, b: Any, path: str = "") -> str:
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            if a.get(k, ...) != b.get(k, ...):
                return _first_difference(a.get(k), b.get(k), f"{path}.{k}" if path else k)
    return f"{path or 'config'}: stored {json.dumps(a)}, now {json.dumps(b)}"


def run_state(run_dir: Path, config: Mapping[str, Any]) -> tuple[str, str]:
    """``("done", "")`` when ``run_dir`` holds finished results of ``config``; ``("todo", "")`` when it holds no
    finished results (no summary.json); ``("todo", why)`` when its files do not read back (the run is done
    again); ``("conflict", why)`` when it holds results of another config."""
    from fctlab.results import CONFIG_FILE, SUMMARY_FILE, unreadable

    if not (run_dir / SUMMARY_FILE).is_file():
        return "todo", ""
    damaged = unreadable(run_dir)
    if damaged is not None:
        return "todo", damaged
    try:
        stored = json.loads((run_dir / CONFIG_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        return "conflict", f"its {CONFIG_FILE} cannot be read ({' '.join(str(e).split())})"
    want = comparable_config(config)
    have = _without_provenance(stored) if isinstance(stored, dict) else stored
    if isinstance(have, dict) and "inputs" in want:
        if "inputs" not in have:  # written before input files were recorded: their content cannot be checked
            have["inputs"] = want["inputs"]
        else:
            for key, now in want["inputs"].items():
                then = have["inputs"].get(key) if isinstance(have["inputs"], dict) else None
                if isinstance(then, dict) and then.get("path") == now["path"] and then.get("sha256") != now["sha256"]:
                    return "conflict", (f"{key} file {now['path']} has changed since this run was written (its "
                                        "SHA-256 differs), so its results are not of the file as it is now")
    if have == want:
        return "done", ""
    # keys added to the engine since the run was written take their defaults; the message names a real difference
    current = _with_new_engine_keys(have) if isinstance(have, dict) else None
    if current == want:
        return "done", ""
    return "conflict", f"it holds results of another configuration ({_first_difference(current or have, want)})"


def _with_new_engine_keys(have: dict[str, Any]) -> dict[str, Any] | None:
    """A stored config as today's engine resolves it: engine keys added since the run was written take their
    defaults (for the stored scheme and preset); every key the run stored keeps its value. An engine key is only
    ever added with a default that reproduces the behaviour before it, so such a run is still a run of the
    requested config. None when today's engine refuses the stored config (e.g. a key since removed)."""
    from fctlab.config import ConfigError, validate_engine

    try:
        engine, _, _ = validate_engine(have)
    except (ConfigError, ValueError):
        return None
    return comparable_config({**have, **{k: v for k, v in engine.items() if k != "seed"}})


def clean_temporaries(run_dir: Path) -> None:
    """Remove the temporary files a killed writer left behind (results.atomic_write's hidden ``.*.tmp``)."""
    if run_dir.is_dir():
        for tmp in run_dir.glob(".*.tmp"):
            try:
                tmp.unlink()
            except FileNotFoundError:
                pass


#: :func:`_first_difference` under a public name (fctlab.tune compares a study's setup with it).
first_difference = _first_difference
