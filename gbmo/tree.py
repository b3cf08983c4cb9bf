"""Tree: one grown tree as flat node arrays plus its leaf values.

Node 0 is the root; children always come after their parent, so a tree that
validates has no cycle. node_left is -1 for a leaf, whose values are row
node_value[node] of leaf_values; internal nodes send a row left when its value
is <= node_threshold (binned: bin <= node_bin) and a missing value left iff
node_missing_left.

A categorical split (categories_left: {node: the sorted category ranks it
sends left}, see gbmo.categorical) sends a row left when its rank is in the
set, a missing value left iff node_missing_left, and any other rank right;
its node_threshold and node_bin are unused (0).

Dense leaves: leaf_values is (n_leaves, d). Sparse leaves (top-k splits, one
tree per output): leaf_values is (n_leaves, k) and leaf_outputs (n_leaves, k)
names the outputs they hold, in increasing order; the other outputs are 0.

TreeFields: the fields of several trees, each concatenated over the trees,
which a model file's trees are read into and checked in at once. A model
file keeps them so (its "forest", see TreeFields.columns): one list a field
parses in half the time of a list a tree and field, and pickles hold the
arrays themselves.
"""
import contextlib
import itertools
import math
from dataclasses import dataclass

import numpy as np

from ._core import BIN_INDEX_DTYPE, NODE_DTYPE, X_DTYPE
from .linear_leaves import LinearLeaves

_NODE_ARRAYS = {
    "node_feature": np.int32,
    "node_threshold": X_DTYPE,
    "node_bin": BIN_INDEX_DTYPE,
    "node_missing_left": np.uint8,
    "node_left": NODE_DTYPE,
    "node_right": NODE_DTYPE,
    "node_value": NODE_DTYPE,
    "node_gain": np.float64,
    "node_count": np.int64,
}

# each tree's counts in a model file's "forest", which its other fields add up to
_TREE_COUNTS = ("tree_nodes", "tree_leaves", "leaf_widths")
_FOREST_FIELDS = (*_TREE_COUNTS, *_NODE_ARRAYS, "leaf_values", "sparse_trees", "leaf_outputs")
# a Tree's attributes, as Tree.of_views takes them (binned_sets: see Tree.__init__)
_VIEWED_ATTRIBUTES = (*_NODE_ARRAYS, "leaf_values", "leaf_outputs", "categories_left",
                      "linear_leaves", "binned_sets")
# a model file's fields of linear leaves (gbmo.linear_leaves), in a "forest"
# the trees' in order, for the trees listed in linear_trees
_LINEAR_FIELDS = ("leaf_feature_counts", "leaf_features", "leaf_coefficients",
                  "leaf_intercepts")


class TreeFormatError(ValueError):
    """A tree's arrays do not describe a valid tree."""


@dataclass
class LeafArrays:
    """Leaves in the flat form the prediction kernels take (see _predict.pyx):
    leaf l's values are values[value_start[l]:value_start[l + 1]], for the
    outputs at outputs[output_start[l]:] or, when output_start[l] < 0, all."""
    value_start: np.ndarray
    output_start: np.ndarray
    values: np.ndarray
    outputs: np.ndarray

    def kernel_arguments(self):
        # A kernel takes &outputs[0] even when no leaf is sparse.
        outputs = self.outputs if self.outputs.size else np.zeros(1, dtype=np.int32)
        return self.value_start, self.output_start, self.values, outputs

    @classmethod
    def of_fields(cls, fields):
        """The leaves of a TreeFields' trees, in order, laid out for the whole
        forest in a few numpy calls: arrays made per tree and joined took two
        thirds of packing 5,000 small trees (the first prediction after a load)."""
        shapes = fields.leaf_shapes
        sparse = np.repeat(fields.sparse, shapes[:, 0])
        widths = np.repeat(shapes[:, 1], shapes[:, 0])  # each leaf's count of values
        value_start = np.zeros(len(widths) + 1, dtype=np.int64)
        np.cumsum(widths, out=value_start[1:])
        # a sparse leaf's outputs sit where its values do among the sparse leaves'
        sparse_widths = np.where(sparse, widths, 0)
        output_start = np.where(sparse, np.cumsum(sparse_widths) - sparse_widths, -1)
        return cls(value_start, output_start.astype(np.int64), fields.leaf_values,
                   fields.leaf_outputs)


