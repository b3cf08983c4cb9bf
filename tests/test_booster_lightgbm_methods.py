"""LightGBM's Booster methods that look into or edit a model: leaf outputs,
raw-score bounds, split value histograms, trees a round, model_from_string."""
import numpy as np
import pytest

import gbmo

RNG = np.random.default_rng(23)
X = RNG.normal(size=(300, 4))
Y = np.c_[X[:, 0], X[:, 1] - X[:, 2], X[:, 3]]
PARAMS = {"verbosity": 0, "max_leaves": 6}


@pytest.fixture(scope="module", params=[{}, {"split": "sparse", "top_k": 1},
                                        {"tree_mode": "single_output"}],
                ids=["dense", "sparse_leaves", "single_output"])
def booster(request):
    return gbmo.train({**PARAMS, **request.param}, gbmo.Dataset(X, Y), 5)


def test_leaf_outputs_add_up_to_the_predictions(booster):
    leaves = booster.predict_leaf(X[:30])
    by_hand = booster.init_score + sum(
        np.array([booster.get_leaf_output(t, leaf) for leaf in leaves[:, t]])
        for t in range(booster.num_trees))
    np.testing.assert_allclose(by_hand, booster.predict(X[:30], raw_score=True), atol=1e-12)


def test_the_bounds_hold_every_prediction_and_are_reached_by_leaf_choices(booster):
    """Each output's bound is its start score plus each tree's extreme leaf,
    so random rows stay inside it, and it is the sum a numpy reference finds."""
    raw = booster.predict(RNG.normal(scale=3, size=(2000, 4)), raw_score=True)
    low, high = booster.lower_bound(), booster.upper_bound()
    assert np.all(raw >= low - 1e-12) and np.all(raw <= high + 1e-12)
    dense = [np.array([booster.get_leaf_output(t, leaf) for leaf in range(tree.n_leaves)])
             for t, tree in enumerate(booster.trees)]
    np.testing.assert_allclose(low, booster.init_score + sum(v.min(axis=0) for v in dense))
    np.testing.assert_allclose(high, booster.init_score + sum(v.max(axis=0) for v in dense))


def test_trees_a_round():
    single = gbmo.train({**PARAMS, "tree_mode": "single_output"}, gbmo.Dataset(X, Y), 2)
    multi = gbmo.train(PARAMS, gbmo.Dataset(X, Y), 2)
    assert (single.num_model_per_iteration(), multi.num_model_per_iteration()) == (3, 1)


def test_setting_a_leaf_changes_the_rows_that_reach_it_by_the_difference():
    model = gbmo.train(PARAMS, gbmo.Dataset(X, Y), 3)
    before = model.predict(X, raw_score=True)
    leaf_of_row = model.predict_leaf(X)[:, 1]
    old = model.get_leaf_output(1, 2)
    assert model.set_leaf_output(1, 2, old + [1.0, -2.0, 0.5]) is model
    change = model.predict(X, raw_score=True) - before
    reached = leaf_of_row == 2
    np.testing.assert_allclose(change[reached], [[1.0, -2.0, 0.5]] * reached.sum(), atol=1e-12)
    np.testing.assert_array_equal(change[leaf_of_row != 2], 0.0)
    loaded = gbmo.Booster(model_str=model.model_to_string())
    np.testing.assert_array_equal(loaded.get_leaf_output(1, 2), old + [1.0, -2.0, 0.5])


def test_a_one_output_model_takes_and_gives_floats():
    model = gbmo.train(PARAMS, gbmo.Dataset(X, Y[:, 0]), 2)
    assert isinstance(model.get_leaf_output(0, 0), float)
    model.set_leaf_output(0, 0, 0.25)
    assert model.get_leaf_output(0, 0) == 0.25
    assert isinstance(model.lower_bound(), float) and model.lower_bound() < model.upper_bound()


def test_a_leaf_holding_some_outputs_takes_only_those():
    model = gbmo.train({**PARAMS, "split": "sparse", "top_k": 1}, gbmo.Dataset(X, Y), 2)
    held = int(model.trees[0].leaf_outputs[0][0])
    value = np.zeros(3)
    value[held] = 7.0
    model.set_leaf_output(0, 0, value)
    np.testing.assert_array_equal(model.get_leaf_output(0, 0), value)
    value[(held + 1) % 3] = 1.0
    with pytest.raises(ValueError, match=f"holds outputs \\[{held}\\] only"):
        model.set_leaf_output(0, 0, value)


@pytest.mark.parametrize("call, message", [
    (lambda m: m.get_leaf_output(5, 0), r"tree_id must be an integer in \[0, 1\], got 5"),
    (lambda m: m.get_leaf_output(0, -1), "leaf_id must be an integer in"),
    (lambda m: m.get_leaf_output(0, 1.0), "leaf_id must be an integer in"),
    (lambda m: m.set_leaf_output(0, 0, [1.0, 2.0]), "value must be 3 finite number"),
    (lambda m: m.set_leaf_output(0, 0, [1.0, np.nan, 2.0]), "value must be 3 finite number"),
    (lambda m: m.get_split_value_histogram(4), r"index in \[0, 3\], got 4"),
    (lambda m: m.get_split_value_histogram("nope"), "feature 'nope' is not one of"),
])
def test_bad_arguments_are_refused_by_name(call, message):
    model = gbmo.train(PARAMS, gbmo.Dataset(X, Y), 2)
    with pytest.raises(ValueError, match=message):
        call(model)


