"""boosting='rf': every tree fits the start score's gradients on its own
sample, and the model is the start plus the mean of its trees (LightGBM's
random forest mode), checked against those definitions and scikit-learn's
forest."""
import numpy as np
import pytest

import gbmo

FOREST = {"verbosity": 0, "boosting": "rf", "subsample": 0.6, "colsample_bynode": 0.7,
          "max_leaves": 31, "min_samples_leaf": 5, "seed": 3}


def problem(seed=0, n=1200, d=2):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 5))
    Y = np.column_stack([np.sin(2 * X[:, 0]) + X[:, 1], X[:, 0] * X[:, 2], np.abs(X[:, 3])])
    return X, Y[:, :d] + 0.3 * rng.normal(size=(n, d))


def tree_values(model, X, first, stop):
    """Each row's leaf values in trees first..stop, (trees, n, d) (a
    single-output tree's in its own output's column, 0 elsewhere)."""
    leaves = model.predict(X, pred_leaf=True).reshape(len(X), -1)
    return np.array([model.trees[t].dense_leaf_values(model.n_outputs)[leaves[:, t]]
                     for t in range(first, stop)])


@pytest.mark.parametrize("params, d", [({}, 2), ({"tree_mode": "single_output"}, 3),
                                       ({"growth": "depthwise", "max_depth": 4}, 1)])
def test_a_forest_predicts_its_start_plus_the_mean_of_its_rounds(params, d):
    X, Y = problem(d=d)
    model = gbmo.train({**FOREST, **params}, gbmo.Dataset(X, Y), 9)
    per_round = model.trees_per_round
    for start, rounds in ((0, 9), (0, 1), (0, 4), (3, 5)):
        trees = tree_values(model, X, start * per_round, (start + rounds) * per_round)
        expected = model.init_score + trees.sum(axis=0) / rounds
        raw = model.predict(X, start_iteration=start, num_iteration=rounds, raw_score=True)
        np.testing.assert_allclose(raw.reshape(expected.shape), expected, rtol=1e-12,
                                   atol=1e-12)
    contributions = model.predict(X[:100], pred_contrib=True).reshape(100, 6, d)
    np.testing.assert_allclose(contributions.sum(axis=1),
                               model.predict(X[:100], raw_score=True).reshape(100, d),
                               rtol=1e-10, atol=1e-10)
    trees = tree_values(model, X, 0, len(model.trees))
    dense = [tree.dense_leaf_values(d) for tree in model.trees]
    lowest = model.init_score + sum(values.min(axis=0) for values in dense) / 9
    np.testing.assert_allclose(np.ravel(model.lower_bound()), lowest, rtol=1e-12)
    assert np.all(np.ravel(model.lower_bound()) <= trees.mean(axis=0).min(axis=0)
                  + model.init_score + 1e-12)


def test_every_tree_fits_the_start_score_s_gradients_unshrunk():
    """MSE, every row in every tree (features drawn instead): a leaf holds
    sum(y - start) / (n + lambda_l2) over its rows, whatever the learning rate
    and however many trees came before; lambda_l2 is 0 unless given (a
    forest's leaves are the means of their rows' residuals, as LightGBM's)."""
    X, Y = problem(1)
    params = {**FOREST, "subsample": 1.0, "colsample_bytree": 0.6, "learning_rate": 0.01}
    for given, lambda_l2 in [({}, 0.0), ({"lambda_l2": 1.0}, 1.0)]:
        model = gbmo.train({**params, **given}, gbmo.Dataset(X, Y), 6)
        assert model.params["lambda_l2"] == lambda_l2
        leaves = model.predict(X, pred_leaf=True)
        residual = Y - model.init_score
        for t, tree in enumerate(model.trees):
            for leaf in range(tree.n_leaves):
                rows = leaves[:, t] == leaf
                np.testing.assert_allclose(tree.leaf_values[leaf],
                                           residual[rows].sum(axis=0) / (rows.sum() + lambda_l2),
                                           rtol=1e-5)  # float32 gradients
    assert len({tuple(tree.node_feature) for tree in model.trees}) > 1  # the draws differ


