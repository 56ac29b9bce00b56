"""Flow inputs cross to the engine as one mapping described by the engine's table (``_core.flow_columns()``,
``flows::FLOW_COLUMNS``): the table names every input of the engine's FlowSet, ``run`` refuses what the table
does not describe naming the column, and a run through the mapping gives the results the engine gave before.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import numpy as np
import pytest

import fctlab
from fctlab import _core
from fctlab.fabric import NEVER_PS, NONE_U32, flow_columns, u32_or_none

ROOT = Path(__file__).resolve().parents[1]
FLOWS_RS = ROOT / "crates" / "sim" / "src" / "flows.rs"
DTYPES = {"u32": "uint32", "u64": "uint64", "Ps": "uint64", "u8": "uint8", "bool": "bool"}


def _rows() -> list[dict]:
    return json.loads(_core.flow_columns())


def _flowset_fields() -> dict[str, str]:
    """FlowSet's fields and their entry types, read from the engine's source."""
    text = FLOWS_RS.read_text()
    body = re.search(r"pub struct FlowSet \{(.*?)\n\}", text, re.S)
    assert body, "FlowSet not found in flows.rs"
    return dict(re.findall(r"pub (\w+): Vec<(\w+)>", body.group(1)))


def test_the_table_names_every_flowset_input_with_its_dtype():
    rows = _rows()
    by_name = {r["name"]: r for r in rows}
    assert len(by_name) == len(rows)
    fields = _flowset_fields()
    assert len(fields) >= 15
    # the binding's name of FlowSet::after is after_flow; every other column is named as its field
    names = {("after_flow" if f == "after" else f): t for f, t in fields.items()}
    assert set(by_name) == set(names)
    for name, rust in names.items():
        assert by_name[name]["dtype"] == DTYPES[rust], name
        assert by_name[name]["meaning"], name
    assert [r["name"] for r in rows if r["required"]] == ["src", "dst", "size_bytes", "start_ps"]


def test_sentinels_come_from_the_table():
    rows = flow_columns()
    assert rows["after_flow"]["none"] == rows["path"]["none"] == 0xFFFFFFFF == int(NONE_U32)
    assert rows["deadline_ps"]["none"] == 2**64 - 1 == NEVER_PS
    assert rows["gen_rate_bps"]["none"] == 0
    assert rows["src"]["none"] is None
    got = u32_or_none(np.array([-1, 0, 7], dtype=np.int64), "path")
    assert got.dtype == np.uint32 and got.flags.c_contiguous and list(got) == [0xFFFFFFFF, 0, 7]


def _experiment(scheme: str = "dctcp"):
    # pFabric with the ns-2 scripts' absolute values, which its native preset held when these digests were taken
    preset = ["scheme.preset=pfabric_ns2"] if scheme == "pfabric" else []
    return fctlab.load_experiment(
        "examples/quick.toml",
        overrides=[f"scheme.name={scheme}", "workload.flows=200", "workload.warmup_flows=0", *preset],
    )


def _inputs() -> dict[str, np.ndarray]:
    """200 flows on quick.toml's 32 hosts with every kind of optional column the runs below use."""
    rng = np.random.default_rng(33)
    n = 200
    src = rng.integers(0, 32, n).astype(np.uint32)
    dst = ((src + rng.integers(1, 32, n)) % 32).astype(np.uint32)
    size = rng.integers(1_000, 200_000, n).astype(np.uint64)
    start = np.cumsum(rng.integers(100_000, 4_000_000, n)).astype(np.uint64)
    after = np.full(n, 0xFFFFFFFF, np.uint32)
    after[10::17] = np.arange(n)[10::17] - 3
    deadline = np.full(n, np.iinfo(np.uint64).max, np.uint64)
    deadline[::5] = start[::5] + np.uint64(2_000_000_000)
    gen = np.zeros(n, np.uint64)
    gen[::3] = 2_000_000_000
    cached = np.minimum(size, np.uint64(5_000))
    estimate = (size * np.uint64(2)).astype(np.uint64)
    return dict(src=src, dst=dst, size_bytes=size, start_ps=start, after_flow=after, deadline_ps=deadline,
                gen_rate_bps=gen, cached_bytes=cached, estimate_bytes=estimate)


def _digest(columns: dict[str, np.ndarray]) -> str:
    h = hashlib.sha256()
    for name in sorted(columns):
        a = np.ascontiguousarray(columns[name])
        h.update(name.encode())
        h.update(str(a.dtype).encode())
        h.update(a.tobytes())
    return h.hexdigest()


