"""scikit-learn estimators: GBMORegressor, GBMOClassifier."""
import functools
import inspect
import json
import pickle
import subprocess
import tempfile
import sys

import numpy as np
import pytest

sklearn = pytest.importorskip("sklearn", minversion="1.6")

import joblib  # noqa: E402  (a scikit-learn dependency)
from sklearn.base import clone  # noqa: E402
from sklearn.model_selection import GridSearchCV  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402
from sklearn.utils.estimator_checks import parametrize_with_checks  # noqa: E402

import gbmo  # noqa: E402
from gbmo.losses import CustomObjective, SoftmaxCrossEntropy  # noqa: E402
from gbmo.sklearn import GBMOClassifier, GBMORegressor  # noqa: E402

# -- scikit-learn's estimator checks ----------------------------------------

_WEIGHTS_ARE_NOT_REPETITIONS = (
    "sample_weight is not equivalent to removing/repeating samples: a row of weight 0 "
    "still takes part in the bin edges (so in where thresholds fall) and counts towards "
    "min_samples_leaf, which counts rows; scikit-learn's HistGradientBoosting* estimators "
    "list this check for the same reason"
)


_WEIGHTED_GRADIENTS_ARE_FLOAT32 = (
    "a weighted row's gradient times its weight is rounded to float32 where repetitions "
    "add the unrounded gradient again, so the one leaf's raw scores (decision_function) "
    "differ from the repeated rows' in the 8th digit, beyond the check's rtol of 1e-7"
)


def _expected_failed_checks(estimator):
    if estimator.min_samples_leaf >= 20:
        # With gbmo's default min_samples_leaf=20 the check's 15-row data set cannot
        # be split at all, so every fit is the weighted mean and the regressor passes.
        if not isinstance(estimator, GBMOClassifier):
            return {}
        return {"check_sample_weight_equivalence_on_dense_data": _WEIGHTED_GRADIENTS_ARE_FLOAT32,
                "check_sample_weight_equivalence_on_sparse_data": _WEIGHTED_GRADIENTS_ARE_FLOAT32}
    return {"check_sample_weight_equivalence_on_dense_data": _WEIGHTS_ARE_NOT_REPETITIONS,
            "check_sample_weight_equivalence_on_sparse_data": _WEIGHTS_ARE_NOT_REPETITIONS}


_CHECK_OPTIONS = {"expected_failed_checks": _expected_failed_checks}
if "xfail_strict" in inspect.signature(parametrize_with_checks).parameters:
    _CHECK_OPTIONS["xfail_strict"] = True  # the list above is exact, not a superset


def _parametrize_with_checks(estimators):
    """scikit-learn's parametrize_with_checks with its checks in a list: up to
    1.7 (the newest on Python 3.10) it hands pytest a generator, which pytest 9
    deprecates (PytestRemovedIn10Warning) and pytest 10 will refuse."""
    mark = parametrize_with_checks(estimators, **_CHECK_OPTIONS)
    names, checks = mark.args
    return pytest.mark.parametrize(names, list(checks), **mark.kwargs)


@_parametrize_with_checks(
    [
        # Small models that do learn on the checks' tiny data sets ...
        GBMORegressor(n_estimators=10, min_samples_leaf=1),
        GBMOClassifier(n_estimators=10, min_samples_leaf=1),
        # ... and the defaults, unchanged.
        GBMORegressor(),
        GBMOClassifier(),
    ]
)
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


# -- data -------------------------------------------------------------------

def _multi_output_regression(n=400, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-2, 2, size=(n, 5))
    Y = np.column_stack([
        X[:, 0] * X[:, 1],                 # an interaction: stumps cannot fit it
        np.sin(2 * X[:, 2]) + X[:, 3],
        np.where(X[:, 0] > 0, X[:, 4], -X[:, 4]),
    ])
    return X, Y + rng.normal(scale=0.05, size=Y.shape)


def _noisy_regression(n=600, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 5))
    return X, X[:, 0] + rng.normal(scale=2.0, size=n)  # mostly noise: overfits quickly


def _blobs(n=300, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    score = np.column_stack([X[:, 0], X[:, 1], -X[:, 0] - X[:, 1]])
    return X, score.argmax(axis=1)


SMALL = {"n_estimators": 30, "min_samples_leaf": 5, "learning_rate": 0.3, "random_state": 0}


def _trained_as_small(X, Y, **params):
    """gbmo.train's booster of SMALL's parameters (and params), to compare
    with an estimator's."""
    return gbmo.train({"min_samples_leaf": SMALL["min_samples_leaf"],
                       "learning_rate": SMALL["learning_rate"], "seed": SMALL["random_state"],
                       "verbosity": 0, **params},
                      gbmo.Dataset(X, Y), SMALL["n_estimators"])


# -- regressor --------------------------------------------------------------

def test_regressor_shapes_follow_the_target():
    X, Y = _multi_output_regression(200)
    multi = GBMORegressor(**SMALL).fit(X, Y)
    assert multi.predict(X).shape == (200, 3)
    assert multi.n_outputs_ == 3 and multi.booster_.n_outputs == 3
    single = GBMORegressor(**SMALL).fit(X, Y[:, 0])
    assert single.predict(X).shape == (200,) and single.n_outputs_ == 1
    # a column vector is one target, as for LightGBM and scikit-learn's forests
    # ((n, 1) predictions made prediction - y broadcast to (n, n))
    from sklearn.exceptions import DataConversionWarning

    with pytest.warns(DataConversionWarning, match="column-vector y"):
        column = GBMORegressor(**SMALL).fit(X, Y[:, :1])
    np.testing.assert_allclose(column.predict(X), single.predict(X))
    # R^2 averaged uniformly over outputs
    from sklearn.metrics import r2_score
    assert multi.score(X, Y) == pytest.approx(r2_score(Y, multi.predict(X)))
    assert multi.score(X, Y) > 0.9


def test_grid_search_over_leaves_and_learning_rate_on_multi_output():
    X, Y = _multi_output_regression(400)
    search = GridSearchCV(
        GBMORegressor(n_estimators=40, min_samples_leaf=5, random_state=0, n_threads=1),
        {"max_leaves": [2, 15], "learning_rate": [0.01, 0.3]}, cv=3, n_jobs=1,
    )
    search.fit(X, Y)
    # stumps cannot model the interaction, 40 rounds at 0.01 cannot get anywhere
    assert search.best_params_ == {"max_leaves": 15, "learning_rate": 0.3}
    assert search.predict(X).shape == (400, 3)
    assert search.best_estimator_.score(X, Y) > 0.9
    scores = search.cv_results_["mean_test_score"]
    assert scores.max() - scores.min() > 0.3


def test_pipeline_with_scaler_matches_unscaled_model():
    X, Y = _multi_output_regression(300)
    X = X * np.array([1.0, 100.0, 1e-3, 5.0, 1e4]) + 7.0
    pipe = make_pipeline(StandardScaler(), GBMORegressor(**SMALL)).fit(X, Y)
    plain = GBMORegressor(**SMALL).fit(X, Y)
    assert pipe.predict(X).shape == (300, 3)
    assert pipe.score(X, Y) > 0.9
    # trees only see the order of each feature: scaling does not change the model
    np.testing.assert_allclose(pipe.predict(X), plain.predict(X), rtol=1e-9, atol=1e-12)


def test_nan_features_are_supported():
    X, Y = _multi_output_regression(300)
    X[::7, 0] = np.nan
    model = GBMORegressor(**SMALL).fit(X, Y)
    prediction = model.predict(X)
    assert np.all(np.isfinite(prediction))
    assert model.score(X, Y) > 0.8


def test_infinite_features_are_taken_as_gbmo_train_takes_them():
    """+-inf land in the last and first bins (as LightGBM's estimators take
    them); they were refused as "Input X contains infinity"."""
    X, Y = _multi_output_regression(300)
    X[::5, 0], X[1::5, 0], X[::9, 1] = np.inf, -np.inf, np.nan
    model = GBMORegressor(**SMALL).fit(X, Y, eval_set=[(X[:100], Y[:100])])
    np.testing.assert_allclose(model.predict(X), _trained_as_small(X, Y).predict(X))
    assert np.isfinite(model.evals_result_["valid_0"]["rmse"]).all()
    labels = Y[:, 0] > 0
    classifier = GBMOClassifier(**SMALL).fit(X, labels)
    assert classifier.score(X, labels) > 0.9


def test_missing_labels_train_as_gbmo_train_trains_them():
    """NaN in y is a missing label for the losses that mask them, as in
    gbmo.train; the regressor refused it as "Input y contains NaN"."""
    X, Y = _multi_output_regression(300)
    Y[::4, 0], Y[1::5, 2] = np.nan, np.nan
    model = GBMORegressor(**SMALL).fit(X, Y)
    np.testing.assert_allclose(model.predict(X), _trained_as_small(X, Y).predict(X))
    # the rows held out for early stopping are scored on their labels present
    stopped = GBMORegressor(**SMALL, early_stopping_rounds=5).fit(X, Y)
    assert np.isfinite(stopped.evals_result_["validation"]["rmse"]).all()
    seen_missing = []

    def squared_error(y_true, raw):  # a function receives them as they are
        seen_missing.append(np.isnan(y_true).any())
        return np.nan_to_num(raw - y_true), np.isfinite(y_true).astype(float)

    GBMORegressor(n_estimators=2, objective=squared_error).fit(X, Y)
    assert all(seen_missing) and seen_missing


def test_a_metric_function_that_fails_on_missing_labels_is_told_why():
    from sklearn.metrics import mean_absolute_error

    X, Y = _multi_output_regression(300)
    Y[::5, 1] = np.nan
    with pytest.raises(ValueError, match="eval_metric 'mean_absolute_error' failed on a y_true "
                                         r"that holds missing labels \(NaN\), which gbmo trains "
                                         r"with \(Input contains NaN"):
        GBMORegressor(n_estimators=3).fit(X[:200], Y[:200], eval_set=[(X[200:], Y[200:])],
                                          eval_metric=mean_absolute_error)


def test_an_eval_set_target_of_pandas_nullable_columns_reads_na_as_a_missing_label():
    """As fit reads the training target: pd.NA in Float64, Int64 or boolean
    columns failed in float() (a forecast's horizons past a series' end)."""
    pd = pytest.importorskip("pandas")
    X, Y = _multi_output_regression(300)
    Y[::4, 0] = np.nan
    nullable = pd.DataFrame(Y).astype("Float64")
    model = GBMORegressor(n_estimators=5).fit(X[:200], Y[:200],
                                              eval_set=[(X[200:], nullable.iloc[200:])])
    expected = GBMORegressor(n_estimators=5).fit(X[:200], Y[:200],
                                                 eval_set=[(X[200:], Y[200:])])
    assert model.evals_result_["valid_0"]["rmse"] == expected.evals_result_["valid_0"]["rmse"]
    labels = (X[:, :2] > 0).astype(float)
    labels[::5, 1] = np.nan
    flags = pd.DataFrame(labels).astype("boolean")
    classifier = GBMOClassifier(n_estimators=5).fit(X[:200], labels[:200],
                                                    eval_set=[(X[200:], flags.iloc[200:])])
    assert np.isfinite(classifier.evals_result_["valid_0"]["logloss"]).all()


def test_missing_labels_are_refused_by_name_where_the_objective_does_not_take_them(
        no_training):
    X, Y = _multi_output_regression(100)
    Y[0, 0] = np.nan
    with pytest.raises(ValueError, match=r"y contains NaN, which marks a missing label, and "
                                         r"objective 'fair' does not take missing labels"):
        GBMORegressor(objective="fair").fit(X, Y)
    Y[0, 0] = np.inf
    with pytest.raises(ValueError, match="Input y contains infinity"):
        GBMORegressor().fit(X, Y)


def test_feature_names_in_only_with_string_column_names():
    pd = pytest.importorskip("pandas")
    X, y = _noisy_regression(200)
    frame = pd.DataFrame(X, columns=[f"f{i}" for i in range(5)])
    named = GBMORegressor(n_estimators=5).fit(frame, y)
    assert list(named.feature_names_in_) == [f"f{i}" for i in range(5)]
    assert named.booster_.feature_names == [f"f{i}" for i in range(5)]
    assert named.n_features_in_ == 5
    plain = GBMORegressor(n_estimators=5).fit(X, y)
    assert not hasattr(plain, "feature_names_in_")
    np.testing.assert_array_equal(named.predict(frame), plain.predict(X))
    with pytest.raises(ValueError, match="features"):
        plain.predict(X[:, :4])


def test_arrays_go_straight_to_the_booster_where_scikit_learn_would_pass_them():
    """An estimator fitted without names hands a float array of its width to
    the booster unchecked (scikit-learn's checks took 60 us of an 80 us
    one-row call); the others keep scikit-learn's checks and messages."""
    pd = pytest.importorskip("pandas")
    X, y = _noisy_regression(200)
    plain = GBMORegressor(n_estimators=5).fit(X, y)
    for rows in (X, X[:1], X.astype(np.float32), X[::2], np.asfortranarray(X)):
        np.testing.assert_array_equal(plain.predict(rows), plain.booster_.predict(rows))
    np.testing.assert_array_equal(plain.predict(X.tolist()), plain.predict(X))
    np.testing.assert_array_equal(plain.predict(X.astype(int)), plain.predict(X.astype(int) * 1.0))
    with pytest.raises(ValueError, match="features"):
        plain.predict(X[:, :4])
    with pytest.raises(ValueError, match="0 sample"):
        plain.predict(X[:0])
    named = GBMORegressor(n_estimators=5).fit(pd.DataFrame(X, columns=list("abcde")), y)
    with pytest.warns(UserWarning, match="does not have valid feature names"):
        named.predict(X)


@pytest.mark.parametrize("params, name", [
    ({"max_leaves": 1}, "max_leaves"),
    ({"learning_rate": -0.1}, "learning_rate"),
    ({"min_samples_leaf": 0}, "min_samples_leaf"),
    ({"n_estimators": 0}, "n_estimators"),
    ({"early_stopping_rounds": 2.5}, "early_stopping_rounds"),
    ({"validation_fraction": 1.5, "early_stopping_rounds": 5}, "validation_fraction"),
])
def test_bad_parameters_are_named_at_fit(params, name):
    model = GBMORegressor(**params)  # stored unchanged, no error yet
    assert model.get_params()[next(iter(params))] == next(iter(params.values()))
    X, y = _noisy_regression(50)
    with pytest.raises(ValueError, match=name):
        model.fit(X, y)


@pytest.mark.parametrize("rounds", [0, -1])
def test_early_stopping_rounds_of_zero_or_less_is_no_early_stopping_as_lightgbm_s(rounds):
    X, y = _noisy_regression(200)
    model = GBMORegressor(n_estimators=30, early_stopping_rounds=rounds).fit(X, y)
    plain = GBMORegressor(n_estimators=30).fit(X, y)
    assert model.n_iter_ == 30 and model.best_iteration_ == 0
    np.testing.assert_array_equal(model.predict(X), plain.predict(X))


# -- classifier -------------------------------------------------------------

def test_classifier_with_string_labels_is_multiclass_softmax():
    X, y = _blobs()
    names = np.array(["setosa", "versicolor", "virginica"])[y]
    model = GBMOClassifier(**SMALL).fit(X, names)
    np.testing.assert_array_equal(model.classes_, ["setosa", "versicolor", "virginica"])
    assert model.n_classes_ == 3 and model.n_outputs_ == 1
    assert model.booster_.loss.name == "softmax" and model.booster_.n_outputs == 3
    proba = model.predict_proba(X)
    assert proba.shape == (300, 3)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    prediction = model.predict(X)
    assert prediction.dtype == names.dtype
    np.testing.assert_array_equal(prediction, model.classes_[proba.argmax(axis=1)])
    assert model.score(X, names) > 0.9


def test_classifier_with_two_classes_uses_one_sigmoid_output():
    X, y = _blobs()
    labels = np.where(y == 0, -1, 1)
    model = GBMOClassifier(**SMALL).fit(X, labels)
    np.testing.assert_array_equal(model.classes_, [-1, 1])
    assert model.booster_.loss.name == "sigmoid" and model.booster_.n_outputs == 1
    proba = model.predict_proba(X)
    assert proba.shape == (300, 2)
    np.testing.assert_allclose(proba[:, 1], model.booster_.predict(X))
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    np.testing.assert_array_equal(model.predict(X), np.where(proba[:, 1] > 0.5, 1, -1))
    assert model.score(X, labels) > 0.9
    # booleans are labels too
    as_bool = GBMOClassifier(**SMALL).fit(X, labels == 1)
    np.testing.assert_array_equal(as_bool.classes_, [False, True])
    np.testing.assert_array_equal(as_bool.predict(X), model.predict(X) == 1)


def test_classifier_with_multilabel_indicator_matrix():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 5))
    Y = np.column_stack([X[:, 0] > 0, X[:, 1] + X[:, 2] > 0, X[:, 3] > 1]).astype(np.int64)
    model = GBMOClassifier(**SMALL).fit(X, Y)
    assert model.booster_.loss.name == "sigmoid" and model.booster_.n_outputs == 3
    np.testing.assert_array_equal(model.classes_, [0, 1, 2])
    assert model.n_outputs_ == 3
    proba = model.predict_proba(X)
    assert proba.shape == (400, 3) and np.all((proba >= 0) & (proba <= 1))
    prediction = model.predict(X)
    assert prediction.shape == (400, 3) and prediction.dtype == Y.dtype
    np.testing.assert_array_equal(prediction, (proba > 0.5).astype(int))
    assert np.mean(prediction == Y, axis=0).min() > 0.9
    assert model.score(X, Y) == pytest.approx(np.mean(np.all(prediction == Y, axis=1)))


