"""Tables as real data comes: pandas' object and nullable columns, read as
the numbers (NaN where missing) the same data has in a float array."""
import numpy as np
import pandas as pd

import gbmo
from gbmo.sklearn import GBMORegressor

N = 300
PARAMS = {"verbosity": 0, "min_samples_leaf": 5}
rng = np.random.default_rng(3)
A = rng.normal(size=N)
CODES = rng.integers(0, 4, size=N)
MISSING = np.arange(N) % 6 == 1
Y = A + CODES + rng.normal(scale=0.1, size=N)


def _predictions(X, y=Y, X_predict=None):
    """gbmo.train's and GBMORegressor's predictions, on X or X_predict."""
    X_predict = X if X_predict is None else X_predict
    booster = gbmo.train(PARAMS, gbmo.Dataset(X, y), 5)
    model = GBMORegressor(n_estimators=5, min_samples_leaf=5).fit(X, y)
    return booster.predict(X_predict), model.predict(X_predict)


def _same_predictions(X, reference, X_predict=None, reference_predict=None):
    for got, expected in zip(_predictions(X, X_predict=X_predict),
                             _predictions(reference, X_predict=reference_predict)):
        np.testing.assert_array_equal(got, expected)


def _float_frame():
    """The reference: the numbers as float64, NaN where missing."""
    return pd.DataFrame({"a": A, "count": np.where(MISSING, np.nan, CODES)})


def test_object_column_of_numbers_with_pd_na_reads_pd_na_as_missing():
    """An object column of numbers holding pd.NA raised numpy's bare "float()
    argument must be ... not 'NAType'", where None and NaN were missing values."""
    counts = pd.Series([pd.NA if gone else int(code) for gone, code in zip(MISSING, CODES)],
                       dtype=object)
    _same_predictions(_float_frame().assign(count=counts), _float_frame())


def test_target_frame_of_nullable_columns_reads_pd_na_as_missing():
    """A Y DataFrame of Float64 and Int64 columns was refused by gbmo.Dataset
    ("y has dtype object"), which the estimators took; pd.NA is a missing
    label, as NaN is."""
    first = np.where(MISSING, np.nan, Y)
    second = np.round(Y * 3)
    Y_frame = pd.DataFrame({"first": pd.array(np.where(MISSING, None, Y), dtype="Float64"),
                            "second": pd.array(second.astype(int), dtype="Int64")})
    expected = np.column_stack([first, second])
    np.testing.assert_array_equal(gbmo.Dataset(A[:, None], Y_frame).get_label(), expected)
    X = _float_frame()
    np.testing.assert_array_equal(gbmo.train(PARAMS, gbmo.Dataset(X, Y_frame), 5).predict(X),
                                  gbmo.train(PARAMS, gbmo.Dataset(X, expected), 5).predict(X))


def test_target_series_of_numbers_as_objects_is_numbers():
    """An object Series of numbers was refused as y by gbmo.Dataset (not by
    the estimators, nor as an X column)."""
    as_objects = pd.Series([None if gone else value for gone, value in zip(MISSING, Y)],
                           dtype=object)
    label = gbmo.Dataset(A[:, None], as_objects).get_label()
    np.testing.assert_array_equal(label, np.where(MISSING, np.nan, Y))


def test_class_labels_of_a_numpy_integer_series_stay_integers():
    labels = pd.Series(CODES)
    assert gbmo.Dataset(A[:, None], labels).get_label().dtype == CODES.dtype
