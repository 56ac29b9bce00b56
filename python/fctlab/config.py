"""The experiment model: one TOML file (or dict) -> a validated, fully resolved :class:`Experiment`.

An experiment file has top-level ``seed``, ``name`` and ``label`` (optional: the run's series label in reports)
and these sections:

* engine sections ``[topology] [switch] [host] [routing] [transport] [scheme] [run]``: handed to the engine's
  own parser (``fctlab._core.validate_config``), which is the single authority for their keys, ranges and
  defaults (``crates/sim/src/config/``). Python only expands two topology shorthands (``link_gbps``,
  ``link_delay_ns``) into the engine's ``host_``/``core_`` keys.
* ``[workload]`` and ``[output]``: Python-side, checked here with pydantic models that reject unknown keys.

Every problem becomes a :class:`ConfigError` whose message is one line that starts with the dotted key
(``workload.load: must be > 0 and <= 1 (got 1.5)``), raised before anything is simulated or written.
"""

from __future__ import annotations

import json
import math
import os
import re
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

#: Sections the engine parses (its config schema is crates/sim/src/config/).
ENGINE_SECTIONS = ("topology", "switch", "host", "routing", "transport", "scheme", "run", "link_loss")
#: Sections the Python front parses.
PYTHON_SECTIONS = ("workload", "output")
#: Every key allowed at the top level of an experiment.
TOP_LEVEL_KEYS = ("name", "label", "seed", *ENGINE_SECTIONS, *PYTHON_SECTIONS)
#: The table of sweep axes: only :mod:`fctlab.sweep` reads it (a single run refuses a file that has it).
SWEEP_SECTION = "sweep"

#: Topology shorthands: shorthand -> the engine keys it fills when they are not given.
TOPOLOGY_SHORTHANDS = {
    "link_gbps": ("host_link_gbps", "core_link_gbps"),
    "link_delay_ns": ("host_link_delay_ns", "core_link_delay_ns"),
}

PATTERNS = ("all_to_all", "incast", "permutation", "aggregation", "stride", "staggered")
#: Patterns whose flows go from host to host by a rule (PDQ §5.3); they arrive together, or at ``load``.
HOST_PATTERNS = ("permutation", "stride", "staggered")


def __getattr__(name: str) -> Any:
    # THRESHOLD_SCHEMES, the schemes that tag by demotion thresholds, now comes from the engine's scheme rows
    # (fctlab.scheme_table.threshold_schemes); the name stays for one release
    if name == "THRESHOLD_SCHEMES":
        from fctlab.scheme_table import threshold_schemes

        return threshold_schemes()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class ConfigError(ValueError):
    """A bad experiment: the message is one line that names the key (or the file) at fault."""

    def __init__(self, key: str, message: str):
        self.key = key
        self.reason = _one_line(message)
        super().__init__(f"{key}: {self.reason}" if key else self.reason)

    def __reduce__(self) -> tuple[Any, ...]:  # picklable (for worker processes)
        return (type(self), (self.key, self.reason))


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


# --------------------------------------------------------------------------------------------------------------
# Python-side sections


class _Section(BaseModel):
    # (each field's docstring is its description in the JSON Schema: the key reference, fctlab.reference). Read
    # when a schema is first asked for, not by pydantic's use_attribute_docstrings when the class is made: that
    # parses this file's source for every class, a fifth of the time `import fctlab.config` takes, which every
    # command would pay for descriptions only the schema shows.
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    @classmethod
    def model_json_schema(cls, *args: Any, **kwargs: Any) -> dict[str, Any]:
        _describe_sections()
        return super().model_json_schema(*args, **kwargs)


def _attribute_docstrings(cls: type) -> dict[str, str]:
    """A class's attribute docstrings: the string literal right after each annotated attribute in its body
    (the PEP 257 convention pydantic's ``use_attribute_docstrings`` reads), cleaned as ``inspect.cleandoc``."""
    import ast
    import inspect

    tree = ast.parse(inspect.getsource(cls))
    body = tree.body[0].body  # type: ignore[attr-defined]
    out = {}
    for node, after in zip(body, body[1:]):
        if (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and isinstance(after, ast.Expr)
                and isinstance(after.value, ast.Constant) and isinstance(after.value.value, str)):
            out[node.target.id] = inspect.cleandoc(after.value.value)
    return out


_DESCRIBED = False


def _describe_sections() -> None:
    """Give every field of the sections without an explicit description its docstring, and rebuild the models'
    schemas (nested sections first), once."""
    global _DESCRIBED
    if _DESCRIBED:
        return
    _DESCRIBED = True
    for model in (SizeErrorConfig, WorkloadConfig, OutputConfig):
        docs = _attribute_docstrings(model)
        for name, info in model.model_fields.items():
            if info.description is None and name in docs:
                info.description = docs[name]
        model.model_rebuild(force=True)


class SizeErrorConfig(_Section):
    """``[workload] size_error``: synthetic imprecise size information (:mod:`fctlab.workloads.size_error`), for
    ``scheme.size_info``. ``{model = "lognormal", sigma = s}`` writes ``estimate_bytes`` = size x exp(s Z);
    ``{model = "bounds", coverage = c, width = w}`` writes ``lower_bytes``/``upper_bytes`` with upper / lower = w
    holding the true size with probability c (and their centre as ``estimate_bytes``). Drawn from the seed, after
    the flows."""

    model: Literal["lognormal", "bounds"]
    """The error model: ``lognormal`` (a point estimate) or ``bounds`` (an interval)."""
    sigma: float | None = Field(default=None, ge=0, le=10, allow_inf_nan=False)
    """lognormal: the standard deviation of ln(estimate / size), 0 <= sigma <= 10."""
    coverage: float | None = Field(default=None, gt=0, le=1, allow_inf_nan=False)
    """bounds: the probability that an interval holds the true size, 0 < coverage <= 1."""
    width: float | None = Field(default=None, gt=1, le=1e6, allow_inf_nan=False)
    """bounds: upper / lower of every interval, 1 < width <= 1e6."""

    @model_validator(mode="after")
    def _keys_of_the_model(self) -> SizeErrorConfig:
        own = {"lognormal": ("sigma",), "bounds": ("coverage", "width")}[self.model]
        for k in ("sigma", "coverage", "width"):
            given = getattr(self, k) is not None
            if k in own and not given:
                raise ValueError(f"model {self.model!r} needs {' and '.join(own)} (missing {k})")
            if k not in own and given:
                raise ValueError(f"{k} is not a key of model {self.model!r} (its keys: {', '.join(own)})")
        return self


