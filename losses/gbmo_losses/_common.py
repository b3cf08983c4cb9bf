"""Checks and array helpers shared by the losses (numpy only, nothing from gbmo)."""
import numbers

import numpy as np

# gbmo's gradients and hessians are float32: targets beyond this magnitude
# would overflow them into inf.
MAX_TARGET = 1e30


def float_target(y, objective, missing=False):
    """y (n,) or (n, d) as a float64 C-contiguous (n, d) array of finite numbers
    of magnitude <= MAX_TARGET, and NaN where a label is missing when
    `missing` (every column needs an observed one); ValueError naming
    `objective` otherwise."""
    y = np.asarray(y)
    if y.dtype.kind not in "biuf":
        raise ValueError(f"objective {objective!r} takes numeric targets, got dtype {y.dtype}")
    if y.ndim not in (1, 2):
        raise ValueError(f"objective {objective!r} takes targets of shape (n,) or (n, d), "
                         f"got shape {y.shape}")
    y = y.astype(np.float64)
    if missing:
        if np.any(np.isinf(y)):
            raise ValueError(f"objective {objective!r}: the target contains infinite values; "
                             "NaN marks a missing label, infinities are not allowed")
        unobserved = np.flatnonzero(np.all(np.isnan(y.reshape(len(y), -1)), axis=0))
        if y.size and unobserved.size:
            raise ValueError(f"objective {objective!r}: output(s) {unobserved.tolist()} have "
                             "no observed target (every value is NaN)")
    elif not np.all(np.isfinite(y)):
        raise ValueError(f"objective {objective!r}: the target contains NaN or infinite "
                         "values; it takes finite numbers only (missing labels are not "
                         "supported)")
    magnitude = np.nanmax(np.abs(y)) if y.size else 0.0
    if magnitude > MAX_TARGET:
        raise ValueError(f"objective {objective!r}: the target has values of magnitude "
                         f"{magnitude:.3g}; it takes |y| <= {MAX_TARGET:g} (gradients are "
                         "float32): rescale it")
    return np.ascontiguousarray(y.reshape(-1, 1) if y.ndim == 1 else y)


def given_once(objective, name, value, other_name, other_value, default, note=""):
    """A parameter that another library names otherwise (LightGBM's alpha for
    huber's delta, XGBoost's quantile_alpha): the one given, else default.
    note ends the error of both given."""
    if value is not None and other_value is not None:
        raise ValueError(f"objective {objective!r}: give {name} once, as {name} or as "
                         f"{other_name} (another library's name for it){note}")
    return value if value is not None else other_value if other_value is not None else default


def real_number(value, parameter, objective):
    """`value` as a float; ValueError unless it is a finite real number (not a bool)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) \
            or not np.isfinite(value):
        raise ValueError(f"objective {objective!r}: parameter {parameter!r} must be a finite "
                         f"number, got {value!r}")
    return float(value)


def number_above(value, parameter, objective, minimum, inclusive=False):
    """`value` as a float; ValueError unless it is a finite real number above
    `minimum` (or equal to it, when inclusive)."""
    number = real_number(value, parameter, objective)
    if number < minimum or (number == minimum and not inclusive):
        raise ValueError(f"objective {objective!r}: parameter {parameter!r} must be "
                         f"{'>=' if inclusive else '>'} {minimum:g}, got {value!r}")
    return number


def weighted(grad, hess, weight):
    """(grad, hess) multiplied by the sample weights (when given), as float32
    C-contiguous arrays."""
    if weight is not None:
        column = np.asarray(weight, dtype=np.float64)[:, None]
        grad, hess = grad * column, hess * column
    return (np.ascontiguousarray(grad, dtype=np.float32),
            np.ascontiguousarray(hess, dtype=np.float32))


def masked_weighted(grad, y, weight):
    """weighted(grad, hess of 1): grad 0 where y (grad's shape, or a column
    for all of them) is missing (NaN), and there a hessian of 0 too, so that
    those cells weigh nothing in any leaf. The hessian is then (n, d), which
    the histograms sum (one column of 1 lets them count rows instead)."""
    if not np.isnan(np.sum(y)):
        return weighted(grad, np.ones((len(grad), 1)), weight)
    observed = ~np.isnan(np.broadcast_to(y, grad.shape))
    return weighted(np.where(observed, grad, 0.0), observed.astype(np.float64), weight)


def observed_quantile(values, weight, q):
    """weighted_quantile of the observed (not NaN) values; NaN when none is."""
    observed = ~np.isnan(values)
    if observed.all():
        return weighted_quantile(values, weight, q)
    if not observed.any():
        return np.full(np.shape(q), np.nan) if np.ndim(q) else np.nan
    return weighted_quantile(values[observed], None if weight is None
                             else np.asarray(weight)[observed], q)


def weighted_quantile(values, weight, q):
    """Quantile(s) q of the 1-D `values`: the smallest value whose weighted
    cumulative share reaches q (numpy's "inverted_cdf"; unit weights give
    exactly numpy.quantile(values, q, method="inverted_cdf"))."""
    if weight is None:
        if np.ndim(q) == 0:
            # the same index as numpy's inverted_cdf, without numpy.quantile's
            # checks, which cost more than the partition on a leaf's few rows
            k = max(int(np.ceil(q * len(values))) - 1, 0)
            return np.partition(values, k)[k]
        return np.quantile(values, q, method="inverted_cdf")
    order = np.argsort(values, kind="stable")
    cumulative = np.cumsum(np.asarray(weight, dtype=np.float64)[order])
    index = np.searchsorted(cumulative, np.asarray(q) * cumulative[-1], side="left")
    return values[order][np.minimum(index, len(values) - 1)]
