"""The training parameters: names, aliases, defaults and allowed ranges,
validated once at the boundary so kernels never see a bad value."""
import difflib
import json
import math
import numbers
import re
import warnings
from dataclasses import dataclass

import numpy as np

from ._core import MAX_BINS
from .parallel import MAX_THREADS, asked_threads
from .validation import shortened, spelling_known, user_stacklevel


@dataclass(frozen=True)
class Spec:
    default: object
    kind: type              # int, float, str or dict
    low: float = None
    high: float = None
    low_open: bool = False  # low itself is not allowed
    choices: tuple = None
    allow_none: bool = False
    many: bool = False      # a list of values is allowed too
    doc: str = ""
    # why a value out of range or choices is not taken, or what it means
    # elsewhere and gbmo's way: in the error
    refused_because: str = ""


PARAMS = {
    "objective": Spec("mse", str, doc="loss: mse, softmax, sigmoid, multiclassova (or a name in "
                                      "OBJECTIVE_ALIASES), or a function "
                                      "(y_true, raw_pred) -> (grad, hess)"),
    "objective_params": Spec(None, dict, allow_none=True,
                             doc="keyword arguments of a registered objective (e.g. huber's delta)"),
    "ensembler": Spec(None, str, allow_none=True,
                      doc="gradient ensembler: None (GBDT-MO), a registered name (mtgbm, "
                          "sketch_topk, sketch_random, sketch_projection, weighted_sum, ...) "
                          "or a function (grad, hess, context) -> 4 arrays"),
    "ensembler_params": Spec(None, dict, allow_none=True,
                             doc="keyword arguments of a registered ensembler (e.g. k)"),
    "score_function": Spec("NewtonL2", str, choices=("NewtonL2", "L2"),
                           doc="how a split is scored, CatBoost's names: NewtonL2 (gradient "
                               "and hessian sums, G^2 / (H + lambda), as LightGBM and "
                               "XGBoost) or L2 (every row's hessian taken as its weight, "
                               "G^2 / (rows + lambda)); the leaves keep the hessians"),
    "scale_pos_weight": Spec(1.0, float, 0.0, 1e300, low_open=True,
                             doc="sigmoid, multiclassova: weight of the positive labels' part "
                                 "of the loss"),
    "is_unbalance": Spec(False, bool, doc="sigmoid, multiclassova: each output's minority "
                                          "class weighs the majority's count over its own"),
    "boost_from_average": Spec(True, bool, doc="start every row from the objective's best "
                                                 "constant score (False: from 0), as LightGBM's"),
    "num_class": Spec(None, int, 1, 2**31 - 1, allow_none=True,
                      doc="number of classes for softmax and multiclassova (default: max "
                          "label + 1); 1, LightGBM's default, means none for the others"),
    "learning_rate": Spec(0.1, float, 0.0, 1e3, low_open=True, doc="shrinkage of every tree"),
    "boosting": Spec("gbdt", str, choices=("gbdt", "dart", "goss", "rf"),
                     doc="gbdt, or dart: each round drops earlier rounds at random while it "
                         "fits (drop_rate, max_drop, skip_drop); goss, LightGBM's older name "
                         "of gbdt with data_sample_strategy='goss'; rf, a random forest: "
                         "every tree fits the start score's gradients on its own sample of "
                         "rows or features, and the model averages them"),
    "drop_rate": Spec(0.1, float, 0.0, 1.0, doc="dart: chance that an earlier round is dropped"),
    "max_drop": Spec(50, int, -2**31, 2**31 - 1,
                     doc="dart: rounds dropped at most in one round; <= 0: no limit"),
    "skip_drop": Spec(0.5, float, 0.0, 1.0, doc="dart: chance that a round drops nothing"),
    "tree_mode": Spec("multi_output", str, choices=("multi_output", "single_output"),
                      doc="one vector-leaf tree a round, or one single-output tree per output"),
    "split": Spec("dense", str, choices=("dense", "sparse", "sparse_restricted"),
                  doc="split finder: dense (all outputs), or top_k outputs per leaf, "
                      "chosen per child (sparse) or shared by both children (sparse_restricted)"),
    "top_k": Spec(None, int, 1, 2**31 - 1, allow_none=True,
                  doc="outputs kept per leaf by the sparse split finders"),
    "growth": Spec("bestfirst", str, choices=("bestfirst", "depthwise", "symmetric"),
                   doc="leaf-wise (best gain first), level by level, or symmetric: every "
                       "node of a level on one split (CatBoost's oblivious trees)"),
    "max_leaves": Spec(None, int, 2, 2**20, allow_none=True,
                       doc="leaves per tree; None: 31, or 2**max_depth for depth-wise and "
                           "symmetric growth under a max_depth (see max_leaves_of)",
                       refused_because="XGBoost's 0, no cap, is max_leaves left out with "
                                    "growth='depthwise' and a max_depth"),
    "max_depth": Spec(-1, int, -1, 2**10,
                      doc="depth limit of a tree; -1 or 0 means no limit"),
    "max_bins": Spec(255, int, 2, MAX_BINS,
                     doc="bins per feature, besides the bin of missing values; up to 255 "
                         "the binned data takes a byte a value, above it two",
                     refused_because="a feature needs 2 bins to be split, and 16-bit bins "
                                  "hold 65,535 besides the bin of missing values"),
    "max_bins_by_feature": Spec(None, int, 2, MAX_BINS, allow_none=True, many=True,
                                doc="bins of each feature (a list, one per feature) in "
                                    "place of max_bins, as LightGBM's max_bin_by_feature"),
    "bin_subsample": Spec(200_000, int, 1, 2**62, doc="rows sampled to find the bin edges"),
    "use_missing": Spec(True, bool, doc="False: a missing value (NaN) of a numeric feature is "
                                        "read as 0, in training and prediction (LightGBM's)"),
    "zero_as_missing": Spec(False, bool, doc="True: a 0 of a numeric feature is read as a "
                                             "missing value, in training and prediction "
                                             "(LightGBM's); needs a dense X"),
    "min_data_in_bin": Spec(1, int, 1, 2**62,
                            doc="fewest sampled values a bin of a numeric feature holds: a "
                                "bin of fewer joins its neighbour (LightGBM's; its default "
                                "is 3)"),
    "subsample": Spec(1.0, float, 0.0, 1.0, low_open=True,
                      doc="fraction of the rows each tree is grown on, drawn anew every "
                          "subsample_freq rounds (bagging)"),
    **{f"{side}_bagging_fraction": Spec(
        1.0, float, 0.0, 1.0, low_open=True,
        doc=f"binary sigmoid: the fraction of the {rows} rows each bagged tree is grown on "
            "(LightGBM's balanced bagging: below 1, pos_ and neg_bagging_fraction replace "
            "subsample)") for side, rows in (("pos", "positive"), ("neg", "negative"))},
    "subsample_freq": Spec(1, int, 0, 2**31 - 1,
                           doc="rounds between two row draws when subsample < 1; 0: no "
                               "bagging, as in LightGBM"),
    "data_sample_strategy": Spec("bagging", str, choices=("bagging", "goss"),
                                 doc="rows each tree is grown on: bagging (subsample) or "
                                     "goss, gradient-based one-side sampling (top_rate, "
                                     "other_rate)"),
    "top_rate": Spec(0.2, float, 0.0, 1.0, doc="goss: fraction of rows with the largest "
                                                "gradients every tree keeps"),
    "other_rate": Spec(0.1, float, 0.0, 1.0, low_open=True,
                       doc="goss: fraction of rows drawn from the others, their gradients "
                           "amplified by the others' count over the draw's"),
    "goss_renew_leaves": Spec(True, bool,
                              doc="goss: leaf values from every row's own gradients once the "
                                  "tree is grown on the sample (False: from the amplified "
                                  "sample, as LightGBM)"),
    "extra_trees": Spec(False, bool,
                        doc="try one random threshold per feature at each node"),
    "random_strength": Spec(0.0, float, 0.0, 1e300,
                            doc="noise on each candidate split's score, as CatBoost's "
                                "random_strength: about normal, with deviation "
                                "random_strength x the gradients' root mean square x the "
                                "square root of the children's score, fading as "
                                "n / (n + exp(learning_rate x round)) for n training rows "
                                "and off below 1e-6 of its start; 0: none"),
    "colsample_bytree": Spec(1.0, float, 0.0, 1.0, low_open=True,
                             doc="fraction of the features each tree may split on"),
    "colsample_bynode": Spec(1.0, float, 0.0, 1.0, low_open=True,
                             doc="fraction of the tree's features each node may split on"),
    "lambda_l2": Spec(None, float, 0.0, 1e300, allow_none=True,
                      doc="L2 penalty on leaf values (lambda); None: 1.0, or 0.0 for "
                          "boosting='rf' (see with_default_lambda_l2)"),
    "lambda_l1": Spec(0.0, float, 0.0, 1e300,
                      doc="L1 penalty on leaf values (alpha): every gradient sum is moved "
                          "toward 0 by it before leaf values and gains are computed"),
    "min_samples_leaf": Spec(20, int, 1, 2**62, doc="fewest training rows in a leaf"),
    "min_child_weight": Spec(1e-3, float, 0.0, 1e300,
                             doc="smallest hessian sum, averaged over outputs, in a leaf"),
    "min_gain": Spec(0.0, float, 0.0, 1e300,
                     doc="smallest split gain, averaged over outputs, to split a node"),
    "max_delta_step": Spec(0.0, float, -1e300, 1e300,
                           doc="bound on the magnitude of leaf values before the learning rate; "
                               "<= 0: none"),
    "path_smooth": Spec(0.0, float, 0.0, 1e300,
                        doc="pulls a node of n rows toward its parent's values by "
                            "path_smooth / (n + path_smooth), LightGBM's path smoothing; "
                            "0: none"),
    "linear_tree": Spec(False, bool,
                        doc="leaves hold linear models of the numeric features split on along "
                            "their path (LightGBM's linear trees), one per output"),
    "linear_lambda": Spec(0.0, float, 0.0, 1e300,
                          doc="linear_tree: L2 penalty on the leaves' coefficients (not their "
                              "intercepts)"),
    "monotone_constraints": Spec(None, int, -1, 1, allow_none=True, many=True,
                                 doc="per feature: 1 (every output non-decreasing in it), "
                                     "-1 (non-increasing) or 0 (free); or per feature a "
                                     "list with one such value per output"),
    "monotone_constraints_method": Spec(
        "basic", str, choices=("basic",),
        doc="how constrained leaves are bounded: at the midpoint of a constrained split's two "
            "children, LightGBM's basic method",
        refused_because="gbmo bounds leaves by LightGBM's basic method only; on "
                        "benchmarks/bench_monotone.py's data LightGBM's intermediate and "
                        "advanced methods came to its basic one's accuracy (test RMSE 0.311 "
                        "and 0.308 against 0.309)"),
    "monotone_penalty": Spec(0.0, float, 0.0, 0.0,
                             doc="LightGBM's penalty on constrained splits near the root; "
                                 "gbmo has none: 0 only",
                             refused_because="gbmo does not penalise constrained splits by "
                                             "depth"),
    "interaction_constraints": Spec(None, int, 0, 2**31 - 1, allow_none=True, many=True,
                                    doc="groups (lists) of feature indices; features may "
                                        "share a branch only when one group holds them all"),
    "categorical_feature": Spec(None, str, allow_none=True, many=True,
                                doc="categorical features: indices or names, or 'auto' (the "
                                    "pandas category columns); None: the Dataset's choice"),
    "cat_smooth": Spec(10.0, float, 0.0, 1e300,
                       doc="hessian added to each category's when ordering the categories; "
                           "categories of fewer rows in a node join no set there"),
    "cat_l2": Spec(10.0, float, 0.0, 1e300,
                   doc="added to lambda_l2 when scoring the children of a categorical set "
                       "(the split's gain, not the leaf values)"),
    "min_data_per_group": Spec(0, int, 0, 2**62,
                               doc="a categorical set grows by groups of categories of at least "
                                   "this many rows, and leaves the other side at least as many "
                                   "(LightGBM's default is 100)"),
    "max_cat_threshold": Spec(32, int, 1, 2**31 - 1,
                              doc="most categories in a categorical set, taken from either end "
                                  "of the node's order"),
    "max_cat_to_onehot": Spec(4, int, 0, 2**31 - 1,
                              doc="a categorical feature of at most this many categories splits "
                                  "one category from the rest"),
    "hist_cache": Spec(64, int, 1, 2**20,
                       doc="node histograms kept for subtraction (at most 1 GiB of them, "
                       "but 2); evicted ones are rebuilt"),
    "metric": Spec(None, str, allow_none=True, many=True,
                   doc="evaluation metric or list of metrics (default: the objective's)"),
    "n_threads": Spec(None, int, -MAX_THREADS, MAX_THREADS, allow_none=True,
                      doc="OpenMP threads; None, 0 or -1: all cores, or "
                          "OMP_NUM_THREADS / a threadpoolctl limit when set; below -1, "
                          "joblib's count: all cores + 1 + n_threads (-2: all but one)"),
    "adaptive_threads": Spec(True, bool,
                             doc="while other processes hold the cores, run training rounds "
                                 "on fewer threads (the model is the same); False: always "
                                 "n_threads"),
    "seed": Spec(0, int, 0, 2**63 - 1,
                 doc="random seed (bin, row and column subsampling, ensemblers)"),
    "verbosity": Spec(1, int, -1, 3, doc="<= 0 silences the per-round log",
                      refused_because="CatBoost's and XGBoost's verbose=N, a log every N rounds, "
                                   "is callbacks=[gbmo.log_evaluation(N)], or the estimators' "
                                   "fit(verbose=N)"),
    # LightGBM's switches that never change its model, taken so that its
    # users' params run unchanged
    "force_col_wise": Spec(False, bool, doc="LightGBM's histogram layout switch; gbmo chooses "
                                            "each feature's layout itself: no effect"),
    "force_row_wise": Spec(False, bool, doc="as force_col_wise: no effect"),
    "deterministic": Spec(False, bool, doc="gbmo's models never depend on the threads or the "
                                           "machine's load: no effect"),
    "device_type": Spec("cpu", str, choices=("cpu",), doc="gbmo trains on the CPU",
                        refused_because="gbmo trains on the CPU: GPU training is not built"),
    "feature_pre_filter": Spec(True, bool, doc="LightGBM's leaving out of features that cannot "
                                               "split under min_data_in_leaf; gbmo's search "
                                               "never splits them: no effect"),
    # LightGBM's DART variants: gbmo's DART is the one of these values
    "uniform_drop": Spec(True, bool, choices=(True,),
                         doc="gbmo's DART drops every earlier round with the same chance, "
                             "LightGBM's uniform_drop=True"),
    "xgboost_dart_mode": Spec(False, bool, choices=(False,),
                              doc="gbmo's DART scales the new trees by learning_rate / (k + 1) "
                                  "and the k dropped rounds by k / (k + 1), LightGBM's "
                                  "xgboost_dart_mode=False"),
    "tree_method": Spec("hist", str, choices=("hist", "auto"),
                        doc="XGBoost's; gbmo's trees are histogram-based: no effect",
                        refused_because="gbmo's trees are histogram-based, on the CPU: "
                                        "XGBoost's exact, approx and GPU methods are not built"),
}

