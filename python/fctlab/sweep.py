"""Sweeps: one experiment file with a ``[sweep]`` table of axes -> one run per point of their Cartesian product.

``load_sweep`` reads the file, expands every point and validates each one as a full experiment (and builds its
flows) before anything runs; ``run_sweep`` runs the points that have no results yet, in local worker processes
or as Ray tasks, writes each to ``DIR/runs/<run_id>/`` and records it in the DuckDB catalog
(:mod:`fctlab.catalog`). The file format, the run-id rule and the resume rule are in docs/experiment.md and
docs/results.md.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import json
import math
import os
import re
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from fctlab.config import (
    SWEEP_SECTION,
    ConfigError,
    Experiment,
    apply_override,
    deep_copy,
    drop_other_kinds_keys,
    set_key_path,
    experiment_from_dict,
    parse_override,
    read_experiment_file,
)
# (what decides whether a run folder holds a run of a config; fctlab.sweep.run_state etc. stay importable)
from fctlab.rundir import first_difference as _rundir_first_difference
from fctlab.rundir import POINT_KEY, PROVENANCE_KEYS, clean_temporaries, comparable_config, run_state  # noqa: F401

#: Short axis names and the key path each stands for.
AXIS_ALIASES = {"scheme": "scheme.name", "load": "workload.load", "cdf": "workload.cdf", "seed": "seed"}
#: Where the runs of a sweep go, under the output directory.
RUNS_DIR = "runs"
#: Longest run id before it is shortened (file names are limited to 255 bytes).
MAX_RUN_ID = 200

_KEY_PART = re.compile(r"[A-Za-z0-9_-]+")
_UNSAFE = re.compile(r"[^A-Za-z0-9._+-]")

Executor = Literal["local", "ray"]


# --------------------------------------------------------------------------------------------------------------
# The sweep model


@dataclass(frozen=True)
class Point:
    """One run of a sweep: its axis values (axis key -> value, in axis order), its id and its experiment."""

    index: int
    run_id: str
    values: dict[str, Any]
    experiment: Experiment = field(repr=False)
    raw: dict[str, Any] = field(repr=False, default_factory=dict)


@dataclass(frozen=True)
class Sweep:
    """A validated sweep: the axes (canonical key -> values, in file order) and every point, in product order
    (the first axis varies slowest)."""

    name: str
    axes: dict[str, list[Any]]
    points: list[Point]
    source: Path | None = None
    overrides: tuple[str, ...] = ()
    #: what to know about the points' flows before they run (``run id: note``), e.g. flows after the time limit
    notes: tuple[str, ...] = ()

    def __len__(self) -> int:
        return len(self.points)

    @property
    def base(self) -> Experiment:
        """The first point's experiment (its ``output`` section is the sweep's)."""
        return self.points[0].experiment


def available_series(series: Sequence[Any]) -> tuple[list[Any], list[str]]:
    """The series of a recipe (objects with ``label`` and ``scheme``) whose scheme this engine has (asked of the
    engine), and a note for each one it has not; a ConfigError when it has none of them."""
    from fctlab import _core

    have = {name for name, _ in _core.schemes()}
    kept = [s for s in series if s.scheme in have]
    notes = [f"series {s.label} left out: this engine has no scheme {s.scheme!r} (it has {', '.join(sorted(have))})"
             for s in series if s.scheme not in have]
    if not kept:
        raise ConfigError("scheme.name", "none of the recipe's schemes is in this engine: " + "; ".join(notes))
    return kept, notes


@dataclass(frozen=True)
class RecipeRun:
    """One finished run of a recipe's sweep: its axis values, its summary and its folder."""

    values: dict[str, Any]
    summary: dict[str, Any]
    path: Path


def recipe_runs(results_dir: str | Path, axes: Sequence[str]) -> list[RecipeRun]:
    """Every finished run in ``results_dir`` whose sweep point has all of ``axes``, in run-folder order (runs
    whose files cannot be read are skipped)."""
    out = []
    for path in sorted(Path(results_dir).glob("runs/*/summary.json")):
        try:
            summary = json.loads(path.read_text())
            config = json.loads((path.parent / "config.json").read_text())
        except (OSError, ValueError):
            continue
        values = ((config.get("sweep_point") or {}).get("axes")) or {}
        if all(a in values for a in axes):
            out.append(RecipeRun(dict(values), summary, path.parent))
    return out


