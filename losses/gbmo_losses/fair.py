"""Fair loss (LightGBM's fair): robust regression with a smooth hessian."""
import numpy as np

from ._common import number_above, weighted
from ._real_valued import RealValuedLoss


class Fair(RealValuedLoss):
    """Robust multi-output regression: y (n,) or (n, d), each output

        L(r) = c^2 (|r| / c - log(1 + |r| / c)),      r = raw - y,

    quadratic near the target and linear far from it, like huber, but with
    a curvature that never vanishes: grad = c r / (|r| + c) and hess = c^2 /
    (|r| + c)^2, exact, as LightGBM's fair. `fair_c` is c (> 0, LightGBM's
    name and default 1.0). The start score is the (weighted) mean per
    output, as LightGBM starts it; the default metric is mae (gbmo has no
    fair metric).
    """

    name = "fair"
    default_metric = "mae"
    exact_hessian = True

    def __init__(self, fair_c=1.0, n_threads=1):
        super().__init__(n_threads)
        self.fair_c = number_above(fair_c, "fair_c", self.name, 0.0)

    def get_params(self):
        return {"fair_c": self.fair_c}

    def init_score(self, y, weight):
        return np.average(y, axis=0, weights=weight)

    def gradients(self, y, raw, weight):
        residual = raw - y
        spread = np.abs(residual) + self.fair_c
        return weighted(self.fair_c * residual / spread, (self.fair_c / spread) ** 2, weight)

    def value(self, y, raw):
        scaled = np.abs(raw - y) / self.fair_c
        return float(np.sum(self.fair_c ** 2 * (scaled - np.log1p(scaled))))
