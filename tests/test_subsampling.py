"""Row subsampling per round and column subsampling per tree and per node:
seeded, reproducible, and doing what they say."""
import numpy as np
import pytest

import gbmo

RNG = np.random.default_rng(31)
X = RNG.normal(size=(1000, 8))
Y = np.c_[X[:, 0] + 0.5 * X[:, 1], X[:, 0] - X[:, 2]] + 0.1 * RNG.normal(size=(1000, 2))
PARAMS = {"verbosity": 0, "min_samples_leaf": 5, "max_leaves": 8}


def _train(params=None, rounds=10, valid=False):
    data = gbmo.Dataset(X, Y)
    return gbmo.train({**PARAMS, **(params or {})}, data, rounds,
                      valid_sets=[data] if valid else None)


def _tree_features(tree):
    return set(tree.node_feature[tree.node_left >= 0].tolist())


@pytest.mark.parametrize("params", [
    {"subsample": 0.5}, {"subsample": 0.5, "subsample_freq": 3}, {"colsample_bytree": 0.5},
    {"colsample_bynode": 0.5}, {"subsample": 0.8, "colsample_bytree": 0.6,
                                "colsample_bynode": 0.5, "tree_mode": "single_output"},
])
def test_same_seed_same_model_other_seed_other_model(params):
    a, b = _train({**params, "seed": 1}), _train({**params, "seed": 1})
    np.testing.assert_array_equal(a.predict(X), b.predict(X))
    c = _train({**params, "seed": 2})
    assert not np.array_equal(a.predict(X), c.predict(X))


def test_full_fractions_are_no_subsampling():
    full = _train({"subsample": 1.0, "colsample_bytree": 1.0, "colsample_bynode": 1.0})
    np.testing.assert_array_equal(full.predict(X), _train().predict(X))


def test_each_tree_is_grown_on_its_round_of_rows():
    booster = _train({"subsample": 0.3, "subsample_freq": 2}, rounds=6)
    roots = [tree.node_count[0] for tree in booster.trees]
    assert roots == [300] * 6
    # rows out of the bag are still updated: training raw scores equal predict
    tracked = _train({"subsample": 0.3}, rounds=6, valid=True)
    rmse = np.mean(np.sqrt(np.mean((tracked.predict(X) - Y) ** 2, axis=0)))
    assert tracked.evals_result["training"]["rmse"][-1] == pytest.approx(rmse, rel=1e-12)


def test_rows_are_drawn_again_every_subsample_freq_rounds(monkeypatch):
    from gbmo import engine

    draws = []
    original = engine._draw_rows

    def recording(rng, n_rows, fraction):
        draws.append(original(rng, n_rows, fraction))
        return draws[-1]

    monkeypatch.setattr(engine, "_draw_rows", recording)
    _train({"subsample": 0.5, "subsample_freq": 2}, rounds=6)
    assert len(draws) == 3
    for rows in draws:
        assert len(rows) == 500 and np.all(np.diff(rows.astype(np.int64)) > 0)
    assert len({rows.tobytes() for rows in draws}) == 3


def test_colsample_bytree_limits_each_trees_features():
    booster = _train({"colsample_bytree": 0.25}, rounds=15)  # 2 of 8 features per tree
    used = [_tree_features(tree) for tree in booster.trees]
    assert all(len(features) <= 2 for features in used)
    assert len(set().union(*used)) > 2


def test_colsample_bynode_draws_per_node():
    # one feature per node: the root is not always the strongest feature
    booster = _train({"colsample_bynode": 1 / 8}, rounds=15)
    roots = {tree.node_feature[0] for tree in booster.trees}
    assert len(roots) > 1
    plain = _train(rounds=15)
    assert len({tree.node_feature[0] for tree in plain.trees}) == 1
    # within a tree, more than one feature still gets used
    assert any(len(_tree_features(tree)) > 1 for tree in booster.trees)


def test_subsampling_still_learns():
    params = {"subsample": 0.5, "colsample_bytree": 0.75, "colsample_bynode": 0.75,
              "learning_rate": 0.3}
    booster = _train(params, rounds=40)
    assert np.sqrt(np.mean((booster.predict(X) - Y) ** 2)) < 0.3 * Y.std()


@pytest.mark.parametrize("params, message", [
    ({"subsample": 0}, r"'subsample' = 0.0 is out of range; allowed: \(0.0, 1.0\]"),
    ({"subsample": 1.5}, "'subsample' = 1.5 is out of range"),
    ({"subsample_freq": -1}, "'subsample_freq' = -1 is out of range"),
    ({"colsample_bytree": -0.1}, "'colsample_bytree' = -0.1 is out of range"),
    ({"feature_fraction_bynode": 2},
     r"'feature_fraction_bynode' \(gbmo's 'colsample_bynode'\) = 2.0 is out of range"),
])
def test_bad_fractions(params, message):
    with pytest.raises(ValueError, match=message):
        _train(params, rounds=1)


def test_lightgbm_aliases():
    ours = _train({"subsample": 0.5, "colsample_bytree": 0.5, "seed": 3})
    aliased = _train({"bagging_fraction": 0.5, "feature_fraction": 0.5, "seed": 3})
    np.testing.assert_array_equal(ours.predict(X), aliased.predict(X))


