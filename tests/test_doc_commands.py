"""Every shell command that README.md and docs/ show runs, as written, in a test: the lines of their ``sh`` blocks
and the inline `fctlab ...` spans that are whole commands (with an option or a file); the ``python`` blocks of the
pages in PYTHON_RUN run too, after the page's commands, in the same folder. A command is made small
where it would take long (the same command, fewer flows: TINY below) and a few are not run here, each with its
reason (NOT_RUN). A command added to the docs is run by this test from then on, or must be listed."""

from __future__ import annotations

import re
import shlex
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from fctlab.cli import app

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]

#: Commands (by their start) not run here, with why.
NOT_RUN = {
    "bash scripts/demo.sh": "installs fctlab into .venv first (minutes); its compare runs here as README's commands",
    "bash scripts/test.sh": "installs fctlab and runs every test: CI runs it",
    "python benchmarks/": "the performance harness, not part of the tests (README: benchmarks/); minutes per scenario",
    "fctlab reproduce": "a paper's recipe at small or paper scale (minutes to hours); each recipe runs at scale tiny "
                        "in tests/test_reproduce*.py",
    "fctlab sweep EXP.toml --out DIR [": "a synopsis of the options, not a command",
    "pip install -e '.[peers]'": "installs the optional ns-3 extra (a 70 MB wheel) for benchmarks/peers/, which the "
                                  "tests never run",
    "mkdocs serve": "serves the documentation site until stopped; scripts/test.sh builds the same site (mkdocs build "
                    "--strict)",
}

#: Pages whose ``python`` blocks are a program to run (in order, after the page's commands): the tutorial's.
PYTHON_RUN = {"tutorial.md"}

#: Placeholders in commands and what the test puts there.
PLACEHOLDERS = {"EXP.toml": "examples/quick.toml", "DIR": "out/doc-dir"}

#: Overrides that make a command small (the engine's work, not what the command does, is what they change).
TINY = {
    "run": ["--set", "workload.flows=300", "--set", "workload.warmup_flows=30"],
    "compare": ["--set", "workload.flows=300", "--set", "workload.warmup_flows=30"],
    "calibrate": ["--set", "workload.flows=300", "--set", "workload.warmup_flows=30"],
    "sweep": ["--set", "workload.flows=300", "--set", "workload.warmup_flows=30"],
    "tune": ["--set", "workload.flows=300", "--set", "workload.warmup_flows=30"],
}
#: What a doc's commands assume was done before them (files they read), run first.
SETUP = {
    "predict.md": [["predict", "generate", "--profile", "pagerank", "--flows", "3000", "--seed", "1", "--out", "t.parquet"],
                   ["predict", "train", "t.parquet", "--out", "m.joblib", "--trees", "5"]],
    "report.md": [["sweep", "examples/sweep.toml", "--out", "out/sweep", *TINY["sweep"]]],
}

#: Option values made small.
SMALL_VALUES = {"--flows": "3000", "--trees": "5", "--budget": "3", "--confirm": "2"}


def _commands(path: Path) -> list[str]:
    text = path.read_text(encoding="utf-8")
    found: list[str] = []
    for lang, body in re.findall(r"```(\w*)\n(.*?)```", text, re.S):
        if lang in ("sh", "bash", "shell"):
            for line in body.splitlines():
                line = re.sub(r"\s+#.*$", "", line).strip()
                if line and not line.startswith("#"):
                    found.append(line)
    for span in re.findall(r"`((?:\.venv/bin/)?fctlab [^`]+)`", text):
        span = " ".join(span.split())
        if "--" in span or re.search(r"\.(toml|parquet|joblib|csv|json)\b", span):
            found.append(span)
    return [re.sub(r"^\.venv/bin/", "", c) for c in found]


def _python_blocks(path: Path) -> list[str]:
    return re.findall(r"```python\n(.*?)```", path.read_text(encoding="utf-8"), re.S)


def _not_run(command: str) -> str | None:
    for start, why in NOT_RUN.items():
        if command.startswith(start):
            return why
    return None


def _runnable(command: str) -> list[str] | None:
    """The command's arguments as the test runs them, or None for a synopsis (placeholders the test cannot fill:
    ``CDF``, ``K``, ``[...]``, ``a | b``)."""
    if command.startswith("fctlab sweep "):
        command = command.replace("EXP.toml", "examples/sweep.toml")
    for name, value in PLACEHOLDERS.items():
        command = re.sub(rf"(?<![\w/.-]){re.escape(name)}(?![\w.-])", value, command)
    if re.search(r"\[|\||\.\.\.|\s/\s|\b[A-Z]{1,}\b", command):
        return None
    args = shlex.split(command)[1:]  # without "fctlab"
    for i, a in enumerate(args[:-1]):
        if a in SMALL_VALUES:
            args[i + 1] = SMALL_VALUES[a]
    if args[0] == "predict" and args[1] == "train" and "--trees" not in args:
        args += ["--trees", SMALL_VALUES["--trees"]]
    return args + TINY.get(args[0], [])


def test_the_docs_show_commands():
    every = [c for doc in DOCS for c in _commands(doc)]
    assert len(every) > 40 and any("topology.kind=fat_tree" in c for c in every)
    # the pages a newcomer reads first show commands, and the tutorial a program
    assert _commands(ROOT / "docs" / "tutorial.md") and _commands(ROOT / "docs" / "getting-started.md")
    assert len(_python_blocks(ROOT / "docs" / "tutorial.md")) >= 2


@pytest.mark.parametrize("doc", DOCS, ids=[str(d.relative_to(ROOT)) for d in DOCS])
def test_every_command_of_a_doc_runs(doc, tmp_path, monkeypatch):
    commands = _commands(doc)
    if not commands:
        pytest.skip("no commands")
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    for args in SETUP.get(doc.name, []):
        result = runner.invoke(app, args)
        assert result.exit_code == 0, f"setup {args}: {result.output}"
    ran = 0
    failed = []
    for command in commands:
        if _not_run(command) is not None or not command.startswith("fctlab "):
            assert _not_run(command) is not None, f"{doc.name}: {command!r} is neither run nor listed in NOT_RUN"
            continue
        args = _runnable(command)
        if args is None:
            continue
        result = runner.invoke(app, args)
        if result.exit_code != 0:
            failed.append(f"{command!r} (run as {args}) exited {result.exit_code}: {result.output[-600:]}")
        ran += 1
    assert not failed, f"{doc.name}:\n" + "\n".join(failed)
    if doc.name in PYTHON_RUN:
        namespace: dict[str, object] = {"__name__": "__doc_page__"}
        for block in _python_blocks(doc):
            exec(compile(block, f"{doc.name} python block", "exec"), namespace)
    assert ran or all(_not_run(c) or _runnable(c) is None for c in commands)
