"""The Loss protocol and the built-in losses.

A loss turns targets and raw scores (n, d) into float32 gradients (n, d) and
hessians (n, d), or (n, 1) when one hessian serves every output; a constant
(n, 1) hessian lets the histograms count rows instead of summing hessians.
"""
import copy
import inspect
import numbers

import numpy as np

from ._core import G_H_DTYPE
from ._core._losses import (sigmoid_gradients, sigmoid_transform, softmax_gradients,
                            softmax_transform, squared_error_gradients)
from .metrics import tweedie_metric
from .objective_results import ObjectiveResult, check_gradient_pair, check_objective_result
from .parallel import WORK_PER_ELEMENT, caller_thread_count, threads_for
from .validation import MAX_GRADIENT_INPUT

_UNIT_WEIGHT = np.empty(0)


def _kernel_weight(weight):
    return _UNIT_WEIGHT if weight is None else np.ascontiguousarray(weight, dtype=np.float64)


def _transformed(kernel, raw, loss, columns_only=False):
    """kernel's transform of raw scores (n, d), or (n,) as a column unless
    columns_only, into a new float64 array, on loss's threads."""
    raw = np.asarray(raw, dtype=np.float64)
    if raw.ndim != 2 and (columns_only or raw.ndim != 1):
        raise ValueError(f"raw scores must be {'' if columns_only else '(n,) or '}(n, d), got "
                         f"shape {raw.shape}")
    out = np.empty(raw.shape)
    kernel(raw if raw.ndim == 2 else raw[:, None], out if out.ndim == 2 else out[:, None],
           loss._threads(raw))
    return out


class Loss:
    """Base of every loss. Subclasses set `name` and `default_metric` and
    implement the methods below; targets reach them already validated."""

    name = None
    default_metric = None
    # True when a NaN target at (i, j) means "label missing": it then gets zero
    # gradient and hessian and the row still trains the other outputs.
    masks_missing_targets = False
    # the ONNX form of transform (Booster.to_onnx): "identity", "sigmoid",
    # "softmax" (over the outputs) or "exp"; a class that overrides transform
    # says it again (gbmo.onnx_export.declared_transform), or has none
    onnx_transform = "identity"

    def __init__(self, n_threads=1):
        # training sets it before every round (the thread governor may change
        # it), so a loss reads it when it computes instead of keeping a copy
        self.n_threads = n_threads

    def _threads(self, raw):
        # a prediction's own count (Booster.predict's n_threads) before the run's
        return threads_for(caller_thread_count(self.n_threads), raw.size * WORK_PER_ELEMENT)

    def __sklearn_clone__(self):
        """scikit-learn's clone of an estimator whose objective is this loss
        (GridSearchCV, cross_val_score) copies it: it would otherwise rebuild
        it from get_params(deep=False), which losses do not take."""
        return copy.deepcopy(self)

    def prepare_target(self, y):
        """Validates y for this loss and returns it in the form the other methods take."""
        raise NotImplementedError

    def n_outputs(self, y):
        """The number of outputs d for the prepared target y."""
        raise NotImplementedError

    def init_score(self, y, weight):
        """The constant raw score (d,) that the first tree starts from."""
        raise NotImplementedError

    def gradients(self, y, raw, weight):
        """(grad (n, d), hess (n, d) or (n, 1)) at raw scores raw (n, d), the
        sample weights weight (n,) or None applied; or an ObjectiveResult.
        y, raw and weight are copies the loss may write into (see
        gbmo.registry's contract)."""
        raise NotImplementedError

    def transform(self, raw):
        """Raw scores -> predictions (identity, probabilities, ...)."""
        return raw

    # Optional: value(y, raw) -> the loss summed over rows and outputs (unweighted),
    # whose derivatives gradients() returns; tests check them by finite differences.
    # Optional: renew_leaf_values(y, raw, weight, rows, leaf_start, leaf_stop, outputs)
    # -> (n_leaves, len(outputs)) values set from each leaf's residuals before the
    # learning rate (leaf l's rows are rows[leaf_start[l]:leaf_stop[l]]), replacing
    # the gradients' -G / (H + lambda) (NaN: keep it): what LightGBM does for quantile
    # and L1, whose constant hessian makes the gradients' values poor steps.


def masks_missing_targets(loss):
    """Whether loss takes NaN targets as missing: its masks_missing_targets,
    False for a plugin's loss that is no gbmo.Loss and does not say."""
    return getattr(loss, "masks_missing_targets", False)


