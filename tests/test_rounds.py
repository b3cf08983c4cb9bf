"""Which rounds a prediction or a saved model uses: LightGBM's num_iteration
and start_iteration, in predict, predict_leaf, pred_contrib and save_model."""
import numpy as np
import pytest

import gbmo


def _regression(tree_mode="multi_output", rounds=9, early_stopping=False):
    rng = np.random.default_rng(3)
    X = rng.normal(size=(400, 4))
    Y = np.column_stack([X[:, 0] + 0.3 * rng.normal(size=400), X[:, 1] ** 2])
    params = {"verbosity": 0, "max_leaves": 6, "tree_mode": tree_mode, "learning_rate": 0.3}
    if not early_stopping:
        return gbmo.train(params, gbmo.Dataset(X, Y), rounds), X
    valid = gbmo.Dataset(X[:100] + 0.5 * rng.normal(size=(100, 4)), Y[:100])
    booster = gbmo.train(params, gbmo.Dataset(X[100:], Y[100:]), 200, valid_sets=[valid],
                         callbacks=[gbmo.early_stopping(3, verbose=False)])
    assert 0 < booster.best_iteration < booster.current_iteration()
    return booster, X


def _raw_after(booster, X, rounds):
    """Raw scores after the first `rounds` rounds (0: the start score alone)."""
    if rounds == 0:
        return np.tile(booster.init_score, (len(X), 1))
    return booster.predict(X, raw_score=True, num_iteration=rounds)


@pytest.mark.parametrize("tree_mode", ["multi_output", "single_output"])
def test_a_range_of_rounds_adds_only_its_trees_to_the_start_score(tree_mode):
    booster, X = _regression(tree_mode)
    for start, rounds in [(0, 4), (2, 3), (5, 4), (3, None), (9, None)]:
        stop = 9 if rounds is None else start + rounds
        expected = (_raw_after(booster, X, stop) - _raw_after(booster, X, start)
                    + booster.init_score)
        np.testing.assert_allclose(
            booster.predict(X, raw_score=True, start_iteration=start, num_iteration=rounds),
            expected, rtol=1e-12, atol=1e-12)


def test_leaves_and_contributions_cover_the_same_rounds_as_the_prediction():
    booster, X = _regression("single_output")  # two trees a round
    leaves = booster.predict_leaf(X, start_iteration=2, num_iteration=3)
    np.testing.assert_array_equal(leaves, booster.predict_leaf(X)[:, 4:10])
    np.testing.assert_array_equal(
        booster.predict(X, pred_leaf=True, start_iteration=2, num_iteration=3), leaves)
    contributions = booster.predict(X, pred_contrib=True, start_iteration=2, num_iteration=3)
    np.testing.assert_allclose(
        contributions.sum(axis=1),
        booster.predict(X, raw_score=True, start_iteration=2, num_iteration=3), atol=1e-10)


def test_the_best_iteration_is_the_default_only_from_the_first_round():
    booster, X = _regression(early_stopping=True)
    best, total = booster.best_iteration, booster.current_iteration()
    np.testing.assert_array_equal(booster.predict(X),
                                  booster.predict(X, num_iteration=best))
    # from a later round, every remaining round, as LightGBM
    assert booster.predict_leaf(X, start_iteration=1).shape[1] == total - 1


@pytest.mark.parametrize("start, message", [(10, "beyond the model's 9 rounds"),
                                            (1.5, "must be an integer"),
                                            (True, "must be an integer")])
def test_a_start_outside_the_model_is_refused(start, message, tmp_path):
    booster, X = _regression()
    for call in (lambda: booster.predict(X, start_iteration=start),
                 lambda: booster.predict_leaf(X, start_iteration=start),
                 lambda: booster.save_model(tmp_path / "m.json", start_iteration=start)):
        with pytest.raises(ValueError, match=message):
            call()


def test_a_negative_start_is_the_first_round():
    booster, X = _regression()
    np.testing.assert_array_equal(booster.predict(X, start_iteration=-3), booster.predict(X))


def test_a_saved_range_of_rounds_predicts_as_that_range(tmp_path):
    booster, X = _regression("single_output")
    path = tmp_path / "part.json"
    booster.save_model(path, num_iteration=3, start_iteration=2)
    part = gbmo.Booster(model_file=path)
    assert part.current_iteration() == 3 and part.num_trees == 6
    np.testing.assert_array_equal(
        part.predict(X), booster.predict(X, start_iteration=2, num_iteration=3))
    whole = gbmo.Booster(model_str=booster.model_to_string())
    np.testing.assert_array_equal(whole.predict(X), booster.predict(X))
    assert whole.num_trees == booster.num_trees


