"""Checks of user arrays at the boundary, before any work is done."""
import numbers
import os
import sys
from collections import Counter

import numpy as np


def is_scipy_sparse(X):
    """scipy.sparse.issparse without importing scipy.sparse, which was half of
    `import gbmo` (0.3 of 0.67 s): X can only be one of its matrices or
    arrays once the module is loaded."""
    sparse = sys.modules.get("scipy.sparse")
    return sparse is not None and sparse.issparse(X)


def _is_numeric_dtype(dtype):
    """numpy numbers, and pandas' nullable Int64 / Float64 / boolean columns
    (extension dtypes with a numeric kind); strings and categories are not."""
    return getattr(dtype, "kind", "O") in "biuf"


def is_category_dtype(dtype):
    """Whether a DataFrame column's dtype is pandas' category. numpy's own
    dtypes never are, and str() of one costs about 2 us: a one-row request
    of 30 columns paid it 60 us a check."""
    return not isinstance(dtype, np.dtype) and str(dtype) == "category"


def spelling_known(name, *known):
    """name, or its lowercase when only that is in one of the collections
    known: LightGBM reads objective and metric names in any case ("Binary",
    "L2"), and exact spellings (CatBoost's "MultiClass") match first."""
    if any(name in names for names in known):
        return name
    lowered = name.lower()
    return lowered if any(lowered in names for names in known) else name


def listed_names(names):
    """Names given as an iterable, as a list (a generator can be read once
    only); a string ("auto"), None or anything else as it is."""
    if names is None or isinstance(names, str) or not hasattr(names, "__iter__"):
        return names
    return list(names)


def column_names(X):
    """A DataFrame's column names as strings, as gbmo names features."""
    return [column if isinstance(column, str) else str(column) for column in X.columns.tolist()]


def target_names(y):
    """A table target's column names (pandas' or polars'), else None: a
    validation target's columns are matched by position, as X's, and their
    names let a reordered one be refused (check_name_order)."""
    return [str(column) for column in list(y.columns)] if is_dataframe(y) else None


def model_frame_values(X, feature_names):
    """The values of a DataFrame X whose columns are a model's feature_names
    (a list) in order, each of a numpy number or bool dtype, as check_features
    reads them (float32 when every column is, else float64); None for any
    other X, which takes the checks and conversions of check_features. For
    such a frame those checks pass and convert nothing, but they cost a
    one-row prediction far more than its trees (about 100 us on 30 columns:
    each X.dtypes makes a Series)."""
    if feature_names is None or not is_pandas(X):
        return None
    dtypes = X.dtypes
    if not all(isinstance(dtype, np.dtype) and dtype.kind in "biuf" for dtype in dtypes) \
            or column_names(X) != list(feature_names):
        return None
    single = all(dtype == np.float32 for dtype in dtypes)
    return X.to_numpy(dtype=np.float32 if single else np.float64)


def is_pandas(data, kind="DataFrame"):
    """Whether data is a pandas DataFrame (or the pandas kind named), without
    importing pandas: data can only be one once pandas is loaded."""
    pandas = sys.modules.get("pandas")
    return pandas is not None and isinstance(data, getattr(pandas, kind))


def shortened(text, limit=40):
    """text cut to limit characters ("..." marking the cut), for errors that
    quote what a user gave."""
    return text if len(text) <= limit else text[: limit - 3] + "..."


_NAMED_COLUMNS = 5  # bad DataFrame columns listed by name in the error, the rest counted


def is_dataframe(X):
    """A table of named columns with a dtype each: a pandas DataFrame, or
    one alike (another library's table answers too, so callers read it as
    pandas' first, see as_pandas_table)."""
    # asked of the type: pandas makes a Series of dtypes for each instance
    # hasattr, which cost a one-row prediction of 11 columns a third of its time
    kind = type(X)
    return hasattr(kind, "columns") and hasattr(kind, "dtypes")


