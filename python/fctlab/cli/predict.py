"""The ``fctlab predict`` commands (QCLIMB's flow-size bounds, paper §2.3 and App. B): ``generate`` an application
trace, ``train`` a quantile regression forest on its first 80%, ``eval`` it (Table 2, O1-O5, Fig. 1) and
``annotate`` flows with their bounds for the engine. ``register(app)`` adds the group to a Typer app.

As elsewhere in fctlab, bad input prints one line, ``error: ...``, naming the argument, and exits with code 2
having written nothing; numbers are taken as text and checked here so that a malformed one gets that line too.
Exit code 1 means the file system failed after the input was checked.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from fctlab.cli._common import EXIT_FAILED, echo, fail  # the one-line errors every command prints


predict_app = typer.Typer(
    no_args_is_help=True,
    help="Flow-size bounds for QCLIMB: generate application traces, train and evaluate the quantile regression "
    "forest, annotate traces with bounds.",
)


def register(app: typer.Typer) -> None:
    """Add the ``predict`` command group to a Typer app (the ``fctlab`` CLI calls this)."""
    app.add_typer(predict_app, name="predict")


class _Bad(Exception):
    """Bad input: the message starts with the argument's name."""


def _int(name: str, text: str, minimum: int, maximum: int | None = None) -> int:
    try:
        v = int(text.strip().replace("_", ""))
    except ValueError:
        raise _Bad(f"{name}: must be an integer, got {text!r}") from None
    if v < minimum or (maximum is not None and v > maximum):
        hi = f" and <= {maximum:,}" if maximum is not None else ""
        raise _Bad(f"{name}: must be >= {minimum}{hi}, got {v}")
    return v


def _float(name: str, text: str, lo: float, hi: float, *, open_lo: bool = False, open_hi: bool = False) -> float:
    try:
        v = float(text)
    except ValueError:
        raise _Bad(f"{name}: must be a number, got {text!r}") from None
    if not (lo < v if open_lo else lo <= v) or not (v < hi if open_hi else v <= hi):
        raise _Bad(f"{name}: must be within {'(' if open_lo else '['}{lo:g}, {hi:g}{')' if open_hi else ']'}, "
                   f"got {text}")
    return v


def _trace_out(name: str, path: Path) -> None:
    if path.suffix.lower() not in (".csv", ".parquet"):
        raise _Bad(f"{name}: {path} must end in .csv or .parquet")
    _parent(name, path)


def _parent(name: str, path: Path) -> None:
    if path.exists() and path.is_dir():
        raise _Bad(f"{name}: {path} is a directory")
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.is_dir():
        raise _Bad(f"{name}: directory {parent} does not exist")


def _features(text: str) -> list[str] | str:
    from fctlab.traces import FEATURE_SETS

    if text in FEATURE_SETS:
        return text
    cols = [c.strip() for c in text.split(",") if c.strip()]
    if not cols:
        raise _Bad(f"--features: give {' or '.join(FEATURE_SETS)} or a comma-separated list of columns")
    return cols


def _load_trace(path: Path, time_unit_ns: float = 1e9) -> Any:
    from fctlab.traces import TraceError, load_trace

    try:
        return load_trace(path, time_unit_ns=time_unit_ns)
    except TraceError as e:
        raise _Bad(f"TRACE: {e}") from None


def _load_model(path: Path) -> Any:
    from fctlab.predict import Model, PredictError

    try:
        model = Model.load(path)
    except PredictError as e:
        raise _Bad(f"MODEL: {e}") from None
    for name, (saved, now) in model.version_mismatch().items():
        sys.stderr.write(f"warning: {path} was saved with {name} {saved}, this is {now}\n")
    return model


def _part(model: Any, trace: Any, part: str) -> Any:
    from fctlab.traces import split_by_time

    if part == "all":
        return trace
    if part != "test":
        raise _Bad(f"--part: must be test or all, got {part!r}")
    if len(trace) < 2:
        raise _Bad(f"TRACE: {len(trace)} flow(s); the test part needs at least 2")
    return split_by_time(trace, model.train_fraction if 0 < model.train_fraction < 1 else 0.8)[1]


def _check_features(model: Any, flows: Any) -> None:
    missing = [c for c in model.features if c not in flows.columns]
    if missing:
        raise _Bad(f"TRACE: has no column {missing[0]!r}, a feature of the model ({', '.join(model.features)})")


_PartOption = Annotated[
    str, typer.Option("--part", help="Which flows: test (after the model's training fraction, by time) or all.")
]