class Tree:
    def __init__(self, leaf_values, leaf_outputs=None, categories_left=None, linear_leaves=None,
                 **node_arrays):
        missing = set(_NODE_ARRAYS) - set(node_arrays)
        if missing:
            raise TreeFormatError(f"tree is missing the field(s) {sorted(missing)}")
        for name, dtype in _NODE_ARRAYS.items():
            setattr(self, name, np.ascontiguousarray(node_arrays[name], dtype=dtype))
        self.leaf_values = np.ascontiguousarray(leaf_values, dtype=np.float64)
        self.leaf_outputs = (None if leaf_outputs is None
                             else np.ascontiguousarray(leaf_outputs, dtype=np.int32))
        self.categories_left = {int(node): np.asarray(ranks, dtype=np.int64)
                                for node, ranks in (categories_left or {}).items()}
        self.linear_leaves = linear_leaves  # a LinearLeaves, or None: constant leaves
        # predict_binned's keywords for the categorical splits' sets, as the
        # binned data of the tree's own training run reads them (not saved)
        self.binned_sets = {}

    @classmethod
    def of_views(cls, attributes):
        """A Tree of its attributes in _VIEWED_ATTRIBUTES' order: arrays already
        of its fields' dtypes, contiguous, and category sets keyed by int
        (TreeFields.trees' views of a loaded file's columns), without
        __init__'s conversions, which took 60% of making 5,000 Trees."""
        tree = cls.__new__(cls)
        tree.__dict__ = dict(zip(_VIEWED_ATTRIBUTES, attributes))
        return tree

    def leaf_arrays(self):
        """This tree's LeafArrays, as LeafArrays.of_fields lays out a TreeFields
        of it alone, in a fraction of the time: training adds its trees to
        the sets it scores one at a time."""
        n_leaves, width = self.leaf_values.shape
        value_start = np.arange(n_leaves + 1, dtype=np.int64) * width
        if self.leaf_outputs is None:
            output_start = np.full(n_leaves, -1, dtype=np.int64)
            outputs = np.zeros(0, dtype=np.int32)
        else:
            output_start = value_start[:-1].copy()
            outputs = self.leaf_outputs.ravel()
        return LeafArrays(value_start, output_start, self.leaf_values.ravel(), outputs)

    def dense_leaf_values(self, n_outputs, values=None):
        """(n_leaves, n_outputs) leaf values, zeros where a sparse leaf holds
        nothing; values: others laid out as leaf_values (a linear leaf's
        intercepts) instead."""
        values = self.leaf_values if values is None else values
        if self.leaf_outputs is None:
            return values
        dense = np.zeros((self.n_leaves, n_outputs))
        np.put_along_axis(dense, self.leaf_outputs.astype(np.intp), values, axis=1)
        return dense

    def scale(self, factor):
        """Multiplies the tree's predictions by factor."""
        self.leaf_values *= factor
        if self.linear_leaves is not None:
            self.linear_leaves.scale(factor)

    @property
    def n_nodes(self):
        return len(self.node_left)

    @property
    def n_leaves(self):
        return self.leaf_values.shape[0]

    def validate(self, n_features, n_outputs):
        """Raises TreeFormatError naming the field when the arrays do not form a tree
        that prediction can traverse safely (the rules of TreeFields.validate)."""
        TreeFields.of_trees([self]).validate(n_features, n_outputs)

    def to_dict(self):
        out = {name: getattr(self, name).tolist() for name in _NODE_ARRAYS}
        out["leaf_values"] = self.leaf_values.tolist()
        if self.leaf_outputs is not None:
            out["leaf_outputs"] = self.leaf_outputs.tolist()
        if self.categories_left:
            out["categories_left"] = {str(node): ranks.tolist()
                                      for node, ranks in self.categories_left.items()}
        if self.linear_leaves is not None:
            out.update(self.linear_leaves.to_dict())
        return out


def trees_of_model(model, n_features, n_outputs):
    """The Trees of a parsed model file: its "forest" of columns (what
    TreeFields.columns gives; save_model's since format version 5), or its
    "trees", a list of one object a tree (dump_model's, and files before
    version 5). Every tree is checked by TreeFields.validate; a
    TreeFormatError names the tree or the field."""
    if "forest" in model:
        if "trees" in model:
            raise TreeFormatError("a model holds its trees in 'forest' or in 'trees', not both")
        fields = TreeFields.read_columns(model["forest"])
    else:
        trees = model["trees"]
        if not isinstance(trees, list):
            raise TreeFormatError("field 'trees' must be a list")
        fields = TreeFields.read(trees)
    fields.validate(n_features, n_outputs)
    return fields.trees()


