"""Evaluation metrics on transformed predictions.

Every metric takes (y, prediction, weight) with y in the form the loss
prepared it: 2-D (n, d) for regression and sigmoid, 1-D class indices with
(n, d) probabilities for softmax. Multi-output values are averaged over outputs.
"""
import numpy as np

_EPS = 1e-15


def _mean(values, weight):
    """Weighted mean over rows of a per-row (or per-row-and-output) array."""
    if values.ndim == 2:
        values = values.mean(axis=1)
    return float(np.average(values, weights=weight))


def rmse(y, prediction, weight=None):
    return float(np.sqrt(_mean((prediction - y) ** 2, weight)))


def mae(y, prediction, weight=None):
    return _mean(np.abs(prediction - y), weight)


def logloss(y, prediction, weight=None):
    proba = np.clip(prediction, _EPS, 1 - _EPS)
    if y.ndim == 1:
        return _mean(-np.log(proba[np.arange(len(y)), y]), weight)
    return _mean(-(y * np.log(proba) + (1 - y) * np.log(1 - proba)), weight)


def error(y, prediction, weight=None):
    if y.ndim == 1:
        return _mean((prediction.argmax(axis=1) != y).astype(float), weight)
    return _mean(((prediction > 0.5) != (y > 0.5)).astype(float), weight)


def accuracy(y, prediction, weight=None):
    return 1.0 - error(y, prediction, weight)


METRICS = {"rmse": rmse, "mae": mae, "logloss": logloss, "error": error, "accuracy": accuracy}
HIGHER_IS_BETTER = {"accuracy"}


def get_metric(name):
    if name not in METRICS:
        raise ValueError(f"unknown metric {name!r}; known metrics: {', '.join(sorted(METRICS))}")
    return METRICS[name]
