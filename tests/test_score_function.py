"""score_function: CatBoost's L2 split score (rows in place of hessians)
beside the Newton score, with the leaves set from the hessians in both."""
import numpy as np
import pytest

import gbmo
from gbmo import grower
from gbmo.engine import _observed_mask, _weights_as_hessian

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


def test_rows_as_hessians_leave_out_missing_targets():
    """A missing (NaN) target, which the objectives that take one mask, has
    no gradient: its row counts for the outputs it has a label for only."""
    y = np.array([[1.0, np.nan], [0.0, 1.0], [np.nan, np.nan]])
    grad = np.zeros((3, 2), dtype=np.float32)
    weight = np.array([2.0, 1.0, 3.0])
    np.testing.assert_array_equal(_weights_as_hessian(weight, grad, _observed_mask(y)),
                                  [[2.0, 0.0], [1.0, 1.0], [0.0, 0.0]])
    # split columns that are not the outputs (an ensembler's) take the weights
    np.testing.assert_array_equal(_weights_as_hessian(weight, grad, None), weight[:, None])
    classes = np.array([0, 1, 1])
    np.testing.assert_array_equal(_weights_as_hessian(None, grad, _observed_mask(classes)),
                                  np.ones((3, 1)))


def test_l2_trains_labels_with_missing_ones_as_counting_only_the_observed():
    """Multi-label sigmoid with missing labels: the same model as an
    ensembler whose split hessians are 1 where a label is observed."""
    rng = np.random.default_rng(6)
    X = rng.normal(size=(500, 4))
    Y = (X[:, :2] + rng.normal(size=(500, 2)) > 0).astype(float)
    Y[rng.random(500) < 0.4, 0] = np.nan
    observed = (~np.isnan(Y)).astype(np.float32)

    def observed_as_hessians(grad, hess, context):
        return grad, observed, grad, hess

    params = {**BASE, "objective": "sigmoid", "max_leaves": 6, "min_samples_leaf": 5}
    data = gbmo.Dataset(X, Y)
    np.testing.assert_array_equal(
        gbmo.train({**params, "score_function": "L2"}, data, 6).predict(X),
        gbmo.train({**params, "ensembler": observed_as_hessians}, data, 6).predict(X))


def test_goss_renews_l2_leaves_from_every_row_s_hessians():
    rng = np.random.default_rng(7)
    X = rng.normal(size=(800, 3))
    y = (X[:, 0] + rng.normal(size=800) > 0).astype(float)
    start = 2.0 * rng.standard_normal(800)
    params = {**BASE, "objective": "sigmoid", "max_leaves": 4, "learning_rate": 0.5,
              "score_function": "L2", "data_sample_strategy": "goss", "top_rate": 0.2,
              "other_rate": 0.2, "min_samples_leaf": 5}
    booster = gbmo.train(params, gbmo.Dataset(X, y, init_score=start), 1)
    p = 1.0 / (1.0 + np.exp(-start))
    g, h = p - y, p * (1.0 - p)
    leaf = booster.predict_leaf(X)[:, 0]
    for value, rows in [(booster.trees[0].leaf_values[j, 0], leaf == j)
                        for j in range(booster.trees[0].n_leaves)]:
        assert value == pytest.approx(-0.5 * g[rows].sum() / (h[rows].sum() + 1.0), rel=1e-5)


def test_l2_keeps_per_output_importance_and_its_parameter_through_save():
    rng = np.random.default_rng(8)
    X = rng.normal(size=(600, 4))
    y = np.argmax(X[:, :3] + rng.normal(size=(600, 3)), axis=1)
    booster = gbmo.train({**BASE, "objective": "softmax", "score_function": "L2",
                          "max_leaves": 6}, gbmo.Dataset(X, y), 5)
    per_output = booster.feature_importance("gain", per_output=True)
    assert per_output.shape == (4, 3)
    np.testing.assert_allclose(per_output.sum(axis=1), booster.feature_importance("gain"),
                               rtol=1e-6)
    loaded = gbmo.Booster(model_str=booster.model_to_string())
    assert loaded.params["score_function"] == "L2"
    np.testing.assert_array_equal(loaded.predict(X), booster.predict(X))


def test_l2_learns_classes_through_the_estimator():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(1500, 4))
    y = np.argmax(X[:, :3], axis=1)
    model = gbmo.GBMOClassifier(n_estimators=40, score_function="L2", verbosity=0)
    model.fit(X[:1000], y[:1000])
    assert model.get_params()["score_function"] == "L2"
    assert np.mean(model.predict(X[1000:]) == y[1000:]) > 0.85


@pytest.mark.parametrize("params, message", [
    ({"lambda_l2": 0.0}, "needs lambda_l2 > 0"),
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


def test_reset_parameter_may_not_take_l2_s_penalty_away():
    X = np.arange(40.0).reshape(20, 2)
    with pytest.raises(ValueError, match="needs lambda_l2 > 0"):
        gbmo.train({**BASE, "score_function": "L2"}, gbmo.Dataset(X, X[:, 0]), 3,
                   callbacks=[gbmo.reset_parameter(lambda_l2=[1.0, 0.0, 0.0])])


def test_unknown_score_function_names_the_allowed_ones():
    X = np.arange(40.0).reshape(20, 2)
    with pytest.raises(ValueError, match="score_function.*NewtonL2.*L2"):
        gbmo.train({**BASE, "score_function": "Cosine"}, gbmo.Dataset(X, X[:, 0]), 1)
