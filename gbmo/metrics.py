"""Evaluation metrics on transformed predictions.

NaN targets (missing labels) are left out of every metric.

A metric name may select outputs: "rmse[1,2]" is rmse on outputs 1 and 2 only
(a multi-task model's default metrics are spelled this way).

Every metric takes (y, prediction, weight, n_threads=None) with y in the
form the loss prepared it: 2-D (n, d) for regression and sigmoid, 1-D class indices with
(n, d) probabilities for softmax. For 2-D targets a metric returns one value
per output (as scikit-learn's multioutput="raw_values"); `evaluate` averages
them, which is what logs and early stopping use.
"""
import re

import numpy as np

from ._core._metrics import Element, column_means
from .parallel import WORK_PER_ELEMENT, map_in_threads, thread_count, threads_for
from .validation import spelling_known

_EPS = 1e-15


def _means(kind, y, prediction, weight, n_threads):
    """The weighted mean of kind's element of (y, prediction) down each column
    of 2-D arrays, or of 1-D ones as a scalar; y and prediction broadcast (an
    (n, 1) target against several outputs). NaN elements (missing targets) are
    left out, and a column with none observed is NaN (see _core._metrics)."""
    y, prediction = (np.asarray(a, dtype=np.float64) for a in (y, prediction))
    if y.shape != prediction.shape:
        y, prediction = np.broadcast_arrays(y, prediction)
    if y.ndim not in (1, 2):
        raise ValueError(f"y and prediction must be 1-D or 2-D, got shape {y.shape}")
    means = column_means(kind, _as_columns(y), _as_columns(prediction),
                         None if weight is None else np.ascontiguousarray(weight, np.float64),
                         threads_for(thread_count(n_threads), y.size * WORK_PER_ELEMENT), _EPS)
    return means if y.ndim == 2 else means[0]


def _as_columns(values):
    """1-D values as one column (n, 1); 2-D ones as they are."""
    return values[:, None] if values.ndim == 1 else values


def _column_mean(values, weight, n_threads):
    """The weighted mean over rows of values already computed (see _means)."""
    return _means(Element.VALUE, values, values, weight, n_threads)


def rmse(y, prediction, weight=None, n_threads=None):
    """Per output the root of the (weighted) mean squared error."""
    return np.sqrt(_means(Element.SQUARED_ERROR, y, prediction, weight, n_threads))


def mse(y, prediction, weight=None, n_threads=None):
    """Per output the (weighted) mean squared error (LightGBM's l2)."""
    return _means(Element.SQUARED_ERROR, y, prediction, weight, n_threads)


def mae(y, prediction, weight=None, n_threads=None):
    """Per output the (weighted) mean absolute error (LightGBM's l1)."""
    return _means(Element.ABSOLUTE_ERROR, y, prediction, weight, n_threads)


def rmsle(y, prediction, weight=None, n_threads=None):
    """XGBoost's root mean squared log error: rmse of log(1 + p) against
    log(1 + y), for targets above -1; a prediction of -1 or below counts as
    just above -1, so that it scores badly rather than not at all."""
    prediction = np.maximum(np.asarray(prediction, dtype=np.float64), -1.0 + _EPS)
    return rmse(np.log1p(np.asarray(y, dtype=np.float64)), np.log1p(prediction), weight,
                n_threads)


def mape(y, prediction, weight=None, n_threads=None):
    """LightGBM's mean absolute percentage error: |p - y| / max(1, |y|), so
    that targets near 0 do not dominate it."""
    return _means(Element.PERCENTAGE_ERROR, y, prediction, weight, n_threads)


def quantile(y, prediction, weight=None, n_threads=None, levels=None):
    """LightGBM's quantile metric, the mean pinball loss: a (y - p) where
    y >= p, else (1 - a) (p - y), with each output's quantile level a in
    `levels` (one for all outputs, or one per output). The objective sets the
    levels (see evaluate); mae is twice its value at a = 0.5."""
    residual = np.asarray(y, dtype=np.float64) - np.asarray(prediction, dtype=np.float64)
    levels = np.asarray(levels, dtype=np.float64)
    return _column_mean(np.maximum(levels * residual, (levels - 1.0) * residual), weight,
                        n_threads)


