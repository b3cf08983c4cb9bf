"""Categorical features (gbmo.categorical): the order of the categories
against a slow reference, the best two-group split for one output, encoding
of unseen and missing categories, pandas category columns, persistence, and
the errors."""
import itertools
import warnings

import numpy as np
import pytest

import gbmo
from gbmo.booster import ModelFormatError
from gbmo.categorical import CategoryOrder

pytest.register_assert_rewrite("model_layout")
from model_layout import in_layout, listed  # noqa: E402

pd = pytest.importorskip("pandas")

QUIET = {"verbosity": 0}


def reference_ranks(categories, grad, hess, cat_smooth):
    """The rank of each category, computed the slow way: sums by a loop over
    the categories, the principal direction from the weighted covariance's
    eigenvector."""
    seen = np.unique(categories[~np.isnan(categories)])
    values, weights = [], []
    for c in seen:
        rows = categories == c
        G = grad[rows].sum(axis=0)
        H = np.broadcast_to(hess[rows].sum(axis=0), G.shape)
        values.append(-G / (H + cat_smooth))
        weights.append(H.mean())
    values, weights = np.array(values), np.array(weights)
    if values.shape[1] == 1:
        projection = values[:, 0]
    else:
        centred = values - (weights[:, None] * values).sum(axis=0) / weights.sum()
        covariance = (weights[:, None] * centred).T @ centred
        direction = np.linalg.eigh(covariance)[1][:, -1]
        direction *= np.sign(direction[np.argmax(np.abs(direction))])
        projection = values @ direction
    return seen, np.argsort(np.argsort(projection, kind="stable"), kind="stable")


@pytest.mark.parametrize("d, hess_width", [(1, 1), (2, 1), (4, 4), (3, 3)])
@pytest.mark.parametrize("seed", range(4))
def test_order_equals_the_slow_reference(d, hess_width, seed):
    rng = np.random.default_rng(seed)
    n, n_categories = 300, 9
    categories = rng.integers(0, n_categories, n).astype(float) * 3  # gaps between values
    categories[rng.random(n) < 0.1] = np.nan
    grad = rng.normal(size=(n, d)) + rng.normal(size=(n_categories * 3, d))[
        np.nan_to_num(categories).astype(int)]
    hess = rng.uniform(0.5, 2.0, size=(n, hess_width))
    X = np.column_stack([rng.normal(size=n), categories])
    order = CategoryOrder.fit(X, [1], grad, hess, cat_smooth=2.0)
    seen, ranks = reference_ranks(categories, grad, hess, 2.0)
    assert order.features == [1]
    np.testing.assert_array_equal(order.categories[0], seen)
    np.testing.assert_array_equal(order.ranks[0], ranks)


def test_order_of_categories_along_a_line_follows_the_line():
    """Leaf vectors t_c u on one direction u: the order is that of t_c (up to
    the direction's sign, fixed by its largest component)."""
    rng = np.random.default_rng(0)
    t = rng.permutation(np.linspace(-2, 2, 12))
    u = np.array([0.3, -0.9, 0.2])
    categories = np.repeat(np.arange(12), 50).astype(float)
    grad = -(t[categories.astype(int)][:, None] * u)
    order = CategoryOrder.fit(categories[:, None], [0], grad, np.ones((600, 1)), cat_smooth=0.0)
    expected = np.argsort(np.argsort(-t))  # u's largest component is negative
    np.testing.assert_array_equal(order.ranks[0], expected)


def _best_partition_by_brute_force(categories, y):
    """The two groups of categories whose split of y leaves the least squared
    error, over every partition."""
    seen = np.unique(categories)
    best, best_groups = np.inf, None
    for size in range(1, len(seen)):
        for left in itertools.combinations(seen, size):
            rows = np.isin(categories, left)
            error = ((y[rows] - y[rows].mean()) ** 2).sum() + ((y[~rows] - y[~rows].mean()) ** 2).sum()
            if error < best - 1e-9:
                best, best_groups = error, frozenset([frozenset(left),
                                                      frozenset(set(seen) - set(left))])
    return best_groups


# LightGBM's rules for categorical sets, all off
NO_CATEGORY_RULES = {"cat_smooth": 0.0, "cat_l2": 0.0, "min_data_per_group": 0,
                     "max_cat_to_onehot": 0}


@pytest.mark.parametrize("seed", range(5))
def test_one_output_stump_finds_the_best_partition_of_the_categories(seed):
    rng = np.random.default_rng(seed)
    categories = rng.integers(0, 7, 400).astype(float)
    y = rng.normal(size=7)[categories.astype(int)] + 0.3 * rng.normal(size=400)
    booster = gbmo.train({**QUIET, "max_leaves": 2, "learning_rate": 1.0, "lambda_l2": 0.0,
                          **NO_CATEGORY_RULES, "min_samples_leaf": 1, "max_bins": 255,
                          "categorical_feature": [0]},
                         gbmo.Dataset(categories[:, None], y), 1)
    predicted = booster.predict(np.arange(7.0)[:, None])
    groups = frozenset(frozenset(np.flatnonzero(predicted == value).astype(float))
                       for value in np.unique(predicted))
    assert groups == _best_partition_by_brute_force(categories, y)


def _category_problem(n=3000, n_categories=40, seed=0):
    """y = a category's effect (no order in the codes) + a linear term + noise."""
    rng = np.random.default_rng(seed)
    codes = rng.integers(0, n_categories, n)
    x = rng.normal(size=n)
    y = 2 * rng.normal(size=n_categories)[codes] + 0.5 * x + 0.1 * rng.normal(size=n)
    return np.column_stack([codes, x]).astype(float), y


def test_categorical_feature_learns_effects_that_the_codes_hide():
    X, y = _category_problem()
    params = {**QUIET, "max_leaves": 4, "min_samples_leaf": 5}
    rmse = {}
    for name, categorical in (("codes", None), ("categorical", [0])):
        booster = gbmo.train({**params, "categorical_feature": categorical},
                             gbmo.Dataset(X[:2000], y[:2000]), 60)
        rmse[name] = np.sqrt(np.mean((booster.predict(X[2000:]) - y[2000:]) ** 2))
    assert rmse["categorical"] < 0.2  # the noise is 0.1
    assert rmse["categorical"] < 0.5 * rmse["codes"]


def test_multi_output_categories_share_one_tree():
    rng = np.random.default_rng(1)
    codes = rng.integers(0, 20, 2000)
    effects = rng.normal(size=(20, 3))
    Y = effects[codes] + 0.05 * rng.normal(size=(2000, 3))
    X = codes[:, None].astype(float)
    booster = gbmo.train({**QUIET, "categorical_feature": [0], "min_samples_leaf": 5},
                         gbmo.Dataset(X, Y), 80)
    np.testing.assert_allclose(booster.predict(np.arange(20.0)[:, None]), effects, atol=0.1)


def test_unseen_negative_and_missing_categories_go_where_missing_values_go():
    X, y = _category_problem()
    X[::7, 0] = np.nan  # some missing values in training
    booster = gbmo.train({**QUIET, "categorical_feature": [0]}, gbmo.Dataset(X, y), 20)
    rows = np.repeat(X[:1], 4, axis=0)
    rows[:, 0] = [np.nan, 1000, -1, -5]
    prediction = booster.predict(rows)
    assert np.all(prediction == prediction[0])
    known = booster.predict(X[1:2])
    assert not np.isnan(known).any()


def test_same_model_from_a_dataframe_and_from_codes():
    X, y = _category_problem(seed=2)
    labels = np.array([f"shop {i}" for i in range(40)])
    frame = pd.DataFrame({"shop": pd.Categorical(labels[X[:, 0].astype(int)],
                                                 categories=labels),
                          "x": X[:, 1]})
    from_frame = gbmo.train(QUIET, gbmo.Dataset(frame, y), 20)
    from_codes = gbmo.train({**QUIET, "categorical_feature": [0]}, gbmo.Dataset(X, y), 20)
    np.testing.assert_array_equal(from_frame.predict(frame), from_codes.predict(X))
    # the categories listed in another order, and one the training lacked
    shuffled = frame.copy()
    shuffled["shop"] = shuffled["shop"].cat.reorder_categories(labels[::-1])
    np.testing.assert_array_equal(from_frame.predict(shuffled), from_frame.predict(frame))
    unknown = frame.iloc[:3].copy()
    unknown["shop"] = pd.Categorical(["new shop"] * 3)
    missing = X[:3].copy()
    missing[:, 0] = np.nan
    np.testing.assert_array_equal(from_frame.predict(unknown), from_codes.predict(missing))


