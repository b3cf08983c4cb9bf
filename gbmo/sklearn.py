"""scikit-learn estimators: GBMORegressor and GBMOClassifier.

scikit-learn is an optional dependency: this module imports it, `import gbmo`
does not import this module. Use it as

    from gbmo.sklearn import GBMORegressor, GBMOClassifier

Both estimators are thin wrappers around `gbmo.train` and `gbmo.Booster`:
the constructor stores the parameters unchanged, `fit` validates them through
gbmo's own parameter checks (errors name the parameter) and trains one booster,
available afterwards as `booster_`.

Choices written down here (see also the class docstrings):

- `n_estimators` is the number of boosting rounds; `n_iter_` the rounds that
  were actually run (fewer with early stopping), all kept in `booster_`.
  `best_iteration_` and `n_estimators_` are LightGBM's: after early stopping
  both are the best round, up to which `predict` goes (where LightGBM cuts
  its model); without it `best_iteration_` is 0, `n_estimators_` is
  `n_iter_` and `predict` uses every round.
- Early stopping (`early_stopping_rounds`) watches every set of `eval_set`
  (the first to stall decides, as in LightGBM) when one is given, otherwise a held-out `validation_fraction` of the
  training data (stratified for classes, seeded by `random_state`), named
  "validation" in `evals_result_`. User eval sets are named "valid_0",
  "valid_1", ... as in LightGBM. A hold-out the data cannot give (a class of
  one row, fewer rows than classes on either side) is refused before
  training, naming eval_set; scikit-learn's HistGradientBoostingClassifier
  fails there too, with train_test_split's errors, rather than fall back to
  an unstratified split, which could leave a class out of training.
- `random_state=None` is the seed 0: two fits give the same model, as
  LightGBM's estimators do (scikit-learn's convention would draw a seed from
  numpy's global state; pass a RandomState instance for that).
- The defaults are gbmo's (`min_samples_leaf=20` etc.). On very small data
  sets (tens of rows) such a model cannot split at all; lower
  `min_samples_leaf` there.
"""
import inspect
import math
import numbers
import warnings
from collections.abc import Mapping

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.model_selection import train_test_split
from sklearn.utils import assert_all_finite
from sklearn.utils.class_weight import compute_class_weight
from sklearn.utils.multiclass import check_classification_targets, type_of_target
from sklearn.utils.validation import (check_array, check_consistent_length, check_is_fitted,
                                      check_random_state, column_or_1d)

from . import estimator_file, registry
from .booster import Booster, xgboost_rounds
from .callback import checked_min_delta, early_stopping, log_evaluation, stops_early
from .categorical import (align_dataframe_categories, by_dtype, dataframe_categories,
                          named_positions, resolve_categorical_features,
                          text_columns_as_categories)
from .dataset import Dataset
from .engine import metric_names, train
from .foreign_keywords import METHOD_EQUIVALENTS, refuse_foreign_keywords
from .losses import (ClassIndexTarget, CustomObjective, Loss, make_loss, masks_missing_targets,
                     weight_parameter)
from .metrics import SPARSE_OUTPUT_METRICS, canonical_metric, is_known, unknown_metric_message
from .params import (ALIASES, CONTROL_ALIASES, canonical_objective, checked_value, keys_naming,
                     metric_list, names_no_metric, resolve_params)
from .sparse_output import (POSITIVE_RAW_SCORE, check_sparse_labels, make_sparse_loss,
                            split_sparse_params)
from .validation import (as_pandas_table, check_column_count, check_column_order,
                         check_dataframe_columns, check_name_order, target_names,
                         check_init_score, check_weight, is_dataframe, listed_names,
                         model_frame_values, numeric_frame, one_of, user_stacklevel,
                         TEXT_CATEGORIES_HINT)

try:
    from sklearn.utils.validation import validate_data as _validate_data
except ImportError:  # the estimators' tags and checks are scikit-learn 1.6's
    import sklearn

    raise ImportError(f"gbmo's estimators need scikit-learn >= 1.6 (pip install "
                      f"'gbmo[sklearn]'); this is {sklearn.__version__}") from None

__all__ = ["GBMORegressor", "GBMOClassifier"]

# LightGBM's early stopping options, which its estimators take among their
# params: here they shape the early stopping of early_stopping_rounds.
_STOPPING_OPTIONS = ("first_metric_only", "early_stopping_min_delta")


def _refused_control(alias):
    """Why an estimator refuses one of LightGBM's training controls, and what
    it takes instead."""
    if CONTROL_ALIASES[alias] == "num_iterations":
        return f"parameter {alias!r} is not taken by the estimators: the rounds are n_estimators"
    return (f"parameter {alias!r} is not taken by the estimators: early stopping is "
            "early_stopping_rounds=N, watching eval_set (or a validation_fraction of the "
            "rows), with first_metric_only=True and early_stopping_min_delta beside it if "
            "needed; or fit(callbacks=[gbmo.early_stopping(N, ...)])")


# The estimators' parameters that are not gbmo.train's: every other one is
# passed to it under its own name.
_ESTIMATOR_ONLY = ("n_estimators", "early_stopping_rounds", "validation_fraction",
                   "random_state", "importance_type", "class_weight", "warm_start",
                   "eval_metric")  # XGBoost's, in the constructor: fit's eval_metric
# parameters checked only once y has set the objective
_NEED_THE_OBJECTIVE = ("scale_pos_weight", "is_unbalance")

_VALIDATION_NAME = "validation"


def _without_sparse_output_values(params):
    """params for the checks that do not know y yet: a metric naming only the
    sparse-output path's metrics (precision@k, ...), sparse_threshold, its
    own objective (squared_hinge) and top_k beside split='dense' (a sparse y
    sets split='sparse' itself) are left to that path's own check with a
    sparse y, and to fit's (train's) with a dense one."""
    objective_keys = keys_naming(params, "objective")
    top_k_waits_for_y = params.get("split", "dense") == "dense"
    params = {key: value for key, value in params.items() if key != "sparse_threshold"
              and not (key == "top_k" and top_k_waits_for_y)
              and not (key in objective_keys and value == "squared_hinge")}
    metric = params.get("metric")
    names = metric if isinstance(metric, list) else [metric]
    if metric is not None and all(name in SPARSE_OUTPUT_METRICS for name in names):
        return {**params, "metric": None}
    return params
# scikit-learn's checks of X: scipy sparse X is binned and predicted without
# densifying; NaN is a missing value and +-inf lands in the last or first bin,
# as gbmo.train takes them (and LightGBM's estimators)
_X_CHECKS = {"dtype": [np.float64, np.float32], "accept_sparse": ["csr", "csc"],
             "ensure_all_finite": False}
_PREDICT_BLOCK_VALUES = 1 << 22  # predict for a sparse y: rows per block x labels
_LEAST_TRAINING_ROWS = 2  # as gbmo.Dataset takes a training set
# 1: lambda_l2's default became None; 2: max_leaves's (see _GBMOModel.__setstate__)
_PICKLE_VERSION = 2


def _refuse_missing_labels(y, name="y"):
    """Names the rows of a classifier's labels (name: which) that are None,
    pd.NA or NaN among text: scikit-learn's checks fail on them with
    "boolean value of NA is ambiguous" or numpy's sort's "'<' not supported"."""
    if y.dtype.kind != "O":
        return
    missing = [i for i, label in enumerate(np.ravel(y).tolist()) if label is None
               or type(label).__name__ == "NAType"
               or (isinstance(label, float) and math.isnan(label))]
    if missing:
        raise ValueError(f"{name} holds a missing label (None, pd.NA or NaN) at {len(missing)} "
                         f"row(s), the first row {missing[0]}; a classifier needs a label in "
                         "every row: drop those rows")


def _numeric_X(X, pandas_categories, n_features, feature_names=None, name="X"):
    """X with a DataFrame's category columns as their codes in the training's
    categories (pandas_categories of n_features columns named feature_names, see
    gbmo.categorical.align_dataframe_categories); refuses, naming X,
    what scikit-learn's conversion would refuse with numpy's bare "could not
    convert string to float": a DataFrame's columns of a non-numeric dtype
    (object, string, datetime, ...; numeric, bool and category columns pass),
    and an array or list of strings or objects that are not all numbers (an
    object array of numbers passes, as in scikit-learn). Another library's
    table (polars, pyarrow) is read as a pandas DataFrame (see
    gbmo.validation.as_pandas_table). Text columns where training had
    category columns become category columns first."""
    X = as_pandas_table(X, name)
    # before the text columns are read by position, which a reordered frame misplaces
    check_column_order(X, feature_names, name)
    if pandas_categories:  # else scikit-learn's check names a missing column
        check_column_count(X, n_features, feature_names, name)
    X = text_columns_as_categories(X, pandas_categories)
    check_dataframe_columns(X, name)
    if is_dataframe(X):
        return numeric_frame(align_dataframe_categories(X, pandas_categories, n_features,
                                                        feature_names, name))
    if sp.issparse(X):
        return X
    dtype = getattr(X, "dtype", None)
    if dtype is None:
        if not isinstance(X, (list, tuple)):
            return X
        try:
            dtype = np.asarray(X).dtype
        except (TypeError, ValueError):
            return X  # ragged and the like: scikit-learn's own error follows
    if getattr(dtype, "kind", None) not in ("O", "U", "S"):
        return X
    try:
        np.asarray(X, dtype=np.float64)
    except (TypeError, ValueError) as err:
        raise type(err)(f"{name} must be numeric (int, float or bool values, NaN for missing); "
                        f"{name} of dtype {dtype} has a value that is not a number: {err}. "
                        f"Convert or encode such columns as numbers first{TEXT_CATEGORIES_HINT}"
                        ) from None
    return X


def _missing_labels(y):
    """Where y's labels are missing (NaN): nowhere in a y that is not float."""
    return np.isnan(y) if y.dtype.kind == "f" else np.zeros(y.shape, dtype=bool)


def _check_missing_targets(y, loss):
    """Refuses NaN in y, a missing label, unless the objective takes it, as in
    gbmo.train: one that masks missing labels (mse, sigmoid, a MultiTaskLoss
    of such), or a function, which receives them as they are."""
    if masks_missing_targets(loss) or isinstance(loss, CustomObjective) \
            or not np.isnan(y).any():
        return
    raise ValueError(f"y contains NaN, which marks a missing label, and objective "
                     f"{loss.name!r} does not take missing labels; allowed: NaN with an "
                     "objective that masks them (mse, sigmoid, gbmo-losses' quantile, l1, "
                     "mape and huber, a gbmo.MultiTaskLoss of such) "
                     "or a function; else fill or drop those rows")


