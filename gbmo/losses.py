"""The Loss protocol and the built-in losses.

A loss turns targets and raw scores (n, d) into float32 gradients (n, d) and
hessians (n, d), or (n, 1) when one hessian serves every output; a constant
(n, 1) hessian lets the histograms count rows instead of summing hessians.
"""
import numpy as np
from scipy.special import expit, logit, softmax

from ._core import G_H_DTYPE
from ._core._losses import sigmoid_gradients, softmax_gradients, squared_error_gradients
from .parallel import threads_for

_UNIT_WEIGHT = np.empty(0)


def _kernel_weight(weight):
    return _UNIT_WEIGHT if weight is None else np.ascontiguousarray(weight, dtype=np.float64)


class Loss:
    """Base of every loss. Subclasses set `name` and `default_metric` and
    implement the methods below; targets reach them already validated."""

    name = None
    default_metric = None

    def __init__(self, n_threads=1):
        self.n_threads = n_threads

    def _threads(self, raw):
        return threads_for(self.n_threads, raw.size * 8)

    def prepare_target(self, y):
        """Validates y for this loss and returns it in the form the other methods take."""
        raise NotImplementedError

    def n_outputs(self, y):
        raise NotImplementedError

    def init_score(self, y, weight):
        """The constant raw score (d,) that the first tree starts from."""
        raise NotImplementedError

    def gradients(self, y, raw, weight):
        raise NotImplementedError

    def transform(self, raw):
        """Raw scores -> predictions (identity, probabilities, ...)."""
        return raw


# Gradients are float32: targets beyond this would overflow them into inf/NaN.
_MAX_TARGET = 1e30


def _require_finite(y, loss_name):
    if not np.all(np.isfinite(y)):
        raise ValueError(
            f"the target contains NaN or infinite values; objective '{loss_name}' "
            "needs finite targets"
        )
    if y.size and np.abs(y).max() > _MAX_TARGET:
        raise ValueError(
            f"the target has values of magnitude {np.abs(y).max():.3g}; objective "
            f"'{loss_name}' takes |y| <= {_MAX_TARGET:g} (gradients are float32): rescale it"
        )


class SquaredError(Loss):
    """Multi-output regression: 1/2 sum_j (raw_j - y_j)^2; hessian 1 (times the weight)."""

    name = "mse"
    default_metric = "rmse"

    def prepare_target(self, y):
        y = np.asarray(y, dtype=np.float64)
        _require_finite(y, self.name)
        return np.ascontiguousarray(y.reshape(-1, 1) if y.ndim == 1 else y)

    def n_outputs(self, y):
        return y.shape[1]

    def init_score(self, y, weight):
        return np.average(y, axis=0, weights=weight)

    def gradients(self, y, raw, weight):
        grad = np.empty(raw.shape, dtype=G_H_DTYPE)
        squared_error_gradients(y, raw, _kernel_weight(weight), grad, self._threads(raw))
        hess = np.ones((len(y), 1)) if weight is None else weight[:, None]
        return grad, hess.astype(G_H_DTYPE)


class SoftmaxCrossEntropy(Loss):
    """Multi-class: y holds class indices 0 .. d-1; raw scores are logits.
    Diagonal hessian p (1 - p), as in GBDT-MO section III-A."""

    name = "softmax"
    default_metric = "logloss"

    def __init__(self, num_class=None, n_threads=1):
        super().__init__(n_threads)
        self.num_class = num_class

    def prepare_target(self, y):
        y = np.asarray(y)
        if y.ndim != 1:
            raise ValueError(
                f"objective 'softmax' takes a 1-D array of class indices, got shape {y.shape}"
            )
        if y.dtype.kind not in "iub" and not (
            y.dtype.kind == "f" and np.all(np.isfinite(y)) and np.all(y == np.round(y))
        ):
            raise ValueError(
                "objective 'softmax' takes integer class indices 0 .. num_class - 1; "
                "encode string or float labels first (e.g. numpy.unique(y, return_inverse=True))"
            )
        y = y.astype(np.int64)
        if y.size and y.min() < 0:
            raise ValueError(f"class indices must be >= 0, got {y.min()}")
        if self.num_class is not None and y.size and y.max() >= self.num_class:
            raise ValueError(
                f"class index {y.max()} is out of range for num_class={self.num_class}"
            )
        return y

    def n_outputs(self, y):
        n_classes = self.num_class if self.num_class is not None else int(y.max()) + 1
        return max(n_classes, 2)

    def init_score(self, y, weight):
        n_classes = self.n_outputs(y)
        prior = np.bincount(y, weights=weight, minlength=n_classes)
        prior = np.maximum(prior / prior.sum(), 1e-12)
        log_prior = np.log(prior)
        return log_prior - log_prior.mean()

    def gradients(self, y, raw, weight):
        grad = np.empty(raw.shape, dtype=G_H_DTYPE)
        hess = np.empty(raw.shape, dtype=G_H_DTYPE)
        softmax_gradients(y, raw, _kernel_weight(weight), grad, hess, self._threads(raw))
        return grad, hess

    def transform(self, raw):
        return softmax(raw, axis=1)


