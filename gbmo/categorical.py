"""Categorical features: each category becomes a rank, and each node splits
the categories into two sets.

The ranks come from an order learnt once, from the gradients of the first
round: for one output the categories' leaf values -G_c / (H_c + cat_smooth),
for d outputs the projection of their leaf vectors on the first principal
direction (weighted by their hessian sums, Coppersmith, Hong and Hosking
1999). The ranks are what the binned data, the model and the walks read: a
category is a bin (a few when there are more categories than bins).

Each node then orders the categories again, by the same statistic over its
own rows (gbmo._core._split.order_categories), and tries runs of that order
from either end as the set that goes left, under LightGBM's rules
(cat_smooth, cat_l2, min_data_per_group, max_cat_threshold,
max_cat_to_onehot; gbmo._core._split.search_categories): without them the
best prefix is, for one output, the best two-group split (Fisher 1958). A tree stores each
categorical split's set of ranks (Tree.categories_left); the walks, TreeSHAP
and the binned walk of training test membership. Symmetric trees, whose
levels share one threshold, split the ranks by a threshold instead.

Category values are integers (numbers with no fractional part, or a pandas
category column, whose codes are used). Negative values and NaN are missing;
a category the training data did not have is missing too.
"""

import math
import numbers
import warnings

import numpy as np

from .validation import (check_column_order, column_names, is_category_dtype, is_dataframe,
                         is_scipy_sparse, shortened, user_stacklevel)

# Categories are recorded as float64 in model files; every integer of this
# size and below is exact there.
MAX_CATEGORY = 2**31 - 1


def by_dtype(spec):
    """Whether categorical_feature asks for the pandas category columns:
    LightGBM's "auto", scikit-learn's HistGradientBoosting's "from_dtype"."""
    return isinstance(spec, str) and spec in ("auto", "from_dtype")


def _listed(spec, n_features):
    """The items (indices or names) of a categorical_feature other than
    "auto": None, one index, LightGBM's text forms ("0,3,5" and
    "name:shop,region"), a mask of booleans, one a feature (scikit-learn's
    form), or any other iterable."""
    if spec is None:
        return []
    if isinstance(spec, str):
        if spec.startswith("name:"):
            return spec[len("name:"):].split(",")
        return [int(item) if item.strip().lstrip("-").isdigit() else item
                for item in spec.split(",")]
    if isinstance(spec, (int, np.integer)):
        return [spec]
    items = list(spec)
    if not items or not all(isinstance(item, (bool, np.bool_)) for item in items):
        return items
    if len(items) != n_features:
        raise ValueError(f"categorical_feature is a mask of {len(items)} booleans; a mask "
                         f"needs one for each of the {n_features} features (or give the "
                         "categorical features' indices or names)")
    return [position for position, categorical in enumerate(items) if categorical]


def resolve_categorical_features(spec, n_features, feature_names, pandas_categories):
    """The sorted indices of the categorical features: spec lists indices or
    feature names, or is a mask of booleans; "auto" (or "from_dtype") means
    the pandas category columns."""
    if by_dtype(spec):
        return sorted(pandas_categories)
    indices = set()
    for item in _listed(spec, n_features):
        if isinstance(item, str):
            if feature_names is None:
                raise ValueError(f"categorical_feature names {item!r}, but X has no feature "
                                 "names (give a DataFrame, or feature_names, or indices)")
            if item not in feature_names:
                raise ValueError(f"categorical_feature names {item!r}, which is not a feature "
                                 f"name; the names are {feature_names}")
            indices.add(feature_names.index(item))
        elif isinstance(item, (int, np.integer)) and not isinstance(item, bool):
            if not 0 <= item < n_features:
                raise ValueError(f"categorical_feature {item} is out of range; X has "
                                 f"{n_features} features (indices 0 .. {n_features - 1})")
            indices.add(int(item))
        else:
            raise TypeError(f"categorical_feature must list feature indices or names, be a "
                            f"mask of booleans, one a feature, or be 'auto'; got the item "
                            f"{item!r}")
    missing_pandas = sorted(set(pandas_categories) - indices)
    if missing_pandas:
        names = [feature_names[f] for f in missing_pandas]
        raise ValueError(f"the pandas category columns {names} are not in categorical_feature; "
                         "list them too (or convert them to numbers)")
    return sorted(indices)


def refuse_sparse(X, features):
    if is_scipy_sparse(X):
        raise TypeError(f"categorical features ({features}) need dense X (a numpy array or a "
                        "DataFrame); this X is scipy sparse")


