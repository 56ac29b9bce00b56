"""The catalog of a results folder: ``DIR/catalog.duckdb``, one row per run in table ``runs`` and every run's
flows in view ``flows``, so that all runs of a sweep can be queried with SQL (schema in docs/results.md).

The run directories (flows.parquet, summary.json, config.json) are the truth; the catalog is an index of them
that :func:`rebuild` recreates at any time. Only one process writes it: writers hold an exclusive lock on
``DIR/.fctlab.lock`` (a sweep holds it for its whole run), and each update replaces the table in one
transaction. ``fctlab.catalog(DIR)`` is :func:`load`: this module is callable.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import sys
import time
import types
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from fctlab.config import ConfigError

CATALOG_FILE = "catalog.duckdb"
#: Runs noted by :func:`record_later` (``fctlab run``, ``compare``), one ``run_id<TAB>run folder`` line each (the
#: folder relative to the results folder), until the catalog records them.
PENDING_FILE = ".catalog-pending"
LOCK_FILE = ".fctlab.lock"
#: Statistics copied from each summary bin into ``<bin>_<stat>`` columns.
BIN_STATS = ("count", "mean_fct_ns", "p99_fct_ns", "mean_slowdown", "p99_slowdown")
#: The bins of a summary (analyze.SUMMARY_BINS; restated here so importing the catalog does not load numpy).
BINS = ("small", "medium", "large", "all")
#: How long a reader or writer waits for DuckDB's own file lock held by another process.
LOCK_WAIT_SECONDS = 30.0


# --------------------------------------------------------------------------------------------------------------
# Rows


def _columns() -> list[tuple[str, str]]:
    """The fixed columns of ``runs`` (name, pyarrow type name), in order; axis columns go after flows_path."""
    cols = [
        ("name", "string"), ("scheme", "string"), ("topology", "string"), ("pattern", "string"), ("cdf", "string"),
        ("trace", "string"), ("load", "float64"), ("seed", "uint64"), ("flows", "int64"), ("finished", "int64"),
        ("unfinished", "int64"), ("warmup", "int64"),
    ]
    cols += [(f"{b}_{s}", "int64" if s == "count" else "float64") for b in BINS for s in BIN_STATS]
    cols += [
        ("deadline_flows", "int64"), ("application_throughput", "float64"), ("terminated_flows", "int64"),
        ("drops", "int64"), ("ecn_marks", "int64"), ("sim_time_ns", "float64"), ("wall_seconds", "float64"),
        ("events", "int64"), ("hit_time_limit", "bool"), ("config", "string"), ("summary", "string"),
        ("recorded_at", "timestamp"),
    ]
    return cols


FIXED_COLUMNS = ("run_id", "flows_path", *(c for c, _ in _columns()))


def _row(run_id: str, flows_path: str, config: Mapping[str, Any], summary: Mapping[str, Any],
         recorded_at: dt.datetime) -> dict[str, Any]:
    """One ``runs`` row from a run's config.json and summary.json."""
    workload = config.get("workload") or {}
    bins = summary.get("bins") or {}
    row: dict[str, Any] = {
        "run_id": run_id,
        "flows_path": flows_path,
        "axes": dict(((config.get("sweep_point") or {}).get("axes")) or {}),
        "name": summary.get("name", config.get("name")),
        "scheme": summary.get("scheme", (config.get("scheme") or {}).get("name")),
        "topology": (config.get("topology") or {}).get("kind"),
        "pattern": workload.get("pattern"),
        "cdf": workload.get("cdf"),
        "trace": workload.get("trace"),
        "load": workload.get("load"),
        "seed": summary.get("seed", config.get("seed")),
        "flows": summary.get("flows"),
        "finished": summary.get("finished_flows"),
        "unfinished": summary.get("unfinished_flows"),
        "warmup": summary.get("warmup_flows"),
    }
    for b in BINS:
        for s in BIN_STATS:
            row[f"{b}_{s}"] = (bins.get(b) or {}).get(s)
    for key in ("deadline_flows", "application_throughput", "terminated_flows", "drops", "ecn_marks",
                "sim_time_ns", "wall_seconds", "events", "hit_time_limit"):
        row[key] = summary.get(key)
    row["config"] = json.dumps(config, sort_keys=True)
    # summary.json repeats the config; the catalog keeps it once, in the config column.
    row["summary"] = json.dumps({k: v for k, v in summary.items() if k != "config"}, sort_keys=True)
    row["recorded_at"] = recorded_at
    return row


