"""`fctlab --help` and every command's `--help` fit one screen (40 lines of 100 columns), and the top-level help
names every command the app has: a command added without a help line, or a help text grown past a screen, fails
here."""

from __future__ import annotations

from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from fctlab.cli import app

LINES, COLUMNS = 40, 100


def _commands(group: Any, path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """Every command's path below ``group`` (groups included), depth first."""
    out = []
    for name, cmd in sorted(group.commands.items()):
        if cmd.hidden:
            continue
        out.append(path + (name,))
        if hasattr(cmd, "commands"):  # a group (typer's own click types, so no isinstance)
            out += _commands(cmd, path + (name,))
    return out


ROOT = typer.main.get_command(app)
COMMANDS = _commands(ROOT)


def _help(args: list[str]) -> str:
    result = CliRunner().invoke(app, [*args, "--help"], env={"COLUMNS": str(COLUMNS)}, terminal_width=COLUMNS)
    assert result.exit_code == 0, result.output
    return result.output


def test_the_top_level_help_lists_every_command():
    text = _help([])
    listed = {line.split()[0] for line in text.split("Commands:", 1)[1].splitlines() if line.strip()}
    top = {path[0] for path in COMMANDS}
    assert top <= listed, f"not in `fctlab --help`: {sorted(top - listed)}"
    # the commands that were once missing from the README's list
    assert {"calibrate", "hyline-band", "check", "run", "compare", "sweep", "report", "reproduce"} <= listed


@pytest.mark.parametrize("path", [(), *COMMANDS], ids=lambda p: " ".join(p) or "fctlab")
def test_help_fits_one_screen(path):
    text = _help(list(path))
    lines = text.rstrip("\n").splitlines()
    assert len(lines) <= LINES, f"`fctlab {' '.join(path)} --help` is {len(lines)} lines (at most {LINES})"
    wide = [line for line in lines if len(line) > COLUMNS]
    assert not wide, f"`fctlab {' '.join(path)} --help` has lines over {COLUMNS} columns: {wide}"


def test_the_walk_finds_the_subcommands():
    # an independent count: the predict group's four commands are found as well as the top-level ones
    assert {("predict", name) for name in ("generate", "train", "eval", "annotate")} <= set(COMMANDS)
    assert len([p for p in COMMANDS if len(p) == 1]) >= 13