def _holds_numbers(column, dtype):
    """A plain object column whose values are all numbers (as a numpy object
    array of numbers is taken), or an Arrow-backed column of decimals (which
    pandas gives as objects, as read_parquet(dtype_backend="pyarrow") reads
    them); not strings of digits, and not a category or string dtype, whose
    values a model must not read as ordered numbers."""
    if hasattr(dtype, "pyarrow_dtype"):
        return str(dtype.pyarrow_dtype).startswith("decimal")
    if dtype != np.dtype(object):
        return False
    from pandas.api.types import infer_dtype

    return infer_dtype(column, skipna=True) in ("integer", "floating", "mixed-integer-float",
                                                "boolean", "decimal", "empty")


def _numbers_as_objects(column):
    """Whether a pandas column holds numbers that its to_numpy() can give as
    objects (pd.NA, Decimal, ...), where numpy needs floats: pandas' nullable
    Int64 / Float64 / boolean, Arrow-backed numbers, and object columns of
    numbers. Sparse columns are not: they have no pd.NA, and scikit-learn
    keeps a frame of them sparse."""
    from pandas import SparseDtype

    dtype = column.dtype
    if isinstance(dtype, np.dtype) or hasattr(dtype, "pyarrow_dtype") and dtype.kind == "O":
        return _holds_numbers(column, dtype)
    return _is_numeric_dtype(dtype) and not isinstance(dtype, SparseDtype)


def _as_floats(column):
    """A pandas column of numbers as float64, NaN where missing (NaN, None,
    pd.NA)."""
    if column.dtype == np.dtype(object):
        # pandas < 2 casts an object column to the dtype before it puts in
        # na_value, and float(pd.NA) raises: the missing values go first
        values = column.to_numpy(dtype=object)
        return np.where(column.isna().to_numpy(), np.nan, values).astype(np.float64)
    return column.to_numpy(dtype=np.float64, na_value=np.nan)


def _target_values(column):
    """A pandas column of y as a numpy array: numbers as floats where
    to_numpy() would give objects (see _numbers_as_objects), else as they are
    (class labels stay integers)."""
    return _as_floats(column) if _numbers_as_objects(column) else column.to_numpy()


def check_distinct_names(names, what):
    """Raises a ValueError naming the names that are repeated; what (say,
    "feature names") names them in the message."""
    repeated = sorted(str(name) for name, count in Counter(names).items() if count > 1)
    if repeated:
        raise ValueError(f"{what} must differ; repeated: {', '.join(repeated)}")


def check_dataframe_columns(X, name="X"):
    """Raises, before any conversion, a ValueError naming the repeated column
    names of a DataFrame X (each names a feature, as in LightGBM and
    scikit-learn), and a TypeError naming its non-numeric columns
    (category, object, string, datetime, ...), with their dtypes: numeric and
    bool columns, pandas' nullable Int64 / Float64 / boolean included, are
    allowed. Anything that is not a DataFrame passes."""
    if not is_dataframe(X):
        return
    check_distinct_names(column_names(X),
                         f"{name}'s column names, which name the features,")
    bad = [(X.columns[i], dtype) for i, dtype in enumerate(X.dtypes)
           if not _is_numeric_dtype(dtype) and not is_category_dtype(dtype)
           and not _holds_numbers(X.iloc[:, i], dtype)]
    if not bad:
        return
    listed = ", ".join(f"{column!r} ({dtype})" for column, dtype in bad[:_NAMED_COLUMNS])
    if len(bad) > _NAMED_COLUMNS:
        listed += f" and {len(bad) - _NAMED_COLUMNS} more"
    raise TypeError(
        f"{name} has {len(bad)} non-numeric column{'s' if len(bad) > 1 else ''}: {listed}; "
        "allowed: numeric or bool columns (int, float, bool, and pandas' nullable Int64, "
        "Float64, boolean) and category columns. Convert strings, dates and other values to "
        "numbers first, or make a column of labels a categorical feature: name it in the "
        "Dataset's categorical_feature (Dataset(X, y, categorical_feature=[...]), or its "
        "params; train's params come after the Dataset has read X) or the estimators' "
        "(CatBoost's cat_features), or df[col] = df[col].astype('category')."
    )