def _check_early_stopping_watches(rounds, eval_set, evaluates_a_metric):
    """Refuses, before training, early stopping (early_stopping_rounds, or a
    gbmo.early_stopping callback) with no set or no metric to watch, naming
    fit's arguments, where the callback's own error names train's."""
    asked = ("early_stopping_rounds" if rounds is not None
             else "the early stopping callback in callbacks")
    if rounds is None and eval_set is None:
        raise ValueError(f"{asked} needs a set to watch, and fit has none; allowed: "
                         "eval_set=[(X_valid, y_valid)], or early_stopping_rounds=N in place "
                         "of the callback, which holds out validation_fraction of the rows "
                         "to watch")
    if not evaluates_a_metric:
        raise ValueError(f"{asked} needs a metric to watch, and none is evaluated "
                         "(metric='None' without an eval_metric, or an objective function, "
                         "which has no metric of its own); allowed: the metric parameter, or "
                         "fit's eval_metric (names or functions)")


def _takes_class_indices(objective):
    """Whether objective (a name, a Loss or a function) takes a class index
    per row and has an output per class (softmax, multiclassova, a plugin's
    such loss), rather than 0/1 labels."""
    if isinstance(objective, str):
        name = canonical_objective(objective)
        if name not in registry.LOSSES:  # the sparse path's own, or unknown: refused later
            return False
        factory = registry.LOSSES.get(name)
        return isinstance(factory, type) and issubclass(factory, ClassIndexTarget)
    return isinstance(objective, ClassIndexTarget)


_CLASSES_SHOWN = 10  # classes listed in an error, the rest counted


def _listed_classes(classes):
    shown = ", ".join(map(repr, classes[:_CLASSES_SHOWN].tolist()))
    more = len(classes) - _CLASSES_SHOWN
    return shown + (f" and {more} more" if more > 0 else "")


def _log_period(verbose):
    """fit's verbose as log_evaluation's period (0: no log)."""
    if verbose is None or isinstance(verbose, bool):
        return int(bool(verbose))
    if isinstance(verbose, numbers.Integral) and verbose >= 0:
        return int(verbose)
    raise ValueError(f"verbose must be True, False or a number of rounds >= 0, got {verbose!r}")


def _one_per_pair(name, values, n_pairs):
    """An eval_* argument as a list with one entry per eval_set pair (None:
    None for each; a single array: the one pair's)."""
    if values is None:
        return [None] * n_pairs
    if isinstance(values, (np.ndarray, str, Mapping)):
        values = [values]
    values = list(values)
    if len(values) != n_pairs:
        raise ValueError(f"{name} has {len(values)} entries for {n_pairs} eval_set pairs; "
                         "allowed: one per pair")
    return values


def _check_class_weight(class_weight, name="parameter 'class_weight'"):
    """class_weight's form (None, "balanced" or {label: weight >= 0}), checked
    before any work (name: where it was given); its labels are checked
    against the classes in fit."""
    if class_weight is None or (isinstance(class_weight, str) and class_weight == "balanced"):
        return
    allowed = "allowed: None, 'balanced' or a dict {class label: weight >= 0}"
    if not isinstance(class_weight, Mapping):
        raise ValueError(f"{name} = {class_weight!r} is not allowed; {allowed}")
    for label, weight in class_weight.items():
        if isinstance(weight, bool) or not isinstance(weight, numbers.Real) \
                or not np.isfinite(weight) or weight < 0:
            raise ValueError(f"{name} = {class_weight!r} has the weight {weight!r} for class "
                             f"{label!r}; {allowed} (finite numbers)")


def _listed(eval_metric):
    """An eval_metric (None, one, or a list or tuple of them) as a list."""
    if eval_metric is None:
        return []
    return list(eval_metric) if isinstance(eval_metric, (list, tuple)) else [eval_metric]


def _eval_metrics(eval_metric):
    """(metric names, custom metric functions for train's feval) of fit's
    eval_metric: a name, a function (y_true, y_pred[, weight]) -> (name,
    value, is_higher_better), or a list of them, as LightGBM's fit takes."""
    # "None" names no metric, alone or in a list, as in params' metric
    items = [item for item in _listed(metric_list(eval_metric)) if not names_no_metric(item)]
    names = [canonical_metric(item) for item in items if isinstance(item, str)]
    for item in items:
        if not isinstance(item, str) and not callable(item):
            raise TypeError(f"eval_metric {item!r} is not allowed; allowed: a metric name, a "
                            "function (y_true, y_pred[, weight]) -> (name, value, "
                            "is_higher_better), or a list of them")
    for name in names:
        # a sparse y's metrics (precision@k, ...) are its path's to check
        if not is_known(name) and name not in SPARSE_OUTPUT_METRICS:
            raise ValueError(f"eval_metric: {unknown_metric_message(name)}")
    return names, [_as_feval(item) for item in items if not isinstance(item, str)]


def _as_feval(function):
    """A scikit-learn style metric function as train's feval(preds, eval_data);
    one that cannot be called as (y_true, y_pred) or (y_true, y_pred, weight)
    is refused before training. The weights go to a keyword-only
    sample_weight (scikit-learn's metrics, as XGBoost passes them) or a
    third parameter. One that returns a number alone (a scikit-learn
    metric, as XGBoost takes them) is recorded under its function's name,
    lower being better, as XGBoost minimises it."""
    try:
        signature = inspect.signature(function)
    except (TypeError, ValueError):  # a builtin without a signature: called with two
        signature = None
    keyword = weight_parameter(function)
    if signature is not None and keyword is not None \
            and not _binds(signature, 2, **{keyword: None}):
        keyword = None  # it needs more than the weights, as a group
    positional = keyword is None and signature is not None and _binds(signature, 3)
    if signature is not None and keyword is None and not positional \
            and not _binds(signature, 2):
        raise TypeError(f"eval_metric {getattr(function, '__qualname__', function)!r} must "
                        "take (y_true, y_pred) or (y_true, y_pred, weight); a group argument, "
                        "as LightGBM's ranking metrics take, is not supported")

    def feval(preds, eval_data):
        weight = (eval_data.get_weight(),) if positional else ()
        by_name = {keyword: eval_data.get_weight()} if keyword is not None else {}
        labels = eval_data.get_label()
        try:
            result = function(labels, preds, *weight, **by_name)
        except ValueError as err:
            values = labels.data if sp.issparse(labels) else np.asarray(labels, dtype=np.float64)
            if not np.isnan(values).any():
                raise
            raise ValueError(f"eval_metric {feval.__qualname__!r} failed on a y_true that holds "
                             f"missing labels (NaN), which gbmo trains with ({err}); give a "
                             "metric that skips them, or gbmo's own metric names (rmse, mae, "
                             "...), which do") from err
        if isinstance(result, numbers.Real) and not isinstance(result, bool):
            return getattr(function, "__name__", "eval_metric"), float(result), False
        return result

    feval.__qualname__ = getattr(function, "__qualname__", repr(function))
    return feval


def _missing_as_nan(y):
    """An eval_set target as float64, pandas' NA (nullable and Arrow columns)
    NaN, a missing label, as fit reads the training target."""
    return check_array(y, ensure_all_finite="allow-nan", ensure_2d=False, dtype=np.float64,
                       ensure_min_samples=0, input_name="eval_set y")


def _binds(signature, n_positional, **keywords):
    try:
        signature.bind(*range(n_positional), **keywords)
    except TypeError:
        return False
    return True


def _check_int_param(name, value, low, allow_none=False):
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < low:
        raise ValueError(
            f"parameter {name!r} must be an integer >= {low}"
            f"{' or None' if allow_none else ''}, got {value!r}"
        )
    return int(value)


def _is_default(value, default):
    """value == default, for values that may be arrays (never a default here)."""
    try:
        return bool(value == default)
    except (TypeError, ValueError):
        return False


def _constructor_defaults():
    """The estimators' named parameters and their defaults."""
    return {name: parameter.default for name, parameter in
            inspect.signature(_GBMOModel.__init__).parameters.items()
            if parameter.default is not parameter.empty}


def _refuse_dataset(name):
    raise TypeError(f"{name} is a gbmo.Dataset, where the estimators take arrays or DataFrames "
                    "(X, y), as scikit-learn's (CatBoost's take a Pool there): give its X and "
                    "y, or train the Dataset with gbmo.train")


def _eval_pairs(eval_set, eval_X, eval_y):
    """eval_set, or the (X, y) pairs of LightGBM's eval_X / eval_y: a matrix
    and its target, or tuples of them."""
    if isinstance(eval_set, Dataset) or isinstance(eval_set, (list, tuple)) and any(
            isinstance(pair, Dataset) for pair in eval_set):
        _refuse_dataset("eval_set")
    if eval_X is None and eval_y is None:
        return eval_set
    if eval_set is not None:
        raise ValueError("give eval_set or eval_X / eval_y, not both (as in LightGBM)")
    if eval_X is None or eval_y is None:
        raise ValueError("eval_X and eval_y go together: give both, or eval_set")
    matrices = eval_X if isinstance(eval_X, tuple) else (eval_X,)
    targets = eval_y if isinstance(eval_y, tuple) else (eval_y,)
    if len(matrices) != len(targets):
        raise ValueError(f"eval_X holds {len(matrices)} set(s) and eval_y {len(targets)}: give "
                         "one target per matrix")
    return list(zip(matrices, targets))


