"""Which feature values a model reads as missing, LightGBM's use_missing and
zero_as_missing: with use_missing=False a missing value (NaN) is read as 0;
with zero_as_missing=True a 0 is read as missing. Both apply to the numeric
features (categorical ones keep their categories, NaN their missing value)
and to every X a model reads: the training and validation sets when they
are binned, and every prediction."""
import numpy as np

from .validation import is_scipy_sparse


# LightGBM's kZeroThreshold: a value this close to 0 is a zero to zero_as_missing
ZERO_THRESHOLD = 1e-35


def reading(params):
    """How a model with these parameters reads X: (whether NaN is missing,
    whether 0 is missing); zero_as_missing has no effect without use_missing."""
    use_missing = bool(params.get("use_missing", True))
    return use_missing, use_missing and bool(params.get("zero_as_missing", False))


def reads_as_given(params):
    """Whether X is read as given (LightGBM's defaults)."""
    return reading(params) == (True, False)


def check_readable(is_sparse, params):
    """A scipy sparse X (is_sparse: whether X is one) cannot hold its absent
    zeros as missing values."""
    if is_sparse and reading(params)[1]:
        raise ValueError("zero_as_missing=True needs a dense X: a scipy sparse matrix's absent "
                         "entries are zeros, which would all become missing values; pass "
                         "X.toarray(), or mark the missing entries NaN and keep "
                         "zero_as_missing=False")


def as_read(X, params, categorical=()):
    """X (dense, or canonical scipy CSR / CSC) as a model trained with params
    reads it: X itself when it reads it as given, else a copy."""
    if reads_as_given(params):
        return X
    check_readable(is_scipy_sparse(X), params)
    numeric = np.ones(X.shape[1], dtype=bool)
    numeric[list(categorical)] = False
    if is_scipy_sparse(X):  # use_missing=False: a stored NaN is read as 0
        X = X.copy()
        columns = X.indices if X.format == "csr" else np.repeat(np.arange(X.shape[1]),
                                                                  np.diff(X.indptr))
        X.data[np.isnan(X.data) & numeric[columns]] = 0.0
        return X
    X = np.array(X, copy=True)
    values = X[:, numeric]
    if reading(params)[1]:
        values[np.abs(values) <= ZERO_THRESHOLD] = np.nan
    else:
        values[np.isnan(values)] = 0.0
    X[:, numeric] = values
    return X