@dataclass
class TreeFields:
    """Several trees' fields, each concatenated over the trees in order, with
    each tree's shape: validate checks every tree at once (a model of 5,000
    small trees took half a second to load when each tree was read and
    checked on its own, nearly all of it numpy's cost per call)."""
    node_arrays: dict  # {name: the trees' entries}
    node_counts: dict  # {name: each tree's count of them}
    # the trees' (n_leaves, width) arrays raveled, and their shapes (n_trees, 2);
    # output_shapes (0, 0) for a tree without leaf_outputs, sparse False
    leaf_values: np.ndarray
    leaf_shapes: np.ndarray
    sparse: np.ndarray
    leaf_outputs: np.ndarray
    output_shapes: np.ndarray
    categories_left: dict  # {tree: its categories_left} of the trees with categorical splits
    linear_leaves: dict  # {tree: its LinearLeaves} of the trees with linear leaves

    @classmethod
    def of_trees(cls, trees):
        for t, tree in enumerate(trees):
            for name in ("leaf_values", "leaf_outputs"):
                values = getattr(tree, name)
                if values is not None and values.ndim != 2:
                    raise TreeFormatError(f"tree {t}: field {name!r} has shape {values.shape}, "
                                          "expected (n_leaves, width)")
        sparse = np.array([tree.leaf_outputs is not None for tree in trees], dtype=bool)
        node_arrays, node_counts = {}, {}
        for name, dtype in _NODE_ARRAYS.items():
            arrays = [getattr(tree, name) for tree in trees]
            node_arrays[name] = np.concatenate(arrays + [np.zeros(0, dtype)])
            node_counts[name] = np.fromiter(map(len, arrays), dtype=np.int64, count=len(arrays))
        return cls(
            node_arrays, node_counts,
            np.concatenate([tree.leaf_values.ravel() for tree in trees]
                           + [np.zeros(0, dtype=np.float64)]),
            np.array([tree.leaf_values.shape for tree in trees], dtype=np.int64).reshape(-1, 2),
            sparse,
            np.concatenate([tree.leaf_outputs.ravel() for tree in trees if tree.leaf_outputs
                            is not None] + [np.zeros(0, dtype=np.int32)]),
            np.array([(0, 0) if tree.leaf_outputs is None else tree.leaf_outputs.shape
                      for tree in trees], dtype=np.int64).reshape(-1, 2),
            {t: tree.categories_left for t, tree in enumerate(trees) if tree.categories_left},
            {t: tree.linear_leaves for t, tree in enumerate(trees)
             if tree.linear_leaves is not None})

    @classmethod
    def read(cls, trees):
        """The fields of a model file's list of tree objects (parsed JSON), read
        by _read_field's rules."""
        for t, data in enumerate(trees):
            if not isinstance(data, dict):
                raise TreeFormatError(f"tree {t}: a tree must be a JSON object, "
                                      f"got {type(data).__name__}")
        numbers = np.arange(len(trees))
        node_arrays, node_counts = {}, {}
        for name, dtype in _NODE_ARRAYS.items():
            node_arrays[name], shapes = _read_concatenated(trees, numbers, name, dtype, ndim=1)
            node_counts[name] = shapes[:, 0]
        leaf_values, leaf_shapes = _read_concatenated(trees, numbers, "leaf_values", np.float64,
                                                      ndim=2)
        sparse = np.array([data.get("leaf_outputs") is not None for data in trees], dtype=bool)
        leaf_outputs, shapes = _read_concatenated([trees[t] for t in numbers[sparse]],
                                                  numbers[sparse], "leaf_outputs", np.int32, ndim=2)
        output_shapes = np.zeros_like(leaf_shapes)
        output_shapes[sparse] = shapes
        categories_left = {t: _read_category_sets(data["categories_left"], t)
                           for t, data in enumerate(trees) if data.get("categories_left")}
        linear_leaves = {}
        for t, data in enumerate(trees):
            if any(name in data for name in _LINEAR_FIELDS):
                with _naming_tree(t):
                    linear_leaves[t] = _linear_leaves(
                        *(_read_field(data, name, dtype, ndim)
                          for name, dtype, ndim in _LINEAR_DTYPES), leaf_shapes[t, 1])
        return cls(node_arrays, node_counts, leaf_values, leaf_shapes, sparse, leaf_outputs,
                   output_shapes, categories_left, linear_leaves)

    def columns(self):
        """The fields as a model file's "forest" holds them: each one's entries
        of every tree in order (leaf_values and leaf_outputs raveled), each
        tree's counts of nodes, leaves and values a leaf, the numbers of the
        trees with sparse leaves, and the category sets by tree and node."""
        forest = {"tree_nodes": self.node_counts["node_left"],
                  "tree_leaves": self.leaf_shapes[:, 0], "leaf_widths": self.leaf_shapes[:, 1],
                  **self.node_arrays, "leaf_values": self.leaf_values,
                  "sparse_trees": np.flatnonzero(self.sparse), "leaf_outputs": self.leaf_outputs}
        if self.categories_left:
            forest["categories_left"] = {
                str(t): {str(node): ranks for node, ranks in sets.items()}
                for t, sets in self.categories_left.items()}
        if self.linear_leaves:
            linear = list(self.linear_leaves.values())
            forest["linear_trees"] = np.array(list(self.linear_leaves), dtype=np.int64)
            for name, attribute in zip(_LINEAR_FIELDS, ("feature_counts", "features",
                                                        "coefficients", "intercepts")):
                forest[name] = np.concatenate([getattr(leaves, attribute).ravel()
                                               for leaves in linear])
        return forest

    @classmethod
    def read_columns(cls, forest):
        """The fields of a model file's "forest" (what columns gives, as parsed
        JSON lists or as arrays), checked to add up to whole trees; validate
        checks the trees."""
        if not isinstance(forest, dict):
            raise TreeFormatError(f"field 'forest' must be an object, got "
                                  f"{type(forest).__name__}")
        missing = [name for name in _FOREST_FIELDS if name not in forest]
        if missing:
            raise TreeFormatError(f"field 'forest' is missing {missing}")
        counts = {name: _as_numbers(forest[name], name, np.int64, 1) for name in _TREE_COUNTS}
        n_trees = len(counts["tree_nodes"])
        node_arrays = {name: _as_numbers(forest[name], name, dtype, 1)
                       for name, dtype in _NODE_ARRAYS.items()}
        leaf_values = _as_numbers(forest["leaf_values"], "leaf_values", np.float64, 1)
        sparse_trees = _as_numbers(forest["sparse_trees"], "sparse_trees", np.int64, 1)
        leaf_outputs = _as_numbers(forest["leaf_outputs"], "leaf_outputs", np.int32, 1)
        # bounded by the entries before they are summed or multiplied, and a
        # tree's leaves by its nodes, so that no sum of counts overflows
        # (numpy's repeat of such counts wrote past its buffer)
        bounds = {"tree_nodes": len(node_arrays["node_left"]),
                  "tree_leaves": len(node_arrays["node_left"]), "leaf_widths": len(leaf_values)}
        for name, values in counts.items():
            if len(values) != n_trees or np.any((values < 0) | (values > bounds[name])):
                raise TreeFormatError(f"field {name!r} must hold {n_trees} counts (one a tree, "
                                      f"as 'tree_nodes') in [0, {bounds[name]}]")
        tree_nodes, tree_leaves, leaf_widths = (counts[name] for name in _TREE_COUNTS)
        # a list of trees cannot hold leaves of no values either
        _reject((tree_leaves > tree_nodes) | ((tree_leaves > 0) & (leaf_widths == 0)), None,
                lambda t: f"fields 'tree_leaves' and 'leaf_widths' give {tree_leaves[t]} "
                          f"leaves of {leaf_widths[t]} values to a tree of {tree_nodes[t]} "
                          "nodes: at most one a node, of at least one value")
        leaf_shapes = np.column_stack([tree_leaves, leaf_widths])
        sparse = np.zeros(n_trees, dtype=bool)
        if np.any((sparse_trees < 0) | (sparse_trees >= n_trees)) \
                or np.any(_not_above_previous(sparse_trees)):
            raise TreeFormatError(f"field 'sparse_trees' must list trees in [0, {n_trees}) in "
                                  "increasing order")
        sparse[sparse_trees] = True
        output_shapes = np.where(sparse[:, None], leaf_shapes, 0)
        for name, values, expected in (
                *((name, values, tree_nodes.sum()) for name, values in node_arrays.items()),
                ("leaf_values", leaf_values, leaf_shapes.prod(axis=1).sum()),
                ("leaf_outputs", leaf_outputs, output_shapes.prod(axis=1).sum())):
            if len(values) != expected:
                raise TreeFormatError(f"field {name!r} has {len(values)} entries, where the "
                                      f"trees' counts ('tree_nodes', 'tree_leaves', "
                                      f"'leaf_widths', 'sparse_trees') add up to {expected}")
        categories_left = forest.get("categories_left", {})
        if not isinstance(categories_left, dict) or not all(
                _is_index(tree, n_trees) for tree in categories_left):
            raise TreeFormatError(f"field 'categories_left' must map tree numbers in "
                                  f"[0, {n_trees}) to their category sets")
        return cls(node_arrays, {name: tree_nodes for name in _NODE_ARRAYS},
                   leaf_values, leaf_shapes, sparse, leaf_outputs, output_shapes,
                   {int(tree): _read_category_sets(sets, int(tree))
                    for tree, sets in categories_left.items()},
                   _read_linear_columns(forest, leaf_shapes))

    def trees(self):
        """A Tree for each tree, its arrays views of these fields'."""
        node_arrays = {name: _pieces(values, self.node_counts[name])
                       for name, values in self.node_arrays.items()}
        leaf_values = _pieces(self.leaf_values, self.leaf_shapes.prod(axis=1))
        leaf_outputs = iter(_pieces(self.leaf_outputs,
                                    self.output_shapes[self.sparse].prod(axis=1)))
        return [Tree.of_views((*tree_arrays, leaf_values[t].reshape(shape),
                               next(leaf_outputs).reshape(output_shape) if sparse else None,
                               self.categories_left.get(t, {}), self.linear_leaves.get(t), {}))
                for t, (shape, output_shape, sparse, tree_arrays) in enumerate(zip(
                    self.leaf_shapes.tolist(), self.output_shapes.tolist(), self.sparse,
                    zip(*(node_arrays[name] for name in _NODE_ARRAYS))))]

    def validate(self, n_features, n_outputs):
        """Raises TreeFormatError naming the tree and the field when a tree's
        arrays do not form a tree that prediction can traverse safely. Each
        rule is checked over every tree at once, in the order below; the
        first rule broken names the first tree that breaks it."""
        n_nodes = self.node_counts["node_left"]
        _reject(n_nodes == 0, None, "tree has no nodes")
        for name, counts in self.node_counts.items():
            _reject(counts != n_nodes, None,
                    lambda t: f"field {name!r} has {counts[t]} entries, expected {n_nodes[t]}")
        self._validate_leaves(n_outputs)
        tree_of_value, _ = _segments(self.leaf_shapes.prod(axis=1))
        _reject(~np.isfinite(self.leaf_values), tree_of_value,
                "field 'leaf_values' contains NaN or infinite values")
        self._validate_nodes(n_features, n_nodes)
        for t, leaves in self.linear_leaves.items():
            with _naming_tree(t):
                _validate_linear_leaves(leaves, self.leaf_shapes[t], n_features)

    def _validate_leaves(self, n_outputs):
        width = self.leaf_shapes[:, 1]
        _reject(~self.sparse & (width != n_outputs), None,
                lambda t: f"field 'leaf_values' has shape {_shape(self.leaf_shapes, t)}, "
                          f"expected (n_leaves, {n_outputs})")
        _reject(self.sparse & (np.any(self.output_shapes != self.leaf_shapes, axis=1)
                               | (width > n_outputs)), None,
                lambda t: f"fields 'leaf_outputs' {_shape(self.output_shapes, t)} and "
                          f"'leaf_values' {_shape(self.leaf_shapes, t)} must have one shape "
                          f"(n_leaves, k) with k <= {n_outputs}")
        outputs = self.leaf_outputs
        tree_of, position = _segments(self.output_shapes.prod(axis=1))
        later_in_row = position % self.output_shapes[tree_of, 1] > 0
        _reject((outputs < 0) | (outputs >= n_outputs)
                | (later_in_row & _not_above_previous(outputs)), tree_of,
                f"field 'leaf_outputs' must list distinct outputs in [0, {n_outputs}) "
                "in increasing order")

    def _validate_nodes(self, n_features, n_nodes):
        tree_of, node = _segments(n_nodes)
        tree_size = n_nodes[tree_of]
        root = np.arange(len(node)) - node  # each node's tree's root in the concatenation
        left, right = self.node_arrays["node_left"], self.node_arrays["node_right"]
        is_leaf = left < 0
        internal = ~is_leaf
        for name, children in (("node_left", left), ("node_right", right)):
            _reject(internal & ((children <= node) | (children >= tree_size)), tree_of,
                    lambda i: f"field {name!r} has a child index that is not after its parent "
                              f"or not below {tree_size[i]} (a cycle or a dangling pointer)")
        _reject(is_leaf & (right >= 0), tree_of, "field 'node_right' names a child of a leaf "
                                                 "(a node whose node_left is negative)")
        parents = np.bincount(np.concatenate([left[internal], right[internal]])
                              + np.tile(root[internal], 2), minlength=len(node))
        _reject(parents != (node > 0), tree_of, "fields 'node_left'/'node_right' do not give "
                                                "every node but the root exactly one parent")
        features = self.node_arrays["node_feature"]
        _reject(internal & ((features < 0) | (features >= n_features)), tree_of,
                f"field 'node_feature' has an index outside [0, {n_features})")
        _reject(internal & np.isnan(self.node_arrays["node_threshold"]), tree_of,
                "field 'node_threshold' contains NaN")
        _reject(internal & (self.node_arrays["node_missing_left"] > 1), tree_of,
                "field 'node_missing_left' holds a value other than 0 and 1")
        self._validate_category_sets(is_leaf, n_nodes)
        values = self.node_arrays["node_value"]
        n_leaves = self.leaf_shapes[:, 0]
        tree_leaves = n_leaves[tree_of]
        _reject(is_leaf & ((values < 0) | (values >= tree_leaves)), tree_of,
                lambda i: f"field 'node_value' has a leaf index outside [0, {tree_leaves[i]})")
        tree_of_leaf, _ = _segments(n_leaves)
        first_leaf = np.cumsum(n_leaves) - n_leaves
        named = np.bincount(values[is_leaf] + first_leaf[tree_of[is_leaf]],
                            minlength=len(tree_of_leaf))
        leaf_nodes = np.bincount(tree_of[is_leaf], minlength=len(n_leaves))
        _reject(named == 0, tree_of_leaf,
                lambda i: f"field 'node_value' does not name every leaf exactly once "
                          f"('leaf_values' has {n_leaves[tree_of_leaf[i]]} rows, the tree "
                          f"{leaf_nodes[tree_of_leaf[i]]} leaf nodes)")

    def _validate_category_sets(self, is_leaf, n_nodes):
        sets = [(t, node, ranks) for t, tree_sets in self.categories_left.items()
                for node, ranks in tree_sets.items()]
        if not sets:
            return
        tree_of, nodes, rank_sets = zip(*sets)
        tree_of = np.array(tree_of)
        # a node beyond its tree may be beyond int64 too: it is looked up as the root
        in_tree = [0 <= node < size for node, size in zip(nodes, n_nodes[tree_of].tolist())]
        root = np.cumsum(n_nodes) - n_nodes
        split_node = root[tree_of] + [node if known else 0 for node, known in zip(nodes, in_tree)]
        one_dimensional = np.array([ranks.ndim == 1 for ranks in rank_sets])
        wrong = ~np.array(in_tree) | is_leaf[split_node] | ~one_dimensional
        listed = [ranks for ranks in rank_sets if ranks.ndim == 1]
        set_of_rank, position = _segments(np.array([ranks.size for ranks in listed],
                                                   dtype=np.int64))
        ranks = np.concatenate(listed + [np.zeros(0, dtype=np.int64)])
        wrong_rank = np.where(position == 0, ranks < 0, _not_above_previous(ranks))
        wrong[np.flatnonzero(one_dimensional)[set_of_rank[wrong_rank]]] = True
        _reject(wrong, tree_of, lambda s: f"field 'categories_left' of node {nodes[s]} must be an "
                                          "internal node's increasing ranks (integers >= 0)")


