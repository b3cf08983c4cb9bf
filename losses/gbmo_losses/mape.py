"""Mean absolute percentage error (LightGBM's mape)."""
import numpy as np

from ._common import weighted, weighted_quantile
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

    @staticmethod
    def _label_weights(y, weight):
        """(n, d): 1 / max(1, |y|), times the sample weights when given."""
        label_weight = 1.0 / np.maximum(1.0, np.abs(y))
        if weight is not None:
            label_weight = label_weight * np.asarray(weight, dtype=np.float64)[:, None]
        return label_weight

    def init_score(self, y, weight):
        label_weight = self._label_weights(y, weight)
        return np.array([weighted_quantile(y[:, j], label_weight[:, j], 0.5)
                         for j in range(y.shape[1])], dtype=np.float64)

    def gradients(self, y, raw, weight):
        return weighted(np.sign(raw - y) * self._label_weights(y, None),
                        np.ones((len(raw), 1)), weight)

    def value(self, y, raw):
        return float(np.sum(np.abs(y - raw) / np.maximum(1.0, np.abs(y))))

    def renew_leaf_values(self, y, raw, weight, rows, leaf_start, leaf_stop, outputs):
        """Each leaf's value for output j: the median of its rows' residuals
        y - raw weighed by 1 / max(1, |y|) (times the sample weights), as
        LightGBM renews mape's leaves."""
        label_weight = self._label_weights(y, weight)[rows]
        values = np.empty((len(leaf_start), len(outputs)))
        for position, j in enumerate(outputs):
            residual = y[rows, j] - raw[rows, j]
            for leaf, (start, stop) in enumerate(zip(leaf_start, leaf_stop)):
                values[leaf, position] = weighted_quantile(
                    residual[start:stop], label_weight[start:stop, j], 0.5)
        return values