def sweep_of_points(name: str, points: list[Point], notes: Sequence[str] = ()) -> Sweep:
    """A sweep of points a recipe listed itself: each axis holds the values its points take, in first-seen order.
    Two points with one run id are a recipe's bug (one would overwrite the other's results): AssertionError."""
    axes: dict[str, list[Any]] = {}
    for p in points:
        for k, v in p.values.items():
            values = axes.setdefault(k, [])
            if v not in values:
                values.append(v)
    ids = [p.run_id for p in points]
    dup = {i for i in ids if ids.count(i) > 1}
    if dup:
        raise AssertionError(f"duplicate run ids: {sorted(dup)}")
    return Sweep(name=name, axes=axes, points=points, notes=tuple(notes))


def load_sweep(path: str | Path, overrides: Iterable[str] = ()) -> Sweep:
    """Read an experiment file with a ``[sweep]`` table, apply ``--set`` overrides and validate every point.

    ``--set sweep.KEY=[...]`` replaces (or adds) an axis; any other override changes the base experiment and may
    not touch a key that is an axis. Raises :class:`ConfigError` (one line, naming the axis or key) on any
    problem, before anything is run or written.
    """
    path = Path(path)
    data = read_experiment_file(path)
    return sweep_from_dict(data, base_dir=path.resolve().parent, source=path.resolve(), overrides=overrides)


def sweep_from_dict(
    data: Mapping[str, Any],
    *,
    base_dir: str | Path | None = None,
    source: Path | None = None,
    overrides: Iterable[str] = (),
    build_flows: bool = True,
) -> Sweep:
    """Validate a sweep given as a dict (the TOML file's shape). ``build_flows`` also generates every distinct
    workload once, so a workload that does not fit its topology fails here rather than in a worker."""
    overrides = tuple(overrides)
    raw = deep_copy(data)
    kind_in_file = _topology_kind(raw)
    axis_sets: list[tuple[str, str, Any]] = []
    base_sets: list[tuple[str, list[str]]] = []
    for item in overrides:
        parts, value = parse_override(item)
        if parts[0] == SWEEP_SECTION:
            if len(parts) == 1:
                raise ConfigError(f"--set {item}", "give one axis: --set 'sweep.workload.load=[0.5, 0.7]'")
            axis_sets.append((item, ".".join(parts[1:]), value))
        else:
            apply_override(raw, item)
            base_sets.append((item, parts))

    drop_other_kinds_keys(raw, kind_in_file, [".".join(parts) for _, parts in base_sets])
    table = raw.pop(SWEEP_SECTION, {})
    if not isinstance(table, dict):
        raise ConfigError(SWEEP_SECTION, f"must be a table ([sweep]), got {type(table).__name__} {table!r}")
    axes: dict[str, Any] = {}
    written_as: dict[str, str] = {}
    for key, values in _flatten(table):
        canon = _canonical(key, f"sweep.{key}")
        if canon in axes:
            raise ConfigError(f"sweep.{key}", f"names the same key as sweep.{written_as[canon]} ({canon})")
        axes[canon], written_as[canon] = values, key
    for item, key, values in axis_sets:
        axes[_canonical(key, f"--set {item}")] = values  # replaces in place, or adds at the end
    if not axes:
        raise ConfigError(
            SWEEP_SECTION,
            "no axes: add a [sweep] table (e.g. load = [0.5, 0.7]) or --set 'sweep.workload.load=[0.5, 0.7]'",
        )
    for key, values in axes.items():
        _check_values(key, values)
    for item, parts in base_sets:
        for key in axes:
            if _related(".".join(parts), key):
                raise ConfigError(
                    f"--set {item}", f"changes {key}, which is a sweep axis: set the axis instead (--set 'sweep.{key}=[...]')"
                )

    base = Path(base_dir).resolve() if base_dir is not None else Path.cwd()
    keys = list(axes)
    points: list[Point] = []
    seen_ids: dict[str, Point] = {}
    workloads_seen: set[str] = set()
    notes: list[str] = []
    for index, combo in enumerate(itertools.product(*(axes[k] for k in keys))):
        values = dict(zip(keys, combo))
        run_id = run_id_for(values)
        point_raw = deep_copy(raw)
        kind_before = _topology_kind(point_raw)
        for key, value in values.items():
            _set_path(point_raw, key, value)
        drop_other_kinds_keys(point_raw, kind_before, [*values, *(".".join(parts) for _, parts in base_sets)])
        try:
            exp = experiment_from_dict(point_raw, base_dir=base, source=source, _applied=overrides)
        except ConfigError as e:
            raise _blame(e, axes, values, run_id) from None
        if run_id in seen_ids:
            other = seen_ids[run_id]
            raise ConfigError(
                SWEEP_SECTION,
                f"points {_show(other.values)} and {_show(values)} get the same run id {run_id!r} "
                "(values that differ only in characters a file name cannot hold); make the values distinct",
            )
        if build_flows:
            notes += _check_flows(exp, axes, values, run_id, workloads_seen)
        point = Point(index=index, run_id=run_id, values=values, experiment=exp, raw=point_raw)
        seen_ids[run_id] = point
        points.append(point)
    return Sweep(name=points[0].experiment.name, axes=axes, points=points, source=source, overrides=overrides,
                 notes=tuple(notes))