@predict_app.command()
def generate(
    profile: Annotated[str, typer.Option("--profile", help="kmeans, pagerank, sgd or tensorflow.")] = "kmeans",
    flows: Annotated[str, typer.Option("--flows", help="Number of flows.")] = "100000",
    seed: Annotated[str, typer.Option("--seed", help="Random seed (same seed, same trace).")] = "1",
    hosts: Annotated[str, typer.Option("--hosts", help="Machines in the cluster.")] = "16",
    out: Annotated[Optional[Path], typer.Option("--out", "-o", help="Trace file (.parquet or .csv).")] = None,
) -> None:
    """Generate an application trace: OUT (src, dst, size_bytes, start_ns, for the engine) and OUT's .features
    side file (5-tuple, features, hidden job state, for the predictor)."""
    from fctlab.traces import PROFILES, TraceError, features_path, generate as gen, profile_stats, save_trace

    try:
        if profile not in PROFILES:
            raise _Bad(f"--profile: unknown {profile!r}; known: {', '.join(PROFILES)}")
        n = _int("--flows", flows, 1, 50_000_000)
        s = _int("--seed", seed, 0)
        h = _int("--hosts", hosts, 5, 65_535)
        if out is None:
            raise _Bad("--out: missing: give the trace file to write (.parquet or .csv)")
        _trace_out("--out", out)
        df = gen(profile, n, s, hosts=h)
    except _Bad as e:
        raise fail(str(e)) from None
    except TraceError as e:
        raise fail(str(e)) from None
    try:
        save_trace(df, out)
    except OSError as e:
        raise fail(f"writing {out}: {e}", EXIT_FAILED) from None
    st = profile_stats(df)
    target, share = PROFILES[profile].target
    got = st["share_lt_100b"] if target < 100 else st["share_le_100kb"]
    what = "< 100 B" if target < 100 else "<= 100 KB"
    echo(f"{profile}: {len(df):,} flows on {h} hosts, seed {s}, {df['job'].nunique()} jobs; "
         f"{got:.1%} of flows {what} (profile aims at {share:.0%})")
    echo(f"sizes: median {st['median_bytes']:,.0f} B, mean {st['mean_bytes']:,.0f} B, p99 {st['p99_bytes']:,.0f} B, "
         f"max {st['max_bytes']:,.0f} B; the largest 5% of flows carry {st['bytes_in_top_5pct']:.1%} of the bytes")
    echo(f"trace: {out}; features: {features_path(out)}")


@predict_app.command()
def train(
    trace: Annotated[Path, typer.Argument(help="Trace: a generated one, a FLUX CSV (or folder), or an fctlab trace.")],
    out: Annotated[Optional[Path], typer.Option("--out", "-o", help="Model file to write (joblib).")] = None,
    depth: Annotated[str, typer.Option("--depth", help="Maximum tree depth d.")] = "10",
    beta: Annotated[str, typer.Option("--beta", help="Prediction interval beta: bounds [Q(1-b)/2, Q(1+b)/2].")] = "1",
    trees: Annotated[str, typer.Option("--trees", help="Trees in the forest.")] = "100",
    seed: Annotated[str, typer.Option("--seed", help="Random seed of the forest.")] = "0",
    target: Annotated[str, typer.Option("--target", help="Grow trees on log sizes (log) or bytes.")] = "log",
    features: Annotated[
        str, typer.Option("--features", help="default, paper (adds start time) or a comma-separated column list.")
    ] = "default",
    train_fraction: Annotated[
        str, typer.Option("--train-fraction", help="Share of the flows, by start time, to train on.")
    ] = "0.8",
    time_unit_ns: Annotated[
        str, typer.Option("--time-unit-ns", help="FLUX traces only: nanoseconds per unit of their time column.")
    ] = "1e9",
) -> None:
    """Train the bounds predictor on the first 80% (by start time) of TRACE and save it with its metadata."""
    from fctlab.predict import TARGETS, PredictError
    from fctlab.predict import train as fit_split

    try:
        if out is None:
            raise _Bad("--out: missing: give the model file to write")
        _parent("--out", out)
        d = _int("--depth", depth, 1, 64)
        b = _float("--beta", beta, 0.0, 1.0)
        t = _int("--trees", trees, 1, 10_000)
        s = _int("--seed", seed, 0)
        if target not in TARGETS:
            raise _Bad(f"--target: must be one of {', '.join(TARGETS)}, got {target!r}")
        frac = _float("--train-fraction", train_fraction, 0.0, 1.0, open_lo=True, open_hi=True)
        unit = _float("--time-unit-ns", time_unit_ns, 0.0, float("inf"), open_lo=True, open_hi=True)
        feats = _features(features)
        flows = _load_trace(trace, unit)
        if isinstance(feats, list):
            missing = [c for c in feats if c not in flows.columns]
            if missing:
                raise _Bad(f"--features: TRACE has no column {missing[0]!r}")
        source = {"trace": str(trace), "flows": len(flows), "profile": flows.attrs.get("profile"),
                  "seed": flows.attrs.get("seed"), "format": flows.attrs.get("format", "fctlab")}
        model, test = fit_split(flows, train_fraction=frac, depth=d, beta=b, trees=t, seed=s, target=target,
                                features=feats, n_jobs=-1, source=source)
    except _Bad as e:
        raise fail(str(e)) from None
    except PredictError as e:
        raise fail(f"TRACE: {e}") from None
    try:
        model.save(out)
    except OSError as e:
        raise fail(f"writing {out}: {e}", EXIT_FAILED) from None
    echo(f"trained on {model.n_train:,} of {len(flows):,} flows (the first {frac:.0%} by start time) in "
         f"{model.fit_seconds:.1f} s: {t} trees of depth <= {d} on {target} sizes, beta {b:g}")
    echo(f"features: {', '.join(model.features)}")
    echo(f"model: {out} ({len(test):,} test flows follow the training part; `fctlab predict eval {out} {trace}`)")