class WorkloadConfig(_Section):
    """``[workload]``: which flows to simulate. Either a generated pattern (``cdf`` + ``load`` + ``flows`` for
    all_to_all; ``fan_in`` + ``response_bytes`` + ``queries`` + a rate for incast; sizes + ``flows`` (+ ``load``)
    for aggregation, permutation, stride and staggered) or a ``trace`` file. Paths are stored resolved (absolute)
    once the experiment is loaded."""

    pattern: Literal["all_to_all", "incast", "permutation", "aggregation", "stride", "staggered"] | None = None
    """The traffic pattern that generates the flows (default ``"all_to_all"``; not allowed with ``trace``):
    ``all_to_all`` (random pairs, Poisson arrivals at ``load``), ``incast`` (``fan_in`` senders answer each query),
    ``permutation``, ``stride`` and ``staggered`` (host to host by a rule), ``aggregation`` (every flow to
    ``receiver``)."""
    cdf: str | None = None
    """Flow-size CDF: a shipped name (``fctlab workloads``) or a file path."""
    size_uniform_mean_bytes: float | None = Field(default=None, ge=25, allow_inf_nan=False)
    """Flow sizes uniform on [0.02 x mean, 1.98 x mean] bytes instead of a CDF (D3's and PDQ's query aggregation:
    mean 100 KB gives D3's [2 KB, 198 KB])."""
    receiver: int | None = Field(default=None, ge=0)
    """Aggregation: the host every flow goes to."""
    stride: int | None = Field(default=None, ge=1)
    """Stride: host x sends to (x + stride) mod hosts."""
    staggered_p: float | None = Field(default=None, ge=0, le=1, allow_inf_nan=False)
    """Staggered: probability that a flow stays under its sender's rack (ToR / leaf switch)."""
    start_spread_ns: float | None = Field(default=None, ge=0, allow_inf_nan=False)
    """Flows that arrive together (aggregation; permutation, stride, staggered without a load) start uniformly within
    this many ns of t = 0 (default 0: all at t = 0)."""
    deadline_mean_ms: float | None = Field(default=None, gt=0, allow_inf_nan=False)
    """Deadlines: each flow's deadline is its start + D, D ~ Exponential(mean) in ms, at least the floor below
    (fctlab.workloads.deadlines)."""
    deadline_floor: Literal["ideal", "transmission"] | None = None
    """Deadlines: D's floor, the flow's ``"ideal"`` FCT (alone in the idle fabric: propagation, store-and-forward and
    its wire bytes at line rate; the default) or its ``"transmission"`` time at the host link rate alone (what fctlab
    used before: a deadline there can be met by no scheme)."""
    deadline_fraction: float | None = Field(default=None, gt=0, le=1, allow_inf_nan=False)
    """Deadlines: the probability that a flow has one (default 1)."""
    deadline_max_bytes: int | None = Field(default=None, ge=1)
    """Deadlines: only flows of at most this many bytes have one (PDQ's web workload: flows below 40 KB)."""
    load: float | None = None
    """Offered load on the host links, 0 < load <= 1 (docs/experiment.md defines it per pattern)."""
    load_bytes: Literal["payload", "wire"] | None = None
    """What ``load`` counts: ``"payload"`` bytes (the default) or ``"wire"`` bytes, payload plus
    ``transport.header_bytes`` per ``transport.mss_bytes`` of payload, as the PIAS and pFabric ns-2 scripts count it
    (their arrival rate uses the mean flow size x 1500 / 1460): a wire load of rho is a payload load of rho x mss /
    (mss + header). Unset means "payload"."""
    flows: int | None = Field(default=None, ge=1)
    """Number of flows to generate (all_to_all, permutation)."""
    warmup_flows: int = Field(default=0, ge=0)
    """Flows that start among the first ``warmup_flows`` (in start order) are left out of the summary."""
    cooldown_flows: int = Field(default=0, ge=0)
    """Flows that start among the last ``cooldown_flows`` (in start order) are simulated, so they keep loading the
    network while the measured flows finish, and are left out of the summary. Counted in ``flows``."""
    trace: str | None = None
    """Flow trace (CSV or Parquet) instead of a generated pattern."""
    trace_rebase: bool | None = None
    """Trace only: shift every start so that the first flow starts at 0 (for epoch-style timestamps)."""
    fan_in: int | None = Field(default=None, ge=1)
    """Incast: senders answering each query."""
    response_bytes: int | None = Field(default=None, ge=1)
    """Incast: bytes each sender returns."""
    queries: int | None = Field(default=None, ge=1)
    """Incast: number of queries (flows = queries x fan_in)."""
    query_rate_hz: float | None = Field(default=None, gt=0, allow_inf_nan=False)
    """Incast: Poisson query arrival rate (or give ``load`` instead)."""
    senders: list[int] | None = None
    """Hosts allowed to send (default: every host)."""
    receivers: list[int] | None = None
    """Hosts allowed to receive (default: every host)."""
    pairs: Literal["all", "inter_rack", "inter_pod"] | None = None
    """All-to-all: which (source, destination) pairs flows take: ``"all"`` (the default), ``"inter_rack"``
    (destinations under another rack only) or ``"inter_pod"`` (another pod only: the HyLine authors' scripts)."""
    gen_rate_dist: Literal["fixed", "uniform", "log_uniform", "cdf"] | None = None
    """The application model (TCP-family schemes): each flow's data generation rate r_g, drawn per flow after the
    flows (and their deadlines): ``"fixed"`` (``gen_rate_bps``), ``"uniform"`` or ``"log_uniform"`` on
    [``gen_rate_min_bps``, ``gen_rate_max_bps``], or ``"cdf"`` (``gen_rate_cdf``: a shipped rate CDF such as
    ``"fileserver"``, or a file), times ``gen_rate_scale``. Unset: every byte is ready at the flow's start (a trace
    may give a ``gen_rate_bps`` column instead)."""
    gen_rate_bps: float | None = Field(default=None, gt=0, allow_inf_nan=False)
    """``gen_rate_dist = "fixed"``: every flow's generation rate, bit/s."""
    gen_rate_min_bps: float | None = Field(default=None, gt=0, allow_inf_nan=False)
    """``gen_rate_dist = "uniform"`` or ``"log_uniform"``: the lowest rate drawn, bit/s."""
    gen_rate_max_bps: float | None = Field(default=None, gt=0, allow_inf_nan=False)
    """``gen_rate_dist = "uniform"`` or ``"log_uniform"``: the highest rate drawn, bit/s (at least
    ``gen_rate_min_bps``)."""
    gen_rate_cdf: str | None = None
    """``gen_rate_dist = "cdf"``: the rate CDF, a shipped name (``"fileserver"``) or a file path."""
    gen_rate_scale: float | None = Field(default=None, gt=0, allow_inf_nan=False)
    """A factor every drawn rate is multiplied by (default 1)."""
    cached_fraction: float | None = Field(default=None, ge=0, le=1, allow_inf_nan=False)
    """The fraction of each rate-limited flow's bytes available at once (cached), written at its start; the rest is
    generated at its rate."""
    write_chunk_bytes: int | None = Field(default=None, ge=1, le=1_000_000_000)
    """The application writes a rate-limited flow in chunks of this many bytes, sleeping chunk / rate after each
    write (the RAX authors' traffic generator, HKUST-SING/TrafficGenerator: 64 KB writes for a rate-limited flow, so
    a flow of at most 64 KB is written at once whatever its rate). Modelled as the first chunk written at the flow's
    start (at most its size; with ``cached_fraction``, the larger of the two) and the rest generated continuously at
    the rate: by each of the chunked writer's writes the two have written the same bytes, in between the continuous
    writer is behind by less than one chunk. Unset: no chunk (continuous)."""
    size_error: SizeErrorConfig | None = None
    """Synthetic imprecise sizes for ``scheme.size_info``: ``{model = "lognormal", sigma = 0.5}`` writes
    ``estimate_bytes``, ``{model = "bounds", coverage = 0.9, width = 4}`` ``lower_bytes``/``upper_bytes`` (and their
    centre as ``estimate_bytes``); a trace's own columns are replaced (:mod:`fctlab.workloads.size_error`)."""

    @field_validator("load")
    @classmethod
    def _load_range(cls, v: float | None) -> float | None:
        if v is not None and not (math.isfinite(v) and 0 < v <= 1):
            raise ValueError(f"must be > 0 and <= 1 (got {v})")
        return v

    @field_validator("senders", "receivers")
    @classmethod
    def _host_list(cls, v: list[int] | None) -> list[int] | None:
        if v is None:
            return v
        if not v:
            raise ValueError("must list at least one host")
        if any(h < 0 for h in v):
            raise ValueError(f"host ids must be >= 0 (got {min(v)})")
        if len(set(v)) != len(v):
            raise ValueError("lists a host twice")
        return v