def check_column_order(X, feature_names, name="X"):
    """Raises a ValueError when the DataFrame X's columns are the model's
    feature_names in another order (a list; None: the model has no names),
    which a prediction by position would misread."""
    if is_dataframe(X):
        check_name_order(column_names(X), feature_names, name)


def check_column_count(X, n_features, feature_names, name="X"):
    """Raises a ValueError when the DataFrame X has not the model's
    n_features columns, naming the model's features (feature_names, None
    when unknown) it lacks and the columns it has besides: before its text
    columns are read, whose refusal would hide a missing column."""
    if is_dataframe(X) and X.shape[1] != n_features:
        raise ValueError(f"{name} has {X.shape[1]} features, but the model was trained on "
                         f"{n_features}{names_missing_and_unknown(X, feature_names)}")


def names_missing_and_unknown(X, feature_names):
    """"; missing: ...; not the model's: ..." of a DataFrame X's column names
    against the model's feature_names ("" where either has none)."""
    if not is_dataframe(X) or feature_names is None:
        return ""
    columns = column_names(X)
    missing = [name for name in feature_names if name not in columns]
    unknown = [name for name in columns if name not in feature_names]
    return ((f"; missing: {shortened(', '.join(missing), 300)}" if missing else "")
            + (f"; not the model's: {shortened(', '.join(unknown), 300)}" if unknown else ""))


def check_name_order(columns, feature_names, name="X", kind="features"):
    """check_column_order of columns' names (None: no names), kind naming
    what they are (a target's columns: "targets"): refused too
    when some are renamed, if a name of the model's stands at another
    position (a deployment audit found a reordered frame with one column
    renamed read by position). Not where a library made the model's names
    (pandas' integer labels, polars' column_0, ...), which a frame of other
    columns shares by chance, nor where the counts differ, which the width
    check names."""
    if columns is None or feature_names is None:
        return
    if list(columns) != list(feature_names) and sorted(columns) == sorted(feature_names):
        raise ValueError(f"{name}'s columns are the model's {kind} in another order "
                         f"({', '.join(columns)}); give them in the model's order: "
                         f"{', '.join(feature_names)}")
    if len(columns) != len(feature_names) or _generated_names(feature_names):
        return
    position = {feature: i for i, feature in enumerate(feature_names)}
    moved = [f"{column!r} at {i} (the model's {position[column]})"
             for i, column in enumerate(columns) if position.get(column, i) != i]
    if moved:
        listed = ", ".join(moved[:_NAMED_COLUMNS])
        if len(moved) > _NAMED_COLUMNS:
            listed += f" and {len(moved) - _NAMED_COLUMNS} more"
        raise ValueError(f"{name}'s columns hold the model's {kind} at other positions: "
                         f"{listed}; columns are read by position, so give the model's "
                         f"{kind} in its order: {shortened(', '.join(feature_names), 300)}")


def _generated_names(names):
    """Whether names are those a library gives unnamed columns: integer
    labels (a DataFrame of an array) or polars' column_0, column_1, ..."""
    return all(name.isdigit() or (name.startswith("column_") and name[7:].isdigit())
               for name in names)


def numeric_frame(X):
    """A DataFrame whose columns numpy reads as numbers: its category columns
    as their codes, which categorical features read as their categories (see
    gbmo.categorical), and its columns of numbers that numpy would read as
    objects (see _numbers_as_objects: an object column holding pd.NA) as
    float64, NaN where missing (as LightGBM reads pd.NA); other X as it is."""
    if not is_dataframe(X):
        return X
    columns = {}
    for i, dtype in enumerate(X.dtypes):
        if isinstance(dtype, np.dtype) and dtype.kind in "biuf":
            continue  # as it is, and not taken out of the frame: 20 us a column of a wide X
        column = X.iloc[:, i]
        if is_category_dtype(dtype):
            codes = column.cat.codes
            columns[i] = codes.astype(np.float64).where(codes >= 0)
        elif _numbers_as_objects(column):
            columns[i] = _as_floats(column)
    if columns:
        X = X.copy(deep=False)
        for i, column in columns.items():
            X.isetitem(i, column)
    return X


