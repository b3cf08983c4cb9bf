"""Gradient-based one-side sampling: the sample, the amplified gradients the
trees are grown on, the warm-up rounds, and the errors."""
import numpy as np
import pytest
import scipy.sparse as sp

import gbmo
import gbmo.engine
from gbmo.goss import goss_sample

QUIET = {"verbosity": 0}


def _classes(n=3000, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 6))
    logits = np.column_stack([X[:, 0], X[:, 1] - X[:, 2], np.sin(2 * X[:, 3])])
    return X, np.argmax(2 * logits + rng.gumbel(size=logits.shape), axis=1)


@pytest.fixture
def drawn_samples(monkeypatch):
    """The (rows, drawn rows, factor) of every GOSS sample training draws."""
    drawn = []

    def recording(*args):
        drawn.append(goss_sample(*args))
        return drawn[-1]

    monkeypatch.setattr(gbmo.engine, "goss_sample", recording)
    return drawn


@pytest.mark.parametrize("hess_columns", [1, 4])
def test_the_sample_is_the_largest_gradients_and_a_draw_from_the_rest(hess_columns):
    rng = np.random.default_rng(0)
    grad = rng.normal(size=(1000, 4)).astype(np.float32)
    hess = rng.uniform(0.1, 1.0, size=(1000, hess_columns)).astype(np.float32)
    rows, other, factor = goss_sample(grad, hess, 0.2, 0.1, np.random.default_rng(1))
    size = np.abs(grad * hess).sum(axis=1)
    top = np.setdiff1d(rows, other)
    assert len(top) == 200 and len(other) == 100 and factor == 8.0
    assert np.all(np.diff(rows.astype(np.int64)) > 0)  # sorted, no repeats
    np.testing.assert_array_equal(np.union1d(top, other), rows)
    assert size[top].min() >= size[np.setdiff1d(np.arange(1000), top)].max()
    again, other_again, _ = goss_sample(grad, hess, 0.2, 0.1, np.random.default_rng(1))
    np.testing.assert_array_equal(again, rows)
    np.testing.assert_array_equal(other_again, other)
    _, other_elsewhere, _ = goss_sample(grad, hess, 0.2, 0.1, np.random.default_rng(2))
    assert not np.array_equal(other_elsewhere, other)


@pytest.mark.parametrize("n_rows, top_rate, other_rate", [
    (29, 0.2, 0.1), (15, 0.2, 0.1), (300, 0.2, 0.001), (7, 0.0, 0.5)])
def test_the_drawn_rows_stand_for_the_whole_rest_whatever_the_rounding(n_rows, top_rate,
                                                                       other_rate):
    """With unit gradients the amplified sample sums to the row count exactly."""
    ones = np.ones((n_rows, 2), dtype=np.float32)
    rows, other, factor = goss_sample(ones, ones[:, :1], top_rate, other_rate,
                                      np.random.default_rng(0))
    n_top = len(rows) - len(other)
    assert n_top + factor * len(other) == pytest.approx(n_rows, rel=1e-12)


def test_rates_covering_every_row_grow_the_unsampled_trees():
    """top_rate + other_rate = 1 keeps every row at weight (1 - a) / b = 1."""
    X, y = _classes()
    params = {**QUIET, "objective": "softmax", "learning_rate": 0.5}
    full = gbmo.train(params, gbmo.Dataset(X, y), 6)
    goss = gbmo.train({**params, "data_sample_strategy": "goss", "top_rate": 0.3,
                       "other_rate": 0.7}, gbmo.Dataset(X, y), 6)
    np.testing.assert_array_equal(goss.predict(X, raw_score=True),
                                  full.predict(X, raw_score=True))