class _GBMOModel(BaseEstimator):
    """The parameters, fit and predict machinery shared by both estimators."""

    # what every fit sets besides booster_ and the metric records (load_model checks them)
    FITTED_ATTRIBUTES = ("n_features_in_", "n_outputs_", "n_iter_", "best_iteration_")

    def __init__(
        self,
        n_estimators=100,
        learning_rate=0.1,
        boosting="gbdt",
        drop_rate=0.1,
        max_drop=50,
        skip_drop=0.5,
        max_leaves=None,
        max_depth=-1,
        max_bins=255,
        lambda_l2=None,
        lambda_l1=0.0,
        min_samples_leaf=20,
        min_child_weight=1e-3,
        min_gain=0.0,
        subsample=1.0,
        subsample_freq=1,
        data_sample_strategy="bagging",
        top_rate=0.2,
        other_rate=0.1,
        goss_renew_leaves=True,
        colsample_bytree=1.0,
        colsample_bynode=1.0,
        extra_trees=False,
        tree_mode="multi_output",
        split="dense",
        top_k=None,
        growth="bestfirst",
        cat_smooth=10.0,
        cat_l2=10.0,
        min_data_per_group=0,
        max_cat_threshold=32,
        max_cat_to_onehot=4,
        max_delta_step=0.0,
        scale_pos_weight=1.0,
        is_unbalance=False,
        monotone_constraints=None,
        interaction_constraints=None,
        ensembler=None,
        ensembler_params=None,
        early_stopping_rounds=None,
        validation_fraction=0.1,
        n_threads=None,
        adaptive_threads=True,
        random_state=None,
        verbosity=0,
        importance_type="gain",
        class_weight=None,
        metric=None,
        warm_start=False,
        **kwargs,
    ):
        self.n_estimators = n_estimators
        self.learning_rate = learning_rate
        self.boosting = boosting
        self.drop_rate = drop_rate
        self.max_drop = max_drop
        self.skip_drop = skip_drop
        self.max_leaves = max_leaves
        self.max_depth = max_depth
        self.max_bins = max_bins
        self.lambda_l2 = lambda_l2
        self.lambda_l1 = lambda_l1
        self.min_samples_leaf = min_samples_leaf
        self.min_child_weight = min_child_weight
        self.min_gain = min_gain
        self.subsample = subsample
        self.subsample_freq = subsample_freq
        self.data_sample_strategy = data_sample_strategy
        self.top_rate = top_rate
        self.other_rate = other_rate
        self.goss_renew_leaves = goss_renew_leaves
        self.colsample_bytree = colsample_bytree
        self.colsample_bynode = colsample_bynode
        self.extra_trees = extra_trees
        self.tree_mode = tree_mode
        self.split = split
        self.top_k = top_k
        self.growth = growth
        self.cat_smooth = cat_smooth
        self.cat_l2 = cat_l2
        self.min_data_per_group = min_data_per_group
        self.max_cat_threshold = max_cat_threshold
        self.max_cat_to_onehot = max_cat_to_onehot
        self.max_delta_step = max_delta_step
        self.scale_pos_weight = scale_pos_weight
        self.is_unbalance = is_unbalance
        self.monotone_constraints = monotone_constraints
        self.interaction_constraints = interaction_constraints
        self.ensembler = ensembler
        self.ensembler_params = ensembler_params
        self.early_stopping_rounds = early_stopping_rounds
        self.validation_fraction = validation_fraction
        self.n_threads = n_threads
        self.adaptive_threads = adaptive_threads
        self.random_state = random_state
        self.verbosity = verbosity
        self.importance_type = importance_type
        self.class_weight = class_weight
        self.warm_start = warm_start
        self.metric = metric
        # the names of gbmo.train's other parameters and LightGBM's names, as
        # LightGBM's estimators take them; their values are attributes (see get_params)
        self._other_names = ()
        # not set_params: every name given here counts, two of one parameter collide at fit
        self._hold_other_params(kwargs)

    # -- to be provided by the subclasses -----------------------------------
    def _prepare_target(self, y):
        """Validated y -> (encoded target for gbmo, objective params, stratify labels or None)."""
        raise NotImplementedError

    def _encode_eval_target(self, y, n_rows):
        raise NotImplementedError

    def _weigh_classes(self, sample_weight, labels, class_weight=None,
                       name="parameter 'class_weight'"):
        """sample_weight times the class weights of the rows' encoded labels
        (the classifier's class_weight, or class_weight given under name);
        a regressor's are unchanged, and refuse a class_weight."""
        if class_weight is not None:
            raise ValueError(f"{name} weighs classes, for GBMOClassifier; a regressor's rows "
                             "take eval_sample_weight")
        return sample_weight

    def __getstate__(self):
        return {**super().__getstate__(), "_gbmo_pickle_version": _PICKLE_VERSION}

    def __setstate__(self, state):
        # An estimator pickled by an earlier gbmo lacks the parameters added
        # since (get_params, and so clone and fit, would fail): their defaults.
        state = {**_constructor_defaults(), **state}
        version = state.pop("_gbmo_pickle_version", 0)
        # earlier gbmo kept the other parameters' values in a dict beside their attributes
        state.setdefault("_other_names", tuple(state.pop("_other_params", ())))
        # defaults that were numbers are None now (gbmo.train's defaults, set
        # by other parameters), which an alias given later would collide with
        if version < 1 and state["lambda_l2"] == 1.0:
            state["lambda_l2"] = None
        if version < 2 and state["max_leaves"] == 31:
            state["max_leaves"] = None
        super().__setstate__(state)

    # -- parameters ---------------------------------------------------------
    def get_params(self, deep=True):
        """The constructor's parameters, and the others given to it or to
        set_params: any of gbmo.train's, by its name or an alias (LightGBM's
        num_leaves, reg_lambda, n_jobs, ...), as LightGBM's estimators take
        **kwargs. An alias replaces the named parameter it stands for, which
        must then keep its default. Their values are the estimator's
        attributes, as the named parameters' are, so that `est.num_leaves = 7`
        counts as set_params(num_leaves=7) does."""
        return {**super().get_params(deep=deep),
                **{name: getattr(self, name) for name in self._other_names}}

    def set_params(self, **params):
        """As scikit-learn's, for the other parameters too; a parameter set
        under one name replaces what the estimator held under another name of
        it (set_params(max_leaves=15) on GBMORegressor(num_leaves=7), as a
        GridSearchCV over max_leaves does), so only names given together
        collide at fit."""
        named = self._get_param_names()
        for key in params:
            self._forget_other_names(key, params, named)
        super().set_params(**{k: v for k, v in params.items() if k in named})
        self._hold_other_params({k: v for k, v in params.items() if k not in named})
        return self

    def _hold_other_params(self, params):
        for key, value in params.items():
            setattr(self, key, value)
        # a new tuple rather than one changed in place, which a copy.copy of
        # the estimator would share
        self._other_names += tuple(key for key in params if key not in self._other_names)

    def _other_param(self, name, default=None):
        """The value of one of the other parameters, or default when not given."""
        return getattr(self, name) if name in self._other_names else default

    def _forget_other_names(self, key, given, named):
        """Drops the other names of key's parameter that the estimator holds
        and `given` does not: its aliases among the other parameters, and the
        named parameter (back to its default) when key is an alias of it."""
        name = ALIASES.get(key, key)
        forgotten = [k for k in self._other_names if k not in given and ALIASES.get(k, k) == name]
        for other in forgotten:
            delattr(self, other)
        self._other_names = tuple(k for k in self._other_names if k not in forgotten)
        if name != key and name in named and name not in given:
            setattr(self, name, _constructor_defaults()[name])

    def _random(self):
        """(numpy RandomState for the validation split, gbmo seed). None is the
        fixed seed 0, as LightGBM's estimators are reproducible by default
        (scikit-learn's convention would draw from numpy's global state)."""
        if isinstance(self.random_state, np.random.Generator):
            # as LightGBM's estimators: a seed drawn from it, which seeds the rest
            seed = int(self.random_state.integers(np.iinfo(np.int32).max))
            return np.random.RandomState(seed), seed
        try:
            rng = check_random_state(0 if self.random_state is None else self.random_state)
        except ValueError as err:
            raise ValueError(f"parameter 'random_state' is invalid: {err}; allowed: None, an "
                             "integer, a numpy RandomState or Generator") from None
        if self.random_state is None or isinstance(self.random_state, numbers.Integral):
            return rng, int(self.random_state or 0)
        return rng, int(rng.randint(np.iinfo(np.int32).max))

    def _gbmo_params(self, seed, objective_params, leave_out=()):
        """train's parameters, checked (errors name the parameter)."""
        params = {name: value for name, value in self.get_params(deep=False).items()
                  if name not in _ESTIMATOR_ONLY + leave_out}
        defaults = _constructor_defaults()
        for alias in self._other_names:
            if alias in _STOPPING_OPTIONS:  # fit hands them to its early stopping
                del params[alias]
                continue
            if alias in CONTROL_ALIASES:
                raise ValueError(_refused_control(alias))
            name = ALIASES.get(alias, alias)
            if name == "seed":
                raise ValueError(f"parameter {alias!r} is random_state here")
            if alias == name or name not in params:
                continue
            if name not in defaults or not _is_default(params[name], defaults[name]):
                raise ValueError(f"parameter {name!r} is given twice (as {name!r} and as "
                                 f"{alias!r}); give it once")
            del params[name]
        given = next(iter(keys_naming(params, "objective")), None)
        if given is not None and self._takes_objective(params[given]):
            # the user's objective, with what y decides besides (num_class, ...)
            objective_params = {k: v for k, v in objective_params.items() if k != "objective"}
        elif given is not None:
            del params[given]
        # what y decides replaces the user's aliases of it (num_classes, checked to agree)
        for name in objective_params:
            for key in keys_naming(params, name):
                if key != name:
                    del params[key]
        params.update(seed=seed, **objective_params)
        resolve_params(_without_sparse_output_values(params))
        return params

    def _takes_objective(self, objective):
        """Whether an objective given as a parameter is trained as given, rather
        than the one y decides: always for the regressor."""
        return True

    def _refuse_other_keywords(self, method, keywords):
        """TypeError for keywords method does not take, naming gbmo's way for
        XGBoost's (base_margin at predict, ...)."""
        refuse_foreign_keywords(f"{type(self).__name__}.{method}", keywords,
                                METHOD_EQUIVALENTS)

    def _own_default(self, name):
        """The estimator's own parameter name, its default when None (XGBoost's
        and LightGBM's "not set", which XGBoost's get_params is full of)."""
        value = getattr(self, name)
        if value is None:
            return inspect.signature(_GBMOModel.__init__).parameters[name].default
        return value

    def _check_own_params(self):
        n_estimators = _check_int_param("n_estimators", self._own_default("n_estimators"), 1)
        importance_type = self._own_default("importance_type")
        Booster.importance_kind(importance_type,
                                f"parameter 'importance_type' = {importance_type!r}")
        rounds = self.early_stopping_rounds
        if rounds is not None and (isinstance(rounds, bool)
                                   or not isinstance(rounds, numbers.Integral)):
            raise ValueError(f"parameter 'early_stopping_rounds' must be an integer (<= 0 or "
                             f"None: no early stopping), got {rounds!r}")
        if rounds is not None and rounds <= 0:
            rounds = None  # as LightGBM's estimators and gbmo.train: no early stopping
        fraction = self.validation_fraction
        if isinstance(fraction, bool) or not isinstance(fraction, numbers.Real) \
                or not 0.0 < fraction < 1.0:
            raise ValueError(
                f"parameter 'validation_fraction' must be a number in (0, 1), got {fraction!r}"
            )
        if not isinstance(self._own_default("warm_start"), (bool, np.bool_)):
            raise ValueError(f"parameter 'warm_start' must be True or False, got "
                             f"{self.warm_start!r}")
        _check_class_weight(self.class_weight)
        self._check_stopping_options(rounds)
        return n_estimators, rounds, float(fraction)

    def _check_stopping_options(self, rounds):
        first_only = self._other_param("first_metric_only", False)
        if not isinstance(first_only, (bool, np.bool_)):
            raise ValueError(f"parameter 'first_metric_only' must be True or False, got "
                             f"{first_only!r}")
        deltas = checked_min_delta(self._other_param("early_stopping_min_delta", 0.0))
        # their defaults without early stopping do nothing, as in LightGBM (a
        # ported parameter set, a search over early_stopping_rounds=[None, 10])
        shaping = [name for name, value in (("first_metric_only", first_only),
                                            ("early_stopping_min_delta", any(deltas)))
                   if value]
        if shaping and rounds is None:
            raise ValueError(f"parameter {shaping[0]!r} shapes the early stopping of "
                             "early_stopping_rounds, which is not set; give "
                             "early_stopping_rounds=N too")

    # -- fit ----------------------------------------------------------------
    def fit(self, X, y=None, sample_weight=None, init_score=None, eval_set=None, eval_names=None,
            eval_sample_weight=None, eval_init_score=None, eval_metric=None,
            feature_name="auto", categorical_feature="auto", callbacks=None, init_model=None,
            verbose=False, *, eval_X=None, eval_y=None, sample_weight_eval_set=None,
            base_margin=None, base_margin_eval_set=None, xgb_model=None,
            eval_class_weight=None, **other_libraries_keywords):
        """Trains the model. The arguments are LightGBM's, in its order, and
        XGBoost's and CatBoost's verbose (True: log every round's metrics; a
        number n: every n rounds).

        eval_set: a list of (X, y) pairs evaluated every round and recorded in
        `evals_result_` ("valid_0", "valid_1", ...); with
        `early_stopping_rounds`, the first set to stall stops training (no
        `validation_fraction` split is made then). A pair of fit's own X and
        y (the same objects) is the training set, recorded as "training"
        and never watched by early stopping, as in LightGBM. eval_names: the
        pairs' names instead; eval_sample_weight: their rows' weights (a
        list, one array or None per pair; the training pair keeps
        sample_weight). feature_name: the features' names ("auto": a
        DataFrame's columns, else f0, f1, ...). eval_metric's
        metrics come first, as in LightGBM. callbacks: gbmo callbacks
        (plain callables receiving a `gbmo.callback.CallbackEnv`), LightGBM's
        and XGBoost's TrainingCallback objects (see gbmo.training_callback).
        init_score / eval_init_score (a list, one per eval_set pair): each
        row's starting raw scores (see gbmo.Dataset). init_model: a Booster,
        a model file's path or a fitted gbmo estimator to continue (see
        gbmo.train), as in LightGBM. eval_metric: metric names evaluated beside
        the objective's, and functions (y_true, y_pred[, weight]) -> (name,
        value, is_higher_better) with y_true the encoded target (class
        indices, 0/1 labels) and y_pred the booster's prediction for it:
        (n, n_classes) probabilities, (n,) for a binary (but multiclass or
        multiclassova) or 1-D target, computed from raw scores that include
        init_score, as in LightGBM;
        early stopping watches them all. categorical_feature: the categorical
        features' indices or names, or "auto", the DataFrame's category
        columns (see gbmo.categorical), as in LightGBM. eval_X / eval_y:
        LightGBM's other spelling of eval_set, a matrix and its target or
        tuples of them. XGBoost's names: sample_weight_eval_set is
        eval_sample_weight, base_margin init_score, base_margin_eval_set
        eval_init_score, xgb_model init_model. eval_class_weight (the
        classifier's, in LightGBM's classifier's place): each pair's
        class_weight (None, "balanced" over the pair's own labels, or a dict),
        times its eval_sample_weight; the training class_weight weighs the
        training rows only, as in LightGBM.
        """
        self._refuse_other_keywords("fit", other_libraries_keywords)
        if isinstance(X, Dataset):
            _refuse_dataset("X")
        eval_sample_weight = one_of("eval_sample_weight", eval_sample_weight,
                                    "sample_weight_eval_set", sample_weight_eval_set)
        init_score = one_of("init_score", init_score, "base_margin", base_margin)
        eval_init_score = one_of("eval_init_score", eval_init_score, "base_margin_eval_set",
                                 base_margin_eval_set)
        init_model = one_of("init_model", init_model, "xgb_model", xgb_model)
        eval_set = _eval_pairs(eval_set, eval_X, eval_y)
        n_estimators, rounds, fraction = self._check_own_params()
        warm = self._own_default("warm_start") and self.__sklearn_is_fitted__()
        if warm:
            init_model, n_estimators = self._warm_start(init_model, n_estimators)
        # XGBoost's eval_metric in the constructor replaces the objective's
        # metric (its functions join fit's, which LightGBM adds beside it)
        own_names, own_functions = _eval_metrics(self._other_param("eval_metric"))
        if own_names or own_functions:
            if self.metric is not None:
                raise ValueError("parameter 'metric' is given twice (as 'metric' and "
                                 "'eval_metric'); give it once")
        extra_metrics, fevals = _eval_metrics(eval_metric)
        fevals += own_functions
        log_period = _log_period(verbose)
        given_X, given_y = X, y
        if rounds is not None and self.boosting == "dart":
            raise ValueError(f"early_stopping_rounds={rounds} is not taken with "
                             "boosting='dart': every round rescales the rounds it drops, so "
                             "the model of a best round is not kept; set "
                             "early_stopping_rounds=None")
        own = self.get_params(deep=False)
        given_as = [key for key in keys_naming(own, "categorical_feature") if own[key] is not None]
        if given_as and not by_dtype(categorical_feature):
            raise ValueError(f"the categorical features are given twice: as the parameter "
                             f"{given_as[0]!r} and as fit(categorical_feature=...); give them "
                             "once")
        table = as_pandas_table(X)
        feature_name = listed_names(feature_name)  # read twice below
        renamed = None if isinstance(feature_name, str) and feature_name == "auto" \
            else feature_name
        X = text_columns_as_categories(table, named_positions(
            table, categorical_feature, own, renamed))
        pandas_categories = dataframe_categories(X)
        X = _numeric_X(X, pandas_categories, len(X.columns) if is_dataframe(X) else 0)
        if warm and n_estimators == 0:  # no round to add: X and y checked against the model
            check_consistent_length(_validate_data(self, X, reset=False, **_X_CHECKS), y)
            self._check_continued_classes(self, y, "warm_start=True's fitted model")
            return self
        X, y = self._validate_X_y(X, y)
        sample_weight = check_weight(sample_weight, X.shape[0], "sample_weight")
        init_score = check_init_score(init_score, X.shape[0])
        if isinstance(init_model, _GBMOModel):
            self._check_continued_classes(init_model, y, "warm_start=True's fitted model"
                                          if init_model is self else "init_model")
            init_model = init_model.booster_
        rng, seed = self._random()
        # errors before any work on y, but for what needs the objective y decides
        self._gbmo_params(seed, {}, leave_out=_NEED_THE_OBJECTIVE)
        target, objective_params, stratify = self._prepare_target(y)
        if rounds is not None and eval_set is None:
            self._check_hold_out(X.shape[0], fraction, stratify)
        if fevals and sp.issparse(target):
            raise ValueError("eval_metric functions are not taken with a sparse y yet: its path "
                             "has its own metrics, which eval_metric may name (precision@k, "
                             "ndcg@k, micro_f1, macro_f1)")
        sample_weight = self._weigh_classes(sample_weight, stratify)
        params = self._gbmo_params(seed, objective_params)
        if own_names or own_functions:
            params["metric"] = own_names or "None"
        if sp.issparse(target):  # its metrics and loss are the sparse-output path's own
            gbmo_params, objective, threshold, sparse_metrics = split_sparse_params(params)
            resolved = resolve_params(gbmo_params)
        else:
            resolved = resolve_params(params)
            loss = make_loss(resolved["objective"], resolved["num_class"], 1,
                             resolved["objective_params"])
            _check_missing_targets(target, loss)
        stopping_callback = any(stops_early(c) for c in callbacks or [])
        if rounds is not None or stopping_callback:
            _check_early_stopping_watches(rounds, eval_set, bool(
                extra_metrics or fevals or sp.issparse(target)
                or metric_names(resolved["metric"], loss)))
        if extra_metrics:
            base = (sparse_metrics or [make_sparse_loss(objective, threshold).default_metric]
                    if sp.issparse(target) else metric_names(resolved["metric"], loss))
            # eval_metric's first, as LightGBM orders them (first_metric_only watches it)
            params["metric"] = extra_metrics + [m for m in base if m not in extra_metrics]
        # a DataFrame's columns, as gbmo.Dataset names them (scikit-learn keeps
        # feature_names_in_ for string columns only)
        feature_names = ([str(column) for column in table.columns]
                         if is_dataframe(table) else None)
        if not (isinstance(feature_name, str) and feature_name == "auto"):
            feature_names = [str(name) for name in feature_name]
            if len(feature_names) != X.shape[1]:
                raise ValueError(f"feature_name has {len(feature_names)} names for "
                                 f"{X.shape[1]} features")

        valid_data, valid_names = [], []
        if eval_set is not None:
            if isinstance(eval_set, tuple) and len(eval_set) == 2 \
                    and not isinstance(eval_set[0], tuple):
                eval_set = [eval_set]
            if eval_init_score is None and init_score is not None:
                raise ValueError("init_score is given, so every eval_set pair needs its "
                                 "rows' starting scores too: pass eval_init_score, one per "
                                 "pair")
            eval_init_score = _one_per_pair("eval_init_score", eval_init_score, len(eval_set))
            eval_sample_weight = _one_per_pair("eval_sample_weight", eval_sample_weight,
                                               len(eval_set))
            eval_class_weight = _one_per_pair("eval_class_weight", eval_class_weight,
                                              len(eval_set))
            for i, class_weight in enumerate(eval_class_weight):
                _check_class_weight(class_weight, f"eval_class_weight[{i}]")
            names = _one_per_pair("eval_names", eval_names, len(eval_set))
            for i, (pair, valid_weight, class_weight, valid_init_score, name) in enumerate(
                    zip(eval_set, eval_sample_weight, eval_class_weight, eval_init_score,
                        names)):
                if not isinstance(pair, (tuple, list)) or len(pair) != 2:
                    raise ValueError("eval_set must be a list of (X, y) pairs")
                if pair[0] is given_X and pair[1] is given_y:
                    # the training data itself, as LightGBM recognises it: scored as
                    # the training set, which early stopping never watches
                    valid_data.append(None)
                    valid_names.append("training" if name is None else str(name))
                    continue
                X_valid = _numeric_X(pair[0], pandas_categories, X.shape[1], feature_names,
                                     f"eval_set[{i}] X")
                X_valid = _validate_data(self, X_valid, reset=False, **_X_CHECKS)
                check_name_order(target_names(pair[1]), target_names(given_y),
                                 f"eval_set[{i}] y", kind="targets")
                valid_y = self._encode_eval_target(pair[1], X_valid.shape[0])
                valid_weight = check_weight(valid_weight, X_valid.shape[0],
                                            f"eval_sample_weight[{i}]")
                if class_weight is not None:
                    valid_weight = self._weigh_classes(valid_weight, valid_y, class_weight,
                                                       f"eval_class_weight[{i}]")
                valid_data.append((X_valid, valid_y, valid_weight, valid_init_score))
                valid_names.append(f"valid_{i}" if name is None else str(name))
        else:
            for name, value in (("eval_init_score", eval_init_score),
                                ("eval_sample_weight", eval_sample_weight),
                                ("eval_class_weight", eval_class_weight),
                                ("eval_names", eval_names)):
                if value is not None:
                    raise ValueError(f"{name} is given without an eval_set")
            if rounds is not None:
                # the rows held out take their weights (class_weight's included) and
                # starting scores with them
                extras = [a for a in (sample_weight, init_score) if a is not None]
                parts = train_test_split(X, target, *extras, test_size=fraction, stratify=stratify,
                                         random_state=rng)
                X, X_valid, target, y_valid = parts[:4]
                split_extras = iter(zip(parts[4::2], parts[5::2]))
                weight_valid = init_score_valid = None
                if sample_weight is not None:
                    sample_weight, weight_valid = next(split_extras)
                if init_score is not None:
                    init_score, init_score_valid = next(split_extras)
                valid_data.append((X_valid, y_valid, weight_valid, init_score_valid))
                valid_names.append(_VALIDATION_NAME)

        categorical = resolve_categorical_features(categorical_feature, X.shape[1],
                                                   feature_names, pandas_categories)
        train_set = Dataset(X, target, weight=sample_weight, feature_names=feature_names,
                            init_score=init_score, categorical_feature=categorical)
        train_set.pandas_categories = pandas_categories
        valid_sets = [train_set if data is None else train_set.create_valid(*data)
                      for data in valid_data]
        # fit's verbose alone logs rounds, as XGBoost's and CatBoost's fit: the
        # constructor's verbose is LightGBM's verbosity (gbmo.train logs every
        # round above 0 unless a log_evaluation is given, as this one, even at 0)
        all_callbacks = list(callbacks or []) + [log_evaluation(log_period)]
        if rounds is not None:
            # verbosity or an alias of it (LightGBM's and XGBoost's verbose)
            all_callbacks.append(early_stopping(
                rounds, self._other_param("first_metric_only", False),
                verbose=resolved["verbosity"] > 0,
                min_delta=self._other_param("early_stopping_min_delta", 0.0)))
        booster = train(params, train_set, n_estimators, valid_sets=valid_sets,
                        valid_names=valid_names, callbacks=all_callbacks, init_model=init_model,
                        feval=fevals)

        self.booster_ = booster
        self.n_iter_ = booster.current_iteration()
        self.best_iteration_ = int(booster.best_iteration)
        self.evals_result_ = booster.evals_result
        self.best_score_ = booster.best_score
        return self

    def _warm_start(self, init_model, n_estimators):
        """(the model to continue, the rounds to add) of a fit with
        warm_start=True on a fitted estimator, as scikit-learn's gradient
        boosting: the fitted rounds continue up to n_estimators in all."""
        if init_model is not None:
            raise ValueError("warm_start=True continues the fitted model, so fit takes no "
                             "init_model (or xgb_model) then; give one or the other")
        if self.booster_.sparse_loss is not None:
            raise ValueError("warm_start=True does not continue a model fitted on a sparse y "
                             "yet (gbmo.train takes no init_model for one); give "
                             "warm_start=False to fit anew")
        done = self.booster_.current_iteration()
        if n_estimators < done:
            raise ValueError(f"n_estimators={n_estimators} must be at least n_iter_={done} "
                             "(the fitted rounds) when warm_start=True; allowed: a larger "
                             "n_estimators, or warm_start=False to fit anew")
        return self, n_estimators - done

    def _check_hold_out(self, n_rows, fraction, labels):
        """Refuses, before training, a hold-out of validation_fraction of the
        n_rows (stratified by labels, the rows' class indices, or None) that
        cannot be made, naming the ways out: train_test_split's own errors
        name neither them nor the classes as given in y."""
        n_valid = math.ceil(fraction * n_rows)  # as train_test_split counts it
        hold_out = (f"early_stopping_rounds without an eval_set holds out "
                    f"validation_fraction={fraction} of the {n_rows} rows ({n_valid}) to watch"
                    + (", stratified by class" if labels is not None else ""))
        ways_out = ("an eval_set to watch instead (fit(X, y, eval_set=[(X_valid, "
                    "y_valid)])), or early_stopping_rounds=None")
        n_classes = 0
        if labels is not None:
            n_classes = self.n_classes_
            rare = self.classes_[np.bincount(labels, minlength=n_classes) < 2]
            if rare.size:
                raise ValueError(f"{hold_out}, which needs 2 rows of every class, and y has 1 "
                                 f"row of {_listed_classes(rare)}; allowed: {ways_out}")
        least_valid, least_train = max(n_classes, 1), max(n_classes, _LEAST_TRAINING_ROWS)
        if n_valid < least_valid or n_rows - n_valid < least_train:
            each_class = " (one of each class)" if n_classes else ""
            fits = n_rows >= least_valid + least_train
            raise ValueError(f"{hold_out}, which must hold {least_valid} or more rows"
                             f"{each_class} and leave {least_train} or more to train on"
                             f"{each_class}{'' if fits else f', more than {n_rows} rows'}; "
                             f"allowed: {'a validation_fraction that does, ' if fits else ''}"
                             f"{ways_out}")

    def _validate_X_y(self, X, y):
        """scikit-learn's checks of fit's X and y (y of classes: finite)."""
        return _validate_data(self, X, y, reset=True, **_X_CHECKS, multi_output=True,
                              ensure_min_samples=2)

    def _validate_X_and_missing_labels(self, X, y, y_dtype):
        """scikit-learn's checks of fit's X and y, but for y's NaN: a missing
        label, as gbmo.train takes it, which fit refuses by name when the
        objective does not take it (see _check_missing_targets)."""
        X, y = _validate_data(self, X, y, reset=True, validate_separately=(
            {**_X_CHECKS, "ensure_min_samples": 2},
            {"ensure_all_finite": "allow-nan", "ensure_2d": False, "dtype": y_dtype}))
        check_consistent_length(X, y)
        return X, y

    def _check_continued_classes(self, init_model, y, name):
        """A classifier continues only a model (name: what the user gave as
        it) of the same classes: its outputs are theirs, in order."""
        classes = getattr(init_model, "classes_", None)
        if classes is None or np.ndim(y) != 1:  # a regressor, or multi-label (n_outputs is checked)
            return
        ours = np.unique(np.asarray(y))
        if not np.array_equal(ours, classes):
            raise ValueError(f"{name} was fitted on the classes {classes.tolist()}, y has "
                             f"{ours.tolist()}; a continued classifier keeps its classes")

    def save_model(self, fname):
        """XGBoost's and CatBoost's: writes the model to the file fname, a
        gbmo.Booster model file (Booster(model_file=fname) loads it) that
        also holds this estimator's parameters and fitted state, which
        load_model restores. A parameter JSON cannot hold (a function as the
        objective) is refused by name: pickle such an estimator."""
        check_is_fitted(self)
        estimator_file.save(self, fname)

    def load_model(self, fname):
        """XGBoost's and CatBoost's: this estimator becomes the one save_model
        wrote to fname, its parameters included; returns self. A file of
        the other estimator, or of a Booster alone, is refused."""
        return estimator_file.load(self, fname)

    def __sklearn_is_fitted__(self):
        return hasattr(self, "booster_")

    def get_booster(self):
        """The fitted Booster (booster_), as XGBoost's method."""
        check_is_fitted(self)
        return self.booster_

    def evals_result(self):
        """XGBoost's form of evals_result_: the eval sets named validation_0,
        validation_1, ... in order."""
        check_is_fitted(self)
        return {f"validation_{i}": history
                for i, history in enumerate(self.evals_result_.values())}

    def _stopped_early(self, name):
        check_is_fitted(self)
        if not self.booster_.best_iteration:
            raise AttributeError(f"{name} exists after early stopping only, as XGBoost's; "
                                 "n_estimators_ is the rounds predict uses")

    @property
    def best_iteration(self):
        """XGBoost's: the 0-based index of the best round, after early stopping
        only (best_iteration_ is LightGBM's: counted from 1, 0 without it)."""
        self._stopped_early("best_iteration")
        return self.booster_.best_iteration - 1

    @property
    def best_score(self):
        """XGBoost's: the last metric of the last eval set at the best round,
        after early stopping only (best_score_ holds every set and metric)."""
        self._stopped_early("best_score")
        last_set = list(self.best_score_.values())[-1]
        return list(last_set.values())[-1]

    @property
    def feature_name_(self):
        """The features' names, as LightGBM's attribute (f0, f1, ... for
        unnamed columns)."""
        check_is_fitted(self)
        return self.booster_.feature_name()

    @property
    def n_features_(self):
        """LightGBM's name of n_features_in_."""
        check_is_fitted(self)
        return self.n_features_in_

    @property
    def n_trees_per_iteration_(self):
        """scikit-learn's HistGradientBoosting's: the trees a round grows, one
        vector-leaf tree (tree_mode="single_output": one per output)."""
        check_is_fitted(self)
        return self.booster_.trees_per_round

    @property
    def is_categorical_(self):
        """scikit-learn's HistGradientBoosting's: a boolean mask of the
        categorical features, None when there are none."""
        check_is_fitted(self)
        order = self.booster_.category_order
        if order is None:
            return None
        mask = np.zeros(self.n_features_in_, dtype=bool)
        mask[order.features] = True
        return mask

    def get_num_boosting_rounds(self):
        """XGBoost's: the rounds fit trains, n_estimators."""
        return self._own_default("n_estimators")

    @property
    def n_estimators_(self):
        """The rounds predict uses, as LightGBM's attribute: the best round's
        after early stopping (LightGBM cuts its model there; booster_ keeps
        the n_iter_ rounds run), else every round."""
        check_is_fitted(self)
        return self.booster_.best_iteration or self.n_iter_

    @property
    def objective_(self):
        """The objective trained, as LightGBM's attribute: its name, or the
        function given."""
        check_is_fitted(self)
        loss = self.booster_.loss
        return (loss.function if isinstance(loss, CustomObjective)
                else self.booster_._objective_name())

    @property
    def feature_importances_(self):
        """Feature importance of `importance_type` ("gain", "split" or
        "average_gain") over the rounds predict uses (n_estimators_),
        normalised to sum to 1 (as scikit-learn's ensembles; all zeros when no
        split was made)."""
        check_is_fitted(self)
        importance = self.booster_.feature_importance(self._own_default("importance_type"),
                                                      iteration=self.n_estimators_)
        total = importance.sum()
        return importance / total if total > 0 else importance.astype(float)

    # -- predict ------------------------------------------------------------
    def _check_predict_X(self, X):
        check_is_fitted(self)
        if not self.booster_.pandas_categories:
            # scikit-learn's checks of such a frame pass (its names are
            # feature_names_in_) and give the same values (float32 ones where
            # a bool column joins float32 ones), but for a frame without
            # rows, which they refuse
            values = model_frame_values(X, getattr(self, "feature_names_in_", None))
            if values is not None and values.shape[0] > 0:
                return values
        if (type(X) is np.ndarray and X.dtype in _X_CHECKS["dtype"] and X.ndim == 2
                and X.shape[0] > 0 and X.shape[1] == self.n_features_in_
                and not hasattr(self, "feature_names_in_")):
            # what scikit-learn's checks return for it, without their 60 us;
            # fitted on names, they warn of an array's missing ones
            return X
        X = _numeric_X(X, self.booster_.pandas_categories, self.booster_.n_features,
                       self.booster_.feature_names)
        return _validate_data(self, X, reset=False, **_X_CHECKS)

    def apply(self, X, iteration_range=None):
        """XGBoost's: the leaf each row reaches in every tree, (n, n_trees), of
        the rounds in iteration_range (None: n_estimators_'s); the same as
        predict(X, pred_leaf=True)."""
        start_iteration, num_iteration = xgboost_rounds(
            False, 0, None, False, iteration_range)[1:]
        X = self._check_predict_X(X)
        return self.booster_.predict(X, pred_leaf=True, start_iteration=start_iteration,
                                     num_iteration=num_iteration)

    def to_onnx(self, path=None, num_iteration=None, start_iteration=0, raw_score=False):
        """The fitted model as an ONNX graph (see Booster.to_onnx), also
        written to path when given: its output is predict's for a regressor;
        for a classifier of one label a row, "label" (predict's) and
        "probabilities" (predict_proba's), for a multi-label one
        "probabilities" alone; the booster's raw scores with raw_score."""
        from .onnx_export import export

        check_is_fitted(self)
        return export(self.booster_, path, num_iteration, start_iteration, raw_score,
                      probabilities=self._predicts_probabilities(),
                      classes=self._labelled_classes())

    def _predicts_probabilities(self):
        return False

    def _labelled_classes(self):
        """The classes an ONNX graph's labels are drawn from (None: no labels)."""
        return None

    def _staged(self, X, raw_score=False):
        X = self._check_predict_X(X)
        for i in range(1, self.n_estimators_ + 1):
            yield self.booster_.predict(X, num_iteration=i, raw_score=raw_score)