ALIASES = {
    "num_leaves": "max_leaves",
    "max_bin": "max_bins",
    "max_bin_by_feature": "max_bins_by_feature",
    "reg_lambda": "lambda_l2",
    "reg_alpha": "lambda_l1",
    "boosting_type": "boosting",
    "rate_drop": "drop_rate",
    "boost": "boosting",
    "l1_regularization": "lambda_l1",
    "lambda": "lambda_l2",
    "min_data_in_leaf": "min_samples_leaf",
    "min_child_samples": "min_samples_leaf",
    "min_data_per_leaf": "min_samples_leaf",
    "min_data": "min_samples_leaf",
    "min_gain_to_split": "min_gain",
    "shrinkage_rate": "learning_rate",
    "n_jobs": "n_threads",
    "num_thread": "n_threads",
    "verbose": "verbosity",
    "subsample_for_bin": "bin_subsample",
    "bin_construct_sample_cnt": "bin_subsample",
    "sub_row": "subsample",
    "bagging": "subsample",
    "sub_feature": "colsample_bytree",
    "min_sum_hessian_in_leaf": "min_child_weight",
    "min_split_gain": "min_gain",
    "min_split_loss": "min_gain",
    "eta": "learning_rate",
    "num_threads": "n_threads",
    "nthread": "n_threads",
    "random_state": "seed",
    "loss": "objective",
    "bagging_fraction": "subsample",
    **dict.fromkeys(("pos_sub_row", "pos_subsample", "pos_bagging"), "pos_bagging_fraction"),
    **dict.fromkeys(("neg_sub_row", "neg_subsample", "neg_bagging"), "neg_bagging_fraction"),
    "bagging_freq": "subsample_freq",
    "feature_fraction": "colsample_bytree",
    "feature_fraction_bynode": "colsample_bynode",
    "max_features": "colsample_bynode",  # scikit-learn's HistGradientBoosting's
    "monotone_constraint": "monotone_constraints",
    "mc": "monotone_constraints",
    "monotone_constraining_method": "monotone_constraints_method",
    "mc_method": "monotone_constraints_method",
    "monotone_splits_penalty": "monotone_penalty",
    "ms_penalty": "monotone_penalty",
    "mc_penalty": "monotone_penalty",
    "monotonic_cst": "monotone_constraints",
    "interaction_cst": "interaction_constraints",
    "extra_tree": "extra_trees",
    "linear_trees": "linear_tree",
    "unbalance": "is_unbalance",
    "max_leaf_output": "max_delta_step",
    "max_tree_output": "max_delta_step",
    "unbalanced_sets": "is_unbalance",
    "cat_feature": "categorical_feature",
    "categorical_column": "categorical_feature",
    "categorical_features": "categorical_feature",
    "device": "device_type",
    **dict.fromkeys(("min_sum_hessian", "min_hessian", "min_sum_hessian_per_leaf"),
                    "min_child_weight"),
    "num_classes": "num_class",
    **dict.fromkeys(("num_leaf", "max_leaf", "max_leaf_nodes"), "max_leaves"),
    "l2_regularization": "lambda_l2",
    "nthreads": "n_threads",
    **dict.fromkeys(("metrics", "metric_types"), "metric"),
    **dict.fromkeys(("application", "app", "objective_type"), "objective"),
    "sub_feature_bynode": "colsample_bynode",
    "cat_column": "categorical_feature",
    # XGBoost's and CatBoost's names
    "multi_strategy": "tree_mode",
    "grow_policy": "growth",
    "eval_metric": "metric",
    "l2_leaf_reg": "lambda_l2",
    "random_seed": "seed",
    "thread_count": "n_threads",
    "loss_function": "objective",
    "depth": "max_depth",
    "border_count": "max_bins",
    "rsm": "colsample_bynode",
    "cat_features": "categorical_feature",
    "booster": "boosting",
}