@pytest.mark.parametrize("renew", [False, True])
@pytest.mark.parametrize("tree_mode", ["multi_output", "single_output"])
def test_trees_are_grown_on_the_amplified_sample_after_the_warm_up(drawn_samples, tree_mode,
                                                                   renew):
    """The sample shapes round 3's trees; their leaves hold the amplified
    sample's values (LightGBM's GOSS) or, renewed, every row's own."""
    X, y = _classes()
    drawn = drawn_samples
    rate, l2, top_rate, other_rate = 0.5, 1.0, 0.2, 0.1
    params = {**QUIET, "objective": "softmax", "learning_rate": rate, "lambda_l2": l2,
              "max_leaves": 6, "tree_mode": tree_mode}
    goss = gbmo.train({**params, "data_sample_strategy": "goss", "top_rate": top_rate,
                       "other_rate": other_rate, "goss_renew_leaves": renew},
                      gbmo.Dataset(X, y), 3)
    full = gbmo.train(params, gbmo.Dataset(X, y), 2)
    assert len(drawn) == 1  # rounds 0 and 1 warm up (1 / learning_rate), round 2 samples
    per_round = goss.trees_per_round
    n_warm = 2 * per_round
    np.testing.assert_array_equal(goss.predict(X, raw_score=True, num_iteration=2),
                                  full.predict(X, raw_score=True))
    # round 2's trees: -sum(w g) / (sum(w h) + lambda) over the sampled rows of each
    # leaf, w = (1 - top_rate) / other_rate for the drawn rows, 1 for the top ones
    rows, other, factor = drawn[0]
    raw = goss.predict(X, raw_score=True, num_iteration=2)
    p = np.exp(raw - raw.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    grad = p - np.eye(3)[y]
    hess = p * (1 - p)
    weight = np.zeros(len(X))
    weight[rows] = 1.0
    weight[other] = factor
    assert factor == (1 - top_rate) / other_rate  # 3,000 rows: no rounding
    if renew:
        weight[:] = 1.0
    leaves = goss.predict_leaf(X)
    for t in range(per_round):
        tree = goss.trees[n_warm + t]
        assert tree.node_count[0] == len(rows)
        outputs = [0, 1, 2] if per_round == 1 else [t]
        values = tree.dense_leaf_values(3)
        for leaf in range(tree.n_leaves):
            in_leaf = leaves[:, n_warm + t] == leaf
            G = (weight[in_leaf, None] * grad[in_leaf]).sum(axis=0)
            H = (weight[in_leaf, None] * hess[in_leaf]).sum(axis=0)
            np.testing.assert_allclose(values[leaf, outputs], (-rate * G / (H + l2))[outputs],
                                       rtol=2e-4, atol=1e-7)


def test_goss_learns_nearly_as_well_and_is_deterministic():
    X, y = _classes(6000)
    X_test, y_test = _classes(3000, seed=1)
    params = {**QUIET, "objective": "softmax", "learning_rate": 0.2}
    full = gbmo.train(params, gbmo.Dataset(X, y), 60)
    goss_params = {**params, "data_sample_strategy": "goss", "seed": 3}
    goss = gbmo.train(goss_params, gbmo.Dataset(X, y), 60)
    accuracy = {name: np.mean(model.predict(X_test).argmax(axis=1) == y_test)
                for name, model in (("full", full), ("goss", goss))}
    assert accuracy["goss"] > accuracy["full"] - 0.03
    assert accuracy["goss"] > 0.6  # three classes
    again = gbmo.train(goss_params, gbmo.Dataset(X, y), 60)
    np.testing.assert_array_equal(again.predict(X_test), goss.predict(X_test))
    other_seed = gbmo.train({**goss_params, "seed": 4}, gbmo.Dataset(X, y), 60)
    assert not np.array_equal(other_seed.predict(X_test), goss.predict(X_test))


@pytest.mark.parametrize("renew", [False, True])
def test_an_ensembler_s_update_gradients_are_amplified_too(drawn_samples, renew):
    """A sketch ensembler's tree is shaped by one column; its leaves come from
    the amplified update gradients of every output (MSE: g = F - y, h = 1),
    or, renewed, from every row's own."""
    drawn = drawn_samples
    rng = np.random.default_rng(0)
    X = rng.normal(size=(800, 5))
    Y = np.column_stack([X[:, 0], X[:, 1] * X[:, 0], np.cos(X[:, 2])])
    rate, l2 = 1.0, 1.0
    booster = gbmo.train({**QUIET, "ensembler": "sketch_topk", "ensembler_params": {"k": 1},
                          "learning_rate": rate, "lambda_l2": l2,
                          "data_sample_strategy": "goss", "goss_renew_leaves": renew},
                         gbmo.Dataset(X, Y), 2)
    rows, other, factor = drawn[0]  # round 2 (round 1 warms up)
    weight = np.zeros(len(X))
    weight[rows] = 1.0
    weight[other] = factor
    if renew:
        weight[:] = 1.0
    grad = booster.predict(X, raw_score=True, num_iteration=1) - Y
    leaves = booster.predict_leaf(X)[:, 1]
    tree = booster.trees[1]
    for leaf in range(tree.n_leaves):
        in_leaf = leaves == leaf
        G = (weight[in_leaf, None] * grad[in_leaf]).sum(axis=0)
        expected = -rate * G / (weight[in_leaf].sum() + l2)
        np.testing.assert_allclose(tree.leaf_values[leaf], expected, rtol=2e-5, atol=1e-8)


def test_renewed_leaves_are_kept_in_the_raw_scores_and_monotone_models_keep_theirs():
    X, y = _classes()
    data = gbmo.Dataset(X, y)
    booster = gbmo.train({**QUIET, "objective": "softmax", "learning_rate": 0.5,
                          "data_sample_strategy": "goss"}, data, 6, valid_sets=[data])
    proba = booster.predict(X)
    recorded = booster.evals_result["training"]["logloss"][-1]
    assert recorded == pytest.approx(-np.mean(np.log(proba[np.arange(len(y)), y])), rel=1e-12)
    # monotone constraints bound each leaf by its node's bounds: the sample's values stay
    rng = np.random.default_rng(0)
    Xr = rng.normal(size=(2000, 3))
    yr = Xr[:, 0] + 0.1 * rng.normal(size=2000)
    params = {**QUIET, "learning_rate": 0.5, "data_sample_strategy": "goss",
              "monotone_constraints": [1, 0, 0]}
    renewed = gbmo.train(params, gbmo.Dataset(Xr, yr), 6)
    kept = gbmo.train({**params, "goss_renew_leaves": False}, gbmo.Dataset(Xr, yr), 6)
    np.testing.assert_array_equal(renewed.predict(Xr), kept.predict(Xr))


def test_cv_and_the_estimators_take_it():
    X, y = _classes(1500)
    results = gbmo.cv({**QUIET, "objective": "softmax", "data_sample_strategy": "goss",
                       "learning_rate": 0.5}, gbmo.Dataset(X, y), 5, nfold=3)
    assert len(results["valid logloss-mean"]) == 5
    from gbmo.sklearn import GBMOClassifier
    model = GBMOClassifier(n_estimators=5, learning_rate=0.5, data_sample_strategy="goss",
                           top_rate=0.3, other_rate=0.2, random_state=0).fit(X, y)
    assert model.booster_.params["data_sample_strategy"] == "goss"
    assert model.booster_.params["top_rate"] == 0.3


@pytest.mark.parametrize("params, message", [
    ({"data_sample_strategy": "goss", "subsample": 0.5}, "subsample=0.5"),
    ({"data_sample_strategy": "goss", "top_rate": 0.6, "other_rate": 0.5}, "sum must be <= 1"),
    ({"data_sample_strategy": "goss", "other_rate": 0.0}, "other_rate"),
    ({"data_sample_strategy": "goss", "top_rate": 1.5}, "top_rate"),
    ({"data_sample_strategy": "random"}, "data_sample_strategy"),
    ({"data_sample_strategy": "goss", "goss_renew_leaves": "yes"}, "goss_renew_leaves"),
])
def test_bad_settings_are_refused_by_name(params, message):
    X, y = _classes(200)
    with pytest.raises((ValueError, TypeError), match=message):
        gbmo.train({**QUIET, "objective": "softmax", **params}, gbmo.Dataset(X, y), 1)


def test_a_sparse_y_refuses_goss_with_bagging_as_a_dense_one():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(100, 4))
    Y = sp.csr_matrix((rng.random((100, 30)) < 0.1).astype(float))
    with pytest.raises(ValueError, match="takes no bagging"):
        gbmo.train({**QUIET, "data_sample_strategy": "goss", "split": "sparse", "top_k": 3,
                    "subsample": 0.5, "subsample_freq": 1}, gbmo.Dataset(X, Y), 1)