def test_the_recorded_scores_are_the_mean_model_s_and_early_stopping_keeps_its_best():
    X, Y = problem(2, n=1500)
    train = gbmo.Dataset(X[:1000], Y[:1000])
    valid = train.create_valid(X[1000:], Y[1000:])
    model = gbmo.train({**FOREST, "metric": "rmse", "early_stopping_round": 3}, train, 60,
                       valid_sets=[valid, train], valid_names=["valid", "train"])
    for name, rows in (("valid", slice(1000, None)), ("train", slice(None, 1000))):
        history = model.evals_result[name]["rmse"]
        for k in (1, 2, len(history)):
            P = model.predict(X[rows], num_iteration=k)
            expected = np.sqrt(((P - Y[rows]) ** 2).mean(axis=0)).mean()
            assert history[k - 1] == pytest.approx(expected, rel=1e-10)
    history = model.evals_result["valid"]["rmse"]
    assert model.best_iteration == int(np.argmin(history)) + 1 < len(history)
    np.testing.assert_array_equal(model.predict(X[1000:]),
                                  model.predict(X[1000:], num_iteration=model.best_iteration))


def test_a_validation_set_added_after_some_rounds_starts_from_their_mean():
    X, Y = problem(3)
    train = gbmo.Dataset(X[:800], Y[:800])
    booster = gbmo.train(FOREST, train, 4, keep_training_booster=True)
    booster.add_valid(train.create_valid(X[800:], Y[800:]), "late")
    booster.update()
    booster.update()
    (_, _, value, _), = booster.eval_valid()
    P = booster.predict(X[800:])
    assert value == pytest.approx(np.sqrt(((P - Y[800:]) ** 2).mean(axis=0)).mean(),
                                  rel=1e-10)


def test_a_forest_of_deep_trees_averages_away_their_variance_as_scikit_learn_s_does():
    ensemble = pytest.importorskip("sklearn.ensemble")
    X, Y = problem(4, n=3000, d=3)
    Y = Y + 0.4 * np.random.default_rng(5).normal(size=Y.shape)
    params = {**FOREST, "subsample": 0.632, "colsample_bynode": 0.5, "max_leaves": 255,
              "lambda_l2": 0.0}
    model = gbmo.train(params, gbmo.Dataset(X[:2000], Y[:2000]), 60)

    def rmse(P):
        return np.sqrt(((P - Y[2000:]) ** 2).mean())

    ours, one_tree = rmse(model.predict(X[2000:])), rmse(model.predict(X[2000:], num_iteration=1))
    theirs = rmse(ensemble.RandomForestRegressor(60, max_features=0.5, min_samples_leaf=5,
                                                 random_state=0).fit(X[:2000], Y[:2000])
                  .predict(X[2000:]))
    assert ours < 0.85 * one_tree
    assert ours < 1.03 * theirs


def test_softmax_forest_averages_the_raw_scores_and_saves_as_one():
    rng = np.random.default_rng(6)
    X = rng.normal(size=(900, 4))
    y = (X[:, 0] > 0).astype(int) + (X[:, 1] > 0.5).astype(int)
    model = gbmo.train({**FOREST, "objective": "softmax"}, gbmo.Dataset(X, y), 8)
    raw = model.init_score + tree_values(model, X, 0, 8).mean(axis=0)
    np.testing.assert_allclose(model.predict(X, raw_score=True), raw, rtol=1e-12, atol=1e-12)
    P = model.predict(X)
    np.testing.assert_allclose(P.sum(axis=1), 1.0)
    assert np.mean(P.argmax(axis=1) == y) > 0.85
    loaded = gbmo.Booster(model_str=model.model_to_string())
    np.testing.assert_array_equal(loaded.predict(X), P)


