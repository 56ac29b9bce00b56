"""Tuning a scheme's knobs by simulation in the loop: a search space of experiment keys, an objective computed
from each run's measured flows, and Optuna choosing the next point from the trials so far.

A study lives in one folder (the *study dir*): Optuna's storage ``study.db`` (SQLite, so a killed study resumes
where it stopped), ``trials.parquet`` (one row per trial), ``best.toml`` (the experiment with the best knobs, ready
for ``fctlab run``), ``best/`` (that experiment run once and recorded in ``catalog.duckdb``), ``confirm.json``
(the packet-level confirmation of a flow-level screen) and ``report.html`` with its plots. docs/tuning.md
describes the space file, the objectives and what each file holds.

Determinism: trials run one after another; trial k's sampler is seeded from ``sampler_seed`` and k alone (a
sampler is created for every trial, reading the trials so far from the storage), so two studies with the same
experiment, space, objective and seeds run the same trials, and a study killed and resumed runs the same trials
as one never interrupted (the trial in flight when it was killed is marked failed and run again, with the same
knobs, first).
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import time
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Union

from fctlab.config import ConfigError, Experiment

if TYPE_CHECKING:
    from fctlab.simulation import Result

__all__ = [
    "Knob", "Space", "Objective", "STATISTICS", "TrialEvent", "TuneReport", "load_space", "space_from_dict",
    "parse_objective", "tune", "toml_value", "toml_document",
]

#: The kinds of knob a space file can give.
KINDS = ("int", "log-int", "float", "log-float", "categorical", "increasing")
#: Sections of an experiment whose keys can be tuned (the engine's sections and the workload).
TUNABLE_SECTIONS = ("topology", "switch", "host", "routing", "transport", "scheme", "run", "link_loss", "workload")
#: Files of a study dir.
STORAGE_FILE = "study.db"
TRIALS_FILE = "trials.parquet"
BEST_FILE = "best.toml"
BEST_RUN_DIR = "best"
CONFIRM_FILE = "confirm.json"
REPORT_FILE = "report.html"
STUDY_NAME = "fctlab-tune"
SAMPLERS = ("tpe", "cmaes", "random")


# --------------------------------------------------------------------------------------------------------------
# TOML values (best.toml, and the --set overrides each trial applies)


def toml_value(value: Any) -> str:
    """A Python value as TOML text: booleans, integers, finite floats, strings and lists of them."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"TOML has no {value}")
        text = repr(value)
        return text if any(c in text for c in ".en") else text + ".0"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, Mapping):
        return "{ " + ", ".join(f"{_toml_key(k)} = {toml_value(v)}" for k, v in value.items()) + " }"
    raise ValueError(f"no TOML form for {type(value).__name__} {value!r}")


def _toml_key(key: str) -> str:
    return key if re.fullmatch(r"[A-Za-z0-9_-]+", key) else json.dumps(key)


def toml_document(data: Mapping[str, Any], header: Sequence[str] = ()) -> str:
    """A dict of the experiment file's shape as a TOML document (top-level values, then one table per
    section, nested tables as dotted headers), ``header`` lines as comments first."""
    lines = [f"# {h}" for h in header]

    def emit(table: Mapping[str, Any], path: list[str]) -> None:
        plain = {k: v for k, v in table.items() if not isinstance(v, Mapping)}
        if path and (plain or not table):
            lines.append("")
            lines.append("[" + ".".join(_toml_key(p) for p in path) + "]")
        for k, v in plain.items():
            lines.append(f"{_toml_key(k)} = {toml_value(v)}")
        for k, v in table.items():
            if isinstance(v, Mapping):
                emit(v, [*path, k])

    emit(data, [])
    return "\n".join(lines).lstrip("\n") + "\n"


# --------------------------------------------------------------------------------------------------------------
# The search space


@dataclass(frozen=True)
class Knob:
    """One tuned key: ``key`` is a dotted experiment key as ``fctlab run --set`` takes it; ``kind`` one of
    :data:`KINDS`. int/log-int/float/log-float draw from [low, high] (log-: on a log scale; ``step`` for int);
    categorical from ``choices``; increasing draws ``length`` integers, strictly increasing, in [low, high]:
    the first on a log scale, then each one a drawn fraction of the way (in log) from the one before to
    ``high``, so every draw is increasing by construction and every increasing sequence can be drawn."""

    key: str
    kind: str
    low: float | None = None
    high: float | None = None
    step: int | None = None
    choices: tuple[Any, ...] = ()
    length: int = 0

    def suggest(self, trial: Any) -> Any:
        """Draw this knob's value from an Optuna trial (its parameters are named after the key)."""
        k = self.key
        if self.kind in ("int", "log-int"):
            return trial.suggest_int(k, int(self.low), int(self.high), step=self.step or 1,  # type: ignore[arg-type]
                                     log=self.kind == "log-int")
        if self.kind in ("float", "log-float"):
            return trial.suggest_float(k, float(self.low), float(self.high),  # type: ignore[arg-type]
                                       log=self.kind == "log-float")
        if self.kind == "categorical":
            index = trial.suggest_categorical(k, list(range(len(self.choices))))
            return self.choices[index]
        first = trial.suggest_float(f"{k}[0]", float(self.low), float(self.high), log=True)  # type: ignore[arg-type]
        fractions = [trial.suggest_float(f"{k}[{i}]:fraction", 0.0, 1.0) for i in range(1, self.length)]
        return self.sequence(first, fractions)

    def sequence(self, first: float, fractions: Sequence[float]) -> list[int]:
        """The increasing sequence of a draw: ``first``, then each value ``fraction`` of the way, in log, from
        the one before to ``high``; rounded to integers at least 1 apart."""
        high = float(self.high)  # type: ignore[arg-type]
        out = [int(round(first))]
        log_prev = math.log(first)
        for f in fractions:
            log_prev = log_prev + f * (math.log(high) - log_prev)
            out.append(max(int(round(math.exp(log_prev))), out[-1] + 1))
        return out

    def params_of(self, value: Any) -> dict[str, Any] | None:
        """The Optuna parameters that draw ``value`` (the inverse of :meth:`suggest`), or None when the space
        cannot draw it (outside the range, not a choice, another length)."""
        k = self.key
        if self.kind == "categorical":
            texts = [json.dumps(c, sort_keys=True) for c in self.choices]
            text = json.dumps(value, sort_keys=True)
            return {k: texts.index(text)} if text in texts else None
        if self.kind == "increasing":
            if not isinstance(value, list) or len(value) != self.length:
                return None
            vals = [float(v) for v in value]
            high = float(self.high)  # type: ignore[arg-type]
            if vals[0] < float(self.low) or vals[-1] > high or any(b <= a for a, b in zip(vals, vals[1:])):  # type: ignore[arg-type]
                return None
            out: dict[str, Any] = {f"{k}[0]": vals[0]}
            for i in range(1, self.length):
                span = math.log(high) - math.log(vals[i - 1])
                out[f"{k}[{i}]:fraction"] = min(1.0, (math.log(vals[i]) - math.log(vals[i - 1])) / span) if span > 0 else 1.0
            return out
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return None
        if not float(self.low) <= value <= float(self.high):  # type: ignore[arg-type]
            return None
        return {k: int(value) if self.kind in ("int", "log-int") else float(value)}

    def examples(self) -> list[Any]:
        """Values at the ends of the range (each choice of a categorical), to validate before anything runs."""
        if self.kind in ("int", "log-int"):
            return [int(self.low), int(self.high)]  # type: ignore[arg-type]
        if self.kind in ("float", "log-float"):
            return [float(self.low), float(self.high)]  # type: ignore[arg-type]
        if self.kind == "categorical":
            return list(self.choices)
        return [self.sequence(float(self.low), [1.0 / (self.length - i) for i in range(1, self.length)]),  # type: ignore[arg-type]
                self.sequence(max(float(self.low), float(self.high) / 2 ** self.length),  # type: ignore[arg-type]
                              [0.5] * (self.length - 1))]

    def spec(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind}
        if self.kind == "categorical":
            out["choices"] = list(self.choices)
        else:
            out.update(low=self.low, high=self.high)
            if self.step:
                out["step"] = self.step
            if self.kind == "increasing":
                out["length"] = self.length
        return out