class SigmoidCrossEntropy(Loss):
    """Binary and multi-label: y (n,) or (n, d) with values in [0, 1], each
    output an independent logistic loss."""

    name = "sigmoid"
    default_metric = "logloss"

    def prepare_target(self, y):
        y = np.asarray(y, dtype=np.float64)
        _require_finite(y, self.name)
        if y.size and (y.min() < 0 or y.max() > 1):
            raise ValueError(
                f"objective 'sigmoid' takes targets in [0, 1], got values in "
                f"[{y.min()}, {y.max()}]"
            )
        return np.ascontiguousarray(y.reshape(-1, 1) if y.ndim == 1 else y)

    def n_outputs(self, y):
        return y.shape[1]

    def init_score(self, y, weight):
        mean = np.clip(np.average(y, axis=0, weights=weight), 1e-12, 1 - 1e-12)
        return logit(mean)

    def gradients(self, y, raw, weight):
        grad = np.empty(raw.shape, dtype=G_H_DTYPE)
        hess = np.empty(raw.shape, dtype=G_H_DTYPE)
        sigmoid_gradients(y, raw, _kernel_weight(weight), grad, hess, self._threads(raw))
        return grad, hess

    def transform(self, raw):
        return expit(raw)


class CustomObjective(Loss):
    """A user's objective(y_true, raw_pred) -> (grad, hess), as in LightGBM and
    XGBoost: y_true as given (2-D (n, d), or 1-D), raw_pred (n, d); grad (n, d)
    and hess (n, d) or (n, 1). Sample weights multiply what it returns.

    Predictions are raw scores. A saved model names the objective "custom" and
    loads without the function (it predicts, it cannot be trained further)."""

    name = "custom"
    default_metric = None

    def __init__(self, function=None, num_class=None, n_threads=1):
        super().__init__(n_threads)
        self.function = function
        self.num_class = num_class

    def prepare_target(self, y):
        y = np.asarray(y, dtype=np.float64)
        _require_finite(y, self.name)
        return y if y.ndim == 2 or self.num_class is not None else y.reshape(-1, 1)

    def n_outputs(self, y):
        return self.num_class if self.num_class is not None else y.shape[1]

    def init_score(self, y, weight):
        return np.zeros(self.n_outputs(y))

    def gradients(self, y, raw, weight):
        if self.function is None:
            raise ValueError("this model's custom objective was not saved with it; pass "
                             "objective=<your function> to train again")
        grad, hess = (np.asarray(a) for a in self.function(y, raw))
        n, d = raw.shape
        if grad.shape != (n, d):
            raise ValueError(f"the custom objective returned grad of shape {grad.shape}, "
                             f"expected {(n, d)}")
        if hess.shape not in ((n, d), (n, 1)):
            raise ValueError(f"the custom objective returned hess of shape {hess.shape}, "
                             f"expected {(n, d)} or {(n, 1)}")
        for label, array in (("grad", grad), ("hess", hess)):
            if array.dtype.kind not in "biuf" or not np.all(np.isfinite(array)):
                raise ValueError(f"the custom objective returned a {label} that is not "
                                 "all finite numbers")
        if weight is not None:
            grad, hess = grad * weight[:, None], hess * weight[:, None]
        grad = np.ascontiguousarray(grad, dtype=G_H_DTYPE)
        hess = np.ascontiguousarray(hess, dtype=G_H_DTYPE)
        if not (np.all(np.isfinite(grad)) and np.all(np.isfinite(hess))):
            raise ValueError("the custom objective returned values beyond float32's range")
        return grad, hess


BUILTIN_LOSSES = {loss.name: loss for loss in (SquaredError, SoftmaxCrossEntropy, SigmoidCrossEntropy)}
# Names a saved model may carry besides the trainable losses.
LOADABLE_ONLY = {CustomObjective.name: CustomObjective}


def make_loss(objective, num_class=None, n_threads=1):
    """A loss instance: a user's function, or a loss registered by name (gbmo's
    own and any plugin's, see gbmo.registry)."""
    if callable(objective):
        return CustomObjective(objective, num_class, n_threads)
    if objective in LOADABLE_ONLY:
        return LOADABLE_ONLY[objective](num_class=num_class, n_threads=n_threads)
    from . import registry

    return registry.create_loss(objective, num_class=num_class, n_threads=n_threads)