# What users of LightGBM and XGBoost call gbmo's built-in objectives.
OBJECTIVE_ALIASES = {
    "regression": "mse", "regression_l2": "mse", "l2": "mse", "mean_squared_error": "mse",
    "rmse": "mse", "l2_root": "mse", "root_mean_squared_error": "mse",
    "squared_error": "mse", "reg:squarederror": "mse",
    "multiclass": "softmax", "multi:softprob": "softmax",
    "multiclass_ova": "multiclassova", "ova": "multiclassova", "ovr": "multiclassova",
    "binary": "sigmoid", "binary:logistic": "sigmoid", "multilabel": "sigmoid",
    "reg:logistic": "sigmoid",
    # CatBoost's
    "RMSE": "mse", "MultiRMSE": "mse", "Logloss": "sigmoid", "MultiLogloss": "sigmoid",
    "MultiClass": "softmax", "MultiClassOneVsAll": "multiclassova",
    "CrossEntropy": "sigmoid", "MultiCrossEntropy": "sigmoid",
    # gbmo's mse takes NaN targets as missing labels
    "MultiRMSEWithMissingValues": "mse",
    # gbmo-losses' (plugins: refused as unknown without them), by CatBoost's names
    "MAE": "l1", "MAPE": "mape", "Quantile": "quantile", "MultiQuantile": "quantile",
    "Huber": "huber", "Poisson": "poisson", "Tweedie": "tweedie",
    # gbmo-losses' (plugins: refused as unknown without them), by XGBoost's names
    "reg:absoluteerror": "l1", "reg:quantileerror": "quantile", "count:poisson": "poisson",
    "reg:tweedie": "tweedie", "reg:gamma": "gamma",
    # gbmo-losses' l1 and mape (plugins: refused as unknown without them)
    "regression_l1": "l1", "mae": "l1", "mean_absolute_error": "l1", "absolute_error": "l1",
    "mean_absolute_percentage_error": "mape",
    # LightGBM's cross-entropy takes labels anywhere in [0, 1], as sigmoid does
    "cross_entropy": "sigmoid", "xentropy": "sigmoid",
}


# LightGBM's spellings of "no built-in metric" (custom metrics only)
NO_METRIC = ("none", "null", "na", "custom")


def names_no_metric(item):
    """Whether a metric item is one of the names of no metric ("None", ...)."""
    return isinstance(item, str) and item.lower() in NO_METRIC


# CatBoost's names of objective parameters that gbmo-losses names otherwise
_CATBOOST_OBJECTIVE_KEYWORDS = {"variance_power": "tweedie_variance_power"}


def objective_and_written_params(objective):
    """(objective, its parameters) of CatBoost's "Name:key=value;key=value"
    ("Quantile:alpha=0.9", "MultiQuantile:alpha=0.1,0.9"); any other value
    with {} (XGBoost's names hold a ':' but no '=')."""
    if not isinstance(objective, str) or ":" not in objective or "=" not in objective:
        return objective, {}
    name, written = objective.split(":", 1)
    params = {}
    for item in written.split(";"):
        key, equals, value = item.partition("=")
        if not equals or not key.strip():
            raise ValueError(f"objective {objective!r}: parameters are written key=value, "
                             f"separated by ';' (as CatBoost's 'Quantile:alpha=0.9'), got "
                             f"{item!r}")
        key, value = key.strip(), value.strip()
        params[_CATBOOST_OBJECTIVE_KEYWORDS.get(key, key)] = (
            _numbers_in_text(value) if "," in value else _number_in_text(value))
    return name, params


def canonical_objective(objective):
    """gbmo's name for an objective given by one of OBJECTIVE_ALIASES, with
    or without CatBoost's written parameters ("Quantile:alpha=0.9" is
    quantile); any other value unchanged."""
    objective = objective_and_written_params(objective)[0]
    if not isinstance(objective, str):
        return objective
    from .registry import LOSSES

    objective = spelling_known(objective, OBJECTIVE_ALIASES, LOSSES)
    return OBJECTIVE_ALIASES.get(objective, objective)


def _fold_written_objective_params(resolved):
    """CatBoost's parameters written in the objective's name become its
    objective_params (refused when objective_params gives them too)."""
    name, written = objective_and_written_params(resolved["objective"])
    resolved["objective"] = canonical_objective(name)
    given = dict(resolved["objective_params"] or {})
    twice = sorted(set(written) & set(given))
    if twice:
        raise ValueError(f"objective parameter(s) {', '.join(map(repr, twice))} are written in "
                         "the objective's name and given in objective_params; give them once")
    if written:
        resolved["objective_params"] = {**given, **written}


def _is_loss_object(value):
    from .losses import Loss

    return callable(value) or isinstance(value, Loss)


def _is_index_or_flag(value):
    """An item of categorical_feature besides names: an index, or a mask's flag."""
    return isinstance(value, (numbers.Integral, np.bool_))


def _is_text(value):
    """An item of interaction_constraints besides indices: a feature's name, or
    an index as text (LightGBM's), told apart once the names are known."""
    return isinstance(value, str)


# What the refusal of a value names as allowed, for parameters that also take
# objects (_ALLOW_OBJECTS)
_OBJECT_FORMS = {
    "objective": "a name, a function (y_true, raw_pred) -> (grad, hess) or a gbmo.Loss "
                 "instance",
    "ensembler": "a registered name or a function (grad, hess, context) -> 4 arrays",
}

# Values a parameter takes besides its kind: a function or a Loss instance for
# the objective, a function or callable instance for the ensembler, ...
_ALLOW_OBJECTS = {"objective": _is_loss_object, "ensembler": callable,
                  "categorical_feature": _is_index_or_flag,
                  "interaction_constraints": _is_text}

# Parameters of one value per feature that also take a dict {feature: value}
# (XGBoost's and scikit-learn's form; a feature left out takes 0).
_BY_FEATURE = ("monotone_constraints",)


def _checked_by_feature(name, value, spec, label):
    for feature in value:
        if not isinstance(feature, (str, numbers.Integral)) or isinstance(feature, bool):
            raise TypeError(f"parameter {label} as a dict maps features (names or indices) to "
                            f"values; got the key {feature!r}")
    return {feature: _check_value(name, v, spec, label) for feature, v in value.items()}


