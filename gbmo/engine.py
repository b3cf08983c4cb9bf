"""train(): the boosting loop."""
import functools
import math
import numbers
import os
import warnings

import numpy as np

from ._core import G_H_DTYPE, NODE_DTYPE, ROW_DTYPE
from ._core._hessian import is_constant_column
from ._core._leaf_values import leaf_gradient_sums
from ._core._predict import add_leaf_values
# predict_binned walks dense binned arrays and SparseBinned
from .binning import check_bins_by_feature, predict_binned
from .booster import Booster
from .callback import CallbackEnv, EvalResult, RoundCallbacks, controlled_run
from .categorical import CategoryOrder, category_values, refuse_sparse
from .custom_metric import check_fevals, custom_results
from .dart import rounds_to_drop
from . import sparse_output
from .dataset import Dataset
from .goss import amplified, goss_sample, goss_warmup_rounds
from .sparse_output import is_sparse_labels
from .grower import GrowerWorkspace, InteractionConstraints, TreeGrower, leaf_values
from .importance import OutputImportance
from .linear_leaves import (add_tree_predictions, check_linear_X, fit_linear_leaves,
                            linear_values, path_features)
from .foreign_keywords import refuse_foreign_keywords
from .losses import (ClassIndexTarget, CustomObjective, handed_as_target, make_loss,
                     quantile_levels, with_class_count)
from .metric_history import PER_OUTPUT, MetricHistory
from .metrics import check_metric_fits, evaluate, higher_is_better, tweedie_metric
from .missing_values import check_readable, reading
from .multitask import EnsemblerContext
from .objective_results import (HandedArrays, ObjectiveResult, check_objective_result,
                                check_transformed, is_builtin, loss_gradients, read_only)
from .parallel import WORK_PER_ELEMENT, threads_for
from .params import (balanced_bagging, bags, check_output_bounds, check_penalty, check_sampling,
                     constraints_at_positions, resolve_params, split_controls,
                     with_dataset_params)
from .thread_governor import thread_governor
from .validation import check_init_score_outputs, check_name_order, user_stacklevel


# add_leaf_values' leaf outputs of a tree of dense leaves
_DENSE = np.zeros((0, 0), dtype=np.int32)
# the dtypes is_constant_column reads as they are
_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def _split_hessian(hess):
    """A hessian column equal for every row becomes a constant: the histograms
    then count rows instead of summing it (the MSE path)."""
    # other dtypes as the histograms would see them
    read = np.ascontiguousarray(hess, dtype=hess.dtype if hess.dtype in _FLOATS else G_H_DTYPE)
    if is_constant_column(read):
        return np.empty((hess.shape[0], 0), dtype=G_H_DTYPE), float(hess[0, 0])
    return np.ascontiguousarray(read, dtype=G_H_DTYPE), 1.0


def _per_tree_gradients(grad, hess, single_output):
    """The (grad, hess) of each tree of a round: all outputs at once, or one
    output per tree."""
    if not single_output:
        yield np.ascontiguousarray(grad, dtype=G_H_DTYPE), hess
        return
    for j in range(grad.shape[1]):
        yield _output_gradients(grad, hess, j)


def _output_gradients(grad, hess, j):
    """Output j's gradient column and its hessian column, as the kernels take
    them (a shared hessian column serves every output)."""
    column = j if hess.shape[1] > 1 else 0
    return (np.ascontiguousarray(grad[:, j:j + 1], dtype=G_H_DTYPE),
            np.ascontiguousarray(hess[:, column:column + 1], dtype=G_H_DTYPE))


def _make_ensembler(params):
    """The ensembler callable and the name its errors use, or (None, None)."""
    ensembler = params["ensembler"]
    if ensembler is None:
        return None, None
    if isinstance(ensembler, str):
        from .registry import create_ensembler

        return (create_ensembler(ensembler, **(params["ensembler_params"] or {})),
                f"ensembler {ensembler!r}")
    return ensembler, f"ensembler {getattr(ensembler, '__qualname__', ensembler)!r}"


# random_strength's share of its start below which it stops (see _Trainer._split_noise)
NOISE_SHARE_CUTOFF = 1e-6


def _split_lambda_l2(ensembler):
    """The ensembler's split_lambda_l2, checked, or None: the L2 penalty of
    its split search when its split columns are in units of their own (the
    leaves, set from the update gradients, keep lambda_l2)."""
    split_l2 = getattr(ensembler, "split_lambda_l2", None)
    if split_l2 is not None and (isinstance(split_l2, bool)
                                 or not isinstance(split_l2, numbers.Real)
                                 or not 0 <= split_l2 < math.inf):
        raise ValueError(f"ensembler {getattr(ensembler, 'name', ensembler)!r}: "
                         f"split_lambda_l2 must be a finite number >= 0, got {split_l2!r}")
    return None if split_l2 is None else float(split_l2)


def _round_gradients(loss, ensembler, ensembler_name, handed, raw, context=None):
    """(split_grad, split_hess, update) of a round at raw scores raw: update
    is None when the split gradients set the leaves too (GBDT-MO), else the
    (grad, hess) that do. handed gives the loss and the ensembler what they
    read; context: the ensembler's (iteration, rng, n_threads)."""
    result = loss_gradients(loss, *handed.for_code(loss, raw))
    if isinstance(result, ObjectiveResult):
        if ensembler is not None:
            raise ValueError("the objective returned an ObjectiveResult (split and update "
                             "gradients) and an ensembler is set too; use one or the other")
        return result.split_grad, result.split_hess, (result.update_grad, result.update_hess)
    if ensembler is None:
        return (*result, None)
    y, ensembler_raw, weight = handed.for_code(ensembler, raw)
    iteration, rng, n_threads = context
    result = check_objective_result(
        ensembler(*result, EnsemblerContext(iteration, rng, y, ensembler_raw, weight, n_threads)),
        *raw.shape, ensembler_name)
    return result.split_grad, result.split_hess, (result.update_grad, result.update_hess)


def _observed_mask(y):
    """Where the (n, d) targets are not missing (NaN), or None when all are."""
    y = np.asarray(y)
    if y.dtype.kind != "f" or not np.isnan(y).any():
        return None
    return ~np.isnan(y.reshape(len(y), -1))


def _weights_as_hessian(weight, split_grad, observed):
    """score_function='L2': the split search's hessian, each row's weight (1
    without weights) in place of its hessians, so that a split is scored by
    G^2 / (rows + lambda), CatBoost's L2 score. A (n, 1) column, or per
    output with 0 where observed (_observed_mask, given when the split
    columns are the outputs) says a target is missing: the objectives that
    take one mask it, with no gradient there."""
    n_rows = split_grad.shape[0]
    column = (np.ones((n_rows, 1), dtype=G_H_DTYPE) if weight is None
              else np.asarray(weight, dtype=G_H_DTYPE).reshape(n_rows, 1))
    if observed is None or observed.shape != split_grad.shape:
        return column
    return np.ascontiguousarray(column * observed, dtype=G_H_DTYPE)