class GBMORegressor(RegressorMixin, _GBMOModel):
    """Gradient boosting with vector-leaf trees for single- and multi-output regression.

    One tree per round serves all outputs: y of shape (n,) gives predictions
    of shape (n,), y of shape (n, d) predictions of shape (n, d). Squared
    error loss unless `objective` names another (huber, quantile, l1,
    poisson, ... with gbmo-losses) or gives a function. `score` is R²
    averaged uniformly over the outputs.

    Parameters (gbmo names in brackets where they differ): n_estimators
    (num_boost_round), learning_rate, boosting, drop_rate, max_drop,
    skip_drop, max_leaves, max_depth, max_bins,
    lambda_l2, lambda_l1, min_samples_leaf, min_child_weight, min_gain,
    subsample, subsample_freq, data_sample_strategy, top_rate, other_rate,
    goss_renew_leaves,
    colsample_bytree, colsample_bynode, extra_trees, tree_mode, split, top_k, growth,
    cat_smooth, cat_l2, min_data_per_group, max_cat_threshold, max_cat_to_onehot,
    max_delta_step, scale_pos_weight and is_unbalance (GBMOClassifier's
    binary and multi-label), monotone_constraints, interaction_constraints, ensembler,
    ensembler_params (all as in gbmo.train),
    early_stopping_rounds, validation_fraction, n_threads, adaptive_threads, random_state
    (seed), verbosity, importance_type (of feature_importances_),
    class_weight (GBMOClassifier's; here only None), metric (the metrics
    recorded, as gbmo.train's; eval_metric adds to them), warm_start
    (scikit-learn's: a fit of a fitted estimator continues its rounds up to
    n_estimators in all), and as keyword
    arguments any other of gbmo.train's parameters or their aliases
    (LightGBM's num_leaves, reg_lambda, n_jobs, ...; see get_params).
    Missing values (NaN) and +-inf in X are taken, as gbmo.train takes them;
    so is NaN in y, a missing label, with an objective that masks missing
    labels (mse, a MultiTaskLoss of such) or a function (see
    _check_missing_targets).

    Attributes: booster_, feature_importances_, n_features_in_, feature_names_in_ (when X had string
    column names), n_outputs_, n_iter_, best_iteration_ and n_estimators_ (see
    the module's docstring), evals_result_, best_score_ ({eval set: {metric:
    value}} at the best round, or the last without early stopping, as
    LightGBM's).
    """

    FITTED_ATTRIBUTES = _GBMOModel.FITTED_ATTRIBUTES + ("_y_is_1d",)

    def _validate_X_y(self, X, y):
        if y is None:  # scikit-learn's error for it
            return super()._validate_X_y(X, y)
        return self._validate_X_and_missing_labels(X, y, "numeric")

    def _prepare_target(self, y):
        if self.class_weight is not None:
            raise ValueError(f"parameter 'class_weight' = {self.class_weight!r} applies to "
                             "GBMOClassifier only (as in LightGBM, the regressor has it but "
                             "takes None); weigh rows with sample_weight")
        y = np.asarray(y, dtype=np.float64)
        if y.ndim == 2 and y.shape[1] == 1:
            # a column vector (a one-column DataFrame) is one target, as for
            # LightGBM's and scikit-learn's forests: (n,) predictions, which
            # subtract from the target without broadcasting to (n, n)
            y = column_or_1d(y, warn=True)
        self._y_is_1d = y.ndim == 1
        self.n_outputs_ = 1 if y.ndim == 1 else y.shape[1]
        return y, {"objective": "mse"}, None

    def _encode_eval_target(self, y, n_rows):
        y = _missing_as_nan(y)
        expected = (n_rows,) if self._y_is_1d else (n_rows, self.n_outputs_)
        if y.shape != expected and not (self._y_is_1d and y.shape == (n_rows, 1)):
            raise ValueError(f"eval_set y must have shape {expected}, got {y.shape}")
        return y

    def _format(self, prediction):
        # An estimator pickled before boosters knew their target's shape
        # restores one that predicts (n, 1) for a 1-D target; an objective
        # may give a 1-D target several outputs (quantile's levels).
        one_column = prediction.ndim == 2 and prediction.shape[1] == 1
        return prediction[:, 0] if self._y_is_1d and one_column else prediction

    def predict(self, X, raw_score=False, start_iteration=0, num_iteration=None,
                pred_leaf=False, pred_contrib=False, *, output_margin=False,
                iteration_range=None, validate_features=False, **other_libraries_keywords):
        """Predictions (n,) for a 1-D training target, else (n, d), with the
        trees of n_estimators_ rounds, or of num_iteration rounds from round
        start_iteration (see Booster.predict). raw_score, pred_leaf: as
        Booster.predict's, as LightGBM's. pred_contrib=True: each feature's
        contribution to them (SHAP values; see Booster.predict),
        (n, n_features + 1) or (n, n_features + 1, d). output_margin and
        iteration_range are XGBoost's (see booster.xgboost_rounds). validate_features
        is LightGBM's: a DataFrame's columns are checked against fit's names
        whatever it says (scikit-learn's check)."""
        self._refuse_other_keywords("predict", other_libraries_keywords)
        raw_score, start_iteration, num_iteration = xgboost_rounds(
            raw_score, start_iteration, num_iteration, output_margin, iteration_range)
        X = self._check_predict_X(X)
        rounds = {"num_iteration": num_iteration, "start_iteration": start_iteration}
        if pred_leaf:
            return self.booster_.predict(X, pred_leaf=True, **rounds)
        if pred_contrib:
            contributions = self.booster_.predict(X, pred_contrib=True, **rounds)
            return contributions[:, :, 0] if self._y_is_1d and contributions.ndim == 3 \
                else contributions
        return self._format(self.booster_.predict(X, raw_score=raw_score, **rounds))

    def staged_predict(self, X):
        """Yields the predictions after each round, up to n_estimators_
        (the last one equals predict(X))."""
        for prediction in self._staged(X):
            yield self._format(prediction)

    def score(self, X, y, sample_weight=None):
        """scikit-learn's R², averaged uniformly over the outputs; refused for a
        model of several quantile levels, whose predictions are a column per
        target and level, not one per target column."""
        check_is_fitted(self)
        levels = getattr(self.booster_.loss, "alphas", None)
        if levels is not None and np.size(levels) > 1:
            raise ValueError(f"score compares one prediction per target column with R², and "
                             f"this model predicts {np.size(levels)} quantile levels "
                             f"({', '.join(map(str, np.ravel(levels)))}) for each: score "
                             "each level with a quantile loss (scikit-learn's "
                             "mean_pinball_loss(y, p, alpha=level)), p a level's slice of "
                             "predict(X).reshape(n, targets, levels)")
        return super().score(X, y, sample_weight)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        tags.input_tags.sparse = True
        tags.target_tags.multi_output = True
        return tags


