"""Bad input raises a clear error before any work is done."""
import re

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
])
def test_bad_features(bad_X, error, message):
    with pytest.raises(error, match=message):
        gbmo.Dataset(bad_X, np.zeros(len(bad_X)))


def test_one_dimensional_x_says_how_to_give_one_feature_or_one_row():
    one_feature = (r"for one feature, as one column, an \(n, 1\) array \(X.reshape\(-1, 1\), "
                   r"a Series' to_frame\(\)\)")
    with pytest.raises(ValueError, match=r"X must be 2-D \(n_rows, n_features\), got shape "
                                         r"\(50,\); for one row, give it as a \(1, "
                                         r"n_features\) array \(X.reshape\(1, -1\), a "
                                         r"DataFrame's df.iloc\[\[i\]\]\); " + one_feature):
        gbmo.Dataset(X[:, 0], y)
    booster = gbmo.train({"verbosity": -1}, gbmo.Dataset(X, y), 2)
    with pytest.raises(ValueError, match=r"got shape \(3,\); for one row, give it"):
        booster.predict(X[0])  # the advice of one column alone was wrong here
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame(X, columns=list("abc"))
    series_message = (r"X is a pandas Series, where a table of rows is taken: give one row as "
                      r"a one-row DataFrame \(df.iloc\[\[i\]\]\), one feature as a column "
                      r"\(series.to_frame\(\)\)")
    with pytest.raises(ValueError, match=series_message):
        booster.predict(frame.iloc[0])  # was "X has dtype object"
    with pytest.raises(ValueError, match=series_message):
        gbmo.Dataset(frame.a, y)


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


def test_a_target_of_text_categories_is_told_its_codes():
    pd = pytest.importorskip("pandas")
    with pytest.raises(TypeError, match=r"y has dtype object \(a category column: y.cat.codes "
                                        r"gives its classes as integers\)"):
        gbmo.Dataset(X, pd.Series(pd.Categorical(["a", "b"] * 25)))


@pytest.mark.parametrize("bad", [np.inf, -np.inf])
def test_infinite_target(bad):
    y_bad = y.copy()
    y_bad[3] = bad
    with pytest.raises(ValueError, match="infinite values.*infinities are not allowed"):
        _train(y=y_bad)


def test_nan_target_is_refused_by_a_loss_that_does_not_mask():
    y_bad = np.arange(50) % 3
    with pytest.raises(ValueError, match="takes a class index for every row, and y holds NaN"):
        _train(y=np.where(np.arange(50) == 3, np.nan, y_bad), params={"objective": "softmax"})


def test_output_without_any_observed_target():
    Y = np.c_[y, np.full(50, np.nan)]
    with pytest.raises(ValueError, match=r"output\(s\) \[1\] have no observed target"):
        _train(y=Y)


def test_bad_weights():
    with pytest.raises(ValueError, match="weight must have shape"):
        gbmo.Dataset(X, y, weight=np.ones(3))
    with pytest.raises(ValueError, match="finite and >= 0; it holds negative values"):
        gbmo.Dataset(X, y, weight=-np.ones(50))
    with pytest.raises(ValueError, match="finite and >= 0; it holds NaN or infinite values"):
        gbmo.Dataset(X, y, weight=np.r_[np.ones(49), np.inf])
    with pytest.raises(ValueError, match="at least one non-zero weight: with all 0"):
        gbmo.Dataset(X, y, weight=np.zeros(50))
    with pytest.raises(TypeError, match="weight must be numeric"):
        gbmo.Dataset(X, y, weight=["a"] * 50)
    # float32 gradients times 1e39 were inf, and the model all NaN
    # each within its bound, their product past float32's: refused at the first round
    with pytest.raises(ValueError, match=r"objective 'mse': this round's gradients or hessians "
                                         r"overflowed float32 \(inf or NaN\): the weights times "
                                         r"the targets are too large \(weights up to 1e\+29\)"):
        gbmo.train({"verbosity": -1}, gbmo.Dataset(X, 1e10 * y, weight=np.full(50, 1e29)), 2)
    with pytest.raises(ValueError, match=r"weight holds values up to 1e\+39; allowed: <= "
                                         r"1e\+30 \(the gradients and hessians the weights "
                                         r"multiply are float32\): rescale them"):
        gbmo.Dataset(X, y, weight=np.r_[np.ones(49), 1e39])
    assert np.array_equal(gbmo.Dataset(X, y, weight=2).weight, np.full(50, 2.0))


