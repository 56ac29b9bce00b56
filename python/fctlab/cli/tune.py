"""The ``fctlab tune`` command: search a scheme's knobs (a space of experiment keys) for the best value of an
objective, by simulation in the loop on Optuna (:mod:`fctlab.tune`). Resumable: the study is stored in
``--study-dir``, and the same command continues it up to ``--budget`` trials.

Exit codes as for ``fctlab run``: 2 for bad input (nothing written), 1 when the engine or the file system
failed, 130 when interrupted (the finished trials are kept; the same command resumes).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from fctlab.cli._common import EXIT_BAD_INPUT, EXIT_FAILED, console, eta_text, fail, say, signals_interrupt

__all__ = ["register", "tune"]


def register(app: typer.Typer) -> None:
    """Add the ``tune`` command to a typer app (the ``fctlab`` CLI calls this)."""
    app.command("tune")(tune)


def _numbers(text: str | None, key: str, kind: type) -> list[Any] | None:
    from fctlab.config import ConfigError

    if text is None:
        return None
    try:
        return [kind(x) for x in text.replace(" ", "").split(",") if x]
    except ValueError:
        raise ConfigError(key, f"expected a comma-separated list, e.g. {'1,2,3' if kind is int else '0.5,0.8'} "
                          f"(got {text!r})") from None


class _Progress:
    """One line per finished trial (on stderr): its objective, the best so far and the time left."""

    def __init__(self) -> None:
        import time

        self.started = time.monotonic()
        self.todo = 0

    def start(self, todo: int, done: int) -> None:
        import time

        self.started = time.monotonic()
        self.todo = todo
        more = f"{done} trials already in the study; " if done else ""
        sys.stderr.write(f"tune: {more}{todo} to run\n")
        sys.stderr.flush()

    def __call__(self, event: Any) -> None:
        import time

        if event.level.endswith("(confirm)") and event.done == 1:
            self.started = time.monotonic()
        elapsed = time.monotonic() - self.started
        left = (eta_text(event.done, event.total, elapsed).split(", ", 1)[1] if event.done < event.total
                else f"done in {elapsed:.0f} s")
        shown = "failed: " + event.error if event.error else ", ".join(f"{v:.6g}" for v in (event.values or []))
        best = ""
        if event.best is not None:
            best = f"; best {', '.join(f'{v:.6g}' for v in event.best)} (trial {event.best_number})"
        stage = "confirm" if event.level.endswith("(confirm)") else "trial"
        console(stderr=True).print(f"[{event.done}/{event.total}] {stage} {event.number} ({event.level}, "
                                   f"{event.wall_seconds:.1f} s): {shown}{best}; {left}", markup=False)


def tune(
    experiment: Annotated[Path, typer.Argument(help="Experiment TOML file (the base of every trial).")],
    space: Annotated[Path, typer.Option("--space", help="Space TOML: the keys to tune (docs/tuning.md).")],
    objectives: Annotated[list[str], typer.Option(
        "--objective", help="A statistic (small_p99_fct, mean_fct, ...) or a weighted sum; twice: two objectives.")],
    budget: Annotated[int, typer.Option("--budget", help="Trials the study holds when done.")],
    study_dir: Annotated[Path, typer.Option("--study-dir", help="Where the study is stored (and resumed).")],
    seeds: Annotated[Optional[str], typer.Option("--seeds", help="Seeds of each trial, e.g. 1,2,3.")] = None,
    loads: Annotated[Optional[str], typer.Option("--loads", help="Loads of each trial, e.g. 0.5,0.8.")] = None,
    robust: Annotated[str, typer.Option("--robust", help="mean or worst over the seeds and loads.")] = "mean",
    maximize: Annotated[bool, typer.Option("--maximize", help="Maximise instead of minimise.")] = False,
    sampler: Annotated[str, typer.Option("--sampler", help="tpe, cmaes or random.")] = "tpe",
    sampler_seed: Annotated[int, typer.Option("--sampler-seed", help="The sampler's seed.")] = 0,
    screen: Annotated[Optional[str], typer.Option("--screen", help="Search at this level (flow).")] = None,
    screen_flows: Annotated[Optional[int], typer.Option("--screen-flows", help="Search with N flows.")] = None,
    confirm: Annotated[int, typer.Option("--confirm", help="Rerun the K best at the packet level.")] = 0,
    allow_unfinished: Annotated[bool, typer.Option(
        "--allow-unfinished", help="Keep trials with unfinished flows (failed by default).")] = False,
    baseline: Annotated[bool, typer.Option(
        "--baseline", help="Trial 0: the experiment's own values of the knobs.")] = False,
    workers: Annotated[int, typer.Option("--workers", "-j", help="Trials at once (default 1).")] = 1,
    executor: Annotated[str, typer.Option("--executor", help="local (processes) or ray.")] = "local",
    address: Annotated[Optional[str], typer.Option("--address", help="Ray cluster address.")] = None,
    sets: Annotated[Optional[list[str]], typer.Option("--set", help="Override a key of the experiment.")] = None,
) -> None:
    """Tune knobs by simulation: write study.db, trials.parquet, best.toml, best/ and report.html to the
    study dir. The same command resumes a killed study, or extends it to a larger --budget."""
    from fctlab.config import ConfigError
    from fctlab.tune import tune as run_tune

    progress = _Progress()
    try:
        seed_list = _numbers(seeds, "--seeds", int)
        load_list = _numbers(loads, "--loads", float)
        with signals_interrupt():
            report = run_tune(
                experiment, space, list(objectives), budget, study_dir=study_dir, overrides=sets or (),
                seeds=seed_list, loads=load_list, robust=robust, maximize=maximize, sampler=sampler,
                sampler_seed=sampler_seed, screen=screen, screen_flows=screen_flows, confirm=confirm,
                allow_unfinished=allow_unfinished, baseline=baseline, workers=workers,
                executor=executor, address=address, progress=progress, on_start=progress.start,
            )
    except ConfigError as e:
        raise fail(str(e), EXIT_BAD_INPUT) from None
    except KeyboardInterrupt as e:
        raise fail(f"interrupted: finished trials are kept in {study_dir}; run the same command again to resume",
                   getattr(e, "exit_code", 130)) from None
    except (ValueError, RuntimeError, OSError) as e:
        raise fail(f"tune: {e}", EXIT_FAILED) from None
    if report.best is None:
        raise fail(f"no trial of the study succeeded (see {study_dir / 'trials.parquet'})", EXIT_FAILED)
    shown = ", ".join(f"{v:.6g}" for v in report.best_values or [])
    say(f"best: trial {report.best_number}" + (f" ({shown})" if shown else ""))
    for key, value in report.best.items():
        say(f"  {key} = {value}")
    if report.agreement is not None:
        a = report.agreement
        say(f"screen vs packet level over {a['confirmed']} confirmed trials: Spearman {_f(a['spearman'])}, "
            f"Kendall {_f(a['kendall'])}; screen's best {'is' if a['screen_best_is_packet_best'] else 'is not'} "
            "the packet level's best")
    console(stderr=True).print(f"{report.ran} trials run ({report.resumed} were already done) in "
                               f"{report.wall_seconds:.1f} s; {', '.join(str(p) for p in report.files.values())}",
                               markup=False)


def _f(v: float | None) -> str:
    return "-" if v is None else f"{v:.3f}"