def _require_finite(y, loss_name, allow_missing=False):
    """Targets must be finite numbers within float32's reach; a loss that masks
    missing targets takes NaN (not inf) and needs an observed value per output."""
    bad = np.isinf(y) if allow_missing else ~np.isfinite(y)
    if np.any(bad):
        allowed = "NaN marks a missing label, infinities are not allowed" if allow_missing \
            else "it needs finite targets"
        raise ValueError(f"the target contains {'infinite' if allow_missing else 'NaN or infinite'}"
                         f" values; objective '{loss_name}': {allowed}")
    magnitude = np.nanmax(np.abs(y)) if y.size and not np.all(np.isnan(y)) else 0.0
    if magnitude > MAX_GRADIENT_INPUT:
        raise ValueError(
            f"the target has values of magnitude {magnitude:.3g}; objective "
            f"'{loss_name}' takes |y| <= {MAX_GRADIENT_INPUT:g} (gradients are float32): "
            "rescale it"
        )
    if allow_missing and y.size:
        unobserved = np.flatnonzero(np.all(np.isnan(y.reshape(len(y), -1)), axis=0))
        if unobserved.size:
            raise ValueError(f"objective '{loss_name}': output(s) {unobserved.tolist()} have no "
                             "observed target (every value is NaN)")


# the least spread of an output's targets: float32's smallest normal number,
# below which the float32 gradients y - raw lose their digits (at 1e-46 they
# were all 0, and the model one constant without a word)
MIN_TARGET_SPREAD = float(np.finfo(np.float32).tiny)


def _require_spread(y, loss_name):
    """Refuses an output whose targets differ, but by less than
    MIN_TARGET_SPREAD (the large side is refused by _require_finite)."""
    columns = y.reshape(len(y), -1)
    if not columns.size:
        return
    observed = ~np.all(np.isnan(columns), axis=0)
    spread = np.full(columns.shape[1], np.inf)
    spread[observed] = (np.nanmax(columns[:, observed], axis=0)
                        - np.nanmin(columns[:, observed], axis=0))
    tiny = np.flatnonzero((spread > 0) & (spread < MIN_TARGET_SPREAD))
    if tiny.size:
        j = int(tiny[0])
        raise ValueError(f"the target's values of output {j} differ by at most {spread[j]:.3g}; "
                         f"objective '{loss_name}' takes a spread of at least "
                         f"{MIN_TARGET_SPREAD:.3g} (gradients are float32, whose smallest "
                         "normal number it is): rescale it")


def _observed_mean(y, weight):
    """Per-output weighted mean over the observed (non-NaN) targets."""
    observed = ~np.isnan(y)
    w = observed * (1.0 if weight is None else weight[:, None])
    return (np.where(observed, y, 0.0) * w).sum(axis=0) / np.maximum(w.sum(axis=0), 1e-300)


def _masked_hessian(y, weight):
    """(n, 1) weights when every target is observed, else (n, d) with 0 where
    y is missing. Made in float32 at once: a float64 column and its copy
    were two more large allocations a round, whose fresh pages cost 0.05-0.1
    ms a round at 100,000 rows."""
    column = (np.ones((len(y), 1), dtype=G_H_DTYPE) if weight is None
              else weight.astype(G_H_DTYPE)[:, None])
    if not np.isnan(np.sum(y)):
        return column
    return (~np.isnan(y) * column).astype(G_H_DTYPE)


# the largest class index: num_class is an int32 parameter (params.PARAMS)
MAX_CLASS_INDEX = 2**31 - 2


class ClassIndexTarget:
    """Targets as class indices 0 .. num_class - 1 (any count when num_class
    is None), for the multi-class losses; d = num_class, else max label + 1,
    at least 2."""

    def prepare_target(self, y):
        y = np.asarray(y)
        if y.ndim != 1:
            raise ValueError(
                f"objective '{self.name}' takes a 1-D array of class indices, got shape {y.shape}"
            )
        if y.dtype.kind == "f" and np.isnan(y).any():
            raise ValueError(f"objective '{self.name}' takes a class index for every row, and y "
                             f"holds NaN at {np.isnan(y).sum()} row(s): a missing class is not "
                             "taken; drop those rows")
        if y.dtype.kind not in "iub" and not (
            y.dtype.kind == "f" and np.all(np.isfinite(y)) and np.all(y == np.round(y))
        ):
            raise ValueError(
                f"objective '{self.name}' takes integer class indices 0 .. num_class - 1; "
                "encode string or float labels first (e.g. numpy.unique(y, return_inverse=True))"
            )
        if y.size and y.dtype.kind in "iuf" and y.max() > MAX_CLASS_INDEX:
            # before the cast, which wraps 2**63 and beyond to negative numbers
            row = int(np.argmax(y))
            raise ValueError(f"class index {y[row].item()!r} at row {row} is out of range; "
                             f"allowed: 0 .. {MAX_CLASS_INDEX} (num_class at most "
                             f"{MAX_CLASS_INDEX + 1})")
        y = y.astype(np.int64)
        if y.size and y.min() < 0:
            raise ValueError(f"class indices must be >= 0, got {y.min()}")
        if self.num_class is not None and y.size and y.max() >= self.num_class:
            raise ValueError(
                f"class index {y.max()} is out of range for num_class={self.num_class}"
            )
        return y

    def n_outputs(self, y):
        return max(self.num_class if self.num_class is not None else int(y.max()) + 1, 2)


