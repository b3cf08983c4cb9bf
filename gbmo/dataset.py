"""Dataset: features, targets and weights, binned once and shared by validation sets."""

import copy

import numpy as np

from .binning import BinMapper
from .categorical import (align_dataframe_categories, by_dtype, dataframe_categories,
                          lost_every_category, named_positions, recode,
                          resolve_categorical_features, text_columns_as_categories,
                          warn_no_category_known)
from .foreign_keywords import DATASET_EQUIVALENTS, refuse_foreign_keywords
from .missing_values import as_read, reading
from .parallel import thread_count
from .params import (binned_data_params, check_dataset_params, resolve_params,
                     with_dataset_params)
from .sparse_output import check_sparse_labels, is_sparse_labels
from .validation import (as_pandas_table, check_distinct_names, check_feature_index,
                         check_features, check_init_score, check_target, check_weight,
                         is_scipy_sparse, listed_names, one_of, refuse_path, target_names)


def _other_libraries_keywords(keywords):
    """(base_margin, cat_features) of XGBoost's DMatrix and CatBoost's Pool
    keywords, gbmo's init_score and categorical_feature; enable_categorical,
    taken (gbmo reads category columns always); missing, checked as train's
    parameter (NaN, gbmo's own, taken; another marker refused); any other
    refused, naming gbmo's way for it."""
    keywords = dict(keywords)
    base_margin = keywords.pop("base_margin", None)
    cat_features = keywords.pop("cat_features", None)
    keywords.pop("enable_categorical", None)
    if "missing" in keywords:
        check_dataset_params({"missing": keywords.pop("missing")})
    refuse_foreign_keywords("Dataset", keywords, DATASET_EQUIVALENTS)
    return base_margin, cat_features