def constraints_at_positions(params, feature_names, n_features):
    """params whose monotone_constraints and interaction_constraints name
    features by position: a dict {feature: value} becomes a list (0 for the
    features it leaves out), names their positions; text that names no
    feature but is an integer is that index, as LightGBM reads numbers given
    as text. Indices are checked where the constraints are read."""
    def position(feature, what):
        if not isinstance(feature, str):
            return feature
        if feature_names is not None and feature in feature_names:
            return feature_names.index(feature)
        index = _number_in_text(feature)
        if isinstance(index, numbers.Integral):
            return _check_value("interaction_constraints", index,
                                PARAMS["interaction_constraints"], repr(what))
        if feature_names is None:
            raise ValueError(f"{what} names the feature {feature!r}, but X has no feature names "
                             "(give a DataFrame, or feature_name, or indices)")
        raise ValueError(f"{what} names {feature!r}, which is not a feature name; the names "
                         f"are {shortened(repr(feature_names), 200)}")

    monotone, groups = params["monotone_constraints"], params["interaction_constraints"]
    if isinstance(monotone, dict):
        if len({isinstance(v, list) for v in monotone.values()}) > 1:
            raise ValueError(f"monotone_constraints as a dict gives every feature one value, or "
                             f"every feature a list of one per output, not both; got "
                             f"{shortened(repr(monotone), 120)}")
        width = next((len(v) for v in monotone.values() if isinstance(v, list)), None)
        listed = [0 if width is None else [0] * width for _ in range(n_features)]
        for feature, value in monotone.items():
            at = position(feature, "monotone_constraints")
            if not 0 <= at < n_features:
                raise ValueError(f"monotone_constraints constrains feature {at}, out of range; "
                                 f"X has {n_features} features (indices 0 .. {n_features - 1})")
            listed[at] = value
        monotone = listed
    if groups is not None:
        groups = [[position(f, "interaction_constraints") for f in group] for group in groups]
    return {**params, "monotone_constraints": monotone, "interaction_constraints": groups}


def _check_value(name, value, spec, label=None):
    """value checked against spec; errors name the parameter by label (the
    key the user gave, default name)."""
    label = label or repr(name)
    if spec.many and hasattr(value, "tolist") and getattr(value, "ndim", 0) > 0:
        value = value.tolist()  # a numpy array of values
    if spec.many and isinstance(value, (list, tuple)):
        return [_check_value(name, v, spec, label) for v in value]
    if name in _BY_FEATURE and isinstance(value, dict):
        return _checked_by_feature(name, value, spec, label)
    if value is None:
        if spec.allow_none:
            return None
        raise ValueError(f"parameter {label} must not be None")
    if name in _ALLOW_OBJECTS and _ALLOW_OBJECTS[name](value):
        return value
    if spec.kind is bool:
        # the command line gives strings; numpy gives its own bools
        value = _bool_in_text(value)
        if not isinstance(value, (bool, np.bool_, numbers.Integral)) or value not in (0, 1):
            raise TypeError(f"parameter {label} must be True or False (or 1 / 0, 'true' / "
                            f"'false'), got {value!r}")
        if spec.choices is not None and bool(value) not in spec.choices:
            raise ValueError(f"parameter {label} = {bool(value)} is not taken: {spec.doc}")
        return bool(value)
    if spec.kind is dict:
        if not isinstance(value, dict) or not all(isinstance(k, str) for k in value):
            raise TypeError(f"parameter {label} must be a dict of keyword arguments, got {value!r}")
        return dict(value)
    if spec.kind is str:
        if not isinstance(value, str):
            raise TypeError(f"parameter {label} must be "
                            f"{_OBJECT_FORMS.get(name, 'a string')}, got {value!r}")
        if spec.choices is not None and value not in spec.choices:
            raise ValueError(
                f"parameter {label} = {value!r} is not allowed; allowed: {', '.join(spec.choices)}"
                + (f" ({spec.refused_because})" if spec.refused_because else ""))
        return value
    if isinstance(value, str):
        value = _number_in_text(value)
    if spec.many and isinstance(value, (str, dict)):
        raise TypeError(f"parameter {label} takes a list, got {shortened(repr(value), 80)}")
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"parameter {label} must be a number, got {value!r}")
    # a float inf or NaN is out of range below (an int of any size is finite)
    if spec.kind is int and (isinstance(value, numbers.Integral) or math.isfinite(value)):
        if value != int(value):
            raise ValueError(f"parameter {label} must be an integer, got {value!r}")
        value = int(value)
    elif spec.kind is not int:
        value = float(value)
    too_low = value <= spec.low if spec.low_open else value < spec.low
    if too_low or value > spec.high or value != value:
        bracket = "(" if spec.low_open else "["
        raise ValueError(
            f"parameter {label} = {value!r} is out of range; allowed: "
            f"{bracket}{spec.low}, {spec.high}]"
            + (f" ({spec.refused_because})" if spec.refused_because else ""))
    return value


def _bool_in_text(value):
    """'true' / 'false' (any case), as the command line and LightGBM's config
    give a switch, as the bool; any other value unchanged."""
    if isinstance(value, str):
        return {"true": True, "false": False}.get(value.lower(), value)
    return value


def list_in_text(text):
    """A list given as text: JSON ("[[0, 1], [2, 3]]", XGBoost's form of
    interaction_constraints), LightGBM's lists between commas ("[0,1],[2,3]")
    or numbers between commas (_numbers_in_text); other text unchanged."""
    if text.lstrip().startswith("["):
        for candidate in (text, f"[{text}]"):
            try:
                return json.loads(candidate)
            except ValueError:
                pass
    return _numbers_in_text(text)


def _numbers_in_text(text):
    """LightGBM's text of a list of numbers ("1,0,-1"; "1": one), or
    XGBoost's ("(1,0,-1)"), as the list; other text unchanged."""
    inner = text.strip()
    if inner.startswith("(") and inner.endswith(")"):
        inner = inner[1:-1]
    parts = [_number_in_text(part) for part in inner.split(",")]
    return parts if all(isinstance(part, numbers.Real) for part in parts) else text


def _number_in_text(text):
    """A number given as text ("0.1", as LightGBM takes it, which passes its
    parameters on as text), else the text unchanged."""
    try:
        return int(text)
    except ValueError:
        try:
            return float(text)
        except ValueError:
            return text


# The objectives of gbmo-losses, the plugin distribution in gbmo's repository
# (losses/): a user who installed gbmo alone is told where they are.
GBMO_LOSSES_OBJECTIVES = ("huber", "fair", "quantile", "l1", "mape", "poisson", "tweedie",
                          "gamma", "focal")


# XGBoost's objectives whose names gbmo refuses, with its way
_XGBOOST_OBJECTIVES_NOT_TAKEN = {
    "multi:softmax": "its predictions are classes; gbmo's softmax (XGBoost's multi:softprob) "
                     "predicts probabilities, whose argmax is the class (GBMOClassifier's "
                     "predict gives it)",
    "binary:logitraw": "its predictions are raw scores; give objective 'sigmoid' and "
                       "predict(raw_score=True)",
    "binary:hinge": "gbmo has no hinge objective for dense labels; give 'sigmoid'",
    "reg:pseudohubererror": "gbmo-losses' huber is the Huber loss, not pseudo-Huber; give "
                            "'huber' with its delta",
}
# LightGBM's objectives whose names gbmo refuses, with its way
_CUSTOM_GRADIENTS = ("give the function itself as params['objective'], or a Booster's "
                     "update(fobj=f), which takes a round's gradients from f whatever the "
                     "objective")
_LIGHTGBM_OBJECTIVES_NOT_TAKEN = {
    "none": _CUSTOM_GRADIENTS, "null": _CUSTOM_GRADIENTS, "na": _CUSTOM_GRADIENTS,
    # also how a gbmo model file records an objective function, which it does not keep
    "custom": "a model file's params say so of an objective given as a function, which the "
              "file does not keep; " + _CUSTOM_GRADIENTS,
    **dict.fromkeys(("cross_entropy_lambda", "xentlambda"),
                    "gbmo has no such objective; 'cross_entropy' (its sigmoid) takes labels "
                    "in [0, 1]"),
}


# LightGBM's, XGBoost's and CatBoost's ranking objectives, refused by name
RANKING_OBJECTIVES = ("lambdarank", "rank_xendcg", "xendcg", "xe_ndcg", "xe_ndcg_mart",
                      "xendcg_mart", "rank:pairwise", "rank:ndcg", "rank:map", "YetiRank",
                      "YetiRankPairwise", "PairLogit", "PairLogitPairwise", "QueryRMSE",
                      "QuerySoftMax", "QueryCrossEntropy")


