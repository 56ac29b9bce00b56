"""``fctlab run`` read without typer (fctlab.cli._run): every command line it takes means what typer makes of it
(the same parameters, checked against typer's own parsing), everything else goes to typer, and a real process
run through it behaves as before (exit codes, messages, files)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import TINY
from fctlab.cli import _run, app
from fctlab.cli import run as run_module

# command lines the parser takes (after the program's name)
TAKEN = [
    ["run", "exp.toml"],
    ["run", "exp.toml", "--out", "out"],
    ["run", "--out", "out", "exp.toml"],
    ["run", "exp.toml", "-o", "out dir"],
    ["run", "exp.toml", "--out=out"],
    ["run", "exp.toml", "--set", "workload.load=0.7"],
    ["run", "exp.toml", "--set=workload.load=0.7", "--set", "run.level=flow", "--set", "seed=3"],
    ["run", "exp.toml", "--threads", "2"],
    ["run", "exp.toml", "-t", "1", "--strict", "--overwrite"],
    ["run", "exp.toml", "--threads=12"],
    ["run", "--strict", "exp.toml", "--set", "a=b", "-o", "o", "--overwrite", "--set", "c=[1, 2]"],
    ["run", "exp.toml", "--threads", "0"],  # (an error of the command itself, the same under both)
    ["run", "dir/with=sign.toml", "--out", "x=y"],
]

# command lines left to typer: help, errors, and spellings the parser does not read
LEFT = [
    [],
    ["--help"],
    ["--version"],
    ["compare", "exp.toml", "--scheme", "tcp"],
    ["run"],
    ["run", "--help"],
    ["run", "exp.toml", "--help"],
    ["run", "exp.toml", "other.toml"],
    ["run", "exp.toml", "--out"],
    ["run", "exp.toml", "--out", "a", "--out", "b"],
    ["run", "exp.toml", "--threads", "x"],
    ["run", "exp.toml", "--threads", "-1"],
    ["run", "exp.toml", "--threads", "02"],
    ["run", "exp.toml", "--threads", " 2"],
    ["run", "exp.toml", "-t2"],
    ["run", "exp.toml", "-o=out"],
    ["run", "exp.toml", "--strict=true"],
    ["run", "exp.toml", "--strict", "--strict"],
    ["run", "exp.toml", "--set"],
    ["run", "exp.toml", "--set", ""],
    ["run", "exp.toml", "--set", "--strict"],
    ["run", "exp.toml", "--ou", "out"],
    ["run", "--", "exp.toml"],
    ["run", "-"],
    ["run", ""],
]


def _typer_params(monkeypatch: pytest.MonkeyPatch, argv: list[str]) -> dict[str, Any]:
    """The parameters typer hands to the run command's body for ``argv``."""
    seen: dict[str, Any] = {}

    def record(experiment, out=None, sets=None, threads=None, strict=False, overwrite=False):
        seen.update(experiment=experiment, out=out, sets=sets, threads=threads, strict=strict, overwrite=overwrite)

    monkeypatch.setattr(run_module, "run_command", record)
    app(argv, prog_name="fctlab", standalone_mode=False)
    return seen


@pytest.mark.parametrize("argv", TAKEN, ids=" ".join)
def test_a_command_line_it_takes_means_what_typer_makes_of_it(monkeypatch, argv):
    fast = _run.parse_run(argv)
    assert fast is not None
    typed = _typer_params(monkeypatch, argv)
    # typer gives an absent repeatable option as None or an empty list: the command treats both as none
    assert {**typed, "sets": typed["sets"] or None} == fast


@pytest.mark.parametrize("argv", LEFT, ids=lambda a: " ".join(a) or "(nothing)")
def test_anything_else_is_left_to_typer(argv):
    assert _run.parse_run(argv) is None
    assert _run.main_without_typer(argv) is None


def test_shell_completion_is_left_to_typer(monkeypatch):
    monkeypatch.setenv("_FCTLAB_COMPLETE", "bash_source")
    assert _run.parse_run(["run", "exp.toml"]) is not None
    assert _run.main_without_typer(["run", "exp.toml"]) is None


def _process(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(Path(_run.__file__).resolve().parents[2]))
    # (the command line ends the process by os._exit after the exit handlers: the line is written by one)
    code = ("import atexit, sys, json\n"
            "atexit.register(lambda: sys.stderr.write('TYPER ' + json.dumps('typer' in sys.modules) + '\\n'))\n"
            "from fctlab.cli import main\nmain()\n")
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, env=env, timeout=120,
                          cwd=tmp_path)


def test_a_real_run_through_it_writes_the_results_without_typer(tmp_path):
    (tmp_path / "exp.toml").write_text(TINY)
    proc = _process(tmp_path, "run", "exp.toml", "--out", "out", "--set", "run.level=flow")
    assert proc.returncode == 0, proc.stderr
    assert "TYPER false" in proc.stderr
    assert proc.stdout.splitlines()[-1].startswith("20 flows")
    assert {"config.json", "flows.parquet", "summary.json"} <= {p.name for p in (tmp_path / "out").iterdir()}


def test_its_errors_are_the_commands_own(tmp_path):
    (tmp_path / "exp.toml").write_text(TINY)
    bad = _process(tmp_path, "run", "exp.toml", "--out", "out", "--set", "workload.load=1.5")
    assert bad.returncode == 2
    assert bad.stderr.splitlines()[0] == "error: workload.load: must be > 0 and <= 1 (got 1.5)"
    assert "TYPER false" in bad.stderr
    zero = _process(tmp_path, "run", "exp.toml", "--threads", "0")
    assert zero.returncode == 2 and zero.stderr.startswith("error: --threads: must be >= 1 (got 0)")
    assert not (tmp_path / "out").exists()


def test_a_command_line_it_leaves_gets_typers_error_and_help(tmp_path):
    (tmp_path / "exp.toml").write_text(TINY)
    bad = _process(tmp_path, "run", "exp.toml", "--threads", "x")
    assert bad.returncode == 2 and "Invalid value for '--threads'" in bad.stderr and "TYPER true" in bad.stderr
    helped = _process(tmp_path, "run", "--help")
    assert helped.returncode == 0 and "--overwrite" in helped.stdout and "TYPER true" in helped.stderr
    assert not (tmp_path / "out").exists()