def _arrow_dictionaries_as_categories(X):
    """A pandas DataFrame whose Arrow dictionary columns (pd.ArrowDtype, as
    pandas reads a parquet file with dtype_backend="pyarrow") are category
    columns of the same categories, which gbmo reads as categorical features;
    other columns as they are. pyarrow is loaded when such a column is there."""
    arrow_backed = [i for i, dtype in enumerate(X.dtypes) if hasattr(dtype, "pyarrow_dtype")]
    if not arrow_backed:
        return X
    import pyarrow

    dictionaries = [i for i in arrow_backed
                    if pyarrow.types.is_dictionary(X.dtypes.iloc[i].pyarrow_dtype)]
    if not dictionaries:
        return X
    X = X.copy(deep=False)
    for i in dictionaries:
        # pandas' astype("category") of such a column fails on a null; pyarrow's is exact
        X.isetitem(i, pyarrow.array(X.iloc[:, i].array).to_pandas().array)
    return X


def as_pandas_table(X, name="X"):
    """X as gbmo reads a table: another library's table (a polars DataFrame,
    a pyarrow Table or RecordBatch: anything with a to_pandas() method)
    becomes a pandas DataFrame through its to_pandas(), which keeps the column
    names and makes its categorical (dictionary) columns category columns, so
    that gbmo needs neither library; a pandas DataFrame's Arrow dictionary
    columns become category columns. Errors call X name; other X as it is."""
    if isinstance(X, np.ndarray):  # the common case first: predict calls this for a row
        return X
    if is_pandas(X):
        return _arrow_dictionaries_as_categories(X)
    library = type(X).__module__.partition(".")[0]
    if not hasattr(X, "to_pandas"):
        if library == "polars" and hasattr(X, "collect"):
            # a LazyFrame: a query, which gbmo leaves to its owner to run
            raise TypeError(f"{name} is a lazy table ({library} {type(X).__name__}) whose rows "
                            f"are not computed yet; pass {name}.collect()")
        return X
    try:
        table = X.to_pandas()
    except ImportError as err:
        raise TypeError(f"{name} is a {library} {type(X).__name__}, which gbmo reads through "
                        f"its to_pandas(), and "
                        f"that needs a package that is not installed ({err}); install it "
                        "(pandas, and pyarrow for polars), or pass "
                        f"{name}.to_numpy(), which loses the column names and categorical "
                        "columns") from None
    return _arrow_dictionaries_as_categories(table) if is_pandas(table) else table


def user_stacklevel():
    """warnings.warn's stacklevel, for its caller, of the first frame outside
    gbmo: the user's call, however deep in gbmo the warning is made."""
    frame, level = sys._getframe(1), 1
    package = os.path.dirname(os.path.abspath(__file__)) + os.sep
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(package):
        frame, level = frame.f_back, level + 1
    return level


# How an array of text reaches categorical features, for its refusals
TEXT_CATEGORIES_HINT = ("; text is read as categories only in a pandas DataFrame's columns "
                        "named in categorical_feature (cat_features): give X as a DataFrame")


def is_own_copy(X, given):
    """Whether X, made from given (an array or a DataFrame), is a writable float
    array that shares no memory with it: a conversion's copy, which its maker
    may change in place."""
    if X is given or not isinstance(X, np.ndarray) or not X.flags.writeable \
            or X.dtype not in (np.float32, np.float64):
        return False
    if is_dataframe(given):
        sources = [given.iloc[:, i].to_numpy() for i, dtype in enumerate(given.dtypes)
                   if isinstance(dtype, np.dtype)]
    else:
        sources = [given] if isinstance(given, np.ndarray) else []
    return not any(np.may_share_memory(X, source) for source in sources)


