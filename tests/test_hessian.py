"""is_constant_column, the test for a hessian the histograms count rows for,
against numpy's."""
import numpy as np
import pytest

from gbmo._core._hessian import is_constant_column


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("seed", range(8))
def test_is_constant_column_equals_the_numpy_test(dtype, seed):
    """One column of one number, not NaN: as numpy says it, on columns that
    are constant, differ in one row (the first, the last, any) or hold NaN,
    over several blocks of rows."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 40)) if seed < 4 else int(rng.integers(1000, 5000))
    column = np.full((n, 1), rng.choice([1.0, 0.25, 0.0, -3.0]), dtype=dtype)
    if seed % 4 == 1:
        column[rng.integers(n)] += 1.0
    elif seed % 4 == 2:
        column[rng.integers(n)] = np.nan
    expected = bool(np.all(column == column[0, 0]))
    assert is_constant_column(column) is expected
    assert is_constant_column(np.repeat(column, 2, axis=1)) is False  # not one column
    assert is_constant_column(column[:0]) is False  # no rows
    assert is_constant_column(np.full((1, 1), np.nan, dtype=dtype)) is False