def _topology_kind(raw: Mapping[str, Any]) -> Any:
    topo = raw.get("topology")
    return topo.get("kind") if isinstance(topo, dict) else None


def _flatten(table: Mapping[str, Any], prefix: str = "") -> Iterable[tuple[str, Any]]:
    """Axis entries of ``[sweep]``: nested tables (``[sweep.workload] load = [...]``) become dotted keys."""
    for key, value in table.items():
        if isinstance(value, dict):
            yield from _flatten(value, f"{prefix}{key}.")
        else:
            yield f"{prefix}{key}", value


def _canonical(key: str, where: str) -> str:
    """The key path an axis sets: aliases expanded, each part a plain name."""
    key = AXIS_ALIASES.get(key, key)
    parts = key.split(".")
    if any(not _KEY_PART.fullmatch(p) for p in parts):
        raise ConfigError(where, f"bad axis key {key!r}: expected names joined by dots (e.g. workload.load)")
    return key


def _check_values(key: str, values: Any) -> None:
    if not isinstance(values, list):
        raise ConfigError(
            f"sweep.{key}", f"must be a non-empty list of values, e.g. [0.5, 0.7] (got {type(values).__name__} {values!r})"
        )
    if not values:
        raise ConfigError(f"sweep.{key}", "must list at least one value (got [])")
    seen: dict[str, int] = {}
    for i, v in enumerate(values):
        text = json.dumps(v, sort_keys=True, default=str)
        if text in seen:
            raise ConfigError(f"sweep.{key}", f"lists {v!r} twice (values {seen[text] + 1} and {i + 1})")
        seen[text] = i


def _related(a: str, b: str) -> bool:
    """Whether two key paths overlap: equal, or one is inside the other."""
    return a == b or a.startswith(b + ".") or b.startswith(a + ".")


def _set_path(raw: dict[str, Any], key: str, value: Any) -> None:
    set_key_path(raw, key.split("."), deep_copy(value), f"sweep.{key}")


def _blame(e: ConfigError, axes: Mapping[str, list[Any]], values: Mapping[str, Any], run_id: str) -> ConfigError:
    """A point's validation error, pinned on the axis whose value caused it when the error's key is that axis's
    (or inside it); otherwise on the whole point."""
    for key, value in values.items():
        if e.key and _related(e.key, key):
            n = len(axes[key])
            i = next(j for j, v in enumerate(axes[key]) if v == value and type(v) is type(value))
            return ConfigError(f"sweep.{key}", f"value {i + 1} of {n} ({value!r}): {e}")
    return ConfigError(e.key, f"{e.reason} (in sweep point {run_id})")


def _check_flows(
    exp: Experiment, axes: Mapping[str, list[Any]], values: Mapping[str, Any], run_id: str, seen: set[str]
) -> list[str]:
    """Generate the point's flows to catch, before anything runs, a workload that does not fit its topology and
    flows its scheme or level cannot take (:func:`fctlab.simulation.check_flows`, once per distinct workload and
    engine config); returns the notes on them (:func:`fctlab.simulation.workload_notes`, once per distinct
    seed, workload, hosts, link rate, time limit and queues), each naming the point."""
    from fctlab.simulation import build_flows, check_flows, workload_notes

    key = json.dumps([exp.seed, exp.workload.model_dump(), exp.hosts, exp.host_link_bps,
                      exp.engine["run"]["time_limit_ms"], exp.engine["switch"]["queues"]], sort_keys=True)
    engine_key = json.dumps([exp.seed, exp.workload.model_dump(), exp.engine_json()], sort_keys=True)
    if key in seen and engine_key in seen:
        return []
    try:
        flows = build_flows(exp)
        notes = workload_notes(exp, flows) if key not in seen else []
        check_flows(exp, flows)
    except ConfigError as e:
        raise _blame(e, axes, values, run_id) from None
    seen.update((key, engine_key))
    return [f"{run_id}: {note}" for note in notes]