@pytest.mark.parametrize("params, message", [
    ({"max_leafs": 3}, "unknown parameter 'max_leafs'.*max_leaves"),
    ({"learning_rate": 0}, r"'learning_rate' = 0.0 is out of range; allowed: \(0.0"),
    ({"max_leaves": 1}, r"'max_leaves' = 1 is out of range; allowed: \[2"),
    ({"max_bins": 65536}, r"'max_bins' = 65536 is out of range; allowed: \[2, 65535\]"),
    ({"lambda_l2": -1}, "'lambda_l2' = -1.0 is out of range"),
    ({"max_leaves": 2.5}, "'max_leaves' must be an integer"),
    ({"objective": "hinge"}, "unknown objective .hinge.; known objectives: .*mse, "
                             "multiclassova, multitask.*sigmoid, "
                             r"softmax.* \(also regression, .*multiclass.*binary"),
    ({"metric": "gini"}, "unknown metric 'gini'; known metrics: accuracy, auc"),
])
def test_bad_parameters_name_the_parameter_value_and_range(params, message):
    with pytest.raises(ValueError, match=message):
        _train(params)


def test_wrong_parameter_type():
    with pytest.raises(TypeError, match="'max_leaves' must be a number"):
        _train({"max_leaves": "many"})


def test_alias_given_twice_names_both_keys():
    with pytest.raises(ValueError, match="'max_leaves' is given twice, as 'num_leaves' and as "
                                         "'max_leaves'"):
        _train({"num_leaves": 5, "max_leaves": 6})
    with pytest.raises(ValueError, match="'num_iterations' is given twice, as 'num_trees' and "
                                         "as 'n_estimators'"):
        _train({"num_trees": 5, "n_estimators": 6})


def test_an_out_of_range_value_names_the_key_the_user_gave():
    with pytest.raises(ValueError, match=r"'max_bin' \(gbmo's 'max_bins'\) = 70000 is out of "
                                         r"range; allowed: \[2, 65535\]"):
        _train({"max_bin": 70000})
    with pytest.raises(ValueError, match=r"parameter 'max_bins' = 1 is out of range"):
        _train({"max_bins": 1})


def test_numbers_given_as_text_are_read_as_lightgbm_reads_them():
    from gbmo.params import resolve_params

    resolved = resolve_params({"learning_rate": "0.05", "num_leaves": "7", "lambda_l2": "1e-3"})
    assert (resolved["learning_rate"], resolved["max_leaves"], resolved["lambda_l2"]) == (
        0.05, 7, 0.001)
    assert isinstance(resolved["max_leaves"], int)
    with pytest.raises(ValueError, match="'num_leaves' \\(gbmo's 'max_leaves'\\) must be an "
                                         "integer, got 7.5"):
        resolve_params({"num_leaves": "7.5"})
    with pytest.raises(ValueError, match="'learning_rate' = nan is out of range"):
        resolve_params({"learning_rate": "nan"})
    # an integer parameter at infinity is out of range, not an OverflowError
    for infinite in ("inf", float("inf"), float("-inf")):
        with pytest.raises(ValueError, match="'max_leaves' = -?inf is out of range"):
            resolve_params({"max_leaves": infinite})
    with pytest.raises(ValueError, match="'max_leaves' = 1000000000.* is out of range"):
        resolve_params({"max_leaves": 10 ** 309})  # beyond a float: still a number
    # lists of numbers as text, element by element or LightGBM's "1,0,-1"
    listed = resolve_params({"monotone_constraints": ["1", "0", "-1"],
                             "max_bin_by_feature": "3,20,40",
                             "interaction_constraints": [["0", "1"], ["2"]]})
    assert listed["monotone_constraints"] == [1, 0, -1]
    assert listed["max_bins_by_feature"] == [3, 20, 40]
    # text in groups may name features, so it is read as an index when the run
    # knows the names: none is "0", "1" or "2" here
    from gbmo.params import constraints_at_positions

    assert constraints_at_positions(listed, ["a", "b", "c"], 3)["interaction_constraints"] == [
        [0, 1], [2]]
    assert resolve_params({"monotone_constraints": "1,0,-1"})["monotone_constraints"] == [
        1, 0, -1]
    assert resolve_params({"monotone_constraints": "1"})["monotone_constraints"] == [1]
    assert resolve_params({"monotone_constraints": "(1,0)"})["monotone_constraints"] == [1, 0]
    with pytest.raises(TypeError, match="'monotone_constraints' takes a list, got 'up'"):
        resolve_params({"monotone_constraints": "up"})


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
    ("softmax", np.arange(60) % 3, np.full(20, 4),
     "validation set 'valid_0': class index 4 is out of range for num_class=3"),
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