def plugin_objective_missing(objective):
    """Why objective, one of gbmo-losses' (GBMO_LOSSES_OBJECTIVES), is not
    registered here: plugins are switched off, or gbmo-losses is not
    installed; for training and for loading a model that names it."""
    from .registry import DISABLE_ENV, LOSSES

    if LOSSES.disabled:
        return (f"objective {objective!r} is in gbmo-losses, gbmo's plugin distribution, and "
                f"plugins are switched off ({DISABLE_ENV} is set): unset it to use plugins; "
                "gbmo alone has " + ", ".join(LOSSES.names()))
    return (f"objective {objective!r} is in gbmo-losses, gbmo's plugin distribution, which is "
            "not installed: install it from gbmo's repository (python3 -m pip install "
            "./losses); gbmo alone has " + ", ".join(LOSSES.names()))


def _check_names(resolved):
    from .metrics import canonical_metric, is_known, unknown_metric_message
    from .registry import ENSEMBLERS, LOSSES

    objective = resolved["objective"]
    if isinstance(objective, str) and objective not in LOSSES:
        if objective in RANKING_OBJECTIVES:
            raise ValueError(f"objective {objective!r} ranks rows within groups: gbmo has no "
                             "ranking objectives; its objectives are " + ", ".join(LOSSES.names()))
        if objective in _XGBOOST_OBJECTIVES_NOT_TAKEN:
            raise ValueError(f"objective {objective!r} is XGBoost's, and gbmo does not take it: "
                             + _XGBOOST_OBJECTIVES_NOT_TAKEN[objective])
        if objective in _LIGHTGBM_OBJECTIVES_NOT_TAKEN:
            raise ValueError(f"objective {objective!r} is LightGBM's, and gbmo does not take it: "
                             + _LIGHTGBM_OBJECTIVES_NOT_TAKEN[objective])
        if objective in GBMO_LOSSES_OBJECTIVES:
            raise ValueError(plugin_objective_missing(objective))
        raise ValueError(
            f"unknown objective {objective!r}; known objectives: {', '.join(LOSSES.names())} "
            f"(also {', '.join(OBJECTIVE_ALIASES)}){LOSSES.discovery_note()}"
        )
    ensembler = resolved["ensembler"]
    if ensembler == "custom" and "custom" not in ENSEMBLERS:
        raise ValueError("ensembler 'custom' is how a model file records an ensembler given as "
                         "a function or an instance, which it does not keep; pass "
                         "ensembler=<it> to train again")
    if isinstance(ensembler, str) and ensembler not in ENSEMBLERS:
        raise ValueError(f"unknown ensembler {ensembler!r}; known ensemblers: "
                         f"{', '.join(ENSEMBLERS.names())}{ENSEMBLERS.discovery_note()}")
    metrics = resolved["metric"]
    if metrics == []:  # no metric named: the objective's, as LightGBM's metric=""
        resolved["metric"] = metrics = None
    if names_no_metric(metrics):
        resolved["metric"] = metrics = []  # only custom metrics (feval), as in LightGBM
    if isinstance(metrics, list):
        # an alias and its metric are one metric, evaluated once
        resolved["metric"] = metrics = list(dict.fromkeys(canonical_metric(m) for m in metrics))
    elif metrics is not None:
        resolved["metric"] = metrics = canonical_metric(metrics)
    for metric in metrics if isinstance(metrics, list) else [metrics]:
        if metric is not None and not is_known(metric):
            raise ValueError(unknown_metric_message(metric))


def _check_monotone_constraints(resolved):
    constraints = resolved["monotone_constraints"]
    if constraints is None:
        return
    if not isinstance(constraints, (list, dict)):
        raise ValueError(f"parameter 'monotone_constraints' must be a list with one value per "
                         f"feature (-1, 0 or 1), or a dict of features' values, got "
                         f"{constraints!r}")
    rows = constraints.values() if isinstance(constraints, dict) else constraints
    if not any(value != 0 for row in rows
               for value in (row if isinstance(row, list) else [row])):
        resolved["monotone_constraints"] = None
        return
    if (resolved["split"] != "dense" or resolved["growth"] == "symmetric"
            or _leaves_from_other_gradients(resolved)):
        raise ValueError(
            "parameter 'monotone_constraints' needs split='dense', growth 'bestfirst' or "
            "'depthwise', no ensembler and score_function='NewtonL2': it bounds the values "
            f"of every output of a leaf; got split={resolved['split']!r}, "
            f"growth={resolved['growth']!r}, ensembler={resolved['ensembler']!r}, "
            f"score_function={resolved['score_function']!r}")


def _check_linear_tree(resolved):
    """linear_tree fits each leaf's line to its rows' gradients, for every
    output of a dense leaf."""
    if not resolved["linear_tree"]:
        return
    refused = {"split": resolved["split"] != "dense",
               "ensembler": resolved["ensembler"] is not None,
               "score_function": resolved["score_function"] != "NewtonL2",
               "monotone_constraints": resolved["monotone_constraints"] is not None,
               "max_delta_step": resolved["max_delta_step"] > 0,
               "path_smooth": resolved["path_smooth"] > 0,
               "data_sample_strategy": resolved["data_sample_strategy"] == "goss"}
    also = {"data_sample_strategy": " (or boosting='goss')"}
    if resolved["objective"] == "l1":
        raise ValueError("linear_tree=True is not taken with objective 'l1' (LightGBM's "
                         "regression_l1, mae), as LightGBM refuses it: its gradients are the "
                         "residuals' signs, of no curvature, which a leaf's line cannot be fit "
                         "to; try objective 'huber' or 'quantile', or constant leaves")
    given = ", ".join(f"{name}={resolved[name]!r}{also.get(name, '')}"
                      for name, wrong in refused.items() if wrong)
    if given:
        raise ValueError(
            f"linear_tree=True is not taken with {given}: a leaf's line is one Newton step "
            "on all its rows' gradients, for every output of a dense leaf, unbounded; "
            "allowed with it: split='dense', no ensembler, score_function='NewtonL2', no "
            "monotone_constraints, max_delta_step or path_smooth, and bagging rather than "
            "GOSS")


def _leaves_from_other_gradients(resolved):
    """Whether the leaves are set from other gradients than the splits'
    (an ensembler's update gradients, or the hessians under
    score_function='L2'), which the bounds on leaf values cannot follow."""
    return resolved["ensembler"] is not None or resolved["score_function"] == "L2"


def _objective_keywords(objective):
    """The keyword parameters a registered objective's class takes (none for
    a function, or a name the registry cannot load: that error comes later)."""
    if not isinstance(objective, str):
        return set()
    from .registry import LOSSES, keyword_parameters  # it loads plugins: only when asked

    try:
        factory = LOSSES.get(objective)
    except Exception:  # an unknown or broken objective is reported by make_loss
        return set()
    return set(keyword_parameters(factory)) - {"n_threads"}


# Other libraries' parameters that gbmo does not take: (whose, why or what
# to give instead), named in the refusal.
_NOT_TAKEN = {
    **dict.fromkeys(("bagging_seed", "feature_fraction_seed", "data_random_seed", "drop_seed",
                     "extra_seed", "objective_seed"),
                    ("LightGBM", "gbmo draws every random choice from one seed: give seed")),
    "group": ("LightGBM", "gbmo has no ranking objectives"),
    "feature_types": ("XGBoost", "give categorical_feature (indices or names), or a "
                                 "DataFrame's category columns"),
    "feature_weights": ("XGBoost", "gbmo draws features uniformly: colsample_bytree or "
                                   "colsample_bynode"),
    **dict.fromkeys(("class_weights", "auto_class_weights"),
                    ("CatBoost", "GBMOClassifier's class_weight takes a dict {label: weight} "
                                 "or 'balanced', as scikit-learn's and LightGBM's")),
    "callbacks": ("XGBoost 2", "give them to fit(callbacks=[...]) or train(callbacks=[...]), "
                               "as LightGBM takes them (gbmo's callbacks are LightGBM's: "
                               "gbmo.early_stopping, gbmo.log_evaluation, ...)"),
    "gamma": ("XGBoost", "it is XGBoost's min_split_loss, which gbmo takes under that name "
                         "(halved: gbmo's gain is half XGBoost's); in gbmo, gamma is focal "
                         "loss's own parameter"),
    "colsample_bylevel": ("XGBoost", "gbmo draws features per tree (colsample_bytree) and per "
                                     "node (colsample_bynode), not per level"),
    "num_parallel_tree": ("XGBoost", "gbmo's random forest is boosting='rf', with subsample and "
                                     "colsample_bytree"),
    "base_score": ("XGBoost", "the start score is the target's (weighted) mean or the loss's "
                              "own start (boost_from_average), or per row Dataset(init_score=)"),
    "sampling_method": ("XGBoost", "gbmo bags rows uniformly (subsample) or by gradient "
                                   "(data_sample_strategy='goss')"),
    **dict.fromkeys(("sample_type", "normalize_type"),
                    ("XGBoost", "gbmo's DART is LightGBM's: rounds dropped uniformly, new "
                                "trees scaled as LightGBM scales them")),
    "bootstrap_type": ("CatBoost", "gbmo bags rows uniformly (subsample, CatBoost's Bernoulli) "
                                   "or by gradient (data_sample_strategy='goss'); no Bayesian "
                                   "bootstrap"),
    "bagging_temperature": ("CatBoost", "it weighs CatBoost's Bayesian bootstrap, which gbmo "
                                        "has not: give subsample"),
    "one_hot_max_size": ("CatBoost", "give max_cat_to_onehot, LightGBM's name"),
    "od_type": ("CatBoost", "gbmo stops early after early_stopping_round (od_wait) rounds "
                            "without improvement, as CatBoost's 'Iter'"),
    "use_best_model": ("CatBoost", "after early stopping gbmo predicts with the best round "
                                   "already (best_iteration)"),
    **dict.fromkeys(("leaf_estimation_method", "leaf_estimation_iterations"),
                    ("CatBoost", "gbmo's leaves take one Newton step, -G / (H + lambda_l2)")),
}