def _show(values: Mapping[str, Any]) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in values.items())


# --------------------------------------------------------------------------------------------------------------
# Run ids


def format_value(value: Any) -> str:
    """An axis value as it appears in a run id (before sanitising): strings as they are, true/false, integers,
    floats in Python's shortest round-trip form (0.6, 1e-05), anything else as compact JSON."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, str)):
        return str(value)
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else str(value)
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)


def run_id_for(values: Mapping[str, Any]) -> str:
    """The run id of a point: ``key=value`` for each axis in axis order, joined by commas, e.g.
    ``scheme.name=dctcp,workload.load=0.6,seed=1``. In values, every character other than letters, digits and
    ``. _ + -`` becomes ``_``; an id longer than 200 characters keeps its first 183 and ends with ``~`` and 16
    hex digits of the SHA-256 of the whole unshortened id."""
    text = ",".join(f"{k}={_UNSAFE.sub('_', format_value(v))}" for k, v in values.items())
    if len(text) > MAX_RUN_ID:
        digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]
        text = f"{text[: MAX_RUN_ID - 17]}~{digest}"
    return text


# --------------------------------------------------------------------------------------------------------------
# Resume


# --------------------------------------------------------------------------------------------------------------
# Running


@dataclass(frozen=True)
class RunEvent:
    """Progress of a sweep, handed to ``run_sweep``'s ``progress`` callback: a run finished (``ok``) or failed
    (``error`` holds a one-line reason); ``done``/``total`` count the runs to execute in this invocation."""

    run_id: str
    ok: bool
    done: int
    total: int
    wall_seconds: float
    info: dict[str, Any] = field(default_factory=dict)
    error: str | None = None


@dataclass
class SweepReport:
    """What ``run_sweep`` did: ``ran`` and ``skipped`` list run ids in point order; ``failed`` maps a run id to
    its one-line error; ``catalog_error`` is set when the catalog could not be updated; ``redone`` maps a run
    id to why it was run again."""

    out_dir: Path
    total: int
    ran: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)
    wall_seconds: float = 0.0
    catalog_error: str | None = None
    #: runs done again because their files did not read back: run id -> why
    redone: dict[str, str] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.failed


def default_workers() -> int:
    """The CPUs this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def check_executor(executor: str, address: str | None) -> None:
    """Reject an unknown executor, ``address`` without Ray, and Ray when it is not installed."""
    if executor not in ("local", "ray"):
        raise ConfigError("--executor", f"must be local or ray (got {executor!r})")
    if address is not None and executor != "ray":
        raise ConfigError("--address", "only used with --executor ray")
    if executor == "ray":
        _import_ray()


def _import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise ConfigError(
            "--executor", "ray is not installed: pip install 'fctlab[ray]' (or pip install 'ray>=2.9,<3')"
        ) from None
    return ray


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def execute_point(task: Mapping[str, Any]) -> dict[str, Any]:
    """Run one sweep point (in a worker process or a Ray task). ``task`` holds the point's raw experiment and
    where it resolves paths; with ``run_dir`` the worker writes the results itself and returns a few numbers,
    without it the result (flows table, summary, config) is returned for the caller to write.

    Never raises for a failed run: it returns ``{"error": "one line"}`` so that one bad run cannot break a pool.
    """
    started = time.perf_counter()
    try:
        from fctlab.results import write_results
        from fctlab.simulation import simulate

        exp = experiment_from_dict(
            task["raw"], base_dir=task["base_dir"], source=task["source"], _applied=task["overrides"]
        )
        threads = int(task.get("threads", 1))
        if threads > 1:  # at most this many: two only where the fabric gains from them
            from fctlab.simulation import default_threads

            threads = min(threads, default_threads(exp))
        # a worker that writes the results itself never needs the DataFrame (nor pandas): the numpy table writes
        # the same file; one returned to the driver is pickled, as a DataFrame
        # (a flow-level run writes its flows.parquet into run_dir while it runs)
        result = simulate(exp, threads=threads, frame=task.get("run_dir") is None, write_to=task.get("run_dir"))
        result.config[POINT_KEY] = {"run_id": task["run_id"], "axes": task["values"]}
        result.experiment = None
        info = {
            "flows": result.summary["flows"],
            "unfinished": result.summary["unfinished_flows"],
            "mean_fct_ns": result.summary["bins"]["all"]["mean_fct_ns"],
            "engine_seconds": result.summary.get("wall_seconds"),
        }
        out: dict[str, Any] = {"info": info}
        if task.get("run_dir") is not None:
            write_results(result, task["run_dir"])
        else:
            out["result"] = {"flows": result.flows, "summary": result.summary, "config": result.config}
    except Exception as e:  # reported by the driver with the run id
        return {"error": _one_line(f"{type(e).__name__}: {e}"), "wall_seconds": time.perf_counter() - started}
    out["wall_seconds"] = time.perf_counter() - started
    return out