def _leaf_values(update, rows, leaf_start, leaf_stop, lambda_l2, lambda_l1, n_threads,
                 max_delta_step=0.0):
    """Leaf values -T(G) / (H + lambda) from the per-leaf sums of the update
    gradients (T: soft_threshold), within +-max_delta_step when it is > 0."""
    grad, hess = update
    grad_sums = np.empty((len(leaf_start), grad.shape[1]))
    hess_sums = np.empty((len(leaf_start), hess.shape[1]))
    leaf_gradient_sums(rows, leaf_start, leaf_stop, grad, hess, grad_sums, hess_sums,
                       threads_for(n_threads, grad.size))
    values = leaf_values(grad_sums, hess_sums + lambda_l2, lambda_l1)
    if max_delta_step > 0:
        np.clip(values, -max_delta_step, max_delta_step, out=values)
    return values


def kept_outputs(values, tree, single_output):
    """(n_leaves, d) values as the tree's leaves hold them: a sparse leaf's
    outputs only (a single-output tree's values are its own)."""
    if tree.leaf_outputs is None or single_output:
        return values
    return np.take_along_axis(values, tree.leaf_outputs.astype(np.intp), axis=1)


def rows_by_leaf(leaf, n_leaves):
    """(rows, starts, stops): the rows grouped by their leaf, leaf l's rows at
    rows[starts[l]:stops[l]], in order within each leaf."""
    # numpy sorts 16-bit keys by radix: 5x faster than 64-bit ones here
    keys = leaf.astype(np.uint16) if n_leaves <= 1 << 16 else leaf
    rows = np.argsort(keys, kind="stable").astype(ROW_DTYPE)
    stops = np.cumsum(np.bincount(leaf, minlength=n_leaves)).astype(np.intp)
    starts = np.concatenate([[0], stops[:-1]]).astype(np.intp)
    return rows, starts, stops


def leaf_values_from_rows(gradients, leaf, tree, params, n_threads, single_output):
    """tree's leaf values set again from every row's (grad, hess), leaf[i]
    the leaf of row i, in the tree's form (kept_outputs); with the rows
    grouped by leaf, (rows, starts, stops)."""
    rows, starts, stops = rows_by_leaf(leaf, tree.n_leaves)
    grad, hess = (np.ascontiguousarray(a, dtype=G_H_DTYPE) for a in gradients)
    values = _leaf_values((grad, hess), rows, starts, stops, params["lambda_l2"],
                          params["lambda_l1"], n_threads, params["max_delta_step"])
    return kept_outputs(values, tree, single_output), (rows, starts, stops)


def _draw_rows(rng, n_rows, fraction):
    """A sorted sample of round(fraction * n_rows) rows (at least one)."""
    size = max(1, int(round(fraction * n_rows)))
    return np.sort(rng.choice(n_rows, size=size, replace=False)).astype(ROW_DTYPE)


def _draw_balanced_rows(rng, positive, negative, positive_fraction, negative_fraction):
    """A sorted sample of round(fraction * count) rows of each of the
    positive and negative rows (at least one of a class that has rows), as
    LightGBM's balanced bagging draws them."""
    parts = [rows[_draw_rows(rng, len(rows), fraction)]
             for rows, fraction in ((positive, positive_fraction),
                                    (negative, negative_fraction)) if len(rows)]
    return np.sort(np.concatenate(parts)).astype(ROW_DTYPE)


def _draw_features(rng, features, fraction):
    if fraction >= 1.0 or len(features) == 0:
        return features
    size = max(1, int(round(fraction * len(features))))
    return np.sort(rng.choice(features, size=size, replace=False))


def _active_features(bin_mapper):
    """Features with more than one bin observed (values or missing) can be split on."""
    return np.ascontiguousarray(
        np.flatnonzero((bin_mapper.n_bins_non_missing_ > 1) | bin_mapper.has_missing_),
        dtype=np.int32,
    )


def _warn_of_single_leaves(round_index, params, n_rows, n_active_features):
    """Says why a round grew nothing but trees of one leaf (once a run): a
    model that can never split trained without a word, where LightGBM warns
    and stops."""
    min_rows = params["min_samples_leaf"]
    if n_active_features == 0:
        why = "no feature takes two values (after binning)"
    elif 2 * min_rows > n_rows:
        why = (f"min_samples_leaf={min_rows} needs {2 * min_rows} rows for a split, and the "
               f"trees had {n_rows}")
    else:
        why = (f"no split kept min_samples_leaf={min_rows} rows and min_child_weight="
               f"{params['min_child_weight']} in each child with a gain above min_gain="
               f"{params['min_gain']} after the penalties lambda_l1={params['lambda_l1']} and "
               f"lambda_l2={params['lambda_l2']}")
    warnings.warn(f"round {round_index + 1} grew only trees of one leaf: {why}. Such a round "
                  "adds one value to every row, and so may the rounds after it (LightGBM stops "
                  "training there)", UserWarning, stacklevel=user_stacklevel())


class _EvalSet:
    """A data set evaluated every round, with raw scores kept up to date: the
    training set shares the loop's raw scores, a validation set adds one tree
    a round."""

    def __init__(self, name, dataset, y, raw, params, given=None, start=None):
        self.name, self.dataset, self.y, self.raw = name, dataset, y, raw
        self.params = params  # how the model reads X (the values linear leaves take)
        self._linear_X = None
        # a random forest's raw scores before its first tree (see _Trainer._average_in)
        self.start = start
        # kept: another run may bin the Dataset again while this one goes on
        self.X_binned = dataset.X_binned
        # the Dataset as the caller gave it (dataset may be its rebinned copy)
        self.given = dataset if given is None else given

    def add_tree(self, tree, missing_bin, n_threads, scale=1.0, out=None, leaf=None):
        """out (by default raw) += scale * tree's prediction of every row. leaf:
        each row's leaf when known (the training rows' partition), for linear
        leaves, which take the leaves' rows rather than a walk's sums."""
        out = self.raw if out is None else out
        if tree.linear_leaves is not None:
            if leaf is None:
                leaf = leaf_of_rows(self.X_binned, missing_bin, tree, n_threads)
            add_tree_predictions(self.linear_values(), leaf, tree, scale, out, n_threads)
            return
        value_start, output_start, values, outputs = tree.leaf_arrays().kernel_arguments()
        _walk_binned(self.X_binned, missing_bin, tree,
                     (value_start, output_start, values if scale == 1.0 else values * scale,
                      outputs), out, n_threads)

    def linear_values(self):
        """The rows' values as the model reads them, which linear leaves take."""
        if self._linear_X is None:
            self._linear_X = linear_values(self.dataset.X, self.params)
        return self._linear_X


def _walk_binned(X_binned, missing_bin, tree, leaves, out, n_threads):
    """out += each row's leaf in tree, leaves as the kernels take them
    (value_start, output_start, values, outputs)."""
    predict_binned(X_binned, missing_bin, np.zeros(1, dtype=np.int32), tree.node_feature,
                   tree.node_bin, tree.node_missing_left, tree.node_left, tree.node_right,
                   tree.node_value, *leaves, out,
                   threads_for(n_threads, out.size * WORK_PER_ELEMENT),
                   **tree.binned_sets)


def _leaf_of_partition(rows, leaf_start, leaf_stop):
    """Each row's leaf, from rows grouped by leaf (every row of the data)."""
    leaf = np.empty(len(rows), dtype=NODE_DTYPE)
    for number, (start, stop) in enumerate(zip(np.asarray(leaf_start).tolist(),
                                               np.asarray(leaf_stop).tolist())):
        leaf[rows[start:stop]] = number
    return leaf