def with_class_count(loss, n_classes):
    """loss, or when it takes class indices and counts them from the labels
    (num_class None), a copy that knows it has n_classes (the given loss,
    maybe the user's, is left alone): a refit, a continued run or a cv fold
    whose labels lack the last classes then still has them all."""
    if n_classes is None or not isinstance(loss, ClassIndexTarget) or loss.num_class is not None:
        return loss
    counted = copy.copy(loss)
    counted.num_class = n_classes
    return counted


class SquaredError(Loss):
    """Multi-output regression: 1/2 sum_j (raw_j - y_j)^2; hessian 1 (times the
    weight). NaN targets are missing labels."""

    name = "mse"
    builtin = True  # see objective_results.is_builtin
    default_metric = "rmse"
    masks_missing_targets = True

    def prepare_target(self, y):
        y = np.asarray(y, dtype=np.float64)
        _require_finite(y, self.name, allow_missing=True)
        _require_spread(y, self.name)
        return np.ascontiguousarray(y.reshape(-1, 1) if y.ndim == 1 else y)

    def n_outputs(self, y):
        return y.shape[1]

    def init_score(self, y, weight):
        return _observed_mean(y, weight)

    def value(self, y, raw):
        return 0.5 * np.nansum((raw - y) ** 2)

    def gradients(self, y, raw, weight):
        grad = np.empty(raw.shape, dtype=G_H_DTYPE)
        squared_error_gradients(y, raw, _kernel_weight(weight), grad, self._threads(raw))
        return grad, _masked_hessian(y, weight)


class SoftmaxCrossEntropy(ClassIndexTarget, Loss):
    """Multi-class: y holds class indices 0 .. d-1; raw scores are logits.
    Diagonal hessian p (1 - p), as in GBDT-MO section III-A."""

    name = "softmax"
    onnx_transform = "softmax"
    builtin = True
    default_metric = "logloss"

    def __init__(self, num_class=None, n_threads=1):
        super().__init__(n_threads)
        self.num_class = num_class

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

    def value(self, y, raw):
        from scipy.special import logsumexp  # imported on use: it costs `import gbmo` 0.25 s

        return float(np.sum(logsumexp(raw, axis=1) - raw[np.arange(len(y)), y]))

    def transform(self, raw):
        return _transformed(softmax_transform, raw, self, columns_only=True)


