"""train(): the boosting loop."""
import numpy as np

from ._core import G_H_DTYPE, ROW_DTYPE
from ._core._leaf_values import leaf_gradient_sums
from ._core._predict import add_leaf_values, predict_binned
from .booster import Booster
from .callback import CallbackEnv, EarlyStopException, log_evaluation
from .dataset import Dataset
from .grower import GrowerWorkspace, TreeGrower
from .importance import OutputImportance
from .losses import make_loss
from .metrics import evaluate, higher_is_better
from .multitask import EnsemblerContext, ObjectiveResult, check_objective_result
from .parallel import threads_for
from .params import resolve_params


def _split_hessian(hess):
    """A hessian column equal for every row becomes a constant: the histograms
    then count rows instead of summing it (the MSE path)."""
    if hess.shape[1] == 1 and hess.size and np.all(hess == hess[0, 0]):
        return np.empty((hess.shape[0], 0), dtype=G_H_DTYPE), float(hess[0, 0])
    return np.ascontiguousarray(hess, dtype=G_H_DTYPE), 1.0


def _per_tree_gradients(grad, hess, single_output):
    """The (grad, hess) of each tree of a round: all outputs at once, or one
    output per tree (a shared hessian column serves every output)."""
    if not single_output:
        yield np.ascontiguousarray(grad, dtype=G_H_DTYPE), hess
        return
    for j in range(grad.shape[1]):
        column = j if hess.shape[1] > 1 else 0
        yield (np.ascontiguousarray(grad[:, j:j + 1], dtype=G_H_DTYPE),
               np.ascontiguousarray(hess[:, column:column + 1]))


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


def _round_gradients(loss, ensembler, ensembler_name, y, raw, weight, context):
    """(split_grad, split_hess, update) of a round: update is None when the
    split gradients set the leaves too (GBDT-MO), else the (grad, hess) that do."""
    gradients = loss.gradients(y, raw, weight)
    if isinstance(gradients, ObjectiveResult):
        if ensembler is not None:
            raise ValueError("the objective returned an ObjectiveResult (split and update "
                             "gradients) and an ensembler is set too; use one or the other")
        result = gradients
    elif ensembler is not None:
        result = check_objective_result(ensembler(*gradients, context), *raw.shape,
                                         ensembler_name)
    else:
        return (*gradients, None)
    return result.split_grad, result.split_hess, (result.update_grad, result.update_hess)


def _leaf_values(update, rows, leaf_start, leaf_stop, lambda_l2, n_threads):
    """Leaf values -G / (H + lambda) from the per-leaf sums of the update gradients."""
    grad, hess = update
    grad_sums = np.empty((len(leaf_start), grad.shape[1]))
    hess_sums = np.empty((len(leaf_start), hess.shape[1]))
    leaf_gradient_sums(rows, leaf_start, leaf_stop, grad, hess, grad_sums, hess_sums,
                       threads_for(n_threads, grad.size))
    return -grad_sums / (hess_sums + lambda_l2)


def _draw_rows(rng, n_rows, fraction):
    """A sorted sample of round(fraction * n_rows) rows (at least one)."""
    size = max(1, int(round(fraction * n_rows)))
    return np.sort(rng.choice(n_rows, size=size, replace=False)).astype(ROW_DTYPE)


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


class _EvalSet:
    """A data set evaluated every round, with raw scores kept up to date: the
    training set shares the loop's raw scores, a validation set adds one tree
    a round."""

    def __init__(self, name, dataset, y, raw):
        self.name, self.dataset, self.y, self.raw = name, dataset, y, raw

    def add_tree(self, tree, missing_bin, n_threads):
        predict_binned(
            self.dataset.X_binned, missing_bin, np.zeros(1, dtype=np.int32),
            tree.node_feature, tree.node_bin, tree.node_missing_left, tree.node_left,
            tree.node_right, tree.node_value, *tree.leaf_arrays().kernel_arguments(), self.raw,
            threads_for(n_threads, self.raw.size * 8),
        )


def _check_arguments(train_set, num_boost_round, valid_sets, valid_names):
    if not isinstance(train_set, Dataset):
        raise TypeError(f"train_set must be a gbmo.Dataset, got {type(train_set).__name__}")
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


def _metric_names(params, loss):
    metrics = params["metric"] or loss.default_metric
    if metrics is None:  # a custom objective with no metric given
        return []
    return metrics if isinstance(metrics, list) else [metrics]