class OutputConfig(_Section):
    """``[output]``: where and how results are written."""

    dir: str | None = None
    """Results directory used when the command line gives no ``--out`` (relative to the experiment file)."""
    compression: Literal["zstd", "snappy", "gzip", "none"] = "zstd"
    """Parquet compression codec of flows.parquet."""
    bins: Literal["papers", "ns2"] = "papers"
    """Size-bin edges of the summary and the ``size_bin`` column: "papers" (100 KB / 10 MB, decimal) or "ns2" (the
    PIAS ns-2 scripts' 100 KiB / 10 MiB); fctlab.analyze.BIN_EDGES."""


# --------------------------------------------------------------------------------------------------------------
# The experiment


@dataclass(frozen=True)
class Experiment:
    """A validated experiment, every default filled in.

    ``engine`` is the engine's own resolved config (what ``_core.validate_config`` returned, seed included);
    ``workload`` and ``output`` hold the Python sections with paths made absolute; ``raw`` is the input after
    overrides (kept so that a variant, e.g. another scheme, can be derived and validated the same way).
    """

    name: str
    seed: int
    engine: dict[str, Any]
    workload: WorkloadConfig
    output: OutputConfig
    hosts: int
    host_link_bps: float
    base_dir: Path
    source: Path | None = None
    overrides: tuple[str, ...] = ()
    raw: dict[str, Any] = field(default_factory=dict, repr=False)
    #: Series label in reports (e.g. "PIAS (2 queues)"); by default reports label runs by scheme.
    label: str | None = None
    #: When ``scheme.thresholds_bytes`` was not given and fctlab derived it from the workload's CDF and load
    #: (PIAS paper §3): how (cdf, load, queues, method, thresholds_bytes). None otherwise.
    derived_thresholds: dict[str, Any] | None = None
    #: The input files the run reads (a CDF file, a trace): key -> {"path", "sha256"} of their content when
    #: the experiment was validated; recorded in config.json so that an edited file makes a different run.
    inputs: dict[str, dict[str, str]] = field(default_factory=dict)

    @property
    def scheme(self) -> str:
        """The scheme's name (``scheme.name``)."""
        return str(self.engine["scheme"]["name"])

    def engine_json(self) -> str:
        """The engine config as the JSON text ``_core.run`` takes."""
        return json.dumps(self.engine, sort_keys=True)

    def to_dict(self) -> dict[str, Any]:
        """The fully resolved experiment (written as config.json next to the results)."""
        out: dict[str, Any] = {"name": self.name, "seed": self.seed}
        if self.label is not None:
            out["label"] = self.label
        out.update({k: v for k, v in self.engine.items() if k != "seed"})
        out["workload"] = self.workload.model_dump(exclude_none=True)
        out["output"] = self.output.model_dump(exclude_none=True)
        out["source"] = str(self.source) if self.source else None
        out["overrides"] = list(self.overrides)
        if self.inputs:
            out["inputs"] = {k: dict(v) for k, v in self.inputs.items()}
        return out

    def with_overrides(self, overrides: Sequence[str]) -> Experiment:
        """A new experiment: this one's input with more ``key.path=value`` overrides, validated again."""
        return experiment_from_dict(
            self.raw,
            base_dir=self.base_dir,
            source=self.source,
            overrides=overrides,
            _applied=self.overrides,
        )