class SigmoidCrossEntropy(Loss):
    """Binary and multi-label: y (n,) or (n, d) with values in [0, 1], each
    output an independent logistic loss. NaN targets are missing labels.

    scale_pos_weight s weighs the positive part of the loss, -(s y log p +
    (1 - y) log(1 - p)), as LightGBM's binary objective does (its gradients
    are the 0/1 labels' times s on the positive rows). is_unbalance weighs
    each output's minority class by the majority's count over its own (sums
    of y and 1 - y over observed labels), as LightGBM does: the positives when
    they are fewer, else the negatives. Neither moves the starting score, as
    in LightGBM."""

    name = "sigmoid"
    onnx_transform = "sigmoid"
    builtin = True
    default_metric = "logloss"
    masks_missing_targets = True

    def __init__(self, n_threads=1, scale_pos_weight=1.0, is_unbalance=False):
        super().__init__(n_threads)
        if isinstance(scale_pos_weight, bool) or not isinstance(scale_pos_weight, numbers.Real) \
                or not 0.0 < scale_pos_weight < np.inf:
            raise ValueError(f"objective {self.name!r}: scale_pos_weight must be a finite number "
                             f"> 0, got {scale_pos_weight!r}")
        if not isinstance(is_unbalance, (bool, np.bool_)):
            raise TypeError(f"objective {self.name!r}: is_unbalance must be True or False, got "
                            f"{is_unbalance!r}")
        if is_unbalance and scale_pos_weight != 1.0:
            raise ValueError(f"objective {self.name!r}: give is_unbalance or scale_pos_weight, "
                             "not both (as in LightGBM)")
        self.scale_pos_weight, self.is_unbalance = float(scale_pos_weight), bool(is_unbalance)

    def get_params(self):
        return {"scale_pos_weight": self.scale_pos_weight, "is_unbalance": self.is_unbalance}

    def _class_weights(self, y):
        """(positive weights, negative weights) per output (d,), or None when
        every weight is 1."""
        if self.is_unbalance:
            positives, negatives = np.nansum(y, axis=0), np.nansum(1.0 - y, axis=0)
            both = (positives > 0) & (negatives > 0)  # else unweighted, as in LightGBM
            ratio = np.divide(negatives, positives, out=np.ones_like(positives), where=both)
            return np.maximum(ratio, 1.0), np.maximum(1.0 / ratio, 1.0)
        if self.scale_pos_weight == 1.0:
            return None
        return np.full(y.shape[1], self.scale_pos_weight), np.ones(y.shape[1])

    def prepare_target(self, y):
        y = np.asarray(y, dtype=np.float64)
        _require_finite(y, self.name, allow_missing=True)
        if y.size and (np.nanmin(y) < 0 or np.nanmax(y) > 1):
            raise ValueError(
                f"objective 'sigmoid' takes targets in [0, 1], got values in "
                f"[{np.nanmin(y)}, {np.nanmax(y)}]" + (
                    " (LightGBM's binary reads a label above 0 as 1: give y > 0 for that)"
                    if np.nanmin(y) < 0 else "")
            )
        return np.ascontiguousarray(y.reshape(-1, 1) if y.ndim == 1 else y)

    def n_outputs(self, y):
        return y.shape[1]

    def init_score(self, y, weight):
        from scipy.special import logit

        return logit(np.clip(_observed_mean(y, weight), 1e-12, 1 - 1e-12))

    def value(self, y, raw):
        # a y log(1 + e^-raw) + b (1 - y) log(1 + e^raw), stable for large |raw|
        weights = self._class_weights(y)
        positive, negative = (1.0, 1.0) if weights is None else weights
        return np.nansum(positive * y * (np.logaddexp(0.0, raw) - raw)
                         + negative * (1.0 - y) * np.logaddexp(0.0, raw))

    def gradients(self, y, raw, weight):
        grad = np.empty(raw.shape, dtype=G_H_DTYPE)
        hess = np.empty(raw.shape, dtype=G_H_DTYPE)
        sigmoid_gradients(y, raw, _kernel_weight(weight), grad, hess, self._threads(raw))
        weights = self._class_weights(y)
        if weights is None:
            return grad, hess
        # with class weights a (positive) and b (negative), f = a y + b (1 - y):
        # grad = w (p f - a y) = f w (p - y) + w y (1 - y) (b - a), hess = f w p (1 - p);
        # missing labels keep their zeros
        positive, negative = weights
        observed = ~np.isnan(y)
        labels = np.where(observed, y, 0.0)
        factor = positive * labels + negative * (1.0 - labels)
        w = 1.0 if weight is None else np.asarray(weight, dtype=np.float64)[:, None]
        grad[:] = factor * grad + w * labels * (1.0 - labels) * (negative - positive) * observed
        hess *= factor.astype(G_H_DTYPE)
        return grad, hess

    def transform(self, raw):
        return _transformed(sigmoid_transform, raw, self)


class OneVsAllCrossEntropy(ClassIndexTarget, SigmoidCrossEntropy):
    """Multi-class as one binary problem per class, LightGBM's multiclassova:
    y holds class indices 0 .. d-1 as for softmax, and output j is the logit
    of "the row is of class j", a logistic loss of its own. Each class's
    probability is its own sigmoid, so a row's need not sum to 1 (as in
    LightGBM). scale_pos_weight and is_unbalance weigh each class's positive
    rows as sigmoid's do its outputs'."""

    name = "multiclassova"
    builtin = True
    masks_missing_targets = False

    def __init__(self, num_class=None, n_threads=1, scale_pos_weight=1.0, is_unbalance=False):
        super().__init__(n_threads, scale_pos_weight, is_unbalance)
        self.num_class = num_class

    @staticmethod
    def _one_hot(y, n_classes):
        labels = np.zeros((len(y), n_classes))
        labels[np.arange(len(y)), y] = 1.0
        return labels

    def init_score(self, y, weight):
        return super().init_score(self._one_hot(y, self.n_outputs(y)), weight)

    def value(self, y, raw):
        return super().value(self._one_hot(y, raw.shape[1]), raw)

    def gradients(self, y, raw, weight):
        return super().gradients(self._one_hot(y, raw.shape[1]), raw, weight)