# -- non-numeric columns ------------------------------------------------------

def _frame_with(kind):
    """A DataFrame of a float column "a" and one non-numeric column, its name and dtype."""
    pd = pytest.importorskip("pandas")
    n = len(y)
    column = {
        "object": pd.Series(np.array(["x", "y"])[np.arange(n) % 2], dtype=object),
        "string": pd.array(np.array(["x", "y"])[np.arange(n) % 2], dtype="string"),
        # date_range(unit=) is pandas >= 2; numpy's datetime64[ns] reads alike in every pandas
        "datetime64[ns]": pd.Series(np.datetime64("2020-01-01", "ns")
                                    + np.arange(n) * np.timedelta64(1, "D")),
    }[kind]
    name = f"my {kind} column"
    return pd.DataFrame({"a": X[:, 0], name: column}), name


NON_NUMERIC = ["object", "string", "datetime64[ns]"]  # category columns are categorical


def _names_the_column(frame, name, where="X"):
    dtype = str(frame[name].dtype)
    message = (rf"{where} has 1 non-numeric column: '{re.escape(name)}' \({re.escape(dtype)}\); "
               r"allowed: numeric or bool columns \(int, float, bool, and pandas' nullable "
               r"Int64, Float64, boolean\)")
    return message


@pytest.mark.parametrize("kind", NON_NUMERIC)
def test_non_numeric_column_is_named_with_its_dtype_by_dataset(kind):
    frame, name = _frame_with(kind)
    message = _names_the_column(frame, name)
    with pytest.raises(TypeError, match=message):
        gbmo.Dataset(frame, y)
    train = gbmo.Dataset(frame[["a"]], y)
    with pytest.raises(TypeError, match=message):
        train.create_valid(frame, y)
    with pytest.raises(TypeError, match=message):  # cv takes a Dataset: the same check
        gbmo.cv({"verbosity": 0}, gbmo.Dataset(frame, y), 2, nfold=2)


@pytest.mark.parametrize("kind", NON_NUMERIC)
def test_non_numeric_column_is_named_by_booster_predict(kind):
    frame, name = _frame_with(kind)
    booster = gbmo.train({"verbosity": 0, "min_samples_leaf": 5},
                         gbmo.Dataset(X[:, :2], y), 2)
    message = _names_the_column(frame, name)
    for predict in (booster.predict, booster.predict_leaf,
                    lambda data: booster.predict(data, pred_contrib=True)):
        with pytest.raises(TypeError, match=message):
            predict(frame)


@pytest.mark.parametrize("kind", NON_NUMERIC)
def test_non_numeric_column_is_named_by_the_estimators(kind, monkeypatch):
    pytest.importorskip("sklearn")
    from sklearn.base import clone
    from gbmo.sklearn import GBMOClassifier, GBMORegressor
    import gbmo.sklearn as gbmo_sklearn
    frame, name = _frame_with(kind)
    message = _names_the_column(frame, name)
    labels = (y > 0).astype(int)
    numeric = frame.assign(**{name: X[:, 1]})  # the same columns, all numeric
    for model, target in ((GBMORegressor(n_estimators=2), y),
                          (GBMOClassifier(n_estimators=2), labels)):
        fitted = clone(model).fit(numeric, target)
        with pytest.raises(TypeError, match=message):
            fitted.predict(frame)
        with pytest.raises(TypeError, match=_names_the_column(frame, name, r"eval_set\[0\] X")):
            clone(model).fit(numeric, target, eval_set=[(frame, target)])
        with monkeypatch.context() as patch:
            patch.setattr(gbmo_sklearn, "train", lambda *a, **k: pytest.fail("trained"))
            with pytest.raises(TypeError, match=message):
                model.fit(frame, target)


def test_many_non_numeric_columns_are_listed_up_to_five():
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame({f"s{i}": ["x", "y", "z"] for i in range(8)} | {"ok": [1.0, 2.0, 3.0]})
    dtype = re.escape(str(frame["s0"].dtype))  # object, or str with pandas >= 3
    with pytest.raises(TypeError, match=rf"X has 8 non-numeric columns: 's0' \({dtype}\), 's1' "
                                        rf"\({dtype}\), .*'s4' \({dtype}\) and 3 more; allowed"):
        gbmo.Dataset(frame, [1.0, 2.0, 3.0])