def test_the_estimators_take_lightgbm_s_names_for_a_forest():
    pytest.importorskip("sklearn")
    X, Y = problem(7, d=1)
    for name in ("rf", "random_forest"):
        estimator = gbmo.GBMORegressor(boosting_type=name, subsample=0.6, n_estimators=5,
                                       random_state=0).fit(X, Y[:, 0])
        assert estimator.booster_.params["boosting"] == "rf"
        raw = estimator.booster_.init_score + tree_values(estimator.booster_, X, 0, 5).mean(0)
        np.testing.assert_allclose(estimator.predict(X), raw[:, 0], rtol=1e-12)


def test_sparse_leaves_rank_the_mean_s_scores():
    X, Y = problem(8, d=3)
    model = gbmo.train({**FOREST, "split": "sparse", "top_k": 2}, gbmo.Dataset(X, Y), 5)
    labels, scores = model.predict_topk(X, 2, raw_score=True)
    raw = model.predict(X, raw_score=True)
    np.testing.assert_allclose(scores, np.take_along_axis(raw, labels, axis=1), rtol=1e-12)
    np.testing.assert_array_equal(labels, np.argsort(-raw, axis=1, kind="stable")[:, :2])


@pytest.mark.parametrize("params, message", [
    ({"subsample": 1.0, "colsample_bynode": 1.0},
     "boosting='rf' grows every tree from the same gradients.*give subsample < 1"),
    ({"subsample": 0.5, "subsample_freq": 0, "colsample_bynode": 1.0}, "subsample_freq=0"),
    ({"subsample": 1.0, "data_sample_strategy": "goss"}, "GOSS is not taken"),
])
def test_a_forest_without_its_own_samples_is_refused(params, message):
    X, Y = problem(9, n=100)
    with pytest.raises(ValueError, match=message):
        gbmo.train({**FOREST, **params}, gbmo.Dataset(X, Y), 1)


def test_a_forest_neither_continues_nor_is_continued_nor_refit_nor_rolled_back():
    X, Y = problem(10, n=300)
    forest = gbmo.train(FOREST, gbmo.Dataset(X, Y), 2, keep_training_booster=True)
    boosted = gbmo.train({"verbosity": 0}, gbmo.Dataset(X, Y), 2)
    for params, init_model in ((FOREST, forest), ({"verbosity": 0}, forest), (FOREST, boosted)):
        with pytest.raises(ValueError, match="boosting='rf' neither continues a model nor"):
            gbmo.train(params, gbmo.Dataset(X, Y), 1, init_model=init_model)
    with pytest.raises(ValueError, match="cannot take back a DART or random forest round"):
        forest.rollback_one_iter()
    with pytest.raises(ValueError, match="nor a random forest's"):
        forest.refit(X, Y)
    sparse = pytest.importorskip("scipy.sparse")
    labels = sparse.csr_matrix((np.random.default_rng(0).random((300, 20)) < 0.1).astype(float))
    for params in ({**FOREST, "split": "sparse", "top_k": 2},
                   {"boosting_type": "random_forest"}):  # said first, before sampling's needs
        with pytest.raises(ValueError, match="a sparse Y does not take boosting='rf' yet"):
            gbmo.train(params, gbmo.Dataset(X, labels), 1)


def test_the_estimators_forest_defaults_to_no_penalty_and_a_reset_needs_a_value():
    from gbmo.sklearn import GBMORegressor

    X, Y = problem(11, n=300)
    forest = GBMORegressor(boosting="rf", subsample=0.6, n_estimators=3).fit(X, Y)
    boosted = GBMORegressor(n_estimators=3).fit(X, Y)
    assert forest.booster_.params["lambda_l2"] == 0.0
    assert boosted.booster_.params["lambda_l2"] == 1.0
    # CatBoost's L2 score needs a penalty: its forest keeps the boosted trees' 1
    scored = gbmo.train({**FOREST, "score_function": "L2"}, gbmo.Dataset(X, Y), 2)
    assert scored.params["lambda_l2"] == 1.0
    with pytest.raises(ValueError, match="'lambda_l2' cannot be reset to None; give a value"):
        gbmo.train(FOREST, gbmo.Dataset(X, Y), 2,
                   callbacks=[gbmo.reset_parameter(lambda_l2=[0.5, None])])