# The names LightGBM's and XGBoost's train-API objectives give their second
# parameter, (preds, train_data) / (predt, dtrain): such a function reads its
# labels from it. XGBoost's DMatrix answers get_weight() with an empty array
# where LightGBM's Dataset answers None.
_LIGHTGBM_DATA_NAMES = ("train_data", "train_set", "dataset")
_XGBOOST_DATA_NAMES = ("dtrain", "data")
# scikit-learn-API objectives (y_true, y_pred, weight) weigh rows themselves
_WEIGHT_NAMES = ("weight", "sample_weight")


def weight_parameter(function):
    """The name of function's parameter for the sample weights, which it is
    given by (weight, sample_weight): its third parameter so named
    (LightGBM's (y_true, y_pred, weight)), or a keyword-only one
    (scikit-learn's metrics, XGBoost's objectives: sample_weight=); None."""
    try:
        parameters = list(inspect.signature(function).parameters.values())
    except (TypeError, ValueError):
        return None
    for position, parameter in enumerate(parameters):
        keyword_only = parameter.kind is inspect.Parameter.KEYWORD_ONLY
        if parameter.name in _WEIGHT_NAMES and (position == 2 or keyword_only):
            return parameter.name
    return None


def _parameter_names(function):
    try:
        return [p.name for p in inspect.signature(function).parameters.values()]
    except (TypeError, ValueError):
        return []


class _RowsView:
    """What a LightGBM- or XGBoost-style objective reads of its Dataset, for
    the rows the gradients are taken on (the training rows, or refit's)."""

    def __init__(self, label, weight, no_weight):
        self.label = label
        self.weight = no_weight if weight is None else weight

    def get_label(self):
        return self.label

    def get_weight(self):
        return self.weight

    def num_data(self):
        return len(self.label)

    num_row = num_data  # XGBoost's name