def load_experiment(path: str | Path, overrides: Iterable[str] = ()) -> Experiment:
    """Read an experiment TOML file, apply ``key.path=value`` overrides, and validate everything.

    Raises :class:`ConfigError` (one line, naming the file or key) on any problem.
    """
    path = Path(path)
    data = read_experiment_file(path)
    return experiment_from_dict(
        data, base_dir=path.resolve().parent, source=path.resolve(), overrides=tuple(overrides)
    )


def read_experiment_file(path: Path) -> dict[str, Any]:
    """The TOML of an experiment file as a dict; a missing, unreadable or malformed file is a ConfigError
    naming the file."""
    try:
        text = path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        raise ConfigError(str(path), "experiment file not found") from None
    except IsADirectoryError:
        raise ConfigError(str(path), "is a directory, not an experiment file") from None
    except (OSError, UnicodeDecodeError) as e:
        raise ConfigError(str(path), f"cannot read: {e}") from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(str(path), f"TOML syntax error: {e}") from None


def experiment_from_dict(
    data: Mapping[str, Any],
    *,
    base_dir: str | Path | None = None,
    source: Path | None = None,
    overrides: Iterable[str] = (),
    _applied: Sequence[str] = (),
) -> Experiment:
    """Validate an experiment given as a dict (the same shape as the TOML file).

    ``base_dir`` is where relative paths resolve (default: the current directory).
    """
    overrides = tuple(overrides)
    raw = deep_copy(data)
    kind_before = raw.get("topology", {}).get("kind") if isinstance(raw.get("topology"), dict) else None
    for item in overrides:
        apply_override(raw, item)
    drop_other_kinds_keys(raw, kind_before, [".".join(parse_override(item)[0]) for item in overrides])
    base = Path(base_dir).resolve() if base_dir is not None else Path.cwd()

    _check_top_level(raw)
    derived = _derive_thresholds(raw, base)
    engine, hosts, host_link_bps = validate_engine(raw if derived is None else _with_thresholds(raw, derived))
    name = raw.get("name")
    if name is None:
        name = source.stem if source is not None else "experiment"
    elif not isinstance(name, str) or not name.strip():
        raise ConfigError("name", f"must be a non-empty string (got {name!r})")
    label = raw.get("label")
    if label is not None and (not isinstance(label, str) or not label.strip()):
        raise ConfigError("label", f"must be a non-empty string (got {label!r})")
    if "workload" not in raw:
        raise ConfigError(
            "workload", "missing section: give workload.cdf, workload.load and workload.flows, or workload.trace"
        )
    workload = _validate_section(WorkloadConfig, "workload", raw["workload"])
    workload = _check_workload(workload, base, hosts)
    _check_connections(engine, workload, base)
    output = _validate_section(OutputConfig, "output", raw.get("output", {}))
    if output.dir is not None:
        output = output.model_copy(update={"dir": str(_resolve(base, output.dir))})
    return Experiment(
        name=name,
        seed=int(engine["seed"]),
        engine=engine,
        workload=workload,
        output=output,
        hosts=hosts,
        host_link_bps=host_link_bps,
        base_dir=base,
        source=source,
        overrides=(*_applied, *overrides),
        raw=raw,
        label=label,
        derived_thresholds=derived,
        inputs=_input_files(workload),
    )


def drop_other_kinds_keys(raw: dict[str, Any], kind_before: Any, given_keys: Iterable[str]) -> None:
    """When ``given_keys`` (dotted key paths set by overrides or sweep axes) switch ``topology.kind`` away from
    ``kind_before`` (``--set topology.kind=fat_tree`` on a leaf-spine file), drop the topology keys that the new
    kind does not take (a leaf-spine's ``leaves``, ``hosts_per_leaf``, ``spines``), so that the new kind starts
    from its own defaults; keys both kinds take (link rates and delays) are kept, and a key given alongside is
    never dropped (one the new kind does not take is refused as usual, naming it)."""
    topo = raw.get("topology")
    if not isinstance(topo, dict) or kind_before is None or topo.get("kind") == kind_before:
        return
    given = {key.split(".", 1)[1] for key in given_keys if key.startswith("topology.") and key.count(".") == 1}
    if "kind" not in given or not isinstance(topo.get("kind"), str):
        return
    from fctlab import _core

    try:
        takes = set(json.loads(_core.default_topology(topo["kind"])))
    except ValueError:  # an unknown kind: validation names it
        return
    for key in [k for k in topo if k not in takes and k not in given]:
        del topo[key]