def logloss(y, prediction, weight=None, n_threads=None):
    """The (weighted) mean negative log-likelihood: of each row's class for
    class indices y (n,) and probabilities (n, K), else per 0/1 column."""
    if y.ndim == 1:
        proba = np.clip(prediction[np.arange(len(y)), y], _EPS, 1 - _EPS)
        return _column_mean(-np.log(proba), weight, n_threads)
    return _means(Element.LOG_LOSS, y, prediction, weight, n_threads)


def error(y, prediction, weight=None, n_threads=None):
    """The (weighted) share of wrong predictions: the most probable class
    against class indices, else a probability above 0.5 against each 0/1
    column."""
    if y.ndim == 1:
        return _column_mean((prediction.argmax(axis=1) != y).astype(float), weight, n_threads)
    return _means(Element.MISCLASSIFIED, y, prediction, weight, n_threads)


def _error_at(threshold):
    """XGBoost's error@t: error with a probability above threshold (not 0.5)
    read as a 1, for 0/1 labels."""
    def metric(y, prediction, weight=None, n_threads=None):
        y, prediction = np.asarray(y, dtype=np.float64), np.asarray(prediction)
        wrong = ((prediction > threshold) != (y > 0.5)).astype(np.float64)
        return _column_mean(np.where(np.isnan(y), np.nan, wrong), weight, n_threads)
    metric.__name__ = metric.__qualname__ = f"error@{threshold:g}"
    return metric


_ERROR_AT = re.compile(r"^error@(\d*\.?\d+)$")


# Means (the targets' scale) below this count as this, so that a log or a
# division stays finite, as LightGBM's deviance metrics floor them.
_SMALLEST_MEAN = 1e-10


def _positive(prediction):
    return np.maximum(np.asarray(prediction, dtype=np.float64), _SMALLEST_MEAN)


def poisson(y, prediction, weight=None, n_threads=None):
    """LightGBM's poisson metric, the Poisson negative log-likelihood less
    log(y!): p - y log p of the predicted means p (XGBoost's poisson-nloglik
    adds log(y!), a constant of the data)."""
    y, mean = np.asarray(y, dtype=np.float64), _positive(prediction)
    return _column_mean(mean - y * np.log(mean), weight, n_threads)


def gamma(y, prediction, weight=None, n_threads=None):
    """LightGBM's gamma metric (XGBoost's gamma-nloglik), the Gamma negative
    log-likelihood at shape 1: y / p + log p."""
    y, mean = np.asarray(y, dtype=np.float64), _positive(prediction)
    return _column_mean(y / mean + np.log(mean), weight, n_threads)


def gamma_deviance(y, prediction, weight=None, n_threads=None):
    """The mean Gamma deviance, 2 (y / p - log(y / p) - 1), as scikit-learn's
    mean_gamma_deviance and XGBoost's gamma-deviance (LightGBM's
    gamma_deviance sums it over the rows instead)."""
    y, mean = np.asarray(y, dtype=np.float64), _positive(prediction)
    ratio = _positive(y) / mean
    return _column_mean(2.0 * (ratio - np.log(ratio) - 1.0), weight, n_threads)


def _tweedie_at(power):
    """tweedie@rho: the Tweedie negative log-likelihood at variance power rho
    (LightGBM's tweedie metric, XGBoost's tweedie-nloglik@rho), up to terms of
    the data alone: -y p^(1 - rho) / (1 - rho) + p^(2 - rho) / (2 - rho)."""
    if not 1.0 < power < 2.0:
        raise ValueError(f"metric 'tweedie@{power:g}': the variance power must be in (1, 2), "
                         f"as the tweedie objective's (1 is poisson, 2 gamma)")

    def metric(y, prediction, weight=None, n_threads=None):
        y, mean = np.asarray(y, dtype=np.float64), _positive(prediction)
        return _column_mean(-y * mean ** (1.0 - power) / (1.0 - power)
                            + mean ** (2.0 - power) / (2.0 - power), weight, n_threads)
    metric.__name__ = metric.__qualname__ = f"tweedie@{power:g}"
    return metric


_TWEEDIE_AT = re.compile(r"^(?:tweedie|tweedie-nloglik)@(\d*\.?\d+)$")
# LightGBM's tweedie metric takes tweedie_variance_power, 1.5 by default;
# training spells it out as the tweedie objective's own (tweedie_metric)
TWEEDIE_DEFAULT_POWER = 1.5