def leaf_of_rows(X_binned, missing_bin, tree, n_threads):
    """The leaf of every row of binned X (dense or a SparseBinned) in tree: the
    binned walk that updates raw scores, adding each leaf's index as its one
    value."""
    index = np.zeros((X_binned.shape[1], 1))
    leaves = (np.arange(tree.n_leaves + 1, dtype=np.int64),
              np.full(tree.n_leaves, -1, dtype=np.int64),
              np.arange(tree.n_leaves, dtype=float), np.zeros(1, dtype=np.int32))
    _walk_binned(X_binned, missing_bin, tree, leaves, index, n_threads)
    return index[:, 0].astype(np.intp)


def _check_validation_target(loss, y, train_y, n_outputs, name):
    """A validation target the model cannot score is refused before training:
    other columns than the training target's, or a class the model lacks."""
    if len(y) and (y.shape[1:] != train_y.shape[1:] or loss.n_outputs(y) > n_outputs):
        raise ValueError(
            f"validation set {name!r}: its target gives {loss.n_outputs(y)} outputs where the "
            f"training target gives {n_outputs}; allowed: the training target's columns, or "
            f"class indices 0 .. {n_outputs - 1}"
        )


def _monotone_matrix(constraints, n_features, n_outputs):
    """monotone_constraints as an (n_features, n_outputs) int8 array: one value
    per feature holds for every output, a row per feature gives one per
    output; None without constraints."""
    if constraints is None:
        return None
    try:
        matrix = np.array(constraints, dtype=np.int8)
    except ValueError:  # rows of different lengths
        matrix = np.zeros(0, dtype=np.int8)
    if matrix.ndim == 1 and matrix.shape == (n_features,):
        matrix = np.repeat(matrix[:, None], n_outputs, axis=1)
    if matrix.shape != (n_features, n_outputs):
        raise ValueError(f"monotone_constraints must give one value per feature ({n_features}) "
                         f"or one row of {n_outputs} per feature (one value per output); got "
                         f"{constraints!r}")
    return np.ascontiguousarray(matrix) if matrix.any() else None


def _num_class_for(params, init_model):
    """num_class for the loss: the parameter, else a continued model's class
    count when its objective takes class indices, so that a chunk of rows
    without the last classes still trains all of them."""
    if params["num_class"] is None and init_model is not None \
            and isinstance(init_model.loss, ClassIndexTarget):
        return init_model.n_outputs
    return params["num_class"]


def _same_objective(theirs, ours):
    """Whether a run's objective continues a model's: the same name; a
    function after a function's model (a file names it "custom"); a Loss
    instance's model is not checked."""
    if callable(theirs) or theirs == CustomObjective.name:
        return callable(ours)
    return theirs == ours or not isinstance(theirs, str)


def _check_init_model(init_model, params, train_set, n_outputs, trees_per_round):
    """A model to continue must fit this run: same features, outputs,
    objective and trees per round (a function's model, whose file names it
    "custom", continues with a function)."""
    theirs, ours = init_model.params.get("objective"), params["objective"]
    names = (init_model.feature_names, train_set.feature_names)
    if None not in names and list(names[0]) != list(names[1]):
        raise ValueError(f"init_model was trained on the features {list(names[0])}, this data "
                         f"has {list(names[1])}; give the columns in the model's order")
    differences = [
        f"{what}: {old!r} in init_model, {new!r} here"
        for what, old, new in (("features", init_model.n_features, train_set.n_features),
                               ("outputs", init_model.n_outputs, n_outputs),
                               ("trees per round", init_model.trees_per_round, trees_per_round))
        if old != new]
    if init_model.sparse_loss is not None:
        # its objective may share a dense loss's name (sigmoid), not its gradients
        differences.append(f"Y: sparse in init_model (objective {theirs!r} of the sparse-output "
                           "path, which does not continue a model yet), dense here")
    elif not _same_objective(theirs, ours):
        differences.append(f"objective: {theirs!r} in init_model, {ours!r} here")
    if reading(init_model.params) != reading(params):
        differences.append("use_missing / zero_as_missing: init_model's trees read X "
                           "otherwise than these parameters do")
    if "rf" in (init_model.params.get("boosting"), params["boosting"]):
        differences.append("boosting='rf' neither continues a model nor is continued: its "
                           "trees fit the start score's gradients and the model averages them")
    if differences:
        raise ValueError("init_model cannot be continued on this data with these parameters; "
                         + "; ".join(differences))


def _starting_raw(dataset, init_score, n_outputs, init_model, name):
    """(n, n_outputs) raw scores before the run's first tree: init_model's
    prediction (all its trees) or the constant init_score, plus the rows'
    own init_score."""
    n = dataset.n_rows
    if init_model is None:
        raw = np.tile(init_score, (n, 1))
    else:
        raw = np.ascontiguousarray(init_model.predict(
            dataset.X, raw_score=True, num_iteration=init_model.current_iteration(),
            n_threads=init_model._n_threads(None)).reshape(n, n_outputs))
    if dataset.init_score is not None:
        check_init_score_outputs(dataset.init_score, n_outputs, name)
        raw += dataset.init_score
    return raw


def _category_order(params, train_set, init_model, monotone, loss, handed, raw):
    """The CategoryOrder of the run's categorical features (None without
    any): init_model's when continuing it, else learnt from the gradients at
    the starting raw scores."""
    spec = params["categorical_feature"]
    features = train_set.categorical_features(spec)
    if init_model is not None:
        order = init_model.category_order
        if (order.features if order is not None else []) != features:
            raise ValueError(f"init_model has the categorical features "
                             f"{order.features if order is not None else []}, this run "
                             f"{features}; continue with the model's")
        # refused as a run of its own refuses them (encoding reads them as unseen);
        # a sparse X is refused by the encoding
        if features and not train_set.is_sparse:
            for f, column in zip(features, train_set._feature_columns(features).T):
                category_values(column, f)
        return order
    if not features:
        return None
    refuse_sparse(train_set.X, features)
    if monotone is not None:
        constrained = [f for f in features if np.any(monotone[f] != 0)]
        if constrained:
            raise ValueError(f"monotone_constraints constrain the categorical features "
                             f"{constrained}; categories have no order to be monotone in")
    grad, hess, _ = _round_gradients(loss, None, None, handed, raw)
    return CategoryOrder.fit(train_set.X, features, grad, hess, params["cat_smooth"])


def _category_bins(order, bin_mapper):
    """{categorical feature: the bin of each category rank}, or None."""
    if order is None:
        return None
    return {f: bin_mapper.bins_of(f, np.arange(len(categories)))
            for f, categories in zip(order.features, order.categories)}


def _check_arguments(train_set, num_boost_round, valid_sets, valid_names):
    if not isinstance(train_set, Dataset):
        raise TypeError(f"train_set must be a gbmo.Dataset, got {type(train_set).__name__}")
    if train_set.n_rows < 2:
        raise ValueError(f"the training set has {train_set.n_rows} row; training needs at "
                         "least 2 rows")
    if isinstance(num_boost_round, bool) or not isinstance(num_boost_round, (int, np.integer)) \
            or num_boost_round < 0:
        raise ValueError(f"num_boost_round must be an integer >= 0, got {num_boost_round!r}")
    for valid in valid_sets:
        if not isinstance(valid, Dataset):
            raise TypeError(f"valid_sets must hold gbmo.Dataset objects, got {type(valid).__name__}")
        if valid.n_features != train_set.n_features:
            raise ValueError(
                f"a validation set has {valid.n_features} features, the training set {train_set.n_features}"
            )
    if valid_names is not None and len(valid_names) != len(valid_sets):
        raise ValueError(f"{len(valid_names)} valid_names for {len(valid_sets)} valid_sets")


