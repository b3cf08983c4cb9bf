"""Tables as real data comes: pandas' object, nullable and Arrow-backed
columns, and polars' and pyarrow's tables, read as the numbers (NaN where
missing) and the categories the same data has in a float array or a pandas
DataFrame of category columns.

polars and pyarrow are in the test extra: these tests run in CI."""
import numpy as np
import pandas as pd
import polars as pl
import pyarrow as pa
import pytest

import gbmo
from gbmo.sklearn import GBMORegressor

N = 300
PARAMS = {"verbosity": 0, "min_samples_leaf": 5}
rng = np.random.default_rng(3)
A = rng.normal(size=N)
CODES = rng.integers(0, 4, size=N)
MISSING = np.arange(N) % 6 == 1
CATEGORIES = np.array(["north", "south", "east", "west"])
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


def _category_frame(codes=CODES, missing=MISSING):
    return pd.DataFrame({"a": A[:len(codes)],
                         "region": pd.Categorical(np.where(missing, None, CATEGORIES[codes]),
                                                  categories=CATEGORIES)})


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


def test_polars_frame_is_read_with_its_names_missing_values_and_categories():
    """polars DataFrames were refused, naming every column, Float64 ones too,
    as non-numeric."""
    frame = pl.DataFrame({
        "a": A,
        "count": pl.Series(np.where(MISSING, None, CODES).tolist(), dtype=pl.Int64),
        "flag": pl.Series(np.where(MISSING, None, CODES > 1).tolist(), dtype=pl.Boolean),
        "region": pl.Series(CATEGORIES[CODES]).cast(pl.Categorical),
    })
    reference = pd.DataFrame({"a": A, "count": np.where(MISSING, np.nan, CODES),
                              "flag": np.where(MISSING, np.nan, CODES > 1),
                              "region": pd.Categorical(CATEGORIES[CODES])})
    _same_predictions(frame, reference)
    booster = gbmo.train(PARAMS, gbmo.Dataset(frame, Y), 5)
    assert booster.feature_names == ["a", "count", "flag", "region"]
    assert sorted(booster.pandas_categories[3]) == sorted(CATEGORIES)
    # another frame's categories, one of them new, are recoded by value
    new = pl.DataFrame({"a": A[:4], "count": [1, None, 2, 3], "flag": [True, None, False, True],
                        "region": pl.Series(["west", "unseen", None, "north"])
                        .cast(pl.Categorical)})
    as_pandas = pd.DataFrame({"a": A[:4], "count": [1, np.nan, 2, 3],
                              "flag": [1.0, np.nan, 0.0, 1.0],
                              "region": pd.Categorical(["west", None, None, "north"])})
    np.testing.assert_array_equal(booster.predict(new), booster.predict(as_pandas))
    model = GBMORegressor(n_estimators=5, min_samples_leaf=5).fit(frame, Y)
    assert list(model.feature_names_in_) == model.feature_name_ == booster.feature_names
    np.testing.assert_array_equal(model.predict(new), booster.predict(new))


def test_polars_enum_is_a_category_column():
    frame = pl.DataFrame({"a": A, "region": pl.Series(CATEGORIES[CODES])
                          .cast(pl.Enum(list(CATEGORIES)))})
    _same_predictions(frame, _category_frame(missing=np.zeros(N, dtype=bool)))


def test_pyarrow_table_and_record_batch_keep_names_nulls_and_dictionaries():
    """A pyarrow Table was read through numpy: its column names were lost,
    and a dictionary column was refused as objects."""
    columns = {"a": A, "region": pa.array(np.where(MISSING, None, CATEGORIES[CODES]))
               .dictionary_encode()}
    reference = _category_frame()
    for table in (pa.table(columns), pa.RecordBatch.from_pydict(columns)):
        _same_predictions(table, reference)
        assert gbmo.train(PARAMS, gbmo.Dataset(table, Y), 2).feature_names == ["a", "region"]
    nulls = pa.table({"a": A, "count": pa.array(np.where(MISSING, None, CODES).tolist(),
                                                pa.int64())})
    _same_predictions(nulls, _float_frame())


def test_arrow_backed_pandas_dictionary_column_is_a_category_column():
    """pandas' Arrow-backed frames (read_parquet(dtype_backend="pyarrow"))
    hold categories as dictionary columns, which were refused as non-numeric."""
    arrow_backed = pa.table({"a": A, "region": pa.array(np.where(
        MISSING, None, CATEGORIES[CODES])).dictionary_encode()}).to_pandas(
        types_mapper=pd.ArrowDtype)
    assert isinstance(arrow_backed["region"].dtype, pd.ArrowDtype)
    _same_predictions(arrow_backed, _category_frame())
    # new rows, as another Arrow-backed frame of other categories
    new_codes = np.array([3, 0, 1])
    new = _category_frame(new_codes, np.array([False, True, False]))
    new_arrow = pa.Table.from_pandas(new, preserve_index=False).to_pandas(
        types_mapper=pd.ArrowDtype)
    _same_predictions(arrow_backed, _category_frame(), new_arrow, new)