def category_values(column, feature, any_integer=False):
    """column's values as integer categories (float64), NaN for missing
    (negative or NaN); raises when a value is not an integer, or is one
    beyond MAX_CATEGORY unless any_integer: encoding with a fitted order
    reads those as unseen, as no training holds them (a deployment audit
    found one hashed id of 3e9 refusing a whole batch to predict, where an
    unseen 11 was missing; LightGBM reads both as unseen)."""
    column = np.asarray(column, dtype=np.float64)
    present = ~np.isnan(column)
    integer = np.isfinite(column) & (column == np.floor(column))
    bad = present & ~(integer & (any_integer | (np.abs(column) <= MAX_CATEGORY)))
    if bad.any():
        raise ValueError(f"categorical feature {feature} has the value "
                         f"{column[bad][0].item()!r}; "
                         f"categories must be integers up to {MAX_CATEGORY} (negative values "
                         "and NaN are missing)")
    return np.where(present & (column >= 0), column, np.nan)


def _principal_direction(values, weights):
    """The unit vector along which the weighted rows of values spread most,
    its largest component positive (so that the order does not depend on
    the solver's sign)."""
    if values.shape[1] == 1:
        return np.ones(1)
    centred = values - np.average(values, axis=0, weights=weights)
    _, _, vt = np.linalg.svd(np.sqrt(weights)[:, None] * centred, full_matrices=False)
    direction = vt[0]
    return direction if direction[np.argmax(np.abs(direction))] > 0 else -direction


# A feature whose categories (integers >= 0, sorted) end below this many slots
# a category, plus as many, is ranked through a table indexed by category: a
# binary search of each value took 12 ms a column of 200,000 rows.
_RANK_TABLE_SLOTS = 16
# At most this many rows, encode ranks value by value (CategoryOrder._few_ranks)
_FEW_ROWS = 8


def _ranks_by_table(values, categories, ranks):
    """values' ranks (NaN for missing values and categories not in training),
    read from a table of every category up to the largest, plus one slot of
    NaN where every other value points."""
    top = int(categories[-1])
    table = np.full(top + 2, np.nan)
    table[categories.astype(np.int64)] = ranks
    with np.errstate(invalid="ignore"):  # NaN compares false: the NaN slot
        inside = (values >= 0) & (values <= top)
    return table[np.where(inside, values, top + 1).astype(np.int64)]


