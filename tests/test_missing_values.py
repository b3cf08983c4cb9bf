"""use_missing and zero_as_missing (LightGBM's): which values a model reads
as missing, in training and in every prediction."""
import numpy as np
import pytest
import scipy.sparse

import gbmo
from gbmo.missing_values import as_read

BASE = {"verbosity": 0, "n_threads": 1}


def data_with_zeros_and_nan(seed=0):
    """A target where a 0 of feature 0 means something else than small
    values (it behaves as 'not measured'), some NaN in feature 1."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(1200, 3))
    X[rng.random(1200) < 0.3, 0] = 0.0
    X[rng.random(1200) < 0.2, 1] = np.nan
    y = np.where(X[:, 0] == 0, 3.0, X[:, 0]) + np.nan_to_num(X[:, 1], nan=-2.0)
    return X, y


def test_zero_as_missing_is_training_on_zeros_made_nan():
    X, y = data_with_zeros_and_nan()
    as_missing = np.where(X == 0, np.nan, X)
    model = gbmo.train({**BASE, "zero_as_missing": True}, gbmo.Dataset(X, y), 20)
    reference = gbmo.train(BASE, gbmo.Dataset(as_missing, y), 20)
    np.testing.assert_array_equal(model.predict(X), reference.predict(as_missing))
    plain = gbmo.train(BASE, gbmo.Dataset(X, y), 20)
    assert not np.array_equal(model.predict(X), plain.predict(X))
    # kept with the model: a loaded one reads zeros as missing too
    loaded = gbmo.Booster(model_str=model.model_to_string())
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))
    np.testing.assert_array_equal(loaded.predict_leaf(X), reference.predict_leaf(as_missing))


def test_use_missing_false_reads_nan_as_zero():
    X, y = data_with_zeros_and_nan(1)
    as_zero = np.nan_to_num(X, nan=0.0)
    params = {**BASE, "use_missing": False}
    model = gbmo.train(params, gbmo.Dataset(X, y), 20,
                       valid_sets=[gbmo.Dataset(X[:300], y[:300])])
    reference = gbmo.train(BASE, gbmo.Dataset(as_zero, y), 20)
    np.testing.assert_array_equal(model.predict(X), reference.predict(as_zero))
    # and zero_as_missing then has no effect, as in LightGBM
    both = gbmo.train({**params, "zero_as_missing": True}, gbmo.Dataset(X, y), 20)
    np.testing.assert_array_equal(both.predict(X), model.predict(X))
    # a sparse X's stored NaN are read as 0 as well
    np.testing.assert_array_equal(model.predict(scipy.sparse.csr_matrix(X)), model.predict(X))


def test_categorical_features_keep_their_zero_category():
    rng = np.random.default_rng(2)
    X = np.column_stack([rng.integers(0, 4, 800), rng.normal(size=800)]).astype(float)
    X[rng.random(800) < 0.3, 1] = 0.0
    y = np.array([0.0, 5.0, -1.0, 2.0])[X[:, 0].astype(int)] + X[:, 1]
    numeric_only = X.copy()
    numeric_only[numeric_only[:, 1] == 0, 1] = np.nan
    params = {**BASE, "categorical_feature": [0], "min_data_per_group": 1, "cat_smooth": 1.0}
    model = gbmo.train({**params, "zero_as_missing": True}, gbmo.Dataset(X, y), 15)
    reference = gbmo.train(params, gbmo.Dataset(numeric_only, y), 15)
    np.testing.assert_array_equal(model.predict(X), reference.predict(numeric_only))


def test_as_read_copies_only_when_it_changes_something():
    X = np.array([[0.0, np.nan], [1.0, 0.0]])
    assert as_read(X, {"use_missing": True, "zero_as_missing": False}) is X
    np.testing.assert_array_equal(as_read(X, {"use_missing": True, "zero_as_missing": True}),
                                  [[np.nan, np.nan], [1.0, np.nan]])
    np.testing.assert_array_equal(as_read(X, {"use_missing": False, "zero_as_missing": True}),
                                  [[0.0, 0.0], [1.0, 0.0]])
    np.testing.assert_array_equal(X, [[0.0, np.nan], [1.0, 0.0]])  # the caller's X unchanged
    csc = scipy.sparse.csc_matrix(np.array([[np.nan, 1.0], [2.0, np.nan]]))
    read = as_read(csc, {"use_missing": False, "zero_as_missing": False}, categorical=[1])
    np.testing.assert_array_equal(read.toarray(), [[0.0, 1.0], [2.0, np.nan]])


def test_zero_as_missing_refuses_a_sparse_x_and_a_continued_model_that_reads_otherwise():
    X, y = data_with_zeros_and_nan(3)
    params = {**BASE, "zero_as_missing": True}
    with pytest.raises(ValueError, match="zero_as_missing=True needs a dense X"):
        gbmo.train(params, gbmo.Dataset(scipy.sparse.csr_matrix(np.nan_to_num(X)), y), 1)
    model = gbmo.train(params, gbmo.Dataset(X, y), 2)
    with pytest.raises(ValueError, match="zero_as_missing=True needs a dense X"):
        model.predict(scipy.sparse.csr_matrix(np.nan_to_num(X)))
    with pytest.raises(ValueError, match="init_model's trees read X otherwise"):
        gbmo.train(BASE, gbmo.Dataset(X, y), 1, init_model=model)
    with pytest.raises(TypeError, match="'use_missing' must be True or False"):
        gbmo.train({**BASE, "use_missing": "no"}, gbmo.Dataset(X, y), 1)


def test_a_model_that_reads_x_as_given_continues_whatever_the_inert_flag():
    """zero_as_missing has no effect without use_missing: the two read X alike."""
    X, y = data_with_zeros_and_nan(4)
    data = gbmo.Dataset(X, y)
    model = gbmo.train({**BASE, "use_missing": False}, data, 2)
    more = gbmo.train({**BASE, "use_missing": False, "zero_as_missing": True}, data, 2,
                      init_model=model)
    assert more.current_iteration() == 4


def test_values_within_lightgbm_s_zero_threshold_are_zeros():
    X = np.array([[1e-36], [-1e-36], [1e-34], [0.0]])
    read = as_read(X, {"use_missing": True, "zero_as_missing": True})
    np.testing.assert_array_equal(np.isnan(read[:, 0]), [True, True, False, True])


def test_models_that_read_x_otherwise_are_dumped_as_version_2():
    """So that a gbmo reading version 1 only refuses them rather than
    predicting from X as given; other models stay version 1 (dump_model's
    dict, whose trees are listed; save_model writes version 5)."""
    X, y = data_with_zeros_and_nan(5)
    for params, version in [(BASE, 1), ({**BASE, "zero_as_missing": True}, 2),
                            ({**BASE, "use_missing": False}, 2),
                            ({**BASE, "use_missing": False, "zero_as_missing": False}, 2)]:
        model = gbmo.train(params, gbmo.Dataset(X, y), 1)
        assert model.dump_model()["version"] == version


def test_split_value_histogram_leaves_out_missing_only_splits():
    """zero_as_missing's typical first split, zeros (missing) against every
    value, has threshold inf: no value of the feature."""
    rng = np.random.default_rng(6)
    X = rng.normal(size=(500, 2))
    X[rng.random(500) < 0.4, 0] = 0.0
    y = 3.0 * (X[:, 0] == 0) + X[:, 1]
    model = gbmo.train({**BASE, "zero_as_missing": True}, gbmo.Dataset(X, y), 5)
    thresholds = np.concatenate([t.node_threshold[(t.node_left >= 0) & (t.node_feature == 0)]
                                 for t in model.trees])
    assert len(thresholds) and np.isinf(thresholds).all()
    counts, _ = model.get_split_value_histogram(0)  # np.histogram refused inf
    assert counts.sum() == 0
    counts, _ = model.get_split_value_histogram(1)
    assert counts.sum() == np.sum([np.sum((t.node_left >= 0) & (t.node_feature == 1))
                                   for t in model.trees])