def test_split_value_histogram_counts_the_thresholds_of_the_feature():
    model = gbmo.train(PARAMS, gbmo.Dataset(X, Y), 6)
    thresholds = np.concatenate([t.node_threshold[(t.node_left >= 0) & (t.node_feature == 0)]
                                 for t in model.trees])
    counts, edges = model.get_split_value_histogram(0)
    assert counts.sum() == len(thresholds) and len(counts) == len(np.unique(thresholds))
    np.testing.assert_array_equal(counts, np.histogram(thresholds, bins=len(counts))[0])
    counts, edges = model.get_split_value_histogram("f0", bins=3)
    assert len(counts) == 3 and counts.sum() == len(thresholds)
    table = model.get_split_value_histogram(0, bins=3, xgboost_style=True)
    assert list(table.columns) == ["SplitValue", "Count"]
    np.testing.assert_array_equal(table["Count"], counts[counts > 0])
    np.testing.assert_array_equal(table["SplitValue"], edges[1:][counts > 0])


def test_split_value_histogram_refuses_a_categorical_feature():
    Xc = X.copy()
    Xc[:, 1] = RNG.integers(0, 5, len(X))
    model = gbmo.train({**PARAMS, "categorical_feature": [1]}, gbmo.Dataset(Xc, Y), 2)
    with pytest.raises(ValueError, match="feature 1 is categorical"):
        model.get_split_value_histogram(1)


def test_model_from_string_replaces_the_model_and_keeps_it_on_a_bad_text():
    first = gbmo.train(PARAMS, gbmo.Dataset(X, Y), 2)
    second = gbmo.train({**PARAMS, "max_leaves": 3}, gbmo.Dataset(X, Y[:, :2]), 4)
    assert first.model_from_string(second.model_to_string()) is first
    np.testing.assert_array_equal(first.predict(X), second.predict(X))
    before = first.predict(X)
    with pytest.raises(gbmo.ModelFormatError):
        first.model_from_string("{not a model")
    np.testing.assert_array_equal(first.predict(X), before)


def test_editing_a_continued_model_leaves_the_model_it_continued_alone():
    first = gbmo.train(PARAMS, gbmo.Dataset(X, Y), 2)
    before = first.predict(X)
    continued = gbmo.train(PARAMS, gbmo.Dataset(X, Y), 2, init_model=first)
    continued.set_leaf_output(0, 0, [100.0, 100.0, 100.0])
    assert first.get_leaf_output(0, 0)[0] != 100.0
    np.testing.assert_array_equal(first.predict(X), before)
    np.testing.assert_array_equal(
        gbmo.Booster(model_str=first.model_to_string()).predict(X), before)


def test_bounds_and_histogram_cover_the_trees_predict_uses():
    """After early stopping, predict stops at the best round (LightGBM's train
    returns those trees alone): the bounds hold its predictions, and the
    histogram counts those trees' splits."""
    history = {}
    model = gbmo.train({**PARAMS, "learning_rate": 1.0}, gbmo.Dataset(X[:200], Y[:200, 0]), 30,
                       valid_sets=[gbmo.Dataset(X[200:], Y[200:, 0])],
                       callbacks=[gbmo.early_stopping(3, verbose=False),
                                  gbmo.record_evaluation(history)])
    assert 0 < model.best_iteration < model.num_trees
    used = model.trees[:model.best_iteration]
    assert model.lower_bound() == pytest.approx(
        model.init_score[0] + sum(t.leaf_values.min() for t in used))
    assert model.upper_bound() == pytest.approx(
        model.init_score[0] + sum(t.leaf_values.max() for t in used))
    counts, _ = model.get_split_value_histogram(0)
    assert counts.sum() == sum(int(((t.node_left >= 0) & (t.node_feature == 0)).sum())
                               for t in used)


def test_model_from_string_refuses_what_is_no_text():
    model = gbmo.train(PARAMS, gbmo.Dataset(X, Y), 2)
    for bad in (None, 5, {"trees": []}):
        with pytest.raises(TypeError, match="model_str must be a model's text"):
            model.model_from_string(bad)
    assert model.num_trees == 2


@pytest.mark.parametrize("call", [
    lambda b: b.lower_bound(), lambda b: b.upper_bound(), lambda b: b.num_model_per_iteration(),
    lambda b: b.get_split_value_histogram(0), lambda b: b.get_leaf_output(0, 0),
    lambda b: b.set_leaf_output(0, 0, 1.0),
])
def test_a_booster_without_a_model_says_so(call):
    with pytest.raises(ValueError, match="this Booster holds no model"):
        call(gbmo.Booster())
