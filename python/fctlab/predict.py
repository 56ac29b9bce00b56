"""Flow-size bounds from a quantile regression forest: QCLIMB's predictor (paper §2.3, §4.1 and Appendix B).

A random forest of ``trees`` trees of depth at most ``depth`` (default 10, §5.1) is fitted on the first 80% of a
trace by start time (``traces.split_by_time``). For a new flow with features x, each tree drops it into a leaf l;
N_l is the set of training flows falling in l (those of the tree's own bootstrap sample, as the tree was grown on
them) and every one of them gets the weight w_i(x, t) = 1/|N_l| in that tree, w_i(x) = (1/T) sum_t w_i(x, t) over
the forest (App. B). Then

* the point estimate is the forest's conditional mean E(y | x) = sum_i w_i(x) y_i (App. B: "the predicted size is
  the average prediction of all trees"; this is the RF estimate of Fig. 1);
* F(y' | x) = sum_i w_i(x) 1{y_i <= y'} and the alpha-quantile is Q_alpha(x) = inf{y' : F(y' | x) >= alpha};
  alpha = 0 is taken as the smallest size with positive weight (the formula's infimum would be -inf);
* the bounds are the beta prediction interval [Q_(1-beta)/2(x), Q_(1+beta)/2(x)]. The paper uses beta = 1 (the
  default): the lower bound is the smallest and the upper bound the largest training size in any of the flow's T
  leaves.

The forest is ``quantile_forest.RandomForestQuantileRegressor`` (scikit-learn's forest: bootstrap samples, squared
error splits, all features tried at each split). The weights above are computed here, from per-leaf tables of the
training flows, and not by the library's ``predict``: the library keeps each leaf's samples in a dense array of
trees x nodes x (largest leaf), and depth-limited trees on heavy-tailed traces have leaves of thousands of
near-identical small flows (measured: 2.5 GB and 1.9 ms per flow for 20 trees on 24,000 K-Means flows at depth 10),
while the tables here are a few numbers per leaf (beta = 1 and the mean cost one look-up per tree) plus, for
beta < 1, the training flows sorted by leaf. The leaf sets are the same as the library's (each tree's bootstrap
sample, a flow drawn twice counting twice), and so are the results: the tests compare the minimum and maximum
with the library's ``predict(quantiles=[0, 1])``, the mean with ``predict("mean", weighted_leaves=True)`` (which is
also scikit-learn's forest prediction) and the other quantiles with App. B's formula.

Trees are grown on log(size) by default (``target="log"``): squared error on raw bytes spends nearly every split
on the few huge flows and leaves the small flows, which are most flows, in a handful of mixed leaves; on log sizes
the splits separate sizes by ratio. Bounds and estimate are computed from the raw sizes of the leaf sets either
way (quantiles do not care, the mean is the mean of bytes). ``target="bytes"`` grows them on raw bytes.

Models are saved with joblib (a pickle: load only files you trust) together with their metadata: features, depth,
beta, trees, the training-set size and time span, the trace they came from, and the versions of Python, numpy,
scikit-learn and quantile-forest.
"""

from __future__ import annotations

import math
import platform
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from fctlab.traces import TraceError, feature_columns, split_by_time

__all__ = [
    "PredictError",
    "Model",
    "fit",
    "train",
    "evaluate",
    "annotate",
    "format_report",
    "SIZE_BINS",
]

FORMAT = "fctlab-qrf"
FORMAT_VERSION = 1
DEFAULT_DEPTH = 10
DEFAULT_BETA = 1.0
DEFAULT_TREES = 100
DEFAULT_TRAIN_FRACTION = 0.8
TARGETS = ("log", "bytes")
#: The size bins of the papers and of fctlab's reports (bytes; KB = 1,000 B): (lo, hi].
SIZE_BINS = (("small", 0, 100_000), ("medium", 100_000, 10_000_000), ("large", 10_000_000, math.inf))
#: Quantiles of estimate / actual reported for the point estimate.
RATIO_QUANTILES = (0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99)
_QUANTILE_CHUNK = 2048
# Up to this many flows, leaves are found by walking the packed trees rather than by scikit-learn.
_PACKED_MAX_ROWS = 32