def test_numeric_bool_and_nullable_columns_are_accepted():
    pd = pytest.importorskip("pandas")
    n = len(y)
    with_na = np.arange(n) % 7 == 3
    frame = pd.DataFrame({
        "float": X[:, 0],
        "int": np.arange(n) % 5,
        "bool": np.arange(n) % 3 == 0,
        "Int64": pd.array(np.where(with_na, None, np.arange(n) % 4), dtype="Int64"),
        "Float64": pd.array(np.where(with_na, None, X[:, 1]), dtype="Float64"),
        "boolean": pd.array(np.where(with_na, None, np.arange(n) % 2 == 0), dtype="boolean"),
    })
    dense = np.column_stack([X[:, 0], np.arange(n) % 5, np.arange(n) % 3 == 0,
                             np.where(with_na, np.nan, np.arange(n) % 4),
                             np.where(with_na, np.nan, X[:, 1]),
                             np.where(with_na, np.nan, np.arange(n) % 2 == 0)])
    params = {"verbosity": 0, "min_samples_leaf": 3}
    from_frame = gbmo.train(params, gbmo.Dataset(frame, y), 3)
    from_array = gbmo.train(params, gbmo.Dataset(dense, y), 3)
    assert from_frame.feature_names == list(frame.columns)
    np.testing.assert_array_equal(from_frame.predict(frame), from_array.predict(dense))
    pytest.importorskip("sklearn")
    from gbmo.sklearn import GBMORegressor
    model = GBMORegressor(n_estimators=3, min_samples_leaf=3).fit(frame, y)
    np.testing.assert_array_equal(
        model.predict(frame), GBMORegressor(n_estimators=3, min_samples_leaf=3).fit(dense, y)
        .predict(dense))


def test_numpy_object_array_of_strings_says_x_must_be_numeric():
    strings = np.array([["a", "b"], ["c", "d"]] * 25, dtype=object)
    with pytest.raises(TypeError, match="X has dtype object; X must be numeric.*convert"):
        gbmo.Dataset(strings, y)
    booster = _train(X=X[:, :2])
    with pytest.raises(TypeError, match="X must be numeric"):
        booster.predict(strings)
    pytest.importorskip("sklearn")
    from gbmo.sklearn import GBMORegressor
    mixed = np.column_stack([X[:, :1], np.array(["x", "y"] * 25)]).astype(object)
    mixed[:, 0] = X[:, 0]  # numbers, and strings in the second column
    with pytest.raises(ValueError, match=r"X must be numeric \(int, float or bool values, NaN "
                                         r"for missing\); X of dtype object has a value that is "
                                         r"not a number: could not convert string to float: 'x'"):
        GBMORegressor(n_estimators=2).fit(mixed, y)
    with pytest.raises(ValueError, match="X must be numeric.*'x'"):
        GBMORegressor(n_estimators=2).fit(mixed.astype(str), y)  # a numpy str array
    with pytest.raises(ValueError, match="X must be numeric.*'x'"):
        GBMORegressor(n_estimators=2).fit(mixed.tolist(), y)  # a list
    numbers = GBMORegressor(n_estimators=2).fit(X.astype(object), y)  # as scikit-learn
    with pytest.raises(ValueError, match="X must be numeric.*'x'"):
        numbers.predict(mixed)


def test_an_object_column_of_numbers_is_taken_as_numbers():
    import pandas as pd
    from gbmo.sklearn import GBMORegressor

    rng = np.random.default_rng(0)
    values = rng.normal(size=(80, 2))
    frame = pd.DataFrame({"a": values[:, 0], "b": pd.Series(values[:, 1], dtype=object)})
    y = values[:, 0] + values[:, 1]
    from_frame = GBMORegressor(n_estimators=3).fit(frame, y).predict(frame)
    from_array = GBMORegressor(n_estimators=3).fit(values, y).predict(values)
    np.testing.assert_array_equal(from_frame, from_array)


