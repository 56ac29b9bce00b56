"""The ``run`` command's body and what ``run``, ``compare`` and ``calibrate`` share, without typer; and ``fctlab
run`` read from the command line without typer when it is well formed.

Typer builds the whole command tree (every command's parameters, each converted by a pydantic adapter) before
it parses anything, and importing it loads its vendored click; on a flow-level run that was about 15% of the
process's time. :func:`main_without_typer` reads ``run EXPERIMENT`` with the options of
:func:`fctlab.cli.run.run` (``--out/-o``, ``--set``, ``--threads/-t``, ``--strict``, ``--overwrite``) in their
plain spellings and calls :func:`run_command`, the same body the typer command calls. Anything else (``--help``,
an unknown or repeated option, a missing or odd-looking value, ``--``, a second argument, shell completion) is
left to typer, which parses it, prints its help or its error, as before: the parser here never decides an error
or a help text, it only recognises the command lines whose meaning is unambiguous.
"""

from __future__ import annotations

import errno
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fctlab.cli import _common
from fctlab.cli._common import (
    EXIT_BAD_INPUT,
    EXIT_FAILED,
    CommandExit,
    check_rerun,
    console,
    fail,
    is_exit,
    note,
    output_dir,
    run_with_progress,
    say,
    signals_interrupt,
    warn_before_run,
)

if TYPE_CHECKING:
    from fctlab.config import Experiment

#: The run command's options that take a value, by spelling, with the parameter each sets.
VALUE_OPTIONS = {"--out": "out", "-o": "out", "--set": "sets", "--threads": "threads", "-t": "threads"}
#: Its flags.
FLAGS = {"--strict": "strict", "--overwrite": "overwrite"}
#: pydantic's switch for its plugins ("__all__": none is loaded).
PLUGINS_VARIABLE = "PYDANTIC_DISABLE_PLUGINS"


def parse_run(args: Sequence[str]) -> dict[str, Any] | None:
    """The parameters of :func:`run_command` for a command line ``run EXPERIMENT [OPTIONS]`` (``args`` without
    the program's name), or None when typer should read it. Recognised: the experiment once, anywhere among the
    options; ``--out DIR`` / ``--out=DIR`` / ``-o DIR``; ``--set KEY=VALUE`` / ``--set=KEY=VALUE`` (repeatable,
    in order); ``--threads N`` / ``--threads=N`` / ``-t N`` with N plain decimal digits; ``--strict``;
    ``--overwrite``. Not recognised (typer's): any other option (``--help`` among them), an option other than
    ``--set`` given twice, a value that is empty or starts with "-", attached short values (``-t2``), ``--``."""
    if not args or args[0] != "run":
        return None
    params: dict[str, Any] = {"experiment": None, "out": None, "sets": None, "threads": None, "strict": False,
                              "overwrite": False}
    seen: set[str] = set()
    i = 1
    while i < len(args):
        arg = args[i]
        i += 1
        if not arg.startswith("-"):
            if params["experiment"] is not None or not arg:
                return None
            params["experiment"] = Path(arg)
            continue
        name, eq, value = arg.partition("=") if arg.startswith("--") else (arg, "", "")
        if name in FLAGS and not eq:
            key = FLAGS[name]
            if key in seen:
                return None
            seen.add(key)
            params[key] = True
            continue
        if name not in VALUE_OPTIONS:
            return None
        key = VALUE_OPTIONS[name]
        if not eq:
            if i >= len(args):
                return None
            value = args[i]
            i += 1
        if not value or value.startswith("-"):
            return None
        if key == "sets":
            params["sets"] = [*(params["sets"] or []), value]
            continue
        if key in seen:
            return None
        seen.add(key)
        if key == "threads":
            if not (value.isascii() and value.isdigit()) or (len(value) > 1 and value[0] == "0"):
                return None
            params["threads"] = int(value)
        else:
            params["out"] = Path(value)
    if params["experiment"] is None:
        return None
    return params


def _completion_asked() -> bool:
    """Whether the shell asks for completions (click's ``_PROG_COMPLETE`` variable): typer's to answer."""
    return any(k.startswith("_") and k.endswith("_COMPLETE") for k in os.environ)


