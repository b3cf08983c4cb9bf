"""score_function: CatBoost's L2 split score (rows in place of hessians)
beside the Newton score, with the leaves set from the hessians in both."""
import numpy as np
import pytest

import gbmo
from gbmo import grower
from gbmo.engine import _weights_as_hessian
from gbmo.losses import SigmoidCrossEntropy, SoftmaxCrossEntropy

BASE = {"verbosity": 0, "n_threads": 1}


def stump_data():
    """Rows whose start scores spread their hessians p (1 - p) over two
    orders of magnitude: the Newton score's best root split (feature 1) and
    the L2 score's (feature 0) differ here (checked below)."""
    rng = np.random.default_rng(14)
    X = rng.integers(0, 6, size=(300, 3)).astype(float)
    start = 3.0 * rng.standard_normal(300)
    y = (rng.random(300) < 0.5).astype(float)
    return X, y, start


def best_root_split(X, g, h, lambda_l2, min_rows):
    """(feature, threshold) of the largest G_L^2 / (H_L + lambda) + G_R^2 /
    (H_R + lambda) over every split of integer-valued columns."""
    best, chosen = -np.inf, None
    for f in range(X.shape[1]):
        for t in np.unique(X[:, f])[:-1]:
            left = X[:, f] <= t
            if min(left.sum(), (~left).sum()) < min_rows:
                continue
            gain = (g[left].sum() ** 2 / (h[left].sum() + lambda_l2)
                    + g[~left].sum() ** 2 / (h[~left].sum() + lambda_l2))
            if gain > best:
                best, chosen = gain, (f, t)
    return chosen


@pytest.mark.parametrize("native", [True, False])
def test_l2_scores_splits_by_rows_and_sets_leaves_by_hessians(monkeypatch, native):
    """In both growth loops (the Cython one and the Python one)."""
    monkeypatch.setattr(grower, "NATIVE_GROWTH", native)
    X, y, start = stump_data()
    params = {**BASE, "objective": "sigmoid", "max_leaves": 2, "lambda_l2": 1.0,
              "min_samples_leaf": 20, "learning_rate": 0.5, "score_function": "L2"}
    stump = gbmo.train(params, gbmo.Dataset(X, y, init_score=start), 1).trees[0]
    p = 1.0 / (1.0 + np.exp(-start))
    g, h = p - y, p * (1.0 - p)
    chosen = best_root_split(X, g, np.ones_like(g), 1.0, 20)
    assert chosen != best_root_split(X, g, h, 1.0, 20)  # the two scores disagree here
    assert (stump.node_feature[0], stump.node_threshold[0]) == (chosen[0], chosen[1] + 0.5)
    left = X[:, chosen[0]] <= chosen[1]
    expected = [-0.5 * g[side].sum() / (h[side].sum() + 1.0) for side in (left, ~left)]
    np.testing.assert_allclose(np.sort(stump.leaf_values[:, 0]), np.sort(expected), rtol=1e-5)


def test_l2_is_the_rows_as_split_hessians_with_the_gradients_setting_leaves():
    """The same model as an ensembler splitting on (grad, weights) and
    setting leaves from (grad, hess), on softmax with sample weights."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(600, 5))
    y = np.argmax(X[:, :3] + rng.normal(size=(600, 3)), axis=1)
    weight = rng.uniform(0.5, 2.0, size=600)

    def rows_as_hessians(grad, hess, context):
        return grad, context.weight.reshape(-1, 1).astype(np.float32), grad, hess

    params = {**BASE, "objective": "softmax", "max_leaves": 8, "min_samples_leaf": 5}
    data = gbmo.Dataset(X, y, weight=weight)
    l2 = gbmo.train({**params, "score_function": "L2"}, data, 10)
    reference = gbmo.train({**params, "ensembler": rows_as_hessians}, data, 10)
    np.testing.assert_array_equal(l2.predict(X), reference.predict(X))
    newton = gbmo.train(params, data, 10)
    assert not np.array_equal(l2.predict(X), newton.predict(X))


def test_l2_equals_newton_when_every_hessian_is_the_row_s_weight():
    """mse's hessian is the row's weight: both scores are the same."""
    rng = np.random.default_rng(4)
    X = rng.normal(size=(500, 4))
    Y = np.column_stack([X[:, 0] > 0, X[:, 1] * X[:, 2]]) + 0.1 * rng.normal(size=(500, 2))
    data = gbmo.Dataset(X, Y, weight=rng.uniform(0.5, 2.0, size=500))
    params = {**BASE, "max_leaves": 8}
    np.testing.assert_array_equal(
        gbmo.train({**params, "score_function": "L2"}, data, 8).predict(X),
        gbmo.train(params, data, 8).predict(X))


def test_rows_as_hessians_leave_out_masked_targets():
    """A target the loss masks (NaN) has no gradient: its row counts for the
    outputs it has a label for only."""
    y = np.array([[1.0, np.nan], [0.0, 1.0], [np.nan, np.nan]])
    grad = np.zeros((3, 2), dtype=np.float32)
    weight = np.array([2.0, 1.0, 3.0])
    masked = _weights_as_hessian(SigmoidCrossEntropy(), y, weight, grad, True)
    np.testing.assert_array_equal(masked, [[2.0, 0.0], [1.0, 1.0], [0.0, 0.0]])
    # split columns that are not the outputs (an ensembler's) take the weights
    np.testing.assert_array_equal(_weights_as_hessian(SigmoidCrossEntropy(), y, weight, grad,
                                                      False), weight[:, None])
    np.testing.assert_array_equal(
        _weights_as_hessian(SoftmaxCrossEntropy(), np.array([0, 1, 1]), None, grad, True),
        np.ones((3, 1)))


def test_l2_learns_classes_through_the_estimator():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(1500, 4))
    y = np.argmax(X[:, :3], axis=1)
    model = gbmo.GBMOClassifier(n_estimators=40, score_function="L2", verbosity=0)
    model.fit(X[:1000], y[:1000])
    assert model.get_params()["score_function"] == "L2"
    assert np.mean(model.predict(X[1000:]) == y[1000:]) > 0.85


@pytest.mark.parametrize("params, message", [
    ({"tree_mode": "single_output"}, "needs split='dense' and tree_mode='multi_output'"),
    ({"split": "sparse", "top_k": 1}, "needs split='dense' and tree_mode='multi_output'"),
    ({"monotone_constraints": [1, 0]}, "no ensembler and score_function='NewtonL2'"),
    ({"max_delta_step": 0.5}, "no ensembler and score_function='NewtonL2'"),
    ({"path_smooth": 1.0}, "no ensembler and score_function='NewtonL2'"),
])
def test_l2_refuses_what_bounds_or_splits_leaves_by_output(params, message):
    X = np.arange(40.0).reshape(20, 2)
    with pytest.raises(ValueError, match=message):
        gbmo.train({**BASE, "score_function": "L2", **params}, gbmo.Dataset(X, X[:, 0]), 1)


def test_unknown_score_function_names_the_allowed_ones():
    X = np.arange(40.0).reshape(20, 2)
    with pytest.raises(ValueError, match="score_function.*NewtonL2.*L2"):
        gbmo.train({**BASE, "score_function": "Cosine"}, gbmo.Dataset(X, X[:, 0]), 1)
