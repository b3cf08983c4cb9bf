"""The base of the losses on real-valued targets, an output per column."""
from gbmo.losses import Loss

from ._common import float_target


class RealValuedLoss(Loss):
    """y (n,) or (n, d) of finite numbers (float_target's checks), one
    output per column."""

    def prepare_target(self, y):
        return float_target(y, self.name)

    def n_outputs(self, y):
        return y.shape[1]