def test_classifier_takes_nan_in_a_multi_label_y_as_a_missing_label():
    """As GBMORegressor(objective='sigmoid') and gbmo.train take it: the
    sigmoid masks a missing label. The classifier refused it ("Input y
    contains NaN"). classes_ stays the columns; predict gives every entry."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 5))
    Y = np.column_stack([X[:, 0] > 0, X[:, 1] + X[:, 2] > 0, X[:, 3] > 1]).astype(np.float64)
    missing = Y.copy()
    missing[::4, 0] = missing[1::5, 2] = np.nan
    model = GBMOClassifier(**SMALL).fit(X, missing)
    as_regression = GBMORegressor(**SMALL, objective="sigmoid").fit(X, missing)
    np.testing.assert_allclose(model.predict_proba(X), as_regression.predict(X))
    np.testing.assert_array_equal(model.classes_, [0, 1, 2])
    assert model.n_classes_ == model.n_outputs_ == 3
    prediction = model.predict(X)
    assert prediction.dtype == np.float64 and np.isin(prediction, (0, 1)).all()
    assert model.score(X, Y) > 0.8
    # eval_set and early stopping's hold-out take them too, scored on the labels present
    watched = GBMOClassifier(**SMALL, early_stopping_rounds=5).fit(
        X, missing, eval_set=[(X[:100], missing[:100])])
    held_out = GBMOClassifier(**SMALL, early_stopping_rounds=5).fit(X, missing)
    assert np.isfinite(watched.evals_result_["valid_0"]["logloss"]).all()
    assert np.isfinite(held_out.evals_result_["validation"]["logloss"]).all()


def test_classifier_refuses_nan_where_it_is_no_missing_label(no_training):
    X, targets = _class_targets()
    labels, multi_label = targets["three"].astype(float), targets["multi-label"].astype(float)
    labels[0] = multi_label[0, 0] = np.nan
    with pytest.raises(ValueError, match="Input y contains NaN"):  # a class index
        GBMOClassifier().fit(X, labels)
    with pytest.raises(ValueError, match="Input y contains NaN"):
        GBMOClassifier().fit(X, labels[:, None])
    with pytest.raises(ValueError, match=r"y contains NaN, which marks a missing label, and "
                                         r"objective 'focal' does not take missing labels"):
        GBMOClassifier(objective="focal").fit(X, multi_label)
    multi_label[1, 1] = 2  # NaN lets no other value through
    with pytest.raises(ValueError, match="a 2-D y must be a multi-label indicator matrix of "
                                         "0/1 values, NaN for a missing label"):
        GBMOClassifier().fit(X, multi_label)
    multi_label[1, 1] = 0.5
    with pytest.raises(ValueError, match="Unknown label type: continuous-multioutput"):
        GBMOClassifier().fit(X, multi_label)
    # string labels in two columns: numpy's promotion error before
    with pytest.raises(ValueError, match=r"a 2-D y must be a multi-label indicator matrix of "
                                         r"0/1 values, NaN for a missing label \(got <U1 "
                                         r"labels\)"):
        GBMOClassifier().fit(X, np.where(np.isnan(multi_label), "a", "b"))


def test_classifier_rejects_one_class_and_continuous_targets():
    X, _ = _blobs(50)
    with pytest.raises(ValueError, match=r"at least 2 classes in y; got only one class: 0\.0$"):
        GBMOClassifier().fit(X, np.zeros(50))
    with pytest.raises(ValueError, match="Unknown label type"):
        GBMOClassifier().fit(X, np.linspace(0, 1, 50))


# -- early stopping, eval_set, callbacks -----------------------------------

def test_early_stopping_with_validation_fraction_predicts_with_best_iteration():
    X, y = _noisy_regression()
    model = GBMORegressor(n_estimators=500, early_stopping_rounds=10, validation_fraction=0.2,
                          learning_rate=0.3, min_samples_leaf=2, random_state=0).fit(X, y)
    history = model.evals_result_["validation"]["rmse"]
    assert model.best_iteration_ < model.n_estimators
    assert model.best_iteration_ == int(np.argmin(history)) + 1
    assert model.n_iter_ == len(history) == model.best_iteration_ + 10
    assert model.booster_.num_trees == model.n_iter_
    np.testing.assert_array_equal(
        model.predict(X), model.booster_.predict(X, num_iteration=model.best_iteration_))
    assert not np.array_equal(
        model.predict(X), model.booster_.predict(X, num_iteration=model.n_iter_))
    # the held-out split is seeded: same random_state, same model
    again = clone(model).fit(X, y)
    assert again.best_iteration_ == model.best_iteration_
    np.testing.assert_array_equal(again.predict(X), model.predict(X))


@pytest.mark.parametrize("library", ["gbmo", "lightgbm"])
def test_best_iteration_and_n_estimators_mean_what_lightgbm_s_do(library):
    """Without early stopping best_iteration_ is 0 (it was n_iter_) and
    predict uses every round; after it best_iteration_ and n_estimators_ are
    the best round (n_estimators_ was n_iter_), where LightGBM cuts its model
    and up to which predict goes. Run on LightGBM too, to hold the claim."""
    if library == "lightgbm":
        lightgbm = pytest.importorskip("lightgbm")
        Model = functools.partial(lightgbm.LGBMRegressor, verbose=-1)
    else:
        Model = GBMORegressor
    X, y = _noisy_regression()
    plain = Model(n_estimators=20).fit(X, y)
    assert plain.best_iteration_ == 0 and plain.n_estimators_ == 20
    np.testing.assert_allclose(plain.predict(X), plain.booster_.predict(X, num_iteration=20))
    stopped = Model(n_estimators=300, learning_rate=0.3, early_stopping_rounds=5).fit(
        X[:400], y[:400], eval_X=X[400:], eval_y=y[400:])
    history = next(iter(stopped.evals_result_["valid_0"].values()))
    assert stopped.n_estimators_ == stopped.best_iteration_ == int(np.argmin(history)) + 1
    assert stopped.best_iteration_ < len(history) < 300
    np.testing.assert_allclose(stopped.predict(X), stopped.booster_.predict(
        X, num_iteration=stopped.best_iteration_))


def test_early_stopping_that_never_triggers_still_uses_the_best_round():
    X, y = _noisy_regression(seed=1)
    model = GBMORegressor(n_estimators=40, early_stopping_rounds=100, learning_rate=0.5,
                          min_samples_leaf=2, random_state=0).fit(X, y)
    history = model.evals_result_["validation"]["rmse"]
    assert model.n_iter_ == 40 == len(history)
    assert model.best_iteration_ == int(np.argmin(history)) + 1 < 40
    np.testing.assert_array_equal(
        model.predict(X), model.booster_.predict(X, num_iteration=model.best_iteration_))


def test_classifier_early_stopping_split_is_stratified_and_seeded():
    X, y = _blobs(200)
    y = np.where(np.arange(200) < 20, 3, y)  # a rare class of 20 rows
    seen = []
    model = GBMOClassifier(n_estimators=200, early_stopping_rounds=5, validation_fraction=0.1,
                           min_samples_leaf=3, random_state=0)
    model.fit(X, y, callbacks=[lambda env: seen.append(env.model)])
    assert seen and seen[0] is model.booster_  # user callbacks run too
    history = model.evals_result_["validation"]["logloss"]
    assert model.best_iteration_ < model.n_iter_ == len(seen) == len(history)
    # The held-out rows are the stratified split seeded by random_state: 2 of the 20
    # validation rows are of the rare class, and the recorded logloss is theirs.
    from sklearn.model_selection import train_test_split
    _, X_valid, _, y_valid = train_test_split(X, y, test_size=0.1, stratify=y,
                                              random_state=np.random.RandomState(0))
    assert np.sum(y_valid == 3) == 2
    for k in (1, model.n_iter_):
        proba = model.booster_.predict(X_valid, num_iteration=k)
        logloss = -np.mean(np.log(proba[np.arange(len(y_valid)), y_valid]))
        assert history[k - 1] == pytest.approx(logloss, rel=1e-9)


def test_a_numpy_generator_as_random_state_seeds_the_model_as_lightgbm_s_estimators():
    """A seed drawn from the Generator seeds training (and the held-out rows);
    it was refused with numpy's RandomState message."""
    X, Y = _multi_output_regression(300)
    options = dict(n_estimators=5, subsample=0.5, subsample_freq=1, min_samples_leaf=3)
    seed = int(np.random.default_rng(7).integers(np.iinfo(np.int32).max))
    drawn = GBMORegressor(**options, random_state=np.random.default_rng(7)).fit(X, Y)
    seeded = GBMORegressor(**options, random_state=seed).fit(X, Y)
    other = GBMORegressor(**options, random_state=np.random.default_rng(8)).fit(X, Y)
    np.testing.assert_array_equal(drawn.predict(X), seeded.predict(X))
    assert not np.array_equal(drawn.predict(X), other.predict(X))


def test_a_random_state_of_another_kind_is_refused_naming_the_allowed(no_training):
    X, Y = _multi_output_regression(100)
    with pytest.raises(ValueError, match=r"parameter 'random_state' is invalid: .*; allowed: "
                                         r"None, an integer, a numpy RandomState or Generator"):
        GBMORegressor(random_state="seven").fit(X, Y)


def test_eval_set_is_recorded_per_round():
    X, Y = _multi_output_regression(400)
    model = GBMORegressor(**SMALL).fit(X[:300], Y[:300],
                                       eval_set=[(X[:300], Y[:300]), (X[300:], Y[300:])])
    assert set(model.evals_result_) == {"valid_0", "valid_1"}
    valid = model.evals_result_["valid_1"]
    assert len(valid["rmse"]) == model.n_iter_ == 30
    assert len(valid["rmse_per_output"][-1]) == 3
    per_output = np.sqrt(np.mean((model.predict(X[300:]) - Y[300:]) ** 2, axis=0))
    np.testing.assert_allclose(valid["rmse_per_output"][-1], per_output, rtol=1e-9)
    assert valid["rmse"][-1] == pytest.approx(per_output.mean())
    training = model.evals_result_["valid_0"]["rmse"]
    assert training[-1] < training[0]
    # no early stopping asked for: as LightGBM's
    assert model.best_iteration_ == 0 and model.n_estimators_ == model.n_iter_


def test_early_stopping_watches_the_given_eval_set():
    X, y = _noisy_regression()
    model = GBMORegressor(n_estimators=500, early_stopping_rounds=10, learning_rate=0.3,
                          min_samples_leaf=2, random_state=0)
    model.fit(X[:400], y[:400], eval_set=[(X[400:], y[400:])])
    assert "validation" not in model.evals_result_
    history = model.evals_result_["valid_0"]["rmse"]
    assert model.best_iteration_ == int(np.argmin(history)) + 1 < 500