def refuse_path(X, name):
    """LightGBM's Dataset reads files; gbmo's takes what they hold."""
    if isinstance(X, (str, os.PathLike)):
        raise TypeError(f"{name} is a path ({str(X)!r}): gbmo takes arrays, not files; load the "
                        "file first (numpy.loadtxt, pandas.read_csv) or train from a CSV file "
                        "on the command line (gbmo train)")


def _check_not_empty(X, name, allow_no_rows):
    """Refuses X without features, or without rows unless allow_no_rows (a
    prediction of no rows is empty, as LightGBM's; training needs rows)."""
    if (X.shape[0] == 0 and not allow_no_rows) or X.shape[1] == 0:
        raise ValueError(f"{name} is empty: shape {X.shape}")


def check_sparse_features(X, name="X", allow_no_rows=False):
    """A scipy sparse matrix or array as canonical CSR or CSC (sorted indices,
    no duplicates, indptr and indices of one integer dtype) of float32/float64.
    Other formats (COO, LIL, DOK, BSR, DIA) become CSR; the input is copied
    only when something has to change. Implicit entries are 0, stored NaN is
    missing."""
    if X.ndim != 2:
        raise ValueError(f"{name} must be 2-D (n_rows, n_features), got shape {X.shape}")
    if X.format not in ("csr", "csc"):
        X = X.tocsr()
    check_sparse_structure(X, name)
    if X.dtype.kind not in "biuf":
        raise TypeError(
            f"{name} has dtype {X.dtype}; gbmo takes numeric (int, float, bool) data only"
        )
    _check_not_empty(X, name, allow_no_rows)
    if X.dtype not in (np.float32, np.float64):
        X = X.astype(np.float64)
    if X.indices.dtype != X.indptr.dtype:
        X = X.copy()
        X.indices = X.indices.astype(np.int64)
        X.indptr = X.indptr.astype(np.int64)
    if not X.has_canonical_format:
        X = X.copy()
        X.sum_duplicates()
    return X


def check_sparse_structure(X, name):
    """Refuses a CSR / CSC matrix whose indptr or indices point outside it:
    scipy's constructor takes them unchecked (its check_format(full_check=True)
    would not be asked), and the kernels read where they point (a column
    index past the last column crashed the interpreter in training)."""
    major, minor = X.shape if X.format == "csr" else X.shape[::-1]
    lines, across = ("row", "column") if X.format == "csr" else ("column", "row")
    indptr, indices = np.asarray(X.indptr), np.asarray(X.indices)
    stored = min(len(indices), len(X.data))
    where = f"{name} is a malformed scipy sparse {X.format.upper()} matrix: "
    if len(indptr) != major + 1 or indptr[0] != 0:
        raise ValueError(where + f"its indptr must hold {major + 1} offsets from 0, one a "
                         f"{lines} and the end; it holds {len(indptr)} from {indptr[:1].tolist()}")
    steps = np.diff(indptr)
    if np.any(steps < 0):
        line = int(np.flatnonzero(steps < 0)[0])
        raise ValueError(where + f"its indptr decreases at {lines} {line} ({indptr[line]} then "
                         f"{indptr[line + 1]}); allowed: offsets that never decrease")
    if indptr[-1] > stored:
        raise ValueError(where + f"its indptr ends at {indptr[-1]}, past its {stored} stored "
                         "entries")
    used = indices[:indptr[-1]]
    outside = (used < 0) | (used >= minor)
    if np.any(outside):
        entry = int(np.flatnonzero(outside)[0])
        raise ValueError(where + f"its entry {entry} has {across} index {used[entry]}; allowed: "
                         f"0 .. {minor - 1}")