def test_estimator_passes_subsampling_on():
    from gbmo.sklearn import GBMORegressor

    a = GBMORegressor(n_estimators=5, subsample=0.5, random_state=0).fit(X, Y)
    b = GBMORegressor(n_estimators=5, random_state=0).fit(X, Y)
    assert a.booster_.trees[0].node_count[0] == 500
    assert b.booster_.trees[0].node_count[0] == 1000


@pytest.mark.parametrize("tree_mode", ["multi_output", "single_output"])
def test_a_sample_of_only_zero_weight_rows_gives_zero_leaves_not_nan(tree_mode):
    """Found by the training fuzz: with lambda_l2 = 0, a round whose row sample
    held only weight-0 rows made leaves of 0 / 0 and every prediction NaN."""
    X = np.array([[4.0], [-3.0]])
    y = np.array([[1.8, 0.5], [1.1, -0.5]])
    params = {"verbosity": 0, "min_samples_leaf": 1, "lambda_l2": 0.0, "subsample": 0.5,
              "subsample_freq": 1, "tree_mode": tree_mode}
    booster = gbmo.train(params, gbmo.Dataset(X, y, weight=np.array([1.0, 0.0])), 30)
    trees_on_the_zero_row = [t for t in booster.trees if t.node_count[0] == 1
                             and np.all(t.leaf_values == 0)]
    assert trees_on_the_zero_row, "no round drew the weight-0 row alone"
    assert np.all(np.isfinite(booster.predict(X)))


# -- balanced bagging: pos_bagging_fraction / neg_bagging_fraction ---------------
def _rare_positives(seed=32, n=3000):
    rng = np.random.default_rng(seed)
    features = rng.normal(size=(n, 4))
    labels = (features[:, 0] + rng.normal(size=n) > 2.0).astype(float)
    return features, labels


def test_balanced_bagging_draws_each_class_apart_in_place_of_subsample(monkeypatch):
    """LightGBM's balanced bagging: round(fraction x count) rows of each class,
    drawn again every subsample_freq rounds; subsample is not used."""
    from gbmo import engine

    features, labels = _rare_positives()
    positive = labels > 0
    draws = []
    original = engine._draw_balanced_rows

    def recording(*arguments):
        draws.append(original(*arguments))
        return draws[-1]

    monkeypatch.setattr(engine, "_draw_balanced_rows", recording)
    params = {**PARAMS, "objective": "binary", "pos_bagging": 0.5, "neg_subsample": 0.05,
              "bagging_fraction": 0.9, "bagging_freq": 2, "seed": 3}
    booster = gbmo.train(params, gbmo.Dataset(features, labels), 6)
    assert len(draws) == 3 and len({rows.tobytes() for rows in draws}) == 3
    for rows in draws:
        assert positive[rows].sum() == round(0.5 * positive.sum())
        assert (~positive[rows]).sum() == round(0.05 * (~positive).sum())
        assert np.all(np.diff(rows.astype(np.int64)) > 0)
    assert [tree.node_count[0] for tree in booster.trees] == [len(draws[0])] * 6
    # the positives weigh more in every tree than in the data: higher probabilities
    assert booster.predict(features).mean() > 2 * labels.mean()
    same = gbmo.train(params, gbmo.Dataset(features, labels), 6)
    np.testing.assert_array_equal(same.predict(features), booster.predict(features))


@pytest.mark.parametrize("params, target, message", [
    ({"objective": "mse"}, "binary", "need objective 'sigmoid' with one output; got objective "
                                     "'mse'"),
    ({"objective": "sigmoid"}, "multi-label", "with 2 output"),
    ({"objective": "sigmoid", "data_sample_strategy": "goss"}, "binary",
     "takes no bagging.*neg_bagging_fraction=0.5"),
])
def test_balanced_bagging_needs_a_binary_sigmoid_target(params, target, message):
    features, labels = _rare_positives(n=300)
    y = labels if target == "binary" else np.column_stack([labels, 1 - labels])
    with pytest.raises(ValueError, match=message):
        gbmo.train({**PARAMS, "neg_bagging_fraction": 0.5, **params},
                   gbmo.Dataset(features, y), 1)
    with pytest.raises(ValueError, match="parameter 'pos_bagging_fraction' = 0.0 is out of"):
        gbmo.train({**PARAMS, "pos_bagging_fraction": 0.0}, gbmo.Dataset(features, labels), 1)


def test_balanced_bagging_leaves_rows_without_a_label_out_of_both_classes(monkeypatch):
    from gbmo import engine

    features, labels = _rare_positives(seed=33, n=1000)
    labels[::10] = np.nan  # missing labels teach nothing
    draws = []
    original = engine._draw_balanced_rows
    monkeypatch.setattr(engine, "_draw_balanced_rows",
                        lambda *arguments: draws.append(original(*arguments)) or draws[-1])
    gbmo.train({**PARAMS, "objective": "sigmoid", "pos_bagging_fraction": 0.5,
                "neg_bagging_fraction": 0.2}, gbmo.Dataset(features, labels), 1)
    rows = draws[0]
    assert not np.isnan(labels[rows]).any()
    assert (labels[rows] > 0).sum() == round(0.5 * (labels > 0).sum())
    assert (labels[rows] <= 0).sum() == round(0.2 * (labels <= 0).sum())