def test_eval_metric_in_lightgbm_s_other_spellings():
    X, Y = _multi_output_regression(200)
    model = GBMORegressor(**SMALL).fit(X[:150], Y[:150], eval_set=[(X[150:], Y[150:])],
                                       eval_metric="l2,l1")
    recorded = [m for m in model.evals_result_["valid_0"] if not m.endswith("_per_output")]
    assert recorded[:2] == ["mse", "mae"]
    model = GBMORegressor(**SMALL, eval_metric={"l1", "l2"}).fit(
        X[:150], Y[:150], eval_set=[(X[150:], Y[150:])])
    recorded = [m for m in model.evals_result_["valid_0"] if not m.endswith("_per_output")]
    assert recorded == ["mae", "mse"]
    model = GBMORegressor(**SMALL).fit(X[:150], Y[:150], eval_set=[(X[150:], Y[150:])],
                                       eval_metric="None")  # names no metric, as in a list
    assert [m for m in model.evals_result_["valid_0"] if not m.endswith("_per_output")] == \
        ["rmse"]


def test_lightgbm_s_eval_X_and_eval_y_are_eval_set():
    X, Y = _multi_output_regression(400)
    pairs = GBMORegressor(**SMALL).fit(X[:300], Y[:300], eval_set=[(X[300:350], Y[300:350]),
                                                                  (X[350:], Y[350:])])
    spelled = GBMORegressor(**SMALL).fit(X[:300], Y[:300], eval_X=(X[300:350], X[350:]),
                                         eval_y=(Y[300:350], Y[350:]))
    assert spelled.evals_result_ == pairs.evals_result_
    one = GBMORegressor(**SMALL).fit(X[:300], Y[:300], eval_X=X[350:], eval_y=Y[350:])
    assert one.evals_result_["valid_0"] == pairs.evals_result_["valid_1"]
    for arguments, message in [({"eval_X": X[350:]}, "eval_X and eval_y go together"),
                               ({"eval_X": (X, X), "eval_y": (Y,)}, "eval_X holds 2 set"),
                               ({"eval_set": [(X, Y)], "eval_X": X, "eval_y": Y},
                                "give eval_set or eval_X / eval_y, not both")]:
        with pytest.raises(ValueError, match=message):
            GBMORegressor(**SMALL).fit(X[:300], Y[:300], **arguments)


def test_classifier_eval_set_labels_are_encoded():
    X, y = _blobs()
    names = np.array(["a", "b", "c"])[y]
    model = GBMOClassifier(**SMALL).fit(X[:200], names[:200], eval_set=[(X[200:], names[200:])])
    logloss = model.evals_result_["valid_0"]["logloss"]
    proba = model.predict_proba(X[200:])
    expected = -np.mean(np.log(proba[np.arange(100), y[200:]]))
    assert logloss[-1] == pytest.approx(expected, rel=1e-9)
    with pytest.raises(ValueError, match="not seen"):
        model.fit(X[:200], names[:200], eval_set=[(X[200:], np.full(100, "z"))])


# -- sample_weight ----------------------------------------------------------

def test_zero_sample_weight_on_half_the_data_changes_the_fit():
    rng = np.random.default_rng(0)
    X = np.tile(rng.uniform(-2, 2, size=(200, 3)), (2, 1))  # every row twice ...
    first = np.arange(400) < 200
    y = np.where(first, X[:, 0], -X[:, 0])  # ... with opposite targets
    weight = first.astype(float)
    weighted = GBMORegressor(**SMALL).fit(X, y, sample_weight=list(weight))  # any array-like
    unweighted = GBMORegressor(**SMALL).fit(X, y)
    assert weighted.score(X[first], y[first]) > 0.9
    assert unweighted.score(X[first], y[first]) < 0.5
    assert not np.allclose(weighted.predict(X), unweighted.predict(X))
    with pytest.raises(ValueError, match="sample_weight"):
        GBMORegressor().fit(X, y, sample_weight=np.ones(5))


# -- persistence, clone, staged_predict ------------------------------------

@pytest.mark.parametrize("make", [
    lambda: (GBMORegressor(**SMALL), _multi_output_regression(200)),
    lambda: (GBMOClassifier(**SMALL), (_blobs(200)[0], np.array(["x", "y", "z"])[_blobs(200)[1]])),
])
def test_pickle_joblib_and_clone_round_trips(make, tmp_path):
    model, (X, y) = make()
    model.fit(X, y)
    expected = model.predict(X)
    restored = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(restored.predict(X), expected)
    assert restored.best_iteration_ == model.best_iteration_
    assert restored.evals_result_ == model.evals_result_
    joblib.dump(model, tmp_path / "model.joblib")
    np.testing.assert_array_equal(joblib.load(tmp_path / "model.joblib").predict(X), expected)
    if hasattr(model, "predict_proba"):
        np.testing.assert_array_equal(restored.predict_proba(X), model.predict_proba(X))
    fresh = clone(model)
    assert fresh.get_params() == model.get_params()
    assert not hasattr(fresh, "booster_")
    np.testing.assert_array_equal(fresh.fit(X, y).predict(X), expected)  # deterministic


def _same_state(loaded, model):
    """Every fitted attribute and parameter of loaded equals model's, of the
    same type (arrays of the same dtype), the booster's predictions standing
    for the booster; the metric records are the booster's own, as after fit."""
    assert loaded.get_params() == model.get_params()
    assert set(vars(loaded)) == set(vars(model))
    for key, value in vars(model).items():
        if key == "booster_":
            continue
        assert type(loaded.__dict__[key]) is type(value), key
        if isinstance(value, np.ndarray):
            assert loaded.__dict__[key].dtype == value.dtype
            np.testing.assert_array_equal(loaded.__dict__[key], value)
        else:
            assert loaded.__dict__[key] == value, key
    for records in ("evals_result", "best_score"):
        assert getattr(loaded, records + "_") is getattr(loaded.booster_, records)
        assert all(type(history) is type(model_history) for history, model_history in zip(
            getattr(loaded, records + "_").values(), getattr(model, records + "_").values()))


@pytest.mark.parametrize("make", [
    lambda: (GBMORegressor(n_estimators=30, num_leaves=7, early_stopping_rounds=3,
                           metric={"l2", "l1"}), _multi_output_regression(200)),
    lambda: (GBMORegressor(n_estimators=5, objective="l1", tree_mode="single_output"),
             (_multi_output_regression(200)[0], _multi_output_regression(200)[1][:, 0])),
    lambda: (GBMOClassifier(n_estimators=5, class_weight={"x": 1.0, "z": 3.0}),
             (_blobs(200)[0], np.array(["x", "y", "z"])[_blobs(200)[1]])),
    lambda: (GBMOClassifier(n_estimators=5, class_weight={0: 2.0, 1: 1.0}),
             (_blobs(200)[0], _blobs(200)[1] % 2)),
    lambda: (GBMOClassifier(n_estimators=5, monotone_constraints=(1, 0, 0, 0)),
             (_blobs(200)[0], np.eye(3, dtype=bool)[_blobs(200)[1]])),
])
def test_save_model_and_load_model_give_the_estimator_back(make, tmp_path):
    model, (X, y) = make()
    model.fit(X, y)
    model.save_model(tmp_path / "model.json")
    loaded = type(model)(n_estimators=7, reg_alpha=2.0).load_model(tmp_path / "model.json")
    _same_state(loaded, model)
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))
    if hasattr(model, "predict_proba"):
        np.testing.assert_array_equal(loaded.predict_proba(X), model.predict_proba(X))
    # the file is the Booster's model file too
    np.testing.assert_array_equal(gbmo.Booster(model_file=tmp_path / "model.json").predict(X),
                                  model.booster_.predict(X))
    np.testing.assert_array_equal(clone(loaded).fit(X, y).predict(X), model.predict(X))


def test_a_loaded_estimator_s_records_answer_to_other_libraries_metric_names(tmp_path):
    X, y = _blobs(300)
    model = GBMOClassifier(n_estimators=30, early_stopping_rounds=3, eval_metric="aucpr").fit(
        X[:200], y[:200] == 1, eval_set=[(X[200:], y[200:] == 1)])
    model.save_model(tmp_path / "model.json")
    loaded = GBMOClassifier().load_model(tmp_path / "model.json")
    assert loaded.evals_result_["valid_0"]["aucpr"] == model.evals_result_["valid_0"]["aucpr"]
    assert loaded.best_score_["valid_0"]["aucpr"] == model.best_score_["valid_0"]["aucpr"]
    assert loaded.evals_result()["validation_0"]["aucpr"] == model.evals_result()[
        "validation_0"]["aucpr"]
    assert loaded.get_booster().best_score == model.get_booster().best_score


def test_load_model_restores_a_dataframe_s_names_and_a_sparse_y_s_labels(tmp_path):
    import pandas as pd
    import scipy.sparse as sp

    X, Y = _multi_output_regression(200)
    frame = pd.DataFrame(X, columns=[f"c{j}" for j in range(X.shape[1])])
    labels = sp.csr_matrix((Y > 0).astype(float))
    for model, target in ((GBMORegressor(n_estimators=4), Y), (GBMOClassifier(n_estimators=4),
                                                               labels)):
        model.fit(frame, target)
        model.save_model(tmp_path / "model.json")
        loaded = type(model)().load_model(tmp_path / "model.json")
        _same_state(loaded, model)
        expected, got = model.predict(frame), loaded.predict(frame)
        if sp.issparse(expected):
            expected, got = expected.toarray(), got.toarray()
        np.testing.assert_array_equal(got, expected)
        with pytest.raises(ValueError, match="columns are the model's features in another "
                                             "order"):
            loaded.predict(frame[frame.columns[::-1]])


def test_save_model_and_load_model_refuse_what_json_or_the_file_cannot_give(tmp_path):
    X, y = _blobs(200)
    path = tmp_path / "model.json"
    with pytest.raises(Exception, match="not fitted"):
        GBMOClassifier().save_model(path)
    custom = GBMORegressor(n_estimators=2, objective=lambda y_true, raw: (
        raw - y_true, np.ones_like(raw))).fit(X, X[:, 0])
    with pytest.raises(ValueError, match="cannot hold 'objective' \\(function\\); allowed: "
                                         "numbers, strings, lists, dicts and numpy arrays. "
                                         "Pickle the estimator .*not a lambda"):
        custom.save_model(path)
    assert not path.exists()
    GBMOClassifier(n_estimators=2).fit(X, y).save_model(path)
    regressor = GBMORegressor(n_estimators=3)
    with pytest.raises(gbmo.ModelFormatError, match="holds a GBMOClassifier, not a "
                                                    "GBMORegressor"):
        regressor.load_model(path)
    assert not hasattr(regressor, "booster_") and regressor.n_estimators == 3
    text = path.read_text()
    path.write_text(text.replace('"dtype": "<i8"', '"dtype": "no such dtype"'))
    with pytest.raises(gbmo.ModelFormatError, match="has a malformed 'estimator' field"):
        GBMOClassifier().load_model(path)
    for edit, message in [(lambda state: state.pop("class"),
                           "holds an estimator whose class is not named, not a GBMOClassifier"),
                          (lambda state: state["fitted"].pop("classes_"),
                           "lacks the fitted attribute\\(s\\) classes_ that every fitted "
                           "GBMOClassifier has")]:
        edited = json.loads(text)
        edit(edited["estimator"])
        path.write_text(json.dumps(edited))
        with pytest.raises(gbmo.ModelFormatError, match=message):
            GBMOClassifier().load_model(path)
    gbmo.train({"verbosity": 0}, gbmo.Dataset(X, X[:, :2]), 2).save_model(path)
    with pytest.raises(gbmo.ModelFormatError, match="holds no GBMORegressor's state \\(a "
                                                    "Booster's model file has none\\)"):
        regressor.load_model(path)


def test_a_regressor_pickled_before_boosters_knew_the_target_shape_predicts_one_column():
    """Its booster's model text has no one_dimensional_target, so the booster
    predicts (n, 1); the estimator still returns (n,) for its 1-D y."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(200, 3))
    model = GBMORegressor(**SMALL).fit(X, X[:, 0])
    state = pickle.loads(pickle.dumps(model)).__dict__
    data = json.loads(state["booster_"].model_to_string())
    del data["one_dimensional_target"]
    state["booster_"] = gbmo.Booster(model_str=json.dumps(data))
    old = GBMORegressor.__new__(GBMORegressor)
    old.__dict__.update(state)
    assert old.booster_.predict(X).shape == (200, 1)
    np.testing.assert_array_equal(old.predict(X), model.predict(X))
    np.testing.assert_array_equal(list(old.staged_predict(X))[-1], model.predict(X))


def test_staged_predict_ends_at_predict():
    X, Y = _multi_output_regression(200)
    model = GBMORegressor(**SMALL).fit(X, Y)
    stages = list(model.staged_predict(X))
    assert len(stages) == model.n_estimators_ == 30
    np.testing.assert_array_equal(stages[-1], model.predict(X))
    errors = [np.mean((s - Y) ** 2) for s in stages]
    assert errors[-1] < errors[0]

    X, y = _blobs(200)
    classifier = GBMOClassifier(**SMALL).fit(X, np.array(["a", "b", "c"])[y])
    labels = list(classifier.staged_predict(X))
    probas = list(classifier.staged_predict_proba(X))
    assert len(labels) == len(probas) == 30
    np.testing.assert_array_equal(labels[-1], classifier.predict(X))
    np.testing.assert_array_equal(probas[-1], classifier.predict_proba(X))
    assert not np.array_equal(probas[0], probas[-1])


def test_decision_function_gives_the_raw_scores_predict_proba_transforms():
    """LightGBM's and scikit-learn's classifier method; staged as scikit-learn's."""
    import scipy.sparse as sp
    from scipy.special import softmax

    X, y = _blobs(200)
    classifier = GBMOClassifier(**SMALL).fit(X, y)
    raw = classifier.decision_function(X)
    assert raw.shape == (200, 3)
    np.testing.assert_allclose(softmax(raw, axis=1), classifier.predict_proba(X), rtol=1e-12)
    np.testing.assert_array_equal(classifier.decision_function(X, num_iteration=3),
                                  classifier.booster_.predict(X, raw_score=True, num_iteration=3))
    stages = list(classifier.staged_decision_function(X))
    assert len(stages) == 30
    np.testing.assert_array_equal(stages[-1], raw)
    np.testing.assert_array_equal(stages[0], classifier.decision_function(X, num_iteration=1))
    multi_label = GBMOClassifier(n_estimators=3, objective="sigmoid", top_k=2).fit(
        X, sp.csr_matrix(np.eye(3, dtype=int)[y]))
    for raw_scores in (multi_label.decision_function,
                       lambda X: next(multi_label.staged_decision_function(X))):
        with pytest.raises(ValueError, match="raw scores and pred_contrib are not available "
                                             "for a sparse training y"):
            raw_scores(X)


