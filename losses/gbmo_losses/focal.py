"""Focal loss for multi-label classification (Lin et al. 2017)."""
import numpy as np
from gbmo.losses import Loss
from scipy.optimize import brentq
from scipy.special import expit, log_expit

from ._common import float_target, number_above, weighted

# The focal loss is not convex: its second derivative is negative for badly
# wrong predictions. Hessians are floored here so leaf values -G / (H + lambda)
# stay finite and point downhill.
_MIN_HESSIAN = 1e-6
# Start score of an output whose labels are all 0 (or all 1): the logit of
# 1e-12 (of 1 - 1e-12), as gbmo's sigmoid loss does.
_EXTREME_LOGIT = 27.631021115928547
# The constant start score is searched in this raw-score range.
_SEARCH_LOGIT = 40.0


def _positive_label_derivatives(p, q, log_p, gamma):
    """First and second derivatives wrt the raw score z of the loss of a
    positive label, -(1 - p)^gamma log p, with p = sigmoid(z), q = 1 - p
    (passed separately for precision) and log_p = log p."""
    q_gamma = q ** gamma
    grad = q_gamma * (gamma * p * log_p - q)
    hess = p * q_gamma * (gamma * q * log_p - gamma ** 2 * p * log_p + (2 * gamma + 1) * q)
    return grad, hess


class Focal(Loss):
    """Multi-label classification: y (n,) or (n, d) with labels in {0, 1}, each
    output an independent focal loss on p = sigmoid(raw):

        L = -[y (1 - p)^gamma log p + (1 - y) p^gamma log(1 - p)],

    which down-weights the examples that are already well classified; gamma = 0
    is the logistic loss. With q = 1 - p, the derivatives wrt raw are, for y = 1,

        grad = q^gamma (gamma p log p - q)
        hess = p q^gamma (gamma q log p - gamma^2 p log p + (2 gamma + 1) q),

    and for y = 0 the same with p and q swapped and the gradient's sign
    flipped (the loss of a negative label at raw is that of a positive label
    at -raw). The hessian is the analytic one floored at 1e-6 (it is negative
    where a prediction is badly wrong), hence not exact. Predictions are the
    probabilities p; the start score is the constant raw score that minimises
    the (weighted) loss of each output.
    """

    name = "focal"
    default_metric = "logloss"
    exact_hessian = False

    def __init__(self, gamma=2.0, n_threads=1):
        super().__init__(n_threads)
        self.gamma = number_above(gamma, "gamma", self.name, 0.0, inclusive=True)

    def get_params(self):
        return {"gamma": self.gamma}

    def prepare_target(self, y):
        y = float_target(y, self.name)
        labels = np.unique(y)
        if not np.all((labels == 0) | (labels == 1)):
            raise ValueError(f"objective 'focal' takes labels 0 and 1 only, got the values "
                             f"{labels[(labels != 0) & (labels != 1)][:5].tolist()}")
        return y

    def n_outputs(self, y):
        return y.shape[1]

    def _derivatives(self, y, raw):
        """Unweighted, unfloored (grad, hess) of every entry."""
        p, q = expit(raw), expit(-raw)
        grad_pos, hess_pos = _positive_label_derivatives(p, q, log_expit(raw), self.gamma)
        grad_neg, hess_neg = _positive_label_derivatives(q, p, log_expit(-raw), self.gamma)
        positive = y == 1
        return np.where(positive, grad_pos, -grad_neg), np.where(positive, hess_pos, hess_neg)

    def init_score(self, y, weight):
        weight = np.ones(len(y)) if weight is None else weight
        positives, negatives = weight @ y, weight @ (1 - y)
        score = np.empty(y.shape[1])
        for j, (w_pos, w_neg) in enumerate(zip(positives, negatives)):
            if w_pos <= 0 or w_neg <= 0:
                score[j] = _EXTREME_LOGIT if w_neg <= 0 else -_EXTREME_LOGIT
                continue
            # The derivative of the total loss goes from -w_pos (raw -> -inf) to
            # w_neg (raw -> +inf): its sign change brackets the minimum.
            score[j] = brentq(lambda z: w_pos * self._derivatives(1.0, z)[0]
                              + w_neg * self._derivatives(0.0, z)[0],
                              -_SEARCH_LOGIT, _SEARCH_LOGIT, xtol=1e-10)
        return score

    def gradients(self, y, raw, weight):
        grad, hess = self._derivatives(y, raw)
        return weighted(grad, np.maximum(hess, _MIN_HESSIAN), weight)

    def value(self, y, raw):
        p, q = expit(raw), expit(-raw)
        return float(-np.sum(y * q ** self.gamma * log_expit(raw)
                             + (1 - y) * p ** self.gamma * log_expit(-raw)))

    onnx_transform = "sigmoid"  # gbmo's Booster.to_onnx

    def transform(self, raw):
        return expit(raw)