@pytest.mark.parametrize("alias, name, value", [
    ("min_child_samples", "min_samples_leaf", 7), ("min_data", "min_samples_leaf", 7),
    ("shrinkage_rate", "learning_rate", 0.3),
    ("n_jobs", "n_threads", 1), ("verbose", "verbosity", -1),
    ("subsample_for_bin", "bin_subsample", 500), ("bagging", "subsample", 0.5),
    ("sub_feature", "colsample_bytree", 0.5), ("reg_alpha", "lambda_l1", 2.0),
    ("boosting_type", "boosting", "dart"),
    # CatBoost's
    ("depth", "max_depth", 4), ("border_count", "max_bins", 64), ("rsm", "colsample_bynode", 0.5),
    ("cat_features", "categorical_feature", [1]),
    # LightGBM's less common aliases
    ("min_sum_hessian", "min_child_weight", 0.5), ("min_hessian", "min_child_weight", 0.5),
    ("min_sum_hessian_per_leaf", "min_child_weight", 0.5), ("num_classes", "num_class", 4),
    ("num_leaf", "max_leaves", 9), ("max_leaf", "max_leaves", 9),
    ("max_leaf_nodes", "max_leaves", 9), ("l2_regularization", "lambda_l2", 3.0),
    ("nthreads", "n_threads", 1), ("metrics", "metric", "mae"), ("metric_types", "metric", "mae"),
    ("application", "objective", "softmax"), ("app", "objective", "softmax"),
    ("objective_type", "objective", "softmax"), ("sub_feature_bynode", "colsample_bynode", 0.5),
    ("cat_column", "categorical_feature", [1]),
    # XGBoost's booster
    ("booster", "boosting", "dart"),
    # scikit-learn's HistGradientBoosting's
    ("max_features", "colsample_bynode", 0.5), ("interaction_cst", "interaction_constraints",
                                                [[0, 1]]),
])
def test_lightgbm_parameter_names_set_gbmo_s(alias, name, value):
    from gbmo.params import resolve_params

    assert resolve_params({alias: value})[name] == value
    assert resolve_params({name: value}) == resolve_params({alias: value})


@pytest.mark.parametrize("values, dtype", [
    (["1", "2.5"] * 40, object), (["1", "2.5"] * 40, "string"),
])
def test_strings_of_digits_are_still_refused(values, dtype):
    import pandas as pd

    frame = pd.DataFrame({"a": np.arange(80.0), "b": pd.Series(values, dtype=dtype)})
    with pytest.raises(TypeError, match="non-numeric column: 'b'"):
        gbmo.Dataset(frame, np.arange(80.0))


@pytest.mark.parametrize("policy, growth", [
    ("SymmetricTree", "symmetric"), ("Depthwise", "depthwise"), ("Lossguide", "bestfirst"),
    ("depthwise", "depthwise"), ("lossguide", "bestfirst")])
def test_catboost_and_xgboost_grow_policies_name_gbmo_s_growth(policy, growth):
    from gbmo.params import resolve_params

    assert resolve_params({"grow_policy": policy})["growth"] == growth


def test_catboost_s_iterations_and_od_wait_control_train():
    X = np.random.default_rng(0).normal(size=(300, 3))
    y = X[:, 0] + 0.1 * X[:, 1]
    booster = gbmo.train({"verbosity": -1, "iterations": 4}, gbmo.Dataset(X, y))
    assert booster.current_iteration() == 4
    valid = gbmo.Dataset(X[:50], y[:50] + 5.0)  # gets worse from the first round
    stopped = gbmo.train({"verbosity": -1, "od_wait": 2}, gbmo.Dataset(X, y), 50,
                         valid_sets=[valid])
    assert stopped.current_iteration() < 50


def test_xgboost_s_gbtree_booster_is_gbmo_s_gbdt_and_gblinear_is_refused():
    from gbmo.params import resolve_params

    assert resolve_params({"booster": "gbtree"})["boosting"] == "gbdt"
    # README's random_forest for rf, under XGBoost's name as under LightGBM's
    assert resolve_params({"booster": "random_forest", "subsample": 0.5})["boosting"] == "rf"
    with pytest.raises(ValueError, match=r"'booster' \(gbmo's 'boosting'\) = 'gblinear' is not "
                                         "allowed; allowed: gbdt, dart, goss, rf"):
        resolve_params({"booster": "gblinear"})


def test_focal_s_gamma_stays_the_objective_s():
    pytest.importorskip("gbmo_losses")
    from gbmo.params import resolve_params

    resolved = resolve_params({"objective": "focal", "gamma": 1.0})
    assert resolved["objective_params"] == {"gamma": 1.0} and resolved["min_gain"] == 0.0


