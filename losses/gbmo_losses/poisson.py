"""Poisson regression for counts, with a log link."""
import numpy as np

from ._common import number_above, weighted
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

    poisson_max_delta_step (LightGBM's, >= 0) raises the hessian to
    exp(raw + poisson_max_delta_step), which shortens every Newton step (a
    safeguard for counts far from the start). Its default here is 0, the
    exact hessian; LightGBM's is 0.7.
    """

    name = "poisson"
    default_metric = "poisson"

    def __init__(self, poisson_max_delta_step=0.0, n_threads=1):
        super().__init__(n_threads)
        self.poisson_max_delta_step = number_above(
            poisson_max_delta_step, "poisson_max_delta_step", self.name, 0.0, inclusive=True)
        self.exact_hessian = self.poisson_max_delta_step == 0

    def get_params(self):
        return {"poisson_max_delta_step": self.poisson_max_delta_step}

    def gradients(self, y, raw, weight):
        mean = clipped_exp(raw)
        hessian = mean if self.poisson_max_delta_step == 0 else clipped_exp(
            raw + self.poisson_max_delta_step)
        return weighted(mean - y, hessian, weight)

    def value(self, y, raw):
        return float(np.sum(np.exp(raw) - y * raw))