def run_sweep(
    sweep: Sweep,
    out_dir: str | Path,
    *,
    workers: int | None = None,
    executor: Executor = "local",
    address: str | None = None,
    progress: Callable[[RunEvent], None] | None = None,
    on_plan: Callable[[list[Point], list[Point]], None] | None = None,
    on_note: Callable[[str], None] | None = None,
) -> SweepReport:
    """Run every point of ``sweep`` that has no results in ``out_dir`` yet; write ``out_dir/runs/<run_id>/``
    for each and keep ``out_dir/catalog.duckdb`` up to date.

    Before anything runs: a run directory holding results of a different configuration is a
    :class:`ConfigError` (key ``--out``), as is a second sweep writing to the same folder. A failed run does not
    stop the others; it is listed in the report's ``failed``. ``on_plan(todo, skipped)`` is called once the
    plan is known; ``progress`` once per finished or failed run; ``on_note`` with a line for each thing the
    user should know (the sweep's ``notes`` on its flows, and each run done again because its files do not read
    back: also in the report's ``redone``).
    ``workers`` (default: the CPUs available)
    sizes the local process pool, or the local Ray started when ``address`` is None.

    The local pool starts its workers with ``spawn``, which imports the calling script again in each worker: a
    script that calls this must do so under ``if __name__ == "__main__":`` (notebooks and ``fctlab sweep`` need
    nothing).
    """
    from fctlab import catalog

    started = time.perf_counter()
    out = Path(out_dir)
    if workers is None:
        workers = default_workers()
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ConfigError("--workers", f"must be an integer >= 1 (got {workers!r})")
    check_executor(executor, address)
    from fctlab.results import check_output_dir

    check_output_dir(out)

    todo: list[Point] = []
    skipped: list[Point] = []
    redone: dict[str, str] = {}
    runs_root = out / RUNS_DIR
    for point in sweep.points:
        state, why = run_state(runs_root / point.run_id, _expected_config(point))
        if state == "conflict":
            raise ConfigError(
                "--out", f"{runs_root / point.run_id}: {why}; remove that directory or write the sweep elsewhere"
            )
        if state == "todo" and why:
            redone[point.run_id] = why
        (skipped if state == "done" else todo).append(point)

    report = SweepReport(out_dir=out, total=len(sweep.points), skipped=[p.run_id for p in skipped], redone=redone)
    # Ray is joined (or started) before anything is written: a cluster that cannot be reached leaves no folder
    ray_started = executor == "ray" and bool(todo) and _ray_connect(address, workers)
    try:
        with catalog.writer_lock(out, wait=False):
            for point in todo:
                clean_temporaries(runs_root / point.run_id)
            if on_note is not None:
                for note in sweep.notes:
                    on_note(note)
                for run_id, why in redone.items():
                    on_note(f"running {run_id} again: {why}")
            if on_plan is not None:
                on_plan(todo, skipped)
            recorder = _Recorder(out)
            recorder.sync()  # runs finished by an earlier, interrupted sweep (or deleted since) are caught up
            finished: set[str] = set()

            def done(point: Point, outcome: dict[str, Any]) -> None:
                error = outcome.get("error")
                if error is None and "result" in outcome:  # Ray: the driver writes
                    error = _write_returned(outcome["result"], runs_root / point.run_id)
                if error is None:
                    finished.add(point.run_id)
                    recorder.add(point.run_id, runs_root / point.run_id)
                else:
                    report.failed[point.run_id] = error
                if progress is not None:
                    progress(RunEvent(
                        run_id=point.run_id, ok=error is None, done=len(finished) + len(report.failed),
                        total=len(todo), wall_seconds=float(outcome.get("wall_seconds") or 0.0),
                        info=outcome.get("info", {}), error=error,
                    ))

            # one local worker on a machine with two cores or more: its runs may use two engine threads (same
            # results; only on fabrics that gain from them, see simulation.default_threads)
            pool = min(workers, len(todo))
            threads = 2 if executor == "local" and pool == 1 and (os.cpu_count() or 1) >= 2 else 1
            tasks = [(p, _task(p, sweep, runs_root, write_in_worker=executor == "local", threads=threads))
                     for p in todo]
            try:
                if tasks:
                    if executor == "ray":
                        _run_ray(tasks, done)
                    else:
                        _run_local(tasks, pool, done)
            finally:
                recorder.flush()
                report.catalog_error = recorder.error
            report.ran = [p.run_id for p in todo if p.run_id in finished]
    finally:
        if ray_started:
            _import_ray().shutdown()
    report.wall_seconds = time.perf_counter() - started
    return report


