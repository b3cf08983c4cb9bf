"""Huber loss: squared near the target, linear beyond `delta`."""
import numpy as np

from ._common import float_target, given_once, masked_weighted, number_above, observed_quantile
from ._real_valued import RealValuedLoss


class Huber(RealValuedLoss):
    """Robust multi-output regression: y (n,) or (n, d), each output

        L(r) = r^2 / 2              if |r| <= delta
               delta (|r| - delta/2) otherwise,      r = raw - y,

    so an outlier pulls on the fit with at most `delta`: the gradient is
    clip(r, -delta, delta). The hessian is 1 for every row (as LightGBM
    does), not the exact 0 beyond delta: leaves made only of outliers would
    otherwise have no curvature and take unbounded steps. The start score is
    the (weighted) median per output. The default metric is mae: like the
    loss it is not dominated by the outliers, which rmse would be. alpha is
    LightGBM's name for delta (its default there is 0.9).
    """

    name = "huber"
    default_metric = "mae"
    exact_hessian = False
    masks_missing_targets = True  # NaN: a missing label, no gradient there

    def __init__(self, delta=None, n_threads=1, alpha=None):
        super().__init__(n_threads)
        delta = given_once(self.name, "delta", delta, "alpha", alpha, 1.0)
        self.delta = number_above(delta, "delta", self.name, 0.0)

    def get_params(self):
        return {"delta": self.delta}

    def prepare_target(self, y):
        return float_target(y, self.name, missing=True)

    def init_score(self, y, weight):
        return np.array([observed_quantile(column, weight, 0.5) for column in y.T],
                        dtype=np.float64)

    def gradients(self, y, raw, weight):
        return masked_weighted(np.clip(raw - y, -self.delta, self.delta), y, weight)

    def value(self, y, raw):
        residual = np.abs(raw - y)
        return float(np.nansum(np.where(residual <= self.delta, 0.5 * residual ** 2,
                                     self.delta * (residual - 0.5 * self.delta))))
