"""Booster: the trained model. Predicts, saves to versioned JSON and loads back."""
import copy
import json
import numbers
import os
import warnings

import numpy as np

from . import registry
from ._version import __version__
from ._core import NODE_DTYPE, WALK_NODE_DTYPE
from ._core._contrib import tree_shap
from ._core._predict import predict_leaf_raw, predict_raw
from ._core._sparse import predict_leaf_raw_csr, predict_raw_csr
from .categorical import (CategoryOrder, align_dataframe_categories,
                          pandas_categories_from_dict)
from .dataset import Dataset
from .foreign_keywords import METHOD_EQUIVALENTS, refuse_foreign_keywords
from .importance import OutputImportance
from .introspection import raw_score_bound, split_value_histogram, trees_to_dataframe
from .linear_leaves import linear_kernel_arguments
from .metric_history import MetricHistory
from .losses import LOADABLE_ONLY, CustomObjective, make_loss, with_class_count
from .missing_values import as_read, reads_as_given
from .objective_results import check_transformed
from .parallel import (MAX_THREADS, WORK_PER_ELEMENT, asked_threads, caller_threads,
                       thread_count, threads_for)
from .params import GBMO_LOSSES_OBJECTIVES, checked_value, keys_naming, plugin_objective_missing
from .registry import PluginError
from .training_run import TrainingRun
from .tree import LeafArrays, TreeFields, TreeFormatError, trees_of_model
from .validation import (as_pandas_table, check_column_count, check_features, column_names,
                         is_dataframe, is_own_copy, is_pandas, model_frame_values,
                         names_missing_and_unknown, one_of, shortened)

MODEL_FORMAT = "gbmo"
MODEL_VERSION = 6
FOREST_VERSION = 5
# Version 2 models may read X otherwise than as given (use_missing=False,
# zero_as_missing), or are random forests or have categorical features, which
# every reader of version 2 knows: only those are written as 2, so that a gbmo
# that reads version 1 only refuses them rather than predicting from X as
# given, adding a forest's trees instead of averaging them, or reading a
# categorical split as a threshold. A file's version is the highest its
# model needs.
# Version 3 models were trained on a sparse Y (field sparse_output): only
# those are written as 3, so that a gbmo that reads up to 2 refuses them
# rather than taking them for models of their prediction's loss (mse for
# the squared hinge), which refit and init_model would train with.
# Version 4 models have a split on a bin above 255 (max_bins above 255): only
# those are written as 4, so that a gbmo that reads up to 3 says it is older
# rather than calling their 16-bit node_bin a broken field.
# Version 5 files hold their trees as one "forest" of columns (see
# gbmo.tree.TreeFields.columns) instead of a list of trees: every file
# save_model writes (FOREST_VERSION, above every other need). dump_model's
# dict keeps the list, and the oldest version that reads the rest of it.
# Version 6 models have linear leaves (linear_tree, gbmo.linear_leaves): only
# those are written as 6, so that a gbmo that reads up to 5 says it is older
# rather than predicting with the leaves' constant values alone.
# values of CSR X densified at once for pred_contrib, and for a forest with
# linear leaves, which the CSR walk does not add (32 MiB)
DENSIFIED_VALUES = 2**22
# pred_contrib walks recursively, a level a frame on an OpenMP thread's stack, and keeps
# (depth + 2)(depth + 3) / 2 path steps of 32 bytes a thread (17 MB at 1024)
MAX_CONTRIB_DEPTH = 1024


def _threads_keyword(n_threads, kwargs):
    """n_threads, or the one keyword of kwargs that names it (LightGBM's
    predict takes num_threads among its **kwargs); other keywords refused."""
    names = keys_naming(kwargs, "n_threads")
    others = [key for key in kwargs if key not in names]
    if any(key in METHOD_EQUIVALENTS for key in others):
        refuse_foreign_keywords("predict", {key: kwargs[key] for key in others},
                                METHOD_EQUIVALENTS)
    if others:
        raise TypeError(f"predict got unexpected keyword arguments {', '.join(others)}; it "
                        "takes X (data), start_iteration, num_iteration, raw_score, pred_leaf, "
                        "pred_contrib, n_threads (num_threads), validate_features, and "
                        "XGBoost's iteration_range and output_margin")
    given = {"n_threads": n_threads} if n_threads is not None else {}
    given.update((key, kwargs[key]) for key in names)
    if len(given) > 1:
        raise TypeError(f"predict's thread count is given more than once ({', '.join(given)}): "
                        "give it once")
    return next(iter(given.values()), None)


def xgboost_rounds(raw_score, start_iteration, num_iteration, output_margin,
                   iteration_range):
    """(raw_score, start_iteration, num_iteration) of a predict call that may
    use XGBoost's keywords: output_margin is raw_score, iteration_range
    (begin, end) the rounds begin .. end - 1 ((0, 0) or None: the default)."""
    if iteration_range is not None and tuple(iteration_range) != (0, 0):
        if start_iteration != 0 or num_iteration is not None:
            raise ValueError("give the rounds once: as iteration_range (XGBoost's) or as "
                             "start_iteration and num_iteration")
        begin, end = iteration_range
        whole = all(isinstance(i, numbers.Integral) and not isinstance(i, bool)
                    for i in (begin, end))
        if not (whole and 0 <= begin < end):
            raise ValueError(f"iteration_range must be (begin, end), integers with 0 <= begin "
                             f"< end, got {iteration_range!r}")
        start_iteration, num_iteration = int(begin), int(end - begin)
    return bool(raw_score or output_margin), start_iteration, num_iteration


class ModelFormatError(ValueError):
    """A model file is corrupt, truncated, or from a newer gbmo."""


