"""Evaluation metrics on transformed predictions.

NaN targets (missing labels) are left out of every metric.

A metric name may select outputs: "rmse[1,2]" is rmse on outputs 1 and 2 only
(a multi-task model's default metrics are spelled this way).

Every metric takes (y, prediction, weight) with y in the form the loss
prepared it: 2-D (n, d) for regression and sigmoid, 1-D class indices with
(n, d) probabilities for softmax. For 2-D targets a metric returns one value
per output (as scikit-learn's multioutput="raw_values"); `evaluate` averages
them, which is what logs and early stopping use.
"""
import re

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


_SELECTION = re.compile(r"^(\w+)\[(\d+(?:, ?\d+)*)\]$")


def parse_metric(name):
    """(metric name, selected outputs or None) of "rmse" or "rmse[1,2]"."""
    match = _SELECTION.match(name) if isinstance(name, str) else None
    if match is None:
        return name, None
    return match.group(1), [int(c) for c in match.group(2).split(",")]


def is_known(name):
    return parse_metric(name)[0] in METRICS


def unknown_metric_message(name):
    return (f"unknown metric {name!r}; known metrics: {', '.join(sorted(METRICS))}, each "
            "optionally restricted to outputs as in 'rmse[0,2]'")


def higher_is_better(name):
    return parse_metric(name)[0] in HIGHER_IS_BETTER


def get_metric(name):
    if name not in METRICS:
        raise ValueError(unknown_metric_message(name))
    return METRICS[name]


def evaluate(name, y, prediction, weight=None):
    """(value averaged over outputs, per-output values or None for a single value)."""
    base, outputs = parse_metric(name)
    metric = get_metric(base)
    if outputs is not None:
        if y.ndim != 2 or max(outputs) >= y.shape[1]:
            raise ValueError(f"metric {name!r} selects outputs {outputs}, but the targets have "
                             f"{y.shape[1] if y.ndim == 2 else 'no'} output columns")
        y, prediction = y[:, outputs], prediction[:, outputs]
    values = np.atleast_1d(metric(y, prediction, weight))
    return float(values.mean()), (values if values.size > 1 else None)