@predict_app.command("eval")
def eval_(
    model: Annotated[Path, typer.Argument(help="Model file from `fctlab predict train`.")],
    trace: Annotated[Path, typer.Argument(help="Trace to evaluate on.")],
    json_out: Annotated[Optional[Path], typer.Option("--json", help="Also write the report as JSON here.")] = None,
    beta: Annotated[Optional[str], typer.Option("--beta", help="Override the model's beta.")] = None,
    part: _PartOption = "test",
    time_unit_ns: Annotated[str, typer.Option("--time-unit-ns", help="FLUX traces only.")] = "1e9",
) -> None:
    """Evaluate the bounds on TRACE's test flows: share of bounded flows (Table 2), O1-O5 per size bin, the point
    estimate's error (Fig. 1) and the inference time per flow."""
    from fctlab.predict import PredictError, evaluate, format_report
    from fctlab.results import write_json

    try:
        if json_out is not None:
            if json_out.suffix.lower() != ".json":
                raise _Bad(f"--json: {json_out} must end in .json")
            _parent("--json", json_out)
        b = None if beta is None else _float("--beta", beta, 0.0, 1.0)
        unit = _float("--time-unit-ns", time_unit_ns, 0.0, float("inf"), open_lo=True, open_hi=True)
        m = _load_model(model)
        flows = _load_trace(trace, unit)
        _check_features(m, flows)
        test = _part(m, flows, part)
        report = evaluate(m, test, beta=b)
    except _Bad as e:
        raise fail(str(e)) from None
    except PredictError as e:
        raise fail(f"TRACE: {e}") from None
    report["trace"] = str(trace)
    report["part"] = part
    echo(format_report(report))
    if json_out is not None:
        try:
            write_json(json_out, report)
        except OSError as e:
            raise fail(f"writing {json_out}: {e}", EXIT_FAILED) from None
        echo(f"report: {json_out}")


@predict_app.command()
def annotate(
    model: Annotated[Path, typer.Argument(help="Model file from `fctlab predict train`.")],
    trace: Annotated[Path, typer.Argument(help="Trace whose flows get bounds.")],
    out: Annotated[Optional[Path], typer.Option("--out", "-o", help="Trace file to write (.csv or .parquet).")] = None,
    part: _PartOption = "test",
    time_unit_ns: Annotated[str, typer.Option("--time-unit-ns", help="FLUX traces only.")] = "1e9",
) -> None:
    """Write TRACE's test flows as an fctlab trace with lower_bytes, upper_bytes and estimate_bytes columns (for
    pFabric by estimate and QCLIMB)."""
    from fctlab.predict import PredictError
    from fctlab.predict import annotate as add_bounds
    from fctlab.traces import write_table

    try:
        if out is None:
            raise _Bad("--out: missing: give the trace file to write (.csv or .parquet)")
        _trace_out("--out", out)
        unit = _float("--time-unit-ns", time_unit_ns, 0.0, float("inf"), open_lo=True, open_hi=True)
        m = _load_model(model)
        flows = _load_trace(trace, unit)
        _check_features(m, flows)
        rows = _part(m, flows, part)
        annotated = add_bounds(m, rows)
    except _Bad as e:
        raise fail(str(e)) from None
    except PredictError as e:
        raise fail(f"TRACE: {e}") from None
    try:
        write_table(annotated, out)
    except OSError as e:
        raise fail(f"writing {out}: {e}", EXIT_FAILED) from None
    bounded = ((annotated["size_bytes"] >= annotated["lower_bytes"])
               & (annotated["size_bytes"] <= annotated["upper_bytes"])).mean()
    echo(f"{len(annotated):,} flows with bounds ({bounded:.3%} within them) written to {out}")