def tweedie_metric(name, loss):
    """name, or for plain 'tweedie' (CatBoost's 'Tweedie'), with outputs
    selected or not, tweedie@rho at the variance power of loss when it is
    the tweedie objective (its `power`), else LightGBM's default."""
    if not isinstance(name, str):
        return name
    base, outputs = parse_metric(name)
    if METRIC_ALIASES.get(base, base) != "tweedie":
        return name
    power = getattr(loss, "power", TWEEDIE_DEFAULT_POWER) \
        if getattr(loss, "name", None) == "tweedie" else TWEEDIE_DEFAULT_POWER
    # the objective takes a power of 1, the Poisson likelihood, which tweedie@1's
    # formula divides by 0 for
    base = "poisson" if power == 1.0 else f"tweedie@{float(power):g}"
    return base if outputs is None else f"{base}[{','.join(map(str, outputs))}]"


def accuracy(y, prediction, weight=None, n_threads=None):
    """1 - error."""
    return 1.0 - error(y, prediction, weight, n_threads)


def r2(y, prediction, weight=None, n_threads=None):
    """Per output 1 - sum w (y - p)^2 / sum w (y - mean_w y)^2 (scikit-learn's
    r2_score): 1 for a perfect fit, 0 for predicting the mean; an output whose
    targets are all equal scores 1 when predicted exactly, else 0, as there."""
    residual = _means(Element.SQUARED_ERROR, y, prediction, weight, n_threads)
    center = np.broadcast_to(_column_mean(y, weight, n_threads), np.shape(y))
    spread = _means(Element.SQUARED_ERROR, y, center, weight, n_threads)
    with np.errstate(invalid="ignore", divide="ignore"):
        score = 1.0 - residual / spread
    return np.where(spread == 0, np.where(residual == 0, 1.0, 0.0), score)


def _binary_auc(labels, scores, weight):
    """Weighted ROC AUC of one column: the chance that a positive outscores a
    negative, ties counting half (the Mann-Whitney statistic); NaN when a class
    is absent."""
    order = np.argsort(scores, kind="stable")
    scores, positive, weight = scores[order], labels[order] > 0.5, weight[order]
    negative_weight = np.where(positive, 0.0, weight)
    # per group of equal scores: the negatives below it, and half of those in it
    starts = np.flatnonzero(np.r_[True, scores[1:] != scores[:-1]])
    group_negatives = np.add.reduceat(negative_weight, starts)
    below = np.cumsum(group_negatives) - group_negatives
    group = np.repeat(np.arange(len(starts)), np.diff(np.r_[starts, len(scores)]))
    credit = below[group] + 0.5 * group_negatives[group]
    total_positive = weight[positive].sum()
    total_negative = negative_weight.sum()
    if total_positive == 0 or total_negative == 0:
        return np.nan
    return float((weight[positive] * credit[positive]).sum() / (total_positive * total_negative))


def _binary_average_precision(labels, scores, weight):
    """Weighted average precision of one column, scikit-learn's
    average_precision_score: the precision at each distinct score, from the
    highest down, weighted by the recall it adds; NaN without a positive."""
    order = np.argsort(-scores, kind="stable")
    scores, positive, weight = scores[order], labels[order] > 0.5, weight[order]
    # a threshold takes every row of its score: the last row of each group
    ends = np.flatnonzero(np.r_[scores[1:] != scores[:-1], True])
    true_positives = np.cumsum(np.where(positive, weight, 0.0))[ends]
    selected = np.cumsum(weight)[ends]
    if true_positives[-1] == 0:
        return np.nan
    recall_gained = np.diff(np.r_[0.0, true_positives]) / true_positives[-1]
    with np.errstate(invalid="ignore", divide="ignore"):
        precision = np.where(selected > 0, true_positives / selected, 0.0)
    return float((recall_gained * precision).sum())


