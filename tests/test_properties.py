"""Property-based tests (hypothesis) of the front door: experiment files, ``--set`` values, CDF files, traces
and sweep tables drawn at random. Every one must either run (exit 0, results written) or be refused with one line naming the
problem (exit 2, nothing written): never a traceback, an engine failure or a partial folder.

Runs are kept short: a 4-host switch, at most a few hundred flows, and a simulated-time limit of 50 ms added
last on the command line. Examples are derived from a fixed seed (``derandomize``) so the suite is repeatable.
"""

from __future__ import annotations

import json
import math
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from conftest import TINY
from fctlab.cli import app

runner = CliRunner()
BEFORE_WORKLOAD, _ = TINY.split("[workload]")
LIMIT = ["--set", "run.time_limit_ms=50"]

PROPERTY = settings(max_examples=25, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def check_outcome(args: list[str], folder: Path) -> None:
    """Run ``fctlab run ARGS --out folder/out``: exit 0 with results, or exit 2 with one line and no folder."""
    out = folder / "out"
    result = runner.invoke(app, [*args, "--out", str(out), *LIMIT])
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise AssertionError(f"{args}: {type(result.exception).__name__}: {result.exception}") from result.exception
    assert result.exit_code in (0, 2), (args, result.exit_code, result.stderr)
    event(f"exit {result.exit_code}")  # shown by --hypothesis-show-statistics
    if result.exit_code == 2:
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: "), (args, result.stderr)
        assert not out.exists(), args
    else:
        assert (out / "summary.json").is_file() and (out / "flows.parquet").is_file(), args
        assert json.loads((out / "summary.json").read_text())["flows"] >= 1


# --------------------------------------------------------------------------------------------------------------
# Values

finite = st.floats(allow_nan=False, allow_infinity=False, min_value=-1e6, max_value=1e6)
scalars = st.one_of(
    st.booleans(),
    st.integers(min_value=-5, max_value=300),
    st.integers(min_value=-(2**70), max_value=2**70),
    finite,
    st.sampled_from([math.inf, -math.inf, math.nan, 0.0, 0.5, 1.0, 1e-9, 1e30]),
    st.text(max_size=12),
    st.sampled_from(["websearch", "datamining", "tcp", "dctcp", "pias", "pfabric", "incast", "spray", "fat_tree"]),
)
values = st.one_of(scalars, st.lists(scalars, max_size=4), st.dictionaries(st.text(max_size=5), scalars, max_size=2))

#: Keys a user is likely to touch, plus made-up ones.
KEYS = st.one_of(
    st.sampled_from([
        "seed", "name", "label", "workload.load", "workload.flows", "workload.cdf", "workload.pattern",
        "workload.warmup_flows", "workload.senders", "workload.receivers", "workload.fan_in", "workload.queries",
        "workload.response_bytes", "workload.query_rate_hz", "workload.load_bytes", "workload.trace",
        "workload.trace_rebase", "topology.kind", "topology.hosts", "topology.link_gbps", "topology.host_link_gbps",
        "switch.queues", "switch.buffer_bytes", "switch.ecn_threshold_bytes", "switch.ecn", "routing.mode",
        "scheme.name", "scheme.thresholds_bytes", "scheme.priority", "transport.init_cwnd_packets",
        "transport.rto_min_us", "output.compression", "sweep.seed",
    ]),
    st.from_regex(r"[a-z_]{1,8}(\.[a-z_]{1,8}){0,2}", fullmatch=True),
)


def toml_value(v: Any) -> str:
    """A value as TOML text (inf and nan as TOML writes them; tables inline)."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, list):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    return "{" + ", ".join(f"{json.dumps(k)} = {toml_value(x)}" for k, x in v.items()) + "}"


def sized_down(key: str, value: Any) -> Any:
    """Keep the run small: flow counts, hosts and queries above a few hundred are cut down (the limits
    themselves have tests of their own)."""
    if key in ("workload.flows", "workload.queries", "topology.hosts", "workload.fan_in") and isinstance(value, int) \
            and not isinstance(value, bool) and value > 300:
        return 300
    return value


# --------------------------------------------------------------------------------------------------------------
# Properties


@PROPERTY
@given(sets=st.lists(st.tuples(KEYS, values), min_size=1, max_size=3))
def test_any_set_values_run_or_are_refused_in_one_line(sets):
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "exp.toml").write_text(TINY)
        args = ["run", str(folder / "exp.toml")]
        for key, value in sets:
            args += ["--set", f"{key}={toml_value(sized_down(key, value))}"]
        check_outcome(args, folder)


@PROPERTY
@given(
    changes=st.lists(st.tuples(KEYS, values), max_size=4),
    junk=st.one_of(st.just(""), st.text(max_size=30)),
)
def test_any_experiment_file_runs_or_is_refused_in_one_line(changes, junk):
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        doc: dict[str, Any] = {"seed": 7, "topology": {"kind": "single_switch", "hosts": 4},
                               "workload": {"cdf": "websearch", "load": 0.5, "flows": 20}}
        for key, value in changes:
            node = doc
            parts = key.split(".")
            for part in parts[:-1]:
                child = node.get(part)
                if not isinstance(child, dict):
                    child = node[part] = {}
                node = child
            node[parts[-1]] = sized_down(key, value)
        top = [f"{json.dumps(k)} = {toml_value(v)}" for k, v in doc.items() if not isinstance(v, dict)]
        tables = [f"[{json.dumps(k)}]\n" + "\n".join(f"{json.dumps(kk)} = {toml_value(vv)}" for kk, vv in v.items())
                  for k, v in doc.items() if isinstance(v, dict)]
        (folder / "exp.toml").write_text("\n".join(top) + "\n" + "\n".join(tables) + "\n" + junk)
        check_outcome(["run", str(folder / "exp.toml")], folder)


cdf_numbers = st.one_of(
    st.integers(min_value=-10, max_value=10**7).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.sampled_from(["0", "1", "1.0", "0.5", "1e30", "-1", "nan", "x", ""]),
)
cdf_lines = st.one_of(
    st.tuples(cdf_numbers, cdf_numbers).map(" ".join),
    st.sampled_from(["# original units: packets", "# a comment", "", "1 2 3"]),
    st.text(max_size=10),
)


@PROPERTY
@given(lines=st.lists(cdf_lines, max_size=8), valid_prefix=st.booleans())
def test_any_cdf_file_runs_or_is_refused_in_one_line(lines, valid_prefix):
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        head = ["1000 0", "5000 0.5"] if valid_prefix else []
        tail = ["20000 1"] if valid_prefix else []
        (folder / "my.cdf").write_text("\n".join(head + lines + tail) + "\n")
        (folder / "exp.toml").write_text(TINY.replace('"websearch"', '"my.cdf"'))
        check_outcome(["run", str(folder / "exp.toml")], folder)


trace_cells = st.one_of(
    st.integers(min_value=-3, max_value=6).map(str),
    st.integers(min_value=0, max_value=2**66).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.sampled_from(["", "1e30", "1.5", "true", "x", "0", "1", "3", "1000"]),
)
TRACE_COLUMNS = ["src", "dst", "size_bytes", "start_ns", "priority", "after_flow", "qclimb", "deadline_ns",
                 "lower_bytes", "upper_bytes", "flow"]


@PROPERTY
@given(
    columns=st.lists(st.sampled_from(TRACE_COLUMNS), min_size=0, max_size=6, unique=True),
    base=st.booleans(),
    rows=st.lists(st.lists(trace_cells, min_size=6, max_size=6), max_size=6),
    rebase=st.booleans(),
)
def test_any_trace_runs_or_is_refused_in_one_line(columns, base, rows, rebase):
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        required = ["src", "dst", "size_bytes", "start_ns"] if base else []
        header = required + [c for c in columns if c not in required]
        text = ",".join(header) + "\n"
        for row in rows:
            cells = (["0", "1", "1000", "0"] if base else []) + row
            text += ",".join(cells[: len(header)]) + "\n"
        (folder / "t.csv").write_text(text)
        extra = "trace_rebase = true\n" if rebase else ""
        (folder / "exp.toml").write_text(BEFORE_WORKLOAD + f"[workload]\ntrace = 't.csv'\n{extra}")
        check_outcome(["run", str(folder / "exp.toml")], folder)


@PROPERTY
@given(axes=st.dictionaries(KEYS, st.one_of(values, st.lists(values, max_size=3)), max_size=3),
       sets=st.lists(st.tuples(st.one_of(KEYS, KEYS.map(lambda k: f"sweep.{k}")), values), max_size=2))
def test_any_sweep_table_is_validated_or_refused_with_a_config_error(axes, sets):
    """Sweep files are validated in full (every point, every workload built) before anything runs; whatever
    the axes, that ends in a Sweep or a ConfigError, the one-line error `fctlab sweep` prints with exit 2."""
    from fctlab.config import ConfigError
    from fctlab.sweep import sweep_from_dict

    doc: dict[str, Any] = {"seed": 7, "topology": {"kind": "single_switch", "hosts": 4},
                           "workload": {"cdf": "websearch", "load": 0.5, "flows": 20},
                           "sweep": {k: [sized_down(k, x) for x in v] if isinstance(v, list) else v
                                     for k, v in axes.items()}}
    overrides = [f"{k}={toml_value(v)}" for k, v in sets]
    try:
        sweep = sweep_from_dict(doc, overrides=overrides)
    except ConfigError as e:
        assert "\n" not in str(e) and str(e)
        event("refused")
    else:
        assert len(sweep.points) >= 1
        event("valid")
