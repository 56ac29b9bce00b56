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

from fctlab.predict.evaluation import evaluate, format_report
# (the trace helpers this module used to import, at their old path for one release)
from fctlab.traces import TraceError, feature_columns, split_by_time  # noqa: F401
from fctlab.predict.model import (
    CONNECTION_KEY,
    DEFAULT_BETA,
    DEFAULT_DEPTH,
    DEFAULT_TRAIN_FRACTION,
    DEFAULT_TREES,
    FORMAT,
    FORMAT_VERSION,
    RATIO_QUANTILES,
    SIZE_BINS,
    TARGETS,
    LeafTable,
    Model,
    PredictError,
    annotate,
    connection_ids,
    fit,
    train,
)

__all__ = [
    "PredictError",
    "Model",
    "LeafTable",
    "fit",
    "train",
    "evaluate",
    "annotate",
    "format_report",
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
