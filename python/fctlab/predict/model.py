"""QCLIMB's predictor itself: the quantile regression forest, its leaf tables, training, saving and loading, and
the annotation of flows with their bounds. How the bounds are computed is told in :mod:`fctlab.predict`."""


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
    "LeafTable",
    "fit",
    "train",
    "annotate",
    "check_beta",
    "connection_ids",
    "CONNECTION_KEY",
    "FORMAT",
    "FORMAT_VERSION",
    "DEFAULT_DEPTH",
    "DEFAULT_BETA",
    "DEFAULT_TREES",
    "DEFAULT_TRAIN_FRACTION",
    "TARGETS",
    "SIZE_BINS",
    "RATIO_QUANTILES",
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


class LeafTable:
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
    def from_state(cls, state: dict[str, Any], forest: Any) -> LeafTable:
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
    def of(cls, forest: Any, x: np.ndarray, y: np.ndarray) -> LeafTable:
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
    leaves: LeafTable
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
        b = self.beta if beta is None else check_beta(beta)
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
            leaves = LeafTable.from_state(payload["leaves"], payload["forest"])
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


def check_beta(beta: Any) -> float:
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
    beta = check_beta(beta)
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
    table = LeafTable.of(forest, x, y)
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