def train(params, train_set, num_boost_round=100, valid_sets=None, valid_names=None,
          callbacks=None):
    """Trains a Booster on train_set (a Dataset) for num_boost_round rounds.

    Every round each of valid_sets (train_set itself may be one) is evaluated
    with each metric, averaged over outputs; booster.evals_result holds the
    history, with per-output values under "<metric>_per_output". callbacks
    are called after every round with a CallbackEnv (see gbmo.callback);
    with verbosity > 0 and no log_evaluation among them, every round is logged.
    """
    params = resolve_params(params)
    valid_sets = list(valid_sets or [])
    _check_arguments(train_set, num_boost_round, valid_sets, valid_names)
    valid_names = list(valid_names or [
        "training" if valid is train_set else f"valid_{i}" for i, valid in enumerate(valid_sets)])
    callbacks = sorted(callbacks or [], key=lambda c: getattr(c, "order", 0))
    if params["verbosity"] > 0 and not any(
            getattr(c, "__qualname__", "").startswith("log_evaluation") for c in callbacks):
        callbacks.insert(0, log_evaluation(1))

    loss = make_loss(params["objective"], params["num_class"], params["n_threads"],
                     params["objective_params"])
    ensembler, ensembler_name = _make_ensembler(params)
    metric_names = _metric_names(params, loss)
    y = loss.prepare_target(train_set.Y)
    n_outputs = loss.n_outputs(y)
    weight = train_set.weight
    train_set.construct(params)
    bin_mapper = train_set.bin_mapper
    init_score = loss.init_score(y, weight)
    raw = np.tile(init_score, (train_set.n_rows, 1))

    training_set = _EvalSet("training", train_set, y, raw)
    eval_sets = []
    for name, valid in zip(valid_names, valid_sets):
        if valid is train_set:
            eval_sets.append(_EvalSet(name, valid, y, raw))
        else:
            valid.construct(params)
            eval_sets.append(_EvalSet(name, valid, loss.prepare_target(valid.Y),
                                      np.tile(init_score, (valid.n_rows, 1))))

    single_output = params["tree_mode"] == "single_output"
    booster = Booster()
    booster._start(params, loss, train_set.n_features, n_outputs, init_score,
                   train_set.feature_names, n_outputs if single_output else 1)
    booster.evals_result = {s.name: {} for s in eval_sets}
    features = _active_features(bin_mapper)
    workspace = GrowerWorkspace(train_set.n_rows)
    n_threads = params["n_threads"]
    rng = np.random.default_rng(params["seed"])
    # Per-output gains exist when the split columns are the outputs (no ensembler).
    importance = OutputImportance(train_set.n_features, n_outputs)
    booster.output_importance = importance
    bagging = params["subsample"] < 1.0
    row_sample = None
    for iteration in range(num_boost_round):
        if bagging and iteration % params["subsample_freq"] == 0:
            row_sample = _draw_rows(rng, train_set.n_rows, params["subsample"])
        context = EnsemblerContext(iteration, rng, y, raw, weight)
        grad, hess, update = _round_gradients(loss, ensembler, ensembler_name, y, raw, weight,
                                              context)
        if update is not None and (single_output or params["split"] != "dense"):
            raise ValueError("split and update gradients need split='dense' and "
                             "tree_mode='multi_output'")
        new_trees = []
        for output, (tree_grad, tree_hess) in enumerate(
                _per_tree_gradients(grad, hess, single_output)):
            tree_hess, hess_constant = _split_hessian(tree_hess)
            grower = TreeGrower(train_set.X_binned, bin_mapper,
                                _draw_features(rng, features, params["colsample_bytree"]),
                                tree_grad, tree_hess, hess_constant, params, workspace,
                                row_sample, rng)
            tree = grower.grow()
            leaf_start, leaf_stop = (np.array(v, dtype=np.intp) for v in zip(*grower.leaf_ranges))
            if update is not None:
                tree.leaf_values = _leaf_values(update, workspace.rows, leaf_start, leaf_stop,
                                                params["lambda_l2"], n_threads)
                booster.output_importance = None
            else:
                covered = slice(output, output + 1) if single_output else slice(None)
                for feature, gains, involved in grower.split_output_gains:
                    importance.add(feature, gains, involved, covered)
            tree.leaf_values *= params["learning_rate"]
            if single_output:
                tree.leaf_outputs = np.full((tree.n_leaves, 1), output, dtype=np.int32)
            # Raw scores change only after the round: every tree of a round
            # sees the same gradients.
            new_trees.append((tree, leaf_start, leaf_stop, workspace.rows.copy()
                              if single_output else workspace.rows))
        for tree, leaf_start, leaf_stop, rows in new_trees:
            if bagging:  # rows out of the bag are in no leaf range: traverse them all
                training_set.add_tree(tree, bin_mapper.missing_bin, n_threads)
            else:
                add_leaf_values(rows, leaf_start, leaf_stop,
                                *tree.leaf_arrays().kernel_arguments(), raw,
                                threads_for(n_threads, raw.size))
            booster._add_tree(tree)

        results = []
        for eval_set in eval_sets:
            if eval_set.raw is not raw:
                for tree, _, _, _ in new_trees:
                    eval_set.add_tree(tree, bin_mapper.missing_bin, n_threads)
            prediction = loss.transform(eval_set.raw)
            history = booster.evals_result[eval_set.name]
            for metric in metric_names:
                value, per_output = evaluate(metric, eval_set.y, prediction, eval_set.dataset.weight)
                history.setdefault(metric, []).append(value)
                if per_output is not None:
                    history.setdefault(f"{metric}_per_output", []).append(per_output.tolist())
                results.append((eval_set.name, metric, value, higher_is_better(metric)))
        env = CallbackEnv(booster, params, iteration, 0, num_boost_round, results)
        try:
            for callback in callbacks:
                callback(env)
        except EarlyStopException as stop:
            booster.best_iteration = stop.best_iteration
            booster.best_score = stop.best_score
            break
    return booster