class CustomObjective(Loss):
    """A user's objective(y_true, raw_pred) -> (grad, hess), as in LightGBM's
    and XGBoost's estimators: y_true (n, d) and raw_pred (n, d), both (n,)
    for one output of a 1-D target (as those libraries hand them); grad and
    hess (n, d), hess also (n, 1), each (n,) for one output. Sample weights
    multiply what it returns.

    A function whose second parameter is named as LightGBM's or XGBoost's
    train API names it (train_data, train_set, dataset; dtrain, data) is
    called as they call it, objective(preds, train_data): preds (n,) for one
    output of a 1-D target, else (n, d); train_data answers get_label(),
    get_weight() (None without weights, or XGBoost's empty array),
    num_data() and num_row(); the function weighs the rows itself, as there,
    and may return (n,) arrays for one output. One whose third parameter is
    weight or sample_weight, scikit-learn's API form (y_true, y_pred,
    weight), or that takes sample_weight= by keyword only (XGBoost's form),
    gets the weights (or None) and weighs the rows itself too.

    NaN targets reach the function as they are (it decides what they mean). It
    may also return an ObjectiveResult to separate split and update gradients.

    Predictions are raw scores. A saved model names the objective "custom" and
    loads without the function: it predicts, and continues (init_model) when
    the function is given again."""

    name = "custom"
    default_metric = None

    def __init__(self, function=None, num_class=None, n_threads=1):
        super().__init__(n_threads)
        self.function = function
        self.num_class = num_class
        names = _parameter_names(function)
        second = names[1] if len(names) > 1 else None
        self.reads_a_dataset = second in _LIGHTGBM_DATA_NAMES + _XGBOOST_DATA_NAMES
        self.no_weight = np.empty(0) if second in _XGBOOST_DATA_NAMES else None
        self.weight_parameter = weight_parameter(function)
        self.one_dimensional_target = False  # told by handed_as_target

    def __setstate__(self, state):
        # an instance pickled before e4c31a0 holds a weight flag and no target shape
        if "takes_weight" in state:
            state = dict(state)
            takes_weight = state.pop("takes_weight")
            state["weight_parameter"] = (weight_parameter(state.get("function"))
                                         if takes_weight else None)
        vars(self).update({"one_dimensional_target": False, **state})

    def prepare_target(self, y):
        y = np.asarray(y, dtype=np.float64)
        _require_finite(y, self.name, allow_missing=True)
        return y if y.ndim == 2 or self.num_class is not None else y.reshape(-1, 1)

    def n_outputs(self, y):
        return self.num_class if self.num_class is not None else y.shape[1]

    def init_score(self, y, weight):
        return np.zeros(self.n_outputs(y))

    def gradients(self, y, raw, weight):
        if self.function is None:
            raise ValueError("this model's custom objective was not saved with it; pass "
                             "objective=<your function> to train again")
        # y and raw are copies (objective_results.HandedArrays), as LightGBM and
        # XGBoost hand theirs: a function may write into them (preds -= labels)
        result, weight = self._called(y, raw, weight)
        if isinstance(result, ObjectiveResult):
            if self._one_column(y, raw):  # its arrays may be (n,), as its inputs were
                result = ObjectiveResult(*(np.reshape(a, (-1, 1)) if np.ndim(a) == 1 else a
                                           for a in result))
            return self._weighted_result(result, raw.shape, weight)
        return check_gradient_pair(result, *raw.shape, "the custom objective", weight)

    def _one_column(self, y, raw):
        return (self.one_dimensional_target and raw.shape[1] == 1 and y.ndim == 2
                and self.num_class is None)

    def _called(self, y, raw, weight):
        """(the function's result, the weights gbmo still applies to it), the
        function called in the form its parameters name (see the class)."""
        # one output of a 1-D target is handed 1-D, as LightGBM and XGBoost hand it
        if self._one_column(y, raw):
            y, raw = y[:, 0], raw[:, 0]
        if self.reads_a_dataset:
            return self.function(raw, _RowsView(y, weight, self.no_weight)), None
        if self.weight_parameter is not None:
            return self.function(y, raw, **{self.weight_parameter: weight}), None
        return self._called_with_labels(y, raw), weight

    def _called_with_labels(self, y, raw):
        """function(y_true, raw_pred); one that reads a Dataset under another
        parameter name fails on the labels array, and is told how to name it."""
        try:
            return self.function(y, raw)
        except AttributeError as err:
            if "get_label" not in str(err) and "get_weight" not in str(err):
                raise
            names = _parameter_names(self.function)
            raise TypeError(
                "the custom objective reads a Dataset (get_label / get_weight), as LightGBM's "
                "or XGBoost's train calls it, but gbmo called it as f(y_true, raw_pred): name "
                "its second parameter train_data (or dtrain) so that gbmo calls it as "
                f"f(preds, train_data); it is {names[1] if len(names) > 1 else None!r}"
            ) from err

    @staticmethod
    def _weighted_result(result, shape, weight):
        result = check_objective_result(result, *shape, "the custom objective")
        if weight is None:
            return result
        column = weight[:, None].astype(G_H_DTYPE)
        return check_objective_result(tuple(a * column for a in result), *shape,
                                      "the custom objective (times the sample weights)")


def handed_as_target(loss, target):
    """loss, a CustomObjective told whether target (as given, before
    prepare_target) is 1-D, so that its one output is handed 1-D; any other
    loss as it is."""
    if isinstance(loss, CustomObjective):
        loss.one_dimensional_target = np.ndim(target) == 1
    return loss


def _task_spec(task, position):
    """(loss name, output columns, loss parameters) of one task of a MultiTaskLoss."""
    if not isinstance(task, (tuple, list)) or len(task) not in (2, 3):
        raise ValueError(f"MultiTaskLoss task {position} must be (loss name, columns) or "
                         f"(loss name, columns, parameters), got {task!r}")
    name, columns, params = (*task, None) if len(task) == 2 else task
    if not isinstance(name, str):
        raise ValueError(f"MultiTaskLoss task {position}: the loss must be a registered name "
                         f"(so a saved model can be loaded), got {name!r}")
    columns = [columns] if isinstance(columns, (int, np.integer)) else columns
    if not isinstance(columns, (list, tuple, np.ndarray)) or not len(columns) or not all(
            isinstance(c, (int, np.integer)) and not isinstance(c, bool) and c >= 0
            for c in columns):
        raise ValueError(f"MultiTaskLoss task {position} ({name}): columns must be a non-empty "
                         f"list of output indices >= 0, got {columns!r}")
    if params is not None and not isinstance(params, dict):
        raise ValueError(f"MultiTaskLoss task {position} ({name}): parameters must be a dict, "
                         f"got {params!r}")
    return name, [int(c) for c in columns], params