# LightGBM settings that steer how LightGBM works (its memory, loading,
# threads across machines, snapshots), not what it learns: taken and left
# unused, so that a LightGBM user's params run unchanged.
_LIGHTGBM_WITHOUT_EFFECT = (
    "tree_learner", "tree", "tree_type", "tree_learner_type", "histogram_pool_size",
    "hist_pool_size", "enable_bundle", "is_enable_bundle", "bundle", "max_conflict_rate",
    "is_enable_sparse", "is_sparse", "enable_sparse", "sparse", "two_round",
    "two_round_loading", "use_two_round_loading", "precise_float_parser", "snapshot_freq",
    "save_period", "num_grad_quant_bins", "quant_train_renew_leaf", "stochastic_rounding",
    "num_machines", "num_machine")
# XGBoost settings of what gbmo always does: taken and left unused (gbmo
# reads a DataFrame's category columns, checks every parameter, and takes NaN
# as missing, which the `missing` marker may only restate).
_XGBOOST_WITHOUT_EFFECT = ("enable_categorical", "validate_parameters", "missing")
# LightGBM switches that change the model when on, with why gbmo has not
# built them: taken when off
_LIGHTGBM_SWITCHES_NOT_BUILT = {
    "use_quantized_grad": "gbmo's histograms sum the gradients as they are (quantized "
                          "ones made 10-output histograms only 1.2x faster, measured)",
}


def _drop_settings_without_effect(unknown, keywords):
    """Takes LightGBM's and XGBoost's settings without effect on gbmo's model
    out of unknown, refusing a switch gbmo has not built that is on and a
    missing-value marker other than NaN; but the objective's own keywords (a
    plugin's may share a name with them)."""
    for key in [key for key in unknown if key not in keywords and (
            key in _LIGHTGBM_WITHOUT_EFFECT or key in _LIGHTGBM_SWITCHES_NOT_BUILT
            or key in _XGBOOST_WITHOUT_EFFECT)]:
        value = unknown.pop(key)
        if key in _LIGHTGBM_SWITCHES_NOT_BUILT and str(value).lower() not in ("false", "0"):
            raise ValueError(f"parameter {key!r} = {value!r} is LightGBM's, and gbmo does not "
                             f"take it: {_LIGHTGBM_SWITCHES_NOT_BUILT[key]} (allowed: False)")
        if key == "missing" and not _is_nan(value):
            raise ValueError(f"parameter 'missing' = {value!r} is XGBoost's marker of missing "
                             "values; gbmo's is NaN alone: replace the marker with NaN first "
                             "(X[X == marker] = np.nan); allowed: missing=np.nan (or leave it "
                             "out)")


def _drops_none(name):
    """Whether a None under name (canonical or not) means "not set": for
    gbmo's parameters that take no None and other libraries' that gbmo
    answers, not for a misspelt name, which is refused as unknown."""
    if name in PARAMS:
        return not PARAMS[name].allow_none
    return name in _NOT_TAKEN or name in _XGBOOST_WITHOUT_EFFECT \
        or name in _LIGHTGBM_WITHOUT_EFFECT or name in _LIGHTGBM_SWITCHES_NOT_BUILT


def _is_nan(value):
    return isinstance(value, numbers.Real) and math.isnan(value)


def _objectives_taking(key):
    """The registered objectives (plugins' too) whose constructor takes key,
    for the refusal of a key the given objective does not take."""
    from .registry import LOSSES

    return [name for name in LOSSES.names() if key in _objective_keywords(name)]


def _plain(value):
    """A numpy array or number as the list or number it holds; else value."""
    return value.tolist() if isinstance(value, (np.ndarray, np.generic)) else value


def _fold_objective_keywords(resolved, unknown):
    """Names that are no parameter of gbmo's but a keyword of the objective's
    (LightGBM's top-level alpha of quantile) become its objective_params, as
    in LightGBM; any other is refused, with the closest known names."""
    keywords = _objective_keywords(resolved["objective"]) if unknown else set()
    _drop_settings_without_effect(unknown, keywords)
    objective_params = dict(resolved["objective_params"] or {})
    for key, value in unknown.items():
        if key in _NOT_TAKEN and key not in keywords:
            whose, why = _NOT_TAKEN[key]
            raise ValueError(f"parameter {key!r} is {whose}'s, and gbmo does not take it: {why}")
        if key not in keywords:
            close = [name if name in PARAMS else f"{name} ({ALIASES[name]})"
                     for name in difflib.get_close_matches(key, list(PARAMS) + list(ALIASES),
                                                           n=3)]
            hint = f"; did you mean {', '.join(close)}?" if close else "."
            owners = _objectives_taking(key)
            if owners:  # LightGBM's alpha is quantile's and huber's, XGBoost's reg_alpha
                hint = (f"; it is a keyword of objective {', '.join(map(repr, owners))}, not "
                        f"of {resolved['objective']!r}"
                        + (f"; or did you mean {', '.join(close)}?" if close else "."))
            raise ValueError(
                f"unknown parameter {key!r}{hint} Known parameters: {', '.join(PARAMS)}"
                + (f"; and objective {resolved['objective']!r} takes "
                   f"{', '.join(sorted(keywords))}" if keywords else ""))
        value = _plain(value)  # XGBoost's quantile_alpha=np.array([0.1, 0.9])
        if _plain(objective_params.get(key, value)) != value:
            raise ValueError(f"parameter {key!r} = {value!r} and objective_params' "
                             f"{objective_params[key]!r} differ; give it once")
        objective_params[key] = value
    if unknown:
        resolved["objective_params"] = objective_params


def _fold_positive_weights(resolved):
    """scale_pos_weight and is_unbalance, LightGBM's top-level names, become
    the parameters of the sigmoid and multiclassova objectives (saved with
    the model)."""
    given = {name: resolved[name] for name in ("scale_pos_weight", "is_unbalance")
             if resolved[name] != PARAMS[name].default}
    if not given:
        return
    if resolved["objective"] not in ("sigmoid", "multiclassova"):
        raise ValueError(f"parameters 'scale_pos_weight' and 'is_unbalance' weigh the positive "
                         f"labels of objectives 'sigmoid' (binary, multi-label) and "
                         f"'multiclassova'; the objective "
                         f"is {resolved['objective']!r}")
    objective_params = dict(resolved["objective_params"] or {})
    for name, value in given.items():
        if objective_params.get(name, value) != value:
            raise ValueError(f"parameter {name!r} = {value!r} and objective_params' "
                             f"{objective_params[name]!r} differ; give it once")
        objective_params[name] = value
    resolved["objective_params"] = objective_params


# LightGBM's train() and cv() also read the rounds and early stopping from
# params, in place of their arguments; so do gbmo's (see split_controls).
CONTROL_ALIASES = {
    **dict.fromkeys(("num_iterations", "num_iteration", "n_iter", "num_tree", "num_trees",
                     "num_round", "num_rounds", "nrounds", "num_boost_round", "n_estimators",
                     "max_iter", "iterations"), "num_iterations"),
    **dict.fromkeys(("early_stopping_round", "early_stopping_rounds", "early_stopping",
                     "n_iter_no_change", "od_wait"), "early_stopping_round"),
    "first_metric_only": "first_metric_only",
    "early_stopping_min_delta": "early_stopping_min_delta",
}