def test_a_text_column_named_categorical_is_a_category_column_as_catboost_s_cat_features(
        tmp_path):
    """The strings of a column named in categorical_feature are its categories,
    in training and in every prediction, as for the same column made a pandas
    category first; a text column not named is still refused."""
    X, y = _category_problem(seed=4)
    shops = np.array([f"shop {i}" for i in range(40)])[X[:, 0].astype(int)]
    text = pd.DataFrame({"shop": shops, "x": X[:, 1]})
    category = text.assign(shop=text["shop"].astype("category"))
    from_category = gbmo.train(QUIET, gbmo.Dataset(category, y), 20)
    from_text = gbmo.train(QUIET, gbmo.Dataset(text, y, categorical_feature=["shop"]), 20)
    expected = from_category.predict(category)
    np.testing.assert_array_equal(from_text.predict(text), expected)
    np.testing.assert_array_equal(from_text.predict(category), expected)
    from_text.save_model(tmp_path / "model.json")
    loaded = gbmo.Booster(model_file=tmp_path / "model.json")
    np.testing.assert_array_equal(loaded.predict(text), expected)
    # a string the training lacked is missing, as an unknown category is
    unseen = text.iloc[:2].assign(shop=["no such shop", None])
    np.testing.assert_array_equal(from_text.predict(unseen), from_category.predict(
        category.iloc[:2].assign(shop=pd.Categorical([None, None]))))
    valid = gbmo.Dataset(text, y, categorical_feature=["shop"])
    history = gbmo.train(QUIET, valid, 3, valid_sets=[valid.create_valid(text, y)]).evals_result
    assert history["valid_0"]["rmse"] == gbmo.train(
        QUIET, gbmo.Dataset(category, y), 3, valid_sets=[gbmo.Dataset(category, y)]
    ).evals_result["valid_0"]["rmse"]
    # the Dataset's params name it too; train's come after the Dataset has read X
    from_params = gbmo.train(QUIET, gbmo.Dataset(text, y, params={"cat_features": ["shop"]}), 20)
    np.testing.assert_array_equal(from_params.predict(text), expected)
    with pytest.raises(TypeError, match="name it in the Dataset's categorical_feature .* "
                                        "train's params come after the Dataset has read X"):
        gbmo.train({**QUIET, "cat_features": ["shop"]}, gbmo.Dataset(text, y), 1)


def test_a_column_of_codes_some_numbers_some_text_is_a_category_column_when_named(tmp_path):
    """Found by a data scientist's audit: product codes 101 and "A7" in one
    object column (as a spreadsheet gives them) were refused when named
    categorical, with the advice to name them so; and by the review: a
    request of the numbers alone was then refused as a numeric column."""
    from gbmo.sklearn import GBMORegressor

    X, y = _category_problem(seed=5)
    codes = np.array([100 + i if i % 2 else f"A{i}" for i in range(40)], dtype=object)
    mixed = pd.DataFrame({"code": codes[X[:, 0].astype(int)], "x": X[:, 1]})
    category = mixed.assign(code=mixed["code"].astype("category"))
    expected = gbmo.train(QUIET, gbmo.Dataset(category, y), 5).predict(category)
    booster = gbmo.train(QUIET, gbmo.Dataset(mixed, y, categorical_feature=["code"]), 5)
    np.testing.assert_array_equal(booster.predict(mixed), expected)
    loaded = gbmo.Booster(model_str=booster.model_to_string())
    np.testing.assert_array_equal(loaded.predict(mixed), expected)
    # a request of the numbers alone (int64, or objects) is read as those categories
    numbers = mixed["code"].map(lambda code: isinstance(code, int)).to_numpy()
    for rows in (mixed[numbers], mixed[numbers].astype({"code": np.int64}), mixed.iloc[[1]]):
        np.testing.assert_array_equal(loaded.predict(rows), expected[rows.index])
    model = GBMORegressor(n_estimators=5, **QUIET).fit(mixed, y, categorical_feature=["code"])
    np.testing.assert_array_equal(model.predict(mixed[numbers].astype({"code": np.int64})),
                                  model.predict(mixed)[numbers])
    # where the categories are all text, numbers are a category's codes: refused
    text = mixed.assign(code=mixed["code"].astype(str))
    coded = gbmo.train(QUIET, gbmo.Dataset(text, y, categorical_feature=["code"]), 2)
    with pytest.raises(TypeError, match=r"is of dtype int\d+, where the training.s column 0"):
        coded.predict(text.assign(code=text["code"].astype("category").cat.codes))


def test_a_text_column_is_named_by_the_feature_names_that_rename_the_columns():
    """Found by a data scientist's audit: with feature_name given, a text
    column was refused under its column name and under its feature name."""
    from gbmo.sklearn import GBMORegressor

    X, y = _category_problem(seed=7)
    text = pd.DataFrame({"shop": np.array([f"shop {i}" for i in range(40)])[X[:, 0].astype(int)],
                         "x": X[:, 1]})
    category = text.assign(shop=text["shop"].astype("category"))
    expected = gbmo.train(QUIET, gbmo.Dataset(category, y), 3).predict(category)
    renamed = gbmo.train(QUIET, gbmo.Dataset(text, y, feature_name=["store", "x1"],
                                             categorical_feature=["store"]), 3)
    assert renamed.feature_name() == ["store", "x1"]
    np.testing.assert_array_equal(renamed.predict(text), expected)
    with pytest.raises(ValueError, match=r"names 'shop', which is not a feature name; the names "
                                         r"are \['store', 'x1'\]"):
        gbmo.Dataset(text, y, feature_name=["store", "x1"], categorical_feature=["shop"])
    for names in (pd.Index(["store", "x1"]), (name for name in ["store", "x1"])):
        np.testing.assert_array_equal(gbmo.train(QUIET, gbmo.Dataset(
            text, y, feature_name=names, categorical_feature=["store"]), 3).predict(text), expected)
    for names in (["store", "x1"], (name for name in ["store", "x1"])):
        model = GBMORegressor(n_estimators=3, **QUIET).fit(text, y, feature_name=names,
                                                           categorical_feature=["store"])
        assert model.booster_.pandas_categories == renamed.pandas_categories
        assert model.booster_.feature_name() == ["store", "x1"]


@pytest.mark.parametrize("named", ["name:shop", "0", 0, np.int64(0), np.array(["shop"]),
                                   {"shop"}, pd.Index(["shop"]), [True, False],
                                   np.array([True, False])])
def test_a_text_column_is_named_in_every_form_categorical_feature_takes(named):
    """LightGBM's text forms, one index, numpy arrays, sets, a pandas Index
    (CatBoost's df.select_dtypes(...).columns) and scikit-learn's masks of
    booleans name it as lists do."""
    X, y = _category_problem(seed=6)
    text = pd.DataFrame({"shop": np.array([f"shop {i}" for i in range(40)])[X[:, 0].astype(int)],
                         "x": X[:, 1]})
    booster = gbmo.train(QUIET, gbmo.Dataset(text, y, categorical_feature=named), 2)
    assert list(booster.pandas_categories) == [0]


def test_the_estimators_take_catboost_s_cat_features_of_strings():
    from gbmo.sklearn import GBMORegressor

    X, y = _category_problem(seed=5)
    shops = np.array([f"shop {i}" for i in range(40)])[X[:, 0].astype(int)]
    text = pd.DataFrame({"shop": shops, "x": X[:, 1]})
    category = text.assign(shop=text["shop"].astype("category"))
    expected = GBMORegressor(n_estimators=10).fit(category, y).predict(category)
    for given in ({"cat_features": ["shop"]}, {"categorical_feature": [0]}):
        model = GBMORegressor(n_estimators=10, **given).fit(text, y)
        np.testing.assert_array_equal(model.predict(text), expected)
    fit_named = GBMORegressor(n_estimators=10).fit(text, y, categorical_feature=["shop"])
    np.testing.assert_array_equal(fit_named.predict(text), expected)


def test_model_file_keeps_the_order_and_the_categories(tmp_path):
    X, y = _category_problem(seed=3)
    frame = pd.DataFrame({"c": pd.Categorical(X[:, 0].astype(int)), "x": X[:, 1]})
    booster = gbmo.train(QUIET, gbmo.Dataset(frame, y), 10)
    booster.save_model(tmp_path / "model.json")
    loaded = gbmo.Booster(model_file=tmp_path / "model.json")
    np.testing.assert_array_equal(loaded.predict(frame), booster.predict(frame))
    np.testing.assert_array_equal(loaded.predict(frame, pred_contrib=True),
                                  booster.predict(frame, pred_contrib=True))
    assert loaded.pandas_categories == booster.pandas_categories