def test_lightgbm_settings_without_effect_on_the_model_are_taken_and_change_nothing():
    X = np.random.default_rng(1).normal(size=(200, 3))
    y = X[:, 0] + 0.1 * X[:, 1]
    plain = gbmo.train({"verbosity": 0}, gbmo.Dataset(X, y), 5)
    steered = gbmo.train({"verbosity": 0, "tree_learner": "serial", "histogram_pool_size": -1,
                          "enable_bundle": False, "max_conflict_rate": 0.0,
                          "is_enable_sparse": True, "two_round": True,
                          "precise_float_parser": True, "snapshot_freq": -1,
                          "use_quantized_grad": False},
                         gbmo.Dataset(X, y), 5)
    np.testing.assert_array_equal(plain.predict(X), steered.predict(X))
    assert "tree_learner" not in steered.params


def test_lightgbm_s_quantized_gradients_are_refused_with_the_reason():
    with pytest.raises(ValueError, match="'use_quantized_grad' = True is LightGBM's, and gbmo "
                                         "does not take it: .*allowed: False"):
        _train({"use_quantized_grad": True})


@pytest.mark.parametrize("objective", ["lambdarank", "rank_xendcg", "rank:ndcg", "YetiRank"])
def test_ranking_objectives_are_refused_by_name(objective):
    with pytest.raises(ValueError, match=f"objective '{objective}' ranks rows within groups: "
                                         "gbmo has no ranking objectives"):
        _train({"objective": objective})


def test_dataset_refuses_lightgbm_s_query_groups_and_file_paths():
    X = np.zeros((4, 2))
    with pytest.raises(ValueError, match=r"Dataset\(group=...\) gives LightGBM's query groups "
                                         "for ranking: gbmo has no ranking objectives"):
        gbmo.Dataset(X, np.zeros(4), group=[2, 2])
    with pytest.raises(TypeError, match="X is a path \\('train.csv'\\): gbmo takes arrays, "
                                        "not files"):
        gbmo.Dataset("train.csv", np.zeros(4))


def test_warnings_point_past_gbmo_s_own_files_only():
    """user_stacklevel walks out of gbmo's package directory; a caller whose
    file merely starts with its path (gbmo_script.py beside it) is the user."""
    import os

    import gbmo.validation as validation

    package = os.path.dirname(os.path.abspath(validation.__file__))
    namespace = {"user_stacklevel": validation.user_stacklevel}
    # frames of gbmo's own files are walked past; a neighbour's file is not
    exec(compile("def inner():\n    return user_stacklevel()\n",
                 os.path.join(package, "inner.py"), "exec"), namespace)
    exec(compile("def beside():\n    return inner()\n", package + "_script.py", "exec"),
         namespace)
    assert namespace["beside"]() == 2  # inner (1), then beside: the first outside gbmo


def test_a_sparse_validation_y_beside_a_dense_training_y_is_named():
    from scipy import sparse

    rng = np.random.default_rng(0)
    features = rng.normal(size=(100, 3))
    labels = (rng.random((100, 4)) < 0.3).astype(float)
    with pytest.raises(ValueError, match="validation set 'valid_0' has a scipy sparse Y, and the "
                                         "training set a dense one"):
        gbmo.train({"objective": "sigmoid", "verbosity": -1}, gbmo.Dataset(features, labels), 2,
                   valid_sets=[gbmo.Dataset(features, sparse.csr_matrix(labels))])


# -- repeated column names -----------------------------------------------------

def test_repeated_column_names_are_refused_by_name_before_training(monkeypatch):
    """Repeated column names were taken as repeated feature names by
    gbmo.Dataset (then a categorical_feature naming one took the first), where
    set_feature_name, LightGBM and scikit-learn refuse them."""
    pd = pytest.importorskip("pandas")
    from gbmo.sklearn import GBMORegressor

    frame = pd.DataFrame(X, columns=["a", "b", "a"])
    message = "X's column names, which name the features, must differ; repeated: a"
    monkeypatch.setattr(gbmo.engine.TreeGrower, "grow", lambda self: pytest.fail("grew"))
    with pytest.raises(ValueError, match=message):
        gbmo.Dataset(frame, y)
    with pytest.raises(ValueError, match=message):
        GBMORegressor(n_estimators=2).fit(frame, y)
    with pytest.raises(ValueError, match="feature names must differ; repeated: a"):
        gbmo.Dataset(X, y, feature_names=["a", "b", "a"])


def test_repeated_column_names_are_refused_by_predict():
    pd = pytest.importorskip("pandas")
    booster = _train()
    with pytest.raises(ValueError, match="X's column names, which name the features, must "
                                         "differ; repeated: 0"):
        booster.predict(pd.DataFrame(X, columns=[0, 1, 0]))