class CategoryOrder:
    """The categories of each categorical feature and their ranks."""

    def __init__(self, features, categories, ranks):
        self.features = [int(f) for f in features]
        self.categories = [np.asarray(c, dtype=np.float64) for c in categories]
        self.ranks = [np.asarray(r, dtype=np.float64) for r in ranks]
        self._rank_of = None  # each feature's {category: rank}, on first need

    def same_as(self, other):
        """Whether other (a CategoryOrder or None) ranks the same categories
        of the same features alike, so that data binned by either is the same."""
        return other is not None and self.features == other.features and all(
            np.array_equal(a, b) for a, b in zip(self.categories + self.ranks,
                                                  other.categories + other.ranks))

    @classmethod
    def fit(cls, X, features, grad, hess, cat_smooth):
        """The order of each feature's categories by the projection of their
        leaf values -G_c / (H_c + cat_smooth) (see the module's docstring).
        grad is (n, d); hess (n, 1) (one hessian for every output) or (n, d)."""
        categories, ranks = [], []
        for f in features:
            values = category_values(X[:, f], f)
            present = ~np.isnan(values)
            seen, row_category = np.unique(values[present], return_inverse=True)
            n_seen = len(seen)
            if n_seen == 0:
                categories.append(seen)
                ranks.append(seen)
                continue
            gradient_sums, hessian_sums = (
                np.stack([np.bincount(row_category, per_row[present, j], n_seen)
                          for j in range(per_row.shape[1])], axis=1).astype(np.float64)
                for per_row in (grad, hess))
            denominator = hessian_sums + cat_smooth
            leaf_values = -np.divide(gradient_sums, denominator,
                                     out=np.zeros_like(gradient_sums), where=denominator > 0)
            # a custom objective's negative or non-finite values must not break the SVD
            leaf_values = np.nan_to_num(leaf_values, posinf=0.0, neginf=0.0)
            weights = np.nan_to_num(np.clip(hessian_sums.mean(axis=1), 0.0, None), posinf=0.0)
            weights = weights if weights.sum() > 0 else np.ones(n_seen)
            projection = leaf_values @ _principal_direction(leaf_values, weights)
            order = np.lexsort((seen, projection))  # ties: the smaller category first
            rank = np.empty(n_seen)
            rank[order] = np.arange(n_seen)
            categories.append(seen)
            ranks.append(rank)
        return cls(features, categories, ranks)

    def encode(self, X, in_place=False):
        """A copy of X whose categorical columns hold the categories' ranks (NaN
        where missing or unseen in training); X itself, so changed, when
        in_place (a float array the caller owns)."""
        refuse_sparse(X, self.features)
        out = X if in_place else np.array(
            X, dtype=np.float64 if X.dtype != np.float32 else np.float32)
        for position, (f, categories, ranks) in enumerate(zip(self.features, self.categories,
                                                              self.ranks)):
            few = self._few_ranks(position, X[:, f]) if X.shape[0] <= _FEW_ROWS else None
            if few is not None:
                out[:, f] = few
                continue
            values = category_values(X[:, f], f, any_integer=True)
            if not len(categories):  # training saw none: every value is missing
                out[:, f] = np.nan
            elif categories[-1] < _RANK_TABLE_SLOTS * len(categories) + _RANK_TABLE_SLOTS:
                out[:, f] = _ranks_by_table(values, categories, ranks)
            else:
                position = np.minimum(np.searchsorted(categories, values), len(categories) - 1)
                known = categories[position] == values  # False for NaN
                out[:, f] = np.where(known, ranks[position], np.nan)
        return out

    def _few_ranks(self, position, column):
        """The ranks of a few rows' values of the feature at position, read
        value by value from a dict: a request's numpy calls of the general
        path took half of a one-row prediction with two category columns
        (60 us against 23). None when a value is infinite or no integer,
        which the general path refuses by name."""
        if getattr(self, "_rank_of", None) is None:  # also a pickle of before
            self._rank_of = [dict(zip(c.tolist(), r.tolist()))
                             for c, r in zip(self.categories, self.ranks)]
        rank_of, ranks = self._rank_of[position], []
        for value in column.tolist():
            if value != value:  # NaN: missing
                ranks.append(math.nan)
            elif math.isinf(value) or not float(value).is_integer():
                return None
            else:  # a negative value is missing, an unseen one too
                ranks.append(rank_of.get(value, math.nan) if value >= 0 else math.nan)
        return ranks

    def encode_columns(self, columns):
        """encode of columns (n, len(features)), its features' columns alone
        in their order: their ranks."""
        return CategoryOrder(range(len(self.features)), self.categories,
                             self.ranks).encode(columns)

    def to_dict(self):
        return {"features": self.features,
                "categories": [c.tolist() for c in self.categories],
                "ranks": [r.astype(np.int64).tolist() for r in self.ranks]}

    @classmethod
    def from_dict(cls, data, n_features):
        """A CategoryOrder from to_dict's form; ValueError when it is malformed."""
        if not isinstance(data, dict) or not {"features", "categories", "ranks"} <= set(data):
            raise ValueError(f"'categorical' must be an object of 'features', 'categories' and "
                             f"'ranks' (lists), got {shortened(repr(data), 80)}")
        features, categories, ranks = data["features"], data["categories"], data["ranks"]
        if not (isinstance(features, list) and isinstance(categories, list)
                and isinstance(ranks, list) and len(features) == len(categories) == len(ranks)):
            raise ValueError("'categorical' needs lists of features, categories and ranks of "
                             "one length")
        for f, c, r in zip(features, categories, ranks):
            if isinstance(f, bool) or not isinstance(f, int) or not 0 <= f < n_features:
                raise ValueError(f"'categorical' names the feature {f!r}; allowed: indices "
                                 f"0 .. {n_features - 1}")
            if not (isinstance(c, list) and isinstance(r, list) and all(
                    isinstance(v, (int, float)) and not isinstance(v, bool) for v in c + r)):
                raise ValueError(f"'categorical' of feature {f} needs lists of numbers")
            c, r = np.asarray(c, dtype=np.float64), np.asarray(r, dtype=np.float64)
            if c.ndim != 1 or c.shape != r.shape \
                    or not np.all((c >= 0) & (c <= MAX_CATEGORY) & (c == np.floor(c))) \
                    or np.any(np.diff(c) <= 0) or not np.array_equal(np.sort(r),
                                                                     np.arange(c.size)):
                raise ValueError(f"'categorical' of feature {f} is malformed: it needs "
                                 "increasing integer categories and a permutation of their ranks")
        if len(set(features)) != len(features):
            raise ValueError("'categorical' lists a feature twice")
        return cls(features, categories, ranks)