def _derive_thresholds(raw: Mapping[str, Any], base: Path) -> dict[str, Any] | None:
    """The demotion thresholds of a pias or qclimb run that gives none, derived from ``workload.cdf`` and
    ``workload.load`` for ``switch.queues`` queues by the PIAS paper's method (:func:`fctlab.thresholds.derive`),
    as a record of what was done; None when thresholds are given, the scheme has none, or the workload has no
    CDF and load (a trace, incast: the engine's own error then asks for them)."""
    from fctlab import _core, thresholds
    from fctlab.scheme_table import threshold_schemes

    scheme, switch, w = (raw.get(k) if isinstance(raw.get(k), dict) else {} for k in ("scheme", "switch", "workload"))
    if scheme.get("name") not in threshold_schemes() or scheme.get("thresholds_bytes") not in (None, []):
        return None
    queues = switch.get("queues", json.loads(_core.defaults())["switch"]["queues"])
    cdf, load = w.get("cdf"), w.get("load")
    if "trace" in w or not isinstance(cdf, str) or not isinstance(queues, int) or queues < 2:
        return None
    if isinstance(load, bool) or not isinstance(load, (int, float)):
        return None
    if not 0 < load <= 1:
        raise ConfigError("workload.load", f"must be > 0 and <= 1 (got {load})")
    if load == 1:
        raise ConfigError(
            "scheme.thresholds_bytes",
            f"not given, and the PIAS paper's derivation needs workload.load < 1 (got {load}): give them",
        )
    try:
        t = thresholds.derive(_resolve_cdf(cdf, base), float(load), queues)
    except thresholds.ThresholdError as e:
        raise ConfigError("scheme.thresholds_bytes", f"not given, and deriving them failed: {e}") from None
    return {"method": "PIAS paper §3", "cdf": t.cdf, "load": t.load, "queues": t.queues,
            "thresholds_bytes": list(t.thresholds_bytes)}


def _with_thresholds(raw: Mapping[str, Any], derived: Mapping[str, Any]) -> dict[str, Any]:
    """``raw`` with the derived thresholds filled in (``raw`` itself keeps none, so that a variant derives
    its own)."""
    out = deep_copy(raw)
    out["scheme"]["thresholds_bytes"] = list(derived["thresholds_bytes"])
    return out



def _input_files(w: WorkloadConfig) -> dict[str, dict[str, str]]:
    """The files a run of this workload reads, with the SHA-256 of their content."""
    files = {"workload.trace": w.trace}
    if w.cdf is not None and Path(w.cdf).is_absolute():  # a file, not a shipped name
        files["workload.cdf"] = w.cdf
    return {k: {"path": p, "sha256": file_digest(Path(p))} for k, p in files.items() if p is not None}


_DIGESTS: dict[tuple[str, int, int], str] = {}