def _fields_of(dataset):
    return dataset.Y, dataset.weight, dataset.init_score


def _physical_memory():
    """The machine's memory in bytes, or None where the system does not say."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):
        return None


def _check_memory(train_set, n_outputs, params, ensembler, loss, y):
    """Refuses, before any work, a run whose raw scores, gradients and one
    node's histograms (of every output, without an ensembler in one tree a
    round; each feature's two bins and its missing one at least, as
    binary columns have, before binning says more) alone exceed the
    machine's memory: a num_class of 2**31 - 1, or one mistyped class index
    (which counts the classes), had the system kill the process."""
    histogram_width = (n_outputs if ensembler is None and params["tree_mode"] == "multi_output"
                       else 1)
    needed = (train_set.n_rows * n_outputs * (8 + 4)
              + train_set.n_features * 3 * histogram_width * 8)
    memory = _physical_memory()
    if memory is None or needed <= memory:
        return
    where = ""
    if isinstance(loss, ClassIndexTarget) and loss.num_class is None:
        row = int(np.argmax(y))
        where = (f" (num_class counted from the largest class index, {y[row]} at row {row}: "
                 "give num_class, or check that label)")
    raise MemoryError(f"training {n_outputs:,} outputs{where} needs at least "
                      f"{needed / 2**30:,.1f} GiB for its scores, gradients and histograms, "
                      f"more than this machine's {memory / 2**30:,.1f} GiB")


def metric_names(metric, loss):
    """The metrics a run evaluates: params' metric as a list, or the loss's
    default ones when it is None."""
    metrics = loss.default_metric if metric is None else metric
    if metrics is None:  # a custom objective with no metric given
        return []
    return [tweedie_metric(name, loss)
            for name in (metrics if isinstance(metrics, list) else [metrics])]


class _Trainer:
    """One training run, a round at a time: train() steps one, cv() steps one
    per fold in lockstep so callbacks see the folds' mean every round."""

    def __init__(self, params, train_set, valid_sets, valid_names, init_model=None, fevals=(),
                 booster=None):
        # the booster keeps the default (None), so it predicts with the threads
        # available when it predicts, as a loaded model does
        booster_params = params
        self.threads = thread_governor(params)
        self.round_objective = None  # a round's own gradients (Booster.update's fobj)
        self.fobj_loss = None
        # a count of every round grown, none twice (a rollback's round too)
        self.rounds_grown = 0
        self.params = params = constraints_at_positions(
            {**params, "n_threads": self.threads.current}, train_set.feature_names,
            train_set.n_features)
        self.fevals = fevals
        self.loss = loss = make_loss(params["objective"], _num_class_for(params, init_model),
                                     params["n_threads"], params["objective_params"])
        self.ensembler, self.ensembler_name = _make_ensembler(params)
        self.split_lambda_l2 = _split_lambda_l2(self.ensembler)
        self.metric_names = metric_names(params["metric"], loss)
        # the Datasets as given, whose label, weight and init_score the run
        # takes once: set again, they are refused rather than left unread
        self._held = [(train_set, _fields_of(train_set), "the training set")]
        if init_model is not None:
            # the model's trees read codes into the categories it was trained on
            recoded = {id(d): d.in_categories(init_model.pandas_categories)
                       for d in [train_set, *valid_sets]}
            train_set = recoded[id(train_set)]
            valid_sets = [recoded[id(d)] for d in valid_sets]
        self.train_set = train_set
        # read-only: the loss, ensembler and metrics read it all run long
        self.y = y = read_only(handed_as_target(loss, train_set.Y).prepare_target(train_set.Y))
        self.handed = HandedArrays(y, train_set.weight)
        n_outputs = loss.n_outputs(y)
        _check_memory(train_set, n_outputs, params, self.ensembler, loss, y)
        check_output_bounds(params, n_outputs, self.ensembler)
        # the model's classes from now on, saved with it
        self.loss = loss = with_class_count(loss, n_outputs)
        self.quantile_levels = quantile_levels(loss, n_outputs)
        for metric in self.metric_names:
            check_metric_fits(metric, y, n_outputs, self.quantile_levels)
        self.monotone = _monotone_matrix(params["monotone_constraints"], train_set.n_features,
                                         n_outputs)
        if self.monotone is None and (params["max_delta_step"] > 0 or params["path_smooth"] > 0):
            # the bounded search with no constraint on a feature: bounds or smoothing only
            self.monotone = np.zeros((train_set.n_features, n_outputs), dtype=np.int8)
        InteractionConstraints.check_features(params["interaction_constraints"],
                                              train_set.n_features)
        check_bins_by_feature(params["max_bins_by_feature"], train_set.n_features)
        for dataset in [train_set, *valid_sets]:
            check_readable(dataset.is_sparse, params)
            check_linear_X(dataset.is_sparse, params)
        self.single_output = params["tree_mode"] == "single_output"
        trees_per_round = n_outputs if self.single_output else 1
        if init_model is not None:
            _check_init_model(init_model, params, train_set, n_outputs, trees_per_round)
            init_score = init_model.init_score
        elif train_set.init_score is not None or not params["boost_from_average"]:
            # the rows' own offsets replace the constant, or the user asked for 0
            init_score = np.zeros(n_outputs)
        else:
            init_score = np.asarray(loss.init_score(y, train_set.weight), dtype=np.float64)
            if init_score.size != n_outputs:
                raise ValueError(f"objective {loss.name!r}: init_score returned "
                                 f"{init_score.size} values for {n_outputs} outputs; it must "
                                 "return one per output")
            if not np.all(np.isfinite(init_score)):
                raise ValueError(f"objective {loss.name!r}: init_score returned "
                                 f"{init_score.reshape(-1).tolist()}; it must return finite "
                                 "numbers")
        self.raw = raw = _starting_raw(train_set, init_score, n_outputs, init_model,
                                       "the training set")
        self.category_order = _category_order(params, train_set, init_model, self.monotone,
                                              loss, self.handed, raw)
        train_set.bin_with(params, self.category_order, training=True)
        self.bin_mapper = train_set.bin_mapper
        self.category_bins = _category_bins(self.category_order, self.bin_mapper)

        # a random forest fits every tree to the start's gradients, and its
        # raw scores are the start's plus the mean of its rounds
        self.forest = params["boosting"] == "rf"
        self.training_set = _EvalSet("training", train_set, y, raw, params,
                                     start=raw.copy() if self.forest else None)
        # the features whose values linear leaves may take
        self.numeric_features = np.ones(train_set.n_features, dtype=bool)
        if self.category_order is not None:
            self.numeric_features[list(self.category_order.features)] = False
        self.eval_sets = []
        self.n_outputs, self.init_score, self.init_model = n_outputs, init_score, init_model
        self.booster = booster = Booster() if booster is None else booster
        booster._start(booster_params, loss, train_set.n_features, n_outputs, init_score,
                       train_set.feature_names, trees_per_round,
                       train_set.one_dimensional_target and n_outputs == 1)
        booster.category_order = self.category_order
        booster.pandas_categories = train_set.pandas_categories
        if init_model is not None:
            booster.trees = list(init_model.trees)  # shared: set_leaf_output copies a tree
        booster.evals_result = {}
        self.features = _active_features(self.bin_mapper)
        self.workspace = GrowerWorkspace(train_set.n_rows, self.threads.n_threads,
                                         train_set.dense_layouts)
        self.rng = np.random.default_rng(params["seed"])
        # Per-output gains exist when the split columns are the outputs (no ensembler).
        self.importance = OutputImportance(train_set.n_features, n_outputs)
        if init_model is not None and init_model.output_importance is not None:
            self.importance = OutputImportance.from_dict(init_model.output_importance.to_dict(),
                                                         train_set.n_features, n_outputs)
        booster.output_importance = (self.importance if init_model is None
                                     or init_model.output_importance is not None else None)
        self.goss = params["data_sample_strategy"] == "goss"
        self.row_sample = None
        self.dart = params["boosting"] == "dart"
        self.first_new_tree = len(booster.trees)  # dart drops this run's rounds only
        self.warned_of_single_leaves = False
        if balanced_bagging(params):
            self._check_binary_target()
        for name, valid in zip(valid_names, valid_sets):
            self.add_valid(name, valid)

    def add_valid(self, name, valid):
        """A data set evaluated every round from now on: train_set itself, or
        a validation set binned with its edges, whose raw scores start from
        the model so far."""
        train_set, params, loss = self.train_set, self.params, self.loss
        n_outputs, init_score, init_model = self.n_outputs, self.init_score, self.init_model
        if valid is train_set:
            self.training_set.name = name  # eval_train's name for it, as LightGBM's
            self._keep_evaluating(_EvalSet(name, valid, self.y, self.raw, params,
                                           start=self.training_set.start))
            return
        # a Dataset without reference= was never aligned with the training's columns
        check_name_order(valid.feature_names, train_set.feature_names,
                         f"validation set {name!r}: X")
        check_name_order(valid.label_names, train_set.label_names,
                         f"validation set {name!r}: Y", kind="targets")
        check_linear_X(valid.is_sparse, params)
        if train_set.init_score is not None and valid.init_score is None:
            raise ValueError(f"validation set {name!r} has no init_score while the training "
                             "set has one: give its rows' offsets too "
                             "(create_valid(X, y, init_score=...))")
        if is_sparse_labels(valid.Y):
            raise ValueError(f"validation set {name!r} has a scipy sparse Y, and the training "
                             "set a dense one: give both sparse (the sparse-output path) or "
                             "both dense (Y.toarray())")
        given, valid = valid, valid.validation_of(train_set).bin_with(params,
                                                                     self.category_order)
        try:
            valid_y = loss.prepare_target(valid.Y)
        except ValueError as err:
            raise ValueError(f"validation set {name!r}: {err}") from None
        _check_validation_target(loss, valid_y, self.y, n_outputs, name)
        for metric in self.metric_names:
            check_metric_fits(metric, valid_y, n_outputs, self.quantile_levels)
        eval_set = _EvalSet(name, valid, valid_y, _starting_raw(
            valid, init_score, n_outputs, init_model, f"validation set {name!r}"), params, given)
        self._held.append((given, _fields_of(given), f"validation set {name!r}"))
        if self.forest:
            eval_set.start = eval_set.raw.copy()
        trees = self.booster.trees[self.first_new_tree:]  # added after some rounds
        for tree in trees:
            eval_set.add_tree(tree, self.bin_mapper.missing_bin, params["n_threads"],
                              1.0 / self.next_iteration if self.forest else 1.0)
        self._keep_evaluating(eval_set)

    def _keep_evaluating(self, eval_set):
        self.eval_sets.append(eval_set)
        self.booster.evals_result[eval_set.name] = MetricHistory()

    def step(self, iteration, objective=None):
        """Grows the round's trees, updates every raw score and returns the
        evaluation results [(data name, metric, value, higher is better)].
        objective (a function, as Booster.update's fobj) gives this round's
        gradients instead of the run's loss, whose transform still scores it
        and whose leaves are not renewed then, as in LightGBM."""
        self.check_fields_kept()
        self.params["n_threads"] = self.loss.n_threads = self.threads.round_threads()
        self.round_objective = None if objective is None else self._round_objective(objective)
        try:
            results = self._round(iteration)
        finally:
            self.round_objective = None
        self.threads.round_done()
        return results

    def check_fields_kept(self):
        """Refuses to go on when a Dataset's label, weight or init_score was
        set again after the run took them: the run would keep the old ones
        silently (an audit relabelled a Booster's train_set between two
        update() calls, and the next round fit the old labels)."""
        for dataset, fields, name in self._held:
            for field, taken, now in zip(("label", "weight", "init_score"), fields,
                                         _fields_of(dataset)):
                if now is not taken:
                    raise ValueError(f"{name}'s {field} was set after this run started, which "
                                     f"took its {field} once: to train or evaluate with the new "
                                     "one, start another run on the Dataset (gbmo.train, or "
                                     "Booster(params, train_set))")

    def _round_objective(self, function):
        """Booster.update's fobj as a loss, kept while the same function
        comes back (building one reads its signature)."""
        kept = self.fobj_loss
        if kept is None or kept.function is not function:
            kept = self.fobj_loss = handed_as_target(CustomObjective(
                function, getattr(self.loss, "num_class", None), self.params["n_threads"]),
                self.train_set.Y)
        kept.n_threads = self.params["n_threads"]
        return kept

    @property
    def next_iteration(self):
        """The round update() grows next: this run's rounds so far (each adds
        trees_per_round trees, and a rollback takes them back)."""
        return (len(self.booster.trees) - self.first_new_tree) // self.booster.trees_per_round

    def _round(self, iteration):
        self.rounds_grown += 1
        params, rng, raw = self.params, self.rng, self.raw
        n_rows, n_threads = self.train_set.n_rows, params["n_threads"]
        check_sampling(params)  # reset_parameter may have changed them
        check_penalty(params)
        if not bags(params):
            self.row_sample = None  # GOSS draws its own below
        elif iteration % params["subsample_freq"] == 0:
            self.row_sample = self._draw_bag(rng, n_rows)
        dropped, n_dropped, dropped_raw = self._drop() if self.dart else ([], 0, None)
        # a random forest's trees are not shrunk: the model averages them
        shrinkage = 1.0 if self.forest else params["learning_rate"] / (1 + n_dropped)
        weight = self.train_set.weight
        grad, hess, update = _round_gradients(self.round_objective or self.loss, self.ensembler,
                                              self.ensembler_name, self.handed, self._fitted_raw,
                                              (iteration, rng, n_threads))
        # the split columns are the outputs unless an ensembler or the
        # objective chose other ones (then no per-output importance)
        columns_are_outputs = update is None
        if params["score_function"] == "L2":  # the hessians set the leaves only
            split_hess = _weights_as_hessian(
                weight, grad, self._observed_targets if columns_are_outputs else None)
            update = update or (grad, hess)
            hess = split_hess
        exact = grad, hess, update  # before GOSS amplifies them
        if self.goss:
            grad, hess, update = self._goss(iteration, grad, hess, update)
        if update is not None and (self.single_output or params["split"] != "dense"):
            raise ValueError("split and update gradients need split='dense' and "
                             "tree_mode='multi_output'")
        if update is not None and self.monotone is not None:
            raise ValueError("monotone_constraints, max_delta_step and path_smooth bound the "
                             "leaf values of the outputs, so they cannot be kept when an "
                             "objective's update gradients set the leaves; drop one of the two")
        # monotone constraints' bounds shrink down the tree and path_smooth's
        # pull follows it, and the leaves keep neither
        renew = (self.goss and self.row_sample is not None and params["goss_renew_leaves"]
                 and params["monotone_constraints"] is None and params["path_smooth"] <= 0)
        new_trees = [self._grow(output, tree_grad, tree_hess, update, shrinkage, not renew,
                                columns_are_outputs)
                     for output, (tree_grad, tree_hess) in enumerate(
                         _per_tree_gradients(grad, hess, self.single_output))]
        missing_bin = self.bin_mapper.missing_bin
        if renew:
            new_trees = [self._renew_leaves(tree, output, exact, shrinkage)
                         for output, (tree, _, _, _) in enumerate(new_trees)]
        for tree, leaf_start, leaf_stop, rows in new_trees:
            in_bag = self.row_sample is not None and not renew
            if not self.forest and tree.linear_leaves is not None:
                # every row's leaf: the partition's, or a walk's for rows out of the bag
                self.training_set.add_tree(
                    tree, missing_bin, n_threads,
                    leaf=None if in_bag else _leaf_of_partition(rows, leaf_start, leaf_stop))
            elif not self.forest and in_bag:
                self.training_set.add_tree(tree, missing_bin, n_threads)  # rows out of it too
            elif not self.forest:  # a forest's trees join the mean in _average_in below
                add_leaf_values(rows, leaf_start, leaf_stop,
                                np.ascontiguousarray(tree.leaf_values),
                                _DENSE if tree.leaf_outputs is None else tree.leaf_outputs,
                                raw, threads_for(n_threads, raw.size))
            self.booster._add_tree(tree)
        if n_dropped:
            self._normalize(dropped, n_dropped, dropped_raw)
        trees = [tree for tree, _, _, _ in new_trees]
        if not self.warned_of_single_leaves and all(tree.n_leaves == 1 for tree in trees):
            self.warned_of_single_leaves = True
            if params["verbosity"] >= 0:
                _warn_of_single_leaves(iteration, params, n_rows if self.row_sample is None
                                       else len(self.row_sample), len(self.features))
        if self.forest:
            self._average_in(trees)
        else:
            self.add_to_eval_sets(trees)
        return self._evaluate()

    def _check_binary_target(self):
        if self.loss.name != "sigmoid" or self.n_outputs != 1:
            raise ValueError(
                "pos_bagging_fraction and neg_bagging_fraction bag the positive and negative "
                "rows of a binary target apart: they need objective 'sigmoid' with one output; "
                f"got objective {self.loss.name!r} with {self.n_outputs} output(s)")

    def _draw_bag(self, rng, n_rows):
        """This round's rows: subsample of them, or under balanced bagging
        pos_bagging_fraction of the positive rows and neg_bagging_fraction of
        the negative ones (a binary sigmoid target's label > 0 or not)."""
        params = self.params
        if not balanced_bagging(params):
            return _draw_rows(rng, n_rows, params["subsample"])
        self._check_binary_target()
        label = self.y[:, 0]  # rows of a missing (NaN) label, which teach nothing, in neither
        return _draw_balanced_rows(rng, np.flatnonzero(label > 0), np.flatnonzero(label <= 0),
                                   params["pos_bagging_fraction"],
                                   params["neg_bagging_fraction"])

    @functools.cached_property
    def _observed_targets(self):
        """score_function='L2': where the targets are not missing (once a run)."""
        return _observed_mask(self.y)

    @property
    def _fitted_raw(self):
        """The raw scores the round's gradients are taken at: the model's so
        far, or a random forest's start, which every one of its trees fits."""
        return self.training_set.start if self.forest else self.raw

    def _average_in(self, trees):
        """A random forest's round: every evaluated set's raw scores become its
        start plus the mean of the rounds so far, these trees' among them, as
        Booster.predict averages them."""
        rounds = self.next_iteration
        sets = {id(eval_set.raw): eval_set for eval_set in [self.training_set, *self.eval_sets]}
        for eval_set in sets.values():
            raw = eval_set.raw
            raw -= eval_set.start
            raw *= (rounds - 1) / rounds
            raw += eval_set.start
            for tree in trees:
                eval_set.add_tree(tree, self.bin_mapper.missing_bin, self.params["n_threads"],
                                  1.0 / rounds)

    def _renew_leaves(self, tree, output, exact, shrinkage):
        """A tree grown on a GOSS sample with its leaf values set again from
        every training row's own (not amplified) gradients: the sample chose
        the splits well, but its amplified few rows set the values poorly
        (benchmarks/README.md, GOSS). Returns (tree, leaf starts, leaf stops,
        every row grouped by leaf), the form _grow gives."""
        grad, hess, update = exact
        if update is not None:
            grad, hess = update
        if self.single_output:
            grad, hess = _output_gradients(grad, hess, output)
        leaf = leaf_of_rows(self.training_set.X_binned, self.bin_mapper.missing_bin, tree,
                            self.params["n_threads"])
        values, (rows, leaf_start, leaf_stop) = leaf_values_from_rows(
            (grad, hess), leaf, tree, self.params, self.params["n_threads"],
            self.single_output)
        tree.leaf_values = self._with_residual_values(values, tree, output, rows, leaf_start,
                                                      leaf_stop) * shrinkage
        return tree, leaf_start, leaf_stop, rows

    def _with_residual_values(self, values, tree, output, rows, leaf_start, leaf_stop,
                              bounds=None):
        """The leaf values, in the tree's form, with those the loss sets from
        the leaves' residuals (renew_leaf_values: quantile's residual
        quantiles, as LightGBM renews its quantile and L1 leaves) in place of
        the gradients' (before the learning rate); unchanged where it sets
        none (NaN). Under monotone_constraints or max_delta_step the renewed
        values are clipped to the leaves' bounds (the grower's leaf_bounds,
        (lower, upper)), which keep the constraints as the gradients' values
        did; without the bounds the gradients' values stay (path_smooth's pull
        chose the splits, as in LightGBM, which renews such leaves too)."""
        renew = None if self.round_objective else getattr(self.loss, "renew_leaf_values", None)
        params = self.params
        bounded = params["monotone_constraints"] is not None or params["max_delta_step"] > 0
        if bounded and bounds is None and params["monotone_constraints"] is None:
            # max_delta_step alone (GOSS's renewed trees keep no grower's bounds)
            bounds = (-params["max_delta_step"], params["max_delta_step"])
        if renew is None or (bounded and bounds is None):
            return values
        outputs = [output] if self.single_output else list(range(self.raw.shape[1]))
        # the round's scores, copied once for all its trees
        y, raw, weight = self.handed.for_code(self.loss, self._fitted_raw, "renew",
                                              stamp=self.rounds_grown)
        # rows too are the loss's own copy, unless it is gbmo's
        renewed = kept_outputs(np.asarray(
            renew(y, raw, weight, rows if is_builtin(self.loss) else rows.copy(), leaf_start,
                  leaf_stop, outputs),
            dtype=np.float64), tree, self.single_output)
        if bounded:
            lower, upper = (np.reshape(bound, renewed.shape) if np.ndim(bound) else bound
                            for bound in bounds)
            renewed = np.clip(renewed, lower, upper)  # NaN stays NaN
        return np.ascontiguousarray(np.where(np.isnan(renewed), values, renewed))

    def _drop(self):
        """DART: (the trees of the rounds dropped this round, how many rounds,
        their summed predictions of the training rows or None), those
        predictions taken out of the training raw scores the gradients are
        computed at."""
        per_round = self.booster.trees_per_round
        trees = self.booster.trees[self.first_new_tree:]
        params = self.params
        rounds = rounds_to_drop(self.rng, len(trees) // per_round, params["drop_rate"],
                                params["max_drop"], params["skip_drop"])
        dropped = [tree for r in rounds for tree in trees[r * per_round:(r + 1) * per_round]]
        if not dropped:
            return dropped, 0, None
        # kept, so that putting them back rescaled needs no second walk of the rows
        dropped_raw = np.zeros_like(self.raw)
        for tree in dropped:
            self.training_set.add_tree(tree, self.bin_mapper.missing_bin, params["n_threads"],
                                       out=dropped_raw)
        self.raw -= dropped_raw
        return dropped, len(rounds), dropped_raw

    def _normalize(self, trees, k, dropped_raw):
        """DART: the k dropped rounds' trees scaled by k / (k + 1), in every raw
        score (the training rows' from their predictions, dropped_raw)."""
        self.add_to_eval_sets(trees, -1.0 / (k + 1))
        for tree in trees:
            tree.scale(k / (k + 1))
        dropped_raw *= k / (k + 1)
        self.raw += dropped_raw
        self.booster._forget_packing()  # packed before the scaling

    def _split_noise(self):
        """random_strength at this round, as CatBoost fades it: times
        n / (n + exp(learning_rate x rounds so far)) for n training rows,
        whole at first and half gone once the rounds' steps add up to log(n)
        (about 100 rounds at learning rate 0.1 on 20,000 rows); 0 once that
        share is below NOISE_SHARE_CUTOFF, where its draws would still cost
        time (500 one-output rounds: 1.19x without the cutoff, 1.14x with it)
        but could only break ties."""
        strength = self.params["random_strength"]
        if strength == 0.0:
            return 0.0
        rounds = len(self.booster.trees) // self.booster.trees_per_round
        steps = self.params["learning_rate"] * rounds
        n_rows = self.train_set.n_rows
        # the share n / (n + e^steps) is below the cutoff where steps exceed
        # this (which also keeps exp from overflowing)
        if steps > math.log(n_rows / NOISE_SHARE_CUTOFF):
            return 0.0
        return strength * n_rows / (n_rows + math.exp(steps))

    def _goss(self, iteration, grad, hess, update):
        """The round's GOSS sample in row_sample (None, every row, while
        warming up) and the gradients with the drawn rows amplified."""
        params = self.params
        self.row_sample = None
        if iteration < goss_warmup_rounds(params["learning_rate"]):
            return grad, hess, update
        self.row_sample, other, factor = goss_sample(grad, hess, params["top_rate"],
                                                     params["other_rate"], self.rng)
        grad, hess = amplified((grad, hess), other, factor)
        if update is not None:
            update = tuple(amplified(update, other, factor))
        return grad, hess, update

    def _split_search_params(self, update):
        """The run's parameters, with the ensembler's split_lambda_l2 when
        update gradients set the leaves (the split search's own penalty)."""
        if update is None or self.split_lambda_l2 is None:
            return self.params
        return {**self.params, "lambda_l2": self.split_lambda_l2}

    def _grow(self, output, grad, hess, update, shrinkage, residual_values, columns_are_outputs):
        """One tree: (tree, leaf starts, leaf stops, the rows grouped by leaf).
        residual_values: whether the loss may set its leaves from their
        residuals here (not when GOSS sets them again from every row);
        columns_are_outputs: whether the split columns are the outputs, whose
        split gains then count in the per-output importance."""
        params, workspace = self.params, self.workspace
        hess, hess_constant = _split_hessian(hess)
        monotone = self.monotone
        if monotone is not None and self.single_output:
            monotone = np.ascontiguousarray(monotone[:, output:output + 1])
        grower = TreeGrower(self.training_set.X_binned, self.bin_mapper,
                            _draw_features(self.rng, self.features, params["colsample_bytree"]),
                            grad, hess, hess_constant, self._split_search_params(update),
                            workspace, self.row_sample, self.rng, monotone, self.category_bins,
                            self._split_noise())
        tree = grower.grow()
        leaf_start, leaf_stop = grower.leaf_start, grower.leaf_stop
        if update is not None:
            tree.leaf_values = _leaf_values(update, workspace.rows, leaf_start, leaf_stop,
                                            params["lambda_l2"], params["lambda_l1"],
                                            params["n_threads"])
        if columns_are_outputs:
            self.importance.add(*grower.split_output_gains,
                                output if self.single_output else None)
        else:
            self.booster.output_importance = None
        if residual_values:
            tree.leaf_values = self._with_residual_values(tree.leaf_values, tree, output,
                                                          workspace.rows, leaf_start, leaf_stop,
                                                          grower.leaf_bounds)
        tree.leaf_values *= shrinkage
        if params["linear_tree"] and self.booster.trees:
            # the model's first round keeps constant leaves, as LightGBM's; the
            # lines take the gradients that set the leaves (an objective's
            # update gradients, when it gives them apart from the split's)
            if update is None:
                fit_grad, fit_hess, fit_constant = grad, hess, hess_constant
            else:
                fit_grad, (fit_hess, fit_constant) = update[0], _split_hessian(update[1])
            tree.linear_leaves = fit_linear_leaves(
                tree, self.training_set.linear_values(), workspace.rows, leaf_start, leaf_stop,
                np.ascontiguousarray(fit_grad, dtype=G_H_DTYPE), fit_hess, fit_constant,
                path_features(tree, self.numeric_features), params["linear_lambda"], shrinkage,
                params["n_threads"])
        if self.single_output:
            tree.leaf_outputs = np.full((tree.n_leaves, 1), output, dtype=np.int32)
        # Raw scores change only after the round: every tree of a round sees
        # the same gradients, so each keeps its own copy of the partition.
        return (tree, leaf_start, leaf_stop,
                workspace.rows.copy() if self.single_output else workspace.rows)

    def add_to_eval_sets(self, trees, scale=1.0):
        """The trees, times scale, into the raw scores of every evaluated set
        that does not share the loop's own."""
        for eval_set in self.eval_sets:
            if eval_set.raw is not self.raw:
                for tree in trees:
                    eval_set.add_tree(tree, self.bin_mapper.missing_bin, self.params["n_threads"],
                                      scale)

    def _evaluate(self):
        results = []
        for eval_set in self.eval_sets:
            history = self.booster.evals_result[eval_set.name]
            for name, metric, value, higher, per_output in self.scores(eval_set, self.fevals):
                history.setdefault(metric, []).append(value)
                if per_output is not None:
                    history.setdefault(metric + PER_OUTPUT, []).append(per_output.tolist())
                results.append(EvalResult(name, metric, value, higher))
        return results

    def scores(self, eval_set, fevals):
        """[(data name, metric, value, higher is better, per-output values or
        None)] of eval_set's raw scores now: every metric of the run, then
        every function of fevals."""
        prediction = check_transformed(
            self.loss.transform(self.handed.raw_for(self.loss, eval_set.raw, eval_set.name)),
            eval_set.raw.shape, f"objective {self.loss.name!r}")
        scores = []
        for metric in self.metric_names:
            value, per_output = evaluate(metric, eval_set.y, prediction, eval_set.dataset.weight,
                                         self.params["n_threads"], self.quantile_levels)
            scores.append((eval_set.name, metric, value, higher_is_better(metric), per_output))
        if fevals:
            if not prediction.flags.writeable:  # a built-in identity transform's view
                prediction = prediction.copy()  # LightGBM's fevals may write into theirs
            one_column = eval_set.dataset.one_dimensional_target and prediction.shape[1] == 1
            for name, value, higher in custom_results(
                    fevals, prediction[:, 0] if one_column else prediction, eval_set.dataset,
                    self.metric_names):
                scores.append((eval_set.name, name, value, higher, None))
        return scores


