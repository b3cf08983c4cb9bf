"""Absolute error (LightGBM's regression_l1): the median regression."""
import numpy as np

from ._common import masked_weighted
from .quantile import Quantile


class L1(Quantile):
    """Each output's absolute error |y - raw|, y (n,) or (n, d): the median
    regression, as LightGBM's regression_l1. The gradient is sign(raw - y)
    and the hessian 1; the trees split on these, and each leaf's value is
    the (weighted) median of its rows' residuals, as LightGBM renews it.
    Starts from the median of each output; the default metric is mae. It is
    quantile at alpha 0.5 with twice its gradients (LightGBM's scale)."""

    name = "l1"
    default_metric = "mae"

    def __init__(self, n_threads=1):
        super().__init__(alpha=0.5, n_threads=n_threads)

    def get_params(self):
        return {}

    def gradients(self, y, raw, weight):
        return masked_weighted(np.sign(raw - y), y, weight)

    def value(self, y, raw):
        return float(np.nansum(np.abs(y - raw)))