class PredictError(ValueError):
    """Bad input to the predictor: the message names the argument or column."""


def _versions() -> dict[str, str]:
    import quantile_forest
    import sklearn

    return {
        "python": platform.python_version(),
        "numpy": np.__version__,
        "pandas": pd.__version__,
        "scikit-learn": sklearn.__version__,
        "quantile-forest": quantile_forest.__version__,
    }


class _LeafTable:
    """Which training flows fall in each leaf of each tree: per-leaf statistics of their sizes (count, sum, min,
    max) plus, built on first use, their size ranks sorted by leaf (for quantiles strictly inside (0, 1)).

    ``leaves`` (n, T) is the leaf node id of every training flow in every tree, ``index`` (m, T) the flows of
    tree t's bootstrap sample (rows of ``y``; a flow drawn twice counts twice, as in the tree itself), and
    ``members`` (m, T) their leaves. A leaf is named by a global id: ``offsets[t] + node id in tree t``."""

    def __init__(self, node_counts: np.ndarray, leaves: np.ndarray, index: np.ndarray, y: np.ndarray) -> None:
        self.node_counts = np.asarray(node_counts, dtype=np.int64)
        self.offsets = np.concatenate([[0], np.cumsum(self.node_counts)[:-1]]).astype(np.int64)
        self.leaves = leaves
        self.index = index
        self.members = np.take_along_axis(leaves, index.astype(np.int64), axis=0)
        self.y = np.asarray(y, dtype=np.int64)
        self._build()

    def _build(self) -> None:
        total = int(self.node_counts.sum())
        g = (self.members.astype(np.int64) + self.offsets[None, :]).ravel()
        yy = self.y[self.index.ravel()]
        self.count = np.bincount(g, minlength=total).astype(np.float64)
        self.sum = np.bincount(g, weights=yy.astype(np.float64), minlength=total)
        self.min = np.full(total, np.iinfo(np.int64).max, dtype=np.int64)
        self.max = np.full(total, -1, dtype=np.int64)
        np.minimum.at(self.min, g, yy)
        np.maximum.at(self.max, g, yy)
        with np.errstate(invalid="ignore", divide="ignore"):
            self.mean = np.where(self.count > 0, self.sum / np.maximum(self.count, 1), np.nan)
        self._keys: np.ndarray | None = None

    def state(self) -> dict[str, Any]:
        """What a model file keeps: the bootstrap samples are not saved (they are as large as the rest and
        scikit-learn regenerates them from each tree's seed), only a checksum of them."""
        return {"node_counts": self.node_counts, "leaves": self.leaves, "y": self.y,
                "index_checksum": _checksum(self.index)}

    @classmethod
    def from_state(cls, state: dict[str, Any], forest: Any) -> _LeafTable:
        index = _bootstrap_index(forest)
        if _checksum(index) != state["index_checksum"]:
            raise PredictError("the forest's bootstrap samples cannot be regenerated with this scikit-learn "
                               "version; train the model again")
        return cls(state["node_counts"], state["leaves"], index, state["y"])

    def _sorted_keys(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        if self._keys is None:
            self.values, rank = np.unique(self.y, return_inverse=True)
            n_vals = len(self.values)
            g = self.members.astype(np.int64) + self.offsets[None, :]
            keys = (g * n_vals + rank[self.index]).ravel()
            keys.sort()
            self._keys = keys
            total = int(self.node_counts.sum())
            self.start = np.searchsorted(keys, np.arange(total, dtype=np.int64) * n_vals, side="left")
        return self._keys, self.start, self.values

    def quantile(self, g: np.ndarray, alpha: float) -> np.ndarray:
        """Q_alpha for each row of global leaf ids ``g`` (n, T), by App. B's weights."""
        if alpha <= 0.0:
            return self.min[g].min(axis=1).astype(np.float64)
        if alpha >= 1.0:
            return self.max[g].max(axis=1).astype(np.float64)
        keys, start, values = self._sorted_keys()
        n_vals = len(values)
        out = np.empty(len(g), dtype=np.float64)
        for a in range(0, len(g), _QUANTILE_CHUNK):
            gc = g[a : a + _QUANTILE_CHUNK]
            cnt = self.count[gc]
            base = gc * n_vals
            lo = np.zeros(len(gc), dtype=np.int64)
            hi = np.full(len(gc), n_vals - 1, dtype=np.int64)
            # Smallest rank r with F(values[r]) >= alpha; F is non-decreasing in r and F(last) = 1.
            while np.any(lo < hi):
                mid = (lo + hi) // 2
                below = np.searchsorted(keys, base + mid[:, None], side="right") - start[gc]
                f = np.mean(below / cnt, axis=1)
                ok = f >= alpha - 1e-12
                hi = np.where(ok, mid, hi)
                lo = np.where(ok, lo, mid + 1)
            out[a : a + len(gc)] = values[lo]
        return out

    @classmethod
    def of(cls, forest: Any, x: np.ndarray, y: np.ndarray) -> _LeafTable:
        """The table of a fitted forest: each tree's own (bootstrap) training sample, dropped into its leaves."""
        node_counts = np.array([est.tree_.node_count for est in forest.estimators_], dtype=np.int64)
        dtype = np.uint16 if node_counts.max() <= np.iinfo(np.uint16).max else np.int32
        return cls(node_counts, forest.apply(x).astype(dtype), _bootstrap_index(forest), y)


def _bootstrap_index(forest: Any) -> np.ndarray:
    """(m, T): the training flows each tree was grown on (scikit-learn's public ``estimators_samples_``)."""
    return np.column_stack(forest.estimators_samples_).astype(np.int32)


def _checksum(index: np.ndarray) -> str:
    import hashlib

    return hashlib.sha256(np.ascontiguousarray(index, dtype=np.int32).tobytes()).hexdigest()


class _PackedTrees:
    """The forest's trees as padded arrays (trees x nodes): child ids, split feature and threshold. Walking them
    level by level for all trees at once costs a few numpy operations per level, which beats a call into
    scikit-learn (tens of milliseconds of dispatch) when only one or a few flows start."""

    def __init__(self, forest: Any) -> None:
        trees = [est.tree_ for est in forest.estimators_]
        width = max(t.node_count for t in trees)
        n = len(trees)
        self.left = np.full((n, width), -1, dtype=np.int64)
        self.right = np.full((n, width), -1, dtype=np.int64)
        self.feature = np.zeros((n, width), dtype=np.int64)
        self.threshold = np.zeros((n, width), dtype=np.float64)
        for i, t in enumerate(trees):
            k = t.node_count
            self.left[i, :k] = t.children_left
            self.right[i, :k] = t.children_right
            self.feature[i, :k] = np.maximum(t.feature, 0)
            self.threshold[i, :k] = t.threshold
        self.depth = max(t.max_depth for t in trees)
        self.rows = np.arange(n)[None, :]

    def apply(self, x: np.ndarray) -> np.ndarray:
        """Leaf node id (n, trees) of each row of x (float32, as scikit-learn compares: x <= threshold goes
        left)."""
        node = np.zeros((len(x), self.left.shape[0]), dtype=np.int64)
        xs = x.astype(np.float32).astype(np.float64)
        ri = np.arange(len(x))[:, None]
        for _ in range(self.depth):
            left = self.left[self.rows, node]
            inner = left >= 0
            if not inner.any():
                break
            go_left = xs[ri, self.feature[self.rows, node]] <= self.threshold[self.rows, node]
            node = np.where(inner, np.where(go_left, left, self.right[self.rows, node]), node)
        return node


@dataclass
class Model:
    """A fitted bounds predictor. ``predict(flows)`` gives lower, upper and estimate for each flow."""

    forest: Any
    leaves: _LeafTable
    packed: _PackedTrees
    features: list[str]
    depth: int | None
    beta: float
    trees: int
    target: str
    seed: int
    n_train: int
    train_fraction: float
    train_start_ns: int
    train_end_ns: int
    fit_seconds: float
    source: dict[str, Any] = field(default_factory=dict)
    versions: dict[str, str] = field(default_factory=_versions)

    # -- prediction ------------------------------------------------------------------------------------------

    def _matrix(self, flows: pd.DataFrame) -> np.ndarray:
        for c in self.features:
            if c not in flows.columns:
                raise PredictError(f"flows: missing feature column {c!r} (the model uses {', '.join(self.features)})")
        return flows[self.features].to_numpy(dtype=np.float32)

    def leaf_ids(self, flows: pd.DataFrame) -> np.ndarray:
        """Global leaf ids (n, trees) of each flow in each tree. A few flows walk the packed trees (what a
        per-flow lookup at flow start does); a batch goes through scikit-learn's compiled ``apply``; both give
        the same leaves."""
        x = self._matrix(flows)
        if len(x) == 0:
            return np.empty((0, self.trees), dtype=np.int64)
        if len(x) <= _PACKED_MAX_ROWS:
            return self.packed.apply(x) + self.leaves.offsets[None, :]
        return self.forest.apply(x).astype(np.int64) + self.leaves.offsets[None, :]

    def quantiles(self, flows: pd.DataFrame, alphas: list[float]) -> np.ndarray:
        """Q_alpha (App. B) for every flow and alpha: shape (n, len(alphas)), bytes."""
        g = self.leaf_ids(flows)
        return np.column_stack([self.leaves.quantile(g, float(a)) for a in alphas]) if len(alphas) else np.empty(
            (len(g), 0)
        )

    def predict(self, flows: pd.DataFrame, *, beta: float | None = None) -> pd.DataFrame:
        """``lower_bytes``, ``upper_bytes`` (the beta prediction interval) and ``estimate_bytes`` (the forest's
        mean, kept within the bounds) for every flow, in the flows' order (int64)."""
        b = self.beta if beta is None else _check_beta(beta)
        g = self.leaf_ids(flows)
        lo = self.leaves.quantile(g, (1.0 - b) / 2.0)
        hi = self.leaves.quantile(g, (1.0 + b) / 2.0)
        mean = self.leaves.mean[g].mean(axis=1) if len(g) else np.empty(0)
        lower = np.rint(lo).astype(np.int64)
        upper = np.rint(hi).astype(np.int64)
        estimate = np.clip(np.rint(mean), lower, upper).astype(np.int64)
        return pd.DataFrame(
            {"lower_bytes": lower, "upper_bytes": upper, "estimate_bytes": estimate}, index=flows.index
        )

    def predict_one(self, x: np.ndarray) -> tuple[int, int, int]:
        """(lower, upper, estimate) for one flow's feature vector (in the order of ``features``): the per-flow
        look-up a sender does when a flow starts, without pandas."""
        g = self.packed.apply(np.asarray(x, dtype=np.float32).reshape(1, -1)) + self.leaves.offsets[None, :]
        b = self.beta
        lo = int(round(self.leaves.quantile(g, (1.0 - b) / 2.0)[0]))
        hi = int(round(self.leaves.quantile(g, (1.0 + b) / 2.0)[0]))
        est = int(round(self.leaves.mean[g].mean()))
        return lo, hi, min(max(est, lo), hi)

    # -- files -----------------------------------------------------------------------------------------------

    def metadata(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "format_version": FORMAT_VERSION,
            "features": list(self.features),
            "depth": self.depth,
            "beta": self.beta,
            "trees": self.trees,
            "target": self.target,
            "seed": self.seed,
            "n_train": self.n_train,
            "train_fraction": self.train_fraction,
            "train_start_ns": self.train_start_ns,
            "train_end_ns": self.train_end_ns,
            "fit_seconds": self.fit_seconds,
            "source": dict(self.source),
            "versions": dict(self.versions),
        }

    def save(self, path: str | Path) -> Path:
        """Write the model and its metadata to ``path`` (joblib, compressed), atomically."""
        import joblib

        from fctlab.results import atomic_write

        path = Path(path)
        payload = {"metadata": self.metadata(), "forest": self.forest, "leaves": self.leaves.state()}
        atomic_write(path, lambda f: joblib.dump(payload, f, compress=3))
        return path

    @classmethod
    def load(cls, path: str | Path) -> Model:
        """Read a model written by :meth:`save`. Raises PredictError for a file that is not one."""
        import joblib

        path = Path(path)
        if not path.is_file():
            raise PredictError(f"{path}: no such model file")
        try:
            payload = joblib.load(path)
        except Exception as exc:  # a pickle of anything can fail in any way
            raise PredictError(f"{path}: not a model file ({type(exc).__name__}: {exc})") from None
        meta = payload.get("metadata") if isinstance(payload, dict) else None
        if not isinstance(meta, dict) or meta.get("format") != FORMAT:
            raise PredictError(f"{path}: not an fctlab predictor model")
        if meta.get("format_version") != FORMAT_VERSION:
            raise PredictError(f"{path}: model format version {meta.get('format_version')} (this fctlab reads "
                               f"{FORMAT_VERSION}); train it again")
        try:
            leaves = _LeafTable.from_state(payload["leaves"], payload["forest"])
        except PredictError as e:
            raise PredictError(f"{path}: {e}") from None
        return cls(
            forest=payload["forest"],
            leaves=leaves,
            packed=_PackedTrees(payload["forest"]),
            features=list(meta["features"]),
            depth=meta["depth"],
            beta=float(meta["beta"]),
            trees=int(meta["trees"]),
            target=meta["target"],
            seed=int(meta["seed"]),
            n_train=int(meta["n_train"]),
            train_fraction=float(meta["train_fraction"]),
            train_start_ns=int(meta["train_start_ns"]),
            train_end_ns=int(meta["train_end_ns"]),
            fit_seconds=float(meta["fit_seconds"]),
            source=dict(meta.get("source", {})),
            versions=dict(meta.get("versions", {})),
        )

    def version_mismatch(self) -> dict[str, tuple[str, str]]:
        """Libraries whose version differs from the one the model was saved with: {name: (saved, now)}."""
        now = _versions()
        return {k: (v, now.get(k, "?")) for k, v in self.versions.items() if k != "python" and now.get(k) != v}


# --------------------------------------------------------------------------------------------------------------
# Training
# --------------------------------------------------------------------------------------------------------------


def _check_beta(beta: Any) -> float:
    if isinstance(beta, bool) or not isinstance(beta, (int, float, np.floating)) or not 0.0 <= float(beta) <= 1.0:
        raise PredictError(f"beta must be a number within [0, 1], got {beta!r}")
    return float(beta)


def _check_depth(depth: Any) -> int | None:
    if depth is None:
        return None
    if isinstance(depth, bool) or not isinstance(depth, (int, np.integer)) or int(depth) < 1:
        raise PredictError(f"depth must be an integer >= 1, got {depth!r}")
    return int(depth)


def fit(
    flows: pd.DataFrame,
    *,
    features: list[str] | str = "default",
    depth: int | None = DEFAULT_DEPTH,
    beta: float = DEFAULT_BETA,
    trees: int = DEFAULT_TREES,
    target: str = "log",
    seed: int = 0,
    n_jobs: int | None = None,
    train_fraction: float = 1.0,
    source: dict[str, Any] | None = None,
) -> Model:
    """Fit the forest on these flows (all of them: see :func:`train` for the 80/20 split).

    ``features`` is a list of columns or the name of a set of ``traces.FEATURE_SETS`` (``default``: gap, last 5
    sizes, 5-tuple; ``paper``: the same plus the absolute start time). ``n_jobs`` is for fitting only; the saved
    forest predicts on one core.
    """
    from quantile_forest import RandomForestQuantileRegressor

    depth = _check_depth(depth)
    beta = _check_beta(beta)
    if isinstance(trees, bool) or not isinstance(trees, (int, np.integer)) or trees < 1:
        raise PredictError(f"trees must be an integer >= 1, got {trees!r}")
    if target not in TARGETS:
        raise PredictError(f"target must be one of {', '.join(TARGETS)}, got {target!r}")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise PredictError(f"seed must be an integer >= 0, got {seed!r}")
    if len(flows) < 2:
        raise PredictError(f"flows: {len(flows)} training flow(s); at least 2 are needed")
    try:
        features = feature_columns(flows, features) if isinstance(features, str) else list(features)
    except TraceError as e:
        raise PredictError(str(e)) from None
    if not features:
        raise PredictError("features: at least one feature is needed")
    for c in [*features, "size_bytes", "start_ns"]:
        if c not in flows.columns:
            raise PredictError(f"flows: missing column {c!r}")
    y = flows["size_bytes"].to_numpy(dtype=np.int64)
    if np.any(y < 1):
        raise PredictError("flows: column 'size_bytes': sizes must be >= 1")
    x = flows[features].to_numpy(dtype=np.float32)
    if not np.all(np.isfinite(x)):
        bad = features[int(np.flatnonzero(~np.all(np.isfinite(x), axis=0))[0])]
        raise PredictError(f"flows: feature column {bad!r} has a missing or infinite value")
    forest = RandomForestQuantileRegressor(
        n_estimators=int(trees),
        max_depth=depth,
        max_samples_leaf=1,  # the library's own leaf store is not used (see the module docstring)
        random_state=int(seed),
        n_jobs=n_jobs,
    )
    t0 = time.perf_counter()
    forest.fit(x, np.log(y) if target == "log" else y.astype(np.float64))
    table = _LeafTable.of(forest, x, y)
    elapsed = time.perf_counter() - t0
    forest.set_params(n_jobs=None)
    start = flows["start_ns"].to_numpy(dtype=np.int64)
    return Model(
        forest=forest,
        leaves=table,
        packed=_PackedTrees(forest),
        features=features,
        depth=depth,
        beta=beta,
        trees=int(trees),
        target=target,
        seed=int(seed),
        n_train=len(flows),
        train_fraction=float(train_fraction),
        train_start_ns=int(start.min()),
        train_end_ns=int(start.max()),
        fit_seconds=elapsed,
        source=dict(source or {}),
    )


def train(
    trace: pd.DataFrame, *, train_fraction: float = DEFAULT_TRAIN_FRACTION, **kwargs: Any
) -> tuple[Model, pd.DataFrame]:
    """Fit on the first ``train_fraction`` of the trace by start time (§5.1: 80%); returns the model and the
    remaining (test) flows."""
    try:
        head, tail = split_by_time(trace, train_fraction)
    except TraceError as e:
        raise PredictError(str(e)) from None
    return fit(head, train_fraction=train_fraction, **kwargs), tail


def annotate(model: Model, flows: pd.DataFrame) -> pd.DataFrame:
    """The flows as an fctlab trace (``src, dst, size_bytes, start_ns``) with ``lower_bytes``, ``upper_bytes`` and
    ``estimate_bytes`` from the model: what ``workloads.read_trace`` reads for pFabric-by-estimate and QCLIMB.
    When the flows name their 5-tuple (``sport``, ``dport``, ``proto``), a ``conn`` column numbers their
    connections (for ``transport.connections = "trace"``)."""
    pred = model.predict(flows)
    out = pd.DataFrame({
        "src": flows["src"].to_numpy(np.int64),
        "dst": flows["dst"].to_numpy(np.int64),
        "size_bytes": flows["size_bytes"].to_numpy(np.int64),
        "start_ns": flows["start_ns"].to_numpy(np.int64),
    })
    for c in ("lower_bytes", "upper_bytes", "estimate_bytes"):
        out[c] = pred[c].to_numpy(np.int64)
    if all(c in flows.columns for c in CONNECTION_KEY):
        out["conn"] = connection_ids(flows)
    return out


#: The columns that name a flow's connection.
CONNECTION_KEY = ("src", "dst", "sport", "dport", "proto")


def connection_ids(flows: pd.DataFrame) -> np.ndarray:
    """Numbers 0, 1, ... for the flows' connections (their 5-tuples), in order of first appearance."""
    codes = flows.groupby(list(CONNECTION_KEY), sort=False, dropna=False).ngroup()
    return codes.to_numpy(np.int64)


# --------------------------------------------------------------------------------------------------------------
# Evaluation: Table 2, observations O1-O5 (§2.3), Fig. 1
# --------------------------------------------------------------------------------------------------------------


def _mean(a: np.ndarray) -> float | None:
    return float(np.mean(a)) if len(a) else None


def _time_inference(model: Model, flows: pd.DataFrame, singles: int) -> dict[str, float | None]:
    """Inference time per flow (microseconds, wall clock, one core): one ``predict`` call for the whole batch
    (divided by the flows), and ``predict_one`` on single feature vectors (the median call)."""
    t0 = time.perf_counter()
    model.predict(flows)
    batch = (time.perf_counter() - t0) / max(1, len(flows)) * 1e6
    x = flows[model.features].to_numpy(dtype=np.float32)
    step = max(1, len(x) // max(1, singles))
    single: list[float] = []
    for i in range(0, min(len(x), step * singles), step):
        t0 = time.perf_counter()
        model.predict_one(x[i])
        single.append((time.perf_counter() - t0) * 1e6)
    return {
        "batch_us_per_flow": batch,
        "single_flow_us_median": float(np.median(single)) if single else None,
        "single_flow_calls": len(single),
    }


def evaluate(model: Model, test: pd.DataFrame, *, beta: float | None = None, timing: bool = True,
             single_calls: int = 200) -> dict[str, Any]:
    """How good the bounds and the estimate are on ``test`` flows, as in §2.3 of the paper.

    * ``bounded_share`` / ``out_of_bound_share`` (Table 2, O1): lower <= size <= upper, or not; split into
      ``below_lower_share`` and ``above_upper_share``;
    * ``small_gap_to_lower_bytes`` (O2): mean of (size - lower) over the small flows at or above their lower
      bound (those below it are O4's);
    * ``bins.<bin>.mean_lower_bytes`` (O3): mean lower bound of the small, medium and large flows;
    * ``bins.<bin>.below_lower`` (O4): count and mean gap (lower - size) of the flows under their lower bound;
    * ``bins.<bin>.above_upper`` (O5): count and mean gap (size - upper) of the flows over their upper bound;
    * ``estimate`` (Fig. 1): mean and max of |estimate - size|, the share of flows more than 100 KB off, and
      quantiles of estimate / size;
    * ``inference``: measured microseconds per flow (batch, and one flow per call).
    """
    if len(test) == 0:
        raise PredictError("test: no flows to evaluate")
    b = model.beta if beta is None else _check_beta(beta)
    pred = model.predict(test, beta=b)
    y = test["size_bytes"].to_numpy(dtype=np.int64)
    lo = pred["lower_bytes"].to_numpy()
    hi = pred["upper_bytes"].to_numpy()
    est = pred["estimate_bytes"].to_numpy()
    below = y < lo
    above = y > hi
    bounded = ~below & ~above
    bins: dict[str, Any] = {}
    for name, a, z in SIZE_BINS:
        m = (y > a) & (y <= z)
        bins[name] = {
            "flows": int(m.sum()),
            "bounded_share": float(bounded[m].mean()) if m.any() else None,
            "mean_lower_bytes": _mean(lo[m]),
            "mean_upper_bytes": _mean(hi[m]),
            "mean_gap_to_lower_bytes": _mean((y - lo)[m & ~below]),
            "below_lower": {"flows": int((m & below).sum()), "mean_gap_bytes": _mean((lo - y)[m & below])},
            "above_upper": {"flows": int((m & above).sum()), "mean_gap_bytes": _mean((y - hi)[m & above])},
        }
    err = np.abs(est - y).astype(np.float64)
    ratio = est / y
    small = y <= SIZE_BINS[0][2]
    report: dict[str, Any] = {
        "flows": int(len(y)),
        "beta": b,
        "quantiles": [(1.0 - b) / 2.0, (1.0 + b) / 2.0],
        "model": {k: v for k, v in model.metadata().items() if k in ("depth", "trees", "target", "n_train", "source")},
        "bounded_share": float(bounded.mean()),
        "out_of_bound_share": float(1.0 - bounded.mean()),
        "below_lower_share": float(below.mean()),
        "above_upper_share": float(above.mean()),
        "small_gap_to_lower_bytes": _mean((y - lo)[small & ~below]),
        "median_upper_over_lower": float(np.median(hi / np.maximum(lo, 1))),
        "bins": bins,
        "estimate": {
            "mean_abs_error_bytes": float(err.mean()),
            "max_abs_error_bytes": float(err.max()),
            "share_off_by_more_than_100kb": float(np.mean(err > 100_000)),
            "within_factor_2_share": float(np.mean((ratio >= 0.5) & (ratio <= 2.0))),
            "ratio_quantiles": {f"p{round(q * 100)}": float(np.quantile(ratio, q)) for q in RATIO_QUANTILES},
        },
    }
    if timing:
        report["inference"] = _time_inference(model, test, single_calls)
    return report


def _b(v: float | None) -> str:
    """Bytes in decimal units, for the report."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "-"
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if abs(v) >= scale:
            return f"{v / scale:.3g} {unit}"
    return f"{v:.0f} B"


def format_report(r: dict[str, Any]) -> str:
    """The evaluation as text: the Table 2 line, the bins table (O2-O5) and the point estimate (Fig. 1)."""
    m = r["model"]
    lines = [
        f"test flows: {r['flows']:,}; model: depth {m['depth']}, {m['trees']} trees on {m['n_train']:,} flows "
        f"({m['target']} sizes); beta {r['beta']:g}: bounds [Q{r['quantiles'][0]:g}, Q{r['quantiles'][1]:g}]",
        f"bounded (Table 2, O1): {r['bounded_share']:.4%}   out of bound: {r['out_of_bound_share']:.4%} "
        f"(below lower {r['below_lower_share']:.4%}, above upper {r['above_upper_share']:.4%})",
        f"small flows' mean gap to their lower bound (O2): {_b(r['small_gap_to_lower_bytes'])}; "
        f"median upper/lower: {r['median_upper_over_lower']:.3g}",
        "",
    ]
    header = ["bin", "flows", "bounded", "mean lower (O3)", "mean gap to lower", "below lower: n, gap (O4)",
              "above upper: n, gap (O5)"]
    rows = []
    for name, s in r["bins"].items():
        rows.append([
            name,
            f"{s['flows']:,}",
            "-" if s["bounded_share"] is None else f"{s['bounded_share']:.3%}",
            _b(s["mean_lower_bytes"]),
            _b(s["mean_gap_to_lower_bytes"]),
            f"{s['below_lower']['flows']:,}, {_b(s['below_lower']['mean_gap_bytes'])}",
            f"{s['above_upper']['flows']:,}, {_b(s['above_upper']['mean_gap_bytes'])}",
        ])
    widths = [max(len(str(x)) for x in col) for col in zip(header, *rows)]
    for row in [header, *rows]:
        lines.append("  ".join(str(c).ljust(w) if i == 0 else str(c).rjust(w) for i, (c, w) in
                               enumerate(zip(row, widths))).rstrip())
    e = r["estimate"]
    q = e["ratio_quantiles"]
    lines += [
        "",
        f"point estimate (forest mean, Fig. 1): mean |error| {_b(e['mean_abs_error_bytes'])}, "
        f"max {_b(e['max_abs_error_bytes'])}, off by > 100 KB: {e['share_off_by_more_than_100kb']:.2%}, "
        f"within 2x: {e['within_factor_2_share']:.2%}",
        "estimate / actual: " + ", ".join(f"{k} {v:.3g}" for k, v in q.items()),
    ]
    inf = r.get("inference")
    if inf:
        single = inf["single_flow_us_median"]
        lines.append(
            f"inference: {inf['batch_us_per_flow']:.2f} us per flow in one batch"
            + (f"; {single:.0f} us for one flow per call (median of {inf['single_flow_calls']})" if single else "")
        )
    return "\n".join(lines)