def _load_init_model(init_model):
    if init_model is None or isinstance(init_model, Booster):
        return init_model
    if isinstance(init_model, (str, os.PathLike)):
        return Booster(model_file=init_model)
    raise TypeError(f"init_model must be a gbmo.Booster or a model file's path, "
                    f"got {type(init_model).__name__}")


def _without_sparse_output_params(params, train_set):
    """params without the sparse-output path's own values (its objectives and
    metrics), which its trainer validates itself."""
    if not isinstance(train_set, Dataset) or not is_sparse_labels(train_set.Y):
        return params
    return sparse_output.split_sparse_params(params)[0]


def train(params, train_set, num_boost_round=100, valid_sets=None, valid_names=None,
          callbacks=None, init_model=None, feval=None, keep_training_booster=False,
          **other_libraries_keywords):
    """Trains a Booster on train_set (a Dataset) for num_boost_round rounds.

    Every round each of valid_sets (train_set itself may be one) is evaluated
    with each metric, averaged over outputs; booster.evals_result holds the
    history, with per-output values under "<metric>_per_output". callbacks
    are called after every round with a CallbackEnv (see gbmo.callback);
    with verbosity > 0 and no log_evaluation among them, every round is logged.

    init_model (a Booster or a model file's path) continues training: the new
    model starts from its trees and adds num_boost_round rounds, which the
    callbacks count after init_model's (as LightGBM does); its data must have
    the same features and outputs, and params the same objective and
    tree_mode.

    feval: a custom metric, or a list of them, as in LightGBM: a function
    (preds, eval_data) -> (name, value, is_higher_better) or a list of such
    tuples, evaluated on every validation set every round beside the built-in
    metrics (see gbmo.custom_metric).

    keep_training_booster=True keeps the training run in the booster, so that
    booster.update() grows more rounds and eval_train() / eval_valid()
    evaluate it, as in LightGBM (gbmo.training_run); without it the run's
    data and raw scores are let go. Any booster, saved and loaded or not,
    continues as init_model.

    As in LightGBM, params may hold num_iterations (or an alias:
    num_boost_round, n_estimators, ...), which replaces num_boost_round, and
    early_stopping_round (early_stopping_rounds, ...; with first_metric_only
    and early_stopping_min_delta), which adds an early_stopping callback.
    XGBoost's keywords (evals, early_stopping_rounds, ...) are refused with
    gbmo's way named (gbmo.foreign_keywords).
    """
    refuse_foreign_keywords("train", other_libraries_keywords)
    raw_params, controls = split_controls(with_dataset_params(params, train_set))
    params = resolve_params(_without_sparse_output_params(raw_params, train_set))
    num_boost_round, callbacks = controlled_run(controls, num_boost_round, callbacks,
                                                params["verbosity"] > 0)
    # one Dataset or name, as LightGBM takes them, or lists
    valid_sets = [valid_sets] if isinstance(valid_sets, Dataset) else list(valid_sets or [])
    if isinstance(valid_names, str):
        valid_names = [valid_names]
    _check_arguments(train_set, num_boost_round, valid_sets, valid_names)
    valid_names = list(valid_names or [
        "training" if valid is train_set else f"valid_{i}" for i, valid in enumerate(valid_sets)])
    init_model = _load_init_model(init_model)
    fevals = check_fevals(feval)
    callbacks = RoundCallbacks(callbacks, params)
    if is_sparse_labels(train_set.Y):
        if init_model is not None:
            raise ValueError("a sparse Y does not take init_model yet")
        if keep_training_booster:
            raise ValueError("a sparse Y does not take keep_training_booster=True: its run "
                             "trains with gbmo.train or gbmo.cv, not a round at a time")
        trainer = sparse_output.SparseOutputTrainer(raw_params, train_set, valid_sets,
                                                    valid_names, fevals)
    else:
        trainer = _Trainer(params, train_set, valid_sets, valid_names, init_model, fevals)
    booster = trainer.booster
    done = 0 if init_model is None else init_model.current_iteration()
    training_set_name = next((name for valid, name in zip(valid_sets, valid_names)
                              if valid is train_set), None)
    if isinstance(trainer, _Trainer):
        # callbacks may use the run (env.model.add_valid, eval_train), as LightGBM's
        booster._trainer, booster._driven_by_train = trainer, True
    try:
        callbacks.start(booster)
        for iteration in range(num_boost_round):
            def env(results):
                return CallbackEnv(booster, trainer.params, done + iteration, done,
                                   done + num_boost_round, results, training_set_name)

            # the rounds the model keeps when a callback ends training
            kept_rounds = callbacks.before_round(env([])) if callbacks.any_before else None
            if kept_rounds is None:
                kept_rounds = callbacks.after_round(env(trainer.step(iteration)))
            if kept_rounds is not None:
                booster.best_iteration = kept_rounds
                break
        callbacks.finish()
    finally:
        callbacks.close()
        booster._driven_by_train = False
        if not keep_training_booster:
            booster._trainer = None
            # the binned walk's tables of categorical sets serve the run's own
            # binned data only (a later run predicts its init_model raw)
            for tree in booster.trees:
                tree.binned_sets = {}
    booster.best_score = _best_scores(booster, done)
    return booster


def start_run(booster, params, train_set):
    """Booster(params, train_set): booster starts a training run of no rounds
    yet, which booster.update() steps. The rounds and early stopping in
    params are the caller's loop's to decide, so they are not read."""
    _check_arguments(train_set, 0, [], None)
    if is_sparse_labels(train_set.Y):
        raise ValueError("a sparse Y trains with gbmo.train or gbmo.cv, not a round at a "
                         "time")
    raw_params, _ = split_controls(with_dataset_params(params, train_set))
    booster._trainer = _Trainer(resolve_params(raw_params), train_set, [], [], booster=booster)


def _best_scores(booster, done):
    """LightGBM's best_score: {data name: {metric: value}} at the best round
    (booster.best_iteration) or, without one, the last; done: the rounds of
    an init_model, which the history does not hold. A set a callback added
    during the run has records from then on only: counted from the last
    round, it has none at a best round before them, and is left out."""
    rounds = booster.current_iteration() - done
    from_last = rounds - (booster.best_iteration - done) if booster.best_iteration else 0
    return {data: MetricHistory({metric: values[-1 - from_last]
                                 for metric, values in history.items()
                                 if len(values) > from_last
                                 and not metric.endswith(PER_OUTPUT)})
            for data, history in booster.evals_result.items()}