def test_staged_predict_with_early_stopping_stops_at_best_iteration():
    X, y = _noisy_regression()
    model = GBMORegressor(n_estimators=300, early_stopping_rounds=5, learning_rate=0.3,
                          min_samples_leaf=2, random_state=0).fit(X, y)
    stages = list(model.staged_predict(X))
    assert len(stages) == model.best_iteration_ < model.n_iter_
    np.testing.assert_array_equal(stages[-1], model.predict(X))


def _printed_by(code):
    """What code prints in a fresh interpreter, run outside the source tree so
    that the installed (compiled) package is imported."""
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=60, cwd=tempfile.gettempdir())
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_import_gbmo_does_not_need_scikit_learn():
    assert _printed_by("import sys; sys.modules['sklearn'] = None; import gbmo; "
                       "assert 'gbmo.sklearn' not in sys.modules; "
                       "import importlib\n"
                       "try:\n    importlib.import_module('gbmo.sklearn')\n"
                       "except ImportError:\n    print('ok')\n") == "ok"


def test_the_estimators_name_the_scikit_learn_they_need():
    # scikit-learn 1.5, as far as gbmo.sklearn can see: no validate_data
    assert _printed_by(
        "import sklearn.base, sklearn.model_selection, sklearn.utils.class_weight, "
        "sklearn.utils.multiclass, sklearn.utils.validation as v\n"
        "del v.validate_data\nimport sklearn\nsklearn.__version__ = '1.5.2'\n"
        "try:\n    import gbmo.sklearn\nexcept ImportError as err:\n    print(err)\n"
    ) == "gbmo's estimators need scikit-learn >= 1.6 (pip install 'gbmo[sklearn]'); this is 1.5.2"


# -- class_weight -------------------------------------------------------------

def _imbalanced(n=400, seed=0):
    """Two features, about one row in six of class "rare"; string labels."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    rare = X[:, 0] + 0.7 * rng.normal(size=n) > 1.0
    return X, np.where(rare, "rare", "common")


def _imbalanced_three(n=400, seed=0):
    X, y = _imbalanced(n, seed)
    return X, np.where((y == "common") & (X[:, 1] > 0.8), "middle", y)


def test_class_weight_is_stored_and_the_regressor_refuses_one():
    weights = {"rare": 5.0}
    model = GBMOClassifier(class_weight=weights)
    assert model.get_params()["class_weight"] is weights  # stored unchanged
    assert clone(model).get_params()["class_weight"] == weights
    # as in LightGBM, the regressor has the parameter and takes None only
    X, y = _imbalanced()
    with pytest.raises(ValueError, match="'class_weight' = 'balanced' applies to GBMOClassifier"):
        GBMORegressor(class_weight="balanced").fit(X, (y == "rare").astype(float))


@pytest.fixture
def no_training(monkeypatch):
    """Errors that must come before any training: training fails the test."""
    import gbmo.sklearn as gbmo_sklearn

    def refuse(*args, **kwargs):
        raise AssertionError("training started")
    monkeypatch.setattr(gbmo_sklearn, "train", refuse)


@pytest.mark.parametrize("make_data", [_imbalanced, _imbalanced_three])
def test_balanced_class_weight_equals_the_hand_made_sample_weight(make_data):
    from sklearn.utils.class_weight import compute_sample_weight
    X, y = make_data()
    assert np.unique(y, return_counts=True)[1].min() < 0.3 * len(y)  # imbalanced
    balanced = GBMOClassifier(**SMALL, class_weight="balanced").fit(X, y)
    by_hand = GBMOClassifier(**SMALL).fit(X, y, sample_weight=compute_sample_weight("balanced",
                                                                                      y))
    np.testing.assert_array_equal(balanced.predict_proba(X), by_hand.predict_proba(X))
    unweighted = GBMOClassifier(**SMALL).fit(X, y)
    assert not np.array_equal(balanced.predict_proba(X), unweighted.predict_proba(X))
    # the rare class gets more probability once it weighs more
    rare = list(balanced.classes_).index("rare")
    assert balanced.predict_proba(X)[:, rare].mean() > unweighted.predict_proba(X)[:, rare].mean()


def test_dict_class_weight_with_string_labels_equals_hand_made_weights():
    X, y = _imbalanced_three()
    weights = {"rare": 4.0, "middle": 0.5}  # "common" is left out: it weighs 1
    model = GBMOClassifier(**SMALL, class_weight=weights).fit(X, y)
    hand = np.select([y == "rare", y == "middle"], [4.0, 0.5], 1.0)
    by_hand = GBMOClassifier(**SMALL).fit(X, y, sample_weight=hand)
    np.testing.assert_array_equal(model.predict_proba(X), by_hand.predict_proba(X))


def test_class_weight_multiplies_sample_weight():
    X, y = _imbalanced()
    sample_weight = np.random.default_rng(1).uniform(0.2, 2.0, size=len(y))
    model = GBMOClassifier(**SMALL, class_weight={"rare": 3.0}).fit(X, y,
                                                                    sample_weight=sample_weight)
    by_hand = GBMOClassifier(**SMALL).fit(
        X, y, sample_weight=sample_weight * np.where(y == "rare", 3.0, 1.0))
    np.testing.assert_array_equal(model.predict_proba(X), by_hand.predict_proba(X))
    only_sample = GBMOClassifier(**SMALL).fit(X, y, sample_weight=sample_weight)
    assert not np.array_equal(model.predict_proba(X), only_sample.predict_proba(X))


@pytest.mark.parametrize("class_weight", ["balanced", {"rare": 6.0, "common": 0.5}])
def test_held_out_rows_carry_their_class_weights(class_weight):
    from sklearn.utils.class_weight import compute_sample_weight
    X, y = _imbalanced_three(600)
    sample_weight = np.random.default_rng(2).uniform(0.5, 1.5, size=len(y))
    params = dict(n_estimators=300, early_stopping_rounds=5, validation_fraction=0.25,
                  learning_rate=0.3, min_samples_leaf=5, random_state=0)
    model = GBMOClassifier(**params, class_weight=class_weight).fit(X, y,
                                                                    sample_weight=sample_weight)
    hand = sample_weight * compute_sample_weight(class_weight, y)
    by_hand = GBMOClassifier(**params).fit(X, y, sample_weight=hand)
    assert model.best_iteration_ == by_hand.best_iteration_ < model.n_iter_
    assert model.evals_result_ == by_hand.evals_result_
    np.testing.assert_array_equal(model.predict_proba(X), by_hand.predict_proba(X))
    # the recorded validation logloss is weighted: the held-out rows took their weights
    from sklearn.model_selection import train_test_split
    _, X_valid, _, y_valid, _, w_valid = train_test_split(
        X, y, hand, test_size=0.25, stratify=y, random_state=np.random.RandomState(0))
    proba = model.booster_.predict(X_valid, num_iteration=1)
    picked = proba[np.arange(len(y_valid)), np.searchsorted(model.classes_, y_valid)]
    weighted = -np.sum(w_valid * np.log(picked)) / w_valid.sum()
    unweighted = -np.mean(np.log(picked))
    logloss = model.evals_result_["validation"]["logloss"][0]
    assert logloss == pytest.approx(weighted, rel=1e-9)
    assert logloss != pytest.approx(unweighted, rel=1e-6)


def test_class_weight_with_integer_and_boolean_labels():
    X, y = _imbalanced()
    labels = np.where(y == "rare", 7, 2)
    model = GBMOClassifier(**SMALL, class_weight={7: 3.0}).fit(X, labels)
    by_hand = GBMOClassifier(**SMALL).fit(X, labels, sample_weight=np.where(labels == 7, 3.0, 1))
    np.testing.assert_array_equal(model.predict_proba(X), by_hand.predict_proba(X))
    flags = GBMOClassifier(**SMALL, class_weight={True: 3.0}).fit(X, labels == 7)
    np.testing.assert_array_equal(flags.predict_proba(X), by_hand.predict_proba(X))


@pytest.mark.parametrize("class_weight, message", [
    ("Balanced", r"'class_weight' = 'Balanced' is not allowed; allowed: None, 'balanced' or "
                 r"a dict"),
    ("auto", r"'class_weight' = 'auto' is not allowed"),
    ([1.0, 2.0], r"'class_weight' = \[1.0, 2.0\] is not allowed"),
    (np.array([1.0, 2.0]), r"'class_weight' = array\(\[1., 2.\]\) is not allowed"),
    (2.0, r"'class_weight' = 2.0 is not allowed"),
    ({"rare": -1.0}, r"'class_weight' = \{'rare': -1.0\} has the weight -1.0 for class 'rare'"),
    ({"rare": np.nan}, r"weight nan for class 'rare'.*finite"),
    ({"rare": np.inf}, r"weight inf for class 'rare'.*finite"),
    ({"rare": "2"}, r"weight '2' for class 'rare'"),
    ({"rare": 2.0, "unknown": 1.0}, r"'class_weight' = .* names a label not in y: 'unknown'; "
                                    r"allowed: the classes of y, \['common', 'rare'\]"),
    ({1: 2.0}, r"names a label not in y: 1;"),
    ({"rare": 0, "common": 0}, r"'class_weight' = .* leaves every row a weight of 0"),
])
def test_bad_class_weight_is_named_before_training(class_weight, message, no_training):
    X, y = _imbalanced(100)
    model = GBMOClassifier(class_weight=class_weight)  # stored unchanged, no error yet
    with pytest.raises(ValueError, match=message):
        model.fit(X, y)


@pytest.mark.parametrize("class_weight", ["balanced", {0: 2.0}, {}])
def test_class_weight_is_refused_for_multi_label_targets(class_weight, no_training):
    import scipy.sparse as sp
    rng = np.random.default_rng(0)
    X = rng.normal(size=(100, 3))
    Y = (X[:, :2] > 0).astype(int)
    message = r"'class_weight' = .* applies to single-label targets"
    with pytest.raises(ValueError, match=message + r".*multi-label matrix of shape \(100, 2\)"):
        GBMOClassifier(class_weight=class_weight).fit(X, Y)
    with pytest.raises(ValueError, match=message + r".*multi-label sparse matrix"):
        GBMOClassifier(class_weight=class_weight).fit(X, sp.csr_matrix(Y))


def test_lambda_l1_reaches_the_booster():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 4))
    Y = np.column_stack([X[:, 0], X[:, 1] ** 2]) + 0.1 * rng.normal(size=(300, 2))
    model = GBMORegressor(n_estimators=3, lambda_l1=5.0, random_state=0).fit(X, Y)
    assert model.booster_.params["lambda_l1"] == 5.0
    booster = gbmo.train({"lambda_l1": 5.0, "seed": 0, "verbosity": 0}, gbmo.Dataset(X, Y), 3)
    np.testing.assert_allclose(model.predict(X), booster.predict(X))


def test_eval_metric_names_and_functions_are_evaluated_beside_the_objective_s():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(600, 4))
    y = (X[:, 0] + 0.5 * rng.normal(size=600) > 0).astype(int)
    weights_seen = []

    def worst(y_true, y_pred):
        return "worst", float(np.max(np.abs(y_true - y_pred))), False

    def weighted_mean(y_true, y_pred, weight):
        weights_seen.append(weight)
        return "weighted_mean", float(np.average(y_pred, weights=weight)), True

    sample_weight = rng.uniform(0.5, 2.0, 600)
    model = GBMOClassifier(n_estimators=8).fit(
        X[:400], y[:400], eval_set=[(X[400:], y[400:])], eval_metric=["auc", worst],
        sample_weight=sample_weight[:400])
    history = model.evals_result_["valid_0"]
    assert set(history) == {"logloss", "auc", "worst"}
    for k in (1, 8):
        proba = model.booster_.predict(X[400:], num_iteration=k)
        assert history["worst"][k - 1] == pytest.approx(np.max(np.abs(y[400:] - proba)))
    # the early-stopping hold-out passes its rows' weights
    GBMORegressor(n_estimators=4, early_stopping_rounds=2, random_state=0).fit(
        X, X[:, 0], sample_weight=sample_weight, eval_metric=weighted_mean)
    assert len(weights_seen) == 4 and len(weights_seen[0]) == 60
    assert set(np.round(weights_seen[0], 12)) <= set(np.round(sample_weight, 12))


def test_early_stopping_watches_an_eval_metric():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(800, 4))
    y = X[:, 0] + 0.3 * rng.normal(size=800)

    def stalls_early(y_true, y_pred):
        return "stalls", float(min(len(y_true), 3)), True  # never improves after round 1

    model = GBMORegressor(n_estimators=200, early_stopping_rounds=5).fit(
        X, y, eval_metric=stalls_early)
    assert model.n_iter_ == 6 and model.best_iteration_ == 1


@pytest.mark.parametrize("eval_metric, error, message", [
    (5, TypeError, "eval_metric 5 is not allowed"),
    ("gini", ValueError, "unknown metric 'gini'"),
])
def test_bad_eval_metric_is_refused(eval_metric, error, message):
    X = np.random.default_rng(0).normal(size=(50, 3))
    with pytest.raises(error, match=message):
        GBMORegressor(n_estimators=2).fit(X, X[:, 0], eval_metric=eval_metric)


@pytest.mark.parametrize("function", [
    lambda y_true: ("x", 1.0, True),
    lambda y_true, y_pred, weight, group: ("x", 1.0, True),
])
def test_an_eval_metric_function_that_cannot_be_called_is_refused(function, no_training):
    X = np.random.default_rng(0).normal(size=(50, 3))
    with pytest.raises(TypeError, match="must take \\(y_true, y_pred\\) or \\(y_true, y_pred, "
                                        "weight\\)"):
        GBMORegressor(n_estimators=2).fit(X, X[:, 0], eval_metric=function)


def _one_eel(n=100):
    """Labels of which the class 'eel' has a single row."""
    return np.array(["cat"] * (n // 2) + ["dog"] * (n - n // 2 - 1) + ["eel"])


_WAYS_OUT = r"allowed: (a validation_fraction that does, )?an eval_set to watch instead"


@pytest.mark.parametrize("model, n_rows, target, message", [
    (GBMOClassifier(early_stopping_rounds=5), 100, _one_eel,
     r"validation_fraction=0.1 of the 100 rows \(10\) to watch, stratified by class, which "
     r"needs 2 rows of every class, and y has 1 row of 'eel'; allowed: an eval_set"),
    (GBMOClassifier(early_stopping_rounds=5), 10, lambda n: np.arange(n) % 3,
     r"the 10 rows \(1\) to watch, stratified by class, which must hold 3 or more rows "
     r"\(one of each class\) and leave 3 or more to train on \(one of each class\); "
     r"allowed: a validation_fraction that does, an eval_set"),
    (GBMOClassifier(early_stopping_rounds=5, validation_fraction=0.9), 10,
     lambda n: np.arange(n) % 3, r"the 10 rows \(9\) to watch.*leave 3 or more to train on"),
    (GBMORegressor(early_stopping_rounds=5), 2, lambda n: np.arange(n, dtype=float),
     r"the 2 rows \(1\) to watch, which must hold 1 or more rows and leave 2 or more to "
     r"train on, more than 2 rows; allowed: an eval_set"),
])
def test_a_hold_out_that_cannot_be_made_is_refused_naming_the_ways_out(model, n_rows, target,
                                                                       message, no_training):
    """train_test_split's own errors ("The least populated classes in y have
    only 1 member", "test_size = 1 should be greater or equal to the number of
    classes = 3") named neither validation_fraction nor eval_set."""
    X = np.random.default_rng(0).normal(size=(n_rows, 3))
    with pytest.raises(ValueError, match=message):
        model.fit(X, target(n_rows))