# the linear leaves' fields: (name, dtype, dimensions in a tree's own object)
_LINEAR_DTYPES = tuple(zip(_LINEAR_FIELDS, (np.int32, np.int32, np.float64, np.float64),
                           (1, 1, 2, 2)))


def _linear_leaves(feature_counts, features, coefficients, intercepts, width):
    """A LinearLeaves of its read fields: a forest's raveled columns, or a
    list's rows (an empty 2-D list reads as (0, 0)), as rows of width."""
    if width == 0:
        raise TreeFormatError("a tree with linear leaves needs leaves of at least one value")
    return LinearLeaves(feature_counts, features,
                        *(values.reshape(-1, width) if values.ndim == 1 or values.size == 0
                          else values for values in (coefficients, intercepts)))


def _read_linear_columns(forest, leaf_shapes):
    """{tree: LinearLeaves} of a "forest"'s linear fields (none without
    linear_trees), checked to add up to the listed trees' leaves."""
    if "linear_trees" not in forest:
        given = [name for name in _LINEAR_FIELDS if name in forest]
        if given:
            raise TreeFormatError(f"field 'forest' holds the linear leaves' {given} but no "
                                  "'linear_trees', which says whose they are")
        return {}
    missing = [name for name in _LINEAR_FIELDS if name not in forest]
    if missing:
        raise TreeFormatError(f"field 'forest' lists linear_trees but is missing {missing}")
    n_trees = len(leaf_shapes)
    trees = _as_numbers(forest["linear_trees"], "linear_trees", np.int64, 1)
    if np.any((trees < 0) | (trees >= n_trees)) or np.any(_not_above_previous(trees)):
        raise TreeFormatError(f"field 'linear_trees' must list trees in [0, {n_trees}) in "
                              "increasing order")
    columns = {name: _as_numbers(forest[name], name, dtype, 1)
               for name, dtype, _ in _LINEAR_DTYPES}
    counts = columns["leaf_feature_counts"]
    n_leaves, widths = leaf_shapes[trees, 0], leaf_shapes[trees, 1]
    # bounded before they are summed, so that no sum overflows
    if len(counts) != n_leaves.sum() or np.any(
            (counts < 0) | (counts > len(columns["leaf_features"]))):
        raise TreeFormatError(f"field 'leaf_feature_counts' must hold a count in [0, "
                              f"{len(columns['leaf_features'])}] for each of the "
                              f"{n_leaves.sum()} leaves of the linear trees")
    running = np.concatenate([[0], np.cumsum(counts)])
    leaf_stop = np.cumsum(n_leaves)
    features_of = running[leaf_stop] - running[leaf_stop - n_leaves]
    for name, sizes in (("leaf_features", features_of),
                        ("leaf_coefficients", features_of * widths),
                        ("leaf_intercepts", n_leaves * widths)):
        if len(columns[name]) != sizes.sum():
            raise TreeFormatError(f"field {name!r} has {len(columns[name])} entries, where the "
                                  f"linear trees' counts add up to {sizes.sum()}")
    pieces = {name: _pieces(columns[name], sizes) for name, sizes in (
        ("leaf_feature_counts", n_leaves), ("leaf_features", features_of),
        ("leaf_coefficients", features_of * widths), ("leaf_intercepts", n_leaves * widths))}
    linear = {}
    for i, (t, width) in enumerate(zip(trees.tolist(), widths.tolist())):
        with _naming_tree(t):
            linear[t] = _linear_leaves(*(pieces[name][i] for name in _LINEAR_FIELDS), width)
    return linear