def _read_run(root: Path, run_dir: Path, run_id: str) -> dict[str, Any]:
    from fctlab.results import CONFIG_FILE, FLOWS_FILE, SUMMARY_FILE

    summary_path = run_dir / SUMMARY_FILE
    summary = json.loads(summary_path.read_text(encoding="utf-8"))
    config_path = run_dir / CONFIG_FILE
    if config_path.is_file():
        config = json.loads(config_path.read_text(encoding="utf-8"))
    else:
        config = summary.get("config") or {}
    # UTC without a time zone: a TIMESTAMPTZ column would need pytz in every Python that fetches it.
    recorded = dt.datetime.fromtimestamp(summary_path.stat().st_mtime, tz=dt.timezone.utc).replace(tzinfo=None)
    flows_path = (run_dir / FLOWS_FILE).resolve().relative_to(root.resolve()).as_posix()
    return _row(run_id, flows_path, config, summary, recorded)


def default_run_id(root: Path, run_dir: Path) -> str:
    """A run's id in the catalog of ``root``: its directory relative to ``root`` (``runs/`` left off, so a
    sweep's run ids are its directory names); the directory's own name when it is ``root``."""
    rel = Path(os.path.relpath(Path(run_dir).resolve(), Path(root).resolve())).as_posix()
    if rel.startswith("../") or rel == "..":
        raise ValueError(f"run directory {run_dir} is not inside the catalog's folder {root}")
    if rel == ".":
        return Path(run_dir).resolve().name
    if rel.startswith("runs/"):
        rel = rel[len("runs/"):]
    return rel


def _discover(root: Path, skipped: list[str] | None = None) -> list[tuple[str, Path]]:
    """Every finished run under ``root`` (a folder with summary.json and flows.parquet) whose files read back,
    by run id; a run whose files do not is left out, with the reason appended to ``skipped``."""
    from fctlab.results import FLOWS_FILE, SUMMARY_FILE, unreadable

    found = []
    for summary in root.rglob(SUMMARY_FILE):
        run_dir = summary.parent
        if (run_dir / FLOWS_FILE).is_file():
            why = unreadable(run_dir)
            if why is None:
                found.append((default_run_id(root, run_dir), run_dir))
            elif skipped is not None:
                skipped.append(why)
    return sorted(found)


def _table(rows: Sequence[Mapping[str, Any]]) -> Any:
    """The ``runs`` table as Arrow: fixed columns typed, one column per axis key (typed from its values)."""
    import pyarrow as pa

    types_ = {"string": pa.string(), "float64": pa.float64(), "int64": pa.int64(), "uint64": pa.uint64(),
              "bool": pa.bool_(), "timestamp": pa.timestamp("us")}
    fixed = dict(_columns())
    axis_names: list[str] = []
    for row in rows:
        for key in row["axes"]:
            if key not in axis_names and key not in FIXED_COLUMNS:
                axis_names.append(key)
    arrays: dict[str, Any] = {
        "run_id": pa.array([r["run_id"] for r in rows], pa.string()),
        "flows_path": pa.array([r["flows_path"] for r in rows], pa.string()),
    }
    for key in axis_names:
        arrays[key] = _axis_array([r["axes"].get(key) for r in rows])
    for name, kind in fixed.items():
        arrays[name] = pa.array([r[name] for r in rows], types_[kind])
    return pa.table(arrays)