class _PackedForest:
    """The node arrays of a TreeFields' trees, with child and leaf indices
    offset, in the form the prediction kernels take; part(first, stop) gives
    trees first..stop of it without packing them again."""

    def __init__(self, fields):
        node_offsets = np.zeros(len(fields.leaf_shapes) + 1, dtype=np.int64)
        np.cumsum(fields.node_counts["node_left"], out=node_offsets[1:])
        leaf_offsets = np.zeros_like(node_offsets)
        np.cumsum(fields.leaf_shapes[:, 0], out=leaf_offsets[1:])
        self.n_trees = len(fields.leaf_shapes)
        self.tree_roots = np.ascontiguousarray(node_offsets[:-1], dtype=NODE_DTYPE)
        self.node_span = (0, int(node_offsets[-1]))  # the nodes of these trees
        # each tree's first leaf in the packed leaves (predict_leaf's offsets)
        self.leaf_offsets = leaf_offsets[:-1].astype(NODE_DTYPE)

        node_counts = np.diff(node_offsets)

        def offset(name, offsets):
            # every tree's node array at once: a np.where per tree took half
            # of the packing of 5,000 small trees
            values = fields.node_arrays[name]
            shifted = values.astype(np.int64) + np.repeat(offsets[:-1], node_counts)
            return np.ascontiguousarray(np.where(values >= 0, shifted, -1), dtype=NODE_DTYPE)

        def concat(name):
            return np.ascontiguousarray(fields.node_arrays[name])

        self.node_left = offset("node_left", node_offsets)
        self.node_right = offset("node_right", node_offsets)
        self.node_value = offset("node_value", leaf_offsets)
        self.node_feature = concat("node_feature")
        self.node_threshold = concat("node_threshold")
        self.node_missing_left = concat("node_missing_left")
        self.node_bin = concat("node_bin")
        self.node_cover = concat("node_count").astype(np.float64)
        self.leaves = LeafArrays.of_fields(fields)
        # the arrays of linear.pxd's LinearLeaves for the whole packing (None: no linear leaves)
        self.linear_arguments = (
            linear_kernel_arguments(fields.linear_leaves, fields.leaf_shapes[:, 0], self.leaves)
            if fields.linear_leaves else None)
        self._category_sets(fields.categories_left, node_offsets)
        self._walk_layout(node_offsets)

    @classmethod
    def of_trees(cls, trees):
        return cls(TreeFields.of_trees(trees))

    def _category_sets(self, categories_left, node_offsets):
        """category_words: each categorical split's set as its size in bits
        then its bits, 64 a word; category_offset: each node's offset in it,
        -1 for the others (see _predict.pyx's walk)."""
        self.category_offset = np.full(len(self.node_left), -1, dtype=np.int64)
        words = []
        size = 0
        for tree, tree_sets in categories_left.items():
            for node, ranks in tree_sets.items():
                n_bits = int(ranks[-1]) + 1 if ranks.size else 0
                bits = np.zeros(1 + (n_bits + 63) // 64, dtype=np.uint64)
                bits[0] = n_bits
                np.bitwise_or.at(bits, 1 + ranks // 64,
                                 np.left_shift(np.uint64(1), (ranks % 64).astype(np.uint64)))
                self.category_offset[node_offsets[tree] + node] = size
                words.append(bits)
                size += bits.size
        self.category_words = (np.concatenate(words) if words else None)

    def categorical_arguments(self):
        """The dense-X kernels' keywords for categorical splits (none without)."""
        if self.category_words is None:
            return {}
        return {"category_words": self.category_words}

    def linear_keywords(self):
        """predict_raw's keywords for linear leaves (none without)."""
        if self.linear_arguments is None:
            return {}
        return dict(zip(("linear_feature_start", "linear_features", "linear_coefficient_start",
                         "linear_coefficients", "linear_shift"), self.linear_arguments))

    def expected_value(self, n_outputs):
        """The sum over trees of each tree's mean leaf (an n_outputs vector) as
        TreeSHAP weighs it: a child takes its share of its parent's training
        rows. Found level by level for all trees at once."""
        share = np.zeros(len(self.node_left))
        level = self.tree_roots
        share[level] = 1.0
        while level.size:
            parents = level[self.node_left[level] >= 0]
            level = np.concatenate([self.node_left[parents], self.node_right[parents]])
            share[level] = (np.tile(share[parents], 2) * self.node_cover[level]
                            / np.tile(self.node_cover[parents], 2))
        leaves = self.node_left < 0
        leaf_share = np.zeros(len(self.leaves.value_start) - 1)
        leaf_share[self.node_value[leaves]] = share[leaves]
        # every stored value, weighted by its leaf's share, to its output
        value_start, output_start = self.leaves.value_start, self.leaves.output_start
        leaf = np.repeat(np.arange(len(leaf_share)), np.diff(value_start))
        position = np.arange(len(self.leaves.values)) - value_start[leaf]
        listed = output_start[leaf] >= 0
        output = position.copy()
        output[listed] = self.leaves.outputs[output_start[leaf[listed]] + position[listed]]
        return np.bincount(output, weights=self.leaves.values * leaf_share[leaf],
                           minlength=n_outputs)

    def _walk_layout(self, node_offsets):
        """The trees as the dense-X kernels walk them (WALK_NODE_DTYPE): each
        tree's nodes in breadth-first order, which puts siblings side by side
        (the walk adds the direction to the left child) and a tree's top
        levels in few cache lines; walk_roots, walk_leaf (a node's leaf index)
        and tree_depth (the longest root-to-leaf path, in edges) to go with
        them. Found level by level for all trees at once."""
        n_nodes = len(self.node_left)
        levels, node_depth = [], np.zeros(n_nodes, dtype=np.int32)
        level, steps = self.tree_roots, 0
        while level.size:
            levels.append(level)
            node_depth[level] = steps
            parents = level[self.node_left[level] >= 0]
            level = np.stack([self.node_left[parents], self.node_right[parents]], axis=1).ravel()
            steps += 1
        # levels hold the trees in order, so a stable sort by tree keeps each
        # tree's nodes level by level
        order = np.concatenate(levels) if levels else np.zeros(0, dtype=NODE_DTYPE)
        tree_of = np.repeat(np.arange(len(self.tree_roots)), np.diff(node_offsets))
        order = order[np.argsort(tree_of[order], kind="stable")]
        position = np.empty(n_nodes, dtype=NODE_DTYPE)
        position[order] = np.arange(n_nodes, dtype=NODE_DTYPE)
        is_leaf = self.node_left[order] < 0
        nodes = np.empty(n_nodes, dtype=WALK_NODE_DTYPE)
        categorical = self.category_offset[order] >= 0
        nodes["threshold"] = np.where(is_leaf, np.inf, np.where(
            categorical, self.category_offset[order], self.node_threshold[order]))
        nodes["feature_and_missing"] = np.where(
            is_leaf, 0, 4 * self.node_feature[order] + 2 * categorical
            + (self.node_missing_left[order] == 0))
        nodes["left"] = np.where(is_leaf, np.arange(n_nodes),
                                 position[np.maximum(self.node_left[order], 0)])
        self.walk_nodes = nodes
        self.walk_roots = position[self.tree_roots]
        self.walk_leaf = np.ascontiguousarray(self.node_value[order])
        self.tree_depth = (np.maximum.reduceat(node_depth, node_offsets[:-1]).astype(np.int32)
                           if n_nodes else node_depth)

    def part(self, first, stop):
        """Trees first..stop: the node and leaf arrays shared, the per-tree
        ones cut (every kernel and expected_value start from the roots)."""
        if (first, stop) == (0, self.n_trees):
            return self
        part = copy.copy(self)
        for name in ("tree_roots", "walk_roots", "tree_depth", "leaf_offsets"):
            setattr(part, name, getattr(self, name)[first:stop])
        part.n_trees = stop - first
        part.node_span = (int(self.tree_roots[first]), int(
            self.tree_roots[stop]) if stop < self.n_trees else self.node_span[1])
        return part

    def tree_arguments(self, X):
        """X and the trees as the prediction kernels for X's kind take them:
        the CSR-X kernels branch per node, the dense-X kernels walk blocks of
        rows without branches."""
        if hasattr(X, "tocsr"):
            return (X.data, X.indices, X.indptr, self.tree_roots, self.node_feature,
                    self.node_threshold, self.node_missing_left, self.node_left, self.node_right,
                    self.node_value)
        return X, self.walk_roots, self.tree_depth, self.walk_nodes, self.walk_leaf


def _dense_blocks(X):
    """(rows, X's rows there, dense) over X: CSR X densified DENSIFIED_VALUES
    values at a time, which bounds the copy; dense X at once."""
    step = (max(1, DENSIFIED_VALUES // max(1, X.shape[1])) if hasattr(X, "tocsr")
            else max(1, X.shape[0]))
    for first in range(0, X.shape[0], step):
        rows = X[first:first + step]
        yield slice(first, first + step), rows.toarray() if hasattr(rows, "tocsr") else rows


def _predict_dense_parts(X, forest, start, out, n_threads):
    """predict_raw of CSR X's rows in dense blocks: the dense walk adds
    linear leaves, the CSR walk does not."""
    for rows, values in _dense_blocks(X):
        predict_raw(*forest.tree_arguments(values), *forest.leaves.kernel_arguments(), start,
                    out[rows], n_threads, **forest.categorical_arguments(),
                    **forest.linear_keywords())


def _check_index(name, value, stop):
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral) \
            or not 0 <= value < stop:
        raise ValueError(f"{name} must be an integer in [0, {stop - 1}], got {value!r}")


def _model_text(model_str):
    """model_str, checked to be text (model_from_string's and Booster's
    argument)."""
    if isinstance(model_str, os.PathLike):
        raise TypeError(f"model_str is a path ({os.fspath(model_str)!r}): give it as "
                        "model_file= (model_str takes the text itself)")
    if not isinstance(model_str, str):
        raise TypeError(f"model_str must be a model's text (a str, as model_to_string "
                        f"gives it), got {type(model_str).__name__}")
    return model_str


def json_value(value):
    """json.dumps' default for what it cannot write itself: numpy numbers and
    arrays (a parameter given as np.int64(3) or an array) as Python's; any
    other object raises a TypeError naming its type."""
    if isinstance(value, (np.generic, np.ndarray)):
        return value.tolist()
    raise TypeError(f"a {type(value).__name__} in the model's parameters cannot be written to "
                    "JSON; give numbers, strings, lists or dicts")


def checked_path(path, name, text_way=None):
    """path, refused unless it names a file: open() takes an integer as a
    file descriptor, which it would write into or read, then close. Bytes
    are refused pointing to text_way, the argument that takes a model's
    text, when there is one."""
    if isinstance(path, (bytes, bytearray)) and text_way is not None:
        raise TypeError(f"{name} is {type(path).__name__}: give a file's path (str or "
                        f"os.PathLike), or a model's text as {text_way} (XGBoost's "
                        "load_model(bytearray) reads a model's bytes)")
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"{name} must be a file's path (str or os.PathLike), got "
                        f"{type(path).__name__} {path!r}")
    return path


# the first bytes of files taken for a model's, and what to read them with
_BINARY_FILES = (
    (b"\x80", "a pickle (of a Booster or an estimator?): read it with pickle.load or "
              "joblib.load"),
    (b"\x1f\x8b", "gzip-compressed: decompress it, or read a joblib file with joblib.load"),
    *((magic, "zlib-compressed (joblib's compress=): read it with joblib.load")
      for magic in (b"ZF", b"\x78\x01", b"\x78\x5e", b"\x78\x9c", b"\x78\xda")),
    (b"BZh", "bz2-compressed: decompress it, or read a joblib file with joblib.load"),
    (b"\xfd7zXZ", "xz-compressed: decompress it, or read a joblib file with joblib.load"),
    (b"{U", "XGBoost's binary JSON (UBJSON), which gbmo cannot load"),
)


