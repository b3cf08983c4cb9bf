"""Gamma regression for positive, right-skewed targets, with a log link."""
import numpy as np

from ._common import weighted
from ._log_link import LogLinkLoss, clipped_exp


class Gamma(LogLinkLoss):
    """Positive targets whose spread grows with their mean (claim sizes,
    durations), y (n,) or (n, d); the raw score is the log of the mean
    mu = exp(raw). Each output's negative log-likelihood up to terms
    without raw, as LightGBM's and XGBoost's gamma objectives:

        L = y exp(-raw) + raw,   grad = 1 - y exp(-raw),   hess = y exp(-raw)  (exact).

    Targets must be > 0 (the hessian vanishes at y = 0). Inside exp() the
    raw score is clipped to [-60, 60]. The start score is log of the
    (weighted) mean target; the default metric is rmse, which the mean
    minimises.
    """

    name = "gamma"
    default_metric = "gamma"
    positive_targets = True

    def get_params(self):
        return {}

    def gradients(self, y, raw, weight):
        scaled = y * clipped_exp(raw, -1.0)
        return weighted(1.0 - scaled, scaled, weight)

    def value(self, y, raw):
        return float(np.sum(y * np.exp(-raw) + raw))