def _per_column(column_score, name, doc):
    """The metric name (documented by doc) scoring each 0/1 column with
    column_score(labels, scores, weight) (rows with a NaN label left out), or
    each class against the others for class indices (one-vs-rest, as
    scikit-learn's multi_class="ovr" per class). The columns are scored on up
    to n_threads threads (numpy's sort lets go of the GIL)."""
    def metric(y, prediction, weight=None, n_threads=None):
        if y.ndim == 1:
            y = (y[:, None] == np.arange(prediction.shape[1])).astype(float)
        weight = np.ones(len(y)) if weight is None else np.asarray(weight, dtype=float)

        def score(j):
            observed = ~np.isnan(y[:, j])
            return column_score(y[observed, j], prediction[observed, j], weight[observed])

        return np.array(map_in_threads(score, range(y.shape[1]), thread_count(n_threads)))
    metric.__name__ = metric.__qualname__ = name
    metric.__doc__ = doc
    return metric


auc = _per_column(_binary_auc, "auc", "ROC AUC per output (see _per_column); NaN for an "
                                      "output with one class.")
average_precision = _per_column(
    _binary_average_precision, "average_precision",
    "Average precision (the area under the precision-recall curve as scikit-learn and "
    "LightGBM sum it) per output (see _per_column); NaN for an output without a positive.")


# -- ranking each row's labels: precision@k and ndcg@k ------------------------
def _hits(Y, top_labels):
    """(n, k) bool: is top_labels[i, j] a label of row i (Y: a scipy CSR or a
    numpy array, nonzero for a label)."""
    rows = np.repeat(np.arange(Y.shape[0]), top_labels.shape[1])
    return np.asarray(Y[rows, top_labels.ravel()] != 0).reshape(top_labels.shape)


def precision_at_k(Y, top_labels, weight=None, ranked=None):
    """Mean over rows (weighted by weight, None: alike) of |top k ∩ labels| / k,
    k = top_labels.shape[1] (top_labels (n, k): each row's predicted labels,
    best first); ranked (n,) gives each row's own k instead, when a row has
    fewer labels to rank."""
    hits = _hits(Y, top_labels).sum(axis=1)
    return float(np.average(hits / (top_labels.shape[1] if ranked is None else ranked),
                            weights=weight))


def ndcg_at_k(Y, top_labels, weight=None):
    """Mean over rows (weighted by weight, None: alike) of DCG@k / ideal DCG@k,
    with gain 1 / log2(rank + 1) per hit; the ideal ranks min(k, the row's
    label count) hits first. A row without labels scores 0."""
    k = top_labels.shape[1]
    discount = 1.0 / np.log2(np.arange(2, k + 2))
    # numpy's loops, not matmul's BLAS threads (see multitask._projected)
    dcg = np.einsum("ij,j->i", _hits(Y, top_labels), discount)
    label_counts = np.diff(Y.indptr) if hasattr(Y, "indptr") else np.count_nonzero(Y, axis=1)
    n_labels = np.minimum(label_counts, k)
    ideal = np.concatenate([[0.0], np.cumsum(discount)])[n_labels]
    return float(np.average(np.divide(dcg, ideal, out=np.zeros(len(dcg)), where=ideal > 0),
                            weights=weight))


def _top_observed(y, prediction, k):
    """(n, k) each row's k outputs of highest prediction, best first, among
    its observed labels: a missing label (NaN) is never ranked above one."""
    scores = np.where(np.isnan(y), -np.inf, prediction)
    top = np.argpartition(-scores, k - 1, axis=1)[:, :k]
    best_first = np.argsort(-np.take_along_axis(scores, top, axis=1), axis=1, kind="stable")
    return np.take_along_axis(top, best_first, axis=1)


def _ranking_metric(kind, k):
    """precision@k or ndcg@k of a dense 0/1 target (n, d) and its
    predictions: each row ranks its observed labels only, k of them or all
    when it has fewer, and a row without one is left out. The sparse-output
    path ranks its own sparse scores (sparse_output.evaluate_sparse_output)."""
    def metric(y, prediction, weight=None, n_threads=None):
        ranked = np.minimum(k, np.count_nonzero(~np.isnan(y), axis=1))
        kept = ranked > 0
        y, prediction, ranked = y[kept], prediction[kept], ranked[kept]
        weight = None if weight is None else np.asarray(weight)[kept]
        if not len(y):
            return np.nan
        top = _top_observed(y, prediction, min(k, y.shape[1]))
        if kind == "precision":
            return precision_at_k(np.nan_to_num(y), top, weight, ranked)
        return ndcg_at_k(np.nan_to_num(y), top, weight)
    return metric