def read_model_file(path, name="model_file", text_way="model_str"):
    """A model file's text, or a ModelFormatError for a binary file (it
    raised UnicodeDecodeError); name and text_way as checked_path's."""
    with open(checked_path(path, name, text_way), "rb") as f:
        content = f.read()
    try:
        return content.decode("utf-8")  # a byte order mark: parse_model_json skips it
    except UnicodeDecodeError:
        kind = next((kind for magic, kind in _BINARY_FILES if content.startswith(magic)), None)
        hint = f"; it is {kind}" if kind else ""
        raise ModelFormatError(f"{os.fspath(path)!r} is not a gbmo model: not UTF-8 text, where "
                               f"a saved model is JSON{hint}") from None


def parse_model_json(text):
    """A saved model's JSON text parsed, or a ModelFormatError that says what
    the text is instead."""
    if isinstance(text, str) and text.startswith("\ufeff"):
        text = text[1:]  # a byte order mark read into the text is no part of it
    try:
        return json.loads(text)
    except RecursionError:
        raise ModelFormatError("model JSON is nested too deeply") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        if isinstance(text, str) and text.startswith("tree\nversion="):
            raise ModelFormatError("this is a LightGBM model file (its text format); gbmo "
                                   "reads the JSON models it saves, and cannot load "
                                   "LightGBM's") from None
        if isinstance(text, str) and "{" not in text and len(text) < 4096 \
                and os.path.isfile(text):
            raise ModelFormatError(f"the model's text {text!r} is a file's path: give it as "
                                   "model_file= (model_str takes the text itself)") from None
        raise ModelFormatError(f"model is not valid JSON (corrupt or truncated?): {err}") from None


def _saved_as_function(loss):
    """Whether a model file records loss as it records an objective function
    ('custom', whose transform is the identity): a CustomObjective, or a
    subclass that keeps its transform and is not registered under its name."""
    if not isinstance(loss, CustomObjective):
        return False
    if type(loss) is CustomObjective:
        return True
    return (not registry.LOSSES.holds(loss.name, type(loss))
            and type(loss).transform is CustomObjective.transform)


def _distribution_record(objective):
    """A model file's note of the plugin distribution that registers its
    objective ({"name", "version"}), which loading names when it is missing;
    None for gbmo's own objectives and functions."""
    found = registry.LOSSES.distribution(objective)
    return None if found is None else {"name": found[0], "version": found[1]}


def _install_hint(distribution):
    """What an unknown objective's message adds from the file's note of its
    distribution (ignored when it is not the note dump_model writes)."""
    if not isinstance(distribution, dict) or not isinstance(distribution.get("name"), str):
        return ""
    version = distribution.get("version")
    written = f" {version}" if isinstance(version, str) else ""
    return (f"; the model was saved with it from the distribution "
            f"{distribution['name']!r}{written}: pip install {distribution['name']}")


def _load_loss(objective, num_class, objective_params, distribution=None):
    """The loss a model file names: only registered names are looked up, nothing
    in the file is imported or run (its parameters are plain JSON values). A
    plugin that fails to import says so itself. Its thread count is this
    machine's default, which a plugin's transform may read (gbmo's own take
    predict's n_threads, see parallel.caller_threads)."""
    if not isinstance(objective, str):
        raise ModelFormatError(f"model field 'objective' must be a name, got {objective!r}")
    if objective_params is not None and not isinstance(objective_params, dict):
        raise ModelFormatError(f"model field 'params.objective_params' must be an object, "
                               f"got {objective_params!r}")
    if objective in GBMO_LOSSES_OBJECTIVES and objective not in registry.LOSSES:
        # its transform (a quantile's, poisson's exp) is the plugin's own
        raise ModelFormatError(f"this model's {plugin_objective_missing(objective)}; the "
                               "model needs it to predict")
    if objective not in LOADABLE_ONLY and objective not in registry.LOSSES:
        raise ModelFormatError(
            f"this model's objective {objective!r} is not registered here"
            f"{registry.LOSSES.discovery_note()}: it is neither one of gbmo's nor of an "
            "installed plugin's; install the package that provided it (or register it with "
            "gbmo.registry.register_loss) before loading: the model needs its transform to "
            f"predict{_install_hint(distribution)}")
    try:
        return make_loss(objective, num_class, thread_count(None), objective_params)
    except PluginError:
        raise
    except (TypeError, ValueError) as err:
        raise ModelFormatError(f"model's objective {objective!r} cannot be used: {err}") from None


def _load_sparse_loss(objective, sparse_output):
    """The sparse-output loss of a model trained on a sparse Y (its file's
    objective and sparse_output fields), None for a model without the field:
    a dense Y's, or one saved before the field was written."""
    if sparse_output is None:
        return None
    from .sparse_output import make_sparse_loss

    if not isinstance(sparse_output, dict) or not set(sparse_output) <= {"sparse_threshold"}:
        raise ModelFormatError(f"model field 'sparse_output' must be null or an object with "
                               f"at most 'sparse_threshold', got {sparse_output!r}")
    try:
        return make_sparse_loss(objective, sparse_output.get("sparse_threshold"))
    except (TypeError, ValueError) as err:
        raise ModelFormatError(f"model field 'sparse_output' cannot be used: {err}") from None


def _check_category_sets(trees, category_order):
    """A categorical split must split a categorical feature, on its ranks."""
    n_categories = ({} if category_order is None else
                    {f: len(c) for f, c in zip(category_order.features, category_order.categories)})
    for t, tree in enumerate(trees):
        for node, ranks in tree.categories_left.items():
            feature = int(tree.node_feature[node])
            if feature not in n_categories or (ranks.size and ranks[-1] >= n_categories[feature]):
                raise ModelFormatError(
                    f"model has an invalid tree: tree {t}'s node {node} splits feature {feature} "
                    f"by a set of categories, but it is not categorical or has fewer of them")


def _count_field(data, name):
    value = data[name]
    if isinstance(value, bool) or not isinstance(value, int):
        raise ModelFormatError(f"model field {name!r} must be an integer, got {value!r}")
    # features and outputs are counted in int32 (node_feature, leaf_outputs)
    if not 1 <= value <= 2**31 - 1:
        raise ModelFormatError(f"model field {name!r} = {value} is out of range; allowed: 1 .. "
                               f"{2**31 - 1}")
    return value


class _CallableCount(int):
    """An int that calling returns: gbmo's num_trees is a property, LightGBM's
    a method, and code written for either works."""

    def __call__(self):
        return int(self)


class JSONModel:
    """model_to_string and save_model of a class whose _model_record(num_iteration,
    start_iteration, importance_type) gives the dict its file holds, JSON-ready
    but for numpy arrays (json_value writes them as lists): Booster, cv's
    CVBooster."""

    def model_to_string(self, num_iteration=None, start_iteration=0, importance_type="split"):
        """The model as JSON text: _model_record's dict."""
        return json.dumps(self._model_record(num_iteration, start_iteration, importance_type),
                          default=json_value)

    def save_model(self, filename, num_iteration=None, start_iteration=0,
                   importance_type="split"):
        """Writes model_to_string to filename (see dump_model for the rounds kept)."""
        checked_path(filename, "filename")
        text = self.model_to_string(num_iteration, start_iteration, importance_type)
        with open(filename, "w", encoding="utf-8") as f:
            f.write(text)
        return self