# -- other libraries' tables -----------------------------------------------------

def test_a_lazy_polars_frame_is_asked_to_be_collected():
    """A polars LazyFrame failed in gbmo's own code ("LazyFrame is not
    subscriptable"), with polars' warnings of resolving its schema."""
    import polars as pl  # in the test extra: not skipped

    lazy = pl.DataFrame(X, schema=["a", "b", "c"]).lazy()
    with pytest.raises(TypeError, match=r"X is a lazy table \(polars LazyFrame\) whose rows "
                                        r"are not computed yet; pass X.collect\(\)"):
        gbmo.Dataset(lazy, y)
    with pytest.raises(TypeError, match="X is a lazy table"):
        _train().predict(lazy)


class _TableWithoutItsReader:
    """A table whose to_pandas() needs a package that is not installed, as
    polars' needs pyarrow."""
    columns = ["a", "b", "c"]

    def to_pandas(self):
        raise ModuleNotFoundError("No module named 'pyarrow'")


def test_a_table_whose_to_pandas_cannot_run_names_what_to_install():
    message = (r"X is a \S+ _TableWithoutItsReader, which gbmo reads through its "
               r"to_pandas\(\), and that needs a package that is not installed \(No module "
               r"named 'pyarrow'\); install it \(pandas, and pyarrow for polars\), or pass "
               r"X.to_numpy\(\)")
    with pytest.raises(TypeError, match=message):
        gbmo.Dataset(_TableWithoutItsReader(), y)
    with pytest.raises(TypeError, match=message):
        _train().predict(_TableWithoutItsReader())


def test_xgboost_s_matrix_keywords_are_taken_or_answered_with_gbmo_s_way():
    """DMatrix(X, label, base_margin=, enable_categorical=, missing=) ported to a Dataset."""
    offset = np.linspace(-1, 1, len(X))
    ported = gbmo.Dataset(X, y, base_margin=offset, enable_categorical=True, missing=np.nan)
    np.testing.assert_array_equal(
        gbmo.train({"verbosity": -1}, ported, 3).predict(X),
        gbmo.train({"verbosity": -1}, gbmo.Dataset(X, y, init_score=offset), 3).predict(X))
    with pytest.raises(ValueError, match="parameter 'missing' = -999 is XGBoost's marker"):
        gbmo.Dataset(X, y, missing=-999)
    with pytest.raises(TypeError, match=r"Dataset\(\) takes no 'feature_types': give "
                                        r"categorical_feature="):
        gbmo.Dataset(X, y, feature_types=["c"] * X.shape[1])
    with pytest.raises(ValueError, match="give init_score once: as init_score or as base_margin"):
        gbmo.Dataset(X, y, init_score=offset, base_margin=offset)
    # LightGBM's Dataset(path) without a label: the path is named, not the missing label
    with pytest.raises(TypeError, match=r"X is a path \('train.csv'\): gbmo takes arrays, not "
                                        r"files"):
        gbmo.Dataset("train.csv")


@pytest.mark.parametrize("objective", ["mse", "sigmoid"])
def test_num_class_for_an_objective_of_y_s_columns_is_refused_before_binning(objective):
    """It was dropped without a word; LightGBM refuses it ("Number of classes
    must be 1 for non-multiclass training")."""
    data = gbmo.Dataset(X, (y > 0).astype(float))
    with pytest.raises(ValueError, match=rf"objective '{objective}' takes no num_class: its "
                                         r"outputs are y's columns; num_class=3"):
        gbmo.train({"objective": objective, "num_class": 3}, data, 1)
    assert data.bin_mapper is None


@pytest.mark.parametrize("objective", ["mse", "binary", "sigmoid"])
def test_lightgbm_s_default_num_class_1_is_taken_where_there_are_no_classes(objective):
    """Copied LightGBM parameters hold num_class=1 for every objective but multiclass."""
    labels = (y > 0).astype(float)
    given = gbmo.train({"objective": objective, "num_class": 1, "verbosity": -1},
                       gbmo.Dataset(X, labels), 3)
    default = gbmo.train({"objective": objective, "verbosity": -1}, gbmo.Dataset(X, labels), 3)
    np.testing.assert_array_equal(given.predict(X), default.predict(X))


