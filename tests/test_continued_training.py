"""Continued training (train(init_model=...)) and per-row starting scores
(Dataset(init_score=...)), as in LightGBM."""
import numpy as np
import pytest
import scipy.sparse as sp

import gbmo
from gbmo.callback import early_stopping

rng = np.random.default_rng(0)
X = rng.normal(size=(400, 5))
X[rng.random(X.shape) < 0.05] = np.nan
SIGNAL = np.nan_to_num(X[:, 0]) + np.nan_to_num(X[:, 1] * X[:, 2])
TARGETS = {
    "mse": np.column_stack([SIGNAL, np.sin(np.nan_to_num(X[:, 3])) - SIGNAL]),
    "softmax": np.digitize(SIGNAL, [-0.5, 0.5]),
    "sigmoid": (SIGNAL > 0).astype(float),
}
BASE = {"verbosity": 0, "max_leaves": 8, "seed": 1}


def assert_same_trees(got, expected):
    assert len(got) == len(expected)
    for a, b in zip(got, expected):
        np.testing.assert_array_equal(a.node_feature, b.node_feature)
        np.testing.assert_array_equal(a.node_threshold, b.node_threshold)
        np.testing.assert_allclose(a.leaf_values, b.leaf_values, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("objective", ["mse", "softmax", "sigmoid"])
@pytest.mark.parametrize("tree_mode", ["multi_output", "single_output"])
def test_continuing_grows_the_trees_of_one_longer_run(objective, tree_mode):
    params = dict(BASE, objective=objective, tree_mode=tree_mode)
    y = TARGETS[objective]
    whole = gbmo.train(params, gbmo.Dataset(X, y), 9)
    first = gbmo.train(params, gbmo.Dataset(X, y), 4)
    continued = gbmo.train(params, gbmo.Dataset(X, y), 5, init_model=first)
    assert_same_trees(continued.trees, whole.trees)
    assert continued.current_iteration() == 9
    np.testing.assert_allclose(continued.predict(X), whole.predict(X), rtol=1e-9, atol=1e-12)
    assert len(first.trees) == 4 * whole.trees_per_round  # the first model is left as it was
    if objective == "mse":
        np.testing.assert_allclose(continued.feature_importance("gain", per_output=True),
                                   whole.feature_importance("gain", per_output=True), rtol=1e-9)


def test_a_model_file_continues_like_the_booster(tmp_path):
    y = TARGETS["mse"]
    first = gbmo.train(BASE, gbmo.Dataset(X, y), 3)
    first.save_model(tmp_path / "first.json")
    from_file = gbmo.train(BASE, gbmo.Dataset(X, y), 2, init_model=str(tmp_path / "first.json"))
    from_booster = gbmo.train(BASE, gbmo.Dataset(X, y), 2, init_model=first)
    np.testing.assert_array_equal(from_file.predict(X), from_booster.predict(X))


def test_callbacks_count_the_rounds_of_the_model_continued():
    y = TARGETS["mse"]
    seen = []
    first = gbmo.train(BASE, gbmo.Dataset(X, y), 6)
    train_set = gbmo.Dataset(X, y)
    valid = train_set.create_valid(X[:100] + 3.0, y[:100])  # shifted: soon overfits
    continued = gbmo.train(BASE, train_set, 200, valid_sets=[valid], init_model=first,
                           callbacks=[lambda env: seen.append(env.iteration),
                                      early_stopping(3, verbose=False)])
    assert seen[:2] == [6, 7]
    history = continued.evals_result["valid_0"]["rmse"]
    assert len(history) == continued.current_iteration() - 6
    assert continued.best_iteration == 6 + int(np.argmin(history)) + 1


def test_row_offsets_train_like_a_target_with_the_offsets_taken_out():
    """Squared error's gradients raw - y are the same for (y, start offset)
    and (y - offset, start 0); the model predicts without the offset."""
    offset = np.column_stack([2 * X[:, 4], -np.ones(len(X))])
    offset[np.isnan(offset)] = 0.5
    y = TARGETS["mse"]
    with_offset = gbmo.train(BASE, gbmo.Dataset(X, y, init_score=offset), 6)
    taken_out = gbmo.train(BASE, gbmo.Dataset(X, y - offset, init_score=np.zeros_like(y)), 6)
    assert_same_trees(with_offset.trees, taken_out.trees)
    np.testing.assert_array_equal(with_offset.init_score, [0.0, 0.0])
    np.testing.assert_allclose(with_offset.predict(X), taken_out.predict(X), atol=1e-12)


@pytest.mark.parametrize("objective", ["softmax", "sigmoid"])
def test_a_models_raw_scores_as_init_score_grow_the_trees_that_continuing_it_adds(objective):
    params = dict(BASE, objective=objective)
    y = TARGETS[objective]
    first = gbmo.train(params, gbmo.Dataset(X, y), 3)
    raw = first.predict(X, raw_score=True)
    train_set = gbmo.Dataset(X, y, init_score=raw)
    valid = train_set.create_valid(X, y, init_score=raw)
    offset = gbmo.train(params, train_set, 4, valid_sets=[valid])
    continued = gbmo.train(params, gbmo.Dataset(X, y), 4, init_model=first,
                           valid_sets=[gbmo.Dataset(X, y)])
    assert_same_trees(offset.trees, continued.trees[3:])
    metric = next(iter(offset.evals_result["valid_0"]))
    np.testing.assert_allclose(offset.evals_result["valid_0"][metric],
                               continued.evals_result["valid_0"][metric], rtol=1e-9)


def test_cv_folds_take_their_rows_offsets():
    y = TARGETS["mse"]
    offset = np.column_stack([5 * np.nan_to_num(X[:, 4]), -5 * np.nan_to_num(X[:, 3])])
    with_offset = gbmo.cv(BASE, gbmo.Dataset(X, y + offset, init_score=offset), 3, nfold=3)
    without = gbmo.cv(BASE, gbmo.Dataset(X, y, init_score=np.zeros_like(y)), 3, nfold=3)
    np.testing.assert_allclose(with_offset["valid rmse-mean"], without["valid rmse-mean"],
                               rtol=1e-9)


# -- errors -------------------------------------------------------------------------
@pytest.mark.parametrize("change, message", [
    ({"objective": "softmax", "y": TARGETS["softmax"]}, "outputs: 2 in init_model, 3 here; "
                                                        "objective: 'mse' in init_model"),
    ({"X": X[:, :4]}, "features: 5 in init_model, 4 here"),
    ({"tree_mode": "single_output"}, "trees per round: 1 in init_model, 2 here"),
])
def test_an_init_model_that_does_not_fit_is_refused_by_name(change, message):
    first = gbmo.train(BASE, gbmo.Dataset(X, TARGETS["mse"]), 2)
    data = gbmo.Dataset(change.pop("X", X), change.pop("y", TARGETS["mse"]))
    with pytest.raises(ValueError, match="init_model cannot be continued.*" + message):
        gbmo.train(dict(BASE, **change), data, 2, init_model=first)


@pytest.mark.parametrize("init_score, message", [
    (np.zeros((399, 2)), r"init_score must have shape \(400,\) or \(400, n_outputs\)"),
    (np.full((400, 2), np.inf), "init_score must be finite"),
    (np.zeros((400, 2, 1)), r"init_score must have shape"),
    ([["a", "b"]] * 400, "init_score must be numbers"),
])
def test_bad_init_scores_are_refused_when_the_dataset_is_made(init_score, message):
    with pytest.raises(ValueError, match=message):
        gbmo.Dataset(X, TARGETS["mse"], init_score=init_score)


def test_init_score_columns_must_match_the_outputs():
    with pytest.raises(ValueError, match=r"the training set's init_score gives 1 value a row; "
                                         r"the model has 2 outputs, so allowed: \(400, 2\)"):
        gbmo.train(BASE, gbmo.Dataset(X, TARGETS["mse"], init_score=np.zeros(400)), 1)


def test_an_init_model_of_other_feature_names_is_refused():
    import pandas as pd

    frame = pd.DataFrame(X, columns=list("abcde"))
    first = gbmo.train(BASE, gbmo.Dataset(frame, TARGETS["mse"]), 2)
    reordered = frame[list("bacde")]
    with pytest.raises(ValueError, match=r"init_model was trained on the features \['a', 'b', "
                                         r"'c', 'd', 'e'\], this data has \['b', 'a'"):
        gbmo.train(BASE, gbmo.Dataset(reordered, TARGETS["mse"]), 2, init_model=first)


def test_a_validation_set_without_the_offsets_of_the_training_set_is_refused():
    train_set = gbmo.Dataset(X, TARGETS["mse"], init_score=np.ones((400, 2)))
    with pytest.raises(ValueError, match="validation set 'valid_0' has no init_score"):
        gbmo.train(BASE, train_set, 1, valid_sets=[train_set.create_valid(X, TARGETS["mse"])])


def test_init_model_of_another_type_and_a_sparse_y_are_refused():
    with pytest.raises(TypeError, match="init_model must be a gbmo.Booster or a model file's path"):
        gbmo.train(BASE, gbmo.Dataset(X, TARGETS["mse"]), 1, init_model=3)
    labels = sp.csr_matrix((rng.random((400, 20)) < 0.2).astype(float))
    sparse_params = {"verbosity": 0, "split": "sparse", "top_k": 2}
    first = gbmo.train(sparse_params, gbmo.Dataset(X, labels), 1)
    with pytest.raises(ValueError, match="a sparse Y does not take init_model"):
        gbmo.train(sparse_params, gbmo.Dataset(X, labels), 1, init_model=first)
    with pytest.raises(ValueError, match="a sparse Y does not take init_score"):
        gbmo.train(sparse_params, gbmo.Dataset(X, labels, init_score=np.zeros((400, 20))), 1)


@pytest.mark.parametrize("objective, dense_objective", [("squared_hinge", "mse"),
                                                        ("sigmoid", "sigmoid")])
def test_a_sparse_y_model_does_not_continue_on_a_dense_y(objective, dense_objective, tmp_path):
    """Its registered loss (mse for the squared hinge, the unrestricted
    sigmoid) predicts for it but did not grow its trees: continuing with it
    mixed two losses, silently."""
    labels = (rng.random((400, 6)) < 0.3).astype(float)
    first = gbmo.train({"verbosity": 0, "objective": objective, "top_k": 2},
                       gbmo.Dataset(X, sp.csr_matrix(labels)), 1)
    first.save_model(tmp_path / "model.json")
    for init_model in (first, tmp_path / "model.json"):
        with pytest.raises(ValueError, match=f"init_model cannot be continued.*Y: sparse in "
                                             f"init_model \\(objective '{objective}'.*dense here"):
            gbmo.train({**BASE, "objective": dense_objective}, gbmo.Dataset(X, labels), 1,
                       init_model=init_model)


# -- estimators -----------------------------------------------------------------------
def test_estimators_continue_a_fit_and_take_row_offsets():
    from gbmo.sklearn import GBMOClassifier, GBMORegressor

    y = TARGETS["mse"]
    whole = GBMORegressor(n_estimators=7, max_leaves=8, random_state=1).fit(X, y)
    first = GBMORegressor(n_estimators=3, max_leaves=8, random_state=1).fit(X, y)
    for init_model in (first, first.booster_):
        continued = GBMORegressor(n_estimators=4, max_leaves=8, random_state=1).fit(
            X, y, init_model=init_model)
        assert continued.n_iter_ == 7
        np.testing.assert_allclose(continued.predict(X), whole.predict(X), atol=1e-12)
    offset = np.column_stack([np.nan_to_num(X[:, 4]), np.zeros(len(X))])
    with_offset = GBMORegressor(n_estimators=3, max_leaves=8).fit(X, y, init_score=offset)
    taken_out = GBMORegressor(n_estimators=3, max_leaves=8).fit(
        X, y - offset, init_score=np.zeros_like(y))
    np.testing.assert_allclose(with_offset.predict(X), taken_out.predict(X), atol=1e-12)
    classes = TARGETS["softmax"]
    raw = np.zeros((len(X), 3))
    classifier = GBMOClassifier(n_estimators=2, max_leaves=8).fit(
        X, classes, init_score=raw, eval_set=[(X, classes)], eval_init_score=[raw])
    assert classifier.booster_.num_trees == 2


def test_estimator_offsets_follow_their_rows_into_the_early_stopping_split():
    """With early_stopping_rounds and no eval_set, a share of the rows is held
    out: each keeps its own offset, so (y, offset) and (y - offset, 0) still
    grow the same model."""
    from gbmo.sklearn import GBMORegressor

    y = TARGETS["mse"]
    offset = np.column_stack([3 * np.nan_to_num(X[:, 4]), np.arange(len(X)) / 100.0])
    params = dict(n_estimators=30, max_leaves=8, early_stopping_rounds=3, random_state=2)
    with_offset = GBMORegressor(**params).fit(X, y, init_score=offset)
    taken_out = GBMORegressor(**params).fit(X, y - offset, init_score=np.zeros_like(y))
    assert with_offset.best_iteration_ == taken_out.best_iteration_
    np.testing.assert_allclose(with_offset.predict(X), taken_out.predict(X), atol=1e-12)


def test_estimator_eval_init_score_must_pair_with_eval_set():
    from gbmo.sklearn import GBMORegressor

    y = TARGETS["mse"]
    offsets = np.zeros_like(y)
    one_pair = GBMORegressor(n_estimators=2).fit(X, y, init_score=offsets, eval_set=[(X, y)],
                                                 eval_init_score=offsets)  # an array: one pair
    assert one_pair.booster_.num_trees == 2
    with pytest.raises(ValueError, match="init_score is given, so every eval_set pair needs"):
        GBMORegressor(n_estimators=2).fit(X, y, init_score=offsets, eval_set=[(X, y)])
    with pytest.raises(ValueError, match="eval_init_score has 2 entries for 1 eval_set pairs"):
        GBMORegressor(n_estimators=2).fit(X, y, eval_set=[(X, y)],
                                          eval_init_score=[np.zeros_like(y)] * 2)
    with pytest.raises(ValueError, match="eval_init_score is given without an eval_set"):
        GBMORegressor(n_estimators=2).fit(X, y, eval_init_score=[np.zeros_like(y)])


def test_a_classifier_continues_only_a_fit_of_the_same_classes():
    from gbmo.sklearn import GBMOClassifier

    labels = np.array(["a", "b", "c"])[TARGETS["softmax"]]
    first = GBMOClassifier(n_estimators=2).fit(X, labels)
    shifted = np.array(["b", "c", "d"])[TARGETS["softmax"]]
    with pytest.raises(ValueError, match=r"init_model was fitted on the classes \['a', 'b', "
                                         r"'c'\], y has \['b', 'c', 'd'\]"):
        GBMOClassifier(n_estimators=2).fit(X, shifted, init_model=first)
    continued = GBMOClassifier(n_estimators=2).fit(X, labels, init_model=first)
    assert continued.n_iter_ == 4