def _expected_config(point: Point) -> dict[str, Any]:
    return point.experiment.to_dict()


def _task(point: Point, sweep: Sweep, runs_root: Path, *, write_in_worker: bool, threads: int = 1) -> dict[str, Any]:
    exp = point.experiment
    return {
        "run_id": point.run_id,
        "values": point.values,
        "raw": point.raw,
        "base_dir": str(exp.base_dir),
        "source": exp.source,
        "overrides": tuple(sweep.overrides),
        "run_dir": str(runs_root / point.run_id) if write_in_worker else None,
        "threads": threads,
    }


def _write_returned(result: Mapping[str, Any], run_dir: Path) -> str | None:
    """Write a result a Ray task returned (the driver's side of the Ray executor)."""
    from fctlab.results import write_results
    from fctlab.simulation import Result

    try:
        write_results(Result(flows=result["flows"], summary=result["summary"], config=result["config"]), run_dir)
    except OSError as e:
        return _one_line(f"writing results to {run_dir}: {e}")
    return None


class _Recorder:
    """Records finished runs in the catalog from the driver, at most about once a second (a burst of short
    runs becomes one catalog update), and once more at the end."""

    def __init__(self, root: Path, interval: float = 1.0):
        self.root = root
        self.interval = interval
        self.pending: list[tuple[str, Path]] = []
        self.last = 0.0
        self.error: str | None = None

    def sync(self) -> None:
        from fctlab import catalog

        try:
            catalog.rebuild_unlocked(self.root)
        except Exception as e:  # the runs are the truth; a catalog problem must not stop the sweep
            self.error = _one_line(f"{type(e).__name__}: {e}")

    def add(self, run_id: str, run_dir: Path) -> None:
        self.pending.append((run_id, run_dir))
        if time.monotonic() - self.last >= self.interval:
            self.flush()

    def flush(self) -> None:
        from fctlab import catalog

        if not self.pending:
            return
        try:
            catalog.upsert_unlocked(self.root, self.pending)
            self.pending = []
            self.error = None
        except Exception as e:
            self.error = _one_line(f"{type(e).__name__}: {e}")
        self.last = time.monotonic()


#: How often a worker process checks that the driver that started it is still alive (seconds).
DRIVER_CHECK_SECONDS = 0.5


def _worker_init(driver_pid: int) -> None:
    """Tie a local worker process to its driver: it ends when the driver ends, however the driver ends (a
    signal, even SIGKILL), instead of running on, writing runs and holding the caller's terminal or pipe. On
    Linux the kernel sends it SIGKILL when the driver exits (PR_SET_PDEATHSIG); everywhere, a daemon thread
    exits the process once its parent is no longer the driver."""
    import threading

    try:
        import ctypes
        import signal

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, int(signal.SIGKILL), 0, 0, 0)  # 1 = PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass

    def watch() -> None:
        while os.getppid() == driver_pid:
            time.sleep(DRIVER_CHECK_SECONDS)
        os._exit(1)

    if os.getppid() != driver_pid:  # the driver ended before this worker started
        os._exit(1)
    threading.Thread(target=watch, name="fctlab-driver-watch", daemon=True).start()


