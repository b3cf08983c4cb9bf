"""Poisson regression for counts, with a log link."""
import numpy as np

from ._common import weighted
from ._log_link import LogLinkLoss, clipped_exp


class Poisson(LogLinkLoss):
    """Counts (or any non-negative targets, e.g. rates) y (n,) or (n, d); the
    raw score is the log of the mean mu = exp(raw). Each output's negative
    log-likelihood, without the constant log(y!):

        L = exp(raw) - y raw,   grad = exp(raw) - y,   hess = exp(raw)  (exact).

    Inside exp() the raw score is clipped to [-60, 60], so beyond that range
    gradients and hessians are those of the clipped score. Predictions are
    the mean exp(raw); the start score is log of the (weighted) mean target.
    The default metric is rmse, which the mean minimises (mae would favour
    the median).
    """

    name = "poisson"
    default_metric = "rmse"

    def get_params(self):
        return {}

    def gradients(self, y, raw, weight):
        mean = clipped_exp(raw)
        return weighted(mean - y, mean, weight)

    def value(self, y, raw):
        return float(np.sum(np.exp(raw) - y * raw))
