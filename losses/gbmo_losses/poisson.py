"""Poisson regression for counts, with a log link."""
import numpy as np
from gbmo.losses import Loss

from ._common import float_target, weighted

# The raw score is clipped to this range inside exp(): e^60 ~ 1e26 keeps the
# float32 gradients and hessians finite even after multiplying by large sample
# weights, and e^-60 keeps the hessian > 0 so leaf values stay finite with
# lambda_l2 = 0.
_MAX_LOG_MEAN = 60.0
# The start score is log(mean) with the mean floored here: an output whose
# targets are all 0 starts from a finite, very small mean.
_MIN_MEAN = 1e-12


class Poisson(Loss):
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
    exact_hessian = True

    def get_params(self):
        return {}

    def prepare_target(self, y):
        y = float_target(y, self.name)
        if y.size and y.min() < 0:
            raise ValueError(f"objective 'poisson' takes non-negative targets (counts), got "
                             f"a minimum of {y.min()}")
        return y

    def n_outputs(self, y):
        return y.shape[1]

    def init_score(self, y, weight):
        mean = np.average(y, axis=0, weights=weight)
        return np.log(np.maximum(mean, _MIN_MEAN))

    def gradients(self, y, raw, weight):
        mean = np.exp(np.clip(raw, -_MAX_LOG_MEAN, _MAX_LOG_MEAN))
        return weighted(mean - y, mean, weight)

    def value(self, y, raw):
        return float(np.sum(np.exp(raw) - y * raw))

    def transform(self, raw):
        return np.exp(raw)