def _run_local(
    tasks: Sequence[tuple[Point, dict[str, Any]]],
    workers: int,
    done: Callable[[Point, dict[str, Any]], None],
) -> None:
    """Run tasks in a pool of ``workers`` spawned processes, at most ``workers`` in flight (so an interrupted
    sweep loses only those). A worker process that dies fails the runs in flight and the pool is started again
    for the rest."""
    import multiprocessing
    from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
    from concurrent.futures.process import BrokenProcessPool

    queue = deque(tasks)
    ctx = multiprocessing.get_context("spawn")
    while queue:
        pool = ProcessPoolExecutor(max_workers=workers, mp_context=ctx, initializer=_worker_init,
                                   initargs=(os.getpid(),))
        inflight: dict[Future[dict[str, Any]], Point] = {}
        try:
            broken = False
            while (queue or inflight) and not broken:
                while queue and len(inflight) < workers:
                    point, task = queue.popleft()
                    inflight[pool.submit(execute_point, task)] = point
                finished, _ = wait(inflight, return_when=FIRST_COMPLETED)
                for fut in finished:
                    point = inflight.pop(fut)
                    try:
                        outcome = fut.result()
                    except BrokenProcessPool:
                        broken = True
                        outcome = {"error": "the worker process died (killed, out of memory, or crashed)"}
                    except Exception as e:  # e.g. a task that could not be sent to the worker
                        outcome = {"error": _one_line(f"{type(e).__name__}: {e}")}
                    done(point, outcome)
            if broken:
                for fut, point in inflight.items():
                    done(point, {"error": "the worker process pool broke while this run was in flight; rerun to retry"})
                inflight.clear()
        except BaseException:
            # Interrupted: stop the workers now rather than wait for the runs in flight (they lose nothing
            # but themselves: results are written atomically, and the next sweep reruns them).
            workers_alive = list((getattr(pool, "_processes", None) or {}).values())
            pool.shutdown(wait=False, cancel_futures=True)
            for proc in workers_alive:
                proc.terminate()
            raise
        pool.shutdown(wait=True)


#: How long joining a Ray cluster at ``--address`` may take: a host:port address must accept a TCP connection
#: within RAY_PROBE_SECONDS, and a trial connection (in a child process, which can be stopped: Ray's own
#: retries run for minutes and ignore signals) must succeed within RAY_CONNECT_SECONDS.
RAY_PROBE_SECONDS = 10.0
RAY_CONNECT_SECONDS = 60.0
#: Ray's default port of a cluster's head (GCS) and of its client server (``ray://``).
_RAY_PORTS = {"": 6379, "ray": 10001}


def _ray_connect(address: str | None, workers: int) -> bool:
    """Join the Ray cluster at ``address``, or start a local one with ``workers`` CPUs when it is None: a new
    Ray of this process's own (never a cluster found on the machine) whose processes listen on 127.0.0.1 only,
    no dashboard. Returns whether Ray was initialised here (and must be shut down). A cluster that cannot be reached is a
    ConfigError naming ``--address``, within RAY_PROBE_SECONDS when nothing answers at a host:port address,
    else within RAY_CONNECT_SECONDS."""
    import logging

    ray = _import_ray()
    if ray.is_initialized():  # the caller's own Ray (e.g. in a notebook): used as it is, and left running
        return False
    options: dict[str, Any] = {"include_dashboard": False, "logging_level": logging.WARNING}
    if address is None:
        options.update(address="local", num_cpus=workers)
    else:
        _probe_ray_address(address)
        _try_ray_address(address)
        options["address"] = address
    try:
        with _loopback_only(address is None):
            ray.init(**options)
    except Exception as e:  # noqa: BLE001  (Ray raises ConnectionError, RuntimeError, ValueError...)
        with contextlib.suppress(Exception):
            ray.shutdown()
        where = f"the Ray cluster at {address}" if address else "a local Ray"
        raise ConfigError("--address" if address else "--executor",
                          f"cannot start or join {where}: {_one_line(f'{type(e).__name__}: {e}')}") from None
    return True


#: Ray's switch for a single-machine Ray (its default on macOS and Windows): the node's address is 127.0.0.1,
#: and its servers (GCS, raylet, workers) listen there only.
_RAY_LOCAL_ONLY_ENV = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"


@contextlib.contextmanager
def _loopback_only(active: bool) -> Iterator[None]:
    """While Ray starts, have it take 127.0.0.1 as the node's address, so that a local Ray is not reachable
    from the network. The processes it starts inherit the setting from the environment; Ray, when already
    imported, has read it into ``ray_constants`` and is told there too."""
    if not active:
        yield
        return
    before = os.environ.get(_RAY_LOCAL_ONLY_ENV)
    os.environ[_RAY_LOCAL_ONLY_ENV] = "0"
    constants = None
    try:
        from ray._private import ray_constants as constants  # type: ignore[no-redef]
    except ImportError:
        pass
    saved = getattr(constants, "ENABLE_RAY_CLUSTER", None)
    if constants is not None and saved is not None:
        constants.ENABLE_RAY_CLUSTER = False
    try:
        yield
    finally:
        if constants is not None and saved is not None:
            constants.ENABLE_RAY_CLUSTER = saved
        if before is None:
            os.environ.pop(_RAY_LOCAL_ONLY_ENV, None)
        else:
            os.environ[_RAY_LOCAL_ONLY_ENV] = before