def test_validation_set_and_training_scores_follow_the_encoding():
    X, y = _category_problem(seed=4)
    frame = pd.DataFrame({"c": pd.Categorical(X[:, 0].astype(int)), "x": X[:, 1]})
    train = gbmo.Dataset(frame[:2000], y[:2000])
    valid_frame = frame[2000:].copy()
    valid_frame["c"] = valid_frame["c"].cat.reorder_categories(
        valid_frame["c"].cat.categories[::-1])
    valid = train.create_valid(valid_frame, y[2000:])
    booster = gbmo.train(QUIET, train, 15, valid_sets=[train, valid],
                         valid_names=["train", "valid"])
    for rows, name in ((slice(0, 2000), "train"), (slice(2000, None), "valid")):
        rmse = np.sqrt(np.mean((booster.predict(frame[rows]) - y[rows]) ** 2))
        assert booster.evals_result[name]["rmse"][-1] == pytest.approx(rmse, rel=1e-12)


def test_cv_folds_keep_the_categorical_features():
    X, y = _category_problem(seed=5)
    frame = pd.DataFrame({"c": pd.Categorical(X[:, 0].astype(int)), "x": X[:, 1]})
    from_frame = gbmo.cv(QUIET, gbmo.Dataset(frame, y), 10, nfold=3, return_boosters=True)
    from_codes = gbmo.cv({**QUIET, "categorical_feature": [0]}, gbmo.Dataset(X, y), 10, nfold=3)
    assert from_frame["valid rmse-mean"] == from_codes["valid rmse-mean"]
    assert all(b.category_order.features == [0] for b in from_frame["boosters"])
    plain = gbmo.cv(QUIET, gbmo.Dataset(X, y), 10, nfold=3)
    assert from_codes["valid rmse-mean"][-1] < plain["valid rmse-mean"][-1]


def test_a_dataset_trained_again_with_another_order_is_binned_again():
    X, y = _category_problem(seed=6)
    dataset = gbmo.Dataset(X, y)
    for smooth in (0.0, 1e4):
        params = {**QUIET, "categorical_feature": [0], "cat_smooth": smooth}
        reused = gbmo.train(params, dataset, 5)
        fresh = gbmo.train(params, gbmo.Dataset(X, y), 5)
        np.testing.assert_array_equal(reused.predict(X), fresh.predict(X))


def test_continued_training_keeps_the_model_s_order():
    X, y = _category_problem(seed=7)
    params = {**QUIET, "categorical_feature": [0]}
    first = gbmo.train(params, gbmo.Dataset(X, y), 5)
    # a shifted target would order the categories otherwise from scratch
    continued = gbmo.train(params, gbmo.Dataset(X, -y), 5, init_model=first)
    assert continued.category_order is first.category_order
    with pytest.raises(ValueError, match=r"init_model has the categorical features \[0\], "
                                         r"this run \[\]"):
        gbmo.train(QUIET, gbmo.Dataset(X, y), 5, init_model=first)


def test_estimators_take_category_columns_and_names():
    from gbmo.sklearn import GBMOClassifier, GBMORegressor

    X, y = _category_problem(seed=8)
    frame = pd.DataFrame({"c": pd.Categorical(X[:, 0].astype(int)), "x": X[:, 1]})
    regressor = GBMORegressor(n_estimators=30, verbosity=0).fit(frame, y)
    assert regressor.booster_.category_order.features == [0]
    numeric = pd.DataFrame({"c": X[:, 0], "x": X[:, 1]})
    named = GBMORegressor(n_estimators=30, verbosity=0).fit(numeric, y,
                                                            categorical_feature=["c"])
    np.testing.assert_array_equal(named.predict(numeric), regressor.predict(frame))
    plain = GBMORegressor(n_estimators=30, verbosity=0).fit(numeric, y)
    assert regressor.score(frame, y) > plain.score(numeric, y)
    labels = (y > np.median(y)).astype(int)
    classifier = GBMOClassifier(n_estimators=30, verbosity=0, early_stopping_rounds=5).fit(
        frame[:2000], labels[:2000], eval_set=[(frame[2000:], labels[2000:])])
    assert classifier.score(frame[2000:], labels[2000:]) > 0.9


# -- errors -------------------------------------------------------------------

@pytest.mark.parametrize("spec, error, message", [
    ([2], ValueError, r"categorical_feature 2 is out of range; X has 2 features"),
    (["shop"], ValueError, r"categorical_feature names 'shop', but X has no feature names"),
    ([0.5], TypeError, r"parameter 'categorical_feature' must be a string"),
    ([True], ValueError, r"categorical_feature is a mask of 1 booleans; a mask needs one for "
                         r"each of the 2 features"),
    ([True, 1], TypeError, r"categorical_feature must list feature indices or names, be a mask "
                           r"of booleans, one a feature, or be 'auto'; got the item True"),
])
def test_bad_categorical_feature_is_refused_before_training(spec, error, message):
    X, y = _category_problem(n=200)
    with pytest.raises(error, match=message):
        gbmo.train({**QUIET, "categorical_feature": spec}, gbmo.Dataset(X, y), 2)


def test_scikit_learn_s_forms_from_dtype_and_a_mask_name_the_features():
    """HistGradientBoosting's categorical_features: "from_dtype" is LightGBM's
    "auto" (the category columns), a mask of booleans marks each feature."""
    from gbmo.sklearn import GBMORegressor

    X, y = _category_problem(n=300)
    frame = pd.DataFrame({"shop": X[:, 0], "x": X[:, 1],
                          "c": pd.Categorical(X[:, 0].astype(int) % 3)})
    assert gbmo.Dataset(frame, y, categorical_feature="from_dtype").categorical_features() == [2]
    assert gbmo.Dataset(frame, y, categorical_feature=[True, False, True]) \
        .categorical_features() == [0, 2]
    by_indices = GBMORegressor(n_estimators=5, **QUIET).fit(frame, y, categorical_feature=[0, 2])
    for given in ([True, False, True], np.array([True, False, True])):
        masked = GBMORegressor(n_estimators=5, categorical_features=given, **QUIET).fit(frame, y)
        np.testing.assert_array_equal(masked.predict(frame), by_indices.predict(frame))
    by_dtype = GBMORegressor(n_estimators=5, categorical_features="from_dtype", **QUIET)
    assert by_dtype.fit(frame, y).booster_.category_order.features == [2]
    # and its attributes: the mask, the trees a round
    np.testing.assert_array_equal(by_dtype.is_categorical_, [False, False, True])
    assert GBMORegressor(n_estimators=2).fit(X, y).is_categorical_ is None
    assert by_dtype.n_trees_per_iteration_ == 1
    per_output = GBMORegressor(n_estimators=2, tree_mode="single_output", **QUIET)
    assert per_output.fit(X, np.c_[y, -y]).n_trees_per_iteration_ == 2


def test_catboost_s_pool_keyword_cat_features_names_a_dataset_s_categories():
    X, y = _category_problem(n=300)
    frame = pd.DataFrame({"shop": np.array(["a", "b", "c"])[X[:, 0].astype(int) % 3],
                          "x": X[:, 1]})
    assert gbmo.Dataset(frame, y, cat_features=["shop"]).categorical_features() == [0]
    with pytest.raises(ValueError, match="give categorical_feature once: as categorical_feature "
                                         "or as cat_features"):
        gbmo.Dataset(frame, y, categorical_feature=["shop"], cat_features=["shop"])


