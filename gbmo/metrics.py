"""Evaluation metrics on transformed predictions.

NaN targets (missing labels) are left out of every metric.

Every metric takes (y, prediction, weight) with y in the form the loss
prepared it: 2-D (n, d) for regression and sigmoid, 1-D class indices with
(n, d) probabilities for softmax. For 2-D targets a metric returns one value
per output (as scikit-learn's multioutput="raw_values"); `evaluate` averages
them, which is what logs and early stopping use.
"""
import numpy as np

_EPS = 1e-15


def _column_mean(values, weight):
    """Weighted mean over rows: per output for 2-D values, a scalar for 1-D.
    NaN entries (missing targets) are left out; an output with none observed is NaN."""
    observed = ~np.isnan(values)
    w = observed if weight is None else observed * (
        weight[:, None] if values.ndim == 2 else weight)
    total = np.where(observed, values, 0.0) * w
    with np.errstate(invalid="ignore", divide="ignore"):
        return total.sum(axis=0) / w.sum(axis=0)


def _missing_as_nan(values, y):
    return np.where(np.isnan(y), np.nan, values) if y.dtype.kind == "f" else values


def rmse(y, prediction, weight=None):
    return np.sqrt(_column_mean((prediction - y) ** 2, weight))


def mae(y, prediction, weight=None):
    return _column_mean(np.abs(prediction - y), weight)


def logloss(y, prediction, weight=None):
    proba = np.clip(prediction, _EPS, 1 - _EPS)
    if y.ndim == 1:
        return _column_mean(-np.log(proba[np.arange(len(y)), y]), weight)
    return _column_mean(-(y * np.log(proba) + (1 - y) * np.log(1 - proba)), weight)


def error(y, prediction, weight=None):
    if y.ndim == 1:
        return _column_mean((prediction.argmax(axis=1) != y).astype(float), weight)
    return _column_mean(_missing_as_nan(((prediction > 0.5) != (y > 0.5)).astype(float), y),
                        weight)


def accuracy(y, prediction, weight=None):
    return 1.0 - error(y, prediction, weight)


METRICS = {"rmse": rmse, "mae": mae, "logloss": logloss, "error": error, "accuracy": accuracy}
HIGHER_IS_BETTER = {"accuracy"}


def get_metric(name):
    if name not in METRICS:
        raise ValueError(f"unknown metric {name!r}; known metrics: {', '.join(sorted(METRICS))}")
    return METRICS[name]


def evaluate(name, y, prediction, weight=None):
    """(value averaged over outputs, per-output values or None for a single value)."""
    values = np.atleast_1d(get_metric(name)(y, prediction, weight))
    return float(values.mean()), (values if values.size > 1 else None)
