"""train(): the boosting loop."""
import numpy as np

from ._core import G_H_DTYPE
from ._core._predict import add_leaf_values, predict_binned
from .booster import Booster
from .dataset import Dataset
from .grower import GrowerWorkspace, TreeGrower
from .losses import make_loss
from .metrics import get_metric
from .parallel import threads_for
from .params import resolve_params


def _split_hessian(hess):
    """A hessian column equal for every row becomes a constant: the histograms
    then count rows instead of summing it (the MSE path)."""
    if hess.shape[1] == 1 and hess.size and np.all(hess == hess[0, 0]):
        return np.empty((hess.shape[0], 0), dtype=G_H_DTYPE), float(hess[0, 0])
    return np.ascontiguousarray(hess, dtype=G_H_DTYPE), 1.0


def _active_features(bin_mapper):
    """Features with more than one bin observed (values or missing) can be split on."""
    return np.ascontiguousarray(
        np.flatnonzero(bin_mapper.n_bins_non_missing_ > 1), dtype=np.int32
    )


class _EvalSet:
    """A validation set with its raw scores, updated by one tree per round."""

    def __init__(self, name, dataset, loss, init_score, params):
        dataset.construct(params)
        self.name = name
        self.dataset = dataset
        self.y = loss.prepare_target(dataset.Y)
        self.raw = np.tile(init_score, (dataset.n_rows, 1))

    def add_tree(self, tree, missing_bin, n_threads):
        predict_binned(
            self.dataset.X_binned, missing_bin, np.zeros(1, dtype=np.int32),
            tree.node_feature, tree.node_bin, tree.node_missing_left, tree.node_left,
            tree.node_right, tree.node_value, tree.leaf_values, self.raw, n_threads,
        )


def train(params, train_set, num_boost_round=100, valid_sets=None, valid_names=None):
    """Trains a Booster on train_set (a Dataset) for num_boost_round rounds,
    evaluating the metric on each of valid_sets every round."""
    params = resolve_params(params)
    if not isinstance(train_set, Dataset):
        raise TypeError(f"train_set must be a gbmo.Dataset, got {type(train_set).__name__}")
    if isinstance(num_boost_round, bool) or not isinstance(num_boost_round, (int, np.integer)) \
            or num_boost_round < 0:
        raise ValueError(f"num_boost_round must be an integer >= 0, got {num_boost_round!r}")
    valid_sets = list(valid_sets or [])
    for valid in valid_sets:
        if not isinstance(valid, Dataset):
            raise TypeError(f"valid_sets must hold gbmo.Dataset objects, got {type(valid).__name__}")
        if valid.n_features != train_set.n_features:
            raise ValueError(
                f"a validation set has {valid.n_features} features, the training set {train_set.n_features}"
            )
    if valid_names is None:
        valid_names = [f"valid_{i}" for i in range(len(valid_sets))]
    if len(valid_names) != len(valid_sets):
        raise ValueError(f"{len(valid_names)} valid_names for {len(valid_sets)} valid_sets")
    loss = make_loss(params["objective"], params["num_class"], params["n_threads"])
    metric_name = params["metric"] or loss.default_metric
    metric = get_metric(metric_name)
    y = loss.prepare_target(train_set.Y)
    n_outputs = loss.n_outputs(y)
    weight = train_set.weight

    train_set.construct(params)
    bin_mapper = train_set.bin_mapper
    features = _active_features(bin_mapper)
    init_score = loss.init_score(y, weight)
    booster = Booster()
    booster._start(params, loss, train_set.n_features, n_outputs, init_score,
                   train_set.feature_names)
    eval_sets = [_EvalSet(name, valid, loss, init_score, params)
                 for name, valid in zip(valid_names, valid_sets)]
    booster.evals_result = {s.name: {metric_name: []} for s in eval_sets}

    raw = np.tile(init_score, (train_set.n_rows, 1))
    workspace = GrowerWorkspace(train_set.n_rows)
    n_threads = params["n_threads"]
    learning_rate = params["learning_rate"]
    for iteration in range(num_boost_round):
        grad, hess = loss.gradients(y, raw, weight)
        hess, hess_constant = _split_hessian(hess)
        grower = TreeGrower(train_set.X_binned, bin_mapper, features,
                            np.ascontiguousarray(grad, dtype=G_H_DTYPE), hess, hess_constant,
                            params, workspace)
        tree = grower.grow()
        tree.leaf_values *= learning_rate
        leaf_start, leaf_stop = (np.array(v, dtype=np.intp) for v in zip(*grower.leaf_ranges))
        add_leaf_values(workspace.rows, leaf_start, leaf_stop, tree.leaf_values, raw,
                        threads_for(n_threads, raw.size))
        booster._add_tree(tree)
        messages = []
        for eval_set in eval_sets:
            eval_set.add_tree(tree, bin_mapper.missing_bin,
                              threads_for(n_threads, eval_set.raw.size * 8))
            value = metric(eval_set.y, loss.transform(eval_set.raw), eval_set.dataset.weight)
            booster.evals_result[eval_set.name][metric_name].append(value)
            messages.append(f"{eval_set.name}'s {metric_name}: {value:.6g}")
        if params["verbosity"] > 0 and messages:
            print(f"[{iteration + 1}]\t" + "\t".join(messages))
    return booster