def _validate_linear_leaves(leaves, leaf_shape, n_features):
    n_leaves, width = (int(size) for size in leaf_shape)
    counts, features = leaves.feature_counts, leaves.features
    if counts.shape != (n_leaves,) or np.any(counts < 0) or counts.sum() != len(features):
        raise TreeFormatError(f"field 'leaf_feature_counts' must hold a count >= 0 for each "
                              f"of the {n_leaves} leaves, adding up to the "
                              f"{len(features)} of 'leaf_features'")
    if np.any((features < 0) | (features >= n_features)):
        raise TreeFormatError(f"field 'leaf_features' has an index outside [0, {n_features})")
    for name, values, shape in (("leaf_coefficients", leaves.coefficients, (len(features), width)),
                                ("leaf_intercepts", leaves.intercepts, (n_leaves, width))):
        if values.shape != shape:
            raise TreeFormatError(f"field {name!r} has shape {values.shape}, expected {shape}")
        if not np.all(np.isfinite(values)):
            raise TreeFormatError(f"field {name!r} contains NaN or infinite values")


def _is_index(text, size):
    """Whether text is a number in [0, size) written as str(number) writes it."""
    return isinstance(text, str) and text.isascii() and text.isdigit() \
        and text == str(int(text)) and int(text) < size