def main_without_typer(args: Sequence[str]) -> int | None:
    """Run ``fctlab run ...`` from ``args`` (the command line without the program's name) without typer, with
    what typer does around a command: the command's exit code (0 when it returns), 130 on Ctrl-C, 1 on a closed
    output pipe, "Aborted!" and 1 at the end of input; other exceptions propagate. None when :func:`parse_run`
    leaves the command line to typer (nothing has run then)."""
    params = parse_run(args)
    if params is None or _completion_asked():
        return None
    _common.WITHOUT_TYPER = True
    # A run validates fctlab's own config models only: pydantic's plugins (found by reading every installed
    # package's entry points when its first model is built) are not looked for, unless PYDANTIC_DISABLE_PLUGINS
    # is set (then as it says).
    plugins_set_here = PLUGINS_VARIABLE not in os.environ
    os.environ.setdefault(PLUGINS_VARIABLE, "__all__")
    try:
        run_command(**params)
    except CommandExit as e:
        return e.exit_code
    except KeyboardInterrupt:
        return 130
    except EOFError:
        sys.stderr.write("\nAborted!\n")
        return 1
    except OSError as e:
        if e.errno != errno.EPIPE:
            raise
        return 1
    finally:
        _common.WITHOUT_TYPER = False
        if plugins_set_here:
            os.environ.pop(PLUGINS_VARIABLE, None)
    return 0


def check_threads(requested: int | None) -> None:
    if requested is not None and requested < 1:
        raise fail(f"--threads: must be >= 1 (got {requested})", EXIT_BAD_INPUT)


def threads_for(requested: int | None, exp: Experiment) -> int:
    """The engine threads for one run at a time: as asked, else what suits the experiment's fabric."""
    from fctlab.simulation import default_threads

    return requested if requested is not None else default_threads(exp)


def prepare(experiment: Path, sets: list[str] | None) -> tuple[Experiment, Any]:
    """Load + validate the experiment and build its flows (without pandas for a generated workload, so the
    engine starts before pandas loads); ConfigError on any bad input."""
    from fctlab.config import load_experiment
    from fctlab.simulation import workload_columns

    exp = load_experiment(experiment, overrides=sets or ())
    return exp, workload_columns(exp)


def flow_notes(exp: Experiment, flows: Any, runs: list[Experiment] | None = None) -> list[str]:
    """What to tell the user about the flows before they run; ConfigError when none could run, or when the flows
    are not what the scheme or level of ``exp`` (or of each of ``runs``) can take."""
    from fctlab.simulation import check_flows, workload_notes

    for each in runs or [exp]:
        check_flows(each, flows)
    return workload_notes(exp, flows)


def say_notes(notes: list[str]) -> None:
    for line in notes:
        sys.stderr.write(f"note: {line}\n")
    sys.stderr.flush()


def run_command(experiment: Path, out: Path | None = None, sets: list[str] | None = None,
                threads: int | None = None, strict: bool = False, overwrite: bool = False) -> None:
    """``fctlab run``: run one experiment; write flows.parquet, summary.json and config.json to the results
    directory (the parameters are :func:`fctlab.cli.run.run`'s)."""
    from fctlab.config import ConfigError

    check_threads(threads)
    try:
        exp, flows = prepare(experiment, sets)
        notes = flow_notes(exp, flows)
        out_dir = output_dir(out, exp)
        check_rerun(out_dir, exp, overwrite)
    except ConfigError as e:
        raise fail(str(e), EXIT_BAD_INPUT) from None
    say_notes(notes)
    warn_before_run(exp, flows, strict)
    with signals_interrupt():  # SIGTERM / SIGHUP end the run as Ctrl-C does
        try:
            result = run_with_progress(exp, flows, f"{exp.name} ({exp.scheme})", threads_for(threads, exp), out_dir)
        except (ValueError, RuntimeError) as e:
            if is_exit(e):  # (typer's Exit is a RuntimeError subclass in click)
                raise
            raise fail(f"engine: {e}", EXIT_FAILED) from None
        del flows  # the result table holds what is written: free the workload before writing
        from fctlab.analyze import summary_table
        from fctlab.results import write_results

        try:
            write_results(result, out_dir)
        except OSError as e:
            raise fail(f"writing results to {out_dir}: {e}", EXIT_FAILED) from None
        except KeyboardInterrupt as e:  # (its temporary file is removed by the write itself)
            raise fail(f"interrupted while writing the results; {out_dir} may hold some of this run's files and "
                       "none of its temporary ones: run the command again", getattr(e, "exit_code", 130)) from None
    summary = result.summary
    del result  # the catalog reads the written files: free the table before DuckDB loads
    record_in_catalog(out_dir, out_dir)
    say(f"{exp.name}: scheme {exp.scheme}, seed {exp.seed}")
    say(summary_table(summary))
    note(f"results written to {out_dir}")


def record_in_catalog(root: Path, run_dir: Path) -> None:
    """Note a written run for ROOT/catalog.duckdb, which records it when it is next read or written
    (:func:`fctlab.catalog.record_later`: DuckDB is not imported by a run). The results are already on disk; the
    catalog is an index that can be rebuilt, so a failure here is a warning, not an error."""
    from fctlab import catalog

    try:
        catalog.record_later(root, run_dir)
    except Exception as e:  # noqa: BLE001
        console(stderr=True).print(
            f"warning: catalog not updated ({e}); fctlab.catalog.rebuild({str(root)!r}) recreates it", markup=False
        )
