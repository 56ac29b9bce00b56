"""Reliability at the edges: inputs the engine cannot represent, conflicting keys, limits, output folders, the
command line's help, resumes after edited inputs, catalog recovery, killed drivers and Ray addresses."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import TINY
from fctlab.cli import app
from fctlab.config import ConfigError, load_experiment

runner = CliRunner()
BEFORE_WORKLOAD, _ = TINY.split("[workload]")


def invoke(*args: object):
    return runner.invoke(app, [str(a) for a in args])


def exp_file(tmp_path: Path, text: str = TINY, name: str = "exp.toml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def refused(result, key: str) -> str:
    """The one error line of a refused command (exit 2, nothing on stdout), checked to name ``key``."""
    assert result.exit_code == 2, (result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert key in lines[0], lines[0]
    assert result.stdout == ""
    return lines[0]


def trace_exp(tmp_path: Path, rows: str, extra: str = "") -> Path:
    (tmp_path / "t.csv").write_text("src,dst,size_bytes,start_ns\n" + rows)
    return exp_file(tmp_path, BEFORE_WORKLOAD + f"[workload]\ntrace = 't.csv'\n{extra}")


# --------------------------------------------------------------------------------------------------------------
# Trace times the engine cannot represent; epoch-style traces


@pytest.mark.parametrize("start", ["18000000000000000", "1e30", "1700000000000000000"])
def test_trace_starts_beyond_the_engine_clock_are_refused(tmp_path, start):
    out = tmp_path / "out"
    line = refused(invoke("run", trace_exp(tmp_path, f"0,1,1000,0\n1,0,1000,{start}\n"), "--out", out),
                   "workload.trace")
    assert "row 2" in line and "trace_rebase" in line
    assert not out.exists()


def test_trace_rebase_starts_an_epoch_trace_at_its_first_flow(tmp_path):
    epoch = 1_700_000_000_123_456_789
    exp = load_experiment(trace_exp(tmp_path, f"0,1,1000,{epoch + 5000}\n1,0,1000,{epoch}\n",
                                    "trace_rebase = true\n"))
    from fctlab.simulation import build_flows, simulate

    flows = build_flows(exp)
    assert list(flows["start_ps"]) == [0, 5_000_000]
    result = simulate(exp)
    assert result.summary["unfinished_flows"] == 0


def test_trace_rebase_without_a_trace_is_refused(tmp_path):
    refused(invoke("run", exp_file(tmp_path, TINY + "trace_rebase = true\n"), "--out", tmp_path / "o"),
            "workload.trace_rebase")


def test_a_header_only_trace_names_the_trace(tmp_path):
    line = refused(invoke("run", trace_exp(tmp_path, ""), "--out", tmp_path / "o"), "workload.trace")
    assert "no flows" in line and "warmup" not in line


# --------------------------------------------------------------------------------------------------------------
# Non-finite numbers; topology shorthands


@pytest.mark.parametrize("value", ["inf", "-inf", "nan"])
def test_non_finite_numbers_name_their_key(tmp_path, value):
    line = refused(invoke("run", exp_file(tmp_path), "--out", tmp_path / "o", "--set", f"switch.dt_alpha={value}"),
                   "switch.dt_alpha")
    assert "finite" in line
    with pytest.raises(ConfigError) as e:
        load_experiment(exp_file(tmp_path, TINY + f"[run]\ntime_limit_ms = {value}\n"))
    assert e.value.key == "run.time_limit_ms"


def test_link_gbps_overridden_by_every_key_it_sets_is_refused(tmp_path):
    text = TINY.replace('kind = "single_switch"', 'kind = "dumbbell"').replace("hosts = 4\n", "")
    text = text.replace("[topology]\n", "[topology]\nhost_link_gbps = 10\ncore_link_gbps = 40\nlink_gbps = -3\n")
    refused(invoke("run", exp_file(tmp_path, text), "--out", tmp_path / "o"), "topology.link_gbps")


def test_a_bad_link_gbps_is_named_when_it_fills_a_key(tmp_path):
    text = TINY.replace("hosts = 4\n", "hosts = 4\nlink_gbps = -3\n")
    refused(invoke("run", exp_file(tmp_path, text), "--out", tmp_path / "o"), "topology.link_gbps")


# --------------------------------------------------------------------------------------------------------------
# Output folders are checked before anything runs


@pytest.mark.parametrize("command", ["run", "compare", "sweep"])
def test_an_output_path_under_a_file_is_refused_before_running(tmp_path, command):
    (tmp_path / "file").write_text("x")
    out = tmp_path / "file" / "out"
    text = TINY + ("[sweep]\nseed = [1]\n" if command == "sweep" else "")
    extra = ["--scheme", "tcp"] if command == "compare" else []
    line = refused(invoke(command, exp_file(tmp_path, text), "--out", out, *extra), "--out")
    assert "is a file" in line


def test_an_unwritable_output_folder_is_refused_before_running(tmp_path, monkeypatch):
    import os

    locked = tmp_path / "ro"
    locked.mkdir()
    real = os.access
    monkeypatch.setattr(os, "access", lambda p, mode, **kw: False if Path(p) == locked else real(p, mode, **kw))
    line = refused(invoke("run", exp_file(tmp_path), "--out", locked / "out"), "--out")
    assert "not writable" in line
    assert list(locked.iterdir()) == []


def test_run_into_a_folder_being_written_or_a_sweeps_folder_is_refused(tmp_path):
    from fctlab import catalog

    out = tmp_path / "sweep"
    with catalog.writer_lock(out, wait=False):
        line = refused(invoke("run", exp_file(tmp_path), "--out", out), "--out")
        assert "being written" in line
        refused(invoke("run", exp_file(tmp_path), "--out", out / "inside"), "--out")
    (out / "runs" / "seed=1").mkdir(parents=True)
    (out / "runs" / "seed=1" / "config.json").write_text("{}")
    line = refused(invoke("run", exp_file(tmp_path), "--out", out), "--out")
    assert "sweep" in line
    assert not (out / "summary.json").exists()


# --------------------------------------------------------------------------------------------------------------
# Help and version


def test_help_keeps_bracketed_words_and_lists_every_recipe():
    from fctlab.reproduce import RECIPES

    assert "[sweep]" in invoke("--help").stdout
    assert "[sweep]" in invoke("sweep", "--help").stdout
    text = " ".join(invoke("reproduce", "--help").stdout.split())
    assert all(name in text for name in RECIPES)
    assert "scheme.thresholds_bytes" in " ".join(invoke("compare", "--help").stdout.split())


def test_version_and_threads_beyond_two(tmp_path):
    import json

    import fctlab

    result = invoke("--version")
    assert result.exit_code == 0 and result.stdout.strip() == f"fctlab {fctlab.__version__}"
    # any thread count is accepted; a fabric that cannot use them all uses fewer and says why
    result = invoke("run", exp_file(tmp_path), "--out", tmp_path / "o", "--threads", "3")
    assert result.exit_code == 0, (result.stdout, result.stderr)
    engine = json.loads((tmp_path / "o" / "summary.json").read_text())["engine"]
    assert 1 <= engine["threads"] <= 3
    assert (engine["threads"] < 3) == bool(engine["threads_note"]), engine


# --------------------------------------------------------------------------------------------------------------
# Catalog recovery and damaged runs

SWEEP_TEXT = TINY + '[sweep]\nseed = [1, 2]\n'


def sweep_cli(*args: object):
    return invoke("sweep", *args)


@pytest.fixture
def swept(tmp_path):
    out = tmp_path / "out"
    result = sweep_cli(exp_file(tmp_path, SWEEP_TEXT), "--out", out, "--workers", "1")
    assert result.exit_code == 0, result.stderr
    return tmp_path, out


def test_rebuild_moves_a_corrupt_catalog_aside(swept, capsys):
    import fctlab
    from fctlab import catalog

    _, out = swept
    (out / "catalog.duckdb").write_bytes(b"not a database" * 100)
    with pytest.raises(catalog.CatalogError, match="rebuild"):
        fctlab.catalog(out)
    assert catalog.rebuild(out) == 2
    assert (out / "catalog.duckdb.corrupt").is_file()
    runs, flows = fctlab.catalog(out)
    assert list(runs.run_id) == ["seed=1", "seed=2"] and len(flows) == 40


def test_a_corrupt_flows_file_is_named_left_out_of_rebuild_and_run_again(swept, capsys):
    import fctlab
    from fctlab import catalog

    tmp, out = swept
    bad = out / "runs" / "seed=2" / "flows.parquet"
    good = bad.read_bytes()
    bad.write_bytes(good[: len(good) // 2])
    with pytest.raises(catalog.CatalogError, match="seed=2"):
        fctlab.catalog(out)
    assert catalog.rebuild(out) == 1
    assert "seed=2" in capsys.readouterr().err
    result = sweep_cli(tmp / "exp.toml", "--out", out, "--workers", "1")
    assert result.exit_code == 0, result.stderr
    assert "running seed=2 again" in result.stderr and "1 ran, 1 skipped" in result.stderr
    assert bad.read_bytes() == good
    assert len(fctlab.catalog(out)[1]) == 40


# --------------------------------------------------------------------------------------------------------------
# Resume checks the content of input files


@pytest.mark.parametrize("kind", ["cdf", "trace"])
def test_an_input_file_edited_in_place_is_not_taken_as_done(tmp_path, kind):
    if kind == "cdf":
        (tmp_path / "my.cdf").write_text("1000 0\n20000 0.5\n100000 1\n")
        text = TINY.replace('"websearch"', '"my.cdf"') + "[sweep]\nseed = [1]\n"
        edit = tmp_path / "my.cdf", "1000 0\n30000 0.5\n100000 1\n"
    else:
        (tmp_path / "t.csv").write_text("src,dst,size_bytes,start_ns\n0,1,5000,0\n1,2,7000,10\n")
        text = BEFORE_WORKLOAD + "[workload]\ntrace = 't.csv'\n[sweep]\nseed = [1]\n"
        edit = tmp_path / "t.csv", "src,dst,size_bytes,start_ns\n0,1,5000,0\n1,2,9000,10\n"
    out = tmp_path / "out"
    assert sweep_cli(exp_file(tmp_path, text), "--out", out).exit_code == 0
    config = json.loads((out / "runs" / "seed=1" / "config.json").read_text())
    assert config["inputs"][f"workload.{kind}"]["path"] == str(edit[0])
    assert "0 ran, 1 skipped" in sweep_cli(tmp_path / "exp.toml", "--out", out).stderr  # unchanged: done
    edit[0].write_text(edit[1])
    line = refused(sweep_cli(tmp_path / "exp.toml", "--out", out), "--out")
    assert str(edit[0]) in line and "changed" in line


# --------------------------------------------------------------------------------------------------------------
# Workers die with their driver


def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry.name))
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc to find the worker processes")
@pytest.mark.parametrize("signame", ["SIGTERM", "SIGKILL"])
def test_workers_end_with_their_driver(tmp_path, signame):
    import os
    import signal
    import subprocess
    import sys
    import time

    import fctlab

    # runs that take tens of seconds; the driver is stopped as soon as its worker computes
    text = TINY.replace("flows = 20", "flows = 300000") + "[sweep]\nseed = [1, 2]\n"
    env = dict(os.environ)
    env["PYTHONPATH"] = str(Path(fctlab.__file__).resolve().parents[1])
    driver = subprocess.Popen(
        [sys.executable, "-c", "from fctlab.cli import main; main()", "sweep", str(exp_file(tmp_path, text)),
         "--out", str(tmp_path / "out"), "--workers", "1"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
    )
    try:
        workers: list[int] = []
        deadline = time.monotonic() + 60
        while not workers and time.monotonic() < deadline and driver.poll() is None:
            time.sleep(0.2)
            workers = [p for p in _children(driver.pid) if b"spawn_main" in Path(f"/proc/{p}/cmdline").read_bytes()]
        assert workers, "no worker process started"
        time.sleep(1.0)
        driver.send_signal(getattr(signal, signame))
        driver.communicate(timeout=30)  # returns once every holder of its pipes (the workers too) has ended
        deadline = time.monotonic() + 10
        while any(_alive(p) for p in workers) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not any(_alive(p) for p in workers)
        if signame == "SIGTERM":
            assert driver.returncode == 128 + signal.SIGTERM
    finally:
        if driver.poll() is None:
            driver.kill()


# --------------------------------------------------------------------------------------------------------------
# Ray: an address that cannot be reached, a local Ray on 127.0.0.1


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("address", ["127.0.0.1:{port}", "ray://127.0.0.1:{port}"])
def test_an_unreachable_ray_address_fails_fast_and_leaves_nothing(tmp_path, monkeypatch, address):
    pytest.importorskip("ray", reason="ray is not installed (pip install 'fctlab[ray]')")
    from fctlab import sweep

    monkeypatch.setattr(sweep, "RAY_PROBE_SECONDS", 2.0)
    out = tmp_path / "out"
    line = refused(sweep_cli(exp_file(tmp_path, SWEEP_TEXT), "--out", out, "--executor", "ray", "--address",
                             address.format(port=_free_port())), "--address")
    assert "no Ray cluster reachable" in line
    assert not out.exists()


def test_an_address_that_answers_but_is_no_ray_fails_within_the_bound(tmp_path, monkeypatch):
    pytest.importorskip("ray", reason="ray is not installed (pip install 'fctlab[ray]')")
    import socket
    import threading

    from fctlab import sweep

    server = socket.create_server(("127.0.0.1", 0))
    port = server.getsockname()[1]

    def accept_and_close() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            conn.close()

    threading.Thread(target=accept_and_close, daemon=True).start()
    monkeypatch.setattr(sweep, "RAY_CONNECT_SECONDS", 4.0)
    out = tmp_path / "out"
    try:
        line = refused(sweep_cli(exp_file(tmp_path, SWEEP_TEXT), "--out", out, "--executor", "ray", "--address",
                                 f"127.0.0.1:{port}"), "--address")
    finally:
        server.close()
    assert f"127.0.0.1:{port}" in line
    assert not out.exists()


def test_a_ray_that_cannot_be_joined_is_one_line(tmp_path, monkeypatch):
    ray = pytest.importorskip("ray", reason="ray is not installed (pip install 'fctlab[ray]')")

    def no_cluster(*args, **kwargs):
        raise ConnectionError("Could not find any running Ray instance. Please specify the one to connect to.")

    monkeypatch.setattr(ray, "init", no_cluster)
    monkeypatch.setattr("fctlab.sweep._try_ray_address", lambda address: None)
    out = tmp_path / "out"
    line = refused(sweep_cli(exp_file(tmp_path, SWEEP_TEXT), "--out", out, "--executor", "ray", "--address", "auto"),
                   "--address")
    assert "Could not find any running Ray instance" in line
    assert not out.exists()


def _listening_addresses(pids: set[int]) -> set[str]:
    """The local addresses (hex, as /proc/net shows them) of the TCP sockets these processes listen on."""
    import os

    inodes = set()
    for pid in pids:
        try:
            for fd in Path(f"/proc/{pid}/fd").iterdir():
                try:
                    target = os.readlink(fd)
                except OSError:
                    continue
                if target.startswith("socket:["):
                    inodes.add(target[8:-1])
        except OSError:
            continue
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            if fields[3] == "0A" and fields[9] in inodes:  # 0A: LISTEN
                found.add(fields[1].rsplit(":", 1)[0])
    return found


@pytest.mark.skipif(not Path("/proc/net/tcp").exists(), reason="needs /proc to see listening sockets")
def test_a_local_ray_listens_on_the_loopback_address_only():
    import os

    ray = pytest.importorskip("ray", reason="ray is not installed (pip install 'fctlab[ray]')")
    from fctlab.sweep import _ray_connect

    assert not ray.is_initialized()
    assert _ray_connect(None, 1)
    try:
        assert [n["NodeManagerAddress"] for n in ray.nodes()] == ["127.0.0.1"]
        pids, todo = set(), [os.getpid()]
        while todo:
            pid = todo.pop()
            pids.add(pid)
            todo += [c for c in _children(pid) if c not in pids]
        addresses = _listening_addresses(pids)
        assert addresses, "found no listening socket of the local Ray"
        loopback = {"0100007F", "0000000000000000FFFF00000100007F", "00000000000000000000000001000000"}
        assert addresses <= loopback, addresses
    finally:
        ray.shutdown()


# --------------------------------------------------------------------------------------------------------------
# Limits users hit


@pytest.mark.parametrize(("extra", "key"), [
    (["--set", "workload.flows=1000000000000"], "workload.flows"),
    (["--set", "workload.flows=100000000000000"], "workload.flows"),
])
def test_too_many_flows_are_refused_with_an_estimate(tmp_path, extra, key):
    line = refused(invoke("run", exp_file(tmp_path), "--out", tmp_path / "o", *extra), key)
    assert "GiB" in line or "at most" in line


def test_incast_flows_are_counted_too(tmp_path):
    text = BEFORE_WORKLOAD + ("[workload]\npattern = 'incast'\nfan_in = 3\nresponse_bytes = 1000\n"
                              "queries = 1000000000000\nquery_rate_hz = 1000\n")
    refused(invoke("run", exp_file(tmp_path, text), "--out", tmp_path / "o"), "workload.queries")


def test_a_load_so_low_that_no_flow_starts_in_time_is_refused(tmp_path):
    line = refused(invoke("run", exp_file(tmp_path), "--out", tmp_path / "o", "--set", "workload.load=1e-9",
                          "--set", "run.time_limit_ms=10"), "run.time_limit_ms")
    assert "every flow starts after" in line
    sweep_text = TINY + "[run]\ntime_limit_ms = 10\n[sweep]\nload = [0.5, 1e-9]\n"
    line = refused(sweep_cli(exp_file(tmp_path, sweep_text), "--out", tmp_path / "s"), "run.time_limit_ms")
    assert "sweep point workload.load=1e-09" in line
    assert not (tmp_path / "s").exists()


def test_flows_after_the_time_limit_and_priorities_beyond_the_queues_are_noted(tmp_path):
    (tmp_path / "t.csv").write_text("src,dst,size_bytes,start_ns,priority\n0,1,1000,0,0\n1,2,1000,10,9\n"
                                    "2,3,1000,5000000000,1\n")
    text = BEFORE_WORKLOAD + "[switch]\nqueues = 4\n[run]\ntime_limit_ms = 100\n[workload]\ntrace = 't.csv'\n"
    result = invoke("run", exp_file(tmp_path, text), "--out", tmp_path / "o")
    assert result.exit_code == 0, result.stderr
    notes = [line for line in result.stderr.splitlines() if line.startswith("note: ")]
    assert len(notes) == 2
    assert "1 of 3 flows start after run.time_limit_ms" in notes[0]
    assert "priorities up to 9" in notes[1] and "min(p, 3)" in notes[1]


def test_a_sweep_notes_flows_after_the_time_limit(tmp_path):
    (tmp_path / "t.csv").write_text("src,dst,size_bytes,start_ns\n0,1,1000,0\n2,3,1000,5000000000\n")
    text = BEFORE_WORKLOAD + "[run]\ntime_limit_ms = 100\n[workload]\ntrace = 't.csv'\n[sweep]\nseed = [1]\n"
    result = sweep_cli(exp_file(tmp_path, text), "--out", tmp_path / "out")
    assert result.exit_code == 0, result.stderr
    assert "note: seed=1: 1 of 2 flows start after run.time_limit_ms" in result.stderr


def test_unsigned_and_huge_trace_values_are_refused_not_wrapped(tmp_path):
    import numpy as np
    import pandas as pd

    from fctlab.workloads import WorkloadError, read_trace

    path = tmp_path / "u.parquet"
    pd.DataFrame({"src": [0, 1], "dst": [1, 0], "size_bytes": [100, 100],
                  "start_ns": np.array([0, 2**64 - 1], dtype=np.uint64)}).to_parquet(path)
    with pytest.raises(WorkloadError, match="start_ns.*beyond what the engine can represent"):
        read_trace(path)
    (tmp_path / "big.csv").write_text("src,dst,size_bytes,start_ns\n0,1,1e19,0\n")
    with pytest.raises(WorkloadError, match="size_bytes.*too large"):
        read_trace(tmp_path / "big.csv")