def test_the_ways_out_of_a_hold_out_that_cannot_be_made_train():
    X = np.random.default_rng(0).normal(size=(100, 3))
    y = _one_eel()
    GBMOClassifier(n_estimators=2, early_stopping_rounds=5).fit(  # 'eel' in training
        X[10:], y[10:], eval_set=[(X[:10], y[:10])])
    GBMOClassifier(n_estimators=2, early_stopping_rounds=5, validation_fraction=0.3,
                   min_samples_leaf=1).fit(X[:10], np.arange(10) % 3)


@pytest.mark.parametrize("params, with_callback, with_eval_set, message", [
    ({}, True, False,
     r"the early stopping callback in callbacks needs a set to watch, and fit has none; "
     r"allowed: eval_set=\[\(X_valid, y_valid\)\], or early_stopping_rounds=N"),
    ({"metric": "None", "early_stopping_rounds": 3}, False, False,
     r"early_stopping_rounds needs a metric to watch, and none is evaluated \(metric='None'"),
    ({"metric": "None"}, True, True,
     r"the early stopping callback in callbacks needs a metric to watch"),
])
def test_early_stopping_without_a_set_or_metric_is_refused_in_fit_s_terms(
        params, with_callback, with_eval_set, message, no_training):
    """The callback's own error, raised after the first round, spoke of
    train's valid_sets."""
    X, y = _noisy_regression(200)
    callbacks = [gbmo.early_stopping(5)] if with_callback else None
    eval_set = [(X[:50], y[:50])] if with_eval_set else None
    with pytest.raises(ValueError, match=message) as raised:
        GBMORegressor(n_estimators=5, **params).fit(X, y, callbacks=callbacks,
                                                    eval_set=eval_set)
    assert "valid_sets" not in str(raised.value)


def test_dart_with_early_stopping_rounds_is_refused_by_name(no_training):
    X = np.random.default_rng(0).normal(size=(50, 3))
    with pytest.raises(ValueError, match="early_stopping_rounds=5 is not taken with "
                                         "boosting='dart'"):
        GBMORegressor(boosting="dart", early_stopping_rounds=5).fit(X, X[:, 0])


@pytest.mark.parametrize("Model", [GBMORegressor, GBMOClassifier])
def test_every_estimator_parameter_but_its_own_reaches_train(Model, monkeypatch):
    """The estimator passes each of its parameters to gbmo.train under its
    name, except those that are its own (rounds, early stopping, seed, ...)."""
    from gbmo import sklearn as module
    from gbmo.params import PARAMS

    seen = {}

    def recording_train(params, *args, **kwargs):
        seen.update(params)
        return train(params, *args, **kwargs)

    train = module.train
    monkeypatch.setattr(module, "train", recording_train)
    X, y = _noisy_regression()
    model = Model(n_estimators=2, cat_smooth=3.5, lambda_l1=0.25, max_bins=31)
    model.fit(X, (y > np.median(y)).astype(int) if Model is GBMOClassifier else y)
    own = set(model.get_params()) - set(module._ESTIMATOR_ONLY)
    assert own <= set(PARAMS)
    for name in own:
        assert seen[name] == model.get_params()[name], name
    assert seen["seed"] is not None


def test_the_metric_parameter_sets_the_recorded_metrics_and_eval_metric_adds_to_them():
    X, y = _noisy_regression()
    pair = [(X[:200], y[:200])]
    model = GBMORegressor(n_estimators=5, metric="mae").fit(X, y, eval_set=pair)
    assert set(model.evals_result_["valid_0"]) == {"mae"}  # one output: no per-output list
    expected = np.mean(np.abs(model.predict(X[:200]) - y[:200]))
    assert model.evals_result_["valid_0"]["mae"][-1] == pytest.approx(expected, rel=1e-9)
    both = GBMORegressor(n_estimators=5, metric="mae").fit(X, y, eval_set=pair,
                                                           eval_metric="r2")
    assert {"mae", "r2"} <= set(both.evals_result_["valid_0"])

    def largest_error(y_true, y_pred):
        return "largest", float(np.max(np.abs(y_true - y_pred))), False

    only = GBMORegressor(n_estimators=5, metric="None").fit(X, y, eval_set=pair,
                                                            eval_metric=largest_error)
    assert set(only.evals_result_["valid_0"]) == {"largest"}
    named = GBMORegressor(n_estimators=5, metric="None").fit(X, y, eval_set=pair,
                                                             eval_metric="l1")
    assert set(named.evals_result_["valid_0"]) == {"mae"}


# -- other parameters, as LightGBM's estimators' **kwargs ------------------------------
def test_other_parameters_and_lightgbm_s_names_reach_train_and_survive_clone():
    from sklearn.base import clone

    X, Y = _multi_output_regression()
    model = GBMORegressor(n_estimators=5, num_leaves=7, reg_lambda=2.0, n_jobs=1,
                          force_col_wise=True, max_drop=3)
    assert model.get_params()["num_leaves"] == 7 and model.num_leaves == 7
    copy = clone(model)
    assert copy.get_params() == model.get_params()
    params = copy.fit(X, Y).booster_.params
    assert (params["max_leaves"], params["lambda_l2"], params["n_threads"]) == (7, 2.0, 1)
    assert max(tree.n_leaves for tree in copy.booster_.trees) == 7
    model.set_params(num_leaves=3)
    assert max(tree.n_leaves for tree in model.fit(X, Y).booster_.trees) == 3


def test_set_params_under_one_name_replaces_another_name_of_the_parameter():
    """GridSearchCV over max_leaves of GBMORegressor(num_leaves=7) said
    max_leaves was given twice."""
    from sklearn.model_selection import GridSearchCV

    X, Y = _multi_output_regression(n=200)
    model = GBMORegressor(n_estimators=3, num_leaves=7).set_params(max_leaves=3)
    assert "num_leaves" not in model.get_params() and not hasattr(model, "num_leaves")
    assert max(tree.n_leaves for tree in model.fit(X, Y).booster_.trees) == 3
    model = GBMORegressor(n_estimators=3, max_leaves=7).set_params(num_leaves=3)
    assert model.get_params()["max_leaves"] is None and model.get_params()["num_leaves"] == 3
    assert max(tree.n_leaves for tree in model.fit(X, Y).booster_.trees) == 3
    model = GBMORegressor(n_estimators=3, num_leaves=7).set_params(max_leaf=4)  # alias for alias
    assert "num_leaves" not in model.get_params()
    assert max(tree.n_leaves for tree in model.fit(X, Y).booster_.trees) == 4
    search = GridSearchCV(GBMORegressor(n_estimators=3, num_leaves=7),
                          {"max_leaves": [2, 3]}, cv=2).fit(X, Y)
    assert max(t.n_leaves for t in search.best_estimator_.booster_.trees) == \
        search.best_params_["max_leaves"]


@pytest.mark.parametrize("kwargs, message", [
    ({"num_leaves": 7, "max_leaves": 9}, "'max_leaves' is given twice"),
    ({"num_iterations": 7}, "the rounds are n_estimators"),
    ({"early_stopping_round": 3}, r"'early_stopping_round' is not taken by the estimators: "
                                  r"early stopping is early_stopping_rounds=N, watching "
                                  r"eval_set .*first_metric_only=True"),
    ({"early_stopping": True}, "'early_stopping' is not taken.*early_stopping_rounds=N"),
    ({"first_metric_only": True}, r"parameter 'first_metric_only' shapes the early stopping of "
                                  r"early_stopping_rounds, which is not set"),
    ({"early_stopping_rounds": 3, "first_metric_only": "yes"},
     "'first_metric_only' must be True or False, got 'yes'"),
    ({"early_stopping_rounds": 3, "early_stopping_min_delta": -1}, "min_delta must be a number"),
    ({"seed": 3}, "'seed' is random_state here"),
    ({"bogus": 1}, "unknown parameter 'bogus'"),
])
def test_bad_other_parameters_are_refused_at_fit(kwargs, message, no_training):
    X, Y = _multi_output_regression(n=100)
    with pytest.raises(ValueError, match=message):
        GBMORegressor(n_estimators=2, **kwargs).fit(X, Y)
    with pytest.raises(ValueError, match=message):  # given together to set_params
        GBMORegressor(n_estimators=2).set_params(**kwargs).fit(X, Y)


def test_lightgbm_s_early_stopping_options_shape_early_stopping_rounds():
    """first_metric_only and early_stopping_min_delta among the params, as
    LightGBM's estimators take them: the first metric alone decides, and a
    margin makes smaller improvements count as none."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(800, 4))
    y = X[:, 0] + 0.3 * rng.normal(size=800)

    def stalls_early(y_true, y_pred):
        return "stalls", float(min(len(y_true), 3)), True  # never improves after round 1

    def fit(**options):
        return GBMORegressor(n_estimators=200, early_stopping_rounds=5, **options).fit(
            X, y, eval_set=[(X, y + 0.1)], eval_metric=["rmse", stalls_early])

    # their defaults without early stopping do nothing, as in LightGBM
    GBMORegressor(n_estimators=2, first_metric_only=False, early_stopping_min_delta=0.0).fit(X, y)
    assert fit().best_iteration_ == 1  # the stalling metric stops it
    assert fit(first_metric_only=True).best_iteration_ > 20
    assert fit(first_metric_only=True, early_stopping_min_delta=1e9).best_iteration_ == 1


def test_predict_takes_lightgbm_s_options():
    X, Y = _multi_output_regression()
    regressor = GBMORegressor(n_estimators=20).fit(X, Y)
    booster = regressor.booster_
    np.testing.assert_array_equal(regressor.predict(X, num_iteration=5),
                                  booster.predict(X, num_iteration=5))
    np.testing.assert_array_equal(regressor.predict(X, pred_leaf=True),
                                  booster.predict(X, pred_leaf=True))
    labels = (X[:, 0] > 0).astype(int) + (X[:, 1] > 0.5)
    classifier = GBMOClassifier(n_estimators=20).fit(X, labels)
    raw = classifier.predict(X, raw_score=True)
    np.testing.assert_array_equal(raw, classifier.booster_.predict(X, raw_score=True))
    early = classifier.predict_proba(X, num_iteration=3)
    np.testing.assert_array_equal(early, classifier.booster_.predict(X, num_iteration=3))
    assert not np.array_equal(early, classifier.predict_proba(X))
    np.testing.assert_array_equal(classifier.predict(X, num_iteration=3),
                                  classifier.classes_[np.argmax(early, axis=1)])
    assert classifier.predict(X, pred_leaf=True).shape == (len(X), 20)


def test_an_estimator_pickled_before_a_parameter_existed_takes_its_default():
    import pickle

    X, Y = _multi_output_regression(n=100)
    model = GBMORegressor(n_estimators=3).fit(X, Y)
    state = model.__getstate__()
    for added in ("cat_l2", "max_cat_to_onehot", "_other_names"):
        del state[added]
    old = GBMORegressor.__new__(GBMORegressor)
    old.__setstate__(state)
    restored = pickle.loads(pickle.dumps(old))
    assert restored.get_params()["cat_l2"] == 10.0
    np.testing.assert_array_equal(restored.predict(X), model.predict(X))
    np.testing.assert_array_equal(clone(restored).fit(X, Y).predict(X), model.predict(X))


def test_an_estimator_pickled_with_its_other_parameters_in_a_dict_keeps_them():
    """gbmo up to a77e956 kept the other parameters' values in _other_params,
    a dict beside their attributes."""
    import pickle

    X, Y = _multi_output_regression(n=100)
    model = GBMORegressor(n_estimators=3, num_leaves=3).fit(X, Y)
    state = model.__getstate__()
    del state["_other_names"]
    state["_other_params"] = {"num_leaves": 3}
    old = GBMORegressor.__new__(GBMORegressor)
    old.__setstate__(state)
    restored = pickle.loads(pickle.dumps(old))
    assert restored.get_params()["num_leaves"] == 3 and not hasattr(restored, "_other_params")
    np.testing.assert_array_equal(clone(restored).fit(X, Y).predict(X), model.predict(X))


def test_other_parameters_are_attributes_as_named_ones_are():
    """Found by a review: a copy.copy shared the dict of the other
    parameters, so set_params on the copy changed the original; and setting
    one as an attribute was not seen by get_params nor by fit."""
    import copy

    X, Y = _multi_output_regression(n=200)
    original = GBMORegressor(n_estimators=3, num_leaves=7)
    copied = copy.copy(original).set_params(num_leaves=3, reg_lambda=5.0)
    assert original.get_params()["num_leaves"] == 7 and "reg_lambda" not in original.get_params()
    assert copied.get_params()["num_leaves"] == 3 and copied.get_params()["reg_lambda"] == 5.0
    model = GBMORegressor(n_estimators=3, num_leaves=31)
    model.num_leaves = 2
    assert model.get_params()["num_leaves"] == 2
    assert max(tree.n_leaves for tree in model.fit(X, Y).booster_.trees) == 2
    assert clone(model).get_params()["num_leaves"] == 2


def test_an_estimator_pickled_when_lambda_l2_defaulted_to_one_takes_an_alias_of_it():
    """Earlier pickles hold lambda_l2=1.0, the default then, which reg_lambda
    given later would collide with; a pickle of now keeps a 1.0 given."""
    import pickle

    X, Y = _multi_output_regression(n=100)
    state = GBMORegressor(n_estimators=3).fit(X, Y).__getstate__()
    del state["_gbmo_pickle_version"]
    state["lambda_l2"] = 1.0
    old = GBMORegressor.__new__(GBMORegressor)
    old.__setstate__(state)
    assert old.get_params()["lambda_l2"] is None
    refit = clone(old).set_params(reg_lambda=5.0).fit(X, Y)
    assert refit.booster_.params["lambda_l2"] == 5.0
    given = pickle.loads(pickle.dumps(GBMORegressor(lambda_l2=1.0, boosting="rf")))
    assert given.get_params()["lambda_l2"] == 1.0


def test_an_estimator_pickled_when_max_leaves_defaulted_to_31_grows_catboost_s_depth():
    """Pickles before version 2 hold max_leaves=31, the default then, which
    cut a symmetric depth of 6 to 4 levels; a pickle of now keeps a 31 given."""
    import pickle

    X, Y = _multi_output_regression(n=300)
    state = GBMORegressor(n_estimators=2, grow_policy="SymmetricTree", depth=6,
                          min_samples_leaf=1).fit(X, Y).__getstate__()
    state["_gbmo_pickle_version"] = 1
    state["max_leaves"] = 31
    old = GBMORegressor.__new__(GBMORegressor)
    old.__setstate__(state)
    assert old.get_params()["max_leaves"] is None
    refit = clone(old).fit(X, Y).booster_
    # more leaves than 4 levels hold (a symmetric node of too few rows stays a leaf)
    assert refit.trees[0].n_leaves > 16
    given = pickle.loads(pickle.dumps(GBMORegressor(max_leaves=31, growth="symmetric")))
    assert given.get_params()["max_leaves"] == 31


# -- LightGBM's objective, eval_metric and eval_set forms -------------------

@pytest.mark.parametrize("given", [{"objective": "huber"}, {"loss": "huber"},
                                   {"objective": "huber", "alpha": 0.5}])
def test_the_regressor_trains_the_objective_it_is_given(given):
    """It trained squared error whatever objective it was given."""
    X, y = _noisy_regression()
    model = GBMORegressor(**SMALL, **given).fit(X, y)
    booster = gbmo.train({**{k: v for k, v in SMALL.items() if k not in (
        "n_estimators", "random_state")}, "seed": 0, "verbosity": 0, **given},
        gbmo.Dataset(X, y), SMALL["n_estimators"])
    assert model.booster_.loss.name == "huber"
    np.testing.assert_allclose(model.predict(X), booster.predict(X))


def test_score_of_several_quantile_levels_is_refused_naming_them():
    """R² compares a prediction per target column; a model of three levels
    failed on scikit-learn's shape check (1 != 3), so did cross_val_score."""
    from sklearn.metrics import r2_score

    X, y = _noisy_regression()
    model = GBMORegressor(objective="quantile", alpha=[0.1, 0.5, 0.9], n_estimators=3).fit(X, y)
    with pytest.raises(ValueError, match=r"this model predicts 3 quantile levels \(0.1, 0.5, "
                                         r"0.9\) for each: score each level with a quantile loss"):
        model.score(X, y)
    one_level = GBMORegressor(objective="quantile", alpha=0.5, n_estimators=3).fit(X, y)
    assert one_level.score(X, y) == pytest.approx(r2_score(y, one_level.predict(X)))


