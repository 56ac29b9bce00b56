"""What the command line's start-up and a run load: `import fctlab` and `fctlab --help` import none of the heavy
libraries, and `fctlab run` (either level) neither pandas, DuckDB, matplotlib nor rich. Each is checked in a
fresh Python process by the modules it holds at the end (`sys.modules`), not by a time; the times are measured by
benchmarks/e2e_flow.py (docs/performance.md)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import TINY

#: Libraries that take from tens to hundreds of milliseconds to import.
HEAVY = ("numpy", "pandas", "pyarrow", "duckdb", "matplotlib", "scipy", "pydantic", "rich", "typer")


def _loaded(code: str, *args: str, cwd: Path | None = None) -> set[str]:
    """The top-level packages a fresh interpreter holds after running ``code`` (which may end by SystemExit)."""
    script = (
        "import sys, json\n"
        "try:\n"
        + "".join(f"    {line}\n" for line in code.splitlines())
        + "except SystemExit as e:\n"
        "    assert e.code in (0, None), e.code\n"
        "sys.__stdout__.write('\\nMODULES ' + json.dumps(sorted({m.split('.')[0] for m in sys.modules})) + '\\n')\n"
    )
    out = subprocess.run([sys.executable, "-c", script, *args], check=True, capture_output=True, text=True, cwd=cwd)
    line = [x for x in out.stdout.splitlines() if x.startswith("MODULES ")][-1]
    return set(json.loads(line[len("MODULES "):]))


def test_the_probe_sees_a_heavy_import():
    # the check itself: a process that imports numpy is seen to hold it
    assert "numpy" in _loaded("import numpy")
    assert not {"numpy", "pandas"} & _loaded("pass")


def test_import_fctlab_loads_no_heavy_library():
    loaded = _loaded("import fctlab\nfctlab.__all__")
    assert "fctlab" in loaded
    assert not set(HEAVY) & loaded, sorted(set(HEAVY) & loaded)
    assert "fctlab._core" not in _loaded("import fctlab\nimport sys\nassert 'fctlab._core' not in sys.modules")


def test_fctlab_help_loads_only_the_command_line_library():
    loaded = _loaded("from fctlab.cli import app\napp(['--help'], prog_name='fctlab')")
    assert "typer" in loaded  # the command line itself
    assert not (set(HEAVY) - {"typer"}) & loaded, sorted((set(HEAVY) - {"typer"}) & loaded)


@pytest.mark.parametrize("level", ["flow", "packet"])
def test_a_run_loads_neither_pandas_duckdb_matplotlib_nor_rich(tmp_path, level):
    exp = tmp_path / "exp.toml"
    exp.write_text(TINY)
    out = tmp_path / "out"
    loaded = _loaded(
        "from fctlab.cli import app\n"
        f"app(['run', {str(exp)!r}, '--out', {str(out)!r}, '--set', 'run.level={level}'], prog_name='fctlab')"
    )
    assert {"numpy", "pyarrow", "pydantic"} <= loaded  # (the run happened: it needs these)
    assert not {"pandas", "duckdb", "matplotlib", "scipy", "rich"} & loaded
    summary = json.loads((out / "summary.json").read_text())
    assert summary["flows"] == 20 and summary["config"]["run"]["level"] == level


@pytest.mark.parametrize("level", ["flow", "packet"])
def test_the_command_lines_run_loads_neither_typer_nor_numpy_ma(tmp_path, level):
    # `fctlab run` as typed (fctlab.cli.main, which ends the process with os._exit after the exit handlers: the
    # modules are listed by one): typer only parses what the plain reader leaves to it (fctlab.cli._run), and the
    # summary's percentiles do not go through numpy.unique, which imports numpy.ma
    exp = tmp_path / "exp.toml"
    exp.write_text(TINY)
    script = (
        "import atexit, json, sys\n"
        "atexit.register(lambda: sys.__stdout__.write('\\nMODULES ' + json.dumps(sorted(sys.modules)) + '\\n'))\n"
        "from fctlab.cli import main\n"
        "main()\n"
    )
    out = subprocess.run([sys.executable, "-c", script, "run", str(exp), "--out", str(tmp_path / "out"), "--set",
                          f"run.level={level}"], check=True, capture_output=True, text=True)
    loaded = set(json.loads([x for x in out.stdout.splitlines() if x.startswith("MODULES ")][-1][len("MODULES "):]))
    assert {"numpy", "pyarrow", "pydantic", "fctlab._core"} <= loaded  # (the run happened)
    assert not {"typer", "click", "numpy.ma", "pandas", "duckdb", "matplotlib", "scipy", "rich"} & loaded, \
        sorted({"typer", "click", "numpy.ma", "pandas", "duckdb", "matplotlib", "scipy", "rich"} & loaded)
    assert (tmp_path / "out" / "summary.json").is_file()


def test_the_command_lines_help_still_comes_from_typer():
    # (an independent check of the probe above: the same entry point with --help does load typer)
    script = ("import atexit, json, sys\n"
              "atexit.register(lambda: sys.__stdout__.write('\\nMODULES ' + json.dumps(sorted(sys.modules)) + '\\n'))\n"
              "sys.argv[1:] = ['run', '--help']\n"
              "from fctlab.cli import main\n"
              "main()\n")
    out = subprocess.run([sys.executable, "-c", script], check=True, capture_output=True, text=True)
    assert "--overwrite" in out.stdout
    loaded = set(json.loads([x for x in out.stdout.splitlines() if x.startswith("MODULES ")][-1][len("MODULES "):]))
    assert "typer" in loaded and not {"numpy", "pyarrow"} & loaded
