"""Result files of a run: ``flows.parquet`` (one row per flow), ``summary.json`` and ``config.json``.

Every file is written to a temporary name in its final directory, flushed to disk, and renamed over the final
name with ``os.replace`` (atomic on POSIX), so a run killed mid-write leaves either the old file or the new one,
never half a file. ``summary.json`` is written last: its presence means the run's files are complete.
"""

from __future__ import annotations

import json
import math
import os
import secrets
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import IO, Any

FLOWS_FILE = "flows.parquet"
SUMMARY_FILE = "summary.json"
CONFIG_FILE = "config.json"


def check_output_dir(out: str | Path, key: str = "--out") -> None:
    """Check, without writing anything, that results can be written to ``out``: it is a directory or can be
    made one, in a folder this process may write. Raises ConfigError naming ``key``."""
    from fctlab.config import ConfigError

    out = Path(out)
    if out.exists() and not out.is_dir():
        raise ConfigError(key, f"{out} exists and is not a directory")
    existing = out
    while not existing.exists():  # the nearest folder that exists: the new ones are made in it
        if existing.parent == existing:
            break
        existing = existing.parent
    if not existing.is_dir():
        raise ConfigError(key, f"{out} cannot be created: {existing} is a file, not a directory")
    if not os.access(existing, os.W_OK | os.X_OK):
        why = "is not writable" if existing == out else f"cannot be created: {existing} is not writable"
        raise ConfigError(key, f"{out} {why}")


def jsonable(value: Any) -> Any:
    """A value made strict-JSON safe: NaN/inf become null, numpy scalars and arrays become Python values."""
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if hasattr(value, "tolist") and not isinstance(value, (str, bytes)):
        return jsonable(value.tolist())
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, Path):
        return str(value)
    return value


def atomic_write(path: Path, write: Callable[[IO[bytes]], None]) -> None:
    """Call ``write(file)`` on a temporary file beside ``path``, then rename it to ``path``.

    On any exception the temporary file is removed and ``path`` is left as it was.
    """
    path = Path(path)
    # Opened with "x" (never clobbers) and the process umask, so the final file gets ordinary permissions.
    tmp = path.parent / f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp"
    try:
        with open(tmp, "xb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def write_json(path: Path, data: Any) -> None:
    """Write strict JSON (no NaN), indented, atomically."""
    text = json.dumps(jsonable(data), indent=2, allow_nan=False) + "\n"
    atomic_write(path, lambda f: f.write(text.encode("utf-8")))


def write_results(result: Any, out_dir: str | Path, *, compression: str | None = None) -> dict[str, Path]:
    """Write a :class:`fctlab.Result` to ``out_dir`` (created if needed); returns the paths written.

    ``compression`` is the Parquet codec; by default the experiment's ``output.compression`` (zstd).
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    if compression is None:
        compression = (result.config.get("output") or {}).get("compression", "zstd")
    paths = {"flows": out / FLOWS_FILE, "config": out / CONFIG_FILE, "summary": out / SUMMARY_FILE}
    atomic_write(paths["flows"], lambda f: _write_parquet(result.flows, f, compression, pa, pq))
    write_json(paths["config"], result.config)
    write_json(paths["summary"], result.summary)
    return paths


#: Rows converted to Arrow at a time when writing flows.parquet (one row group each): the conversion then
#: holds one slice of the flow table, not a second copy of all of it.
PARQUET_ROWS = 65_536


def _write_parquet(df: Any, f: IO[bytes], compression: str, pa: Any, pq: Any) -> None:
    first = pa.Table.from_pandas(df.iloc[:PARQUET_ROWS], preserve_index=False)
    with pq.ParquetWriter(f, first.schema, compression=compression) as w:
        w.write_table(first)
        del first
        for start in range(PARQUET_ROWS, len(df), PARQUET_ROWS):
            chunk = df.iloc[start:start + PARQUET_ROWS]
            w.write_table(pa.Table.from_pandas(chunk, schema=w.schema, preserve_index=False))


def unreadable(run_dir: str | Path) -> str | None:
    """Why a finished run's files do not read back (one line), or None when they do: summary.json and
    config.json must be JSON objects, and flows.parquet's footer must read and hold the summary's flow count.
    Cheap (the flow table itself is not read): it catches truncated and overwritten files."""
    import pyarrow.parquet as pq

    out = Path(run_dir)
    summary: Any = None
    for name in (SUMMARY_FILE, CONFIG_FILE):
        path = out / name
        if name == CONFIG_FILE and not path.exists():
            continue
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as e:
            return f"{path} does not read back ({' '.join(str(e).split())})"
        if not isinstance(data, dict):
            return f"{path} does not read back (not a JSON object)"
        if name == SUMMARY_FILE:
            summary = data
    path = out / FLOWS_FILE
    try:
        rows = pq.read_metadata(path).num_rows
    except Exception as e:  # noqa: BLE001  (pyarrow raises several types for a damaged file)
        return f"{path} does not read back ({' '.join(str(e).split())})"
    flows = summary.get("flows") if summary else None
    if isinstance(flows, int) and rows != flows:
        return f"{path} does not read back (it has {rows} rows, summary.json says {flows} flows)"
    return None


def read_results(out_dir: str | Path) -> Any:
    """Read a results directory back into a :class:`fctlab.Result` (``experiment`` is None)."""
    import pandas as pd

    from fctlab.simulation import Result

    out = Path(out_dir)
    summary = json.loads((out / SUMMARY_FILE).read_text(encoding="utf-8"))
    config_path = out / CONFIG_FILE
    config = json.loads(config_path.read_text(encoding="utf-8")) if config_path.exists() else {}
    flows = pd.read_parquet(out / FLOWS_FILE)
    return Result(flows=flows, summary=summary, stats=summary.get("engine", {}), config=config)