def check_features(X, name="X", allow_no_rows=False):
    """X as a 2-D float32/float64 array (any memory order) plus its column names.

    pandas DataFrames of numeric and category columns keep their names; bool
    and integer data become float64, category columns their codes (see
    gbmo.categorical); object, string, datetime and complex data raise.
    scipy sparse matrices and arrays stay sparse (see check_sparse_features).
    Another library's table is read as pandas' by the callers (Dataset,
    Booster._check_X) before it comes here, through as_pandas_table.
    """
    feature_names = None
    if is_pandas(X, "Series"):  # one row of a frame (df.iloc[i]) or one column
        raise ValueError(f"{name} is a pandas Series, where a table of rows is taken: give one "
                         "row as a one-row DataFrame (df.iloc[[i]]), one feature as a column "
                         "(series.to_frame())")
    refuse_path(X, name)
    if is_scipy_sparse(X):
        return check_sparse_features(X, name, allow_no_rows), None
    if is_dataframe(X):
        feature_names = column_names(X)
        check_dataframe_columns(X, name)
        X = numeric_frame(X)
        # float32 columns stay float32, as a float32 array does: a float64 copy
        # took twice the frame's memory (the same bins and predictions)
        single = len(X.columns) and all(dtype == np.float32 for dtype in X.dtypes)
        X = X.to_numpy(dtype=np.float32 if single else np.float64, na_value=np.nan)  # pd.NA: missing
    elif hasattr(X, "tocsr") or hasattr(X, "toarray"):
        raise TypeError(f"{name} is a sparse matrix of an unknown kind ({type(X).__name__}); "
                        "pass a scipy.sparse matrix or array, or a dense numpy array")
    try:
        X = np.asarray(X)
    except (TypeError, ValueError) as err:
        raise TypeError(f"{name} cannot be read as a numeric array: {err}") from None
    if X.dtype.kind not in "biuf":
        raise TypeError(
            f"{name} has dtype {X.dtype}; {name} must be numeric: gbmo takes numeric (int, "
            "float, bool) data only" + (" (convert the strings or objects to numbers first"
                                        f"{TEXT_CATEGORIES_HINT})" if X.dtype.kind in "OUS" else "")
        )
    if X.ndim != 2:
        one_dimension = ("; for one row, give it as a (1, n_features) array "
                         "(X.reshape(1, -1), a DataFrame's df.iloc[[i]]); for one feature, as "
                         "one column, an (n, 1) array (X.reshape(-1, 1), a Series' to_frame())"
                         if X.ndim == 1 else "")
        raise ValueError(f"{name} must be 2-D (n_rows, n_features), got shape {X.shape}"
                         + one_dimension)
    _check_not_empty(X, name, allow_no_rows)
    if X.dtype not in (np.float32, np.float64):
        X = X.astype(np.float64)
    return X, feature_names


def check_target(y, n_rows, name="y"):
    """y as a 1-D or 2-D numeric array with n_rows rows; a pandas y's
    nullable (Int64, Float64, boolean) and object columns of numbers as
    float64, NaN where missing (pd.NA, None), which numpy would keep as
    objects."""
    category_labels = ""
    if is_pandas(y, "Series"):
        if is_category_dtype(y.dtype):  # its codes are the class indices a loss takes
            category_labels = " (a category column: y.cat.codes gives its classes as integers)"
        y = _target_values(y)
    elif is_pandas(y) and y.shape[1]:
        y = np.column_stack([_target_values(y.iloc[:, i]) for i in range(y.shape[1])])
    elif hasattr(y, "to_numpy"):
        y = y.to_numpy()
    y = np.asarray(y)
    if y.dtype.kind not in "biuf":
        raise TypeError(
            f"{name} has dtype {y.dtype}{category_labels}; targets must be numeric "
            "(encode class labels as integers 0 .. n_classes - 1)"
        )
    if y.ndim not in (1, 2):
        raise ValueError(f"{name} must be 1-D or 2-D, got shape {y.shape}")
    if y.shape[0] != n_rows:
        raise ValueError(f"{name} has {y.shape[0]} rows but X has {n_rows}")
    if y.ndim == 2 and y.shape[1] == 0:
        raise ValueError(f"{name} has no outputs: shape {y.shape}")
    return y