@pytest.mark.parametrize("params", [
    {"split": "sparse_restricted", "top_k": 2},
    {"split": "sparse", "top_k": 1},
    {"lambda_l1": 20.0},
    {"tree_mode": "single_output", "lambda_l1": 5.0},
], ids=["sparse_restricted", "sparse", "l1", "single_output_l1"])
def test_renewed_leaves_are_every_row_s_weighted_thresholded_sums(monkeypatch, params):
    """MSE with weights: g = w (F - y), h = w; a renewed leaf keeps
    -lr T(sum g) / (sum h + lambda) over all its rows, for the outputs it keeps."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(3000, 5))
    Y = np.column_stack([X[:, 0], np.sin(X[:, 1]), X[:, 2] * X[:, 0]])
    weight = rng.uniform(0.2, 2.0, 3000)
    rate, l2 = 1.0, 1.0
    booster = gbmo.train({**QUIET, **params, "learning_rate": rate, "lambda_l2": l2,
                          "max_leaves": 6, "data_sample_strategy": "goss"},
                         gbmo.Dataset(X, Y, weight=weight), 2)
    l1 = params.get("lambda_l1", 0.0)
    grad = weight[:, None] * (booster.predict(X, raw_score=True, num_iteration=1) - Y)
    leaves = booster.predict_leaf(X)
    per_round = booster.trees_per_round
    for t in range(per_round):
        tree = booster.trees[per_round + t]
        assert tree.node_count[0] < len(X)  # grown on the sample
        for leaf in range(tree.n_leaves):
            in_leaf = leaves[:, per_round + t] == leaf
            G = grad[in_leaf].sum(axis=0)
            expected = -rate * np.sign(G) * np.maximum(np.abs(G) - l1, 0) / (
                weight[in_leaf].sum() + l2)
            kept = [t] if per_round > 1 else (
                range(3) if tree.leaf_outputs is None else tree.leaf_outputs[leaf])
            np.testing.assert_allclose(tree.leaf_values[leaf], expected[list(kept)],
                                       rtol=2e-5, atol=1e-9)


def test_a_loss_of_float64_gradients_renews_too():
    class DoubleSquaredError(gbmo.Loss):
        name = "double_mse"
        default_metric = "rmse"

        def prepare_target(self, y):
            return np.asarray(y, dtype=float).reshape(len(y), -1)

        def n_outputs(self, y):
            return y.shape[1]

        def init_score(self, y, weight=None):
            return y.mean(axis=0)

        def gradients(self, y, raw, weight=None):
            return raw - y, np.ones((len(y), 1))  # float64, as a third party may give

    rng = np.random.default_rng(0)
    X = rng.normal(size=(600, 4))
    Y = np.column_stack([X[:, 0], X[:, 1]])
    for mode in ("multi_output", "single_output"):
        params = {**QUIET, "learning_rate": 0.5, "data_sample_strategy": "goss",
                  "tree_mode": mode}
        ours = gbmo.train({**params, "objective": DoubleSquaredError()}, gbmo.Dataset(X, Y), 4)
        builtin = gbmo.train(params, gbmo.Dataset(X, Y), 4)
        np.testing.assert_allclose(ours.predict(X), builtin.predict(X), rtol=1e-6, atol=1e-9)