def pandas_categories_from_dict(data, category_order):
    """The {column index: categories} a model file keeps, for the categorical
    features of category_order; ValueError when malformed."""
    if not isinstance(data, dict):
        raise ValueError("'pandas_categories' must be an object")
    features = category_order.features if category_order is not None else []
    found = {}
    for key, categories in data.items():
        index = int(key) if key.isdigit() else -1
        if index not in features or not isinstance(categories, list) \
                or not all(isinstance(c, (str, int, float)) and c == c for c in categories) \
                or len(set(categories)) != len(categories):
            raise ValueError("'pandas_categories' maps categorical features' indices to lists "
                             "of distinct strings or numbers")
        seen = category_order.categories[features.index(index)]
        if seen.size and seen[-1] >= len(categories):
            raise ValueError(f"'pandas_categories' of feature {index} has {len(categories)} "
                             f"categories, but the order has the code {int(seen[-1])}")
        found[index] = categories
    return found


def dataframe_categories(X):
    """{column index: list of categories} of a DataFrame's category columns,
    which a model file keeps: their categories must be strings or numbers."""
    if not is_dataframe(X):
        return {}
    found = {}
    for i, dtype in enumerate(X.dtypes):
        if not is_category_dtype(dtype):
            continue
        categories = [c.item() if isinstance(c, np.generic) else c
                      for c in X.iloc[:, i].cat.categories]
        odd = [c for c in categories if not isinstance(c, (str, int, float))]
        if odd:
            raise TypeError(f"category column {X.columns[i]!r} has the category {odd[0]!r} "
                            f"({type(odd[0]).__name__}); categories must be strings or numbers "
                            "(a model file keeps them): name them by their texts, "
                            f"X[{X.columns[i]!r}].cat.rename_categories(str), here and when "
                            "predicting")
        found[i] = categories
    return found


def recode(codes, categories, new_categories):
    """Codes into categories as codes into new_categories (NaN where a
    category is not there, or the code was NaN)."""
    position = {category: i for i, category in enumerate(new_categories)}
    mapping = np.array([position.get(c, np.nan) for c in categories] + [np.nan])
    present = ~np.isnan(codes)
    return mapping[np.where(present, codes, len(categories)).astype(np.intp)]


def _is_text(column):
    """A DataFrame column of strings (object or a string dtype), missing
    values aside, some of them maybe numbers (product codes 101 and "A7", as
    a spreadsheet gives them); not a category column, nor one of numbers."""
    if is_category_dtype(column.dtype) or getattr(column.dtype, "kind", "O") in "biuf":
        return False
    from pandas.api.types import infer_dtype

    return infer_dtype(column, skipna=True) in ("string", "mixed-integer", "mixed")


def named_positions(X, categorical_feature, params=None, feature_names=None):
    """The column positions of a DataFrame X that categorical_feature (a list
    of names or indices, or one name) and params' categorical_feature (any
    alias: CatBoost's cat_features, ...) name; none for anything else
    ("auto", None), nor for names X lacks: refused here when X has a text
    column left unnamed (whose refusal would otherwise blame it), else by
    resolve_categorical_features. Names are X's column names, or
    feature_names when given (a Dataset's feature_name, which renames them)."""
    from .params import keys_naming

    if not is_dataframe(X):
        return []
    params = params or {}
    columns = column_names(X)
    if feature_names is not None and not isinstance(feature_names, str):
        renamed = [str(name) for name in feature_names]
        if len(renamed) == len(columns):  # else the names' count is refused by name later
            columns = renamed
    positions, unmatched = [], []
    for given in [categorical_feature] + [params[key] for key in
                                          keys_naming(params, "categorical_feature")]:
        if by_dtype(given):
            continue
        try:
            items = _listed(given, len(columns))
        except (TypeError, ValueError):  # not a form of categorical_feature: refused later
            continue
        positions += [columns.index(item) if isinstance(item, str) else int(item)
                      for item in items
                      if (isinstance(item, str) and item in columns)
                      or (isinstance(item, (int, np.integer)) and not isinstance(item, bool)
                          and 0 <= item < len(columns))]
        unmatched += [item for item in items if isinstance(item, str) and item not in columns]
    unnamed_text = unmatched and [columns[p] for p in range(len(columns))
                                  if p not in positions and _is_text(X.iloc[:, p])]
    if unnamed_text:
        # else the text column's refusal told to name the column just misspelt
        which = "are not feature names" if len(unmatched) > 1 else "is not a feature name"
        raise ValueError(f"categorical_feature names {', '.join(map(repr, unmatched))}, which "
                         f"{which}; the names are {columns} (text columns {unnamed_text} must "
                         "be named to be categories)")
    return positions