class MultiTaskLoss(Loss):
    """Different losses for different outputs of one model, e.g. a main
    classification task with auxiliary regression tasks (MT-GBM's setting):

        MultiTaskLoss([("sigmoid", [0]), ("mse", [1, 2])], weights=[1.0, 0.5])

    Each task is (registered loss name, its output columns[, its parameters]);
    the columns of all tasks cover the outputs 0 .. d-1 once each, and each
    task's loss maps one target column to one output (softmax and
    multiclassova, whose targets are class indices, cannot be tasks). A
    task's weight multiplies its gradients and hessians, so it counts more or
    less in the split gains.
    Transforms and default metrics are per task ("logloss[0]", "rmse[1,2]").
    Also reachable by name: objective="multitask", objective_params={"tasks": ...}.
    """

    name = "multitask"

    def __init__(self, tasks, weights=None, n_threads=1):
        self.losses = []
        super().__init__(n_threads)
        if not isinstance(tasks, (list, tuple)) or not tasks:
            raise ValueError(f"MultiTaskLoss takes a non-empty list of tasks, got {tasks!r}")
        specs = [_task_spec(task, i) for i, task in enumerate(tasks)]
        claimed = [c for _, columns, _ in specs for c in columns]
        if len(set(claimed)) != len(claimed):
            raise ValueError(f"MultiTaskLoss: an output belongs to two tasks (columns {claimed})")
        if sorted(claimed) != list(range(len(claimed))):
            raise ValueError(f"MultiTaskLoss: the tasks' columns must cover the outputs 0 .. "
                             f"{len(claimed) - 1} once each, got {sorted(claimed)}")
        weights = np.ones(len(specs)) if weights is None else np.asarray(weights, dtype=float)
        if weights.shape != (len(specs),) or not np.all(np.isfinite(weights)) \
                or np.any(weights <= 0):
            raise ValueError(f"MultiTaskLoss: weights must be {len(specs)} finite numbers > 0, "
                             f"got {weights.tolist()}")
        self.specs, self.weights = specs, weights
        self.losses = [make_loss(name, n_threads=n_threads, objective_params=params)
                       for name, _, params in specs]
        for loss in self.losses:
            if isinstance(loss, ClassIndexTarget):
                raise ValueError(f"{loss.name!r} cannot be a task of a MultiTaskLoss: its "
                                 "target is one column of class indices for several outputs; "
                                 "use 'sigmoid' per class column instead")
        self.masks_missing_targets = all(masks_missing_targets(loss) for loss in self.losses)

    @property
    def n_threads(self):
        return self._n_threads

    @n_threads.setter
    def n_threads(self, n_threads):
        self._n_threads = n_threads
        for loss in self.losses:
            loss.n_threads = n_threads

    def get_params(self):
        return {"tasks": [[name, columns, params] for name, columns, params in self.specs],
                "weights": self.weights.tolist()}

    @property
    def default_metric(self):
        # a tweedie task's metric at its own variance power (tweedie_metric)
        return [tweedie_metric(f"{loss.default_metric}[{','.join(map(str, columns))}]", loss)
                for loss, (_, columns, _) in zip(self.losses, self.specs)]

    def _tasks(self):
        return zip(self.losses, (columns for _, columns, _ in self.specs), self.weights)

    def prepare_target(self, y):
        y = np.asarray(y, dtype=np.float64)
        d = sum(len(columns) for _, columns, _ in self.specs)
        if y.ndim != 2 or y.shape[1] != d:
            raise ValueError(f"this MultiTaskLoss covers {d} outputs, so it takes targets of "
                             f"shape (n, {d}); got {y.shape}")
        prepared = np.empty_like(y)
        for loss, columns, _ in self._tasks():
            part = np.asarray(loss.prepare_target(np.ascontiguousarray(y[:, columns])))
            if part.shape != (len(y), len(columns)) or part.dtype != np.float64:
                raise ValueError(f"loss {loss.name!r} cannot be a task of a MultiTaskLoss: it "
                                 "must map each target column to one output")
            prepared[:, columns] = part
        return prepared

    def n_outputs(self, y):
        return y.shape[1]

    def init_score(self, y, weight):
        score = np.empty(y.shape[1])
        for loss, columns, _ in self._tasks():
            score[columns] = loss.init_score(np.ascontiguousarray(y[:, columns]), weight)
        return score

    def gradients(self, y, raw, weight):
        grad = np.empty(raw.shape, dtype=G_H_DTYPE)
        hess = np.empty(raw.shape, dtype=G_H_DTYPE)
        for position, (loss, columns, task_weight) in enumerate(self._tasks()):
            task_grad, task_hess = check_gradient_pair(
                loss.gradients(np.ascontiguousarray(y[:, columns]),
                               np.ascontiguousarray(raw[:, columns]), weight),
                len(y), len(columns), f"task {position} ({loss.name!r}) of objective "
                                      "'multitask'")
            grad[:, columns] = task_weight * task_grad
            hess[:, columns] = task_weight * task_hess
        return grad, hess

    def value(self, y, raw):
        return sum(weight * loss.value(y[:, columns], raw[:, columns])
                   for loss, columns, weight in self._tasks())

    def renew_leaf_values(self, y, raw, weight, rows, leaf_start, leaf_stop, outputs):
        """The renewed values of the outputs whose task's loss renews its
        leaves (quantile, l1), NaN for the others (they keep their gradients'
        values)."""
        values = np.full((len(leaf_start), len(outputs)), np.nan)
        for loss, columns, _ in self._tasks():
            renew = getattr(loss, "renew_leaf_values", None)
            wanted = [(position, columns.index(j)) for position, j in enumerate(outputs)
                      if j in columns]
            if renew is None or not wanted:
                continue
            positions, local = (list(part) for part in zip(*wanted))
            values[:, positions] = renew(np.ascontiguousarray(y[:, columns]),
                                         np.ascontiguousarray(raw[:, columns]), weight, rows,
                                         leaf_start, leaf_stop, local)
        return values

    def transform(self, raw):
        out = np.empty(raw.shape)
        for loss, columns, _ in self._tasks():
            out[:, columns] = loss.transform(raw[:, columns])
        return out

