"""The ``check`` command: whether an experiment can mean anything on its fabric, before running it.

Prints the fabric's yardsticks (the longest base RTT and its BDP), the values the scheme runs with once those
are resolved, the offered load per tier of links, every warning of the pre-run check (:mod:`fctlab.check`,
the same ones ``run``, ``compare`` and ``sweep`` print and ``summary.json`` records) and the cost estimate of a
packet-level run. Exit code 0, or 2 with ``--strict`` when there is a warning (or on bad input).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from fctlab.cli._common import EXIT_BAD_INPUT, STRICT_HELP, fail, say, warn_sweep_points


def register(app: typer.Typer) -> None:
    """Add ``check`` to a typer app (``fctlab.cli`` calls this)."""
    app.command("check")(check)


def check(
    experiment: Annotated[Path, typer.Argument(help="Experiment TOML file.")],
    sets: Annotated[
        Optional[list[str]],
        typer.Option("--set", help="Override one key of the experiment: --set workload.load=0.7 (repeatable)."),
    ] = None,
    strict: Annotated[bool, typer.Option("--strict", help=STRICT_HELP)] = False,
) -> None:
    """Check an experiment against its fabric before running it: RTOs and windows against the longest base RTT
    and BDP, buffers, ECN, the time limit, keys that have no effect, the load per tier of links; and the
    expected time and memory of the run. A file with [sweep] axes: the rules that need no flows, for every point.
    Runs nothing, writes nothing."""
    from fctlab import check as rules
    from fctlab.config import ConfigError, load_experiment
    from fctlab.simulation import workload_columns

    from fctlab.config import SWEEP_SECTION, read_experiment_file
    from fctlab.sweep import load_sweep

    try:
        axes = SWEEP_SECTION in read_experiment_file(experiment) or any(
            s.startswith(f"{SWEEP_SECTION}.") for s in sets or ())
        if axes:
            spec = load_sweep(experiment, overrides=sets or ())
            warnings = warn_sweep_points(spec.points, strict)
            say(f"sweep {spec.name}: {len(spec.points)} runs, {warnings} warning(s) from the rules that need no "
                "flows (the rules on flows run before each run and are recorded in its summary.json)")
            return
        exp = load_experiment(experiment, overrides=sets or ())
        flows = workload_columns(exp)
    except ConfigError as e:
        raise fail(str(e), EXIT_BAD_INPUT) from None
    c = rules.check(exp, flows)
    say(f"{exp.name}: scheme {exp.scheme} (preset {exp.engine['scheme']['preset']}), {len(flows):,} flows, "
        f"{exp.hosts:,} hosts")
    for line in c.facts():
        say(f"  {line}")
    if c.cost is not None:
        level = exp.engine["run"]["level"]
        say(f"  cost: {c.cost.text()}" if level == "packet" else "  cost: flow level (no packet-level estimate)")
    if c.warnings:
        for w in c.warnings:
            say(f"warning: {w}")
    else:
        say("no warnings")
    if strict and c.warnings:
        raise fail(f"{len(c.warnings)} warning(s) and --strict", EXIT_BAD_INPUT)