def _mixes_numbers_and_text(categories):
    """Whether categories hold both strings and other values (codes 101 and "A7")."""
    return len({isinstance(category, str) for category in categories}) == 2


def text_columns_as_categories(X, positions):
    """A DataFrame X whose text columns at `positions`, and those of missing
    values only, are category columns (their strings the categories), as
    CatBoost takes cat_features of strings; any other X, or column, as it
    is. Training names such columns (categorical_feature); a model converts
    its category columns' positions (pandas_categories: {position:
    categories}), so that it predicts from the same strings, and there any
    column of a position whose categories mix numbers and text, as a request
    of the numbers alone among codes 101 and "A7" (a column of numbers where
    the categories are all text is a category's codes: refused later)."""
    if not is_dataframe(X):
        return X
    # a column of missing values only (None, NaN, pd.NA) holds no category at
    # all, of whatever dtype pandas gave it: a one-row request with a missing
    # category was refused as "of dtype object"
    text = [p for p in positions if p < X.shape[1]
            and (_is_text(X.iloc[:, p]) or X.iloc[:, p].isna().all()
                 or isinstance(positions, dict) and not is_category_dtype(X.dtypes.iloc[p])
                 and _mixes_numbers_and_text(positions[p]))]
    if not text:
        return X
    X = X.copy(deep=False)
    for position in text:
        X.isetitem(position, X.iloc[:, position].astype("category"))
    return X


def align_dataframe_categories(X, pandas_categories, n_features, feature_names=None,
                               name="X"):
    """A DataFrame X with each category column recoded to the training's
    categories (pandas_categories: {column index: categories}), so that its
    codes mean what they meant in training; a category training did not have
    is missing. Other X is taken to hold the codes already, as in LightGBM,
    and so is X without the training's n_features columns, which the
    caller's check of the column count refuses. X holding the model's
    features (feature_names, None when unknown) in another order is refused,
    as a reading by position would swap them (LightGBM reads them so
    silently). A column whose kind (category or numeric) differs from the
    training's column at its position is refused. Errors call X name."""
    if not is_dataframe(X) or X.shape[1] != n_features:
        return X
    check_column_order(X, feature_names, name)
    X = text_columns_as_categories(X, pandas_categories)
    here = set(dataframe_categories(X))
    mismatched = sorted(here ^ set(pandas_categories))
    if mismatched:
        index = mismatched[0]
        was, now = (("a category column", f"of dtype {X.dtypes.iloc[index]}")
                    if index not in here else ("numeric", "a category column"))
        trained_as = f" ({feature_names[index]!r})" if feature_names is not None else ""
        raise TypeError(f"{name}'s column {index} ({X.columns[index]!r}) is {now}, where the "
                        f"training's column {index}{trained_as} was {was}: give {name} the "
                        "training's columns, in its order and of its kinds")
    if not pandas_categories:
        return X
    X = X.copy(deep=False)
    for index, categories in pandas_categories.items():
        column = X.iloc[:, index]
        recoded = column.cat.set_categories(categories)
        if lost_every_category(column.notna().to_numpy(), recoded.isna().to_numpy(),
                               column.cat.categories, categories):
            warn_no_category_known(name, X.columns[index], column.cat.categories, categories)
        X.isetitem(index, recoded)
    return X


_CATEGORIES_SHOWN = 5


def _numeric(categories):
    return all(isinstance(c, numbers.Number) for c in categories)


def lost_every_category(given, missing, categories, trained):
    """Whether a column whose rows given (a mask) hold a category, and are
    missing once recoded (mask), lost every one of them to categories of
    another type (text against numbers) than the training's: every row
    then takes the missing values' branch, which, silently, looks like a
    model that ignores the feature. New categories of the training's type
    are not counted: a batch of them is a normal input; nor are categories
    where training had none (a column all missing there), of no type."""
    return (len(trained) > 0 and given.any() and missing[given].all()
            and _numeric(categories) != _numeric(trained))


def warn_no_category_known(name, column, given, trained):
    """Warns that name's column holds none of the training's categories (see
    lost_every_category), pointing at the user's call."""
    def shown(categories):
        listed = ", ".join(repr(c) for c in list(categories)[:_CATEGORIES_SHOWN])
        return listed + (", ..." if len(categories) > _CATEGORIES_SHOWN else "")

    warnings.warn(f"{name}'s column {column!r} holds none of the training's categories "
                  f"({shown(trained)}; here: {shown(given)}, of another type), so every row is "
                  "read as missing there; give the categories as training had them",
                  UserWarning, stacklevel=user_stacklevel())