def file_digest(path: Path) -> str:
    """The SHA-256 (hex) of a file's content, remembered while its size and modification time stay the same
    (a sweep validates every point, and a trace may be large)."""
    import hashlib

    st = path.stat()
    key = (str(path), st.st_size, st.st_mtime_ns)
    digest = _DIGESTS.get(key)
    if digest is None:
        h = hashlib.sha256()
        with open(path, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
        digest = _DIGESTS[key] = h.hexdigest()
    return digest


# --------------------------------------------------------------------------------------------------------------
# Overrides


def parse_override(item: str) -> tuple[list[str], Any]:
    """``"a.b.c=value"`` -> (["a", "b", "c"], value). The value is read as a TOML value (``3``, ``0.5``,
    ``true``, ``"x"``, ``[1, 2]``) and, when it is not one, taken as a bare string (``fat_tree``)."""
    key, sep, text = item.partition("=")
    key = key.strip()
    if not sep or not key:
        raise ConfigError(f"--set {item}", "expected key.path=value (e.g. --set workload.load=0.5)")
    parts = key.split(".")
    if any(not p.strip() or not re.fullmatch(r"[A-Za-z0-9_-]+", p.strip()) for p in parts):
        raise ConfigError(f"--set {item}", f"bad key path {key!r}: expected names joined by dots")
    parts = [p.strip() for p in parts]
    text = text.strip()
    try:
        value = tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        value = text
    return parts, value


def apply_override(data: dict[str, Any], item: str) -> None:
    """Apply one ``key.path=value`` override to a raw experiment dict, in place."""
    parts, value = parse_override(item)
    set_key_path(data, parts, value, f"--set {item}")


def set_key_path(data: dict[str, Any], parts: Sequence[str], value: Any, error_key: str) -> None:
    """Set ``data[parts[0]][parts[1]]... = value``, creating tables on the way; a value in the way is a
    ConfigError reported under ``error_key``."""
    node = data
    for i, part in enumerate(parts[:-1]):
        child = node.get(part)
        if child is None:
            child = node[part] = {}
        elif not isinstance(child, dict):
            where = ".".join(parts[: i + 1])
            raise ConfigError(error_key, f"{where} is a value, not a table, so it has no key {parts[i + 1]!r}")
        node = child
    node[parts[-1]] = value


# --------------------------------------------------------------------------------------------------------------
# Validation steps


def deep_copy(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): deep_copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [deep_copy(v) for v in value]
    return value


def _check_top_level(raw: Mapping[str, Any]) -> None:
    for key, value in raw.items():
        if key == SWEEP_SECTION:
            # One run of a file that declares axes would silently pick one point; refuse and say what to do.
            raise ConfigError(
                SWEEP_SECTION,
                "this experiment declares sweep axes: run every point with `fctlab sweep EXPERIMENT.toml --out DIR`"
                " (Python: fctlab.load_sweep / fctlab.run_sweep), or remove [sweep] to run a single experiment",
            )
        if key not in TOP_LEVEL_KEYS:
            allowed = ", ".join((*TOP_LEVEL_KEYS, SWEEP_SECTION))
            raise ConfigError(key, f"unknown field `{key}`, expected one of: {allowed}")
        if key in ENGINE_SECTIONS + PYTHON_SECTIONS and not isinstance(value, dict):
            raise ConfigError(key, f"must be a table ([{key}]), got {type(value).__name__} {value!r}")


def _engine_error(e: ValueError) -> ConfigError:
    """Map an engine ValueError ('key: why' [' at line 1 column 9']) to a ConfigError."""
    text = _one_line(str(e))
    # serde_json appends a position inside the JSON we built; it means nothing to the user.
    text = re.sub(r" at line \d+ column \d+$", "", text)
    key, sep, reason = text.partition(": ")
    if sep and re.fullmatch(r"[A-Za-z0-9_.\[\]-]+", key):
        # A tagged section (topology) reports an unknown field at the section; name the field itself.
        m = re.match(r"unknown field `([^`]+)`", reason)
        if m and not key.endswith("." + m.group(1)):
            key = f"{key}.{m.group(1)}"
        return ConfigError(key, reason)
    return ConfigError("", text)


def validate_engine(raw: Mapping[str, Any]) -> tuple[dict[str, Any], int, float]:
    """Build the engine's part of the config, let the engine validate it, return it resolved."""
    from fctlab import _core

    cfg: dict[str, Any] = {}
    if "seed" in raw:
        seed = raw["seed"]
        if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**64:
            raise ConfigError("seed", f"must be an integer between 0 and 2^64 - 1 (got {seed!r})")
        cfg["seed"] = seed
    for section in ENGINE_SECTIONS:
        if section in raw:
            cfg[section] = dict(raw[section])
    _check_finite(cfg)
    if "topology" in cfg:
        if "kind" not in cfg["topology"]:
            # The engine's default kind (asked, not restated), so [topology] may just resize the default.
            cfg["topology"]["kind"] = json.loads(_core.defaults())["topology"]["kind"]
        cfg["topology"], filled = _expand_topology(cfg["topology"])
    else:
        filled = {}
    try:
        resolved = json.loads(_core.validate_config(json.dumps(cfg)))
        info = _core.topology_info(json.dumps(resolved))
    except ValueError as e:
        err = _engine_error(e)
        short = filled.get(err.key.removeprefix("topology."))
        if short is not None:  # the bad value was the shorthand's: name the key the user wrote
            raise ConfigError(f"topology.{short}", err.reason) from None
        raise err from None
    return resolved, int(info["hosts"]), float(info["host_link_bps"])


def _check_finite(value: Any, path: str = "") -> None:
    """Refuse inf and nan anywhere in the engine's sections, naming the key: JSON (what the engine reads) has no
    such numbers, so they would otherwise surface as a JSON syntax error naming nothing."""
    if isinstance(value, float) and not math.isfinite(value):
        raise ConfigError(path, f"must be a finite number (got {value})")
    if isinstance(value, Mapping):
        for k, v in value.items():
            _check_finite(v, f"{path}.{k}" if path else str(k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            _check_finite(v, f"{path}[{i}]")


def _expand_topology(topo: dict[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
    """Fill the engine's host_/core_ link keys from the ``link_gbps`` / ``link_delay_ns`` shorthands; returns
    the topology and which keys were filled from which shorthand.

    Which keys a topology kind has is asked of the engine (``_core.default_topology``), so a kind with host
    links only (single_switch) gets only the host key. A key given explicitly wins over the shorthand; a
    shorthand that every key of its kind overrides would be ignored, so it is refused.
    """
    from fctlab import _core

    present = [s for s in TOPOLOGY_SHORTHANDS if s in topo]
    if not present:
        return topo, {}
    kind = topo.get("kind")
    try:
        known = set(json.loads(_core.default_topology(str(kind))))
    except ValueError as e:
        err = _engine_error(e)
        raise ConfigError("topology.kind", err.reason) from None
    out = {k: v for k, v in topo.items() if k not in TOPOLOGY_SHORTHANDS}
    filled: dict[str, str] = {}
    for short in present:
        targets = [t for t in TOPOLOGY_SHORTHANDS[short] if t in known]
        if targets and all(t in out for t in targets):
            raise ConfigError(
                f"topology.{short}",
                f"is not used, since {' and '.join(f'topology.{t}' for t in targets)} "
                f"{'is' if len(targets) == 1 else 'are'} given; remove one or the other",
            )
        for target in targets:
            if target not in out:
                out[target] = topo[short]
                filled[target] = short
    return out, filled


def _validate_section(model: type[_Section], section: str, value: Any) -> Any:
    if not isinstance(value, dict):
        raise ConfigError(section, f"must be a table ([{section}]), got {type(value).__name__}")
    try:
        return model.model_validate(value)
    except ValidationError as e:
        raise _pydantic_error(model, section, e) from None


def _pydantic_error(model: type[_Section], section: str, e: ValidationError) -> ConfigError:
    """The first pydantic error as a one-line ConfigError naming ``section.key``."""
    err = e.errors(include_url=False)[0]
    key = ".".join([section, *(str(p) for p in err["loc"])])
    kind = err["type"]
    if kind == "extra_forbidden":
        allowed = ", ".join(model.model_fields)
        return ConfigError(key, f"unknown field `{err['loc'][-1]}`, expected one of: {allowed}")
    msg = err["msg"]
    if msg.startswith("Value error, "):
        return ConfigError(key, msg[len("Value error, ") :])
    msg = re.sub(r"^Input should be ", "must be ", msg)
    return ConfigError(key, f"{msg} (got {err.get('input')!r})")


def _resolve(base: Path, value: str) -> Path:
    p = Path(value).expanduser()
    return p if p.is_absolute() else (base / p)


def _check_connections(engine: Mapping[str, Any], w: WorkloadConfig, base: Path) -> None:
    """``transport.connections = "trace"`` takes each flow's connection from the trace's ``conn`` column."""
    if engine["transport"].get("connections") != "trace":
        return
    from fctlab import workloads

    if w.trace is None:
        raise ConfigError("transport.connections", '"trace" needs a workload.trace with a conn column')
    trace = workloads.read_trace(_resolve(base, w.trace), rebase=bool(w.trace_rebase))
    if "conn" not in trace.columns:
        raise ConfigError(
            "transport.connections", f'"trace" needs a conn column in {w.trace} (each flow\'s connection id)'
        )


def _check_workload(w: WorkloadConfig, base: Path, hosts: int) -> WorkloadConfig:
    """Cross-field rules of [workload]; resolve and open the CDF or trace so a bad file fails here."""
    from fctlab import workloads

    given = {k for k, v in w.model_dump().items() if v is not None} - {"warmup_flows", "cooldown_flows"}

    def forbid(keys: Iterable[str], why: str) -> None:
        for k in keys:
            if k in given:
                raise ConfigError(f"workload.{k}", why)

    def need(keys: Iterable[str], why: str) -> None:
        for k in keys:
            if k not in given:
                raise ConfigError(f"workload.{k}", f"missing: {why}")

    update: dict[str, Any] = {}
    if w.trace is not None:
        forbid(
            ("pattern", "cdf", "load", "load_bytes", "flows", "fan_in", "response_bytes", "queries", "query_rate_hz",
             "senders", "receivers", "size_uniform_mean_bytes", "receiver", "stride", "staggered_p",
             "start_spread_ns", "pairs"),
            "not allowed with workload.trace (a trace gives the flows itself)",
        )
        path = _resolve(base, w.trace)
        if not path.is_file():
            raise ConfigError("workload.trace", f"file not found: {path}")
        try:
            trace = workloads.read_trace(path, rebase=bool(w.trace_rebase))
        except (ValueError, OSError) as e:
            raise ConfigError("workload.trace", _one_line(str(e))) from None
        try:
            workloads.check_hosts(trace, hosts)
        except ValueError as e:
            raise ConfigError("workload.trace", f"{path}: {e}") from None
        n_flows = len(trace)
        update["trace"] = str(path)
    else:
        forbid(("trace_rebase",), "only for a workload.trace")
        pattern = w.pattern or "all_to_all"
        update["pattern"] = pattern
        if pattern == "incast":
            need(("fan_in", "response_bytes", "queries"), "pattern incast needs fan_in, response_bytes, queries")
            forbid(("cdf", "flows"), "not used by pattern incast (flows = queries x fan_in)")
            if ("load" in given) == ("query_rate_hz" in given):
                raise ConfigError(
                    "workload.query_rate_hz", "pattern incast needs exactly one of query_rate_hz and load"
                )
            assert w.fan_in is not None and w.queries is not None
            if w.fan_in >= hosts:
                raise ConfigError("workload.fan_in", f"must be < the number of hosts ({hosts}) (got {w.fan_in})")
            n_flows = w.queries * w.fan_in
        else:
            if pattern == "all_to_all":
                need(("load", "flows"), f"pattern {pattern} needs cdf (or size_uniform_mean_bytes), load and flows")
            elif pattern == "aggregation":
                need(("flows",), "pattern aggregation needs flows and cdf or size_uniform_mean_bytes")
                forbid(("load", "load_bytes"), "not used by pattern aggregation (its flows all arrive together)")
            else:
                need(("flows",), f"pattern {pattern} needs flows, cdf or size_uniform_mean_bytes (and load for "
                                 "Poisson arrivals; without it the flows arrive together)")
            if "cdf" in given and "size_uniform_mean_bytes" in given:
                raise ConfigError("workload.size_uniform_mean_bytes", "give either cdf or size_uniform_mean_bytes")
            if "cdf" not in given and "size_uniform_mean_bytes" not in given:
                need(("cdf",), f"pattern {pattern} needs flow sizes: cdf or size_uniform_mean_bytes")
            forbid(("fan_in", "response_bytes", "queries", "query_rate_hz"), f"only for pattern incast, not {pattern}")
            assert w.flows is not None
            if w.cdf is not None:
                update["cdf"] = _resolve_cdf(w.cdf, base)
            n_flows = w.flows
        for key, only in (("receiver", ("aggregation",)), ("stride", ("stride",)), ("staggered_p", ("staggered",)),
                          ("start_spread_ns", ("aggregation", *HOST_PATTERNS))):
            if pattern not in only:
                forbid((key,), f"only for pattern {' or '.join(only)}, not {pattern}")
        for key in ("stride", "staggered_p"):
            if pattern == key.removesuffix("_p"):
                need((key,), f"pattern {pattern} needs {key}")
        if "start_spread_ns" in given and "load" in given:
            raise ConfigError("workload.start_spread_ns", "is for flows that arrive together; with a load they "
                              "arrive as a Poisson process")
        if w.receiver is not None and w.receiver >= hosts:
            raise ConfigError("workload.receiver", f"host {w.receiver} does not exist (the topology has {hosts} "
                              f"hosts, ids 0..{hosts - 1})")
        if w.stride is not None and w.stride % hosts == 0:
            raise ConfigError("workload.stride", f"must not be a multiple of the number of hosts ({hosts}) "
                              f"(got {w.stride}): every host would send to itself")
        if pattern == "aggregation":
            forbid(("receivers",), "pattern aggregation has one receiver: workload.receiver")
            forbid(("pairs",), "only for pattern all_to_all, not aggregation")
            if w.senders is not None and (w.receiver or 0) in w.senders:
                raise ConfigError("workload.senders", f"lists the receiver (host {w.receiver or 0}), which cannot "
                                  "send to itself")
        elif pattern != "all_to_all":
            forbid(("senders", "receivers", "pairs"), f"only for pattern all_to_all, not {pattern}")
        if "load_bytes" in given and "load" not in given:
            raise ConfigError("workload.load_bytes", "says what workload.load counts, but no load is given")
        for key in ("senders", "receivers"):
            ids = getattr(w, key)
            if ids is not None and max(ids) >= hosts:
                raise ConfigError(
                    f"workload.{key}",
                    f"host {max(ids)} does not exist (the topology has {hosts} hosts, ids 0..{hosts - 1})",
                )
        if w.senders is not None and w.receivers is not None and len(set(w.senders) | set(w.receivers)) == 1:
            raise ConfigError("workload.receivers", "a single host cannot send to itself")
    if w.trace is not None:
        forbid(("deadline_mean_ms",), "not allowed with workload.trace (its deadline_ns column gives deadlines)")
    for key in ("deadline_fraction", "deadline_max_bytes", "deadline_floor"):
        if key in given and "deadline_mean_ms" not in given:
            raise ConfigError(f"workload.{key}", "shapes the deadlines of workload.deadline_mean_ms, which is not "
                              "given")
    _check_gen_rate(w, given, base, update)
    if w.trace is None:
        _check_flow_count(n_flows, "workload.queries" if w.pattern == "incast" else "workload.flows")
    if w.warmup_flows >= n_flows:
        raise ConfigError("workload.warmup_flows", f"must be < the number of flows ({n_flows}) (got {w.warmup_flows})")
    if w.warmup_flows + w.cooldown_flows >= n_flows:
        raise ConfigError(
            "workload.cooldown_flows",
            f"with workload.warmup_flows ({w.warmup_flows}) must leave flows to measure: warmup_flows + "
            f"cooldown_flows must be < the number of flows ({n_flows}) (got {w.cooldown_flows})",
        )
    return w.model_copy(update=update)


#: Memory a run needs per flow, about (bytes): the flow table (26 columns), the workload's columns and the
#: engine's per-flow results, with room to spare (the 200,000-flow reference run peaks at about 240 B a flow
#: above its fixed ~200 MiB).
BYTES_PER_FLOW = 400
#: Flow ids are 32-bit in the engine.
MAX_FLOWS = 2**32 - 1


def _check_flow_count(n_flows: int, key: str) -> None:
    """Refuse a workload with more flows than the engine numbers, or than this machine's memory holds."""
    if n_flows > MAX_FLOWS:
        raise ConfigError(key, f"{n_flows:,} flows are more than the engine can number (at most {MAX_FLOWS:,})")
    try:
        memory = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):
        return
    need = n_flows * BYTES_PER_FLOW
    if memory > 0 and need > memory:
        raise ConfigError(
            key,
            f"{n_flows:,} flows need about {need / 2**30:,.1f} GiB of memory (about {BYTES_PER_FLOW} bytes a flow), "
            f"more than this machine's {memory / 2**30:,.1f} GiB: use fewer flows, or split the run by seed",
        )


def _check_gen_rate(w: WorkloadConfig, given: set[str], base: Path, update: dict[str, Any]) -> None:
    """The application model's keys of [workload]: each distribution with its own keys; the rate CDF opened."""
    from fctlab import workloads

    own = {"fixed": ("gen_rate_bps",), "uniform": ("gen_rate_min_bps", "gen_rate_max_bps"),
           "log_uniform": ("gen_rate_min_bps", "gen_rate_max_bps"), "cdf": ("gen_rate_cdf",)}
    keys = ("gen_rate_bps", "gen_rate_min_bps", "gen_rate_max_bps", "gen_rate_cdf", "gen_rate_scale")
    dist = w.gen_rate_dist
    if dist is None:
        for k in keys:
            if k in given:
                raise ConfigError(f"workload.{k}", "needs workload.gen_rate_dist (fixed, uniform, log_uniform, cdf)")
        for k in ("cached_fraction", "write_chunk_bytes"):
            if k in given and w.trace is None:
                raise ConfigError(f"workload.{k}", "applies to rate-limited flows: give workload.gen_rate_dist")
        return
    for k in keys[:4]:
        if k in given and k not in own[dist]:
            raise ConfigError(f"workload.{k}", f"not used by workload.gen_rate_dist = {dist!r}")
    for k in own[dist]:
        if k not in given:
            raise ConfigError(f"workload.{k}",
                              f"missing: workload.gen_rate_dist = {dist!r} needs {', '.join(own[dist])}")
    if dist in ("uniform", "log_uniform") and (w.gen_rate_max_bps or 0) < (w.gen_rate_min_bps or 0):
        raise ConfigError("workload.gen_rate_max_bps", f"must be >= gen_rate_min_bps ({w.gen_rate_min_bps:g})")
    if dist == "cdf":
        assert w.gen_rate_cdf is not None
        path = _resolve(base, w.gen_rate_cdf)
        target = str(path) if path.is_file() else w.gen_rate_cdf
        try:
            workloads.load_rate_cdf(Path(target) if target == str(path) else target)
        except (ValueError, OSError) as e:
            raise ConfigError("workload.gen_rate_cdf", _one_line(str(e))) from None
        update["gen_rate_cdf"] = target


def _resolve_cdf(value: str, base: Path) -> str:
    """A shipped CDF name stays a name; anything else is a file, made absolute and opened now."""
    from fctlab import workloads

    path = _resolve(base, value)
    names = workloads.cdf_names()  # (the names only: reading all the shipped files took 8-11 ms of CPU)
    if path.is_file():
        target = str(path)
    elif value in names:
        target = value
    elif any(c in value for c in "/\\") or value.endswith(".cdf"):
        raise ConfigError("workload.cdf", f"file not found: {path}")
    else:
        raise ConfigError(
            "workload.cdf", f"unknown CDF {value!r}: give a shipped name ({', '.join(names)}) or a file path"
        )
    try:
        workloads.load_cdf(path if target == str(path) else target)
    except (ValueError, OSError) as e:
        raise ConfigError("workload.cdf", _one_line(str(e))) from None
    return target


if __name__ == "__main__":
    raise SystemExit("the key table moved: python -m fctlab.reference writes docs/reference/keys.md")