def test_a_column_all_missing_in_training_warns_of_no_lost_categories():
    """Training had no category there: the predicted categories are new, not
    of another type (the warning read "( ; here: 'a', of another type)")."""
    from gbmo.sklearn import GBMORegressor

    X, y = _category_problem(n=300)
    frame = pd.DataFrame({"shop": np.array(["a", "b", "c"])[X[:, 0].astype(int) % 3],
                          "x": X[:, 1]})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = GBMORegressor(n_estimators=3, cat_features=["shop"]).fit(
            frame.assign(shop=None), y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model.predict(frame)


def test_prediction_recodes_its_own_copy_in_place_and_never_the_caller_s_data():
    """A DataFrame's values, copied to floats for prediction, take the ranks
    where they lie (a second copy doubled a large frame's memory); the
    caller's frame and arrays stay as they were."""
    import tracemalloc

    X, y = _category_problem(n=4000)
    frame = pd.DataFrame({"c": pd.Categorical(X[:, 0].astype(int)), "x": X[:, 1]})
    frame = frame.assign(**{f"z{i}": X[:, 1] * i for i in range(30)})
    booster = gbmo.train(QUIET, gbmo.Dataset(frame, y), 5)
    codes = frame.assign(c=frame["c"].cat.codes.astype(float)).to_numpy()
    expected = booster.predict(codes.copy())
    given = frame.copy()
    tracemalloc.start()
    np.testing.assert_array_equal(booster.predict(frame), expected)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    pd.testing.assert_frame_equal(frame, given)
    assert peak < 1.6 * codes.nbytes  # one float copy of X (and the output), not two
    for array in (codes, codes.astype(np.float32), codes.astype(np.int64)):
        before = array.copy()
        booster.predict(array)
        np.testing.assert_array_equal(array, before)


@pytest.mark.parametrize("largest", [7, 300, 2**31 - 1])
def test_encoded_ranks_equal_a_lookup_of_each_value(largest):
    """Small categories are ranked through a table, large ones by binary
    search: both against a dict of the training's categories."""
    rng = np.random.default_rng(largest % 97)
    categories = np.unique(np.r_[rng.integers(0, largest, 40), largest]).astype(float)
    ranks = rng.permutation(len(categories)).astype(float)
    order = CategoryOrder([1], [categories], [ranks])
    column = np.r_[rng.choice(categories, 300), rng.integers(0, largest, 100),
                   [np.nan, -1.0, -5.0, float(min(largest + 1, 2**31 - 1)), 0.0, float(largest)]]
    X = np.c_[rng.normal(size=len(column)), column]
    lookup = dict(zip(categories.tolist(), ranks.tolist()))
    expected = [lookup.get(v, np.nan) if v >= 0 else np.nan for v in column]
    encoded = order.encode(X)
    np.testing.assert_array_equal(encoded[:, 1], expected)
    np.testing.assert_array_equal(encoded[:, 0], X[:, 0])


def test_lightgbm_s_string_forms_and_unknown_names():
    X, y = _category_problem(n=300)
    frame = pd.DataFrame({"shop": X[:, 0], "x": X[:, 1]})
    for spec in ("0", "name:shop", "shop", ["shop"], 0):
        assert gbmo.Dataset(frame, y, categorical_feature=spec).categorical_features() == [0]
    assert gbmo.Dataset(X, y, categorical_feature="0,1").categorical_features() == [0, 1]
    with pytest.raises(ValueError, match=r"categorical_feature names 'region', which is not a "
                                         r"feature name; the names are \['shop', 'x'\]"):
        gbmo.Dataset(frame, y, categorical_feature="name:region")


def test_a_category_column_left_out_of_categorical_feature_is_refused():
    X, y = _category_problem(n=200)
    frame = pd.DataFrame({"c": pd.Categorical(X[:, 0].astype(int)), "x": X[:, 1]})
    with pytest.raises(ValueError, match=r"the pandas category columns \['c'\] are not in "
                                         "categorical_feature"):
        gbmo.Dataset(frame, y, categorical_feature=["x"])


@pytest.mark.parametrize("value", [1.5, np.inf, 2.0**40])
def test_categories_that_are_not_integers_are_refused(value):
    X, y = _category_problem(n=200)
    bad = X.copy()
    bad[3, 0] = value
    with pytest.raises(ValueError, match=rf"categorical feature 0 has the value {value!r}; "
                                         r"categories must be integers"):
        gbmo.train({**QUIET, "categorical_feature": [0]}, gbmo.Dataset(bad, y), 2)
    booster = gbmo.train({**QUIET, "categorical_feature": [0]}, gbmo.Dataset(X, y), 2)
    # continuing the model refuses them as a run of its own does (found by review)
    with pytest.raises(ValueError, match=rf"categorical feature 0 has the value {value!r}"):
        gbmo.train({**QUIET, "categorical_feature": [0]}, gbmo.Dataset(bad, y), 2,
                   init_model=booster)
    if value == 2.0**40:
        # an integer too large for any training is a category it did not see,
        # as an unseen 11 is: missing (a deployment audit found a hashed id
        # refusing a whole batch; LightGBM reads it as unseen too)
        unseen = X.copy()
        unseen[3, 0] = np.nan
        np.testing.assert_array_equal(booster.predict(bad), booster.predict(unseen))
        return
    with pytest.raises(ValueError, match=r"categorical feature 0 has the value"):
        booster.predict(bad)


def test_sparse_x_and_monotone_categories_are_refused():
    import scipy.sparse as sp

    X, y = _category_problem(n=200)
    with pytest.raises(TypeError, match=r"categorical features \(\[0\]\) need dense X"):
        gbmo.train({**QUIET, "categorical_feature": [0]}, gbmo.Dataset(sp.csr_matrix(X), y), 2)
    with pytest.raises(ValueError, match=r"monotone_constraints constrain the categorical "
                                         r"features \[0\]"):
        gbmo.train({**QUIET, "categorical_feature": [0], "monotone_constraints": [1, 0]},
                   gbmo.Dataset(X, y), 2)
    booster = gbmo.train({**QUIET, "categorical_feature": [0]}, gbmo.Dataset(X, y), 2)
    with pytest.raises(TypeError, match="need dense X"):
        booster.predict(sp.csr_matrix(X))


def test_column_kinds_must_match_the_training_s():
    X, y = _category_problem(n=200)
    frame = pd.DataFrame({"c": pd.Categorical(X[:, 0].astype(int)), "x": X[:, 1]})
    numeric = pd.DataFrame({"c": X[:, 0], "x": X[:, 1]})
    on_frame = gbmo.train(QUIET, gbmo.Dataset(frame, y), 2)
    with pytest.raises(TypeError, match=r"X's column 0 \('c'\) is of dtype float64, where the "
                                        r"training's column 0 \('c'\) was a category column"):
        on_frame.predict(numeric)
    on_numbers = gbmo.train(QUIET, gbmo.Dataset(numeric, y), 2)
    with pytest.raises(TypeError, match=r"X's column 0 \('c'\) is a category column, where "
                                        r"the training's column 0 \('c'\) was numeric"):
        on_numbers.predict(frame)
    train = gbmo.Dataset(frame, y)
    with pytest.raises(TypeError, match=r"X's column 0 \('c'\) is of dtype float64, where "
                                        r"the training's column 0 \('c'\) was a category"):
        train.create_valid(numeric, y)


def _frame_with_a_category_column(n=100):
    frame = pd.DataFrame({"x": np.arange(n, dtype=float),
                          "c": pd.Categorical(np.arange(n) % 3)})
    return frame, frame["x"].to_numpy() + frame["c"].cat.codes.to_numpy()


_IN_ANOTHER_ORDER = r"X's columns are the model's features in another order \(c, x\); give " \
                    r"them in the model's order: x, c"


def test_reordered_columns_are_named_as_the_cause_not_the_column_kinds():
    from gbmo.sklearn import GBMORegressor

    frame, y = _frame_with_a_category_column()
    model = GBMORegressor(n_estimators=2, verbosity=0).fit(frame, y)
    with pytest.raises(ValueError, match=_IN_ANOTHER_ORDER):
        model.predict(frame[["c", "x"]])
    with pytest.raises(ValueError, match=_IN_ANOTHER_ORDER.replace("X's", r"eval_set\[0\] X's")):
        GBMORegressor(n_estimators=2, verbosity=0).fit(
            frame, y, eval_set=[(frame[["c", "x"]], y)])
    with pytest.raises(ValueError, match=_IN_ANOTHER_ORDER):
        gbmo.Dataset(frame, y).create_valid(frame[["c", "x"]], y)
    # in the right order, the model predicts
    np.testing.assert_allclose(model.predict(frame[["x", "c"]]), model.predict(frame))


def test_reordered_columns_of_text_categories_are_named_as_the_cause():
    """Found by a data scientist's audit: the estimators read a text column
    by its position before they checked the order, and told the user to name
    the column in cat_features, which they had."""
    from gbmo.sklearn import GBMORegressor

    frame, y = _frame_with_a_category_column()
    frame["c"] = frame["c"].astype(str)
    model = GBMORegressor(n_estimators=2, verbosity=0, cat_features=["c"]).fit(frame, y)
    with pytest.raises(ValueError, match=_IN_ANOTHER_ORDER):
        model.predict(frame[["c", "x"]])
    with pytest.raises(ValueError, match=_IN_ANOTHER_ORDER.replace("X's", r"eval_set\[0\] X's")):
        GBMORegressor(n_estimators=2, verbosity=0, cat_features=["c"]).fit(
            frame, y, eval_set=[(frame[["c", "x"]], y)])


def test_booster_predict_names_reordered_columns_as_the_cause():
    frame, y = _frame_with_a_category_column()
    booster = gbmo.train(QUIET, gbmo.Dataset(frame, y), 2)
    with pytest.raises(ValueError, match=_IN_ANOTHER_ORDER):
        booster.predict(frame[["c", "x"]])


@pytest.mark.parametrize("field, value", [
    ("categorical", {"features": [0], "categories": [[0, 1]], "ranks": [[0, 0]]}),
    ("categorical", {"features": [5], "categories": [[0, 1]], "ranks": [[0, 1]]}),
    ("categorical", {"features": [0], "categories": [[1, 0]], "ranks": [[0, 1]]}),
    ("categorical", {"features": [0], "categories": [[0.5, 1]], "ranks": [[0, 1]]}),
    ("categorical", {"features": [0, 0], "categories": [[0], [0]], "ranks": [[0], [0]]}),
    ("categorical", [1, 2]),
    ("categorical", {"features": [0], "categories": [["0", "1"]], "ranks": [[0, 1]]}),
    ("categorical", {"features": [0], "categories": [[-1, 1]], "ranks": [[0, 1]]}),
    ("pandas_categories", {"x": ["a"]}),
    ("pandas_categories", {"0": [["a"]]}),
    ("pandas_categories", [1]),
    ("pandas_categories", {"0": ["a", "a", "b"]}),
    ("pandas_categories", {"0": [float("nan"), "a", "b"]}),
    ("pandas_categories", {"0": [True, 1, 2]}),
    ("pandas_categories", {"0": ["a"]}),  # fewer labels than the codes
    ("pandas_categories", {"1": ["a", "b", "c"]}),  # not a categorical feature
])
def test_malformed_categorical_fields_in_a_model_file_are_refused(field, value):
    import json

    X, y = _category_problem(n=200, n_categories=3)
    booster = gbmo.train({**QUIET, "categorical_feature": [0]}, gbmo.Dataset(X, y), 2)
    data = json.loads(booster.model_to_string())
    data[field] = value
    with pytest.raises(ModelFormatError):
        gbmo.Booster(model_str=json.dumps(data))


@pytest.mark.parametrize("d", [1, 3])
def test_a_categorical_feature_without_any_category_is_all_missing(d):
    """Found by the fuzz: every value negative or NaN crashed the order."""
    rng = np.random.default_rng(9)
    X = np.column_stack([np.where(rng.random(100) < 0.5, np.nan, -1.0), rng.normal(size=100)])
    y = rng.normal(size=(100, d))
    booster = gbmo.train({**QUIET, "categorical_feature": [0]}, gbmo.Dataset(X, y), 3)
    assert booster.category_order.categories[0].size == 0
    loaded = gbmo.Booster(model_str=booster.model_to_string())
    rows = X[:5].copy()
    rows[:, 0] = [0, 1, 2, np.nan, -3]
    np.testing.assert_array_equal(loaded.predict(rows), booster.predict(X[:5]))


def test_trees_to_dataframe_lists_the_categories_each_split_sends_left():
    """Walking the frame, a category goes left where categories_left has it:
    the walk gives the model's predictions."""
    X, y = _category_problem(n=1000, n_categories=8, seed=10)
    labels = np.array(list("abcdefgh"))
    frame = pd.DataFrame({"c": pd.Categorical(labels[X[:, 0].astype(int)]), "x": X[:, 1]})
    booster = gbmo.train({**QUIET, "max_leaves": 6}, gbmo.Dataset(frame, y), 3)
    nodes = booster.trees_to_dataframe()
    assert (nodes.split_feature == "c").any()
    assert nodes[nodes.split_feature == "x"].categories_left.isna().all()
    # a set split has no threshold (it showed 0.0 beside its set)
    assert nodes[nodes.split_feature == "c"].threshold.isna().all()
    assert nodes[nodes.split_feature == "x"].threshold.notna().all()
    for i in range(40):
        label, x = frame.c.iloc[i], frame.x.iloc[i]
        total = booster.init_score[0]
        for _, tree in nodes.groupby("tree_index"):
            node = tree.set_index("node_index").loc[0]
            by_index = tree.set_index("node_index")
            while not node.is_leaf:
                left = (label in node.categories_left if node.split_feature == "c"
                        else x <= node.threshold)
                node = by_index.loc[node.left_child if left else node.right_child]
            total += node.value[0]
        assert total == pytest.approx(booster.predict(frame.iloc[i:i + 1])[0], abs=1e-12)


def test_unseen_categories_follow_the_missing_path_not_a_known_category():
    """Rows with a missing category have their own effect (+10) in training:
    unseen, negative and NaN categories predict it, which no known category
    does."""
    rng = np.random.default_rng(11)
    codes = rng.integers(0, 6, 2000).astype(float)
    y = rng.normal(size=6)[codes.astype(int)]
    codes[:300] = np.nan
    y[:300] = 10.0
    params = {**QUIET, "categorical_feature": [0], "min_samples_leaf": 5}
    booster = gbmo.train(params, gbmo.Dataset(codes[:, None], y), 50)
    missing = booster.predict(np.array([[np.nan], [-4.0], [6.0], [1e6]]))
    known = booster.predict(np.arange(6.0)[:, None])
    np.testing.assert_allclose(missing, 10.0, atol=0.05)
    assert np.all(np.abs(known - 10.0) > 5)
    # negative values in training are missing too: the same model as NaN there
    negative = codes.copy()
    negative[:300] = -1.0
    again = gbmo.train(params, gbmo.Dataset(negative[:, None], y), 50)
    assert again.model_to_string() == booster.model_to_string()


@pytest.mark.parametrize("missing", [None, np.nan, pd.NA])
def test_a_category_column_of_missing_values_only_predicts_the_missing_path(missing):
    """A one-row request (or a batch) whose category is missing gives pandas a
    column of dtype object or float, which predict refused as not a category
    column; it is the missing value's path, as in a category column."""
    rng = np.random.default_rng(12)
    frame = pd.DataFrame({"x": rng.normal(size=1500),
                          "shop": pd.Categorical(rng.choice(list("wxyz"), size=1500))})
    y = frame.x + frame.shop.map({"w": -1.0, "x": 0.0, "y": 1.0, "z": 2.0}).astype(float)
    booster = gbmo.train({**QUIET, "min_samples_leaf": 5}, gbmo.Dataset(frame, y), 20)
    expected = booster.predict(frame.iloc[:3].assign(
        shop=pd.Categorical([None] * 3, categories=list("wxyz"))))
    np.testing.assert_array_equal(booster.predict(frame.iloc[:3].assign(shop=[missing] * 3)),
                                  expected)
    one_row = pd.DataFrame([{"x": frame.x[0], "shop": missing}])
    np.testing.assert_array_equal(booster.predict(one_row), expected[:1])


def test_the_order_uses_the_weights_and_the_rows_offsets():
    """mse at the starting scores: g = (init_score_i - y_i) w_i, h = w_i."""
    rng = np.random.default_rng(12)
    codes = rng.integers(0, 10, 500).astype(float)
    y = rng.normal(size=10)[codes.astype(int)] + rng.normal(size=500)
    weight = rng.uniform(0.1, 3.0, 500)
    offset = rng.normal(size=500) * 2
    booster = gbmo.train({**QUIET, "categorical_feature": [0], "cat_smooth": 1.0},
                         gbmo.Dataset(codes[:, None], y, weight=weight, init_score=offset), 1)
    grad = ((offset - y) * weight)[:, None]
    seen, ranks = reference_ranks(codes, grad, weight[:, None], 1.0)
    np.testing.assert_array_equal(booster.category_order.ranks[0], ranks)


def test_continuing_a_model_reads_a_frame_in_the_model_s_categories():
    X, y = _category_problem(n=1500, n_categories=8, seed=13)
    labels = np.array(list("abcdefgh"))
    frame = pd.DataFrame({"c": pd.Categorical(labels[X[:, 0].astype(int)], categories=labels),
                          "x": X[:, 1]})
    first = gbmo.train(QUIET, gbmo.Dataset(frame, y), 20)
    reversed_frame = frame.copy()
    reversed_frame["c"] = reversed_frame["c"].cat.reorder_categories(labels[::-1])
    tiny = {**QUIET, "learning_rate": 1e-12}
    for data in (gbmo.Dataset(reversed_frame, y),
                 gbmo.Dataset(frame.assign(c=X[:, 0]), y, categorical_feature=[0])):
        continued = gbmo.train(tiny, data, 3, init_model=first)
        assert continued.pandas_categories == first.pandas_categories
        np.testing.assert_allclose(continued.predict(frame), first.predict(frame), atol=1e-9)
    from gbmo.sklearn import GBMORegressor

    model = GBMORegressor(n_estimators=20, verbosity=0).fit(frame, y)
    more = GBMORegressor(n_estimators=3, learning_rate=1e-12, verbosity=0).fit(
        reversed_frame, y, init_model=model)
    np.testing.assert_allclose(more.predict(frame), model.predict(frame), atol=1e-9)


def test_a_frame_without_the_model_s_columns_gets_the_column_count_error():
    from gbmo.sklearn import GBMORegressor

    X, y = _category_problem(n=300)
    frame = pd.DataFrame({"x": X[:, 1], "c": pd.Categorical(X[:, 0].astype(int))})
    booster = gbmo.train(QUIET, gbmo.Dataset(frame, y), 2)
    message = r"X has 1 features, but the model was trained on 2"
    with pytest.raises(ValueError, match=message):
        booster.predict(frame[["x"]])
    with pytest.raises(ValueError, match=r"2 feature names for 1 features"):
        gbmo.Dataset(frame, y).create_valid(frame[["x"]], y)
    model = GBMORegressor(n_estimators=2, verbosity=0).fit(frame, y)
    with pytest.raises(ValueError, match=message + "; missing: c$"):
        model.predict(frame[["x"]])


def test_cv_boosters_keep_the_frame_s_categories():
    X, y = _category_problem(n=600, n_categories=5, seed=14)
    frame = pd.DataFrame({"c": pd.Categorical(np.array(list("vwxyz"))[X[:, 0].astype(int)]),
                          "x": X[:, 1]})
    result = gbmo.cv(QUIET, gbmo.Dataset(frame, y), 3, nfold=2, return_boosters=True)
    for booster in result["boosters"]:
        assert booster.pandas_categories == {0: list("vwxyz")}


def test_categories_must_be_strings_or_numbers():
    dates = pd.Categorical(pd.date_range("2020-01-01", periods=4)[np.arange(40) % 4])
    frame = pd.DataFrame({"day": dates, "x": np.arange(40.0)})
    with pytest.raises(TypeError, match=r"category column 'day' has the category .*"
                                        r"categories must be strings or numbers \(a model "
                                        r"file keeps them\): name them by their texts, "
                                        r"X\['day'\].cat.rename_categories\(str\)"):
        gbmo.Dataset(frame, np.arange(40.0))
    # the advice works, for pd.cut's intervals too
    frame["day"] = frame["day"].cat.rename_categories(str)
    frame["band"] = pd.cut(frame["x"], 4).cat.rename_categories(str)
    booster = gbmo.train(QUIET, gbmo.Dataset(frame, np.arange(40.0)), 2)
    assert booster.pandas_categories[2] == [str(c) for c in pd.cut(frame["x"], 4).cat.categories]


def test_a_misspelt_name_beside_a_text_column_is_named_before_the_text_column():
    """The text column's refusal told to name in categorical_feature the
    column the user had just misspelt there."""
    from gbmo.sklearn import GBMORegressor

    frame = pd.DataFrame({"num": np.arange(40.0), "txt": ["a", "b"] * 20})
    message = (r"categorical_feature names 'TXT', which is not a feature name; the names are "
               r"\['num', 'txt'\] \(text columns \['txt'\] must be named to be categories\)")
    with pytest.raises(ValueError, match=message):
        gbmo.Dataset(frame, frame["num"], categorical_feature=["TXT"])
    with pytest.raises(ValueError, match=message):
        GBMORegressor(n_estimators=2, cat_features=["TXT"]).fit(frame, frame["num"])


def test_continuing_leaves_the_user_s_datasets_as_they_were():
    X, y = _category_problem(n=1000, n_categories=5, seed=15)
    labels = np.array(list("abcde"))
    frame = pd.DataFrame({"c": pd.Categorical(labels[X[:, 0].astype(int)], categories=labels),
                          "x": X[:, 1]})
    first = gbmo.train(QUIET, gbmo.Dataset(frame[frame.c != "e"], y[frame.c != "e"]), 10)
    data = gbmo.Dataset(frame, y)  # has "e", which the model lacks
    codes = data.X.copy()
    gbmo.train(QUIET, data, 2, init_model=first, valid_sets=[data])
    np.testing.assert_array_equal(data.X, codes)
    assert data.pandas_categories == {0: list("abcde")}
    fresh, reused = (gbmo.train(QUIET, d, 5).predict(frame)
                     for d in (gbmo.Dataset(frame, y), data))
    np.testing.assert_array_equal(reused, fresh)


def test_estimator_eval_sets_of_a_continued_model_are_scored_in_its_categories():
    from gbmo.sklearn import GBMORegressor

    X, y = _category_problem(n=1500, n_categories=8, seed=16)
    labels = np.array(list("abcdefgh"))
    frame = pd.DataFrame({"c": pd.Categorical(labels[X[:, 0].astype(int)], categories=labels),
                          "x": X[:, 1]})
    model = GBMORegressor(n_estimators=20, verbosity=0).fit(frame, y)
    reversed_frame = frame.copy()
    reversed_frame["c"] = reversed_frame["c"].cat.reorder_categories(labels[::-1])
    more = GBMORegressor(n_estimators=2, verbosity=0, early_stopping_rounds=5).fit(
        reversed_frame[:1000], y[:1000], eval_set=[(reversed_frame[1000:], y[1000:])],
        init_model=model)
    rmse = np.sqrt(np.mean((more.predict(frame[1000:]) - y[1000:]) ** 2))
    assert more.evals_result_["valid_0"]["rmse"][-1] == pytest.approx(rmse, rel=1e-9)


def test_bool_categories_survive_the_model_file():
    import pickle

    rng = np.random.default_rng(17)
    flag = rng.random(300) < 0.5
    y = np.where(flag, 2.0, -1.0) + 0.1 * rng.normal(size=300)
    frame = pd.DataFrame({"flag": pd.Categorical(flag), "x": rng.normal(size=300)})
    booster = gbmo.train({**QUIET, "min_samples_leaf": 5}, gbmo.Dataset(frame, y), 5)
    assert booster.pandas_categories == {0: [False, True]}
    for loaded in (gbmo.Booster(model_str=booster.model_to_string()),
                   pickle.loads(pickle.dumps(booster))):
        np.testing.assert_array_equal(loaded.predict(frame), booster.predict(frame))


def test_each_node_orders_its_categories_so_interactions_are_learnt():
    """y = a_c sign(x): the first round's gradients see no effect of c, so
    one order for every node (symmetric trees keep it) cannot split c by a_c;
    an order per node can, below a split on x."""
    rng = np.random.default_rng(24)
    codes = rng.integers(0, 40, 6000)
    x = rng.normal(size=6000)
    y = 2 * rng.normal(size=40)[codes] * np.sign(x) + 0.1 * rng.normal(size=6000)
    X = np.column_stack([codes, x]).astype(float)
    rmse = {}
    for growth in ("bestfirst", "symmetric"):
        params = {**QUIET, "categorical_feature": [0], "growth": growth, "max_depth": 6}
        model = gbmo.train(params, gbmo.Dataset(X[:4000], y[:4000]), 100)
        rmse[growth] = np.sqrt(np.mean((model.predict(X[4000:]) - y[4000:]) ** 2))
        has_sets = any(tree.categories_left for tree in model.trees)
        assert has_sets == (growth == "bestfirst")
    assert rmse["bestfirst"] < 0.35
    assert rmse["bestfirst"] < 0.5 * rmse["symmetric"]


@pytest.mark.parametrize("missing", [False, True])
def test_categorical_splits_predict_alike_in_every_walk(missing):
    """The raw walk, the leaf indices, TreeSHAP and the binned walk of the
    training scores all send a category where its split's set says; with
    missing values in some rows, blocks of rows with and without them
    (walked with and without the missing side's test) alike."""
    X, y = _category_problem(n=2000, n_categories=30, seed=25)
    Y = np.column_stack([y, -y + X[:, 1]])
    if missing:
        rows = np.random.default_rng(3).choice(2000, 150, replace=False)
        X[rows[:100], 0] = np.nan
        X[rows[50:], 1] = np.nan
    data = gbmo.Dataset(X, Y, categorical_feature=[0])
    model = gbmo.train({**QUIET, "max_leaves": 12}, data, 15, valid_sets=[data],
                       valid_names=["train"])
    assert any(tree.categories_left for tree in model.trees)
    raw = model.predict(X, raw_score=True)
    rmse = np.mean(np.sqrt(np.mean((raw - Y) ** 2, axis=0)))  # averaged over the outputs
    assert model.evals_result["train"]["rmse"][-1] == pytest.approx(rmse, rel=1e-12)
    contributions = model.predict(X[:200], pred_contrib=True)
    np.testing.assert_allclose(contributions.sum(axis=1), raw[:200], atol=1e-9)
    leaves = model.predict_leaf(X)
    by_leaves = model.init_score + sum(tree.dense_leaf_values(2)[leaves[:, t]]
                                       for t, tree in enumerate(model.trees))
    np.testing.assert_allclose(by_leaves, raw, atol=1e-9)


@pytest.mark.parametrize("layout", ["forest", "list of trees"])
@pytest.mark.parametrize("value", [{"1": [3, 1]}, {"1": [-1]}, {"0": "x"}, [1]])
def test_malformed_category_sets_in_a_model_file_are_refused(value, layout):
    import json

    X, y = _category_problem(n=600, n_categories=6, seed=26)
    model = gbmo.train({**QUIET, "categorical_feature": [0], "min_samples_leaf": 5},
                       gbmo.Dataset(X, y), 3)
    data = listed(model)
    tree = next(t for t in data["trees"] if "categories_left" in t)
    tree["categories_left"] = value
    with pytest.raises(ModelFormatError, match="categories_left"):
        gbmo.Booster(model_str=json.dumps(in_layout(data, layout)))


@pytest.mark.parametrize("layout", ["forest", "list of trees"])
@pytest.mark.parametrize("change", ["numeric node", "rank beyond", "key 01", "bool rank",
                                    "no categorical field"])
def test_a_set_on_the_wrong_node_or_ranks_is_refused_at_load(change, layout):
    """Found by review: such files loaded, then the walk read raw values as
    ranks (a crash for negative values)."""
    import json

    X, y = _category_problem(n=600, n_categories=6, seed=27)
    model = gbmo.train({**QUIET, "categorical_feature": [0], "min_samples_leaf": 5},
                       gbmo.Dataset(X, y), 3)
    data = listed(model)
    tree = next(t for t in data["trees"] if "categories_left" in t)
    node = next(iter(tree["categories_left"]))
    numeric = next(str(i) for i, f in enumerate(tree["node_feature"])
                   if tree["node_left"][i] >= 0 and str(i) not in tree["categories_left"]
                   and f == 1) if change == "numeric node" else None
    if change == "numeric node":
        tree["categories_left"][numeric] = [0, 1]
    elif change == "rank beyond":
        tree["categories_left"][node] = [0, 500]
    elif change == "key 01":
        tree["categories_left"]["0" + node] = tree["categories_left"].pop(node)
    elif change == "bool rank":
        tree["categories_left"][node] = [True]
    else:
        del data["categorical"]
    with pytest.raises(ModelFormatError):
        gbmo.Booster(model_str=json.dumps(in_layout(data, layout)))


def test_extra_trees_draw_any_prefix_of_a_node_s_few_categories():
    """Found by review: a draw over the feature's 100 bins, clipped to a node
    with 3 categories, nearly always took the last prefix."""
    from gbmo._core._split import find_best_splits

    hist = np.zeros((1, 101, 3))
    for b in (10, 40, 70):
        hist[0, b] = [float(b - 40), 5.0, 5.0]
    chosen = []
    for draw in range(99):
        outputs = np.empty(1), np.empty(1, np.int32), np.empty(1, np.uint8)
        order = np.zeros((1, 101), np.int32)
        find_best_splits(hist, np.array([0], np.int32), np.array([100], np.int32),
                         hist[0].sum(axis=0), 1, 1, 1.0, 1.0, 1.0, 0.0, *outputs, 1,
                         random_bins=np.array([draw], np.int32),
                         categorical=np.array([1], np.uint8), cat_smooth=0.0,
                         category_order=order)
        chosen.append(int(outputs[1][0]))
    counts = np.bincount(chosen, minlength=2)
    assert counts[0] > 40 and counts[1] > 40  # each of the two prefixes about half the draws


def test_lightgbm_s_rules_keep_rare_noise_categories_out_of_the_trees():
    """A feature of 1,000 categories of about 3 rows each (binned four to a
    bin) that has no effect: without LightGBM's rules most splits take it,
    fitting its noise; with gbmo's defaults (no category of under 10 rows in
    a set, cat_l2 10) it gets a sixth of them, and the test error comes near
    the noise's 0.5."""
    rng = np.random.default_rng(0)

    def data(n):
        x = rng.normal(size=n)
        return np.column_stack([x, rng.integers(0, 1000, n)]), np.sin(2 * x) + 0.5 * rng.normal(size=n)

    X, y = data(3000)
    X_test, y_test = data(3000)
    params = {**QUIET, "categorical_feature": [1], "min_samples_leaf": 5}
    errors, splits = {}, {}
    for name, rules in (("off", NO_CATEGORY_RULES), ("defaults", {})):
        booster = gbmo.train({**params, **rules}, gbmo.Dataset(X, y), 50)
        errors[name] = np.sqrt(np.mean((booster.predict(X_test) - y_test) ** 2))
        splits[name] = booster.feature_importance("split")[1]
    assert splits["off"] > 0.6 * 50 * 30 and splits["defaults"] < splits["off"] / 4
    assert errors["defaults"] < errors["off"] - 0.05 and errors["defaults"] < 0.55


@pytest.mark.parametrize("name, value", [("cat_l2", -1.0), ("min_data_per_group", -5),
                                         ("max_cat_threshold", 0), ("max_cat_to_onehot", -1)])
def test_bad_category_rules_are_refused_before_training(name, value):
    X = np.column_stack([np.arange(100) % 7, np.arange(100.0)])
    with pytest.raises(ValueError, match=name):
        gbmo.train({**QUIET, "categorical_feature": [0], name: value},
                   gbmo.Dataset(X, np.arange(100.0)), 2)


def test_extra_trees_draw_every_category_of_a_one_category_split():
    """Found by review: a one-category split (max_cat_to_onehot) drew among
    the n_bins - 1 thresholds, so the last category was never sent alone."""
    from gbmo._core._split import find_best_splits

    hist = np.zeros((1, 4, 2))
    hist[0, :3] = [[5.0, 10.0], [-3.0, 10.0], [1.0, 10.0]]
    chosen = set()
    for draw in range(3):
        outputs = np.empty(1), np.empty(1, np.int32), np.empty(1, np.uint8)
        order = np.full((1, 4), -1, np.int32)
        find_best_splits(hist, np.array([0], np.int32), np.array([3], np.int32),
                         hist[0].sum(axis=0), 1, 0, 1.0, 1.0, 1.0, 0.0, *outputs, 1,
                         random_bins=np.array([draw], np.int32),
                         categorical=np.array([1], np.uint8), cat_smooth=0.0,
                         category_order=order, max_cat_to_onehot=4)
        assert outputs[1][0] == 0
        chosen.add(int(order[0, 0]))
    assert chosen == {0, 1, 2}


@pytest.mark.parametrize("n_categories", [40, 4])
def test_output_gains_of_categorical_sets_sum_to_their_gain(n_categories):
    """Found by review: the gain per output scored a set's children without
    cat_l2, as the search did (for ordered categories, not one category
    against the rest), so it did not sum to the split's gain."""
    X, y = _category_problem(n_categories=n_categories)
    Y = np.column_stack([y, -2.0 * y + 0.1])
    booster = gbmo.train({**QUIET, "categorical_feature": [0], "cat_l2": 25.0,
                          "min_data_per_group": 10}, gbmo.Dataset(X, Y), 5)
    assert sum(len(tree.categories_left) for tree in booster.trees) > 0
    np.testing.assert_allclose(booster.feature_importance("gain", per_output=True).sum(axis=1),
                               booster.feature_importance("gain"), rtol=1e-9)


def test_a_column_of_none_of_the_training_s_categories_warns_at_the_user_s_call():
    """Text categories in training, numbers here: every row would silently take
    the missing branch; the warning names the column and both sets, and
    points at the caller's line. New categories of the training's type, or
    one shared, do not warn."""
    rng = np.random.default_rng(0)
    codes = rng.integers(0, 3, 300)
    frame = pd.DataFrame({"x": rng.normal(size=300), "c": pd.Categorical(codes.astype(str))})
    booster = gbmo.train(QUIET, gbmo.Dataset(frame, codes + frame["x"].to_numpy()), 5)
    numbers = frame.assign(c=pd.Categorical(codes))
    with pytest.warns(UserWarning, match=r"X's column 'c' holds none of the training's "
                                         r"categories \('0', '1', '2'; here: 0, 1, 2, of "
                                         r"another type\)") as caught:
        from_numbers = booster.predict(numbers)
    # ours by its text: an old pandas on a newer numpy adds DeprecationWarnings of its own
    assert [w.filename for w in caught if "holds none of" in str(w.message)] == [__file__]
    missing = frame.assign(c=pd.Categorical([None] * 300, categories=["0", "1", "2"]))
    np.testing.assert_array_equal(from_numbers, booster.predict(missing))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        booster.predict(frame.assign(c=pd.Categorical(np.where(codes == 0, "0", "9"))))
        booster.predict(frame.assign(c=pd.Categorical(["new"] * 300)))
        booster.predict(missing)  # no category given at all: nothing to warn of


def test_the_warning_for_categories_of_another_type_covers_every_way_in():
    """A validation set given without reference= and a continued training's
    data are recoded too, and warn alike; two category columns swapped are
    named as reordered columns, not as categories of another type."""
    rng = np.random.default_rng(1)
    codes = rng.integers(0, 3, 300)
    frame = pd.DataFrame({"x": rng.normal(size=300), "c": pd.Categorical(codes.astype(str))})
    y = codes + frame["x"].to_numpy()
    numbers = frame.assign(c=pd.Categorical(codes))
    booster = gbmo.train(QUIET, gbmo.Dataset(frame, y), 2)
    expected = r"the Dataset's column 'c' holds none of the training's categories"
    with pytest.warns(UserWarning, match=expected) as caught:
        gbmo.train(QUIET, gbmo.Dataset(frame, y), 2, valid_sets=[gbmo.Dataset(numbers, y)])
    assert [w.filename for w in caught if "holds none of" in str(w.message)] == [__file__]
    with pytest.warns(UserWarning, match=expected):
        gbmo.train(QUIET, gbmo.Dataset(numbers, y), 2, init_model=booster)
    both = frame.assign(d=pd.Categorical(codes))
    on_both = gbmo.train(QUIET, gbmo.Dataset(both, y), 2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match=r"X's columns are the model's features in another "
                                             r"order \(x, d, c\)"):
            on_both.predict(both[["x", "d", "c"]])


def test_a_subset_made_with_another_reference_is_recoded_to_its_categories():
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(31)
    codes = rng.integers(0, 4, size=300)
    y = codes.astype(float) + 0.05 * rng.normal(size=300)
    names = ["a", "b", "c", "d"]
    frame = pd.DataFrame({"c": pd.Categorical.from_codes(codes, names)})
    reversed_frame = pd.DataFrame({"c": pd.Categorical(frame["c"], categories=names[::-1])})
    training = gbmo.Dataset(frame, y)
    params = {"verbosity": 0, "min_samples_leaf": 5, "max_leaves": 8}
    rows = np.arange(0, 300, 3)
    as_subset = gbmo.Dataset(reversed_frame, y).subset(rows, reference=training)
    as_valid = training.create_valid(reversed_frame.iloc[rows], y[rows])
    booster = gbmo.train(params, training, 10, valid_sets=[as_subset, as_valid])
    assert booster.evals_result["valid_0"]["rmse"] == booster.evals_result["valid_1"]["rmse"]
    assert booster.evals_result["valid_0"]["rmse"][-1] < 0.5


def _ranked_problem(n=3000, seed=6):
    rng = np.random.default_rng(seed)
    X = np.column_stack([rng.normal(size=n), rng.integers(0, 30, n),
                         rng.integers(0, 5, n)]).astype(float)
    y = (rng.permutation(30) / 3.0)[X[:, 1].astype(int)] + X[:, 2] + 0.1 * rng.normal(size=n)
    return X, y


_RANKED = {"num_leaves": 15, "verbosity": -1, "min_data_per_group": 5, "max_bins": 8}


def test_a_training_set_s_bins_do_not_depend_on_what_its_reference_or_itself_did_before():
    X, y = _ranked_problem()
    rows = np.flatnonzero(X[:, 1] < 12)
    # cv after the whole set was trained with a column ranked that cv reads as a number
    used = gbmo.Dataset(X, y)
    gbmo.train({**_RANKED, "categorical_feature": [1, 2]}, used, 3)
    fold_cv = {**_RANKED, "categorical_feature": [2]}
    assert gbmo.cv(fold_cv, used, 5, nfold=3) == gbmo.cv(fold_cv, gbmo.Dataset(X, y), 5, nfold=3)
    # 40 categories of well-apart effects in 8 bins: the part's own edges of
    # its ranks (mostly low categories) are not the whole set's
    rng = np.random.default_rng(4)
    categories = rng.integers(0, 40, 6000).astype(float)
    X = np.column_stack([rng.normal(size=6000), categories])
    y = categories + 0.01 * rng.normal(size=6000)
    rows = np.flatnonzero((categories < 10) | (rng.random(6000) < 0.2))
    params = {**_RANKED, "categorical_feature": [1], "cat_smooth": 1e-9}

    def sets():
        whole = gbmo.Dataset(X, y, categorical_feature=[1])
        return whole, gbmo.Dataset(X[rows], y[rows], reference=whole, categorical_feature=[1])

    # trained on (its own categories' edges), then a validation set: the training's edges
    whole, part = sets()
    gbmo.train(params, part, 3)
    watched = gbmo.train(params, whole, 5, valid_sets=[part]).evals_result["valid_0"]["rmse"]
    fresh_whole, fresh_part = sets()
    fresh = gbmo.train(params, fresh_whole, 5, valid_sets=[fresh_part])
    assert watched == fresh.evals_result["valid_0"]["rmse"]
    assert watched[-1] == pytest.approx(np.sqrt(np.mean((fresh.predict(X[rows]) - y[rows]) ** 2)))
    # a validation set, then trained on: its own categories' edges again
    whole, part = sets()
    gbmo.train(params, whole, 2, valid_sets=[part])
    np.testing.assert_array_equal(gbmo.train(params, part, 5).predict(X),
                                  gbmo.train(params, sets()[1], 5).predict(X))


def test_a_training_set_above_bin_subsample_draws_its_categories_edges_with_the_seed():
    X, y = _ranked_problem(n=4000, seed=7)
    params = {**_RANKED, "categorical_feature": [1], "bin_subsample": 1000}

    def part():
        reference = gbmo.Dataset(X[:800], y[:800], categorical_feature=[1])
        return gbmo.Dataset(X, y, reference=reference, categorical_feature=[1])

    reused = part()
    gbmo.train({**params, "seed": 1}, reused, 3)
    np.testing.assert_array_equal(gbmo.train({**params, "seed": 2}, reused, 5).predict(X),
                                  gbmo.train({**params, "seed": 2}, part(), 5).predict(X))


def test_bins_follow_the_edges_their_reference_chain_has_now():
    X, y = _ranked_problem(n=1000, seed=9)
    # a subset of a subset: the seed draws the edges from the whole set's 1,000 rows
    params = {**_RANKED, "bin_subsample": 400}

    def leaf():
        return gbmo.Dataset(X, y).subset(np.arange(300)).subset(np.arange(200))

    reused = leaf()
    gbmo.train({**params, "seed": 0}, reused, 2)
    np.testing.assert_array_equal(gbmo.train({**params, "seed": 2}, reused, 2).predict(X),
                                  gbmo.train({**params, "seed": 2}, leaf(), 2).predict(X))
    # a validation set of a training set that bins again between two runs
    params = {**_RANKED, "categorical_feature": [1]}

    def sets():
        whole = gbmo.Dataset(X, y, categorical_feature=[1])
        part = gbmo.Dataset(X[:300], y[:300], reference=whole, categorical_feature=[1])
        return part, gbmo.Dataset(X[300:], y[300:], reference=part, categorical_feature=[1])

    part, valid = sets()
    gbmo.train({**params, "max_bins": 255}, part, 1, valid_sets=[valid])
    gbmo.train(params, valid.subset(np.arange(200)), 1)  # bins valid and part as references
    used = gbmo.train(params, part, 3, valid_sets=[valid])
    fresh = gbmo.train(params, *sets()[:1], 3, valid_sets=[sets()[1]])
    assert used.evals_result["valid_0"]["rmse"][-1] == pytest.approx(
        np.sqrt(np.mean((used.predict(X[300:]) - y[300:]) ** 2)), rel=1e-12)
    np.testing.assert_array_equal(used.predict(X), fresh.predict(X))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_few_rows_rank_as_many_rows_do(dtype):
    """A request's few rows are ranked value by value (a dict, not a dozen
    numpy calls: a one-row prediction with two category columns took 60 us,
    now about 40): the same ranks as the general path, which a row among
    many takes, for known, unseen, huge, negative and missing values, in a
    feature ranked by table and one by search; the same refusals."""
    from gbmo.categorical import _FEW_ROWS

    order = CategoryOrder([0, 2], [np.array([0.0, 3.0, 7.0, 100.0]), np.array([5.0, 10**9])],
                          [np.array([2.0, 0.0, 3.0, 1.0]), np.array([1.0, 0.0])])
    values = [0, 3, 7, 100, 4, 10**9, 2**40, -1, -0.0, np.nan, 5]
    rng = np.random.default_rng(0)
    for _ in range(50):
        rows = rng.choice(values, size=(rng.integers(1, _FEW_ROWS + 1), 3)).astype(dtype)
        many = np.concatenate([rows, np.zeros((_FEW_ROWS, 3), dtype=dtype)])
        np.testing.assert_array_equal(order.encode(rows), order.encode(many)[:len(rows)])
    for bad in (2.5, -0.5, np.inf, -np.inf):
        rows = np.array([[bad, 0.0, 5.0]], dtype=dtype)
        many = np.concatenate([rows, np.zeros((_FEW_ROWS, 3), dtype=dtype)])
        with pytest.raises(ValueError) as few_error:
            order.encode(rows)
        with pytest.raises(ValueError) as many_error:
            order.encode(many)
        assert str(few_error.value) == str(many_error.value)
        assert "categories must be integers" in str(few_error.value)
