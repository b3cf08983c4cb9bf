"""Tweedie regression (compound Poisson-gamma), with a log link."""
import numpy as np

from ._common import real_number, weighted
from ._log_link import LogLinkLoss, clipped_exp


class Tweedie(LogLinkLoss):
    """Non-negative targets with a mass at 0 and a continuous positive part
    (insurance claims, rainfall), y (n,) or (n, d); the raw score is the log
    of the mean mu = exp(raw). With the variance power p in [1, 2), each
    output's negative log-likelihood up to terms without raw, as LightGBM's
    and XGBoost's tweedie objectives:

        L    = -y exp((1 - p) raw) / (1 - p) + exp((2 - p) raw) / (2 - p)
        grad = -y exp((1 - p) raw) + exp((2 - p) raw)
        hess = -y (1 - p) exp((1 - p) raw) + (2 - p) exp((2 - p) raw)  (exact, > 0)

    p = 1 is the Poisson loss; p near 2 approaches the gamma loss. Inside
    exp() the raw score is clipped to [-60, 60]. The start score is log of
    the (weighted) mean target; the default metric is rmse, which the mean
    minimises. The parameter takes LightGBM's and XGBoost's name.
    """

    name = "tweedie"
    default_metric = "tweedie"

    def __init__(self, tweedie_variance_power=1.5, n_threads=1):
        super().__init__(n_threads)
        power = real_number(tweedie_variance_power, "tweedie_variance_power", self.name)
        if not 1 <= power < 2:
            raise ValueError(f"objective 'tweedie': parameter 'tweedie_variance_power' must be "
                             f"in [1, 2), got {tweedie_variance_power!r}")
        self.power = power

    def get_params(self):
        return {"tweedie_variance_power": self.power}

    def gradients(self, y, raw, weight):
        below, above = clipped_exp(raw, 1 - self.power), clipped_exp(raw, 2 - self.power)
        return weighted(above - y * below, (2 - self.power) * above
                        - (1 - self.power) * y * below, weight)

    def value(self, y, raw):
        p = self.power
        # at p = 1 the first term's limit (up to a constant) is -y raw
        first = -y * raw if p == 1 else -y * np.exp((1 - p) * raw) / (1 - p)
        return float(np.sum(first + np.exp((2 - p) * raw) / (2 - p)))