def test_the_classifier_takes_num_class_1_for_two_classes_as_lightgbm_s_binary():
    from gbmo.sklearn import GBMOClassifier

    labels = (y > 0).astype(int)
    given = GBMOClassifier(n_estimators=3, num_class=1).fit(X, labels)
    default = GBMOClassifier(n_estimators=3).fit(X, labels)
    np.testing.assert_array_equal(given.predict_proba(X), default.predict_proba(X))
    with pytest.raises(ValueError, match=r"parameter 'num_class' = 1 disagrees with y, which "
                                         r"has 3 classes"):
        GBMOClassifier(n_estimators=3, num_class=1).fit(X, np.arange(len(X)) % 3)


@pytest.mark.parametrize("objective", ["softmax", "multiclassova"])
def test_num_class_1_is_refused_for_objectives_of_classes(objective):
    with pytest.raises(ValueError, match=rf"num_class=1: objective '{objective}' takes class "
                                         "indices and needs at least 2 classes"):
        gbmo.train({"objective": objective, "num_class": 1}, gbmo.Dataset(X, (y > 0) * 1), 1)


@pytest.mark.parametrize("label, shown", [(np.uint64(2**63), "9223372036854775808"),
                                          (1e20, r"1e\+20"), (np.int64(3 * 10**9), "3000000000")])
def test_a_class_index_beyond_num_class_s_range_is_named_as_given(label, shown):
    """Found by an audit: 2**63 and beyond were cast to int64 first and
    reported as negative indices ("got -9223372036854775808")."""
    X = np.random.default_rng(0).normal(size=(50, 3))
    y = np.zeros(50, dtype=np.asarray(label).dtype)
    y[7] = label
    with pytest.raises(ValueError, match=rf"class index {shown} at row 7 is out of range; "
                                         r"allowed: 0 \.\. 2147483646"):
        gbmo.train({"verbosity": -1, "objective": "softmax"}, gbmo.Dataset(X, y), 1)


def test_a_run_beyond_the_machine_s_memory_is_refused_before_any_work():
    """Found by an audit: num_class=2**31 - 1, or one mistyped class index
    (which counts the classes), had the system kill the process for its
    memory; the refusal names the label that counted them."""
    X = np.random.default_rng(0).normal(size=(100, 4))
    y = (X[:, 0] > 0).astype(int)
    with pytest.raises(MemoryError, match=r"training 2,147,483,647 outputs needs at least "
                                          r"[\d,.]+ GiB .* more than this machine's"):
        gbmo.train({"verbosity": -1, "objective": "softmax", "num_class": 2**31 - 1},
                   gbmo.Dataset(X, y), 1)
    y[17] = 10**9
    with pytest.raises(MemoryError, match=r"1,000,000,001 outputs \(num_class counted from the "
                                          r"largest class index, 1000000000 at row 17"):
        gbmo.train({"verbosity": -1, "objective": "softmax"}, gbmo.Dataset(X, y), 1)


def test_a_target_of_a_spread_float32_gradients_lose_is_refused():
    """Found by an audit: y = x * 1e-46 trained one constant without a word,
    where |y| > 1e30 is refused; a spread above float32's smallest normal
    number (1e-36, a cross-section in cm^2) trains, and a constant target."""
    X = np.random.default_rng(0).normal(size=(200, 3))
    Y = np.column_stack([X[:, 0], X[:, 1] * 1e-40])
    with pytest.raises(ValueError, match=r"the target's values of output 1 differ by at most "
                                         r"[\d.e-]+; objective 'mse' takes a spread of at least "
                                         r"1.18e-38 \(gradients are float32"):
        gbmo.train({"verbosity": -1}, gbmo.Dataset(X, Y), 1)
    small = X[:, 1] * 1e-36
    model = gbmo.train({"verbosity": -1, "learning_rate": 0.5}, gbmo.Dataset(X, small), 30)
    assert np.corrcoef(model.predict(X), small)[0, 1] > 0.9
    constant = gbmo.train({"verbosity": -1}, gbmo.Dataset(X, np.full(200, 1e-40)), 2)
    np.testing.assert_allclose(constant.predict(X), 1e-40)


def test_the_memory_check_counts_no_more_bins_than_a_binary_column_has():
    """Wide sparse one-hot data (200,000 columns of 2 values) x 100 outputs
    needs histograms of 3 rows a feature, not max_bins': counted at 255
    bins the check refused it (41 GB) before binning could say."""
    from types import SimpleNamespace

    from gbmo.engine import _check_memory

    wide = SimpleNamespace(n_rows=200, n_features=200_000)
    _check_memory(wide, 100, {"tree_mode": "multi_output", "max_bins": 255}, None,
                  gbmo.losses.SquaredError(), np.zeros((200, 100)))
