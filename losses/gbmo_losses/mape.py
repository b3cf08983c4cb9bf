"""Mean absolute percentage error (LightGBM's mape)."""
import numpy as np

from ._common import masked_weighted
from .l1 import L1


class MAPE(L1):
    """Each output's |y - raw| / max(1, |y|), LightGBM's mape: the absolute
    error with every row weighed by 1 / max(1, |y|) (times its sample
    weight), so that a relative error counts alike on every scale while
    targets near 0 do not dominate. The gradient is sign(raw - y) times that
    weight and the hessian the sample weight (1 without), as LightGBM's;
    each leaf's value is the weighted median of its rows' residuals, and the
    start score the weighted median of each output. Default metric: mape."""

    name = "mape"
    default_metric = "mape"

    def column_weights(self, y, weight, column):
        """1 / max(1, |y|) of the column's targets, times the sample weights."""
        scale = 1.0 / np.maximum(1.0, np.abs(y[:, column]))
        return scale if weight is None else scale * np.asarray(weight, dtype=np.float64)

    def gradients(self, y, raw, weight):
        return masked_weighted(np.sign(raw - y) / np.maximum(1.0, np.abs(y)), y, weight)

    def value(self, y, raw):
        return float(np.nansum(np.abs(y - raw) / np.maximum(1.0, np.abs(y))))