def test_a_saved_part_predicts_with_all_its_rounds_as_lightgbm_s_file():
    """The whole model keeps its best round; a part of k rounds is the model
    asked for, and predicted with its best round when k was above it (a
    production audit: saved with 13 rounds, it predicted with 8)."""
    booster, X = _regression(early_stopping=True)
    best = booster.best_iteration
    assert booster.dump_model()["best_iteration"] == best
    assert len(booster.dump_model()["trees"]) == booster.num_trees  # all, unlike LightGBM
    for part in ({"num_iteration": best + 1}, {"num_iteration": best},
                 {"num_iteration": best - 1}, {"start_iteration": 1}):
        assert booster.dump_model(**part)["best_iteration"] is None
    part = gbmo.Booster(model_str=booster.model_to_string(num_iteration=best + 1))
    np.testing.assert_array_equal(part.predict(X), booster.predict(X, num_iteration=best + 1))


def test_a_saved_part_leaves_out_the_importance_of_every_tree():
    booster, _ = _regression()
    assert booster.dump_model()["output_importance"] is not None
    part = gbmo.Booster(model_str=booster.model_to_string(num_iteration=4))
    with pytest.raises(ValueError, match="per-output importance is not available"):
        part.feature_importance("gain", per_output=True)
    np.testing.assert_array_equal(part.feature_importance("gain"),
                                  booster.feature_importance("gain", iteration=4))
    # a slice, and a model trained on from one, say so (an audit found the
    # refusal listing every cause but these)
    sliced = booster[1:3]
    X = _regression()[1]
    for model in (sliced, gbmo.train({"verbosity": -1}, gbmo.Dataset(X, booster.predict(X)), 1,
                                     init_model=sliced)):
        with pytest.raises(ValueError, match=r"is a part of its rounds \(booster\[a:b\], .* or "
                                             r"was trained on from one"):
            model.feature_importance("gain", per_output=True)


def test_the_estimators_take_start_iteration():
    from gbmo.sklearn import GBMOClassifier, GBMORegressor

    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 3))
    regressor = GBMORegressor(n_estimators=6, verbosity=0).fit(X, X[:, 0])
    np.testing.assert_array_equal(
        regressor.predict(X, start_iteration=2),
        regressor.booster_.predict(X, start_iteration=2))
    classifier = GBMOClassifier(n_estimators=6, verbosity=0).fit(X, X[:, 0] > 0)
    proba = classifier.predict_proba(X, start_iteration=4)
    np.testing.assert_array_equal(proba, classifier.predict_proba(X, start_iteration=4,
                                                                  num_iteration=2))
    assert not np.array_equal(proba, classifier.predict_proba(X))
    np.testing.assert_array_equal(classifier.predict(X, start_iteration=4),
                                  classifier.classes_[proba.argmax(axis=1)])


def test_predict_and_feature_importance_take_lightgbm_s_positional_order():
    """predict(X, start_iteration, num_iteration, raw_score, pred_leaf,
    pred_contrib) and feature_importance(importance_type, iteration): a
    LightGBM call predict(X, 5) returned raw scores of every round."""
    rng = np.random.default_rng(4)
    X = rng.normal(size=(300, 3))
    y = (X[:, 0] > 0).astype(float)
    booster = gbmo.train({"objective": "binary", "verbosity": 0}, gbmo.Dataset(X, y), 8)
    np.testing.assert_array_equal(booster.predict(X, 5), booster.predict(X, start_iteration=5))
    assert np.all((booster.predict(X, 5) > 0) & (booster.predict(X, 5) < 1))
    np.testing.assert_array_equal(
        booster.predict(X, 2, 3, True),
        booster.predict(X, start_iteration=2, num_iteration=3, raw_score=True))
    np.testing.assert_array_equal(booster.predict(X, 0, None, False, True),
                                  booster.predict_leaf(X))
    gain = booster.feature_importance("gain", 3)
    np.testing.assert_array_equal(gain, booster.feature_importance("gain", iteration=3))
    assert gain.shape == (3,) and not np.array_equal(gain, booster.feature_importance("gain"))