RANKING_METRICS = {f"{kind}@{k}": _ranking_metric(kind, k)
                   for kind in ("precision", "ndcg") for k in (1, 3, 5)}


METRICS = {"rmse": rmse, "mse": mse, "mae": mae, "mape": mape, "rmsle": rmsle,
           "quantile": quantile, "poisson": poisson, "gamma": gamma,
           "gamma_deviance": gamma_deviance,
           "logloss": logloss, "error": error, "accuracy": accuracy,
           "r2": r2, "auc": auc, "average_precision": average_precision, **RANKING_METRICS}

# What users of LightGBM and XGBoost call them.
METRIC_ALIASES = {
    "l2": "mse", "mean_squared_error": "mse", "regression": "mse",
    "l2_root": "rmse", "root_mean_squared_error": "rmse",
    "l1": "mae", "mean_absolute_error": "mae", "regression_l1": "mae",
    "mean_absolute_percentage_error": "mape", "pinball": "quantile",
    "mean_pinball_loss": "quantile",
    "binary_logloss": "logloss", "multi_logloss": "logloss", "cross_entropy": "logloss",
    "mlogloss": "logloss",
    "binary_error": "error", "multi_error": "error", "merror": "error",
    # XGBoost's aucpr and CatBoost's PRAUC interpolate the curve where
    # scikit-learn and LightGBM sum steps; they differ a little (0.6504
    # against 0.6529 and 0.6528 on one test), and rank models alike
    "aucpr": "average_precision",
    # LightGBM also takes an objective's name for its metric
    "regression_l2": "mse", "binary": "logloss", "multiclass": "logloss",
    "xentropy": "logloss",
    # CatBoost's eval_metric names; not MultiRMSE, which pools the outputs'
    # squared errors where gbmo averages the outputs' values
    "RMSE": "rmse", "MAE": "mae", "MAPE": "mape", "R2": "r2",
    "Quantile": "quantile", "MultiQuantile": "quantile", "Logloss": "logloss",
    "CrossEntropy": "logloss", "MultiClass": "logloss", "MultiLogloss": "logloss",
    "Accuracy": "accuracy", "AUC": "auc", "PRAUC": "average_precision",
    "HammingLoss": "error", "Poisson": "poisson", "Tweedie": "tweedie",
    # XGBoost's: the same values (its poisson-nloglik is not: it adds log(y!))
    "gamma-nloglik": "gamma", "gamma-deviance": "gamma_deviance",
}

# Metrics of the predicted means of count and positive targets, and the
# targets each takes.
_DEVIANCE_TARGETS = {"poisson": ("counts >= 0", lambda y: y >= 0),
                     "gamma": ("values > 0", lambda y: y > 0),
                     "gamma_deviance": ("values > 0", lambda y: y > 0),
                     "tweedie": ("values >= 0", lambda y: y >= 0)}


def canonical_metric(name):
    """gbmo's spelling of a metric: an alias of METRIC_ALIASES as gbmo's
    name (either in any case, see spelling_known), the output selection
    without spaces ("l2[0, 1]" -> "mse[0,1]"), so that one metric is
    evaluated and recorded once; any other value unchanged."""
    if not isinstance(name, str):
        return name
    base, outputs = parse_metric(name)
    base = spelling_known(base, METRIC_ALIASES, METRICS)
    base = METRIC_ALIASES.get(base, base)
    if _TWEEDIE_AT.match(str(base)):  # XGBoost's tweedie-nloglik@rho
        base = f"tweedie@{_tweedie_power(base):g}"
    return base if outputs is None else f"{base}[{','.join(map(str, outputs))}]"


HIGHER_IS_BETTER = {"accuracy", "r2", "auc", "average_precision", *RANKING_METRICS}


_SELECTION = re.compile(r"^([\w@.]+)\[(\d+(?:, ?\d+)*)\]$")


def parse_metric(name):
    """(metric name, selected outputs or None) of "rmse" or "rmse[1,2]"."""
    match = _SELECTION.match(name) if isinstance(name, str) else None
    if match is None:
        return name, None
    return match.group(1), [int(c) for c in match.group(2).split(",")]


