"""The part that poisson, tweedie and gamma share: a mean mu = exp(raw) of
non-negative (or positive) targets, started from the log of their mean."""
import numpy as np

from ._real_valued import RealValuedLoss

# The raw score is clipped to this range inside exp(): e^60 ~ 1e26 keeps the
# float32 gradients and hessians finite even after multiplying by large sample
# weights, and e^-60 keeps the hessians > 0 so leaf values stay finite with
# lambda_l2 = 0.
MAX_LOG_MEAN = 60.0
# The start score is log(mean) with the mean floored here: an output whose
# targets are all 0 starts from a finite, very small mean.
_MIN_MEAN = 1e-12


def clipped_exp(raw, power=1.0):
    """exp(power * raw), raw clipped to [-MAX_LOG_MEAN, MAX_LOG_MEAN]."""
    return np.exp(power * np.clip(raw, -MAX_LOG_MEAN, MAX_LOG_MEAN))


class LogLinkLoss(RealValuedLoss):
    """Predictions are the mean exp(raw); the start score is the log of the
    (weighted) mean target, the best constant of each of these losses.
    Subclasses set `positive_targets`: whether 0 is refused too."""

    positive_targets = False
    exact_hessian = True

    def prepare_target(self, y):
        y = super().prepare_target(y)
        if y.size and (y.min() <= 0 if self.positive_targets else y.min() < 0):
            kind = "positive" if self.positive_targets else "non-negative"
            raise ValueError(f"objective {self.name!r} takes {kind} targets, got a minimum "
                             f"of {y.min()}")
        return y

    def init_score(self, y, weight):
        mean = np.average(y, axis=0, weights=weight)
        return np.log(np.maximum(mean, _MIN_MEAN))

    onnx_transform = "exp"  # gbmo's Booster.to_onnx

    def transform(self, raw):
        return np.exp(raw)