class Booster(JSONModel, TrainingRun):
    """A gbmo model: `gbmo.train` makes one; `Booster(model_file=path)` or
    `Booster(model_str=text)` loads one; `Booster(params, train_set)` starts
    a training run that `update()` steps a round at a time (LightGBM's
    manual loop, see gbmo.training_run)."""

    def __init__(self, params=None, train_set=None, model_file=None, model_str=None):
        if isinstance(train_set, (str, os.PathLike)):
            raise TypeError("Booster's second argument is train_set, as LightGBM's; load a "
                            "model file with Booster(model_file=path)")
        if train_set is not None and (model_file is not None or model_str is not None):
            raise ValueError("Booster takes a train_set to train on, or a model_file or "
                             "model_str to load, not both")
        if model_file is not None and model_str is not None:
            raise ValueError("Booster takes a model_file or a model_str to load, not both")
        self.trees = []
        self.best_iteration = 0  # as LightGBM's: 0 when early stopping found no best round
        self.best_score = {}  # {data name: {metric: value}} at the best round, as LightGBM's
        self.evals_result = {}
        self.output_importance = None
        self.sparse_loss = None
        self.category_order = None  # gbmo.categorical.CategoryOrder
        self.pandas_categories = {}  # {column index: categories} of DataFrame category columns
        self._attributes = {}  # set_attr's, as LightGBM's: kept in memory and pickles only
        self._forget_packing()
        if model_file is not None:
            model_str = read_model_file(model_file)
        if model_str is not None:
            self._load(_model_text(model_str))
            if params:
                self._take_thread_count(params)
        else:
            self.params = dict(params or {})
        self._trainer = None
        if train_set is not None:
            from .engine import start_run

            start_run(self, params or {}, train_set)

    def _start(self, params, loss, n_features, n_outputs, init_score, feature_names,
               trees_per_round=1, one_dimensional_target=False, sparse_loss=None):
        """sparse_loss: the sparse-output path's loss that grew the trees of
        a model trained on a sparse Y (None for a dense Y); loss then is the
        registered loss of the same transform, which predicts."""
        self.params = params
        self.one_dimensional_target = one_dimensional_target
        self.trees_per_round = trees_per_round
        self.loss = loss
        self.sparse_loss = sparse_loss
        self.n_features = n_features
        self.n_outputs = n_outputs
        # The kernels take a contiguous (n_outputs,) array; a loss may return a
        # scalar for one output, or a (1, d) row.
        init_score = np.asarray(init_score, dtype=np.float64)
        if init_score.size != n_outputs:
            raise ValueError(f"init_score has {init_score.size} values for {n_outputs} outputs")
        self.init_score = np.ascontiguousarray(init_score.reshape(n_outputs))
        self.feature_names = feature_names

    def _objective_name(self):
        """The name of the objective the trees were grown with."""
        return (self.loss if self.sparse_loss is None else self.sparse_loss).name

    def _add_tree(self, tree):
        self.trees.append(tree)

    def _tree_share(self, first, stop):
        """What each of trees first..stop weighs in a raw score: 1, or in a
        random forest (boosting='rf') one over the rounds they make up, whose
        mean the model is (LightGBM's average_output)."""
        if self.params.get("boosting") != "rf" or first == stop:
            return 1.0
        return self.trees_per_round / (stop - first)

    @property
    def num_trees(self):
        """The number of trees; also callable, as LightGBM's num_trees()."""
        return _CallableCount(len(self.trees))

    def feature_name(self):
        """The feature names (LightGBM's method): the feature_names attribute,
        or f0, f1, ... when the model has none."""
        return self.feature_names or [f"f{i}" for i in range(self.n_features)]

    def num_feature(self):
        """The number of features, as LightGBM's method."""
        return self.n_features

    def current_iteration(self):
        """Boosting rounds done (a round has one tree per output in single_output mode)."""
        return len(self.trees) // self.trees_per_round

    def _check_has_model(self):
        if not hasattr(self, "trees_per_round"):
            raise ValueError("this Booster holds no model: train one (gbmo.train, or "
                             "Booster(params, train_set) and update()) or load one "
                             "(Booster(model_file=path) or Booster(model_str=text))")

    def _tree_range(self, start_iteration, num_iteration):
        """(first, stop): the trees of the rounds used, as LightGBM reads its
        arguments: from round start_iteration (<= 0: the first), num_iteration
        rounds (None: best_iteration when early stopping found one and
        start_iteration is 0; None or <= 0 otherwise: every round left)."""
        self._check_has_model()
        if isinstance(start_iteration, bool) or not isinstance(start_iteration,
                                                               (int, np.integer)):
            raise ValueError(f"start_iteration must be an integer, got {start_iteration!r}")
        if num_iteration is not None and (isinstance(num_iteration, bool) or not isinstance(
                num_iteration, (int, np.integer))):
            raise ValueError(f"num_iteration must be an integer or None, got {num_iteration!r}")
        start = max(int(start_iteration), 0)
        if start > self.current_iteration():
            raise ValueError(f"start_iteration = {start} is beyond the model's "
                             f"{self.current_iteration()} rounds; allowed: 0 to "
                             f"{self.current_iteration()}")
        if num_iteration is None and start == 0:
            num_iteration = self.best_iteration
        first = start * self.trees_per_round
        if num_iteration is None or num_iteration <= 0:
            return first, len(self.trees)
        return first, min(first + int(num_iteration) * self.trees_per_round, len(self.trees))

    def _forest(self, first, stop):
        """Trees first..stop as the prediction kernels take them: a part of
        one packing of every tree (a packing per range repacked the forest
        whenever num_iteration changed: 350x a 1-row prediction's time on
        2,000 trees), made again when trees were added or the list replaced."""
        packed, packed_list = self._packed
        if packed is None or packed_list is not self.trees or packed.n_trees != len(self.trees):
            packed = _PackedForest.of_trees(self.trees)
            self._packed = packed, self.trees
        return packed.part(first, stop)

    def _forget_packing(self):
        """Drops the packed trees, after their values or their list changed."""
        self._packed = None, None

    def _check_feature_names(self, X):
        if not is_dataframe(X) or self.feature_names is None:
            return
        if column_names(X) != list(self.feature_names):
            raise ValueError("validate_features: X's columns are not the model's features in "
                             f"order{names_missing_and_unknown(X, self.feature_names)}; the "
                             "model's: "
                             f"{', '.join(self.feature_names)}")

    def _check_X(self, X):
        """X as a dense array, or scipy sparse X as canonical CSR, which the
        kernels traverse row by row without densifying (absent entries are 0);
        categorical features as their ranks."""
        if isinstance(X, Dataset):
            raise TypeError("predict takes the rows' features (an array, a DataFrame or a scipy "
                            "sparse matrix), not a Dataset: pass its X (dataset.X); LightGBM "
                            "refuses a Dataset too")
        given = X
        check_column_count(X, self.n_features, self.feature_names)
        # a model of category columns recodes them, and refuses numbers in their place
        values = None if self.pandas_categories else model_frame_values(X, self.feature_names)
        if values is None:
            X, _ = check_features(align_dataframe_categories(as_pandas_table(X),
                                                             self.pandas_categories,
                                                             self.n_features, self.feature_names),
                                  allow_no_rows=True)
        else:
            X = values
        if X.shape[1] != self.n_features:
            raise ValueError(f"X has {X.shape[1]} features, but the model was trained on "
                             f"{self.n_features}")
        if self.category_order is not None:
            # a copy made here (a DataFrame's values) is recoded where it lies: a
            # second copy of X doubled a large frame's prediction memory
            return as_read(self.category_order.encode(X, in_place=is_own_copy(X, given)),
                           self.params, self.category_order.features)
        return as_read(X.tocsr() if hasattr(X, "tocsr") else X, self.params)

    def _n_threads(self, n_threads):
        """The thread count for a prediction: the argument, else the training
        parameter, else parallel.default_threads(), which -1 and 0 also mean
        (below -1: all cores + 1 + n_threads, as joblib counts)."""
        if n_threads is None:
            return thread_count(self.params.get("n_threads"))
        if isinstance(n_threads, bool) or not isinstance(n_threads, (int, np.integer)) \
                or not -MAX_THREADS <= n_threads <= MAX_THREADS:
            raise ValueError(f"n_threads = {n_threads!r} is out of range; allowed: an integer "
                             f"in [-{MAX_THREADS}, {MAX_THREADS}] (-1 or 0: all cores; -2: "
                             "all but one)")
        return thread_count(asked_threads(n_threads))

    def predict(self, X=None, start_iteration=0, num_iteration=None, raw_score=False,
                pred_leaf=False, pred_contrib=False, n_threads=None, *, data=None,
                validate_features=False, iteration_range=None, output_margin=False, **kwargs):
        """Predictions (n, d): raw scores, or the objective's transform of them
        (probabilities for softmax / sigmoid / multiclassova). (n,) instead when
        the model has one output and was trained on a 1-D target. The arguments are in
        LightGBM's order (n_threads, gbmo's, last).

        The trees used are those of num_iteration rounds from round
        start_iteration, as in LightGBM: num_iteration defaults to the best
        iteration when early stopping found one (and start_iteration is 0),
        else all rounds. The start score (init_score) is always added: gbmo
        keeps it apart from the trees, where LightGBM folds it into its first
        tree, which start_iteration > 0 leaves out.

        pred_contrib=True gives instead each feature's contribution to the raw
        scores (SHAP values, by TreeSHAP with the training rows' distribution):
        (n, n_features + 1, d), where [:, -1] is the expected raw score and
        each row sums over axis 1 to its raw scores; (n, n_features + 1) for a
        1-D target, as in LightGBM. pred_leaf=True gives predict_leaf's leaf
        indices, as in LightGBM. data is LightGBM's name for X;
        validate_features=True checks that a DataFrame's columns are the
        model's features by name and in order, as LightGBM's; without it, a
        DataFrame holding the model's features in another order is refused
        (LightGBM reads it by position), other names are read by position, and
        a model trained without names checks nothing. LightGBM's keyword
        num_threads (or an alias of n_threads) gives n_threads. XGBoost's
        iteration_range=(begin, end) gives the rounds begin .. end - 1, and
        output_margin=True the raw scores."""
        raw_score, start_iteration, num_iteration = xgboost_rounds(
            raw_score, start_iteration, num_iteration, output_margin, iteration_range)
        X = one_of("X", X, "data", data)
        if X is None:
            raise ValueError("predict needs the features: X (or data, LightGBM's name)")
        if not is_pandas(X):
            # another library's table, read as pandas' here for its names; a
            # pandas frame's Arrow columns are read in _check_X, where a frame
            # of the model's numeric columns skips that look (10 us a row)
            X = as_pandas_table(X)
        n_threads = _threads_keyword(n_threads, kwargs)
        if validate_features:
            self._check_feature_names(X)
        if pred_contrib and pred_leaf:
            raise ValueError("pred_contrib and pred_leaf are two kinds of prediction; "
                             "ask for one at a time")
        if pred_leaf:
            return self.predict_leaf(X, num_iteration, n_threads, start_iteration)
        first, stop = self._tree_range(start_iteration, num_iteration)
        if pred_contrib and any(tree.linear_leaves is not None for tree in self.trees[first:stop]):
            raise ValueError("pred_contrib does not explain linear leaves (linear_tree=True): "
                             "TreeSHAP takes a leaf's value as a constant, where these add "
                             "their features' values times coefficients (LightGBM refuses "
                             "them too); ask for the predictions, or train without linear_tree")
        X = self._check_X(X)
        if pred_contrib:
            out = self._contributions(X, first, stop, n_threads)
            return out[:, :, 0] if self.one_dimensional_target else out
        if first == stop:
            out = np.tile(self.init_score, (X.shape[0], 1))
        else:
            out = np.empty((X.shape[0], self.n_outputs))
            forest = self._forest(first, stop)
            threads = self._walk_threads(n_threads, X, first, stop)
            share = self._tree_share(first, stop)
            start = self.init_score if share == 1.0 else np.zeros_like(self.init_score)
            if forest.linear_arguments is not None and hasattr(X, "tocsr"):
                _predict_dense_parts(X, forest, start, out, threads)
            else:
                kernel = predict_raw_csr if hasattr(X, "tocsr") else predict_raw
                kernel(*forest.tree_arguments(X), *forest.leaves.kernel_arguments(), start,
                       out, threads, **forest.categorical_arguments(), **forest.linear_keywords())
            if share != 1.0:  # a random forest's mean of its trees, then its start
                out *= share
                out += self.init_score
        if not raw_score:
            with caller_threads(self._n_threads(n_threads)):
                out = check_transformed(self.loss.transform(out), out.shape,
                                        f"objective {self.loss.name!r}")
        return out[:, 0] if self.one_dimensional_target else out

    def _walk_threads(self, n_threads, X, first, stop, work_per_walk=WORK_PER_ELEMENT):
        """The threads for walking X's rows down trees first..stop, each walk
        worth work_per_walk updates (a contribution's walk visits every node)."""
        return threads_for(self._n_threads(n_threads), X.shape[0] * (stop - first) * work_per_walk)

    def _contributions(self, X, first, stop, n_threads):
        out = np.zeros((X.shape[0], self.n_features + 1, self.n_outputs))
        if first == stop:
            out[:, -1] = self.init_score
            return out
        forest = self._forest(first, stop)
        if np.any(forest.node_cover[slice(*forest.node_span)] <= 0):
            raise ValueError("pred_contrib needs every node's node_count (training rows) to be "
                             "positive: the contributions weigh a node's children by them")
        depth = int(forest.tree_depth.max())
        if depth > MAX_CONTRIB_DEPTH:
            raise ValueError(f"pred_contrib takes trees at most {MAX_CONTRIB_DEPTH} levels deep "
                             f"(its walk recurses once a level); this model has one {depth} deep")
        out[:, -1] = forest.expected_value(self.n_outputs)
        arguments = (forest.tree_roots, depth, forest.node_feature,
                     forest.node_threshold, forest.node_missing_left, forest.node_left,
                     forest.node_right, forest.node_value, forest.node_cover,
                     *forest.leaves.kernel_arguments())
        threads = self._walk_threads(n_threads, X, first, stop, work_per_walk=64)
        for rows, values in _dense_blocks(X):
            tree_shap(np.ascontiguousarray(values, dtype=np.float64), *arguments, out[rows],
                      threads,
                      **({} if forest.category_words is None else
                         {"category_offset": forest.category_offset,
                          "category_words": forest.category_words}))
        out *= self._tree_share(first, stop)
        out[:, -1] += self.init_score
        return out

    def predict_topk(self, X, k, raw_score=False, num_iteration=None, n_threads=None):
        """(labels, scores), (n, k) each: every row's k best outputs by
        decreasing score, without an (n, n_outputs) array; needs sparse leaves
        (see gbmo.sparse_output.predict_topk)."""
        from .sparse_output import predict_topk

        return predict_topk(self, X, k, raw_score, num_iteration, n_threads)

    def refit(self, data, label, decay_rate=0.9, weight=None, init_score=None):
        """A new Booster with these trees and their leaf values fitted again to
        (data, label), keeping decay_rate of the old values, as LightGBM's
        refit (see gbmo.refit); weight: the rows' sample weights, init_score
        their starting raw scores (n,) or (n, d), as in gbmo.Dataset."""
        from .refit import refit

        return refit(self, data, label, decay_rate, weight, init_score)

    def predict_leaf(self, X, num_iteration=None, n_threads=None, start_iteration=0):
        """(n, n_trees) int32: the leaf index (within its tree) each row reaches,
        in the trees predict would use with the same arguments."""
        first, stop = self._tree_range(start_iteration, num_iteration)
        X = self._check_X(X)
        out = np.zeros((X.shape[0], stop - first), dtype=NODE_DTYPE)
        if stop > first:
            forest = self._forest(first, stop)
            threads = self._walk_threads(n_threads, X, first, stop)
            kernel = predict_leaf_raw_csr if hasattr(X, "tocsr") else predict_leaf_raw
            kernel(*forest.tree_arguments(X), out, threads, **forest.categorical_arguments())
            out -= forest.leaf_offsets
        return out

    # -- introspection ------------------------------------------------------
    IMPORTANCE_TYPES = ("split", "gain", "average_gain")
    # XGBoost's names whose meaning gbmo has; its "gain" is gbmo's average_gain,
    # but gbmo's "gain" is LightGBM's, the total
    IMPORTANCE_ALIASES = {"weight": "split", "total_gain": "gain"}

    @classmethod
    def importance_kind(cls, importance_type, named=None):
        """gbmo's name of importance_type (XGBoost's weight and total_gain
        taken); refused unless it is one gbmo records, the error calling the
        value `named` (default "importance_type '<value>'")."""
        kind = cls.IMPORTANCE_ALIASES.get(importance_type, importance_type)
        if kind not in cls.IMPORTANCE_TYPES:
            raise ValueError(
                f"{named or f'importance_type {importance_type!r}'} is not allowed; allowed: "
                f"{', '.join(cls.IMPORTANCE_TYPES)} (XGBoost's weight, total_gain and gain; "
                "XGBoost's cover and total_cover, hessian sums, are not recorded)")
        return kind

    def feature_importance(self, importance_type="split", iteration=None, per_output=False):
        """Importance of each feature: "split" (how many splits use it), "gain"
        (the total gain of those splits) or "average_gain" (gain / splits), as in
        LightGBM (XGBoost's weight, total_gain and gain). iteration limits it
        to the first rounds (default: the best iteration when early stopping
        found one, else all).

        per_output=True gives an (n_features, n_outputs) array: each output's
        share of the gain (the columns sum to the overall gain; a share is
        below 0 where the children keep less of an output's term than the
        parent did, as a sparse split that drops an output), and for "split"
        the splits that involved the output (all of a dense split's outputs,
        those a sparse split keeps, the output of a single-output tree). It
        covers every tree trained, and is not available for models trained with
        an ensembler (their splits are chosen on split columns, not outputs)."""
        importance_type = self.importance_kind(importance_type)
        if per_output:
            return self._per_output_importance(importance_type, iteration)
        splits = np.zeros(self.n_features, dtype=np.int64)
        gain = np.zeros(self.n_features)
        for tree in self.trees[:self._tree_range(0, iteration)[1]]:
            internal = tree.node_left >= 0
            np.add.at(splits, tree.node_feature[internal], 1)
            np.add.at(gain, tree.node_feature[internal], tree.node_gain[internal])
        if importance_type == "split":
            return splits
        return gain if importance_type == "gain" else gain / np.maximum(splits, 1)

    def _per_output_importance(self, importance_type, iteration):
        if self.output_importance is None:
            raise ValueError("per-output importance is not available: the model was trained "
                             "with an ensembler (splits chosen on split columns, not outputs) "
                             "or on a sparse Y (the sparse-output path does not record it), "
                             "had a round taken back (rollback_one_iter), is a part of its "
                             "rounds (booster[a:b], or num_iteration or start_iteration given "
                             "to save_model, model_to_string or dump_model) or was trained on "
                             "from one, or was saved by a gbmo that did not record it")
        if iteration is not None and iteration < self.current_iteration():
            raise ValueError("per-output importance covers every tree; iteration must be None")
        gain, splits = self.output_importance.dense()
        if importance_type == "split":
            return splits
        return gain if importance_type == "gain" else gain / np.maximum(splits, 1)

    # XGBoost's names of importance kinds in get_score, where "gain" is the average
    _XGBOOST_SCORES = {"weight": "split", "gain": "average_gain", "total_gain": "gain"}

    def get_score(self, importance_type="weight"):
        """XGBoost's importance dict: {feature name: value} of the features some
        split uses, importance_type in XGBoost's sense ("weight": splits,
        "gain": average gain, "total_gain": total gain; cover is not
        recorded), over the rounds predict uses."""
        if importance_type not in self._XGBOOST_SCORES:
            raise ValueError(f"importance_type {importance_type!r} is not allowed; allowed: "
                             f"{', '.join(self._XGBOOST_SCORES)} (XGBoost's; cover and "
                             "total_cover, hessian sums, are not recorded)")
        values = self.feature_importance(self._XGBOOST_SCORES[importance_type])
        used = self.feature_importance("split") > 0
        return {name: float(value) for name, value, on in zip(self.feature_name(), values, used)
                if on}

    def num_boosted_rounds(self):
        """XGBoost's name of current_iteration(): the rounds trained."""
        return self.current_iteration()

    def num_features(self):
        """XGBoost's name of num_feature()."""
        return self.num_feature()

    def get_fscore(self, fmap=""):
        """XGBoost's: get_score("weight"), each used feature's split count.
        fmap, XGBoost's feature map file, is not taken: the Dataset names the
        features."""
        if fmap:
            raise ValueError("fmap (XGBoost's feature map file) is not taken: gbmo's features "
                             "have the names the training Dataset gave them")
        return self.get_score("weight")

    def inplace_predict(self, data, iteration_range=None, predict_type="value",
                        missing=np.nan, validate_features=True, base_margin=None,
                        strict_shape=False):
        """XGBoost's: predict(data) over iteration_range's rounds (by default,
        as gbmo's and LightGBM's predict, the best iteration's after early
        stopping, where XGBoost's Booster takes every tree); predict_type
        "value" (transformed) or "margin" (raw scores); strict_shape=True
        gives (n, d) for a 1-D target too; validate_features checks a
        DataFrame's column names (see predict). gbmo reads NaN as missing
        (missing must be NaN, or None as XGBoost takes it), and takes no
        base_margin."""
        if predict_type not in ("value", "margin"):
            raise ValueError(f"predict_type {predict_type!r} is not allowed; allowed: 'value' "
                             "(transformed predictions) or 'margin' (raw scores)")
        if not (missing is None or isinstance(missing, numbers.Real) and np.isnan(missing)):
            raise ValueError(f"missing={missing!r} is not taken: gbmo reads NaN as the missing "
                             "value; replace your marker with NaN in data first")
        if base_margin is not None:
            raise ValueError("base_margin is not taken here: add it to inplace_predict(data, "
                             "predict_type='margin')")
        prediction = self.predict(data, iteration_range=iteration_range,
                                  raw_score=predict_type == "margin",
                                  validate_features=validate_features)
        return prediction.reshape(len(prediction), -1) if strict_shape else prediction

    def copy(self):
        """XGBoost's: an independent copy of the model (its trees, records,
        attributes and parameters, the thread count included, which a model
        file leaves out; not a training run's data)."""
        twin = copy.deepcopy(self)
        twin.params = copy.deepcopy(self.params)
        return twin

    def __getitem__(self, rounds):
        """XGBoost's slicing: booster[first:stop] (with a step too) or
        booster[i] is a new Booster of those rounds (trees_per_round trees a
        round), which predicts with all of them, as a part saved with
        save_model(num_iteration=, start_iteration=): no best_iteration,
        evaluation records or per-output importance of the whole. Iterating
        over a Booster gives its rounds one by one, as XGBoost's."""
        self._check_has_model()
        n_rounds = self.current_iteration()
        if isinstance(rounds, slice):
            step = rounds.step
            if step is not None and (isinstance(step, bool)
                                     or not isinstance(step, numbers.Integral) or step < 1):
                raise ValueError(f"a Booster's slice takes a step of 1 or more, got {step!r}")
            picked = range(n_rounds)[rounds]
            if not picked:
                raise ValueError(f"the slice {rounds.start}:{rounds.stop} holds none of the "
                                 f"model's {n_rounds} rounds")
        elif isinstance(rounds, numbers.Integral) and not isinstance(rounds, bool):
            if not -n_rounds <= rounds < n_rounds:
                raise IndexError(f"round {rounds} is not one of the model's {n_rounds}; "
                                 f"allowed: {-n_rounds} to {n_rounds - 1}")
            picked = [range(n_rounds)[rounds]]
        else:
            raise TypeError(f"a Booster is indexed by its rounds: an integer or a slice, got "
                            f"{type(rounds).__name__}")
        # the trees are shared, as a continued model shares its init_model's
        # (set_leaf_output copies a tree): copy() would write out and read
        # back the whole model, a slice at a time
        part = Booster.__new__(Booster)
        part.__dict__.update(self.__dict__)
        per_round = self.trees_per_round
        part.trees = [tree for r in picked
                      for tree in self.trees[r * per_round:(r + 1) * per_round]]
        part.params = copy.deepcopy(self.params)
        part.pandas_categories = dict(self.pandas_categories)
        # XGBoost's slices keep the user's attributes, not early stopping's
        part._attributes = {key: value for key, value in self._attributes.items()
                            if key not in ("best_iteration", "best_score")}
        part.best_iteration, part.best_score, part.evals_result = 0, {}, {}
        part.output_importance = part._trainer = None
        part._driven_by_train = False
        part._forget_packing()
        return part

    def attributes(self):
        """XGBoost's: the attributes set_attr set, as a dict."""
        return dict(self._attributes)

    def set_param(self, params, value=None):
        """XGBoost's, with params a dict, a list of (key, value) pairs, or a
        key with its value: the thread count (n_threads or an alias: nthread,
        n_jobs, ...) is predict's on any Booster, as a server sets it; the
        others change a training run's rounds to come, as reset_parameter."""
        params = dict({params: value} if isinstance(params, str) else params)
        threads = keys_naming(params, "n_threads")
        if len(threads) > 1:
            raise ValueError(f"the thread count is given more than once ({', '.join(threads)}): "
                             "give it once")
        # every value checked before any is set
        n_threads = checked_value(threads[0], params.pop(threads[0]))[1] if threads else None
        if params:
            self.reset_parameter(params, caller="set_param")
        if threads:
            self.params["n_threads"] = n_threads
        return self

    def _take_thread_count(self, params):
        """Of params given with a model to load, the thread count (which a
        model file never holds), as set_param takes it; the others are
        refused by warning, as LightGBM ignores params beside a model file
        (gbmo ignored even the thread count, silently)."""
        threads = keys_naming(params, "n_threads")
        if threads:
            self.set_param({key: params[key] for key in threads})
        # the verbosity, which LightGBM users pass to silence it, changes nothing here
        quiet = keys_naming(params, "verbosity")
        others = sorted(str(key) for key in params if key not in threads + quiet)
        if others:
            warnings.warn(f"Booster(params, model_file / model_str) takes only the thread count "
                          f"(n_threads or an alias) from params; the model's own parameters "
                          f"stand, so {', '.join(others)} {'is' if len(others) == 1 else 'are'} "
                          "ignored (set_param sets a thread count later, and training on from "
                          "the model takes init_model)", UserWarning, stacklevel=3)

    def load_model(self, fname):
        """XGBoost's: this Booster now holds the model saved in the file
        fname (model_from_string of its text); returns self."""
        return self.model_from_string(read_model_file(fname, "fname", text_way=None))

    def trees_to_dataframe(self):
        """Every node of every tree as a row of a pandas DataFrame (see
        gbmo.introspection.trees_to_dataframe for the columns)."""
        return trees_to_dataframe(self)

    def num_model_per_iteration(self):
        """Trees a round, as LightGBM's method: 1, or one per output with
        tree_mode="single_output"."""
        self._check_has_model()
        return self.trees_per_round

    def _predicted_trees(self):
        """The trees predict uses by default: up to the best round when early
        stopping found one (LightGBM's train returns those alone)."""
        return self.trees[:self._tree_range(0, None)[1]]

    def lower_bound(self):
        """The least raw score predict can give, per output ((n_outputs,); a
        float for a 1-D target with one output): the start score plus the
        least leaf value of each tree predict uses (a random forest's: their
        mean). As LightGBM's, whose trees hold its start score; -inf for an
        output a linear leaf's line moves (LightGBM leaves the lines out)."""
        return raw_score_bound(self, self._predicted_trees(), np.min)

    def upper_bound(self):
        """The greatest raw score predict can give (see lower_bound)."""
        return raw_score_bound(self, self._predicted_trees(), np.max)

    def get_split_value_histogram(self, feature, bins=None, xgboost_style=False):
        """The histogram of the thresholds of the splits on feature (an index
        or a name) in the trees predict uses, as LightGBM's method: (counts,
        bin_edges), one bin per distinct value when bins is None;
        xgboost_style gives the non-empty bins as a table of (SplitValue,
        Count) instead (a pandas DataFrame when pandas is installed). Refused
        for categorical features."""
        return split_value_histogram(self, self._predicted_trees(), feature, bins,
                                     xgboost_style)

    def _leaf(self, tree_id, leaf_id):
        """(tree, leaf index) after checking both, leaf indices as predict_leaf
        gives them."""
        self._check_has_model()
        _check_index("tree_id", tree_id, len(self.trees))
        _check_index("leaf_id", leaf_id, self.trees[tree_id].n_leaves)
        return self.trees[tree_id], int(leaf_id)

    def get_leaf_output(self, tree_id, leaf_id):
        """Leaf leaf_id's values in tree tree_id, as LightGBM's method: an
        (n_outputs,) array, 0 for the outputs that a sparse leaf or a
        single-output tree holds none of; a float for a 1-D target with one
        output."""
        tree, leaf = self._leaf(tree_id, leaf_id)
        values = tree.dense_leaf_values(self.n_outputs)[leaf].copy()
        return float(values[0]) if self.one_dimensional_target else values

    def set_leaf_output(self, tree_id, leaf_id, value):
        """Sets leaf leaf_id's values in tree tree_id to value (a number for a
        model with one output, else n_outputs finite numbers), as LightGBM's
        method; returns self. A leaf that holds only some outputs (sparse
        leaves, single-output trees) takes new values for those, and the
        others must stay 0. A linear leaf (linear_tree) keeps its line: value
        is its constant value, which rows missing one of its features get.
        Training scores already computed are not changed, as in LightGBM."""
        tree, leaf = self._leaf(tree_id, leaf_id)
        value = np.asarray(value, dtype=np.float64).reshape(-1)
        if value.shape != (self.n_outputs,) or not np.all(np.isfinite(value)):
            raise ValueError(f"value must be {self.n_outputs} finite number(s), one per output, "
                             f"got {value.tolist()}")
        # a copy: a model continued from another (init_model) shares its trees
        tree = self.trees[tree_id] = copy.copy(tree)
        tree.leaf_values = tree.leaf_values.copy()
        if tree.leaf_outputs is None:
            tree.leaf_values[leaf] = value
        else:
            held = tree.leaf_outputs[leaf]
            if np.any(np.delete(value, held) != 0):
                raise ValueError(f"leaf {leaf} of tree {tree_id} holds outputs {held.tolist()} "
                                 "only: the others' values must stay 0")
            tree.leaf_values[leaf] = value[held]
        self._forget_packing()  # the packed copies hold the old values
        return self

    # -- persistence --------------------------------------------------------
    def to_onnx(self, path=None, num_iteration=None, start_iteration=0, raw_score=False):
        """The model as an ONNX graph (an onnx.ModelProto; also written to path
        when given), for ONNX runtimes where gbmo is not installed: input "X",
        (n, n_features) float64, as predict takes a numpy X (a category
        column as its codes in the training's categories, which the graph's
        metadata_props list); output "predictions" (or
        "raw_scores" with raw_score=True), float32, predict's shape and
        values to float32's precision. The rounds are predict's
        (num_iteration, start_iteration). Needs the onnx package; refuses
        linear leaves, and an objective whose transform has no ONNX form
        unless raw_score (see gbmo.onnx_export)."""
        from .onnx_export import export

        return export(self, path, num_iteration, start_iteration, raw_score)

    def dump_model(self, num_iteration=None, start_iteration=0, importance_type="split"):
        """The model as a JSON-ready dict, its trees a list of one object a tree
        ("trees": their node and leaf fields), which Booster(model_str=...)
        loads as json.dumps writes it; save_model writes the same model with
        the trees' fields in columns (a "forest", format version 5), which
        parses in half the time. Every tree by
        default, with best_iteration, so a loaded model predicts as this one;
        num_iteration / start_iteration keep only those rounds, as in LightGBM
        (which by default keeps only the best iteration's), and a loaded part
        predicts with all of them, as LightGBM's file does: it keeps no
        best_iteration (a part of 13 rounds of a model whose best was 8
        predicted with 8), nor the per-output importance, which covers every
        tree.
        importance_type, LightGBM's, is checked and changes nothing: the trees
        keep their splits' gains and counts, so a loaded model gives every
        kind of importance."""
        return self._record(num_iteration, start_iteration, importance_type, as_forest=False)

    def _model_record(self, num_iteration=None, start_iteration=0, importance_type="split"):
        """What save_model writes and a pickle keeps: dump_model's dict with the
        trees' fields as one "forest" of numpy columns (TreeFields.columns)."""
        return self._record(num_iteration, start_iteration, importance_type, as_forest=True)

    def _record(self, num_iteration, start_iteration, importance_type, as_forest):
        """dump_model's dict, or with as_forest _model_record's."""
        if isinstance(num_iteration, (str, os.PathLike)):
            raise TypeError(f"dump_model returns the model as a dict, as LightGBM's; it takes no "
                            f"file ({num_iteration!r}), as XGBoost's dump_model(fout) does: "
                            "give save_model(path), or json.dump(booster.dump_model(), file)")
        self.importance_kind(importance_type)
        first, stop = self._tree_range(start_iteration, -1 if num_iteration is None
                                       else num_iteration)
        whole = (first, stop) == (0, len(self.trees))
        best_iteration = self.best_iteration
        # a part's rounds are the model asked for; a best round beyond the
        # trees (best_iteration set so) is left out, as loading would refuse it
        if num_iteration is not None or first > 0 \
                or best_iteration * self.trees_per_round > stop:
            best_iteration = 0
        saved_params = self._saved_params()
        written = self.trees[first:stop]
        record = {
            "format": MODEL_FORMAT,
            "version": self._format_version(written, as_forest),
            "written_by": f"gbmo {__version__}",
            "objective": saved_params["objective"],
            "objective_distribution": _distribution_record(saved_params["objective"]),
            "sparse_output": None if self.sparse_loss is None else self.sparse_loss.get_params(),
            "num_class": getattr(self.loss, "num_class", None),
            # The thread count belongs to the machine that predicts, not the model.
            "params": saved_params,
            "n_features": self.n_features,
            "n_outputs": self.n_outputs,
            "trees_per_round": self.trees_per_round,
            "one_dimensional_target": self.one_dimensional_target,
            "feature_names": self.feature_names,
            "categorical": (None if self.category_order is None
                            else self.category_order.to_dict()),
            "pandas_categories": {str(i): c for i, c in self.pandas_categories.items()},
            "init_score": self.init_score.tolist(),
            "best_iteration": best_iteration or None,
            "output_importance": (None if self.output_importance is None or not whole
                                  else self.output_importance.to_dict()),
        }
        if as_forest:
            record["forest"] = TreeFields.of_trees(written).columns()
        else:
            record["trees"] = [tree.to_dict() for tree in written]
        return record

    def _format_version(self, written, as_forest):
        """The oldest format version whose readers read every field this model's
        file needs (see MODEL_VERSION)."""
        needs = [FOREST_VERSION if as_forest else 1]
        if not reads_as_given(self.params) or self.params.get("boosting") == "rf" \
                or self.category_order is not None:
            needs.append(2)
        if self.sparse_loss is not None:
            needs.append(3)
        if any(tree.node_bin.max() > 255 for tree in written):
            needs.append(4)
        if any(tree.linear_leaves is not None for tree in written):
            needs.append(6)
        return max(needs)

    def _saved_params(self):
        """The parameters as JSON values: objects given for the objective or the
        ensembler are recorded by name (a Loss instance also by its parameters)."""
        saved = {k: v for k, v in self.params.items() if k != "n_threads"}
        saved["objective"] = self._objective_name()
        as_function = _saved_as_function(self.loss)
        given_instance = (not isinstance(self.params.get("objective"), str)
                          and not as_function and self.sparse_loss is None)
        if given_instance:
            saved["objective"] = registry.saved_loss_name(self.loss)
        elif as_function:
            saved["objective"] = CustomObjective.name
        if hasattr(self.loss, "get_params") or given_instance:
            # rebuilt by name at load; a loss given by name keeps its objective_params
            saved["objective_params"] = registry.loss_parameters(self.loss, saved["objective"])
        ensembler = saved.get("ensembler")
        if ensembler is not None and not isinstance(ensembler, str):
            saved["ensembler"], saved["ensembler_params"] = registry.saved_ensembler(ensembler)
        return saved

    def _load(self, text):
        self._load_dict(parse_model_json(text))

    def model_from_string(self, model_str):
        """This Booster now holds the model of model_str (what model_to_string
        gives), as LightGBM's method; returns self. A text that is no model
        raises ModelFormatError and leaves the Booster as it was."""
        self._check_not_driven("model_from_string")
        loaded = Booster(model_str=_model_text(model_str))  # None would make an empty Booster
        vars(self).clear()
        vars(self).update(vars(loaded))
        return self

    @classmethod
    def _from_dict(cls, data):
        """A Booster of a model's parsed JSON (a CVBooster's folds)."""
        booster = cls()
        booster._load_dict(data)
        return booster

    def _load_dict(self, data):
        if not isinstance(data, dict) or data.get("format") != MODEL_FORMAT:
            if isinstance(data, dict) and "boosters" in data:
                raise ModelFormatError("this is a cv model (a CVBooster's folds), not one "
                                       "Booster: load it with gbmo.CVBooster(model_file=...) "
                                       "and use one of its boosters")
            if isinstance(data, dict) and "learner" in data:
                raise ModelFormatError("this is an XGBoost model file (its JSON format); gbmo "
                                       "reads the JSON models it saves, and cannot load "
                                       "XGBoost's")
            raise ModelFormatError("not a gbmo model: the 'format' field is missing or wrong")
        version = data.get("version")
        if not isinstance(version, int) or version < 1:
            raise ModelFormatError(f"model field 'version' is invalid: {version!r}")
        if version > MODEL_VERSION:
            raise ModelFormatError(
                f"model version {version} is newer than this gbmo reads ({MODEL_VERSION}); "
                "upgrade gbmo to load it"
            )
        try:
            n_features, n_outputs, trees_per_round = (
                _count_field(data, name) for name in ("n_features", "n_outputs", "trees_per_round"))
            if n_features < 1 or n_outputs < 1 or trees_per_round < 1:
                raise ModelFormatError(
                    "model fields 'n_features', 'n_outputs' and 'trees_per_round' must be >= 1")
            params = data["params"]
            if not isinstance(params, dict):
                raise ModelFormatError("model field 'params' must be an object")
            sparse_loss = _load_sparse_loss(data["objective"], data.get("sparse_output"))
            # earlier files left num_class null where the labels counted the classes
            loss = with_class_count(_load_loss(
                data["objective"] if sparse_loss is None else sparse_loss.predicted_by,
                data.get("num_class"), params.get("objective_params"),
                data.get("objective_distribution")), n_outputs)
            given = data["init_score"]
            # numbers only: numpy reads "0.5" and true as numbers (a file edited by hand)
            if not isinstance(given, list) or not all(
                    isinstance(v, (int, float)) and not isinstance(v, bool) for v in given):
                given = None
            init_score = np.asarray(given, dtype=np.float64)
            if init_score.shape != (n_outputs,) or not np.all(np.isfinite(init_score)):
                raise ModelFormatError(f"model field 'init_score' must be {n_outputs} finite "
                                       f"numbers, one per output (n_outputs = {n_outputs})")
            trees = trees_of_model(data, n_features, n_outputs)
            # The thread count belongs to the machine that predicts, never to a file.
            params = {k: v for k, v in params.items() if k != "n_threads"}
            feature_names = data.get("feature_names")
            if feature_names is not None and (
                    not isinstance(feature_names, list) or len(feature_names) != n_features
                    or not all(isinstance(name, str) for name in feature_names)
                    or len(set(feature_names)) != n_features):
                raise ModelFormatError(f"model field 'feature_names' must be null or a list of "
                                       f"{n_features} distinct names (n_features), got "
                                       f"{shortened(repr(feature_names), 60)}")
            one_dimensional_target = data.get("one_dimensional_target", False)
            if not isinstance(one_dimensional_target, bool) or (
                    one_dimensional_target and n_outputs != 1):
                raise ModelFormatError("model field 'one_dimensional_target' must be false, "
                                       "or true for a model with one output")
            best_iteration = data.get("best_iteration")
            if best_iteration is not None and (
                    isinstance(best_iteration, bool) or not isinstance(best_iteration, int)
                    or best_iteration < 1):
                raise ModelFormatError("model field 'best_iteration' must be null or an integer >= 1")
            if len(trees) % trees_per_round or (best_iteration or 0) * trees_per_round > len(trees):
                raise ModelFormatError(
                    f"model holds {len(trees)} trees, which is not whole rounds of "
                    f"{trees_per_round} trees up to its best_iteration {best_iteration}: a file "
                    "cut short or edited")
            importance = data.get("output_importance")
            if importance is not None:
                importance = OutputImportance.from_dict(importance, n_features, n_outputs)
            category_order = data.get("categorical")
            if category_order is not None:
                category_order = CategoryOrder.from_dict(category_order, n_features)
            _check_category_sets(trees, category_order)
            pandas_categories = pandas_categories_from_dict(data.get("pandas_categories", {}),
                                                            category_order)
        except KeyError as missing:
            raise ModelFormatError(f"model is missing the field {missing}") from None
        except TreeFormatError as err:
            raise ModelFormatError(f"model has an invalid tree: {err}") from None
        except (TypeError, ValueError, OverflowError) as err:
            if isinstance(err, ModelFormatError):
                raise
            raise ModelFormatError(f"model has a malformed field: {err}") from None
        self._start(params, loss, n_features, n_outputs, init_score, feature_names,
                    trees_per_round, one_dimensional_target, sparse_loss)
        self.trees = trees
        self.best_iteration = best_iteration or 0
        self.output_importance = importance
        self.category_order = category_order
        self.pandas_categories = pandas_categories

    def attr(self, key):
        """The attribute key's value set by set_attr, None when not set (LightGBM's)."""
        return self._attributes.get(key)

    def set_attr(self, **kwargs):
        """Sets string attributes, as LightGBM's: a value None removes its key.
        They stay with this object and its pickles, not with saved models."""
        wrong = {key: value for key, value in kwargs.items()
                 if value is not None and not isinstance(value, str)}
        if wrong:
            raise ValueError(f"set_attr's values must be strings (None removes the key), got "
                             f"{wrong!r}")
        for key, value in kwargs.items():
            if value is None:
                self._attributes.pop(key, None)
            else:
                self._attributes[key] = value
        return self

    def __getstate__(self):
        return {"model": self._model_record(), "evals_result": self.evals_result,
                "best_score": self.best_score, "attributes": self._attributes}

    def __setstate__(self, state):
        model = state["model"]
        if isinstance(model, dict):
            self.__init__()
            # copy.copy hands over the original's own record: its parameters'
            # and names' lists stay the original's (the forest's are read anew)
            self._load_dict({key: value if key == "forest" else copy.deepcopy(value)
                             for key, value in model.items()})
        else:  # an earlier gbmo pickled the model's text
            self.__init__(model_str=model)
        # an earlier gbmo pickled plain dicts, which LightGBM's metric names miss
        self.evals_result = {name: MetricHistory(history)
                             for name, history in state["evals_result"].items()}
        self.best_score = state.get("best_score", {})  # not in pickles of earlier gbmo
        self._attributes = dict(state.get("attributes", {}))