def _refuse_multi_label_kind(what):
    raise ValueError("a 2-D y must be a multi-label indicator matrix of 0/1 values, NaN for a "
                     f"missing label (got {what}); multi-class multi-output targets are not "
                     "supported")


class GBMOClassifier(ClassifierMixin, _GBMOModel):
    """Gradient boosting with vector-leaf trees for classification.

    - 1-D labels of any type (strings, ints, bools) are encoded with
      `classes_` (sorted unique labels). Two classes: objective "sigmoid" with
      one output, predict_proba (n, 2). More: objective "softmax" with one
      output per class, predict_proba (n, n_classes). objective
      "multiclassova" (LightGBM's; "ova", "ovr") instead fits one sigmoid per
      class, two classes included: each class's probability is its own, so
      predict_proba's rows need not sum to 1, as in LightGBM (on a multi-label
      y below it is that y's own sigmoid per column). An objective given is
      trained as given: "multiclass" keeps an output per class for two
      classes too. One that cannot serve y (a one-output objective such as
      "binary" for more than two classes, "multiclass" for a multi-label y),
      and a num_class other than the number of classes (labels) in y, are
      refused before training (LightGBM's classifier refuses the first; it
      replaces a num_class that disagrees, for more than two classes).
    - A 2-D 0/1 indicator matrix (n, d), d >= 2: multi-label, one independent
      sigmoid per column; predict returns the 0/1 matrix (same dtype as y),
      predict_proba the (n, d) probabilities of the 1s; classes_ is
      arange(d) and n_classes_ = d. NaN in it is a missing label, which the
      sigmoid masks (as GBMORegressor(objective="sigmoid") and gbmo.train
      take it; an objective that does not mask them refuses it by name):
      classes_ stays arange(d), predict gives every entry, and score
      (scikit-learn's accuracy) takes a y without NaN, as the regressor's R².
    - A scipy sparse 0/1 matrix (n, L): multi-label with many labels, trained
      by the GBDT-sparse path (gbmo.sparse_output) without densifying y: the
      restricted sigmoid, leaves of `top_k` labels (10 when top_k is None,
      split "sparse"). predict returns a CSR matrix, built in row blocks;
      predict_topk(X, k) the k most probable labels per row without an (n, L)
      array; predict_proba is the dense (n, L) array scikit-learn expects.
      The path's limits apply (best-first growth, no categorical features).

    `score` is the accuracy (subset accuracy for multi-label). Parameters and
    attributes as GBMORegressor, plus classes_ and n_classes_; n_outputs_ is
    the number of target columns (1 for labels, d for multi-label).

    class_weight (single-label targets only, as in scikit-learn and LightGBM):
    None (every class weighs 1), "balanced" (n_samples / (n_classes *
    np.bincount(y)), computed on fit's y) or a dict {class label: weight >= 0}
    with the labels as given in y (classes it leaves out weigh 1). Each row's
    class weight multiplies its sample_weight; the rows held out for early
    stopping (validation_fraction) keep their weights, eval_set rows are
    unweighted. A multi-label y refuses a class_weight (use sample_weight).
    """

    FITTED_ATTRIBUTES = _GBMOModel.FITTED_ATTRIBUTES + ("_sparse_labels", "_multilabel",
                                                       "classes_", "n_classes_")

    def _validate_X_y(self, X, y):
        """NaN in a multi-label y (columns of 0/1) is a missing label, as the
        regressor takes it; in a y of classes it would be a class of its own,
        refused as scikit-learn's check refuses it."""
        if y is None or sp.issparse(y):
            return super()._validate_X_y(X, y)
        X, y = self._validate_X_and_missing_labels(X, y, None)
        if y.ndim != 2 or y.shape[1] == 1:
            _refuse_missing_labels(y)
            assert_all_finite(y, input_name="y")
        return X, y

    def fit(self, X, y=None, sample_weight=None, init_score=None, eval_set=None, eval_names=None,
            eval_sample_weight=None, eval_class_weight=None, eval_init_score=None,
            eval_metric=None, feature_name="auto", categorical_feature="auto", callbacks=None,
            init_model=None, verbose=False, **keywords):
        """Trains the classifier: GBMORegressor.fit's arguments in LightGBM's
        classifier's order, whose eval_class_weight (each eval_set pair's
        class_weight) comes after eval_sample_weight."""
        return super().fit(X, y, sample_weight, init_score, eval_set, eval_names,
                           eval_sample_weight, eval_init_score, eval_metric, feature_name,
                           categorical_feature, callbacks, init_model, verbose,
                           eval_class_weight=eval_class_weight, **keywords)

    def _weigh_classes(self, sample_weight, labels, class_weight=None,
                       name="parameter 'class_weight'"):
        """sample_weight times each row's class weight from class_weight (the
        estimator's when None; name: where it was given); labels are the
        rows' indices into classes_ (single-label y: _prepare_target refused
        a class_weight for any other). "balanced" weighs the classes in
        labels, as scikit-learn's compute_sample_weight."""
        class_weight = self.class_weight if class_weight is None else class_weight
        if class_weight is None:
            return sample_weight
        if np.ndim(labels) != 1:
            raise ValueError(f"{name} = {class_weight!r} applies to single-label targets; "
                             "this y is multi-label: weigh its rows with eval_sample_weight")
        labels = np.asarray(labels).astype(np.intp)  # a binary target's 0.0 / 1.0 too
        if isinstance(class_weight, str):
            present = np.unique(labels)
            per_class = np.zeros(self.n_classes_)
            per_class[present] = compute_class_weight("balanced", classes=present, y=labels)
        else:
            known = set(self.classes_.tolist())
            unknown = [label for label in class_weight if label not in known]
            if unknown:
                raise ValueError(
                    f"{name} = {class_weight!r} names "
                    f"{'labels' if len(unknown) > 1 else 'a label'} not in y: "
                    f"{', '.join(map(repr, unknown))}; allowed: the classes of y, "
                    f"{self.classes_.tolist()}"
                )
            per_class = np.array([float(class_weight.get(label, 1.0))
                                  for label in self.classes_.tolist()])
        row_weight = per_class[labels]
        if sample_weight is not None:
            row_weight = sample_weight * row_weight
        if not np.any(row_weight > 0):
            raise ValueError(f"{name} = {class_weight!r} (times sample_weight) leaves every "
                             "row a weight of 0; at least one row must count")
        return row_weight

    def _takes_objective(self, objective):
        """Any objective but the names of sigmoid (binary, ...), the loss y
        decides on wherever _check_objective_serves lets them through (two
        classes, multi-label); and but multiclassova for a multi-label y,
        whose sigmoid per column is one-vs-all already."""
        if not isinstance(objective, str):
            return True
        name = canonical_objective(objective)
        return not (name == "sigmoid"
                    or name == "multiclassova" and getattr(self, "_multilabel", False))

    def _given_objective(self):
        """The objective given as a parameter, under its name or an alias; None."""
        params = self.get_params(deep=False)
        return next((params[key] for key in keys_naming(params, "objective")), None)

    def _check_objective_serves(self, multilabel):
        """Refuses, before training, a num_class that is not the number of
        classes (or labels) in y, and an objective that cannot serve y: one
        of a single output (binary, mse, ...) for more than two classes, where
        LightGBM's classifier raises too ("Number of classes must be 1 for
        non-multiclass training"), and one of an output per class from a
        class index per row (multiclass, ...) for a multi-label y.
        multiclassova serves both, and a function is trained as given."""
        n_classes = self.n_classes_
        if multilabel:
            what = f"{n_classes} labels (a multi-label y)"
        else:
            what = f"{n_classes} classes ({_listed_classes(self.classes_)})"
        params = self.get_params(deep=False)
        objective = self._given_objective()
        given = [(f"parameter {key!r}", checked_value(key, params[key])[1])
                 for key in keys_naming(params, "num_class")]
        if isinstance(objective, Loss) and getattr(objective, "num_class", None) is not None:
            given.append(("the objective's num_class", objective.num_class))
        # num_class=1 is LightGBM's default, a binary objective's own
        binary_default = 1 if n_classes == 2 and not multilabel else None
        for source, num_class in given:
            if num_class not in (None, n_classes, binary_default):
                raise ValueError(f"{source} = {num_class!r} disagrees with y, which has {what}; "
                                 f"allowed: num_class={n_classes}, or no num_class (y sets it)")
        # a function, or a loss of its own outputs (CustomObjective), is trained as given
        if not isinstance(objective, (str, Loss)) or isinstance(objective, CustomObjective):
            return
        name = objective if isinstance(objective, str) else objective.name
        takes_class_indices = _takes_class_indices(objective)
        if multilabel and takes_class_indices \
                and canonical_objective(objective) != "multiclassova":
            raise ValueError(f"objective {name!r} takes one class per row, and y has {what}; "
                             "allowed: no objective (one sigmoid per label), 'binary', "
                             "'multiclassova', or another loss of 0/1 labels")
        if not multilabel and n_classes > 2 and not takes_class_indices:
            raise ValueError(f"objective {name!r} has one output, for two classes, and y has "
                             f"{what}; allowed: no objective (y decides: 'multiclass' for more "
                             "than two classes), 'multiclass' or 'multiclassova'")

    def _prepare_target(self, y):
        if self.class_weight is not None and (sp.issparse(y) or (
                np.ndim(y) == 2 and np.shape(y)[1] != 1)):
            raise ValueError(
                f"parameter 'class_weight' = {self.class_weight!r} applies to single-label "
                "targets (binary or multi-class, a 1-D y) only; this y is a multi-label "
                f"{'sparse ' if sp.issparse(y) else ''}matrix of shape {y.shape}: pass "
                "class_weight=None and weigh rows with sample_weight"
            )
        self._sparse_labels = sp.issparse(y)
        if self._sparse_labels:
            return self._prepare_sparse_labels(y)
        y = np.asarray(y)
        if y.ndim == 2 and y.shape[1] == 1:
            y = column_or_1d(y, warn=True)
        self._multilabel = y.ndim == 2
        if self._multilabel and y.dtype.kind not in "biuf":  # strings: no 0 for a NaN below
            _refuse_multi_label_kind(f"{y.dtype} labels")
        # the type of a multi-label y is its present labels' (see _validate_X_y)
        present = np.where(_missing_labels(y), 0, y) if y.ndim == 2 else y
        check_classification_targets(present)
        if self._multilabel:
            if type_of_target(present) != "multilabel-indicator":
                _refuse_multi_label_kind(f"target type {type_of_target(present)!r}")
            self._y_dtype = y.dtype
            self.classes_ = np.arange(y.shape[1])
            self.n_classes_ = y.shape[1]
            self.n_outputs_ = y.shape[1]
            self._check_objective_serves(multilabel=True)
            # a sigmoid per label: the labels are y's columns, not num_class's classes
            return y.astype(np.float64), {"objective": "sigmoid", "num_class": None}, None
        self.classes_, encoded = np.unique(y, return_inverse=True)
        self.n_classes_ = len(self.classes_)
        self.n_outputs_ = 1
        if self.n_classes_ < 2:
            raise ValueError(
                f"{type(self).__name__} needs samples of at least 2 classes in y; "
                f"got only one class: {_listed_classes(self.classes_)}"
            )
        self._check_objective_serves(multilabel=False)
        encoded = encoded.reshape(-1)
        # an objective of an output per class (multiclass, multiclassova) keeps
        # them for two classes too, as given
        self._class_indices = self.n_classes_ > 2 or _takes_class_indices(
            self._given_objective())
        if not self._class_indices:
            # one sigmoid output: a num_class that agreed with y (2) is not the loss's
            return encoded.astype(np.float64), {"objective": "sigmoid", "num_class": None}, \
                encoded
        return encoded.astype(np.int64), {"objective": "softmax",
                                          "num_class": self.n_classes_}, encoded

    def _prepare_sparse_labels(self, y):
        if self.split not in ("dense", "sparse"):
            raise ValueError(f"a sparse y trains with split='sparse' (unrestricted top-k "
                             f"leaves); parameter 'split' = {self.split!r} is not allowed")
        Y = check_sparse_labels(y, y.shape[0], name="y")
        self._multilabel = True
        self._y_dtype = y.dtype
        self.classes_ = np.arange(Y.shape[1])
        self.n_classes_ = self.n_outputs_ = Y.shape[1]
        self._check_objective_serves(multilabel=True)
        top_k = min(Y.shape[1], 10) if self.top_k is None else self.top_k
        return Y, {"objective": "sigmoid", "split": "sparse", "top_k": top_k}, None

    def _encode_eval_target(self, y, n_rows):
        if self._sparse_labels:
            if not sp.issparse(y):
                raise ValueError("eval_set y must be a scipy sparse 0/1 matrix, as the "
                                 "training y")
            if y.shape != (n_rows, self.n_classes_):
                raise ValueError(f"eval_set y must have shape ({n_rows}, {self.n_classes_}), "
                                 f"got {y.shape}")
            return check_sparse_labels(y, n_rows, name="eval_set y")
        if hasattr(y, "toarray"):
            y = y.toarray()
        if self._multilabel:
            y = _missing_as_nan(y)
            if y.shape != (n_rows, self.n_classes_) \
                    or not (np.isin(y, (0, 1)) | _missing_labels(y)).all():
                raise ValueError(
                    f"eval_set y must be a 0/1 matrix of shape ({n_rows}, {self.n_classes_}), "
                    "NaN for a missing label"
                )
            return y.astype(np.float64)
        y = column_or_1d(np.asarray(y))
        if y.shape != (n_rows,):
            raise ValueError(f"eval_set y must have shape ({n_rows},), got {y.shape}")
        _refuse_missing_labels(y, "eval_set y")
        unseen = ~np.isin(y, self.classes_)
        if unseen.any():
            raise ValueError(f"eval_set y has labels not seen in training: {np.unique(y[unseen])}")
        encoded = np.searchsorted(self.classes_, y)
        return encoded.astype(np.int64 if self._class_indices else np.float64)

    def _proba(self, raw):
        if self._custom_objective():
            return raw
        if raw.ndim == 1:  # one output, for two classes
            return np.column_stack([1.0 - raw, raw])
        return raw

    def _predicts_probabilities(self):
        # a function's raw scores, or a sparse y's squared hinge's margins, are none
        sparse_loss = self.booster_.sparse_loss
        return not (isinstance(self.booster_.loss, CustomObjective) or (
            sparse_loss is not None and sparse_loss.name == "squared_hinge"))

    def _labelled_classes(self):
        single_label = not (self._multilabel or getattr(self, "_sparse_labels", False))
        return self.classes_ if single_label and self._predicts_probabilities() else None

    def _custom_objective(self):
        """A function as the objective gives raw scores, which are no
        probabilities: predict_proba and predict return them, with a warning,
        as LightGBM's classifier does."""
        if not isinstance(self.booster_.loss, CustomObjective):
            return False
        warnings.warn("the objective is a function, so class probabilities and labels are "
                      "not known: returning raw scores instead (as LightGBM does)",
                      UserWarning, stacklevel=user_stacklevel())
        return True

    def _labels(self, proba):
        if self._sparse_labels:
            # as the sparse path's F1 counts a positive, in the scores' scale
            positive = self.booster_.loss.transform(np.full((1, 1), POSITIVE_RAW_SCORE))[0, 0]
            return sp.csr_matrix(proba > positive, dtype=self._y_dtype)
        if self._multilabel:
            return (proba > 0.5).astype(self._y_dtype)
        return self.classes_[np.argmax(proba, axis=1)]

    def predict_proba(self, X, raw_score=False, start_iteration=0, num_iteration=None,
                      pred_leaf=False, pred_contrib=False, *, iteration_range=None,
                      validate_features=False, **other_libraries_keywords):
        """Class probabilities (n, n_classes); (n, d) probabilities of 1 for
        multi-label; with the trees of n_estimators_ rounds, or of num_iteration
        rounds from round start_iteration (see Booster.predict). raw_score,
        pred_leaf, pred_contrib: as predict's, as LightGBM's predict_proba;
        iteration_range: XGBoost's (see booster.xgboost_rounds); validate_features as
        predict's."""
        self._refuse_other_keywords("predict_proba", other_libraries_keywords)
        raw_score, start_iteration, num_iteration = xgboost_rounds(
            raw_score, start_iteration, num_iteration, False, iteration_range)
        if raw_score or pred_leaf or pred_contrib:
            return self.predict(X, raw_score=raw_score, num_iteration=num_iteration,
                                pred_leaf=pred_leaf, pred_contrib=pred_contrib,
                                start_iteration=start_iteration)
        self._refuse_margins()
        X = self._check_predict_X(X)
        return self._proba(self.booster_.predict(X, num_iteration=num_iteration,
                                                 start_iteration=start_iteration))

    def predict(self, X, raw_score=False, start_iteration=0, num_iteration=None,
                pred_leaf=False, pred_contrib=False, *, output_margin=False,
                iteration_range=None, validate_features=False, **other_libraries_keywords):
        """Labels from classes_ (n,); the 0/1 matrix (n, d) for multi-label
        (CSR for a sparse training y, computed in blocks of rows); with the
        trees of n_estimators_ rounds, or of num_iteration rounds from round
        start_iteration (see Booster.predict). raw_score,
        pred_leaf: the booster's raw scores or leaves instead of labels, as
        LightGBM's. pred_contrib=True: each feature's contribution to the raw
        scores (SHAP values; see Booster.predict): (n, n_features + 1) for two
        classes (but multiclass or multiclassova), else (n, n_features + 1,
        n_classes). raw_score and pred_contrib not for a sparse training y.
        output_margin and iteration_range are XGBoost's (see
        booster.xgboost_rounds); validate_features as the regressor's predict's."""
        self._refuse_other_keywords("predict", other_libraries_keywords)
        raw_score, start_iteration, num_iteration = xgboost_rounds(
            raw_score, start_iteration, num_iteration, output_margin, iteration_range)
        options = {"raw_score": raw_score, "pred_leaf": pred_leaf, "pred_contrib": pred_contrib}
        if any(options.values()):
            X = self._check_predict_X(X)
            if not pred_leaf:
                self._refuse_raw_of_sparse_labels()
            return self.booster_.predict(X, num_iteration=num_iteration,
                                         start_iteration=start_iteration,
                                         **{name: True for name, on in options.items() if on})
        if not getattr(self, "_sparse_labels", False):
            return self._predicted(self.predict_proba(X, num_iteration=num_iteration,
                                                      start_iteration=start_iteration))
        X = self._check_predict_X(X)
        block = max(1, _PREDICT_BLOCK_VALUES // self.n_classes_)
        return sp.vstack([self._labels(self.booster_.predict(
            X[start:start + block], num_iteration=num_iteration, start_iteration=start_iteration))
            for start in range(0, X.shape[0], block)], format="csr")

    def predict_topk(self, X, k):
        """(labels, probabilities), (n, k) each: every row's k most probable
        labels (indices into classes_), without an (n, n_classes) array. Needs
        a model with sparse leaves: a sparse training y, or split='sparse'."""
        return self.booster_.predict_topk(self._check_predict_X(X), k)

    def _refuse_margins(self):
        # unfitted, the prediction's own check says so
        sparse_loss = getattr(getattr(self, "booster_", None), "sparse_loss", None)
        if sparse_loss is not None and sparse_loss.name == "squared_hinge":
            raise ValueError("objective 'squared_hinge' scores labels by margins, not "
                             "probabilities: use predict (the labels of a margin above 0), "
                             "predict_topk (each row's best labels and their margins), or "
                             "objective='sigmoid' for probabilities")

    def _refuse_raw_of_sparse_labels(self):
        if getattr(self, "_sparse_labels", False):
            raise ValueError("raw scores and pred_contrib are not available for a sparse "
                             "training y: they would be (n, n_labels)-wide arrays; "
                             "predict_topk gives each row's best labels' scores")

    def decision_function(self, X, start_iteration=0, num_iteration=None, *,
                          iteration_range=None, validate_features=False):
        """The raw scores predict_proba transforms, as predict(X, raw_score=True),
        as LightGBM's and scikit-learn's classifiers give them."""
        return self.predict(X, raw_score=True, start_iteration=start_iteration,
                            num_iteration=num_iteration, iteration_range=iteration_range,
                            validate_features=validate_features)

    def staged_decision_function(self, X):
        """Yields decision_function after each round, up to n_estimators_."""
        self._refuse_raw_of_sparse_labels()
        yield from self._staged(X, raw_score=True)

    def staged_predict_proba(self, X):
        """Yields predict_proba after each round, up to n_estimators_."""
        self._refuse_margins()
        for prediction in self._staged(X):
            yield self._proba(prediction)

    def staged_predict(self, X):
        """Yields predict after each round, up to n_estimators_ (the last one
        equals predict(X))."""
        for prediction in self._staged(X):
            yield self._predicted(self._proba(prediction))

    def _predicted(self, proba):
        """predict's result from predict_proba's: the labels, or with an
        objective function its raw scores, as LightGBM's."""
        return proba if isinstance(self.booster_.loss, CustomObjective) else self._labels(proba)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        tags.input_tags.sparse = True
        tags.target_tags.multi_output = True
        tags.classifier_tags.multi_label = True
        return tags