def check_init_score(init_score, n_rows):
    """Per-row starting raw scores: finite, (n_rows,) or (n_rows, d); kept 2-D.
    Whether d matches the model's outputs is known only once the loss has
    read the target (see engine._starting_raw)."""
    if init_score is None:
        return None
    try:
        init_score = np.asarray(init_score, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError("init_score must be numbers, (n,) or (n, n_outputs)") from None
    if init_score.ndim not in (1, 2) or init_score.shape[0] != n_rows:
        flat = (init_score.ndim == 1 and init_score.size and init_score.size % n_rows == 0
                and init_score.size > n_rows)
        raise ValueError(f"init_score must have shape ({n_rows},) or ({n_rows}, n_outputs), "
                         f"got {init_score.shape}" + (
                             f"; LightGBM's flat layout, output by output, is "
                             f"init_score.reshape({init_score.size // n_rows}, {n_rows}).T, "
                             f"XGBoost's flat base_margin, row by row, "
                             f"base_margin.reshape({n_rows}, {init_score.size // n_rows})"
                             if flat else ""))
    if not np.all(np.isfinite(init_score)):
        raise ValueError("init_score must be finite")
    return np.ascontiguousarray(init_score.reshape(n_rows, -1))


def check_init_score_outputs(init_score, n_outputs, name):
    """init_score, as check_init_score returns it, gives a value per output of
    the model; errors call its owner name."""
    n_rows, given = init_score.shape
    if given != n_outputs:
        one_column = f" or ({n_rows},)" if n_outputs == 1 else ""
        raise ValueError(f"{name}'s init_score gives {given} value{'s' * (given > 1)} a "
                         f"row; the model has {n_outputs} outputs, so allowed: "
                         f"({n_rows}, {n_outputs}){one_column}")


# Gradients and hessians are float32: targets and weights (which multiply
# them) beyond this overflow them into inf and the model into NaN.
MAX_GRADIENT_INPUT = 1e30


def check_weight(weight, n_rows, name="weight"):
    """weight (None, a number for every row, or an array-like) as float64
    (n_rows,), or None; errors call it name."""
    if weight is None:
        return None
    if isinstance(weight, numbers.Number):
        weight = np.full(n_rows, weight, dtype=np.float64)
    try:
        weight = np.asarray(weight, dtype=np.float64)
    except (TypeError, ValueError) as err:
        raise TypeError(f"{name} must be numeric: {err}") from None
    if weight.shape != (n_rows,):
        raise ValueError(f"{name} must have shape ({n_rows},), got {weight.shape}")
    if not np.all(np.isfinite(weight)):
        raise ValueError(f"{name} must be finite and >= 0; it holds NaN or infinite values")
    if np.any(weight < 0):
        raise ValueError(f"{name} must be finite and >= 0; it holds negative values")
    if weight.size and weight.max() > MAX_GRADIENT_INPUT:
        raise ValueError(f"{name} holds values up to {weight.max():.3g}; allowed: <= "
                         f"{MAX_GRADIENT_INPUT:g} (the gradients and hessians the weights "
                         "multiply are float32): rescale them")
    if weight.sum() <= 0:
        raise ValueError(f"{name} must contain at least one non-zero weight: with all 0, "
                         "no sample would count")
    return weight


def check_feature_index(feature, names, owner):
    """feature, one of names or an index into them, as an index; owner
    ("model", "Dataset") names whose features they are in the errors."""
    if isinstance(feature, str):
        if feature not in names:
            shown = ", ".join(names[:10]) + (", ..." if len(names) > 10 else "")
            raise ValueError(f"feature {feature!r} is not one of the {owner}'s features "
                             f"({shown})")
        return names.index(feature)
    if isinstance(feature, (bool, np.bool_)) or not isinstance(feature, numbers.Integral) \
            or not 0 <= feature < len(names):
        raise ValueError(f"feature must be a feature name or an index in [0, "
                         f"{len(names) - 1}], got {feature!r}")
    return int(feature)


def one_of(name, value, other_name, other_value):
    """The argument given under gbmo's name or another library's; not both."""
    if value is not None and other_value is not None:
        raise ValueError(f"give {name} once: as {name} or as {other_name}, not both")
    return value if value is not None else other_value