# sha256 of every result column, computed with the binding's former positional argument list (before the flow
# inputs crossed as one mapping): the same flows must give the same results, bit for bit
EXPECTED = {
    "dctcp": (["src", "dst", "size_bytes", "start_ps"],
              "8b2bc71a5e5de23d6aa4cf3d2a2f7e25cc00b3aa09f22eed58b0beafc17afc07"),
    "tcp": (["src", "dst", "size_bytes", "start_ps", "after_flow", "deadline_ps", "gen_rate_bps", "cached_bytes"],
            "737f02ba4cc3830568fe24cf44ae9953fbf19850ac341337a2d022756483e214"),
    "pfabric": (["src", "dst", "size_bytes", "start_ps", "estimate_bytes"],
                "24206252e7ad405b22a09af5aae12c7099dcfea9b7ee84e162ecd51a5da8d051"),
}


#: Result columns added after the digests were taken (the TCP family's data packets delivered and their time in
#: queues), left out of them.
LATER = ("data_arrivals", "queue_delay_ps")


def _former(columns: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    return {k: v for k, v in columns.items() if k not in LATER}


@pytest.mark.parametrize("scheme", sorted(EXPECTED))
def test_a_run_through_the_mapping_gives_the_former_results(scheme):
    names, expected = EXPECTED[scheme]
    inputs = _inputs()
    # (the time in queues is measured only when asked: run.queue_delay)
    config = _experiment(scheme).with_overrides(["run.queue_delay=true"]).engine_json()
    columns, stats = _core.run(config, {k: inputs[k] for k in names})
    assert _digest(_former(columns)) == expected
    assert (columns["finish_ps"] != NEVER_PS).all()
    assert (columns["bytes_delivered"] >= inputs["size_bytes"]).all()
    # the mapping's order does not matter, and two threads give the same results
    again, _ = _core.run(config, {k: inputs[k] for k in reversed(names)}, threads=2)
    assert _digest(_former(again)) == expected
    # the result columns added since (the TCP family's time in queues) agree too
    for name in LATER:
        assert np.array_equal(columns[name], again[name]), name
    if scheme in ("dctcp", "tcp", "pfabric"):
        assert columns["data_arrivals"].sum() > 0
    assert json.loads(stats)["events"] > 0


def test_simulate_is_deterministic_and_conserves_bytes():
    exp = _experiment()
    one, two = fctlab.simulate(exp), fctlab.simulate(exp)
    assert one.flows.equals(two.flows)
    f = one.flows
    assert f["finished"].all()
    assert (f["bytes_delivered"] >= f["size_bytes"]).all()
    assert (f["bytes_sent"] >= f["bytes_delivered"]).all()


def _small() -> tuple[str, dict[str, np.ndarray]]:
    inputs = _inputs()
    return _experiment().engine_json(), {k: inputs[k][:4] for k in ("src", "dst", "size_bytes", "start_ps")}


def test_run_refuses_an_unknown_column_naming_it():
    config, cols = _small()
    with pytest.raises(ValueError, match=r"^flows\.sizes: unknown column; the engine takes src, dst, "):
        _core.run(config, {**cols, "sizes": cols["size_bytes"]})


def test_run_refuses_a_wrong_dtype_naming_the_column():
    config, cols = _small()
    with pytest.raises(ValueError, match=r"^flows\.size_bytes: must be a 1-D numpy array of uint64 \(got a 1-D array of int64\)"):
        _core.run(config, {**cols, "size_bytes": cols["size_bytes"].astype(np.int64)})
    with pytest.raises(ValueError, match=r"^flows\.qclimb: must be a 1-D numpy array of bool"):
        _core.run(config, {**cols, "qclimb": np.ones(4, np.uint8)})
    with pytest.raises(ValueError, match=r"^flows\.src: must be a 1-D numpy array of uint32 \(got list\)"):
        _core.run(config, {**cols, "src": [0, 1, 2, 3]})
    with pytest.raises(ValueError, match=r"^flows\.dst: must be a 1-D numpy array of uint32 \(got a 2-D array"):
        _core.run(config, {**cols, "dst": cols["dst"].reshape(2, 2)})


def test_run_refuses_a_missing_required_column_naming_it():
    config, cols = _small()
    for name in cols:
        rest = {k: v for k, v in cols.items() if k != name}
        with pytest.raises(ValueError, match=rf"^flows\.{name}: a required column is missing"):
            _core.run(config, rest)


def test_run_refuses_a_length_mismatch_naming_the_column():
    config, cols = _small()
    with pytest.raises(ValueError, match=r"^flows\.dst: has 3 entries but flows\.src has 4"):
        _core.run(config, {**cols, "dst": cols["dst"][:3]})
    with pytest.raises(ValueError, match=r"^flows\.path: has 2 entries but flows\.src has 4"):
        _core.run(config, {**cols, "path": np.zeros(2, np.uint32)})
    # an empty optional column is one that is not given
    _core.run(config, {**cols, "path": np.zeros(0, np.uint32)})