def split_controls(params):
    """(params without LightGBM's training controls, {control: value} under
    their canonical names): num_iterations, which stands for train's and cv's
    num_boost_round, and early_stopping_round (<= 0: none), first_metric_only
    and early_stopping_min_delta, which add early stopping. Text is read as
    the other parameters' (_control_in_text); the values are checked where
    they are used; a control given twice is refused."""
    if not isinstance(params, dict):
        return params, {}
    rest, controls, given_as = {}, {}, {}
    for key, value in params.items():
        name = CONTROL_ALIASES.get(key)
        if name is None:
            rest[key] = value
            continue
        _refuse_twice(name, given_as, key)
        controls[name] = _control_in_text(name, value)
    return rest, controls


def _control_in_text(name, value):
    """A control given as text (the command line's --param) read as the
    other parameters are: a switch, a number, or numbers between commas."""
    if not isinstance(value, str):
        return value
    if name == "first_metric_only":
        return _bool_in_text(value)
    if name == "early_stopping_min_delta" and "," in value:  # a margin per metric
        return _numbers_in_text(value)
    return _number_in_text(value)


def _refuse_twice(name, given_as, key):
    """Records that key gave parameter name; refuses a second key for it."""
    if name in given_as:
        raise ValueError(f"parameter {name!r} is given twice, as {given_as[name]!r} and as "
                         f"{key!r}: give it once")
    given_as[name] = key


# gbmo's split gain is the loss reduction, obj(parent) - obj(left) - obj(right)
# with obj = -1/2 sum G^2 / (H + lambda) (DESIGN.md); LightGBM's and XGBoost's
# leave out the 1/2, so a threshold given under their names is halved.
_TWICE_GBMO_GAIN = ("min_split_gain", "min_gain_to_split", "min_split_loss")


# Parameters read afresh every round or tree, which reset_parameter may change
# between rounds; the others shape the binning, the buffers or the loss.
RESETTABLE = ("learning_rate", "max_leaves", "max_depth", "lambda_l1", "lambda_l2", "min_gain",
              "min_samples_leaf", "min_child_weight", "subsample", "colsample_bytree",
              "colsample_bynode", "drop_rate", "skip_drop", "top_rate", "other_rate")


def reset_value(key, value):
    """(gbmo's name, the checked value) of a parameter reset between rounds:
    None only where each tree reads the default (max_leaves, see
    max_leaves_of), not where resolve_params works it out once (lambda_l2)."""
    name, value = checked_value(key, value)
    if value is None and name != "max_leaves":
        raise ValueError(f"parameter {key!r} cannot be reset to None; give a value")
    return name, value


def check_resettable(key, caller):
    """Refuses a parameter (any of its names) that caller cannot change
    between rounds: those not in RESETTABLE."""
    if ALIASES.get(key, key) not in RESETTABLE:
        known = key if ALIASES.get(key, key) in PARAMS else f"{key} (unknown)"
        raise ValueError(f"{caller} cannot change {known}; it changes "
                         f"{', '.join(RESETTABLE)} (or their aliases)")


# What LightGBM's Dataset(params=) keeps (its get_params) and training takes
# from a Dataset: the parameters of the binned data
DATASET_PARAMS = ("max_bins", "max_bins_by_feature", "min_data_in_bin", "bin_subsample",
                  "categorical_feature", "use_missing", "zero_as_missing",
                  "feature_pre_filter", "verbosity", "linear_tree")


def check_dataset_params(params):
    """A Dataset's params, checked as train checks its own (LightGBM's code
    often gives a Dataset the whole training dict)."""
    if not isinstance(params, dict):
        raise TypeError(f"Dataset's params must be a dict of parameters, got "
                        f"{type(params).__name__}")
    resolve_params(split_controls(params)[0])
    return dict(params)


def binned_data_params(params):
    """The parameters of the binned data among a Dataset's params (DATASET_PARAMS)."""
    return {key: value for key, value in params.items()
            if ALIASES.get(key, key) in DATASET_PARAMS}


def with_dataset_params(params, train_set):
    """params over the training Dataset's binned-data parameters (LightGBM's
    Dataset(params=)): a parameter that params give, under any of its names,
    replaces the Dataset's. The Dataset's training parameters are not taken,
    as in LightGBM, and warn when params do not give them. params unchanged
    when the Dataset has none (or params are not a dict, which resolve_params
    refuses)."""
    dataset_params = getattr(train_set, "params", None)
    if not dataset_params or not (params is None or isinstance(params, dict)):
        return params
    params = params or {}

    def canonical(key):
        return CONTROL_ALIASES.get(key) or ALIASES.get(key, key)

    given = {canonical(key) for key in params}
    binned = binned_data_params(dataset_params)
    unused = [key for key in dataset_params if key not in binned
              and key not in _LIGHTGBM_WITHOUT_EFFECT and canonical(key) not in given]
    if unused:
        warnings.warn(f"the Dataset's params {', '.join(map(repr, unused))} are training "
                      "parameters, which training takes from its own params, as LightGBM "
                      "does; they are not given there, so they do not apply",
                      UserWarning, stacklevel=user_stacklevel())
    return {**{key: value for key, value in binned.items() if canonical(key) not in given},
            **params}


def keys_naming(params, name):
    """The keys of params that give parameter name: its own or an alias."""
    return [key for key in params if ALIASES.get(key, key) == name]


def balanced_bagging(params):
    """Whether a binary target's positive and negative rows are bagged apart
    (pos_bagging_fraction or neg_bagging_fraction < 1, which then replace
    subsample, as in LightGBM)."""
    return params["pos_bagging_fraction"] < 1.0 or params["neg_bagging_fraction"] < 1.0


def bags(params):
    """Whether rows are bagged: subsample < 1, or balanced bagging, drawn
    every subsample_freq > 0 rounds."""
    return ((params["subsample"] < 1.0 or balanced_bagging(params))
            and params["subsample_freq"] > 0)


def check_penalty(params):
    """score_function='L2' needs lambda_l2 > 0 (reset_parameter may change it)."""
    if params["score_function"] == "L2" and params["lambda_l2"] <= 0:
        raise ValueError(
            "score_function='L2' needs lambda_l2 > 0: its splits do not see the hessians, "
            "so a leaf of rows with hessians near 0 (confident wrong predictions) would get "
            f"-G / H without bound; got lambda_l2={params['lambda_l2']!r}")


def check_output_bounds(params, n_outputs, ensembler=None):
    """The parameters whose range is the number of outputs d, checked once
    the targets give it, before any binning: top_k (1 .. d), and the
    ensembler's own through its check_outputs(d), which a plugin's class or
    a function need not define."""
    top_k = params["top_k"]
    if top_k is not None and top_k > n_outputs:
        raise ValueError(f"parameter 'top_k' = {top_k!r} is more than the {n_outputs} outputs "
                         f"of the target; allowed: 1 .. {n_outputs} (top_k = {n_outputs} keeps "
                         "every output, the dense split)")
    check_outputs = getattr(ensembler, "check_outputs", None)
    if check_outputs is not None:
        check_outputs(n_outputs)


def check_sampling(params):
    """The sampling parameters of GOSS and random forests, checked when
    training starts and every round (reset_parameter may change them)."""
    if params["boosting"] == "rf" and (
            params["data_sample_strategy"] == "goss"
            or not (bags(params) or params["colsample_bytree"] < 1.0
                    or params["colsample_bynode"] < 1.0)):
        raise ValueError(
            "boosting='rf' grows every tree from the same gradients, so the trees differ only "
            "by their samples: give subsample < 1 (with subsample_freq > 0), colsample_bytree "
            "< 1 or colsample_bynode < 1 (GOSS is not taken); got "
            f"subsample={params['subsample']}, subsample_freq={params['subsample_freq']}, "
            f"colsample_bytree={params['colsample_bytree']}, "
            f"colsample_bynode={params['colsample_bynode']}, "
            f"data_sample_strategy={params['data_sample_strategy']!r}")
    if params["data_sample_strategy"] == "goss" and (
            bags(params) or params["top_rate"] + params["other_rate"] > 1.0):
        raise ValueError(
            "data_sample_strategy='goss' draws each tree's rows itself from top_rate and "
            "other_rate, whose sum must be <= 1, and takes no bagging (subsample, "
            "pos_bagging_fraction and neg_bagging_fraction 1, or subsample_freq=0); got "
            f"top_rate={params['top_rate']}, other_rate={params['other_rate']}, "
            f"subsample={params['subsample']}, "
            f"pos_bagging_fraction={params['pos_bagging_fraction']}, "
            f"neg_bagging_fraction={params['neg_bagging_fraction']}")


