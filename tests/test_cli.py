"""The command line: bad input exits 2 with one line naming the key and writes nothing; good input runs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

import fctlab
from fctlab.cli import app
from fctlab.simulation import FLOW_COLUMNS

runner = CliRunner()

from conftest import TINY  # noqa: E402  (the shared tiny experiment)
BEFORE_WORKLOAD, _ = TINY.split("[workload]")


def invoke(*args: str):
    return runner.invoke(app, [str(a) for a in args])


def exp_file(tmp_path: Path, text: str = TINY) -> Path:
    path = tmp_path / "exp.toml"
    path.write_text(text)
    return path


# Each kind of bad input, with the key (or file / option) the message must name.
BAD = [
    ("top-level key", "colour = 'red'\n" + TINY, [], "colour"),
    ("topology key", TINY.replace("hosts = 4", "hosts = 4\nspines = 2"), [], "topology.spines"),
    ("switch key", TINY + "[switch]\nqueus = 3\n", [], "switch.queus"),
    ("host key", TINY + "[host]\nnic_buf = 3\n", [], "host.nic_buf"),
    ("routing key", TINY + "[routing]\nmod = 'spray'\n", [], "routing.mod"),
    ("transport key", TINY + "[transport]\nrto_min = 3\n", [], "transport.rto_min"),
    ("scheme key", TINY + "[scheme]\nnam = 'tcp'\n", [], "scheme.nam"),
    ("run key", TINY + "[run]\ntime_limit = 3\n", [], "run.time_limit"),
    ("workload key", TINY + "loads = 0.3\n", [], "workload.loads"),
    ("output key", TINY + "[output]\nfolder = 'x'\n", [], "output.folder"),
    ("load out of range", TINY.replace("load = 0.5", "load = 1.5"), [], "workload.load"),
    ("engine range", TINY.replace("hosts = 4", "hosts = 1"), [], "topology.hosts"),
    ("wrong type", TINY.replace("flows = 20", "flows = '20'"), [], "workload.flows"),
    ("engine wrong type", TINY + "[switch]\nbuffer_bytes = 'big'\n", [], "switch.buffer_bytes"),
    ("bad enum", TINY + "[routing]\nmode = 'random'\n", [], "routing.mode"),
    ("missing cdf file", TINY.replace('"websearch"', '"no/such.cdf"'), [], "workload.cdf"),
    ("missing trace file", BEFORE_WORKLOAD + "[workload]\ntrace = 'nope.csv'\n", [], "workload.trace"),
    ("TOML syntax", TINY + "[switch\n", [], "exp.toml"),
    ("--set without =", TINY, ["--set", "workload.load"], "--set workload.load"),
    ("--set unknown key", TINY, ["--set", "switch.queus=2"], "switch.queus"),
    ("--set out of range", TINY, ["--set", "workload.load=2"], "workload.load"),
    ("--set through a value", TINY, ["--set", "workload.cdf.x=1"], "--set workload.cdf.x=1"),
    ("--threads 0", TINY, ["--threads", "0"], "--threads"),
]


@pytest.mark.parametrize(("text", "extra", "key"), [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_bad_input_exits_2_names_the_key_and_writes_nothing(tmp_path, text, extra, key):
    out = tmp_path / "out"
    result = invoke("run", exp_file(tmp_path, text), "--out", out, *extra)
    assert result.exit_code == 2, (result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: ")
    assert key in lines[0], lines[0]
    assert not out.exists()
    assert result.stdout == ""


def test_missing_experiment_file(tmp_path):
    out = tmp_path / "out"
    result = invoke("run", tmp_path / "nope.toml", "--out", out)
    assert result.exit_code == 2
    assert "nope.toml" in result.stderr and "not found" in result.stderr
    assert not out.exists()


def test_out_must_be_given(tmp_path):
    result = invoke("run", exp_file(tmp_path))
    assert result.exit_code == 2
    assert "--out" in result.stderr


def test_out_that_is_a_file(tmp_path):
    (tmp_path / "taken").write_text("x")
    result = invoke("run", exp_file(tmp_path), "--out", tmp_path / "taken")
    assert result.exit_code == 2
    assert "not a directory" in result.stderr


@pytest.mark.parametrize(
    ("schemes", "text", "needle"),
    [
        ([], TINY, "--scheme"),
        (["tcp", "nosuch"], TINY, "scheme.name"),
        (["tcp", "tcp"], TINY, "--scheme"),
        (["tcp", "dctcp"], TINY + "[transport]\nkind = 'dctcp'\n", "transport.kind"),
        (["tcp", "dctcp"], TINY.replace("load = 0.5", "load = -1"), "workload.load"),
    ],
)
def test_compare_bad_input_writes_nothing(tmp_path, schemes, text, needle):
    out = tmp_path / "cmp"
    args = [x for s in schemes for x in ("--scheme", s)]
    result = invoke("compare", exp_file(tmp_path, text), "--out", out, *args)
    assert result.exit_code == 2, (result.stdout, result.stderr)
    assert needle in result.stderr
    assert not out.exists()


def test_run_writes_documented_results(tmp_path):
    out = tmp_path / "out"
    result = invoke("run", exp_file(tmp_path), "--out", out, "--set", "workload.warmup_flows=2")
    assert result.exit_code == 0, result.stderr
    # the three result files, plus the run noted for the folder's DuckDB catalog (and the catalog's lock file)
    assert sorted(p.name for p in out.iterdir()) == [
        ".catalog-pending", ".fctlab.lock", "config.json", "flows.parquet", "summary.json"
    ]
    table = pq.read_table(out / "flows.parquet").to_pandas()
    assert list(table.columns) == list(FLOW_COLUMNS)
    assert len(table) == 20 and table["finished"].all()
    summary = json.loads((out / "summary.json").read_text())
    assert summary["unfinished_flows"] == 0 and summary["warmup_flows"] == 2
    assert set(summary["bins"]) == {"small", "medium", "large", "all"}
    config = json.loads((out / "config.json").read_text())
    assert config["workload"]["warmup_flows"] == 2 and config["overrides"] == ["workload.warmup_flows=2"]
    for name in ("small", "medium", "large", "all", "mean FCT (us)"):
        assert name in result.stdout
    # the catalog records the noted run when it is first read
    runs, flows = fctlab.catalog(out)
    assert list(runs.run_id) == ["out"] and len(flows) == 20
    assert sorted(p.name for p in out.iterdir()) == [
        ".fctlab.lock", "catalog.duckdb", "config.json", "flows.parquet", "summary.json"
    ]


def test_output_dir_from_the_experiment(tmp_path):
    result = invoke("run", exp_file(tmp_path, TINY + "[output]\ndir = 'res'\n"))
    assert result.exit_code == 0, result.stderr
    assert (tmp_path / "res" / "summary.json").exists()


def test_compare_runs_each_scheme_on_the_same_flows(tmp_path):
    out = tmp_path / "cmp"
    result = invoke("compare", exp_file(tmp_path), "--scheme", "tcp", "--scheme", "dctcp", "--out", out)
    assert result.exit_code == 0, result.stderr
    assert sorted(p.name for p in out.iterdir()) == [
        ".catalog-pending", ".fctlab.lock", "compare.json", "dctcp", "fct_bins.png", "fct_bins.svg", "tcp"
    ]
    runs, _ = fctlab.catalog(out, flows=False)
    assert list(runs.run_id) == ["dctcp", "tcp"]
    tcp = fctlab.read_results(out / "tcp")
    dctcp = fctlab.read_results(out / "dctcp")
    assert tcp.config["scheme"]["name"] == "tcp" and dctcp.config["scheme"]["name"] == "dctcp"
    cols = ["src", "dst", "size_bytes", "start_ns"]
    assert tcp.flows[cols].equals(dctcp.flows[cols])
    lines = result.stdout.splitlines()
    assert any(line.split()[:2] == ["small", "tcp"] for line in lines)
    assert any(line.split()[:1] == ["dctcp"] for line in lines)


def test_workloads_lists_shipped_cdfs():
    result = invoke("workloads")
    assert result.exit_code == 0
    assert "websearch" in result.stdout and "datamining" in result.stdout
    assert "mean" in result.stdout.splitlines()[0]


def _env_with_package() -> dict[str, str]:
    """The environment for a child Python that imports this fctlab (the tested one, not another install)."""
    env = dict(os.environ)
    package_root = str(Path(fctlab.__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [package_root, env.get("PYTHONPATH")]))
    return env


def test_real_process_exit_code_and_stderr(tmp_path):
    """The installed entry point behaves the same in a real process (no CliRunner)."""
    out = tmp_path / "out"
    env = _env_with_package()
    proc = subprocess.run(
        [sys.executable, "-m", "fctlab.cli", "run", str(exp_file(tmp_path)), "--out", str(out),
         "--set", "workload.load=1.5"],
        capture_output=True, text=True, env=env, timeout=120,
    )
    assert proc.returncode == 2
    assert proc.stderr == "error: workload.load: must be > 0 and <= 1 (got 1.5)\n"
    assert not out.exists()


def test_run_prepares_the_engine_input_without_pandas(tmp_path):
    """`run` builds a generated workload without pandas, so pandas can load while the engine runs."""
    code = ("import sys; from pathlib import Path; from fctlab.cli.run import prepare as _prepare; "
            f"exp, flows = _prepare(Path({str(exp_file(tmp_path))!r}), ['workload.flows=30']); "
            "assert len(flows) == 30; assert 'pandas' not in sys.modules, 'pandas imported'")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


def test_real_process_success_writes_and_prints_everything(tmp_path):
    """The entry point's quick exit (no interpreter teardown) still flushes stdout and stderr with code 0."""
    out = tmp_path / "out"
    env = _env_with_package()
    proc = subprocess.run(
        [sys.executable, "-c", "from fctlab.cli import main; main()", "run", str(exp_file(tmp_path)), "--out",
         str(out)],
        capture_output=True, text=True, env=env, timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert "scheme dctcp, seed 7" in lines[0] and lines[-1].startswith("20 flows")
    assert proc.stderr.rstrip().endswith(f"results written to {out}")
    assert sorted(p.name for p in out.iterdir()) == [
        ".catalog-pending", ".fctlab.lock", "config.json", "flows.parquet", "summary.json"
    ]


def test_calibrate_prints_both_levels_and_writes_nothing(tmp_path):
    exp = exp_file(tmp_path)
    before = sorted(p.name for p in tmp_path.iterdir())
    result = invoke("calibrate", exp)
    assert result.exit_code == 0, result.stderr
    for needle in ("flow level against packet level", "small", "all", "time: packet level"):
        assert needle in result.stdout, result.stdout
    assert sorted(p.name for p in tmp_path.iterdir()) == before
    # a configuration the flow level refuses (HyLine's manager's paths under spraying): the key is named, nothing
    # runs
    bad = invoke("calibrate", exp, "--set", "scheme.name=hyline", "--set", "routing.mode=spray")
    assert bad.exit_code == 2 and "routing.mode" in bad.stderr, bad.stderr