def _tweedie_power(name):
    """The variance power a tweedie metric name scores at (tweedie@rho,
    XGBoost's tweedie-nloglik@rho; LightGBM's default for plain tweedie),
    None for other names."""
    if METRIC_ALIASES.get(name, name) == "tweedie":
        return TWEEDIE_DEFAULT_POWER
    tweedie = _TWEEDIE_AT.match(str(name))
    return float(tweedie.group(1)) if tweedie else None


def is_known(name):
    """Whether name (gbmo's, or an alias of one) is a metric gbmo computes."""
    base = parse_metric(canonical_metric(name))[0]
    return (base in METRICS or bool(_ERROR_AT.match(str(base)))
            or _tweedie_power(base) is not None)


def unknown_metric_message(name):
    """The refusal of an unknown metric name, listing the known ones."""
    return (f"unknown metric {name!r}; known metrics: {', '.join(sorted(METRICS))}, error@t "
            f"(XGBoost's error at a threshold t, as error@0.7), tweedie@rho (the Tweedie "
            f"negative log-likelihood at variance power rho; tweedie: the objective's) (also "
            f"{', '.join(METRIC_ALIASES)}), each optionally restricted to outputs as in "
            "'rmse[0,2]'")


def higher_is_better(name):
    """Whether a larger value of metric name is better (auc, accuracy, ...)."""
    return parse_metric(name)[0] in HIGHER_IS_BETTER


def get_metric(name):
    """The function computing metric name: f(y, prediction, weight, n_threads)."""
    error_at = _ERROR_AT.match(str(name))
    if error_at:
        return _error_at(float(error_at.group(1)))
    power = _tweedie_power(name)
    if power is not None:
        return _tweedie_at(power)
    if name not in METRICS:
        raise ValueError(unknown_metric_message(name))
    return METRICS[name]


def _selected(name, y, outputs, prediction_width):
    """y's columns of the outputs a metric name selects (all for None). A
    one-column target scored against several outputs (the quantile levels of
    one column) serves each of them."""
    if outputs is None:
        return y
    if len(set(outputs)) != len(outputs):
        raise ValueError(f"metric {name!r} selects an output twice; give each output once")
    one_column = y.ndim == 2 and y.shape[1] == 1
    width = prediction_width if one_column else (y.shape[1] if y.ndim == 2 else 0)
    if max(outputs) >= width:
        raise ValueError(f"metric {name!r} selects outputs {outputs}, but the model has "
                         f"{width or 'no'} outputs to select (class indices have none); "
                         "allowed: outputs 0 .. d - 1 of a 2-D target")
    return y if one_column else y[:, outputs]


def _selected_levels(name, levels, outputs):
    """The quantile levels of the outputs the quantile metric scores (see
    check_metric_fits), refused where there are none."""
    if levels is None:
        raise ValueError(f"metric {name!r} scores each output at the quantile level (alpha) "
                         "its objective predicts, and this objective predicts none; use it "
                         "with an objective that predicts quantiles (gbmo-losses' quantile, "
                         "or l1 and mape, at 0.5), or a MultiTaskLoss task of one")
    selected = levels if outputs is None else levels[outputs]
    if np.isnan(selected).any():
        raise ValueError(f"metric {name!r} covers outputs that predict no quantile: restrict "
                         "it to the quantile task's outputs, as in 'quantile[0,1]'")
    return selected