# Values other libraries give under their names: XGBoost's multi_strategy,
# XGBoost's and CatBoost's grow_policy, CatBoost's boolean verbose.
_VALUE_ALIASES = {
    "multi_strategy": {"multi_output_tree": "multi_output",
                       "one_output_per_tree": "single_output"},
    "grow_policy": {"lossguide": "bestfirst", "SymmetricTree": "symmetric",
                    "Depthwise": "depthwise", "Lossguide": "bestfirst"},
    "verbose": {False: 0, True: 1},
    **dict.fromkeys(("boosting", "boosting_type", "boost"), {"random_forest": "rf"}),
    # XGBoost's; its "dart" is gbmo's too, and random_forest as under boosting
    "booster": {"gbtree": "gbdt", "random_forest": "rf"},
}


def metric_list(value):
    """LightGBM's other spellings of several metrics: a set (sorted, so runs
    repeat) or a comma-separated string ("l2,l1"; the commas of an output
    selection "rmse[1,2]" stay). In a list, the names of no metric ("None",
    "na", ...) are left out beside others, as LightGBM does; a list of them
    alone is "None"."""
    if isinstance(value, (set, frozenset)):
        value = sorted(value, key=str)
    elif isinstance(value, str) and not value.strip():
        value = []  # LightGBM's metric="" (its default): the objective's, as an empty list
    elif isinstance(value, str) and "," in re.sub(r"\[[^\]]*\]", "", value):
        value = [part.strip() for part in re.split(r",(?![^\[]*\])", value) if part.strip()]
    if not isinstance(value, list) or not value:
        return value
    named = [m for m in value if not names_no_metric(m)]
    return named if named else "None"


def checked_value(key, value):
    """(gbmo's name, the checked value) of a parameter given under any of its
    names (another library's values translated, a peer's gain threshold
    halved)."""
    name = ALIASES.get(key, key)
    if isinstance(value, (str, bool)):
        value = _VALUE_ALIASES.get(key, {}).get(value, value)
    if name == "metric":
        value = metric_list(value)
    label = repr(name) if key == name else f"{key!r} (gbmo's {name!r})"
    spec = PARAMS[name]
    if spec.many and spec.kind in (int, float) and isinstance(value, str):
        value = list_in_text(value)  # a list given as text, not one of its numbers
    value = _check_value(name, value, spec, label)
    return name, value / 2 if key in _TWICE_GBMO_GAIN else value


def with_default_lambda_l2(params):
    """params with lambda_l2 None made its default: 1.0, or 0.0 for a random
    forest, whose leaves are the means of their rows' residuals (as
    LightGBM's), which a penalty would shrink toward the start score; but
    1.0 under score_function='L2', which needs a penalty (check_penalty)."""
    if params["lambda_l2"] is None:
        unshrunk = params["boosting"] == "rf" and params.get("score_function") != "L2"
        params["lambda_l2"] = 0.0 if unshrunk else 1.0
    return params


def max_leaves_of(params):
    """The leaves a tree may have: max_leaves; left out (None), 31 as
    LightGBM's, but every leaf of max_depth's full levels for depth-wise and
    symmetric growth, as XGBoost's depth-wise trees and CatBoost's depth grow
    them (31 cut a depth of 6 to 4 full levels). Read per tree, so that a
    max_depth reset between rounds moves it."""
    if params["max_leaves"] is not None:
        return params["max_leaves"]
    if params["growth"] != "bestfirst" and params["max_depth"] > 0:
        return min(2 ** params["max_depth"], PARAMS["max_leaves"].high)
    return 31


def resolve_params(params):
    """User parameters (aliases allowed) -> a complete dict of canonical names."""
    if params is None:
        params = {}
    if not isinstance(params, dict):
        raise TypeError(f"params must be a dict, got {type(params).__name__}")
    resolved, unknown, given_as = {}, {}, {}
    for key, value in params.items():
        name = ALIASES.get(key, key)
        if value is None and _drops_none(name):
            continue  # not set, as LightGBM drops a None (XGBoost's get_params holds many)
        if name not in PARAMS:
            unknown[key] = value
            continue
        _refuse_twice(name, given_as, key)
        resolved[name] = checked_value(key, value)[1]
    for name, spec in PARAMS.items():
        resolved.setdefault(name, spec.default)
    _fold_written_objective_params(resolved)
    _fold_objective_keywords(resolved, unknown)
    _check_names(resolved)
    _fold_positive_weights(resolved)
    if resolved["boosting"] == "goss":
        resolved.update(boosting="gbdt", data_sample_strategy="goss")
    with_default_lambda_l2(resolved)
    if resolved["split"] != "dense" and resolved["top_k"] is None:
        raise ValueError(
            f"parameter 'top_k' is required with split={resolved['split']!r}: "
            "the number of outputs each leaf keeps (an integer >= 1)"
        )
    if resolved["split"] == "dense" and resolved["top_k"] is not None:
        raise ValueError(
            f"parameter 'top_k' = {resolved['top_k']!r} takes effect only with split='sparse' "
            "or 'sparse_restricted'; got split='dense', which keeps every output in every "
            "leaf; allowed: no top_k, or one of those splits"
        )
    if resolved["split"] != "dense" and resolved["tree_mode"] == "single_output":
        raise ValueError(
            f"split={resolved['split']!r} keeps top_k outputs of a multi-output leaf; "
            "tree_mode='single_output' grows one tree per output, whose leaves hold one value "
            "each, so there is nothing to choose from; allowed: split='dense' (the default) "
            "with single_output, or a sparse split with tree_mode='multi_output'"
        )
    if resolved["ensembler"] is not None and (resolved["split"] != "dense"
                                              or resolved["tree_mode"] != "multi_output"):
        raise ValueError(
            "parameter 'ensembler' needs split='dense' and tree_mode='multi_output': its split "
            "columns are not outputs, so they cannot choose sparse leaves or per-output trees; "
            f"got split={resolved['split']!r}, tree_mode={resolved['tree_mode']!r}"
        )
    check_penalty(resolved)
    if resolved["score_function"] == "L2" and (resolved["split"] != "dense"
                                               or resolved["tree_mode"] != "multi_output"):
        raise ValueError(
            "score_function='L2' needs split='dense' and tree_mode='multi_output': its "
            "leaves are set from other gradients than its splits, which only the dense "
            f"vector-leaf tree does; got split={resolved['split']!r}, "
            f"tree_mode={resolved['tree_mode']!r}"
        )
    if resolved["growth"] == "symmetric" and resolved["extra_trees"]:
        raise ValueError("extra_trees=True is not taken with growth='symmetric': a level's "
                         "one split is chosen among every threshold's gain over its nodes")
    if resolved["growth"] == "symmetric" and resolved["split"] != "dense":
        raise ValueError(
            f"growth='symmetric' needs split='dense', got split={resolved['split']!r}: a "
            "level's one split is chosen by its dense gain summed over the level's nodes"
        )
    _check_monotone_constraints(resolved)
    _check_linear_tree(resolved)
    by_feature = resolved["max_bins_by_feature"]
    if by_feature is not None and (not isinstance(by_feature, list) or not all(
            isinstance(bins, numbers.Integral) for bins in by_feature)):
        raise ValueError("parameter 'max_bins_by_feature' must be a list with one number of "
                         f"bins (2 .. {MAX_BINS}) per feature, got {by_feature!r}")
    for name in ("max_delta_step", "path_smooth"):
        if resolved[name] > 0 and (resolved["split"] != "dense"
                                   or resolved["growth"] == "symmetric"
                                   or _leaves_from_other_gradients(resolved)):
            raise ValueError(
                f"parameter {name!r} needs split='dense', growth 'bestfirst' or 'depthwise', "
                "no ensembler and score_function='NewtonL2', as monotone_constraints: each "
                f"bounds every output's leaf values; got split={resolved['split']!r}, "
                f"growth={resolved['growth']!r}, ensembler={resolved['ensembler']!r}, "
                f"score_function={resolved['score_function']!r}")
    groups = resolved["interaction_constraints"]
    if groups == []:
        resolved["interaction_constraints"] = groups = None  # LightGBM's default: none
    if groups is not None and (not isinstance(groups, list)
                               or not all(isinstance(group, list) for group in groups)
                               or any(isinstance(f, list) for group in groups for f in group)):
        raise ValueError("parameter 'interaction_constraints' must be a list of lists of "
                         f"feature indices or names, e.g. [[0, 1], [2, 3, 4]]; got {groups!r}")
    check_sampling(resolved)
    if resolved["ensembler_params"] and resolved["ensembler"] is None:
        raise ValueError("parameter 'ensembler_params' is given without an 'ensembler'")
    # None: the default, resolved when training starts
    resolved["n_threads"] = asked_threads(resolved["n_threads"])
    return resolved