@dataclass(frozen=True)
class Space:
    """The knobs of a study, in file order."""

    knobs: tuple[Knob, ...]

    def suggest(self, trial: Any) -> dict[str, Any]:
        return {k.key: k.suggest(trial) for k in self.knobs}

    def spec(self) -> dict[str, Any]:
        return {k.key: k.spec() for k in self.knobs}


def _flatten_space(table: Mapping[str, Any], prefix: str = "") -> Iterable[tuple[str, Any]]:
    """Knob entries of a space file: a table with a ``kind`` is a knob; other tables nest (``[scheme.rax_base]``
    and ``"scheme.rax_base" = {...}`` are the same knob)."""
    for key, value in table.items():
        if isinstance(value, Mapping) and "kind" not in value:
            yield from _flatten_space(value, f"{prefix}{key}.")
        else:
            yield f"{prefix}{key}", value


def load_space(path: str | Path, base: Experiment) -> Space:
    """Read a space file (TOML) and validate it against ``base``; ConfigError naming the key on a problem."""
    import tomllib

    path = Path(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(str(path), "space file not found") from None
    except (OSError, UnicodeDecodeError) as e:
        raise ConfigError(str(path), f"cannot read: {e}") from None
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(str(path), f"TOML syntax error: {e}") from None
    return space_from_dict(data, base)


def _number(key: str, spec: Mapping[str, Any], name: str, integer: bool = False) -> float:
    v = spec.get(name)
    if v is None:
        raise ConfigError(key, f"kind {spec.get('kind')!r} needs {name}")
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        raise ConfigError(key, f"{name} must be a finite number (got {v!r})")
    if integer and v != int(v):
        raise ConfigError(key, f"{name} must be an integer for kind {spec.get('kind')!r} (got {v!r})")
    return v


def _current(base: Experiment, key: str) -> tuple[bool, Any]:
    """Whether ``key`` is a key of the resolved experiment, and its value there (None for an optional key)."""
    from fctlab.config import WorkloadConfig

    parts = key.split(".")
    if parts[0] == "workload":
        if len(parts) != 2 or parts[1] not in WorkloadConfig.model_fields:
            return False, None
        return True, getattr(base.workload, parts[1])
    node: Any = base.engine
    for p in parts:
        if not isinstance(node, Mapping) or p not in node:
            return False, None
        node = node[p]
    return True, node


def space_from_dict(data: Mapping[str, Any], base: Experiment) -> Space:
    """Validate a space given as a dict (the space file's shape) against the experiment ``base``: every key
    must be a key of the resolved experiment in a tunable section, its kind must suit the key's type, its
    range must be well formed, and the ends of the range (each choice) must pass the experiment's own
    validation. ConfigError (one line, naming the key) otherwise."""
    knobs: list[Knob] = []
    for key, spec in _flatten_space(data):
        if not isinstance(spec, Mapping):
            raise ConfigError(key, f"must be a table with a kind (one of {', '.join(KINDS)}), got {spec!r}")
        known = set(spec) - {"kind", "low", "high", "step", "choices", "length"}
        if known:
            raise ConfigError(key, f"unknown field {sorted(known)[0]!r} (a knob takes kind, low, high, step, "
                              "choices, length)")
        kind = spec.get("kind")
        if kind not in KINDS:
            raise ConfigError(key, f"kind must be one of {', '.join(KINDS)} (got {kind!r})")
        section = key.split(".")[0]
        if section not in TUNABLE_SECTIONS or "." not in key:
            raise ConfigError(key, f"not a tunable key: give a key of one of the sections {', '.join(TUNABLE_SECTIONS)}")
        exists, current = _current(base, key)
        if not exists:
            raise ConfigError(key, "unknown key: not a key of the experiment (fctlab run --set takes the same keys; "
                              "docs/reference lists them)")
        knob = _knob(key, kind, spec, current, base)
        if any(k.key == key for k in knobs):
            raise ConfigError(key, "given twice in the space")
        for other in knobs:
            if key.startswith(other.key + ".") or other.key.startswith(key + "."):
                raise ConfigError(key, f"overlaps {other.key}")
        for value in knob.examples():
            try:
                base.with_overrides([f"{key}={toml_value(value)}"])
            except ConfigError as e:
                raise ConfigError(key, f"the value {value!r} from the space is refused by the experiment: {e}") from None
        knobs.append(knob)
    if not knobs:
        raise ConfigError("space", "no knobs: give at least one key with a kind, e.g. [scheme.rax_base] kind = "
                          "\"float\", low = 2, high = 6")
    return Space(tuple(knobs))


def _knob(key: str, kind: str, spec: Mapping[str, Any], current: Any, base: Experiment) -> Knob:
    if kind != "categorical" and "choices" in spec:
        raise ConfigError(key, f"choices belong to kind categorical, not {kind}")
    if isinstance(current, bool) and kind != "categorical":
        raise ConfigError(key, f"is a true/false key: give kind categorical, not {kind}")
    if isinstance(current, str) and kind != "categorical":
        raise ConfigError(key, f"is a text key: give kind categorical, not {kind}")
    if isinstance(current, list) and kind not in ("increasing", "categorical"):
        raise ConfigError(key, f"is a list key: give kind increasing (or categorical), not {kind}")
    if kind == "increasing" and current is not None and not isinstance(current, list):
        raise ConfigError(key, f"is not a list key (its value is {current!r}): kind increasing does not apply")
    if isinstance(current, int) and not isinstance(current, bool) and kind in ("float", "log-float"):
        raise ConfigError(key, f"is an integer key: give kind int or log-int, not {kind}")
    if kind == "categorical":
        choices = spec.get("choices")
        if not isinstance(choices, list) or not choices:
            raise ConfigError(key, "kind categorical needs choices, a non-empty list")
        seen = set()
        for c in choices:
            text = json.dumps(c, sort_keys=True)
            if text in seen:
                raise ConfigError(key, f"choices list {c!r} twice")
            seen.add(text)
        return Knob(key, kind, choices=tuple(choices))
    integer = kind in ("int", "log-int", "increasing")
    low, high = _number(key, spec, "low", integer), _number(key, spec, "high", integer)
    if low >= high:
        raise ConfigError(key, f"low must be below high (got low {low!r}, high {high!r})")
    if kind.startswith("log") or kind == "increasing":
        if low <= 0:
            raise ConfigError(key, f"low must be > 0 for kind {kind} (got {low!r})")
    step = spec.get("step")
    if step is not None:
        if kind != "int" or isinstance(step, bool) or not isinstance(step, int) or step < 1:
            raise ConfigError(key, "step is an integer >= 1, for kind int only")
    length = 0
    if kind == "increasing":
        length = spec.get("length")
        if length is None and key == "scheme.thresholds_bytes":
            length = int(base.engine["switch"]["queues"]) - 1
        if isinstance(length, bool) or not isinstance(length, int) or length < 1:
            raise ConfigError(key, f"kind increasing needs length, an integer >= 1 (got {length!r})")
        if high - low < length:
            raise ConfigError(key, f"[{low}, {high}] cannot hold {length} increasing integers")
    return Knob(key, kind, low=int(low) if integer else float(low), high=int(high) if integer else float(high),
                step=step, length=length)


# --------------------------------------------------------------------------------------------------------------
# Objectives


def _bin_stat(bin_name: str, stat: str, scale: float) -> Callable[[Mapping[str, Any]], float | None]:
    def get(summary: Mapping[str, Any]) -> float | None:
        v = ((summary.get("bins") or {}).get(bin_name) or {}).get(stat)
        return None if v is None else float(v) / scale
    return get


def _top(name: str) -> Callable[[Mapping[str, Any]], float | None]:
    def get(summary: Mapping[str, Any]) -> float | None:
        v = summary.get(name)
        return None if v is None else float(v)
    return get


def _statistics() -> dict[str, tuple[str, Callable[[Mapping[str, Any]], float | None]]]:
    out: dict[str, tuple[str, Callable[[Mapping[str, Any]], float | None]]] = {}
    for b in ("small", "medium", "large", "all"):
        for stat, key, scale, what in (
            ("mean_fct", "mean_fct_ns", 1000.0, "mean FCT (us)"),
            ("p99_fct", "p99_fct_ns", 1000.0, "99th-percentile FCT (us)"),
            ("mean_slowdown", "mean_slowdown", 1.0, "mean slowdown"),
            ("p99_slowdown", "p99_slowdown", 1.0, "99th-percentile slowdown"),
        ):
            out[f"{b}_{stat}"] = (f"{what} of the {b} bin's finished measured flows", _bin_stat(b, key, scale))
            if b == "all":
                out[stat] = (f"{what} of all finished measured flows", _bin_stat(b, key, scale))
    out["application_throughput"] = ("share of measured deadline flows that met their deadline", _top(
        "application_throughput"))
    out["unfinished_flows"] = ("flows that did not finish", _top("unfinished_flows"))
    out["drops"] = ("packets dropped", _top("drops"))
    out["retransmits"] = ("retransmitted packets", _top("retransmits"))
    return out


#: Statistic name -> (what it is, how to read it from a run's summary). FCTs are in microseconds.
STATISTICS = _statistics()

_TERM = re.compile(r"\s*([+-])?\s*(?:(\d+(?:\.\d*)?(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?)\s*\*\s*)?"
                   r"([A-Za-z_][A-Za-z0-9_]*)(?:\s*\*\s*(\d+(?:\.\d*)?(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?))?\s*")


@dataclass(frozen=True)
class Objective:
    """One objective: a weighted sum of summary statistics (``terms``: (weight, name)), or a callable taking a
    run's :class:`~fctlab.simulation.Result` and returning a number."""

    text: str
    terms: tuple[tuple[float, str], ...] = ()
    function: Callable[[Any], float] | None = field(default=None, compare=False)

    def evaluate(self, result: Result) -> float | None:
        """The objective of one run; None when a statistic it needs is undefined (e.g. an empty bin)."""
        if self.function is not None:
            v = self.function(result)
            return None if v is None else float(v)
        total = 0.0
        for weight, name in self.terms:
            v = STATISTICS[name][1](result.summary)
            if v is None or not math.isfinite(v):
                return None
            total += weight * v
        return total


def parse_objective(text: str | Callable[[Any], float]) -> Objective:
    """``small_p99_fct``, ``0.5*small_p99_fct + 0.5*large_mean_fct`` (weights before or after the name, terms
    joined by + or -) or a callable; a ConfigError naming ``--objective`` otherwise. Parsed by a regular
    expression: nothing is evaluated."""
    if callable(text):
        name = getattr(text, "__qualname__", None) or type(text).__qualname__
        return Objective(text=f"{getattr(text, '__module__', '')}.{name}", function=text)
    if not isinstance(text, str) or not text.strip():
        raise ConfigError("--objective", f"must be a statistic or a weighted sum of them (got {text!r})")
    terms = []
    pos = 0
    src = text.strip()
    while pos < len(src):
        m = _TERM.match(src, pos)
        if m is None or m.end() == pos or (terms and m.group(1) is None):
            raise ConfigError("--objective", f"cannot read {src!r} at {src[pos:]!r}: expected e.g. "
                              "'0.5*small_p99_fct + 0.5*large_mean_fct'")
        sign, w1, name, w2 = m.groups()
        if w1 is not None and w2 is not None:
            raise ConfigError("--objective", f"{name} has two weights")
        if name not in STATISTICS:
            raise ConfigError("--objective", f"unknown statistic {name!r}; known: {', '.join(STATISTICS)}")
        weight = float(w1 if w1 is not None else (w2 if w2 is not None else 1.0))
        terms.append((-weight if sign == "-" else weight, name))
        pos = m.end()
    return Objective(text=" ".join(src.split()), terms=tuple(terms))


# --------------------------------------------------------------------------------------------------------------
# The study


@dataclass(frozen=True)
class TrialEvent:
    """Progress of a study, handed to ``tune``'s ``progress`` callback after each trial: ``done`` of ``total``
    trials this call runs, the trial's values (None when it failed) and the best so far."""

    number: int
    done: int
    total: int
    values: list[float] | None
    best: list[float] | None
    best_number: int | None
    wall_seconds: float
    level: str
    error: str | None = None


@dataclass
class TuneReport:
    """What :func:`tune` did and where it wrote: ``best`` the best knob values (packet-confirmed when a screen
    was confirmed), ``trials`` the trials table, ``agreement`` the screen's rank agreement (or None)."""

    study_dir: Path
    ran: int
    resumed: int
    best: dict[str, Any] | None
    best_values: list[float] | None
    best_number: int | None
    trials: Any
    agreement: dict[str, Any] | None = None
    files: dict[str, Path] = field(default_factory=dict)
    wall_seconds: float = 0.0


def _optuna() -> Any:
    try:
        import optuna
    except ImportError:
        raise ConfigError("tune", "Optuna is not installed: pip install 'fctlab[tune]' (or 'optuna>=4,<5')") from None
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    return optuna


def _trial_seed(sampler_seed: int, k: int) -> int:
    digest = hashlib.sha256(f"fctlab-tune:{sampler_seed}:{k}".encode()).digest()
    return int.from_bytes(digest[:4], "little")


def _sampler(name: str, seed: int, n_objectives: int) -> Any:
    optuna = _optuna()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
        if name == "tpe":
            return optuna.samplers.TPESampler(seed=seed, multivariate=True)
        if name == "random":
            return optuna.samplers.RandomSampler(seed=seed)
        return optuna.samplers.CmaEsSampler(seed=seed, warn_independent_sampling=False)


@dataclass(frozen=True)
class _Setup:
    base: Experiment
    space: Space
    objectives: tuple[Objective, ...]
    seeds: tuple[int, ...]
    loads: tuple[float | None, ...]
    robust: str
    maximize: bool
    sampler: str
    sampler_seed: int
    screen: str | None
    screen_flows: int | None
    allow_unfinished: bool
    baseline: bool = False

    def fingerprint(self) -> dict[str, Any]:
        from fctlab.sweep import comparable_config

        return {
            "experiment": comparable_config(self.base.to_dict()),
            "space": self.space.spec(),
            "objectives": [o.text for o in self.objectives],
            "seeds": list(self.seeds), "loads": list(self.loads), "robust": self.robust,
            "maximize": self.maximize, "sampler": self.sampler, "sampler_seed": self.sampler_seed,
            "screen": self.screen, "screen_flows": self.screen_flows, "allow_unfinished": self.allow_unfinished,
            "baseline": self.baseline,
        }

    def level_sets(self, level: str) -> list[str]:
        """The overrides that make a run of the screen (``level`` = "screen") or of the confirmation."""
        if level == "screen":
            sets = [f"run.level={self.screen}"] if self.screen else []
            if self.screen_flows is not None:
                sets.append(f"workload.flows={self.screen_flows}")
            return sets
        return ["run.level=packet"]

    def runs(self, values: Mapping[str, Any], level: str) -> list[Experiment]:
        knob_sets = [f"{k}={toml_value(v)}" for k, v in values.items()]
        out = []
        for seed in self.seeds:
            for load in self.loads:
                sets = [*knob_sets, f"seed={seed}"]
                if load is not None:
                    sets.append(f"workload.load={toml_value(load)}")
                out.append(self.base.with_overrides([*sets, *self.level_sets(level)]))
        return out


def _aggregate(per_run: list[list[float]], robust: str, maximize: bool) -> list[float]:
    out = []
    for column in zip(*per_run):
        if robust == "worst":
            out.append(min(column) if maximize else max(column))
        else:
            out.append(sum(column) / len(column))
    return out


def run_summary(task: Mapping[str, Any]) -> dict[str, Any]:
    """Run one experiment given as its raw dict (in a worker process or a Ray task); its summary, or a one-line
    error. What the parallel runner of :func:`tune` sends out: the flows table stays in the worker."""
    from fctlab.config import experiment_from_dict
    from fctlab.results import jsonable
    from fctlab.simulation import simulate

    try:
        exp = experiment_from_dict(task["raw"], base_dir=task["base_dir"],
                                   source=Path(task["source"]) if task["source"] else None)
        return {"summary": jsonable(simulate(exp, threads=int(task.get("threads", 1))).summary)}
    except Exception as e:  # noqa: BLE001  (handed back as the trial's error)
        return {"error": " ".join(f"{type(e).__name__}: {e}".split())}


class _Runner:
    """Runs a list of experiments: one after another in this process (``workers`` 1, local), or at most
    ``workers`` at once in worker processes (local) or as Ray tasks (ray), which return each run's summary."""

    def __init__(self, executor: str, workers: int, address: str | None, threads: int):
        self.executor, self.workers, self.address, self.threads = executor, workers, address, threads
        self.pool: Any = None
        self.ray_started = False
        self.remote: Any = None

    @property
    def in_process(self) -> bool:
        return self.executor == "local" and self.workers == 1

    def __enter__(self) -> _Runner:
        import os

        if self.executor == "ray":
            from fctlab.sweep import import_ray, ray_connect

            self.ray_started = ray_connect(self.address, self.workers)
            self.remote = import_ray().remote(num_cpus=1)(run_summary)
        elif self.workers > 1:
            import multiprocessing
            from concurrent.futures import ProcessPoolExecutor

            from fctlab.sweep import worker_init

            self.pool = ProcessPoolExecutor(max_workers=self.workers, mp_context=multiprocessing.get_context("spawn"),
                                            initializer=worker_init, initargs=(os.getpid(),))
        return self

    def __exit__(self, *exc: object) -> None:
        if self.pool is not None:
            # interrupted: stop the workers now rather than wait for their runs (as a sweep does)
            alive = [] if exc[0] is None else list((getattr(self.pool, "_processes", None) or {}).values())
            self.pool.shutdown(wait=exc[0] is None, cancel_futures=True)
            for proc in alive:
                proc.terminate()
        if self.ray_started:
            from fctlab.sweep import import_ray

            import_ray().shutdown()

    def run(self, exps: Sequence[Experiment]) -> list[Any]:
        """Each run's Result (in process) or an object with its ``summary`` (in parallel), or the Exception or
        error text of a run that failed."""
        import types

        from fctlab.simulation import simulate

        if self.in_process:
            out: list[Any] = []
            for exp in exps:
                try:
                    out.append(simulate(exp, threads=self.threads))
                except Exception as e:  # noqa: BLE001  (the trial's error)
                    out.append(e)
            return out
        tasks = [{"raw": exp.raw, "base_dir": str(exp.base_dir), "source": str(exp.source) if exp.source else None,
                  "threads": 1} for exp in exps]
        if self.executor == "ray":
            ray = __import__("ray")
            refs = [self.remote.remote(t) for t in tasks]
            try:
                answers = ray.get(refs)
            except BaseException:
                for ref in refs:
                    ray.cancel(ref, force=True)
                raise
        else:
            answers = list(self.pool.map(run_summary, tasks))
        return [a["error"] if "error" in a else types.SimpleNamespace(summary=a["summary"], flows=None, experiment=exp)
                for a, exp in zip(answers, exps)]


def _score(setup: _Setup, exps: Sequence[Experiment], results: Sequence[Any], seconds: float) -> dict[str, Any]:
    """A trial's outcome from its runs: the aggregated objectives, or an error."""
    per_run: list[list[float]] = []
    unfinished = 0
    level_name = str(exps[0].engine["run"]["level"]) if exps else "-"
    base = {"wall_seconds": seconds, "level": level_name}
    for exp, result in zip(exps, results):
        if isinstance(result, (str, BaseException)):
            text = result if isinstance(result, str) else " ".join(f"{type(result).__name__}: {result}".split())
            return {**base, "error": f"engine (seed {exp.seed}): {text}", "unfinished": unfinished}
        unfinished += int(result.summary.get("unfinished_flows") or 0)
        row = []
        for o in setup.objectives:
            v = o.evaluate(result)
            if v is None or not math.isfinite(v):
                return {**base, "error": f"objective {o.text} is undefined for seed {exp.seed} (e.g. an empty size "
                        "bin)", "unfinished": unfinished}
            row.append(v)
        per_run.append(row)
    out: dict[str, Any] = {**base, "values": _aggregate(per_run, setup.robust, setup.maximize), "per_run": per_run,
                           "unfinished": unfinished}
    if unfinished and not setup.allow_unfinished:
        out["error"] = (f"{unfinished} flow(s) did not finish (the FCT statistics would leave them out); "
                        "allow_unfinished keeps such trials")
    return out


def _evaluate_many(setup: _Setup, runner: _Runner, knob_values: Sequence[Mapping[str, Any]],
                   level: str) -> list[dict[str, Any]]:
    """The outcomes of several trials, their runs all handed to the runner at once."""
    plans: list[list[Experiment] | str] = []
    for values in knob_values:
        try:
            plans.append(setup.runs(values, level))
        except ConfigError as e:  # a value the engine takes alone but not with the others
            plans.append(str(e))
    flat = [exp for p in plans if not isinstance(p, str) for exp in p]
    started = time.perf_counter()
    results = runner.run(flat)
    seconds = (time.perf_counter() - started) / max(1, len(knob_values))
    outcomes = []
    i = 0
    for p in plans:
        if isinstance(p, str):
            outcomes.append({"error": p, "wall_seconds": 0.0, "level": "-", "unfinished": 0})
            continue
        outcomes.append(_score(setup, p, results[i:i + len(p)], seconds))
        i += len(p)
    return outcomes


def tune(
    experiment: str | Path | Experiment,
    space: str | Path | Mapping[str, Any] | Space,
    objective: Union[str, Callable[[Any], float], Sequence[Union[str, Callable[[Any], float]]]],
    budget: int,
    *,
    study_dir: str | Path,
    overrides: Sequence[str] = (),
    seeds: Sequence[int] | None = None,
    loads: Sequence[float] | None = None,
    robust: str = "mean",
    maximize: bool = False,
    sampler: str = "tpe",
    sampler_seed: int = 0,
    screen: str | None = None,
    screen_flows: int | None = None,
    confirm: int = 0,
    allow_unfinished: bool = False,
    baseline: bool = False,
    workers: int = 1,
    executor: str = "local",
    address: str | None = None,
    threads: int = 1,
    best_run: bool = True,
    report: bool = True,
    progress: Callable[[TrialEvent], None] | None = None,
    on_start: Callable[[int, int], None] | None = None,
) -> TuneReport:
    """Tune the knobs of ``space`` on ``experiment`` until the study in ``study_dir`` holds ``budget`` trials.

    ``objective``: a statistic name (:data:`STATISTICS`), a weighted sum of them, a callable of a run's Result,
    or a list of these (a multi-objective study: its Pareto front is reported). Each trial runs every seed of
    ``seeds`` (default: the experiment's) at every load of ``loads`` (default: the experiment's) and takes the
    ``robust`` aggregate: ``mean``, or ``worst`` (the largest when minimising). ``screen`` ("flow") runs the
    trials at that level (``screen_flows``: with that many flows); ``confirm`` K then runs the K best at the
    packet level and reports how the two rankings agree. ``best_run`` runs the best knobs once into ``best/`` (and
the catalog); ``report`` writes report.html and its figures; ``baseline`` makes trial 0 the experiment's own
values of the knobs (PIAS's or QCLIMB's derived thresholds when it gives none), so that the search is measured
against them. ``workers`` > 1 runs that many trials at a time (their runs in worker processes, or as Ray
tasks with ``executor="ray"`` on the cluster at ``address`` or a local Ray): each round asks ``workers`` trials
of the sampler, runs them all, and tells their results in trial order, so a study is deterministic for a fixed
``workers`` (another number of workers proposes other trials). A callable objective needs the run's flows and
runs in this process only. Every input is validated first (ConfigError naming the
    key, nothing written). ``on_start(to_run, already_done)`` is called once before the first trial.
    """
    setup = _prepare(experiment, space, objective, overrides=overrides, seeds=seeds, loads=loads, robust=robust,
                     maximize=maximize, sampler=sampler, sampler_seed=sampler_seed, screen=screen,
                     screen_flows=screen_flows, confirm=confirm, allow_unfinished=allow_unfinished,
                     baseline=baseline)
    if isinstance(budget, bool) or not isinstance(budget, int) or budget < 1:
        raise ConfigError("--budget", f"must be an integer >= 1 (got {budget!r})")
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ConfigError("--workers", f"must be an integer >= 1 (got {workers!r})")
    from fctlab.sweep import check_executor

    check_executor(executor, address)
    if (workers > 1 or executor == "ray") and any(o.function is not None for o in setup.objectives):
        raise ConfigError("--workers", "a callable objective reads the run's flows, which stay in the worker: run it "
                          "with workers = 1 and the local executor")
    from fctlab import catalog
    from fctlab.results import check_output_dir

    study_dir = Path(study_dir)
    check_output_dir(study_dir, "--study-dir")
    catalog.check_not_being_written(study_dir)
    started = time.perf_counter()
    optuna = _optuna()
    with catalog.writer_lock(study_dir, wait=False):
        study, resumed = _open_study(optuna, setup, study_dir)
        counted = [t for t in study.get_trials(deepcopy=False) if t.state.is_finished() and not t.user_attrs.get("killed")]
        todo = max(0, budget - len(counted))
        if on_start is not None:
            on_start(todo, len(counted))
        ran = 0
        with _Runner(executor, workers, address, threads) as runner:
            while ran < todo:
                batch = []
                for _ in range(min(workers, todo - ran)):
                    k = len(counted) + ran + len(batch)
                    study.sampler = _sampler(setup.sampler, _trial_seed(setup.sampler_seed, k), len(setup.objectives))
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
                        trial = study.ask()
                    values = setup.space.suggest(trial)
                    trial.set_user_attr("knobs", json.dumps(values))
                    batch.append((trial, values))
                try:
                    outcomes = _evaluate_many(setup, runner, [v for _, v in batch], "screen")
                except BaseException:  # interrupted: not counted, their knobs run again first on resume
                    for trial, _ in batch:
                        trial.set_user_attr("killed", True)
                        study.tell(trial, state=optuna.trial.TrialState.FAIL)
                    for trial, _ in batch:
                        _enqueue(study, trial.params)
                    raise
                for (trial, _), outcome in zip(batch, outcomes):
                    _tell(optuna, study, trial, outcome)
                    ran += 1
                    if progress is not None:
                        best, best_number = _best(study, setup)
                        progress(TrialEvent(number=trial.number, done=ran, total=todo, values=outcome.get("values")
                                            if "error" not in outcome else None, best=best, best_number=best_number,
                                            wall_seconds=float(outcome["wall_seconds"]), level=str(outcome["level"]),
                                            error=outcome.get("error")))
            agreement = None
            confirmed: dict[str, Any] = {}
            if confirm:
                confirmed, agreement = _confirm(study, setup, study_dir, confirm, runner, progress)
        out = _write_outputs(study, setup, study_dir, confirmed, agreement, best_run=best_run, report=report,
                             threads=threads)
    out.ran, out.resumed = ran, len(counted)
    out.wall_seconds = time.perf_counter() - started
    return out


def _prepare(experiment: Any, space: Any, objective: Any, *, overrides: Sequence[str], seeds: Any, loads: Any,
             robust: str, maximize: bool, sampler: str, sampler_seed: int, screen: str | None,
             screen_flows: int | None, confirm: int, allow_unfinished: bool, baseline: bool = False) -> _Setup:
    from fctlab.config import load_experiment
    from fctlab.simulation import build_flows, check_flows

    if isinstance(experiment, Experiment):
        base = experiment.with_overrides(list(overrides)) if overrides else experiment
    else:
        base = load_experiment(experiment, overrides=overrides)
    if isinstance(space, Space):
        sp = space
    elif isinstance(space, Mapping):
        sp = space_from_dict(space, base)
    else:
        sp = load_space(space, base)
    objs = list(objective) if isinstance(objective, (list, tuple)) else [objective]
    if not objs:
        raise ConfigError("--objective", "give at least one objective")
    objectives = tuple(parse_objective(o) for o in objs)
    if len({o.text for o in objectives}) != len(objectives):
        raise ConfigError("--objective", "an objective is given twice")
    if robust not in ("mean", "worst"):
        raise ConfigError("--robust", f"must be mean or worst (got {robust!r})")
    if sampler not in SAMPLERS:
        raise ConfigError("--sampler", f"must be one of {', '.join(SAMPLERS)} (got {sampler!r})")
    if sampler == "cmaes" and len(objectives) > 1:
        raise ConfigError("--sampler", "cmaes optimises one objective; use tpe or random for two")
    if sampler == "cmaes":
        try:
            import cmaes  # noqa: F401
        except ImportError:
            raise ConfigError("--sampler", "cmaes needs the cmaes package: pip install 'fctlab[tune]'") from None
    if isinstance(sampler_seed, bool) or not isinstance(sampler_seed, int) or sampler_seed < 0:
        raise ConfigError("--sampler-seed", f"must be an integer >= 0 (got {sampler_seed!r})")
    if screen not in (None, "flow", "packet"):
        raise ConfigError("--screen", f"must be flow (or packet) (got {screen!r})")
    if screen_flows is not None and (isinstance(screen_flows, bool) or not isinstance(screen_flows, int)
                                     or screen_flows < 1):
        raise ConfigError("--screen-flows", f"must be an integer >= 1 (got {screen_flows!r})")
    if isinstance(confirm, bool) or not isinstance(confirm, int) or confirm < 0:
        raise ConfigError("--confirm", f"must be an integer >= 0 (got {confirm!r})")
    if confirm and screen is None and screen_flows is None:
        raise ConfigError("--confirm", "confirms a screen: give --screen flow (or --screen-flows N) too")
    if confirm and len(objectives) > 1:
        raise ConfigError("--confirm", "ranks trials by one objective: give one --objective")
    if confirm == 1:
        raise ConfigError("--confirm", "a rank agreement needs at least 2 confirmed trials")
    own = {"workload.load": "--loads" if loads else None, "run.level": "--screen" if screen or confirm else None,
           "workload.flows": "--screen-flows" if screen_flows is not None else None}
    for knob in sp.knobs:
        if own.get(knob.key):
            raise ConfigError(knob.key, f"is set by {own[knob.key]} for every trial: leave it out of the space or "
                              f"drop {own[knob.key]}")
    seed_list = tuple(seeds) if seeds else (base.seed,)
    for s in seed_list:
        if isinstance(s, bool) or not isinstance(s, int) or not 0 <= s < 2**64:
            raise ConfigError("--seeds", f"must be integers >= 0 (got {s!r})")
    if len(set(seed_list)) != len(seed_list):
        raise ConfigError("--seeds", "a seed is listed twice")
    if loads:
        if base.workload.load is None:
            raise ConfigError("--loads", "the experiment's workload has no load to vary (a trace or a fixed pattern)")
        load_list: tuple[float | None, ...] = tuple(float(x) for x in loads)
        if len(set(load_list)) != len(load_list):
            raise ConfigError("--loads", "a load is listed twice")
    else:
        load_list = (None,)
    setup = _Setup(base=base, space=sp, objectives=objectives, seeds=seed_list, loads=load_list, robust=robust,
                   maximize=maximize, sampler=sampler, sampler_seed=sampler_seed, screen=screen,
                   screen_flows=screen_flows, allow_unfinished=allow_unfinished, baseline=baseline)
    if baseline:
        for knob in sp.knobs:
            _, value = _current(base, knob.key)
            if knob.key == "scheme.thresholds_bytes" and base.derived_thresholds is not None:
                value = list(base.derived_thresholds["thresholds_bytes"])
            if knob.params_of(value) is None:
                raise ConfigError(knob.key, f"--baseline: the experiment's value {value!r} is not in the space's range")
    # every run a trial makes, at the ends of each knob's range: validated (and its flows built) before anything
    # runs, so that a load, seed or level override the experiment refuses is named now
    levels = ["screen", "packet"] if confirm else ["screen"]
    example = {k.key: k.examples()[0] for k in sp.knobs}
    for level in levels:
        for exp in setup.runs(example, level):
            check_flows(exp, build_flows(exp))
    return setup


def _open_study(optuna: Any, setup: _Setup, study_dir: Path) -> tuple[Any, int]:
    """Create the study, or load it and check it is one of the same setup; trials a killed process left running
    are marked failed and killed, and their knobs queued to run again first."""
    storage = optuna.storages.RDBStorage(f"sqlite:///{(study_dir / STORAGE_FILE).resolve()}")
    directions = ["maximize" if setup.maximize else "minimize"] * len(setup.objectives)
    fingerprint = json.loads(json.dumps(setup.fingerprint(), default=str))
    study = optuna.create_study(storage=storage, study_name=STUDY_NAME, directions=directions, load_if_exists=True)
    stored = study.user_attrs.get("setup")
    if stored is None:
        study.set_user_attr("setup", fingerprint)
        if setup.baseline:  # the experiment's own knobs are trial 0
            params: dict[str, Any] = {}
            for knob in setup.space.knobs:
                _, value = _current(setup.base, knob.key)
                if knob.key == "scheme.thresholds_bytes" and setup.base.derived_thresholds is not None:
                    value = list(setup.base.derived_thresholds["thresholds_bytes"])
                params.update(knob.params_of(value) or {})
            _enqueue(study, params)
    elif stored != fingerprint:
        from fctlab.sweep import first_difference

        raise ConfigError("--study-dir", f"{study_dir} holds a study of another setup "
                          f"({first_difference(stored, fingerprint)}); use another folder")
    stale = [t for t in study.get_trials(deepcopy=False)
             if t.state in (optuna.trial.TrialState.RUNNING, optuna.trial.TrialState.WAITING)]
    for t in stale:
        if t.state == optuna.trial.TrialState.RUNNING:
            storage.set_trial_user_attr(t._trial_id, "killed", True)
            storage.set_trial_state_values(t._trial_id, optuna.trial.TrialState.FAIL)
            _enqueue(study, t.params)
    return study, len(stale)


def _tell(optuna: Any, study: Any, trial: Any, outcome: Mapping[str, Any]) -> None:
    """Record a trial's outcome: its objectives, or failed with its error."""
    for key in ("wall_seconds", "level", "unfinished"):
        trial.set_user_attr(key, outcome[key])
    if "per_run" in outcome:
        trial.set_user_attr("per_run", outcome["per_run"])
    if "error" in outcome:
        trial.set_user_attr("error", outcome["error"])
        if "values" in outcome:
            trial.set_user_attr("values_if_kept", outcome["values"])
        study.tell(trial, state=optuna.trial.TrialState.FAIL)
    else:
        study.tell(trial, list(outcome["values"]))


def _enqueue(study: Any, params: Mapping[str, Any]) -> None:
    """Queue a trial with these parameters to be the next one asked for."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        study.enqueue_trial(dict(params), skip_if_exists=False)


def _best(study: Any, setup: _Setup) -> tuple[list[float] | None, int | None]:
    done = [t for t in study.get_trials(deepcopy=False) if t.state.name == "COMPLETE"]
    if not done:
        return None, None
    # one objective: the best value (the earliest trial on a tie); two: the end of the Pareto front that is
    # best on the first objective (the best on the first, the second breaking a tie)
    sign = -1.0 if setup.maximize else 1.0
    t = min(done, key=lambda t: (*(sign * v for v in t.values), t.number))
    return list(t.values), t.number


def _confirm(study: Any, setup: _Setup, study_dir: Path, k: int, runner: _Runner,
             progress: Callable[[TrialEvent], None] | None) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """Run the ``k`` best screened trials at the packet level (once each: results kept in confirm.json) and
    measure how the screen's ranking agrees with the packet level's."""
    from fctlab.results import write_json

    path = study_dir / CONFIRM_FILE
    try:
        stored = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    except (OSError, ValueError):
        stored = {}
    done = [t for t in study.get_trials(deepcopy=False) if t.state.name == "COMPLETE"]
    sign = -1.0 if setup.maximize else 1.0
    ranked = sorted(done, key=lambda t: (sign * t.values[0], t.number))[:k]
    todo = [t for t in ranked if str(t.number) not in stored
            or stored[str(t.number)].get("knobs") != t.user_attrs.get("knobs")]
    for i, t in enumerate(todo):
        values = json.loads(t.user_attrs["knobs"])
        outcome = _evaluate_many(setup, runner, [values], "packet")[0]
        stored[str(t.number)] = {"knobs": t.user_attrs["knobs"], "screen": t.values[0],
                                 "packet": outcome.get("values", [None])[0] if "error" not in outcome else None,
                                 "error": outcome.get("error"), "wall_seconds": outcome["wall_seconds"],
                                 "unfinished": outcome["unfinished"]}
        write_json(path, stored)
        if progress is not None:
            progress(TrialEvent(number=t.number, done=i + 1, total=len(todo), values=outcome.get("values"),
                                best=None, best_number=None, wall_seconds=float(outcome["wall_seconds"]),
                                level="packet (confirm)", error=outcome.get("error")))
    confirmed = {str(t.number): stored[str(t.number)] for t in ranked}
    pairs = [(v["screen"], v["packet"], int(n)) for n, v in confirmed.items() if v.get("packet") is not None]
    agreement = None
    if len(pairs) >= 2:
        from scipy import stats

        screen = [p[0] for p in pairs]
        packet = [p[1] for p in pairs]
        rho = stats.spearmanr(screen, packet).statistic
        tau = stats.kendalltau(screen, packet).statistic
        best_screen = min(pairs, key=lambda p: (sign * p[0], p[2]))[2]
        best_packet = min(pairs, key=lambda p: (sign * p[1], p[2]))[2]
        agreement = {"confirmed": len(pairs), "spearman": _finite(rho), "kendall": _finite(tau),
                     "screen_best_trial": best_screen, "packet_best_trial": best_packet,
                     "screen_best_is_packet_best": best_screen == best_packet}
    return confirmed, agreement


def _finite(v: Any) -> float | None:
    v = float(v)
    return v if math.isfinite(v) else None


# --------------------------------------------------------------------------------------------------------------
# Outputs


def trials_table(study: Any, setup: _Setup, confirmed: Mapping[str, Any] | None = None) -> Any:
    """One row per trial (and one more per packet-level confirmation): number, state, level, the objective(s),
    each knob's value (a list for an increasing knob), wall time, unfinished flows, error."""
    import pandas as pd

    names = ["objective"] if len(setup.objectives) == 1 else [f"objective_{i}" for i in range(len(setup.objectives))]
    rows = []
    for t in study.get_trials(deepcopy=False):
        if t.user_attrs.get("killed"):
            continue
        knobs = json.loads(t.user_attrs.get("knobs", "{}"))
        if not t.state.is_finished():
            continue
        row: dict[str, Any] = {"trial": t.number, "stage": "search", "state": t.state.name.lower(),
                               "level": t.user_attrs.get("level")}
        for i, n in enumerate(names):
            row[n] = t.values[i] if t.values is not None else None
        for knob in setup.space.knobs:
            row[knob.key] = knobs.get(knob.key)
        row.update(wall_seconds=t.user_attrs.get("wall_seconds"), unfinished=t.user_attrs.get("unfinished"),
                   error=t.user_attrs.get("error"))
        rows.append(row)
        c = (confirmed or {}).get(str(t.number))
        if c is not None:
            crow = dict(row, stage="confirm", level="packet", state="complete" if c.get("packet") is not None else "fail",
                        wall_seconds=c["wall_seconds"], unfinished=c["unfinished"], error=c.get("error"))
            crow[names[0]] = c.get("packet")
            rows.append(crow)
    columns = ["trial", "stage", "state", "level", *names, *(k.key for k in setup.space.knobs), "wall_seconds",
               "unfinished", "error"]
    df = pd.DataFrame(rows, columns=columns)
    for knob in setup.space.knobs:
        if knob.kind == "categorical" and knob.key in df and df[knob.key].map(type).nunique() > 1:
            df[knob.key] = df[knob.key].map(json.dumps)
    return df


def _write_outputs(study: Any, setup: _Setup, study_dir: Path, confirmed: Mapping[str, Any],
                   agreement: dict[str, Any] | None, *, best_run: bool, report: bool, threads: int) -> TuneReport:
    from fctlab.results import atomic_write, write_json

    df = trials_table(study, setup, confirmed)
    files: dict[str, Path] = {}
    atomic_write(study_dir / TRIALS_FILE, lambda f: df.to_parquet(f, index=False))
    files["trials"] = study_dir / TRIALS_FILE
    best_values, best_number = _best(study, setup)
    if confirmed and agreement is not None:
        best_number = agreement["packet_best_trial"]
        best_values = [confirmed[str(best_number)]["packet"]]
    best: dict[str, Any] | None = None
    if best_number is not None:
        best = json.loads(study.get_trials(deepcopy=False)[best_number].user_attrs["knobs"])
        level = "packet" if confirmed else None
        text = best_toml(setup, best, best_number, best_values, level)
        atomic_write(study_dir / BEST_FILE, lambda f: f.write(text.encode("utf-8")))
        files["best"] = study_dir / BEST_FILE
        if best_run:
            run_dir = _run_best(setup, best, best_number, study_dir, level, threads)
            if run_dir is not None:
                files["best_run"] = run_dir
    summary = {"best_trial": best_number, "best": best, "best_values": best_values, "agreement": agreement,
               "objectives": [o.text for o in setup.objectives], "trials": int((df["stage"] == "search").sum())}
    write_json(study_dir / "tune.json", summary)
    files["summary"] = study_dir / "tune.json"
    if report:
        files.update(write_report(df, setup, study_dir, best_number, agreement))
    return TuneReport(study_dir=study_dir, ran=0, resumed=0, best=best, best_values=best_values,
                      best_number=best_number, trials=df, agreement=agreement, files=files)


def best_toml(setup: _Setup, best: Mapping[str, Any], number: int, values: Sequence[float] | None,
              level: str | None) -> str:
    """The experiment as given (its file's content with the --set overrides applied) with the best knobs."""
    from fctlab.config import deep_copy, set_key_path

    raw = deep_copy(setup.base.raw)
    for key, value in best.items():
        set_key_path(raw, key.split("."), value, key)
    if level is not None:
        set_key_path(raw, ["run", "level"], level, "run.level")
    objectives = ", ".join(o.text for o in setup.objectives)
    shown = ", ".join(f"{v:.6g}" for v in values) if values else "-"
    header = [f"fctlab tune: trial {number}, the best of the study ({objectives} = {shown}"
              f"{', confirmed at the packet level' if level else ''})",
              f"run it with: fctlab run {BEST_FILE} --out DIR"]
    return toml_document(raw, header)


def _run_best(setup: _Setup, best: Mapping[str, Any], number: int, study_dir: Path, level: str | None,
              threads: int) -> Path | None:
    """Run the best knobs once (first seed and load, at the packet level when confirmed, else at the study's
    level) into ``best/`` and record it in the study dir's catalog; skipped when ``best/`` already holds it."""
    from fctlab import catalog
    from fctlab.results import write_results
    from fctlab.simulation import simulate
    from fctlab.sweep import run_state

    exp = setup.runs(best, "packet" if level == "packet" else "screen")[0]
    run_dir = study_dir / BEST_RUN_DIR
    state, _ = run_state(run_dir, exp.to_dict())
    if state != "done":
        result = simulate(exp, threads=threads)
        write_results(result, run_dir)
    catalog.upsert_unlocked(study_dir, [(BEST_RUN_DIR, run_dir)])
    return run_dir


def _pareto(points: list[tuple[float, float]], maximize: bool) -> list[int]:
    sign = -1.0 if maximize else 1.0
    idx = []
    for i, (a, b) in enumerate(points):
        dominated = any(sign * c <= sign * a and sign * d <= sign * b and (c, d) != (a, b) for c, d in points)
        if not dominated:
            idx.append(i)
    return sorted(idx, key=lambda i: points[i][0])


def write_report(df: Any, setup: _Setup, study_dir: Path, best_number: int | None,
                 agreement: dict[str, Any] | None) -> dict[str, Path]:
    """report.html with its figures: the objective against each knob (one panel per element of an increasing
    knob), and the Pareto front when the study has two objectives."""
    import html

    from matplotlib.figure import Figure

    import numpy as np

    files: dict[str, Path] = {}
    screen = df[(df["state"] == "complete") & (df["stage"] == "search")].reset_index(drop=True)
    obj_cols = [c for c in df.columns if c.startswith("objective")]
    kinds = {k.key: k for k in setup.space.knobs}
    panels: list[tuple[str, Knob, list[float]]] = []
    for knob in setup.space.knobs:
        if knob.kind == "increasing":
            for i in range(knob.length):
                panels.append((f"{knob.key}[{i}]", knob, [v[i] if isinstance(v, (list, tuple, np.ndarray)) else
                                                          float("nan") for v in screen[knob.key]]))
        elif knob.kind == "categorical":
            panels.append((knob.key, knob, [knob.choices.index(v) if v in knob.choices else float("nan")
                                            for v in screen[knob.key]]))
        else:
            panels.append((knob.key, knob, [float(v) for v in screen[knob.key]]))
    del kinds
    figures = []
    for j, col in enumerate(obj_cols):
        n = len(panels)
        cols = min(n, 3)
        rows = (n + cols - 1) // cols
        fig = Figure(figsize=(4.2 * cols, 3.2 * rows))
        fig.subplots_adjust(left=0.08, right=0.98, bottom=0.16, top=0.88, wspace=0.3, hspace=0.45)
        best_rows = list(np.flatnonzero(screen["trial"].to_numpy() == best_number)) if best_number is not None else []
        for p, (name, knob, xs) in enumerate(panels):
            ax = fig.add_subplot(rows, cols, p + 1)
            ax.scatter(xs, screen[col], s=14, c=screen["trial"], cmap="viridis")
            if best_rows:
                ax.scatter([xs[best_rows[0]]], [screen[col][best_rows[0]]], s=90, marker="*", c="red")
            ax.set_xlabel(name)
            ax.set_ylabel(setup.objectives[j].text)
            if knob.kind in ("log-int", "log-float", "increasing"):
                ax.set_xscale("log")
            if knob.kind == "categorical":
                ax.set_xticks(range(len(knob.choices)), [str(c) for c in knob.choices])
        fig.suptitle(f"{setup.base.name}: objective against each knob (colour: trial number, star: best)")
        path = study_dir / f"knobs{'' if len(obj_cols) == 1 else f'_{j}'}.png"
        fig.savefig(path, dpi=90)
        figures.append(path.name)
        files[path.stem] = path
    if len(obj_cols) == 2 and len(screen):
        pts = list(zip(screen[obj_cols[0]], screen[obj_cols[1]]))
        front = _pareto(pts, setup.maximize)
        fig = Figure(figsize=(5.5, 4.2))
        fig.subplots_adjust(left=0.15, right=0.97, bottom=0.13, top=0.95)
        ax = fig.add_subplot(1, 1, 1)
        ax.scatter([p[0] for p in pts], [p[1] for p in pts], s=14, c="0.6", label="trials")
        ax.plot([pts[i][0] for i in front], [pts[i][1] for i in front], "o-", c="C3", label="Pareto front")
        ax.set_xlabel(setup.objectives[0].text)
        ax.set_ylabel(setup.objectives[1].text)
        ax.legend()
        path = study_dir / "pareto.png"
        fig.savefig(path, dpi=90)
        figures.append(path.name)
        files["pareto"] = path
    top = df.copy()
    if obj_cols:
        top = top.sort_values(obj_cols[0], ascending=not setup.maximize, na_position="last").head(20)
    parts = [
        "<!doctype html><html><head><meta charset='utf-8'><title>fctlab tune: "
        f"{html.escape(setup.base.name)}</title><style>body{{font-family:sans-serif;max-width:70em;margin:auto}}"
        "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:2px 6px;font-size:90%}</style></head>",
        f"<body><h1>fctlab tune: {html.escape(setup.base.name)}</h1>",
        f"<p>Objective{'s' if len(setup.objectives) > 1 else ''}: "
        f"{html.escape('; '.join(o.text for o in setup.objectives))} "
        f"({'maximised' if setup.maximize else 'minimised'}; {setup.robust} over seeds {list(setup.seeds)}"
        f"{'' if setup.loads == (None,) else f' and loads {list(setup.loads)}'}); sampler {setup.sampler}, "
        f"seed {setup.sampler_seed}; {int((df['stage'] == 'search').sum())} trials."
        f"{f' Best: trial {best_number}.' if best_number is not None else ''}</p>",
    ]
    if agreement is not None:
        parts.append(
            f"<p>Screen against packet level over the {agreement['confirmed']} confirmed trials: Spearman "
            f"{_fmt(agreement['spearman'])}, Kendall {_fmt(agreement['kendall'])}; the screen's best (trial "
            f"{agreement['screen_best_trial']}) {'is' if agreement['screen_best_is_packet_best'] else 'is not'} "
            f"the packet level's best (trial {agreement['packet_best_trial']}).</p>")
    for name in figures:
        parts.append(f"<p><img src='{html.escape(name)}' style='max-width:100%'></p>")
    parts.append("<h2>Best trials</h2>" + top.to_html(index=False, na_rep="-", float_format=lambda v: f"{v:.6g}"))
    parts.append("</body></html>")
    text = "\n".join(parts)
    from fctlab.results import atomic_write

    atomic_write(study_dir / REPORT_FILE, lambda f: f.write(text.encode("utf-8")))
    files["report"] = study_dir / REPORT_FILE
    return files


def _fmt(v: float | None) -> str:
    return "-" if v is None else f"{v:.3f}"