def test_the_regressor_trains_an_objective_function_and_several_quantiles():
    X, y = _noisy_regression()
    calls = []

    def squared_error(y_true, raw):
        calls.append(raw.shape)
        return raw - y_true.reshape(raw.shape), np.ones_like(raw)

    model = GBMORegressor(n_estimators=3, objective=squared_error).fit(X, y)
    # a 1-D target's one output is handed 1-D, as LightGBM's and XGBoost's
    assert calls == [(600,)] * 3 and model.booster_.loss.name == "custom"
    quantiles = GBMORegressor(objective="quantile", alpha=[0.1, 0.9], min_samples_leaf=50,
                              random_state=0).fit(X, y)
    coverage = (y[:, None] <= quantiles.predict(X)).mean(axis=0)
    np.testing.assert_allclose(coverage, [0.1, 0.9], atol=0.05)


@pytest.mark.parametrize("objective, n_classes, loss, n_outputs", [
    ("binary", 2, "sigmoid", 1), ("multiclass", 3, "softmax", 3), ("focal", 2, "focal", 1),
    # a softmax given for two classes is trained as given, an output per class
    ("multiclass", 2, "softmax", 2), ("multi:softprob", 2, "softmax", 2),
])
def test_the_classifier_trains_the_objective_it_is_given(objective, n_classes, loss, n_outputs):
    X, labels = _blobs()
    y = np.minimum(labels, n_classes - 1)
    model = GBMOClassifier(objective=objective, n_estimators=10).fit(
        X, y, eval_set=[(X[:50], y[:50])])
    assert model.booster_.loss.name == loss and model.booster_.n_outputs == n_outputs
    assert model.evals_result_["valid_0"]  # the eval set's labels are encoded for the loss
    proba = model.predict_proba(X)
    assert proba.shape == (len(X), n_classes)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    assert model.score(X, y) > 0.8


@pytest.mark.parametrize("estimator, target", [(GBMORegressor, "two"),
                                               (GBMOClassifier, "multi-label")])
def test_top_k_with_a_dense_y_and_the_dense_split_is_refused(estimator, target, no_training):
    """top_k is the sparse splits' (and a sparse y's, which sets split='sparse')."""
    X, targets = _class_targets()
    with pytest.raises(ValueError, match=r"parameter 'top_k' = 1 takes effect only with "
                                         r"split='sparse' or 'sparse_restricted'"):
        estimator(n_estimators=2, top_k=1).fit(X, targets[target])


_BINARY_ONLY = r"objective '{}' has one output, for two classes, and y has 3 classes \(0, 1, 2\)"
_ONE_CLASS_A_ROW = r"objective 'multiclass' takes one class per row, and y has 2 labels"


def _class_targets():
    """X and its targets of two and three classes, and multi-label ones."""
    import scipy.sparse as sp

    X, labels = _blobs()
    multi_label = np.column_stack([labels == 0, labels == 1]).astype(int)
    return X, {"two": np.minimum(labels, 1), "three": labels, "multi-label": multi_label,
               "sparse multi-label": sp.csr_matrix(multi_label)}


@pytest.mark.parametrize("params, target, message", [
    # LightGBM: "Number of classes must be 1 for non-multiclass training"
    ({"objective": "binary"}, "three", _BINARY_ONLY.format("binary")),
    ({"objective": "cross_entropy"}, "three", _BINARY_ONLY.format("cross_entropy")),
    ({"objective": "mse"}, "three", _BINARY_ONLY.format("mse")),
    ({"objective": "multiclass"}, "multi-label", _ONE_CLASS_A_ROW),
    ({"objective": "multiclass"}, "sparse multi-label", _ONE_CLASS_A_ROW),
    ({"num_class": 5}, "three", r"'num_class' = 5 disagrees with y, which has 3 classes "
                                r"\(0, 1, 2\); allowed: num_class=3, or no num_class"),
    ({"num_class": 5, "objective": "multiclass"}, "three", r"'num_class' = 5 disagrees"),
    ({"num_class": 3}, "two", r"'num_class' = 3 disagrees with y, which has 2 classes"),
    ({"num_class": 3}, "multi-label", r"'num_class' = 3 disagrees with y, which has 2 labels"),
    # LightGBM's alias, and a loss instance's own count
    ({"num_classes": 2}, "three", r"parameter 'num_classes' = 2 disagrees with y"),
    ({"objective": SoftmaxCrossEntropy(num_class=5)}, "three",
     r"the objective's num_class = 5 disagrees with y, which has 3 classes"),
])
def test_an_objective_or_num_class_that_cannot_serve_y_is_refused(params, target, message,
                                                                   no_training):
    X, targets = _class_targets()
    with pytest.raises(ValueError, match=message):
        GBMOClassifier(n_estimators=2, **params).fit(X, targets[target])