def _reject(wrong, tree_of, message):
    """Raises TreeFormatError for the first entry that wrong marks, naming its
    tree (tree_of[entry], or the entry itself where tree_of is None) and
    saying message (a str, or a function of the entry)."""
    if wrong.any():
        entry = int(np.argmax(wrong))
        tree = entry if tree_of is None else int(tree_of[entry])
        raise TreeFormatError(f"tree {tree}: {message(entry) if callable(message) else message}")


def _segments(sizes):
    """For entries laid out as consecutive segments of the given sizes: each
    entry's segment and its position in it."""
    segment = np.repeat(np.arange(len(sizes)), sizes)
    return segment, np.arange(len(segment)) - (np.cumsum(sizes) - sizes)[segment]


def _not_above_previous(values):
    """Whether each value is <= the one before it (False for the first)."""
    not_above = np.zeros(len(values), dtype=bool)
    not_above[1:] = np.diff(values) <= 0
    return not_above


def _shape(shapes, t):
    return tuple(shapes[t].tolist())


def _pieces(values, sizes):
    """values cut into consecutive views of the given sizes."""
    stops = np.cumsum(sizes).tolist()
    return [values[start:stop] for start, stop in zip([0] + stops[:-1], stops)]


@contextlib.contextmanager
def _naming_tree(number):
    """A TreeFormatError raised inside says which tree it is about."""
    try:
        yield
    except TreeFormatError as err:
        raise TreeFormatError(f"tree {number}: {err}") from None