def check_metric_fits(name, y, prediction_width, quantile_levels=None):
    """Refuses, before training, a metric that cannot score this target (y as
    the loss prepared it; prediction_width its predictions' columns;
    quantile_levels each output's quantile level, see losses.quantile_levels)."""
    base, outputs = parse_metric(name)
    class_indices = y.ndim == 1 and prediction_width > 1
    y = _selected(name, y, outputs, prediction_width)
    if base == "quantile":
        _selected_levels(name, quantile_levels, outputs)
    if base in RANKING_METRICS and (y.ndim != 2 or prediction_width < 2
                                    or not np.isin(y[~np.isnan(y)], (0, 1)).all()):
        raise ValueError(f"metric {name!r} ranks each row's outputs against its 0/1 labels, "
                         "but the targets are class indices, one column or other values; "
                         "allowed: a multi-label target (n, d >= 2) of 0/1 (for classes, use "
                         "accuracy)")
    if class_indices:
        if _ERROR_AT.match(str(base)):
            raise ValueError(f"metric {name!r} reads each 0/1 label's probability against a "
                             "threshold, but this objective's targets are class indices; use "
                             "error (the most probable class) or accuracy")
        if base in ("rmse", "mse", "mae", "mape", "rmsle", "quantile", "r2", *_DEVIANCE_TARGETS) \
                or _tweedie_power(base) is not None:
            raise ValueError(f"metric {name!r} compares values with targets, but this "
                             "objective's targets are class indices; use logloss, error, "
                             "accuracy or auc")
        return
    observed = y[~np.isnan(y)] if y.dtype.kind == "f" else y
    family = "tweedie" if _tweedie_power(base) is not None else base
    if family in _DEVIANCE_TARGETS:
        get_metric(base)  # a tweedie power out of range is refused here
        allowed, fits = _DEVIANCE_TARGETS[family]
        if not fits(observed).all():
            raise ValueError(f"metric {name!r} scores predicted means of {allowed}, but the "
                             f"targets hold others; allowed: {allowed}")
    if base in ("auc", "average_precision") and not np.isin(observed, (0, 1)).all():
        raise ValueError(f"metric {name!r} needs 0/1 labels (or class indices), but the "
                         "targets hold other values")
    if base == "rmsle" and not (observed > -1).all():
        raise ValueError(f"metric {name!r} compares log(1 + value), but the targets hold "
                         "values of -1 or below; allowed: targets above -1 (for others use "
                         "rmse)")
    if (base in ("logloss", "error", "accuracy") or _ERROR_AT.match(str(base))) and not (
            (observed >= 0) & (observed <= 1)).all():
        raise ValueError(f"metric {name!r} scores probabilities against labels in [0, 1] (or "
                         "class indices), but the targets hold other values; for regression "
                         "use rmse, mse, mae, mape or r2")


def evaluate(name, y, prediction, weight=None, n_threads=None, quantile_levels=None):
    """(value averaged over the outputs where it is defined, per-output values
    or None for a single value): an output without a value (no observed
    target, or one class only for auc) is left out of the mean, which is NaN
    only when no output has a value. quantile_levels: each output's quantile
    level, which the quantile metric scores at (see check_metric_fits)."""
    base, outputs = parse_metric(name)
    metric = get_metric(base)
    y = _selected(name, y, outputs, prediction.shape[1] if prediction.ndim == 2 else 1)
    if outputs is not None:
        prediction = prediction[:, outputs]
    if base == "quantile":
        values = metric(y, prediction, weight, n_threads=n_threads,
                        levels=_selected_levels(name, quantile_levels, outputs))
    else:
        values = metric(y, prediction, weight, n_threads=n_threads)
    values = np.atleast_1d(values)
    defined = values[~np.isnan(values)]
    return (float(defined.mean()) if defined.size else np.nan,
            values if values.size > 1 else None)


# -- sparse labels (GBDT-sparse): Y a scipy CSR of 0/1, predictions top-k -----
SPARSE_OUTPUT_METRICS = (*RANKING_METRICS, "micro_f1", "macro_f1")


def f1_at_threshold(Y, predicted, average="micro", weight=None):
    """F1 of predicted (a 0/1 sparse matrix of predicted positives) against Y,
    each row's pairs counted with its weight (None: 1). micro: over all (row,
    label) pairs (scikit-learn's f1_score with sample_weight); macro: the mean
    per-label F1 over the labels that are true or predicted in a row of
    weight > 0 (the others have no F1; scikit-learn counts them as 0)."""
    Y = (Y != 0).astype(np.float64).tocsr()
    predicted = (predicted != 0).astype(np.float64).tocsr()
    row_weight = np.ones(Y.shape[0]) if weight is None else np.asarray(weight, np.float64)
    # label sums of weighted rows: scipy's sparse products, no BLAS
    true_positive = Y.multiply(predicted).T @ row_weight
    n_true = Y.T @ row_weight
    n_predicted = predicted.T @ row_weight
    if average == "micro":
        denominator = n_true.sum() + n_predicted.sum()
        return float(2 * true_positive.sum() / denominator) if denominator else 0.0
    if average != "macro":
        raise ValueError(f"average must be 'micro' or 'macro', got {average!r}")
    seen = (n_true + n_predicted) > 0
    if not seen.any():
        return 0.0
    return float(np.mean(2 * true_positive[seen] / (n_true[seen] + n_predicted[seen])))