def _softmax_gradients(y, raw):
    p = np.exp(raw - raw.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    grad = p.copy()
    grad[np.arange(len(y)), y.astype(int)] -= 1
    return grad, p * (1 - p)


@pytest.mark.parametrize("params, target, n_outputs", [
    ({"num_class": 3}, "three", 3), ({"num_class": 2}, "two", 1),
    ({"num_class": 2}, "multi-label", 2), ({"objective": "binary"}, "multi-label", 2),
    ({"objective": "multiclassova"}, "multi-label", 2),
    # LightGBM's alias and text, as its parameters take them
    ({"num_classes": 3}, "three", 3), ({"objective": "multiclass", "num_classes": 2}, "two", 2),
    ({"num_class": "3"}, "three", 3),
    # a loss of its own outputs is trained as given
    ({"objective": CustomObjective(_softmax_gradients, num_class=3)}, "three", 3),
    ({"objective": SoftmaxCrossEntropy(num_class=3)}, "three", 3),
])
def test_a_num_class_or_objective_that_agrees_with_y_is_taken(params, target, n_outputs):
    X, targets = _class_targets()
    model = GBMOClassifier(n_estimators=2, **params).fit(X, targets[target])
    assert model.booster_.n_outputs == n_outputs


def test_a_classifier_with_an_objective_function_predicts_raw_scores_as_lightgbm():
    X, labels = _blobs()
    y = (labels == 0).astype(int)

    def logistic(y_true, raw):
        p = 1 / (1 + np.exp(-raw))
        return p - y_true.reshape(raw.shape), p * (1 - p)

    model = GBMOClassifier(objective=logistic, n_estimators=10).fit(X, y)
    raw = model.booster_.predict(X, raw_score=True)
    for method in (model.predict, model.predict_proba):
        with pytest.warns(UserWarning, match="returning raw scores instead") as record:
            np.testing.assert_array_equal(method(X), raw)
        assert record[0].filename == __file__  # the caller's line, not gbmo's
    for staged in (model.staged_predict, model.staged_predict_proba):
        with pytest.warns(UserWarning, match="returning raw scores instead"):
            np.testing.assert_array_equal(list(staged(X))[-1], raw)
    assert ((raw > 0) == y).mean() > 0.9  # it did learn the logistic loss


def test_eval_metric_comes_first_so_first_metric_only_watches_it():
    X, y = _noisy_regression(seed=3)
    model = GBMORegressor(n_estimators=300, learning_rate=0.3, random_state=0).fit(
        X[:400], y[:400], eval_set=[(X[400:], y[400:])], eval_metric="l1",
        callbacks=[gbmo.early_stopping(5, first_metric_only=True, verbose=False)])
    history = model.evals_result_["valid_0"]
    assert list(history) == ["mae", "rmse"]
    assert model.best_iteration_ == int(np.argmin(history["l1"])) + 1


def test_the_training_pair_in_eval_set_is_the_training_set_as_in_lightgbm():
    X, y = _noisy_regression(seed=4)
    X_train, y_train, X_valid, y_valid = X[:400], y[:400], X[400:], y[400:]
    model = GBMORegressor(n_estimators=300, early_stopping_rounds=5, random_state=0).fit(
        X_train, y_train, eval_set=[(X_valid, y_valid), (X_train, y_train)])
    assert list(model.evals_result_) == ["valid_0", "training"]
    assert model.n_iter_ < 300  # it watched valid_0, not the training error
    assert model.best_iteration_ == int(np.argmin(model.evals_result_["valid_0"]["rmse"])) + 1
    fitted = np.sqrt(np.mean((model.predict(X_train, num_iteration=model.n_iter_)
                              - y_train) ** 2))
    assert model.evals_result_["training"]["rmse"][-1] == pytest.approx(fitted)


def test_the_default_random_state_gives_the_same_model_every_fit_as_lightgbm():
    X, y = _noisy_regression(seed=5)
    params = {"n_estimators": 15, "subsample": 0.7, "colsample_bytree": 0.6,
              "early_stopping_rounds": 5}
    first, second = (GBMORegressor(**params).fit(X, y) for _ in range(2))
    np.testing.assert_array_equal(first.predict(X), second.predict(X))
    np.testing.assert_array_equal(first.predict(X), GBMORegressor(**params, random_state=0)
                                  .fit(X, y).predict(X))
    drawn = [GBMORegressor(**params, random_state=np.random.RandomState(seed)).fit(X, y)
             for seed in (1, 2)]
    assert not np.array_equal(drawn[0].predict(X), drawn[1].predict(X))


def test_a_scikit_learn_metric_gets_the_eval_weights_by_keyword_as_xgboost_passes_them():
    """mean_absolute_error(y_true, y_pred, *, sample_weight=None): the third
    positional parameter is LightGBM's form, a keyword-only one XGBoost's."""
    from sklearn.metrics import mean_absolute_error

    X, y = _noisy_regression(seed=7)
    weight = np.random.default_rng(7).uniform(0.1, 3.0, size=200)
    model = GBMORegressor(n_estimators=5, eval_metric=mean_absolute_error).fit(
        X[:400], y[:400], eval_set=[(X[400:], y[400:])], eval_sample_weight=[weight])
    expected = mean_absolute_error(y[400:], model.predict(X[400:]), sample_weight=weight)
    unweighted = mean_absolute_error(y[400:], model.predict(X[400:]))
    recorded = model.evals_result_["valid_0"]["mean_absolute_error"][-1]
    assert recorded == pytest.approx(expected, rel=1e-12) and recorded != unweighted


def test_lightgbm_s_fit_keywords_and_attributes():
    X, y = _noisy_regression(seed=6)
    weight = np.random.default_rng(6).uniform(0.2, 3.0, size=200)
    model = GBMORegressor(n_estimators=5, random_state=0).fit(
        X[:400], y[:400], eval_set=[(X[400:], y[400:]), (X[:400], y[:400])],
        eval_names=["holdout", "fit"], eval_sample_weight=[weight, None],
        feature_name=["a", "b", "c", "d", "e"])
    assert list(model.evals_result_) == ["holdout", "fit"]
    weighted_rmse = np.sqrt(np.average((model.predict(X[400:]) - y[400:]) ** 2, weights=weight))
    assert model.evals_result_["holdout"]["rmse"][-1] == pytest.approx(weighted_rmse)
    assert model.feature_name_ == ["a", "b", "c", "d", "e"]
    assert model.n_estimators_ == model.n_iter_ == 5 and model.objective_ == "mse"
    assert GBMORegressor(n_estimators=2).fit(X, y).feature_name_ == [f"f{i}" for i in range(5)]
    with pytest.raises(ValueError, match="eval_sample_weight has 1 entries for 2 eval_set pairs"):
        model.fit(X, y, eval_set=[(X, y), (X, y)], eval_sample_weight=[weight])
    with pytest.raises(ValueError, match="eval_names is given without an eval_set"):
        model.fit(X, y, eval_names=["a"])
    with pytest.raises(ValueError, match="feature_name has 2 names for 5 features"):
        model.fit(X, y, feature_name=["a", "b"])


def test_lightgbm_s_rmse_objective_name_is_squared_error():
    X, y = _noisy_regression(seed=7)
    assert GBMORegressor(n_estimators=2, objective="rmse").fit(X, y).objective_ == "mse"


def test_predict_proba_takes_lightgbm_s_raw_score_and_leaf_options():
    X, y = _blobs()
    model = GBMOClassifier(n_estimators=5).fit(X, y)
    np.testing.assert_array_equal(model.predict_proba(X, raw_score=True),
                                  model.booster_.predict(X, raw_score=True))
    np.testing.assert_array_equal(model.predict_proba(X, pred_leaf=True),
                                  model.booster_.predict_leaf(X))
    np.testing.assert_allclose(model.predict_proba(X, pred_contrib=True).sum(axis=1),
                               model.booster_.predict(X, raw_score=True), atol=1e-10)
    # LightGBM's positional order: raw_score, start_iteration, num_iteration
    np.testing.assert_array_equal(model.predict_proba(X, False, 2),
                                  model.predict_proba(X, start_iteration=2))
    np.testing.assert_array_equal(model.predict(X, True, 1, 3),
                                  model.booster_.predict(X, start_iteration=1, num_iteration=3,
                                                         raw_score=True))


# -- XGBoost's and CatBoost's forms --------------------------------------------

def test_xgboost_s_and_catboost_s_estimator_arguments(capsys):
    X, Y = _multi_output_regression(300)
    xgboost_style = GBMORegressor(
        n_estimators=5, multi_strategy="multi_output_tree", grow_policy="lossguide",
        tree_method="hist", eval_metric="mae", random_state=0)
    xgboost_style.fit(X, Y, eval_set=[(X, Y)], verbose=2)
    plain = GBMORegressor(n_estimators=5, metric="mae", random_state=0).fit(X, Y, eval_set=[(X, Y)])
    np.testing.assert_array_equal(xgboost_style.predict(X), plain.predict(X))
    assert list(xgboost_style.evals_result_["training"]) == ["mae", "mae_per_output"]
    logged = capsys.readouterr().out.splitlines()
    assert [line.split("]")[0] for line in logged] == ["[2", "[4"]
    assert xgboost_style.get_booster() is xgboost_style.booster_
    per_output = GBMORegressor(n_estimators=2, multi_strategy="one_output_per_tree").fit(X, Y)
    assert per_output.booster_.trees_per_round == 3
    catboost_style = GBMORegressor(n_estimators=5, loss_function="MultiRMSE", l2_leaf_reg=3.0,
                                   random_state=0, thread_count=1, verbose=False).fit(X, Y)
    np.testing.assert_array_equal(
        catboost_style.predict(X),
        GBMORegressor(n_estimators=5, lambda_l2=3.0, n_threads=1).fit(X, Y).predict(X))
    with pytest.raises(ValueError, match="verbose must be True, False or a number"):
        plain.fit(X, Y, verbose="yes")
    # fit's verbose alone logs rounds: the constructor's is LightGBM's verbosity
    capsys.readouterr()
    GBMORegressor(n_estimators=3, verbose=True).fit(X, Y, eval_set=[(X, Y)], verbose=False)
    assert capsys.readouterr().out == ""


def test_an_eval_metric_returning_a_number_is_minimised_as_xgboost_s():
    from sklearn.metrics import mean_absolute_error

    X, y = _noisy_regression(seed=8)
    model = GBMORegressor(n_estimators=200, early_stopping_rounds=5, learning_rate=0.3).fit(
        X[:400], y[:400], eval_set=[(X[400:], y[400:])], eval_metric=mean_absolute_error,
        callbacks=[gbmo.early_stopping(5, first_metric_only=True, verbose=False)])
    history = model.evals_result_["valid_0"]["mean_absolute_error"]
    assert history[0] == pytest.approx(mean_absolute_error(
        y[400:], model.predict(X[400:], num_iteration=1)))
    assert model.best_iteration_ == int(np.argmin(history)) + 1 < 200


# what XGBRegressor().get_params() holds besides its objective: None for "not set"
_XGBOOST_UNSET = {"n_estimators": None, "max_depth": None, "max_leaves": None,
                  "learning_rate": None, "gamma": None, "subsample": None, "reg_lambda": None,
                  "colsample_bylevel": None, "importance_type": None, "base_score": None,
                  "validate_parameters": None, "enable_categorical": False, "missing": np.nan}


def test_xgboost_s_unset_parameters_and_settings_of_what_gbmo_does_train_the_defaults():
    X, y = _noisy_regression()
    default = GBMORegressor().fit(X, y)
    given = GBMORegressor(objective="reg:squarederror", **_XGBOOST_UNSET).fit(X, y)
    np.testing.assert_array_equal(given.predict(X), default.predict(X))
    assert given.n_estimators_ == 100 and given.get_num_boosting_rounds() == 100
    np.testing.assert_array_equal(given.feature_importances_, default.feature_importances_)
    booster = gbmo.train({"learning_rate": None, "enable_categorical": True, "verbosity": -1},
                         gbmo.Dataset(X, y), 5)
    np.testing.assert_array_equal(booster.predict(X), gbmo.train(
        {"verbosity": -1}, gbmo.Dataset(X, y), 5).predict(X))
    with pytest.raises(ValueError, match="unknown parameter 'lerning_rate'; did you mean "
                                         "learning_rate"):  # a misspelt None is no "not set"
        gbmo.train({"lerning_rate": None}, gbmo.Dataset(X, y), 1)
    with pytest.raises(ValueError, match=r"parameter 'missing' = -999 is XGBoost's marker of "
                                         r"missing values; gbmo's is NaN alone: replace the "
                                         r"marker with NaN first"):
        GBMORegressor(missing=-999).fit(X, y)


def test_xgboost_s_fit_predict_and_constructor_keywords_are_answered_with_gbmo_s_way():
    X, y = _noisy_regression()
    model = GBMORegressor(n_estimators=3).fit(X, y)
    classifier = GBMOClassifier(n_estimators=3).fit(X, y > 0)
    refused = [
        (lambda: model.fit(X, y, early_stopping_rounds=3), "GBMORegressor.fit.. takes no "
         "'early_stopping_rounds': give it to the estimator's constructor"),
        (lambda: classifier.fit(X, y > 0, feature_weights=np.ones(5)), "GBMOClassifier.fit.. "
         "takes no 'feature_weights': give colsample_bytree or colsample_bynode instead"),
        (lambda: model.predict(X, base_margin=np.zeros(600)), "GBMORegressor.predict.. takes "
         r"no 'base_margin': give predict\(X, output_margin=True\) \+ base_margin"),
        (lambda: classifier.predict_proba(X, base_margin=0), "predict_proba.. takes no "
         "'base_margin'"),
        (lambda: classifier.predict(X, nthread=2), "GBMOClassifier.predict.. got an "
         "unexpected keyword argument 'nthread'"),
    ]
    for call, message in refused:
        with pytest.raises(TypeError, match=message):
            call()
    with pytest.raises(ValueError, match=r"parameter 'callbacks' is XGBoost 2's, and gbmo does "
                                         r"not take it: give them to fit\(callbacks=\[...\]\)"):
        GBMORegressor(callbacks=[gbmo.log_evaluation(1)]).fit(X, y)


def test_catboost_s_habits_are_answered_with_gbmo_s_way():
    """Pool-like Datasets, CatBoost's keywords and parameters, an object as
    loss_function, cat_features given twice, text in a numpy array."""
    pd = pytest.importorskip("pandas")
    X, y = _noisy_regression()
    labels = (y > 0).astype(int)
    model = GBMORegressor(n_estimators=2).fit(X, y)
    refused = [
        (lambda: GBMORegressor().fit(gbmo.Dataset(X, y)), TypeError,
         "X is a gbmo.Dataset, where the estimators take arrays or DataFrames"),
        (lambda: GBMORegressor().fit(X, y, eval_set=gbmo.Dataset(X, y)), TypeError,
         "eval_set is a gbmo.Dataset"),
        (lambda: GBMORegressor().fit(X, y, cat_features=[0]), TypeError,
         "takes no 'cat_features': give cat_features to the constructor"),
        (lambda: model.predict(X, prediction_type="Class"), TypeError,
         "takes no 'prediction_type': give predict_proba"),
        (lambda: GBMOClassifier(class_weights={0: 1, 1: 2}).fit(X, labels), ValueError,
         "'class_weights' is CatBoost's.*class_weight takes a dict"),
        (lambda: GBMORegressor(loss_function=object()).fit(X, y), TypeError,
         r"'loss_function' \(gbmo's 'objective'\) must be a name, a function \(y_true, "
         r"raw_pred\) -> \(grad, hess\) or a gbmo.Loss instance"),
        (lambda: GBMORegressor(cat_features=[1]).fit(
            np.array([[1.0, "a"], [2.0, "b"]] * 50, dtype=object), np.arange(100.0)),
         ValueError, "text is read as categories only in a pandas DataFrame's columns"),
    ]
    for call, error, message in refused:
        with pytest.raises(error, match=message):
            call()
    frame = pd.DataFrame({"city": np.array(["a", "b", "c"])[np.arange(600) % 3],
                          "shop": np.array(["x", "y"])[np.arange(600) % 2], "x": X[:, 0]})
    with pytest.raises(ValueError, match="the categorical features are given twice: as the "
                                         "parameter 'cat_features' and as fit"):
        GBMORegressor(cat_features=["city"]).fit(frame, y, categorical_feature=["shop"])


def test_xgboost_s_text_forms_of_constraints_are_their_lists():
    X, y = _noisy_regression()
    listed = GBMORegressor(n_estimators=5, monotone_constraints=[1, 0, 0, 0, 0],
                           interaction_constraints=[[0, 1], [2, 3, 4]]).fit(X, y).predict(X)
    as_text = GBMORegressor(n_estimators=5, monotone_constraints="(1,0,0,0,0)",
                            interaction_constraints="[[0, 1], [2, 3, 4]]").fit(X, y)
    np.testing.assert_array_equal(as_text.predict(X), listed)


@pytest.mark.parametrize("kwargs, error, message", [
    ({"interaction_constraints": {"f0": 1}}, TypeError, "takes a list"),
    ({"interaction_constraints": "[[0, 1], [2"}, ValueError, "must be a list of lists"),
    ({"tree_method": "exact"}, ValueError, "'tree_method' = 'exact' is not allowed"),
])
def test_xgboost_s_forms_gbmo_does_not_take_are_refused_by_name(kwargs, error, message):
    X, y = _noisy_regression()
    with pytest.raises(error, match=message):
        GBMORegressor(n_estimators=2, **kwargs).fit(X, y)


def test_an_eval_sample_weight_of_the_wrong_length_is_named():
    X, y = _noisy_regression()
    with pytest.raises(ValueError, match=r"eval_sample_weight\[0\] must have shape \(600,\)"):
        GBMORegressor(n_estimators=2).fit(X, y, eval_set=[(X.copy(), y)],
                                          eval_sample_weight=[np.ones(5)])


def test_a_callback_that_is_not_callable_is_refused_by_name():
    X, y = _noisy_regression()
    with pytest.raises(TypeError, match="callbacks must be callables taking a CallbackEnv.*"
                                        "builtins.object"):
        GBMORegressor(n_estimators=2).fit(X, y, callbacks=[object()])


def test_xgboost_s_constructor_eval_metric_replaces_the_objective_s_and_may_be_a_function():
    """As XGBoost's: the objective's metric is replaced (not added to), and a
    function is taken too (it was refused as 'metric must be a string');
    fit's eval_metric, LightGBM's, still comes first."""
    from sklearn.metrics import mean_absolute_error

    X, y = _noisy_regression(seed=9)
    fit_data = (X[:400], y[:400])
    both = GBMORegressor(n_estimators=3, eval_metric="mae").fit(
        *fit_data, eval_set=[(X[400:], y[400:])], eval_metric="l2")
    assert list(both.evals_result_["valid_0"]) == ["mse", "mae"]
    function = GBMORegressor(n_estimators=3, eval_metric=mean_absolute_error).fit(
        *fit_data, eval_set=[(X[400:], y[400:])])
    assert list(function.evals_result_["valid_0"]) == ["mean_absolute_error"]
    with pytest.raises(ValueError, match="'metric' is given twice"):
        GBMORegressor(n_estimators=3, metric="rmse", eval_metric="mae").fit(*fit_data)


def test_an_objective_given_twice_through_aliases_is_refused_by_name():
    X, y = _noisy_regression()
    with pytest.raises(ValueError, match="parameter 'objective' is given twice"):
        GBMORegressor(n_estimators=2, objective="huber", loss_function="RMSE").fit(X, y)


def test_the_verbose_alias_prints_the_early_stopping_line(capsys):
    X, y = _noisy_regression(seed=10)
    GBMORegressor(n_estimators=300, early_stopping_rounds=2, verbose=1,
                  learning_rate=0.5).fit(X, y)
    assert "Early stopping, best iteration is:" in capsys.readouterr().out


def test_xgboost_s_predict_keywords():
    X, y = _blobs()
    classifier = GBMOClassifier(n_estimators=5).fit(X, y)
    np.testing.assert_array_equal(classifier.predict(X, output_margin=True),
                                  classifier.booster_.predict(X, raw_score=True))
    np.testing.assert_array_equal(classifier.predict_proba(X, iteration_range=(1, 4)),
                                  classifier.predict_proba(X, start_iteration=1, num_iteration=3))
    np.testing.assert_array_equal(classifier.predict(X, iteration_range=(0, 0)),
                                  classifier.predict(X))
    regressor = GBMORegressor(n_estimators=5).fit(X, X[:, 0])
    np.testing.assert_array_equal(regressor.predict(X, iteration_range=(2, 5)),
                                  regressor.predict(X, start_iteration=2, num_iteration=3))
    with pytest.raises(ValueError, match="give the rounds once"):
        regressor.predict(X, num_iteration=2, iteration_range=(0, 3))
    with pytest.raises(ValueError, match=r"0 <= begin < end, got \(3, 3\)"):
        regressor.predict(X, iteration_range=(3, 3))


def test_an_unfitted_estimator_s_raw_leaf_and_contribution_predictions_say_not_fitted():
    from sklearn.exceptions import NotFittedError

    X, _ = _blobs(20)
    for model in (GBMOClassifier(), GBMORegressor()):
        for option in ("raw_score", "pred_leaf", "pred_contrib"):
            with pytest.raises(NotFittedError):
                model.predict(X, **{option: True})
        with pytest.raises(NotFittedError):
            model.apply(X)


def test_lightgbm_s_n_features_and_xgboost_s_get_num_boosting_rounds():
    X, y = _blobs(100)
    model = GBMOClassifier(n_estimators=3)
    assert model.get_num_boosting_rounds() == 3
    assert model.fit(X, y).n_features_ == model.n_features_in_ == 4


def test_fit_takes_xgboost_s_names_of_weights_margins_and_a_model_to_continue():
    X, y = _blobs(300)
    weight = np.linspace(0.5, 2.0, 200)
    margin = np.tile([0.3, -0.2, 0.1], (300, 1))
    first = GBMOClassifier(n_estimators=3).fit(X[:200], y[:200])
    common = {"eval_set": [(X[200:], y[200:])]}
    xgboost_names = GBMOClassifier(n_estimators=4).fit(
        X[:200], y[:200], sample_weight=weight, base_margin=margin[:200],
        sample_weight_eval_set=[weight[:100]], base_margin_eval_set=[margin[200:]],
        xgb_model=first, **common)
    lightgbm_names = GBMOClassifier(n_estimators=4).fit(
        X[:200], y[:200], sample_weight=weight, init_score=margin[:200],
        eval_sample_weight=[weight[:100]], eval_init_score=[margin[200:]], init_model=first,
        **common)
    np.testing.assert_array_equal(xgboost_names.predict_proba(X), lightgbm_names.predict_proba(X))
    assert xgboost_names.evals_result_ == lightgbm_names.evals_result_
    assert xgboost_names.booster_.num_trees() == 7
    with pytest.raises(ValueError, match="give init_score once: as init_score or as base_margin"):
        GBMOClassifier(n_estimators=2).fit(X, y, init_score=margin, base_margin=margin)


def test_apply_is_xgboost_s_leaf_indices_of_a_range_of_rounds():
    X, y = _blobs()
    classifier = GBMOClassifier(n_estimators=5, max_leaves=6).fit(X, y)
    leaves = classifier.apply(X)
    assert leaves.shape == (len(X), 5 * classifier.booster_.num_model_per_iteration())
    np.testing.assert_array_equal(leaves, classifier.booster_.predict_leaf(X))
    np.testing.assert_array_equal(classifier.apply(X, iteration_range=(1, 3)),
                                  classifier.booster_.predict_leaf(X, start_iteration=1,
                                                                   num_iteration=2))
    regressor = GBMORegressor(n_estimators=4, tree_mode="single_output").fit(X, X[:, :2])
    assert regressor.apply(X).shape == (len(X), 8)
    with pytest.raises(ValueError, match=r"0 <= begin < end, got \(2, 1\)"):
        regressor.apply(X, iteration_range=(2, 1))


def test_xgboost_s_best_iteration_best_score_and_evals_result():
    X, y = _noisy_regression(seed=11)
    model = GBMORegressor(n_estimators=300, early_stopping_rounds=5, learning_rate=0.3).fit(
        X[:400], y[:400], eval_set=[(X[400:], y[400:])], eval_metric="mae")
    assert model.best_iteration == model.best_iteration_ - 1  # 0-based, as XGBoost's
    history = model.evals_result()["validation_0"]
    assert history is model.evals_result_["valid_0"]
    assert model.best_score == history["rmse"][model.best_iteration]
    unstopped = GBMORegressor(n_estimators=3).fit(X, y)
    with pytest.raises(AttributeError, match="exists after early stopping only"):
        unstopped.best_iteration
    with pytest.raises(AttributeError, match="exists after early stopping only"):
        unstopped.best_score


def test_integer_dataframe_columns_name_the_features_as_the_dataset_does():
    pd = pytest.importorskip("pandas")
    X = pd.DataFrame(np.random.default_rng(22).normal(size=(100, 3)))
    model = GBMORegressor(n_estimators=2).fit(X, X[0].to_numpy())
    assert model.booster_.feature_name() == ["0", "1", "2"] == model.feature_name_
    assert gbmo.train({"verbosity": 0}, gbmo.Dataset(X, X[0].to_numpy()), 1).feature_name() \
        == ["0", "1", "2"]


def test_an_estimator_with_a_loss_instance_clones_for_model_selection():
    """scikit-learn's clone copies a Loss given as the objective (it called the
    loss's get_params(deep=False), which losses do not take): GridSearchCV and
    cross_val_score work with the README's multi-task estimator."""
    from sklearn.model_selection import GridSearchCV, cross_val_score

    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3))
    Y = np.c_[(X[:, 0] > 0).astype(float), X[:, 1], X[:, 2]]
    loss = gbmo.MultiTaskLoss([("sigmoid", [0]), ("mse", [1, 2])])
    model = GBMORegressor(n_estimators=5, objective=loss)
    copied = clone(model)
    assert copied.objective is not loss and type(copied.objective) is type(loss)
    np.testing.assert_array_equal(copied.fit(X, Y).predict(X),
                                  GBMORegressor(n_estimators=5, objective=loss).fit(X, Y)
                                  .predict(X))
    assert len(cross_val_score(model, X, Y, cv=2)) == 2
    search = GridSearchCV(model, {"max_leaves": [4, 8]}, cv=2).fit(X, Y)
    assert search.best_params_["max_leaves"] in (4, 8)


