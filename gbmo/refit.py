"""Booster.refit: a model's trees kept, their leaf values fitted again to new
data, as LightGBM's refit (its answer to data that drifts).

Round by round, the new data's gradients at the refit model's raw scores so
far give each leaf the value a tree grown there would have set, -T(G) /
(H + lambda_l2), clipped to max_delta_step, times the learning rate; the
leaf keeps decay_rate of its old value and takes 1 - decay_rate of that.
A leaf no row of the new data reaches gets 0 as its new value, as in
LightGBM. decay_rate = 1 keeps the model; decay_rate = 0 on the training
data gives back a model trained without row sampling. A linear leaf's line
(linear_tree) keeps its features and is blended likewise with the line the
new rows fit there (as LightGBM refits its linear trees); where they fit
none (no row reaches the leaf, too few whole rows, no slope), its intercept
is blended with the leaf's new value and its slopes decay toward 0
(LightGBM sets them to 0).

A model trained on a sparse Y refits with the sparse path's gradients of
its own objective (the squared hinge, or the sigmoid restricted at
sparse_threshold), from label as a scipy sparse or a dense 0/1 matrix; its
raw scores here are dense, (n, L), as every refit's are.

Where it differs from LightGBM's: the start score (boost_from_average)
stays apart from the trees and is kept, where LightGBM folds it into the
first tree, which refit then decays; and every tree is taken to have been
grown with params' learning_rate (gbmo's trees do not record their own), so
a model trained under a learning-rate schedule (reset_parameter), or
continued from one trained at another rate, refits with that one rate.
"""
import numbers

import numpy as np

from ._core import G_H_DTYPE
from .dataset import Dataset
from .linear_leaves import (add_tree_predictions, fit_linear_leaves, leaf_features,
                            refitted_linear_leaves)
from .losses import handed_as_target, losses_renewing_leaves
from .objective_results import HandedArrays, ObjectiveResult, loss_gradients
from .validation import check_init_score, check_init_score_outputs, check_weight


def refit(booster, data, label, decay_rate=0.9, weight=None, init_score=None):
    """A new Booster: booster's trees with their leaves refit (see the module)."""
    from .booster import Booster
    from .engine import _per_tree_gradients, _split_hessian, leaf_values_from_rows
    from .params import PARAMS, with_default_lambda_l2
    from .parallel import thread_count

    params = with_default_lambda_l2({name: booster.params.get(name, PARAMS[name].default)
                                     for name in ("learning_rate", "lambda_l2", "lambda_l1",
                                                  "max_delta_step", "boosting", "ensembler",
                                                  "linear_lambda")})
    if isinstance(decay_rate, bool) or not isinstance(decay_rate, numbers.Real) \
            or not 0.0 <= decay_rate <= 1.0:
        raise ValueError(f"decay_rate must be a number in [0, 1], got {decay_rate!r}")
    if isinstance(data, Dataset):
        raise TypeError("refit takes the features X (as predict does) and label, not a Dataset")
    if hasattr(label, "toarray") and booster.sparse_loss is None:
        raise TypeError("refit takes label as a dense array for a model not marked as "
                        "trained on a sparse Y (label.toarray() of a sparse one); a marked "
                        "model (saved by gbmo from model format 3 on) takes either")
    if params["ensembler"] is not None:
        raise ValueError("refit sets leaves from the objective's gradients; this model's "
                         "leaves came from an ensembler's, which refit cannot take")
    if params["boosting"] in ("dart", "rf"):
        raise ValueError("refit cannot refit DART's trees, each round of which rescaled "
                         "earlier ones, nor a random forest's, which fit the start score's "
                         "gradients")
    # booster.loss of a sparse Y's model is the registered loss that predicts
    # for it, whose gradients did not grow its trees
    loss = booster.loss if booster.sparse_loss is None else booster.sparse_loss.on_dense_scores()
    renewing = losses_renewing_leaves(loss)
    if renewing:
        tasks = ", ".join(f"{name!r} on outputs {outputs}" for name, outputs in renewing
                          if outputs is not None)
        tasks = f" ({tasks})" if tasks else ""
        raise ValueError(f"refit sets leaves from gradients; objective {loss.name!r} sets them "
                         f"from residual quantiles{tasks}, which refit does not do")
    # every tree, past best_iteration too; checks the features
    leaves = booster.predict_leaf(data, num_iteration=booster.current_iteration())
    n_rows, n_outputs = leaves.shape[0], booster.n_outputs
    y = handed_as_target(loss, label).prepare_target(label)
    if len(y) != n_rows or loss.n_outputs(y) != n_outputs:
        raise ValueError(f"label must give {n_outputs} output(s) for each of the {n_rows} rows "
                         f"of data; got {np.shape(label)}")
    weight = check_weight(weight, n_rows)
    init_score = check_init_score(init_score, n_rows)
    raw = np.tile(booster.init_score, (n_rows, 1))
    if init_score is not None:
        check_init_score_outputs(init_score, n_outputs, "refit")
        raw += init_score
    refitted = Booster(model_str=booster.model_to_string())
    if any(tree.linear_leaves is not None for tree in refitted.trees):
        X = booster._check_X(data)  # as the model reads it; the lines read dense rows
        X = X.toarray() if hasattr(X, "toarray") else X
    handed = HandedArrays(y, weight)
    n_threads = thread_count(None)
    per_round = booster.trees_per_round
    for first in range(0, len(refitted.trees), per_round):
        # a round's trees share them; an objective's update gradients set its leaves
        gradients = loss_gradients(loss, *handed.for_code(loss, raw))
        grad, hess = gradients[-2:] if isinstance(gradients, ObjectiveResult) else gradients
        trees = refitted.trees[first:first + per_round]
        for output, (tree, gradients) in enumerate(zip(trees, _per_tree_gradients(
                grad, hess, per_round > 1))):
            leaf = leaves[:, first + output]
            values, grouped = leaf_values_from_rows(gradients, leaf, tree, params, n_threads,
                                                    per_round > 1)
            values *= params["learning_rate"]
            tree.leaf_values = decay_rate * tree.leaf_values + (1.0 - decay_rate) * values
            if tree.linear_leaves is None:
                raw += tree.dense_leaf_values(n_outputs)[leaf]
                continue
            # the lines keep their features and take the new rows' slopes alike
            tree_grad, (tree_hess, hess_constant) = gradients[0], _split_hessian(gradients[1])
            fitted = fit_linear_leaves(
                tree, X, *grouped, np.ascontiguousarray(tree_grad, dtype=G_H_DTYPE),
                tree_hess, hess_constant, leaf_features(tree.linear_leaves),
                params["linear_lambda"], params["learning_rate"], n_threads)
            tree.linear_leaves = refitted_linear_leaves(tree, fitted, decay_rate, values)
            add_tree_predictions(X, leaf, tree, 1.0, raw, n_threads)
    return refitted