def _axis_array(values: list[Any]) -> Any:
    """An axis column: bool, int64, float64 or string when every value (missing ones aside) fits that type,
    otherwise the values as JSON text."""
    import pyarrow as pa

    present = [v for v in values if v is not None]
    if present and all(isinstance(v, bool) for v in present):
        return pa.array(values, pa.bool_())
    if present and all(isinstance(v, int) and not isinstance(v, bool) for v in present):
        if all(-(2**63) <= v < 2**63 for v in present):
            return pa.array(values, pa.int64())
    if present and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in present):
        return pa.array([None if v is None else float(v) for v in values], pa.float64())
    if all(isinstance(v, str) for v in present):
        return pa.array(values, pa.string())
    return pa.array([None if v is None else json.dumps(v, sort_keys=True) for v in values], pa.string())


# --------------------------------------------------------------------------------------------------------------
# Writing (one process at a time)


@contextlib.contextmanager
def writer_lock(root: str | Path, *, wait: bool = True) -> Iterator[None]:
    """Hold the exclusive writer lock of ``root`` (created if needed). With ``wait=False`` a lock held by
    another process is a :class:`ConfigError` naming ``--out`` (two sweeps writing one folder)."""
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    try:
        import fcntl
    except ImportError:  # no advisory locks on this platform: DuckDB's own file lock still guards the catalog
        yield
        return
    with open(root / LOCK_FILE, "a+") as f:
        try:
            fcntl.flock(f.fileno(), fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        except BlockingIOError:
            raise ConfigError("--out", f"{root} is being written by another fctlab process (a sweep?); wait for it "
                              "to finish or choose another folder") from None
        try:
            yield
        finally:
            fcntl.flock(f.fileno(), fcntl.LOCK_UN)


def check_not_being_written(folder: str | Path) -> None:
    """Raise a :class:`ConfigError` naming ``--out`` when another process holds the writer lock of ``folder``
    or of a folder it is in (e.g. a sweep writing there). Creates nothing."""
    try:
        import fcntl
    except ImportError:
        return
    folder = Path(folder).absolute()
    for root in (folder, *folder.parents):
        lock = root / LOCK_FILE
        if not lock.is_file():
            continue
        try:
            with open(lock, "rb") as f:
                try:
                    fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    raise ConfigError("--out", f"{root} is being written by another fctlab process (a sweep?); "
                                      "wait for it to finish or choose another folder") from None
                fcntl.flock(f.fileno(), fcntl.LOCK_UN)
        except OSError:
            continue


class CatalogError(RuntimeError):
    """A catalog or a run's file that cannot be read; the message (one line) names the file and what to do."""


def _connect(path: Path, *, read_only: bool) -> Any:
    """Open the DuckDB file, waiting while another process holds DuckDB's file lock."""
    import duckdb

    deadline = time.monotonic() + LOCK_WAIT_SECONDS
    while True:
        try:
            return duckdb.connect(str(path), read_only=read_only)
        except duckdb.IOException as e:
            if not _is_lock_error(e) or time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def _is_lock_error(e: BaseException) -> bool:
    return "lock" in str(e).lower()


def _connect_for_writing(root: Path) -> Any:
    """A writable connection to the catalog; a catalog file that DuckDB cannot open (damaged, or not a
    database) is moved aside to ``catalog.duckdb.corrupt`` (its WAL too) and a new one is started: the run
    folders are the truth, the caller writes every row again."""
    import duckdb

    path = root / CATALOG_FILE
    try:
        return _connect(path, read_only=False)
    except duckdb.Error as e:
        if _is_lock_error(e) or not path.exists():
            raise
        _move_aside(path, f"could not be opened ({' '.join(str(e).split())})")
        return _connect(path, read_only=False)


def _move_aside(path: Path, why: str) -> None:
    """Move a damaged catalog (and its WAL) to ``catalog.duckdb.corrupt``, saying so on stderr."""
    aside = path.with_name(CATALOG_FILE + ".corrupt")
    os.replace(path, aside)
    wal = path.with_name(CATALOG_FILE + ".wal")
    if wal.exists():
        os.replace(wal, aside.with_name(aside.name + ".wal"))
    sys.stderr.write(f"warning: {path} {why}; moved aside to {aside.name}, rebuilding from the run folders\n")


def _sql_text(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _write(root: Path, rows: Sequence[Mapping[str, Any]], con: Any = None) -> None:
    """Replace the catalog's ``runs`` table with ``rows`` and its ``flows`` view with their Parquet files, in
    one transaction (on ``con`` if given, left open; otherwise on a connection of its own)."""
    table = _table(sorted(rows, key=lambda r: r["run_id"]))
    absroot = root.resolve().as_posix()
    own = con is None
    if own:
        con = _connect_for_writing(root)
    try:
        con.register("new_runs", table)
        con.execute("BEGIN TRANSACTION")
        con.execute("CREATE OR REPLACE TABLE runs AS SELECT * FROM new_runs")
        if len(rows):
            files = ", ".join(_sql_text(f"{absroot}/{r['flows_path']}") for r in rows)
            # filename=true tags each flow with its file; the join turns the file into its run id.
            con.execute(
                "CREATE OR REPLACE VIEW flows AS SELECT r.run_id, f.* EXCLUDE (filename) "
                f"FROM read_parquet([{files}], filename = true, union_by_name = true) AS f "
                f"JOIN (SELECT run_id, {_sql_text(absroot + '/')} || flows_path AS file FROM runs) AS r "
                "ON f.filename = r.file"
            )
        else:
            con.execute("CREATE OR REPLACE VIEW flows AS SELECT CAST(NULL AS VARCHAR) AS run_id WHERE false")
        con.execute("COMMIT")
        con.unregister("new_runs")
    finally:
        if own:
            con.close()


def _stored_rows(root: Path, con: Any = None) -> list[dict[str, Any]] | None:
    """The rows already in the catalog, rebuilt from their stored config and summary JSON (read on ``con`` if
    given, left open); None when the catalog holds no ``runs`` table (new, or left by a write that never
    committed: its rows must come from the run folders)."""
    own = con is None
    if own:
        path = root / CATALOG_FILE
        if not path.exists():
            return None
        con = _connect(path, read_only=False)
    try:
        found = con.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_name = 'runs'"
        ).fetchall()
        if not found:
            return None
        records = con.execute("SELECT run_id, flows_path, config, summary, recorded_at FROM runs").fetchall()
    finally:
        if own:
            con.close()
    rows = []
    for run_id, flows_path, config, summary, recorded_at in records:
        rows.append(_row(run_id, flows_path, json.loads(config), json.loads(summary), recorded_at))
    return rows


def _pending(root: Path) -> list[tuple[str, Path]]:
    """The runs :func:`record_later` noted in ``root/.catalog-pending`` and not yet in the catalog, oldest first
    (a run noted twice once, at its last place); a noted run whose folder no longer holds its results is left
    out (the catalog is an index of what is there)."""
    from fctlab.results import FLOWS_FILE, SUMMARY_FILE

    try:
        text = (root / PENDING_FILE).read_text(encoding="utf-8")
    except FileNotFoundError:
        return []
    runs: dict[str, Path] = {}
    for line in text.splitlines():
        run_id, sep, rel = line.partition("\t")
        if not sep or not run_id:
            continue  # (a line cut short by a killed write)
        runs.pop(run_id, None)
        runs[run_id] = root / rel
    return [(run_id, d) for run_id, d in runs.items() if (d / SUMMARY_FILE).is_file() and (d / FLOWS_FILE).is_file()]


def upsert_unlocked(root: Path, runs: Iterable[tuple[str, Path]]) -> None:
    """Add or replace the given runs (run id, run dir), and those :func:`record_later` noted; the caller holds
    the writer lock. The other rows are the catalog's; when it has none to give (no catalog yet, no ``runs``
    table, or rows that do not read back), every run folder under ``root`` is recorded instead, and a catalog
    whose rows do not read back is first moved aside to ``catalog.duckdb.corrupt``."""
    import duckdb

    root = Path(root)
    path = root / CATALOG_FILE
    noted = _pending(root)
    new = {run_id: _read_run(root, Path(run_dir), run_id) for run_id, run_dir in [*noted, *runs]}
    # one connection reads the stored rows and writes the new table: opening and closing the file costs tens of ms
    con = None
    stored: list[dict[str, Any]] | None = None
    try:
        con = _connect(path, read_only=False)
        stored = _stored_rows(root, con)
    except Exception as e:  # unreadable or from another version: the run folders are the truth
        if con is not None:
            con.close()
            con = None
        if isinstance(e, duckdb.Error) and _is_lock_error(e):
            raise
        if path.exists():
            _move_aside(path, f"cannot be read ({' '.join(str(e).split())})")
    if stored is None:
        rows = {run_id: _read_run(root, run_dir, run_id) for run_id, run_dir in _discover(root)}
    else:
        rows = {r["run_id"]: r for r in stored}
    rows.update(new)
    try:
        _write(root, list(rows.values()), con)
    finally:
        if con is not None:
            con.close()
    _forget_pending(root)


def _forget_pending(root: Path) -> None:
    try:
        (root / PENDING_FILE).unlink()
    except FileNotFoundError:
        pass


def rebuild_unlocked(root: Path, skipped: list[str] | None = None) -> int:
    rows = [_read_run(root, run_dir, run_id) for run_id, run_dir in _discover(root, skipped)]
    _write(root, rows)
    _forget_pending(root)  # (every run folder is in: the noted ones too)
    return len(rows)


def record_run(root: str | Path, run_dir: str | Path, run_id: str | None = None) -> str:
    """Record one finished run (a folder with flows.parquet and summary.json inside ``root``) in
    ``root/catalog.duckdb``, replacing an earlier row of the same id; returns the run id (by default
    :func:`default_run_id`). Waits while another process writes the catalog."""
    root, run_dir = Path(root), Path(run_dir)
    run_id = run_id or default_run_id(root, run_dir)
    with writer_lock(root, wait=True):
        upsert_unlocked(root, [(run_id, run_dir)])
    return run_id


def record_later(root: str | Path, run_dir: str | Path, run_id: str | None = None) -> str:
    """Note a finished run for the catalog of ``root`` without opening it: one line in ``root/.catalog-pending``
    (written under the writer lock), which the next reading or writing of the catalog (:func:`load`,
    :func:`connect`, :func:`record_run`, a sweep) records as :func:`record_run` would. What ``fctlab run`` and
    ``compare`` do: importing DuckDB and rewriting the catalog took about half a second, several times a
    flow-level run's engine time, for an index that is only needed when it is read. Returns the run id (by
    default :func:`default_run_id`)."""
    root, run_dir = Path(root), Path(run_dir)
    run_id = run_id or default_run_id(root, run_dir)
    if "\t" in run_id or "\n" in run_id:
        raise ValueError(f"run id {run_id!r}: a tab or a line break cannot be noted; use record_run")
    rel = os.path.relpath(run_dir.resolve(), root.resolve())
    with writer_lock(root, wait=True):
        with open(root / PENDING_FILE, "a", encoding="utf-8") as f:
            f.write(f"{run_id}\t{Path(rel).as_posix()}\n")
    return run_id


def sync(root: str | Path) -> bool:
    """Record in ``root/catalog.duckdb`` the runs :func:`record_later` noted (what :func:`load` and
    :func:`connect` do first). Returns False, leaving them noted, when another process holds the writer lock (a
    sweep writing the folder records them itself); True otherwise."""
    root = Path(root)
    if not (root / PENDING_FILE).is_file():
        return True
    try:
        with writer_lock(root, wait=False):
            if (root / PENDING_FILE).is_file():  # (another process may have recorded them meanwhile)
                upsert_unlocked(root, [])
    except ConfigError:
        return False
    except (OSError, ValueError) as e:  # a noted run that does not read back: the catalog is read as it is
        sys.stderr.write(f"warning: runs noted in {root / PENDING_FILE} not recorded ({' '.join(str(e).split())}); "
                         f"fctlab.catalog.rebuild({str(root)!r}) recreates the catalog from the run folders\n")
    return True


def rebuild(root: str | Path) -> int:
    """Recreate ``root/catalog.duckdb`` from every run folder under ``root`` (e.g. after moving the folder,
    deleting runs by hand, or a damaged catalog, which is moved aside to ``catalog.duckdb.corrupt``); returns
    the number of runs recorded. A run whose files do not read back is left out and named on stderr (a sweep
    runs it again when resumed)."""
    root = Path(root)
    if not root.is_dir():
        raise FileNotFoundError(f"{root}: no such results folder")
    skipped: list[str] = []
    with writer_lock(root, wait=True):
        n = rebuild_unlocked(root, skipped)
    for why in skipped:
        sys.stderr.write(f"warning: left out of the catalog: {why}\n")
    return n


# --------------------------------------------------------------------------------------------------------------
# Reading


def connect(root: str | Path) -> Any:
    """A read-only DuckDB connection to ``root/catalog.duckdb`` for SQL (``runs`` table, ``flows`` view)."""
    import duckdb

    sync(root)
    path = Path(root) / CATALOG_FILE
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no catalog here (fctlab.catalog.rebuild({str(root)!r}) makes one)")
    try:
        return _connect(path, read_only=True)
    except duckdb.Error as e:
        if _is_lock_error(e):
            raise
        raise CatalogError(f"{path} cannot be read ({' '.join(str(e).split())}); "
                           f"fctlab.catalog.rebuild({str(root)!r}) recreates it from the run folders") from None


def load(root: str | Path, *, flows: bool = True) -> tuple[Any, Any]:
    """``(runs, flows)`` as pandas DataFrames: the ``runs`` table (ordered by run id) and every run's flow table
    with its ``run_id`` as the first column (None when ``flows=False``). Flow files are found relative to
    ``root``, so a moved results folder still loads."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    import duckdb

    root = Path(root)
    con = connect(root)
    try:
        rel = con.sql("SELECT * FROM runs ORDER BY run_id")
        # duckdb 2 names it to_arrow_table; 1.x has arrow() (its .df() warns under pandas 3)
        runs = (getattr(rel, "to_arrow_table", None) or rel.arrow)().to_pandas()
    except duckdb.Error as e:
        raise CatalogError(f"{root / CATALOG_FILE} cannot be read ({' '.join(str(e).split())}); "
                           f"fctlab.catalog.rebuild({str(root)!r}) recreates it from the run folders") from None
    finally:
        con.close()
    if not flows:
        return runs, None
    tables = []
    for run_id, rel in zip(runs["run_id"], runs["flows_path"]):
        try:
            t = pq.read_table(root / rel)
        except Exception as e:  # noqa: BLE001  (pyarrow raises several types for a damaged file)
            raise CatalogError(
                f"{root / rel} (run {run_id}) cannot be read ({' '.join(str(e).split())}); run it again (a sweep "
                "resumed with the same command does) or remove its folder, then fctlab.catalog.rebuild"
                f"({str(root)!r})"
            ) from None
        tables.append(t.add_column(0, "run_id", pa.array([run_id] * t.num_rows, pa.string())))
    if not tables:
        import pandas as pd

        return runs, pd.DataFrame({"run_id": pd.Series([], dtype=object)})
    return runs, pa.concat_tables(tables, promote_options="default").to_pandas()


class _CallableModule(types.ModuleType):
    """Lets ``fctlab.catalog(DIR)`` load a catalog while ``fctlab.catalog.rebuild`` etc. stay reachable."""

    def __call__(self, root: str | Path, *, flows: bool = True) -> tuple[Any, Any]:
        return load(root, flows=flows)


sys.modules[__name__].__class__ = _CallableModule
