"""Bad input raises a clear error before any work is done."""
import numpy as np
import pytest

import gbmo

rng = np.random.default_rng(0)
X = rng.normal(size=(50, 3))
y = rng.normal(size=50)


def _train(params=None, X=X, y=y, rounds=2):
    return gbmo.train({"verbosity": 0, **(params or {})}, gbmo.Dataset(X, y), rounds)


@pytest.mark.parametrize("bad_X, error, message", [
    (np.zeros((0, 3)), ValueError, "empty"),
    (np.zeros((5, 0)), ValueError, "empty"),
    (np.zeros(5), ValueError, "2-D"),
    (np.array([["a", "b"], ["c", "d"]]), TypeError, "numeric"),
    (np.array([[1, 2], [3, 4]], dtype=object), TypeError, "numeric"),
    (np.zeros((1, 3)), ValueError, "at least 2 rows"),
])
def test_bad_features(bad_X, error, message):
    with pytest.raises(error, match=message):
        gbmo.Dataset(bad_X, np.zeros(len(bad_X)))


def test_non_numeric_dataframe_column_is_named():
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame({"a": [1.0, 2.0, 3.0], "city": ["x", "y", "z"]})
    with pytest.raises(TypeError, match="city"):
        gbmo.Dataset(frame, [1, 2, 3])


@pytest.mark.parametrize("bad_y, message", [
    (np.zeros(49), "49 rows but X has 50"),
    (np.zeros((50, 2, 2)), "1-D or 2-D"),
    (np.array(["a"] * 50), "numeric"),
])
def test_bad_target_shape_or_type(bad_y, message):
    with pytest.raises((ValueError, TypeError), match=message):
        gbmo.Dataset(X, bad_y)


@pytest.mark.parametrize("bad", [np.inf, -np.inf])
def test_infinite_target(bad):
    y_bad = y.copy()
    y_bad[3] = bad
    with pytest.raises(ValueError, match="infinite values.*infinities are not allowed"):
        _train(y=y_bad)


def test_nan_target_is_refused_by_a_loss_that_does_not_mask():
    y_bad = np.arange(50) % 3
    with pytest.raises(ValueError, match="integer class indices"):
        _train(y=np.where(np.arange(50) == 3, np.nan, y_bad), params={"objective": "softmax"})


def test_output_without_any_observed_target():
    Y = np.c_[y, np.full(50, np.nan)]
    with pytest.raises(ValueError, match=r"output\(s\) \[1\] have no observed target"):
        _train(y=Y)


def test_bad_weights():
    with pytest.raises(ValueError, match="weight must have shape"):
        gbmo.Dataset(X, y, weight=np.ones(3))
    with pytest.raises(ValueError, match="finite and >= 0"):
        gbmo.Dataset(X, y, weight=-np.ones(50))


@pytest.mark.parametrize("params, message", [
    ({"max_leafs": 3}, "unknown parameter 'max_leafs'.*max_leaves"),
    ({"learning_rate": 0}, r"'learning_rate' = 0.0 is out of range; allowed: \(0.0"),
    ({"max_leaves": 1}, r"'max_leaves' = 1 is out of range; allowed: \[2"),
    ({"max_bins": 256}, r"'max_bins' = 256 is out of range; allowed: \[2, 255\]"),
    ({"lambda_l2": -1}, "'lambda_l2' = -1.0 is out of range"),
    ({"max_leaves": 2.5}, "'max_leaves' must be an integer"),
    ({"objective": "hinge"}, "unknown objective .hinge.; known objectives: .*mse, multitask.*sigmoid, "
                             r"softmax \(also regression, .*multiclass.*binary"),
    ({"metric": "auc"}, "unknown metric 'auc'; known metrics"),
])
def test_bad_parameters_name_the_parameter_value_and_range(params, message):
    with pytest.raises(ValueError, match=message):
        _train(params)


def test_wrong_parameter_type():
    with pytest.raises(TypeError, match="'max_leaves' must be a number"):
        _train({"max_leaves": "many"})


def test_alias_given_twice():
    with pytest.raises(ValueError, match="given twice"):
        _train({"num_leaves": 5, "max_leaves": 6})


def test_softmax_rejects_non_integer_labels():
    with pytest.raises(ValueError, match="integer class indices"):
        _train({"objective": "softmax"}, y=y)


def test_sigmoid_rejects_labels_outside_unit_interval():
    with pytest.raises(ValueError, match=r"targets in \[0, 1\]"):
        _train({"objective": "sigmoid"}, y=np.full(50, 2.0))


def test_validation_set_with_other_feature_count():
    train = gbmo.Dataset(X, y)
    with pytest.raises(ValueError, match="2 features, training X has 3"):
        train.create_valid(X[:, :2], y)


def test_num_boost_round_must_be_a_count():
    with pytest.raises(ValueError, match="num_boost_round"):
        _train(rounds=-1)


def test_train_needs_a_dataset():
    with pytest.raises(TypeError, match="gbmo.Dataset"):
        gbmo.train({}, X)


@pytest.mark.parametrize("objective, y_train, y_valid, message", [
    ("mse", np.zeros((60, 3)), np.zeros((20, 2)), "gives 2 outputs where the training target gives 3"),
    ("sigmoid", np.zeros((60, 3)), np.zeros((20, 4)), "gives 4 outputs where the training target gives 3"),
    ("softmax", np.arange(60) % 3, np.full(20, 4), r"class indices 0 \.\. 2"),
])
def test_a_validation_target_the_model_cannot_score_is_refused_before_training(
        objective, y_train, y_valid, message, monkeypatch):
    X = np.random.default_rng(0).normal(size=(60, 2))
    train_set = gbmo.Dataset(X, y_train)
    grown = []
    monkeypatch.setattr(gbmo.engine.TreeGrower, "grow", lambda self: grown.append(1))
    with pytest.raises(ValueError, match=f"validation set 'valid_0': its target {message}"
                       if objective != "softmax" else message):
        gbmo.train({"objective": objective, "verbosity": 0}, train_set, 3,
                   valid_sets=[train_set.create_valid(X[:20], y_valid)])
    assert not grown


def test_a_validation_set_with_fewer_classes_than_training_is_scored():
    X = np.random.default_rng(0).normal(size=(60, 2))
    train_set = gbmo.Dataset(X, np.arange(60) % 3)
    booster = gbmo.train({"objective": "softmax", "verbosity": 0}, train_set, 3,
                         valid_sets=[train_set.create_valid(X[:20], np.zeros(20, dtype=int))])
    assert len(booster.evals_result["valid_0"]["logloss"]) == 3