def _read_concatenated(trees, numbers, name, dtype, ndim):
    """Field name of each of trees (the model's trees numbers) as one array of
    dtype, the trees' arrays raveled in order, and each tree's shape. One
    array of every tree's entries where it reads as each tree's alone would;
    a tree at a time where it does not (leaves of different widths, a tree's
    list empty) or where a rule is broken, to name the tree."""
    lists = [data.get(name) for data in trees]
    # a tree's empty list reads as shape (0,) * ndim, not as rows as wide as others'
    if all(type(entries) is list and (entries or ndim == 1) for entries in lists):
        rows = np.fromiter(map(len, lists), dtype=np.int64, count=len(lists))
        try:
            values = _as_numbers(list(itertools.chain.from_iterable(lists)), name, dtype, ndim)
        except TreeFormatError:
            values = None
        # one entry (ndim 1) or one row of numbers (ndim 2) for each listed item
        if values is not None and values.ndim == ndim and len(values) == rows.sum() \
                and (ndim == 1 or values.shape[1] > 0):
            return values.ravel(), np.column_stack([rows] + [np.full_like(rows, width)
                                                             for width in values.shape[1:]])
    arrays = []
    for number, data in zip(numbers, trees):
        with _naming_tree(number):
            arrays.append(_read_field(data, name, dtype, ndim))
    return (np.concatenate([values.ravel() for values in arrays] + [np.zeros(0, dtype=dtype)]),
            np.array([values.shape for values in arrays], dtype=np.int64).reshape(-1, ndim))