class Dataset:
    """Training or validation data.

    X is (n, p) numeric (numpy, a pandas DataFrame, whose column names become
    feature names, or a scipy sparse matrix / array: CSR and CSC are used as
    they are, other formats become CSR; implicit entries are 0, stored NaN is
    missing, and the binned data of sparse columns stays sparse); Y is (n,) or
    (n, d): regression targets, class indices for softmax and multiclassova,
    0/1 labels for sigmoid; or a scipy sparse (n, L) matrix of 0/1 labels, which trains the
    sparse-output path (gbmo.sparse_output) and is never densified. Binning
    happens once, on first use, with the training parameters.

    init_score, (n,) or (n, d), is each row's starting raw score (an offset,
    such as a log exposure, or another model's output), as in LightGBM: the
    trees fit what it leaves, and the model's predictions do not include it.

    categorical_feature lists the categorical features (indices or names) or
    is "auto": a DataFrame's category columns, whose codes become the
    categories (see gbmo.categorical). A validation set's category columns are
    recoded to the training set's categories.

    LightGBM's keywords work too: data for X, label for Y, feature_name for
    feature_names ("auto": the DataFrame's), params (checked as train's; of
    them the binned data's, params.DATASET_PARAMS, are what train, cv and
    Booster(params, train_set) take beneath their own), free_raw_data,
    which changes nothing (the raw X stays referenced until binned), and
    group, which is refused (gbmo has no ranking objectives). A validation set made
    with reference= or create_valid, or given to train without either,
    takes the training set's bin edges; a training set made with
    reference= (or by subset) takes its reference's too, but for its
    categorical features, whose categories its run ranks, binned on its own
    rows.
    """

    def __init__(self, X=None, Y=None, weight=None, feature_names=None, reference=None,
                 init_score=None, categorical_feature="auto", *, data=None, label=None,
                 feature_name="auto", free_raw_data=True, group=None, params=None,
                 **other_libraries_keywords):
        base_margin, cat_features = _other_libraries_keywords(other_libraries_keywords)
        init_score = one_of("init_score", init_score, "base_margin", base_margin)
        if cat_features is not None:
            categorical_feature = one_of(
                "categorical_feature",
                None if by_dtype(categorical_feature) else categorical_feature,
                "cat_features", cat_features)
        if group is not None:  # LightGBM's query groups, for its ranking objectives
            raise ValueError("Dataset(group=...) gives LightGBM's query groups for ranking: "
                             "gbmo has no ranking objectives, so it takes no groups")
        self.params = check_dataset_params(params if params is not None else {})
        X = one_of("X", X, "data", data)
        Y = one_of("Y", Y, "label", label)
        feature_names = one_of("feature_names", feature_names, "feature_name",
                                None if isinstance(feature_name, str) and feature_name == "auto"
                                else feature_name)
        if X is None:
            raise ValueError("Dataset needs the features: X (or data, LightGBM's name)")
        refuse_path(X, "X")
        if Y is None:
            raise ValueError("Dataset needs the target: Y (or label, LightGBM's name)")
        if isinstance(weight, Dataset):  # LightGBM's third argument is reference
            raise TypeError("weight is a Dataset: gbmo's third argument is weight, where "
                            "LightGBM's is reference; give the training set as reference=")
        feature_names = listed_names(feature_names)  # read twice below
        X = as_pandas_table(X)
        X = text_columns_as_categories(X, named_positions(X, categorical_feature, self.params,
                                                          feature_names))
        if reference is not None:
            X = align_dataframe_categories(X, reference.pandas_categories,
                                           reference.n_features, reference.feature_names)
        # codes given as numbers to a validation set are codes into the reference's categories
        self.pandas_categories = dataframe_categories(X) or (
            dict(reference.pandas_categories) if reference is not None else {})
        # one row may validate, with or without reference=: training refuses it
        self.X, names = check_features(X)
        self.set_label(Y)
        self.set_weight(weight)
        self.set_init_score(init_score)
        self.feature_names = names
        if feature_names is not None:
            self.set_feature_name(feature_names)
        self._refer_to(reference)
        self.categorical_feature = categorical_feature
        self.categorical_features()  # errors in the choice surface here, not in training
        self._drop_binned()

    def _refer_to(self, reference):
        """reference (None, or a Dataset of as many features) as the Dataset
        whose bin edges this one takes."""
        if reference is not None and self.n_features != reference.n_features:
            raise ValueError(f"validation X has {self.n_features} features, training X has "
                             f"{reference.n_features}")
        self.reference = reference

    @property
    def X(self):
        """The features: (n, p) numpy, or scipy CSR / CSC (a subset's rows of
        its source, copied when first read: training on binned rows never
        reads them)."""
        if self._X is None:
            source, rows = self._rows_of
            self._X = source.X[rows]
            if isinstance(self._X, np.ndarray):  # the binned rows are the source's
                self._X.flags.writeable = False
        return self._X

    @X.setter
    def X(self, features):
        # features of its own: a subset no longer takes its source's binned rows
        self._X, self._rows_of = features, None

    def __setstate__(self, state):
        if "X" in state:  # pickled by a gbmo of before lazy subsets: X itself
            state = {**state, "_X": state["X"], "_rows_of": None, "_own_categories": False}
            del state["X"]
        # pickled before a validation target's names were kept: none known
        self.__dict__.update({"label_names": None, **state})

    @property
    def is_sparse(self):
        """Whether X is a scipy sparse matrix (a subset's source's X is)."""
        if self._X is None:
            return self._rows_of[0].is_sparse
        return is_scipy_sparse(self._X)

    def _drop_binned(self):
        """Forgets the binned data, which construct() makes again."""
        self.X_binned = self.bin_mapper = self._binning = None
        self.category_order = None
        self._own_categories = False  # binned as a training set on its own categories' edges
        # what the trees' histogram builds read of the binned data, worked out
        # once for every training on it (grower.GrowerWorkspace.dense_layout)
        self.dense_layouts = {}

    @property
    def n_rows(self):
        """The number of rows (samples)."""
        return len(self._rows_of[1]) if self._X is None else self._X.shape[0]

    @property
    def n_features(self):
        """The number of features (columns of X)."""
        return self._rows_of[0].n_features if self._X is None else self._X.shape[1]

    def get_label(self):
        """The target as given: (n,) or (n, d) (or the sparse label matrix)."""
        return self.Y

    def get_weight(self):
        """The sample weights, or None."""
        return self.weight

    def get_init_score(self):
        """The rows' starting raw scores, or None."""
        return self.init_score

    def _field(self, field_name, kind):
        """The get or set method of a LightGBM field name."""
        methods = {"label": (self.get_label, self.set_label),
                   "weight": (self.get_weight, self.set_weight),
                   "init_score": (self.get_init_score, self.set_init_score)}
        if field_name not in methods:
            raise KeyError(f"unknown field {field_name!r}; allowed: {', '.join(methods)}")
        return methods[field_name][kind == "set"]

    def get_field(self, field_name):
        """LightGBM's get_field: "label", "weight" or "init_score"."""
        return self._field(field_name, "get")()

    def set_field(self, field_name, data):
        """LightGBM's set_field: sets "label", "weight" or "init_score" (None
        clears the last two), checked; returns self."""
        return self._field(field_name, "set")(data)

    def get_data(self):
        """The features as gbmo holds them (LightGBM's method): a numpy array,
        or a scipy CSR / CSC matrix; a DataFrame's values in its column order."""
        return self.X

    def set_feature_name(self, feature_name):
        """Names the features (LightGBM's method): a list of n_features names,
        or "auto" to keep them; returns self."""
        if isinstance(feature_name, str) and feature_name == "auto":
            return self
        if isinstance(feature_name, str) or not hasattr(feature_name, "__iter__"):
            raise TypeError(f"feature_name must be a list of {self.n_features} names or "
                            f"'auto', got {feature_name!r}")
        names = [str(name) for name in feature_name]
        if len(names) != self.n_features:
            raise ValueError(f"{len(names)} feature names for {self.n_features} features")
        check_distinct_names(names, "feature names")
        self.feature_names = names
        return self

    def set_categorical_feature(self, categorical_feature):
        """Sets which features are categorical, as the constructor's
        categorical_feature (LightGBM's method), checked; returns self. The
        binned data is dropped, so that training bins the features again."""
        self.categorical_features(categorical_feature)
        self.categorical_feature = categorical_feature
        self._drop_binned()
        return self

    def save_binary(self, filename):
        """LightGBM's binary Dataset file, which gbmo does not write: it bins X
        at each run in about half LightGBM's time (Dataset.construct of
        50,000 x 20 and 200,000 x 50 normal columns: 0.55x and 0.6x
        LightGBM's, session 37), and bins a categorical feature by the ranks
        each run learns, which no file made before the run holds."""
        raise NotImplementedError(
            "gbmo writes no binary Dataset file (LightGBM's save_binary): it bins X when a run "
            "starts, in about half LightGBM's time, and a categorical feature by the "
            "ranks each run learns. Keep X itself (numpy.save, DataFrame.to_parquet) or "
            "pickle the Dataset, which keeps its bins for runs of the same parameters")

    def feature_num_bin(self, feature):
        """The bins of feature (an index or a name) once the Dataset is binned
        (construct(), or training with it), as LightGBM's method: those that
        hold its values, and the missing values' when it has some. A
        categorical feature is binned as categories by training; construct()
        alone bins its codes as numbers."""
        if self.bin_mapper is None:
            raise ValueError("feature_num_bin needs the binned Dataset: call construct() "
                             "first, or train with it")
        index = check_feature_index(feature, self.get_feature_name(), "Dataset")
        return int(self.bin_mapper.n_bins_non_missing_[index]
                   + self.bin_mapper.has_missing_[index])

    def set_label(self, label):
        """Sets the target, checked; returns self."""
        if is_sparse_labels(label):  # many labels, kept sparse (GBDT-sparse, gbmo.sparse_output)
            self.Y = check_sparse_labels(label, self.n_rows)
        else:
            self.Y = check_target(label, self.n_rows)
        self.label_names = target_names(label)
        # A model trained on a 1-D target with one output predicts (n,), as
        # LightGBM, XGBoost and scikit-learn do, so that prediction - y stays (n,).
        self.one_dimensional_target = not is_sparse_labels(label) and np.ndim(label) == 1
        return self

    def set_weight(self, weight):
        """Sets the sample weights (None: none), checked; returns self."""
        self.weight = check_weight(weight, self.n_rows)
        return self

    def set_init_score(self, init_score):
        """Sets the rows' starting raw scores (None: none), checked; returns self."""
        self.init_score = check_init_score(init_score, self.n_rows)
        return self

    def num_data(self):
        """The number of rows, as LightGBM's method."""
        return self.n_rows

    def num_feature(self):
        """The number of features, as LightGBM's method."""
        return self.n_features

    @property
    def feature_name(self):
        """The feature names, as LightGBM's attribute (see get_feature_name)."""
        return self.get_feature_name()

    def get_feature_name(self):
        """The feature names (f0, f1, ... when none were given), as LightGBM's method."""
        return self.feature_names or [f"f{i}" for i in range(self.n_features)]

    def get_params(self):
        """The binned data's parameters among those given with the Dataset
        (params=), as LightGBM's: training takes them beneath its own."""
        return binned_data_params(self.params)

    def create_valid(self, X=None, Y=None, weight=None, init_score=None, *, data=None,
                     label=None, group=None, params=None):
        """A validation Dataset binned as this one (its bin edges, categories
        and feature names), as LightGBM's create_valid; data and label are
        LightGBM's names for X and Y, params its own (checked as a
        Dataset's)."""
        return Dataset(X, one_of("Y", Y, "label", label), weight, data=data,
                       feature_names=self.feature_names, reference=self,
                       init_score=init_score, categorical_feature=self.categorical_feature,
                       group=group, params=params)

    def subset(self, used_indices, params=None, *, reference=None):
        """The Dataset of these rows (indices), with this one's feature names,
        categorical features, params (updated by params, as LightGBM's) and
        pandas categories. As LightGBM's subset, it is binned with this
        Dataset's bin edges (reference, by default this Dataset; else as in
        create_valid), and while this Dataset is binned with the same edges
        the subset takes its rows of the binned data instead of binning X
        again: cv's folds and a search over them bin the data once. Its X is
        copied out of this one's only when read, and read-only (set its X to
        give it other features), so it holds this Dataset (and a pickle of it
        holds it too), as LightGBM's subset its parent.
        used_indices: row indices (or a boolean mask of every row)."""
        indices = np.asarray(used_indices)
        if indices.size == 0:
            raise ValueError("used_indices selects no row; a subset needs rows")
        try:
            rows = np.arange(self.n_rows)[indices]
        except IndexError as error:
            raise IndexError(f"used_indices must index the Dataset's {self.n_rows} rows: "
                             f"{error}") from None
        if rows.ndim != 1:
            raise ValueError("used_indices must be a 1-D array of row indices or a boolean "
                             f"mask of the {self.n_rows} rows, got shape {rows.shape}")

        def take(values):
            return None if values is None else values[rows]

        subset = copy.copy(self)
        subset._X, subset._rows_of = None, (self, rows)
        subset.params = check_dataset_params({**self.params, **(params or {})})
        subset._refer_to(self if reference is None else reference)
        subset.categorical_feature = self.categorical_features()
        subset.set_label(self.Y[rows]).set_weight(take(self.weight))
        subset.set_init_score(take(self.init_score))
        subset._drop_binned()
        return subset if reference is None else subset.in_categories(reference.pandas_categories)

    def _binned_rows(self, read_X, category_order):
        """The bins of X (read_X() as binning reads it, its categorical
        features ranked by category_order) by bin_mapper: a subset's rows of
        its source's binned data when the source is binned by the same
        mapper, or by the one whose edges it shares but for some categorical
        features, whose bins are then made here (dense bins: a sparse X's
        layout is worked out anew); else X's own."""
        if self._rows_of is not None:
            source, rows = self._rows_of
            base, features = self.bin_mapper.shared_from
            if isinstance(source.X_binned, np.ndarray) and (
                    source.bin_mapper is self.bin_mapper or (
                        base is source.bin_mapper and category_order is not None
                        and category_order.features == features)):
                X_binned = np.take(source.X_binned, rows, axis=1)  # C-ordered, as kernels read
                if source.bin_mapper is not self.bin_mapper:
                    X_binned[features] = self.bin_mapper.transform_features(
                        category_order.encode_columns(self._feature_columns(features)),
                        features)
                return X_binned
        return self.bin_mapper.transform(read_X())

    def in_categories(self, pandas_categories):
        """This Dataset with pandas_categories ({column index: categories}, a
        model's) as its category columns' categories: itself when they are
        its own, else a copy whose codes into its own categories are recoded
        into those (NaN where a category is not there). Codes given as
        numbers are taken as they are."""
        changed = {index: categories for index, categories in pandas_categories.items()
                   if self.pandas_categories.get(index, categories) != categories}
        if not changed and self.pandas_categories == pandas_categories:
            return self
        recoded = copy.copy(self)
        if changed:
            recoded.X = self.X.copy()
        for index, categories in changed.items():
            own = self.pandas_categories[index]
            recoded.X[:, index] = recode(self.X[:, index], own, categories)
            if lost_every_category(~np.isnan(self.X[:, index]), np.isnan(recoded.X[:, index]),
                                   own, categories):
                warn_no_category_known("the Dataset", self.feature_names[index]
                                       if self.feature_names is not None else index,
                                       own, categories)
        recoded.pandas_categories = dict(pandas_categories)
        recoded._drop_binned()
        return recoded

    def validation_of(self, training):
        """This Dataset as a validation set of training: binned with its bin
        edges, its category columns recoded to its categories. Itself when
        training is its reference already; else a copy. Without it, a set
        made without reference= (or with another one) would be binned with
        its own edges, which the trees' bin thresholds do not describe, and
        its metrics would be wrong; LightGBM, too, makes the training set
        the reference of such a set. train has checked the feature count."""
        if self.reference is training:
            return self
        valid = copy.copy(self.in_categories(training.pandas_categories))
        valid.reference = training
        valid._drop_binned()
        return valid

    def categorical_features(self, spec=None):
        """The indices of the categorical features that spec (default: this
        Dataset's categorical_feature) names (see gbmo.categorical)."""
        return resolve_categorical_features(
            self.categorical_feature if spec is None else spec, self.n_features,
            self.feature_names, self.pandas_categories)

    def construct(self, params=None):
        """Bins X (a training set fits the edges, a validation set takes its
        reference's), as LightGBM's construct(): with the Dataset's own
        params and the defaults, or with params, a dict of parameters over
        the Dataset's own (resolved and checked as train's; train bins again
        when its parameters bin otherwise)."""
        return self.bin_with(resolve_params(with_dataset_params(params, self)
                                            if params else binned_data_params(self.params)))

    def bin_with(self, params, category_order=None, training=False, as_reference=False):
        """construct with train's resolved parameters, the categorical
        features as their ranks in category_order; bins again only when a
        binning parameter, the order or the role changed. A training set
        (training) with a reference and categorical features takes the
        reference's edges but for those features, whose ranks are its own
        run's (see _mapper_with_own_categories); as a validation set it takes
        them all. as_reference: for a Dataset that takes this one's edges,
        which takes this one's bins of either role."""
        by_feature = params["max_bins_by_feature"]
        own_categories = bool(training and self.reference is not None and category_order
                              and category_order.features)
        # the seed draws the rows the edges come from only when they are more
        # than bin_subsample: a search over seeds keeps the bins otherwise
        edges_from = self
        while edges_from.reference is not None:  # whose rows the edges come from
            edges_from = edges_from.reference
        sampled = edges_from.n_rows > params["bin_subsample"] or (
            own_categories and self.n_rows > params["bin_subsample"])
        binning = (params["max_bins"], params["bin_subsample"],
                   params["seed"] if sampled else None, params["min_data_in_bin"],
                   None if by_feature is None else tuple(by_feature), reading(params))
        if self._still_binned(params, binning, category_order, own_categories, as_reference):
            return self
        self._binning = binning
        self.category_order = category_order
        self._own_categories = own_categories
        features = () if category_order is None else category_order.features

        def read_X():
            return as_read(self.X if category_order is None else category_order.encode(self.X),
                           params, features)

        def new_mapper(max_bins_by_feature):
            return BinMapper(params["max_bins"], params["bin_subsample"], params["seed"],
                             thread_count(params["n_threads"]), params["min_data_in_bin"],
                             max_bins_by_feature)

        if own_categories:
            self.bin_mapper = self._mapper_with_own_categories(params, category_order,
                                                               new_mapper)
        elif self.reference is not None:
            self.bin_mapper = self.reference.bin_with(params, category_order,
                                                      as_reference=True).bin_mapper
        else:
            self.bin_mapper = new_mapper(by_feature).fit(read_X(), features)
        self.X_binned = self._binned_rows(read_X, category_order)
        self.dense_layouts = {}
        return self

    def _still_binned(self, params, binning, category_order, own_categories, as_reference):
        """Whether the bins kept are those bin_with would make now: of the
        same parameters, ranking and role (any role as_reference), and, when
        made by the reference's edges, by the edges it has now (it may have
        fitted them again since, as a training set of its own)."""
        same_order = (category_order is None if self.category_order is None
                      else self.category_order.same_as(category_order))
        if self.X_binned is None or self._binning != binning or not same_order \
                or not (as_reference or self._own_categories == own_categories):
            return False
        return (self.reference is None or self._own_categories
                or self.reference.bin_with(params, category_order,
                                           as_reference=True).bin_mapper is self.bin_mapper)

    def _mapper_with_own_categories(self, params, category_order, new_mapper):
        """The bin mapper of a training set with a reference whose
        categorical features are ranked by its own run (a cv fold's): the
        reference's edges for the other features, the same under any
        ranking, so that the reference keeps its bins (binning it again with
        each fold's ranks was most of a categorical cv's time), and its own
        rows' edges of its categorical features' ranks."""
        features = category_order.features
        # its bins as they are, unless they rank a feature this run reads as a number
        order = self.reference.category_order
        if order is not None and not set(order.features) <= set(features):
            order = None
        reference = self.reference.bin_with(params, order, as_reference=True)
        ranks = category_order.encode_columns(self._feature_columns(features))
        by_feature = params["max_bins_by_feature"]
        own = new_mapper(None if by_feature is None else [by_feature[f] for f in features]
                         ).fit(ranks, range(len(features)))
        return reference.bin_mapper.with_features_of(features, own)

    def _feature_columns(self, features):
        """X[:, features], read out of a subset's source without copying the
        rest of its X."""
        if self._X is None:
            source, rows = self._rows_of
            return source._feature_columns(features)[rows]
        return self._X[:, features]