def test_arrow_backed_decimal_column_is_a_column_of_numbers():
    """Found by a data scientist's audit: read_parquet(dtype_backend="pyarrow")
    gives decimals an Arrow dtype that was refused as non-numeric, where the
    same column read as objects was taken."""
    import decimal

    counts = pa.array([None if gone else decimal.Decimal(int(code)) for gone, code in
                       zip(MISSING, CODES)], pa.decimal128(10, 2))
    arrow_backed = pa.table({"a": A, "count": counts}).to_pandas(types_mapper=pd.ArrowDtype)
    assert str(arrow_backed["count"].dtype).startswith("decimal128")
    _same_predictions(arrow_backed, _float_frame())


def test_polars_and_pyarrow_targets_and_weights():
    weight = 1.0 + CODES
    X = _float_frame()
    expected = gbmo.train(PARAMS, gbmo.Dataset(X, np.where(MISSING, np.nan, Y),
                                               weight=weight), 5).predict(X)
    for y, w in ((pl.Series(np.where(MISSING, None, Y).tolist(), dtype=pl.Float64),
                  pl.Series(weight)),
                 (pa.chunked_array([np.where(MISSING, None, Y).tolist()], pa.float64()),
                  pa.array(weight))):
        booster = gbmo.train(PARAMS, gbmo.Dataset(X, y, weight=w), 5)
        np.testing.assert_array_equal(booster.predict(X), expected)


def _numeric_frame_of_kinds():
    """Columns of each numpy kind a frame of numbers may hold."""
    return pd.DataFrame({"a": A, "count": CODES, "small": CODES.astype(np.uint8),
                         "flag": CODES > 1, "low": np.where(MISSING, np.nan, A).astype(np.float32)})


@pytest.mark.parametrize("columns, dtype", [(["a", "count", "small", "flag", "low"], np.float64),
                                            (["low"], np.float32), (["a", "low"], np.float64),
                                            (["count", "flag"], np.float64)])
def test_frame_of_the_model_s_columns_is_read_as_checked_frames_are(columns, dtype):
    """Predictions take a frame of numpy-typed columns named as the model's
    features, in order, without the per-column checks (a one-row request
    through the Booster paid them 13x its trees' time); its values must be
    those the checks give."""
    from gbmo.validation import check_features, model_frame_values

    frame = _numeric_frame_of_kinds()[columns]
    values = model_frame_values(frame, columns)
    checked, _ = check_features(frame)
    assert values.dtype == checked.dtype == dtype
    np.testing.assert_array_equal(values, checked)


def test_other_frames_take_the_checked_reading():
    from gbmo.validation import model_frame_values

    frame = _numeric_frame_of_kinds()
    names = list(frame.columns)
    assert model_frame_values(frame, names) is not None
    for other, feature_names in [(frame, names[::-1]), (frame, names[:-1]), (frame, None),
                                 (frame.rename(columns={"a": "b"}), names),
                                 (frame.astype({"count": "Int64"}), names),
                                 (frame.astype({"count": "category"}), names),
                                 (frame.astype({"count": object}), names),
                                 (frame.to_numpy(), names)]:
        assert model_frame_values(other, feature_names) is None


def test_predictions_on_the_model_s_frame_equal_those_on_its_array():
    frame = _numeric_frame_of_kinds()
    values = frame.to_numpy(dtype=np.float64)
    booster = gbmo.train(PARAMS, gbmo.Dataset(frame, Y), 5)
    model = GBMORegressor(n_estimators=5, min_samples_leaf=5).fit(frame, Y)
    on_array = GBMORegressor(n_estimators=5, min_samples_leaf=5).fit(values, Y)
    for row in (slice(0, 1), slice(None)):
        np.testing.assert_array_equal(booster.predict(frame[row]), booster.predict(values[row]))
        np.testing.assert_array_equal(model.predict(frame[row]), on_array.predict(values[row]))
    # scikit-learn's refusals of frames stay: no rows, and other names
    with pytest.raises(ValueError, match="0 sample"):
        model.predict(frame[:0])
    with pytest.raises(ValueError, match="feature names should match"):
        model.predict(frame.rename(columns={"a": "b"}))