def test_eval_class_weight_weighs_each_eval_set_as_lightgbm_s_classifier():
    """LightGBM's classifier takes it, 8th in its fit's order; gbmo refused
    the keyword, and a positional call shifted eval_init_score into it."""
    from sklearn.metrics import log_loss
    from sklearn.utils.class_weight import compute_sample_weight

    rng = np.random.default_rng(3)
    X = rng.normal(size=(900, 4))
    y = np.where(X[:, 0] + 0.5 * rng.normal(size=900) > 0.8, "rare", "common")
    X_valid, y_valid = X[600:], y[600:]
    weight = rng.uniform(0.5, 2.0, size=300)
    for class_weight in ({"common": 1.0, "rare": 4.0}, "balanced"):
        model = GBMOClassifier(n_estimators=10, verbose=-1).fit(
            X[:600], y[:600], None, None, [(X_valid, y_valid)], None, [weight], [class_weight])
        expected = log_loss(y_valid, model.predict_proba(X_valid),
                            sample_weight=weight * compute_sample_weight(class_weight, y_valid))
        assert model.evals_result_["valid_0"]["logloss"][-1] == pytest.approx(expected,
                                                                             rel=1e-9)
    unweighted = GBMOClassifier(n_estimators=10, verbose=-1).fit(
        X[:600], y[:600], eval_set=[(X_valid, y_valid)])
    assert unweighted.evals_result_["valid_0"]["logloss"][-1] == pytest.approx(
        log_loss(y_valid, unweighted.predict_proba(X_valid)), rel=1e-9)


@pytest.mark.parametrize("estimator, fit_args, message", [
    (GBMOClassifier, {"eval_class_weight": [{"x": 1.0}]},
     r"eval_class_weight\[0\] = \{'x': 1.0\} names a label not in y: 'x'"),
    (GBMOClassifier, {"eval_class_weight": ["even"]},
     r"eval_class_weight\[0\] = 'even' is not allowed; allowed: None, 'balanced'"),
    (GBMOClassifier, {"eval_class_weight": [None, None]},
     "eval_class_weight has 2 entries for 1 eval_set pairs"),
    (GBMORegressor, {"eval_class_weight": ["balanced"]},
     r"eval_class_weight\[0\] weighs classes, for GBMOClassifier"),
])
def test_eval_class_weight_refusals(estimator, fit_args, message):
    X = np.random.default_rng(0).normal(size=(200, 3))
    y = (X[:, 0] > 0).astype(int)
    with pytest.raises(ValueError, match=message):
        estimator(n_estimators=2, verbose=-1).fit(X, y, eval_set=[(X, 1 - y)], **fit_args)


def test_eval_class_weight_needs_an_eval_set_of_single_labels():
    X = np.random.default_rng(0).normal(size=(200, 3))
    y = (X[:, 0] > 0).astype(int)
    with pytest.raises(ValueError, match="eval_class_weight is given without an eval_set"):
        GBMOClassifier(n_estimators=2, verbose=-1).fit(X, y, eval_class_weight=["balanced"])
    multi_label = np.column_stack([y, 1 - y])
    with pytest.raises(ValueError, match=r"eval_class_weight\[0\] = 'balanced' applies to "
                                         "single-label targets"):
        GBMOClassifier(n_estimators=2, verbose=-1).fit(
            X, multi_label, eval_set=[(X, multi_label[::-1])], eval_class_weight="balanced")


def test_warm_start_continues_the_fitted_rounds_up_to_n_estimators():
    """scikit-learn's gradient boosting's warm_start: a fit of a fitted
    estimator adds rounds up to n_estimators in all, the model then being
    (without row or feature sampling, whose draws a continued run makes
    anew) the one a single fit of that many rounds gives."""
    rng = np.random.default_rng(12)
    X = rng.normal(size=(400, 4))
    y = X[:, 0] + X[:, 1] ** 2 + 0.1 * rng.normal(size=400)
    classes = np.digitize(X[:, 0], [-0.5, 0.5])
    for make, target in ((GBMORegressor, y), (GBMOClassifier, classes)):
        warm = make(n_estimators=6, max_leaves=7, warm_start=True).fit(X, target)
        first = warm.booster_
        warm.set_params(n_estimators=15).fit(X, target)
        once = make(n_estimators=15, max_leaves=7).fit(X, target)
        assert warm.n_iter_ == 15 and warm.booster_.num_trees() == once.booster_.num_trees()
        expected = once.predict_proba(X) if make is GBMOClassifier else once.predict(X)
        got = warm.predict_proba(X) if make is GBMOClassifier else warm.predict(X)
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)
        assert first.num_trees() < warm.booster_.num_trees()
        fitted = warm.booster_
        assert warm.fit(X, target).booster_ is fitted  # as many rounds: none added
        cold = make(n_estimators=6, max_leaves=7).fit(X, target)
        assert cold.set_params(n_estimators=9).fit(X, target).n_iter_ == 9  # fit anew
    assert "warm_start" in GBMORegressor().get_params()
    assert GBMORegressor(warm_start=None).fit(X, y).n_iter_ == 100  # None: not set
    assert clone(GBMORegressor(warm_start=True)).warm_start is True


def test_warm_start_refusals_name_what_is_allowed():
    rng = np.random.default_rng(13)
    X = rng.normal(size=(200, 3))
    y = (X[:, 0] > 0).astype(int)
    warm = GBMOClassifier(n_estimators=5, warm_start=True).fit(X, y)
    with pytest.raises(ValueError, match="n_estimators=3 must be at least n_iter_=5 \\(the "
                                         "fitted rounds\\) when warm_start=True; allowed: a "
                                         "larger n_estimators, or warm_start=False"):
        warm.set_params(n_estimators=3).fit(X, y)
    with pytest.raises(ValueError, match="warm_start=True continues the fitted model, so fit "
                                         "takes no init_model"):
        warm.set_params(n_estimators=8).fit(X, y, init_model=warm.booster_)
    with pytest.raises(ValueError, match="warm_start=True's fitted model was fitted on the "
                                         "classes \\[0, 1\\], y has \\[0, 2\\]"):
        warm.fit(X, 2 * y)
    # as many rounds as fitted: none to add, X and y still checked against the model
    with pytest.raises(ValueError, match="X has 2 features, but GBMOClassifier is expecting 3"):
        warm.set_params(n_estimators=5).fit(X[:, :2], y)
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        warm.fit(X, y[:50])
    with pytest.raises(ValueError, match="warm_start=True's fitted model was fitted on the "
                                         "classes"):
        warm.fit(X, 2 * y)
    assert warm.n_iter_ == 5 and warm.n_features_in_ == 3  # nothing of the refused fits kept
    import scipy.sparse as sp

    labels = sp.csr_matrix((X[:, :2] > 0).astype(float))
    sparse = GBMOClassifier(n_estimators=2, warm_start=True, top_k=1).fit(X, labels)
    with pytest.raises(ValueError, match="warm_start=True does not continue a model fitted on "
                                         "a sparse y yet"):
        sparse.set_params(n_estimators=4).fit(X, labels)
    with pytest.raises(ValueError, match="parameter 'warm_start' must be True or False, got "
                                         "'yes'"):
        GBMORegressor(warm_start="yes").fit(X, X[:, 0])


@pytest.mark.parametrize("kind", ["None", "pd.NA object", "pd.NA string"])
def test_a_missing_label_among_text_labels_is_named(kind):
    """Found by an audit: None among string labels raised numpy's sort
    error ("'<' not supported between instances of 'NoneType' and 'str'"),
    pd.NA scikit-learn's "boolean value of NA is ambiguous" (a review)."""
    pd = pytest.importorskip("pandas")
    X = np.random.default_rng(0).normal(size=(200, 3))
    y = pd.Series(["a", "b"] * 100, dtype="string" if kind == "pd.NA string" else object)
    y[[3, 8]] = None if kind == "None" else pd.NA
    with pytest.raises(ValueError, match=r"y holds a missing label \(None, pd.NA or NaN\) at 2 "
                                         r"row\(s\), the first row 3; a classifier needs a label"):
        GBMOClassifier(n_estimators=2).fit(X, y)
    labels = pd.Series(["a", "b"] * 100)
    with pytest.raises(ValueError, match=r"eval_set y holds a missing label .* the first row 3"):
        GBMOClassifier(n_estimators=2).fit(X, labels, eval_set=[(X, y)])