def _probe_ray_address(address: str) -> None:
    """Refuse a ``host:port`` (or ``ray://host:port``) address where nothing accepts a TCP connection within
    RAY_PROBE_SECONDS; Ray itself would retry for minutes. ``auto`` and other forms are left to Ray."""
    import socket
    from urllib.parse import urlsplit

    scheme, sep, rest = address.partition("://")
    if not sep:
        scheme, rest = "", address
    if address == "auto" or scheme not in _RAY_PORTS:
        return
    try:
        parts = urlsplit(f"//{rest}")
        host, port = parts.hostname, parts.port or _RAY_PORTS[scheme]
    except ValueError as e:
        raise ConfigError("--address", f"not a Ray address ({e}): give host:port, ray://host:port or auto") from None
    if not host:
        raise ConfigError("--address", f"not a Ray address {address!r}: give host:port, ray://host:port or auto")
    try:
        socket.create_connection((host, port), timeout=RAY_PROBE_SECONDS).close()
    except OSError as e:
        reason = "no answer" if isinstance(e, TimeoutError) else _one_line(e.strerror or str(e))
        raise ConfigError("--address", f"no Ray cluster reachable at {host}:{port} ({reason}, waited at most "
                          f"{RAY_PROBE_SECONDS:.0f} s)") from None


_TRY_RAY = """
import logging, sys
import ray
ray.init(address=sys.argv[1], include_dashboard=False, logging_level=logging.ERROR)
ray.shutdown()
"""


def _try_ray_address(address: str) -> None:
    """Join the cluster at ``address`` once from a child process, stopped after RAY_CONNECT_SECONDS; a failure
    is a ConfigError naming ``--address`` with Ray's own last line."""
    import subprocess
    import sys

    env = dict(os.environ)
    env.setdefault("RAY_BACKEND_LOG_LEVEL", "error")
    try:
        proc = subprocess.run([sys.executable, "-c", _TRY_RAY, address], capture_output=True, text=True, env=env,
                              timeout=RAY_CONNECT_SECONDS, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        raise ConfigError("--address", f"no Ray cluster joined at {address} within {RAY_CONNECT_SECONDS:.0f} s"
                          ) from None
    if proc.returncode != 0:
        lines = [ln for ln in proc.stderr.splitlines() if re.match(r"^[A-Za-z_.]*(Error|Exception)\b", ln)]
        why = lines[-1] if lines else (proc.stderr.strip().splitlines() or [f"exit code {proc.returncode}"])[-1]
        raise ConfigError("--address", f"cannot join the Ray cluster at {address}: {_one_line(why)}")


def _run_ray(
    tasks: Sequence[tuple[Point, dict[str, Any]]],
    done: Callable[[Point, dict[str, Any]], None],
) -> None:
    """Run each task as a Ray task on the Ray this process has joined (:func:`_ray_connect`). Tasks return
    their results to this driver, which writes them: no shared file system is needed. Nodes need fctlab
    installed (or a Ray runtime_env that installs it)."""
    ray = _import_ray()
    remote = ray.remote(num_cpus=1)(execute_point)
    refs = {remote.remote(dict(task)): point for point, task in tasks}
    try:
        while refs:
            ready, _ = ray.wait(list(refs), num_returns=1)
            for ref in ready:
                point = refs.pop(ref)
                try:
                    outcome = ray.get(ref)
                except Exception as e:  # a Ray-level failure (worker died, task lost)
                    cause = getattr(e, "cause", None) or e
                    outcome = {"error": _one_line(f"{type(cause).__name__}: {cause}")}
                done(point, outcome)
    except BaseException:
        for ref in refs:
            ray.cancel(ref, force=True)
        raise


# The names fctlab.tune runs its parallel trials with (the same workers and Ray connection as a sweep's).
#: :func:`_import_ray`: Ray, or a ConfigError saying how to install it.
import_ray = _import_ray
#: :func:`_ray_connect`: join the Ray cluster at an address, or start a local one.
ray_connect = _ray_connect
#: :func:`_worker_init`: tie a worker process to its driver.
worker_init = _worker_init
#: the first key at which two configs differ, as a message (:mod:`fctlab.rundir`).
first_difference = _rundir_first_difference