# Names a saved model may carry besides the trainable losses.
LOADABLE_ONLY = {CustomObjective.name: CustomObjective}


def losses_renewing_leaves(loss):
    """[(name, outputs)] of the losses in loss that set leaf values from the
    leaves' residuals (renew_leaf_values: quantile, l1) rather than from the
    gradients: a MultiTaskLoss's tasks that do, with their outputs, or loss
    itself, with outputs None; empty when none does."""
    if isinstance(loss, MultiTaskLoss):
        return [(task_loss.name, columns) for task_loss, columns, _ in loss._tasks()
                if losses_renewing_leaves(task_loss)]
    return [(loss.name, None)] if getattr(loss, "renew_leaf_values", None) is not None else []


def quantile_levels(loss, n_outputs):
    """(n_outputs,) the quantile level each output of loss predicts, for the
    quantile metric; NaN where an output predicts none (a MultiTaskLoss's
    other tasks); None when no output does. A loss predicts quantiles when it
    holds `alphas`: one level for all its outputs, or one per output, or its
    levels for each of several targets in turn (gbmo-losses' quantile, and
    l1 and mape at 0.5), which its output_levels(n_outputs) gives."""
    if isinstance(loss, MultiTaskLoss):
        levels = np.full(n_outputs, np.nan)
        for task_loss, columns, _ in loss._tasks():
            task_levels = quantile_levels(task_loss, len(columns))
            if task_levels is not None:
                levels[columns] = task_levels
        return None if np.isnan(levels).all() else levels
    alphas = getattr(loss, "alphas", None)
    if alphas is None:
        return None
    per_output = getattr(loss, "output_levels", None)
    levels = alphas if per_output is None else per_output(n_outputs)
    return np.broadcast_to(np.asarray(levels, dtype=np.float64), (n_outputs,))


def make_loss(objective, num_class=None, n_threads=1, objective_params=None):
    """A loss instance: a user's function, a Loss instance, or a loss registered
    by name (gbmo's own and any plugin's, see gbmo.registry) built with
    objective_params."""
    if num_class == 1:
        # LightGBM's default num_class, which its objectives without classes take
        loss = make_loss(objective, None, n_threads, objective_params)
        if isinstance(loss, ClassIndexTarget):
            raise ValueError(f"num_class=1: objective {loss.name!r} takes class indices and "
                             "needs at least 2 classes (num_class=1 is LightGBM's default for "
                             "objectives without classes)")
        return loss
    if isinstance(objective, Loss):
        objective.n_threads = n_threads
        return with_class_count(objective, num_class)
    if callable(objective):
        return CustomObjective(objective, num_class, n_threads)
    reserved = sorted({"num_class", "n_threads"} & set(objective_params or {}))
    if reserved:
        raise ValueError(f"objective_params may not give {' or '.join(map(repr, reserved))}: "
                         "num_class and n_threads are training parameters of their own; give "
                         "them beside the objective (num_class=...)")
    if objective in LOADABLE_ONLY:
        return LOADABLE_ONLY[objective](num_class=num_class, n_threads=n_threads)
    from . import registry

    return registry.create_loss(objective, num_class=num_class, n_threads=n_threads,
                                **(objective_params or {}))