def _read_category_sets(sets, number):
    with _naming_tree(number):
        if not isinstance(sets, dict) or not all(
                _is_index(node, math.inf) and _is_ranks(ranks)
                for node, ranks in sets.items()):
            raise TreeFormatError("field 'categories_left' must map node indices to lists "
                                  "of integer ranks")
        return {int(node): _read_field(sets, node, np.int64) for node in sets}


def _is_ranks(ranks):
    """Whether ranks is a list of integers (JSON's) or an integer array (a pickle's)."""
    if isinstance(ranks, np.ndarray):
        return ranks.dtype.kind in "iu"
    return isinstance(ranks, list) and all(
        isinstance(r, int) and not isinstance(r, bool) for r in ranks)


def _read_field(data, name, dtype, ndim=1):
    if name not in data:
        raise TreeFormatError(f"tree is missing the field {name!r}")
    return _as_numbers(data[name], name, dtype, ndim)


def _as_numbers(entries, name, dtype, ndim):
    """A JSON list as an array of dtype, refusing values the dtype cannot hold,
    and text where numbers belong (numpy read "0.5" as 0.5: a deployment
    audit), or only true and false."""
    try:
        values = np.asarray(entries)
        if values.size and values.dtype.kind not in "iuf":  # text, objects, true / false
            raise TypeError
        values = values.astype(np.float64, copy=False)
    except (TypeError, ValueError, OverflowError):
        lengths = sorted({len(row) for row in entries if isinstance(row, list)}) \
            if ndim == 2 and isinstance(entries, list) else []
        if len(lengths) > 1:
            raise TreeFormatError(f"field {name!r} has rows of lengths {lengths}, where every "
                                  "row (one a leaf) has the same length") from None
        raise TreeFormatError(f"field {name!r} must be a list of numbers") from None
    if values.ndim != ndim and values.size:
        raise TreeFormatError(f"field {name!r} must be a {ndim}-D list of numbers")
    if np.dtype(dtype).kind in "iu" and values.size:
        info = np.iinfo(dtype)
        # against info.max + 1, which a float holds exactly where it rounds
        # int64's maximum up to 2**63 (which then cast to -2**63)
        if not np.all(np.isfinite(values)) or np.any(values != np.round(values)) \
                or values.min() < info.min or values.max() >= info.max + 1:
            raise TreeFormatError(
                f"field {name!r} must hold integers in [{info.min}, {info.max}]"
            )
    return values.astype(dtype).reshape(values.shape if values.size else (0,) * ndim)
