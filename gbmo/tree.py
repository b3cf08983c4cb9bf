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
"""
from dataclasses import dataclass

import numpy as np

from ._core import NODE_DTYPE, X_DTYPE

_NODE_ARRAYS = {
    "node_feature": np.int32,
    "node_threshold": X_DTYPE,
    "node_bin": np.uint8,
    "node_missing_left": np.uint8,
    "node_left": NODE_DTYPE,
    "node_right": NODE_DTYPE,
    "node_value": NODE_DTYPE,
    "node_gain": np.float64,
    "node_count": np.int64,
}


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
    def concatenate(cls, parts):
        value_offsets = np.cumsum([0] + [p.values.size for p in parts[:-1]])
        output_offsets = np.cumsum([0] + [p.outputs.size for p in parts[:-1]])
        starts = [p.value_start[:-1] + offset for p, offset in zip(parts, value_offsets)]
        starts.append([sum(p.values.size for p in parts)])
        return cls(
            np.ascontiguousarray(np.concatenate(starts), dtype=np.int64),
            np.ascontiguousarray(np.concatenate(
                [np.where(p.output_start >= 0, p.output_start + offset, -1)
                 for p, offset in zip(parts, output_offsets)]), dtype=np.int64),
            np.ascontiguousarray(np.concatenate([p.values for p in parts]), dtype=np.float64),
            np.ascontiguousarray(np.concatenate([p.outputs for p in parts]), dtype=np.int32),
        )


class Tree:
    def __init__(self, leaf_values, leaf_outputs=None, categories_left=None, **node_arrays):
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
        # predict_binned's keywords for the categorical splits' sets, as the
        # binned data of the tree's own training run reads them (not saved)
        self.binned_sets = {}

    def leaf_arrays(self):
        n_leaves, width = self.leaf_values.shape
        value_start = np.arange(n_leaves + 1, dtype=np.int64) * width
        if self.leaf_outputs is None:
            output_start = np.full(n_leaves, -1, dtype=np.int64)
            outputs = np.zeros(0, dtype=np.int32)
        else:
            output_start = value_start[:-1].copy()
            outputs = self.leaf_outputs.ravel()
        return LeafArrays(value_start, output_start, self.leaf_values.ravel(), outputs)

    def dense_leaf_values(self, n_outputs):
        """(n_leaves, n_outputs) leaf values, zeros where a sparse leaf holds nothing."""
        if self.leaf_outputs is None:
            return self.leaf_values
        dense = np.zeros((self.n_leaves, n_outputs))
        np.put_along_axis(dense, self.leaf_outputs.astype(np.intp), self.leaf_values, axis=1)
        return dense

    @property
    def n_nodes(self):
        return len(self.node_left)

    @property
    def n_leaves(self):
        return self.leaf_values.shape[0]

    def validate(self, n_features, n_outputs):
        """Raises TreeFormatError naming the field when the arrays do not form a tree
        that prediction can traverse safely."""
        n = self.n_nodes
        if n == 0:
            raise TreeFormatError("tree has no nodes")
        for name in _NODE_ARRAYS:
            if len(getattr(self, name)) != n:
                raise TreeFormatError(
                    f"field {name!r} has {len(getattr(self, name))} entries, expected {n}"
                )
        self._validate_leaves(n_outputs)
        if not np.all(np.isfinite(self.leaf_values)):
            raise TreeFormatError("field 'leaf_values' contains NaN or infinite values")
        is_leaf = self.node_left < 0
        internal = ~is_leaf
        ids = np.arange(n)
        for name in ("node_left", "node_right"):
            children = getattr(self, name)[internal]
            if np.any(children <= ids[internal]) or np.any(children >= n):
                raise TreeFormatError(
                    f"field {name!r} has a child index that is not after its parent "
                    f"or not below {n} (a cycle or a dangling pointer)"
                )
        if np.any(self.node_right[is_leaf] >= 0):
            raise TreeFormatError("field 'node_right' names a child of a leaf")
        parents = np.concatenate([self.node_left[internal], self.node_right[internal]])
        if np.any(np.bincount(parents, minlength=n)[1:] != 1) or (n > 1 and 0 in parents):
            raise TreeFormatError(
                "fields 'node_left'/'node_right' do not give every node but the root exactly one parent"
            )
        features = self.node_feature[internal]
        if np.any(features < 0) or np.any(features >= n_features):
            raise TreeFormatError(f"field 'node_feature' has an index outside [0, {n_features})")
        if np.any(np.isnan(self.node_threshold[internal])):
            raise TreeFormatError("field 'node_threshold' contains NaN")
        for node, ranks in self.categories_left.items():
            if not 0 <= node < n or is_leaf[node] or ranks.ndim != 1 or (
                    ranks.size and (ranks[0] < 0 or np.any(np.diff(ranks) <= 0))):
                raise TreeFormatError(f"field 'categories_left' of node {node} must be an "
                                      "internal node's increasing ranks (integers >= 0)")
        values = self.node_value[is_leaf]
        if np.any(values < 0) or np.any(values >= self.n_leaves):
            raise TreeFormatError(f"field 'node_value' has a leaf index outside [0, {self.n_leaves})")
        if len(np.unique(values)) != self.n_leaves:
            raise TreeFormatError("field 'node_value' does not name every leaf exactly once")

    def _validate_leaves(self, n_outputs):
        values, outputs = self.leaf_values, self.leaf_outputs
        if outputs is None:
            if values.ndim != 2 or values.shape[1] != n_outputs:
                raise TreeFormatError(
                    f"field 'leaf_values' has shape {values.shape}, expected (n_leaves, {n_outputs})"
                )
            return
        if values.ndim != 2 or outputs.shape != values.shape or values.shape[1] > n_outputs:
            raise TreeFormatError(
                f"fields 'leaf_outputs' {outputs.shape} and 'leaf_values' {values.shape} must "
                f"have one shape (n_leaves, k) with k <= {n_outputs}"
            )
        if outputs.size and (outputs.min() < 0 or outputs.max() >= n_outputs
                             or np.any(np.diff(outputs, axis=1) <= 0)):
            raise TreeFormatError(
                f"field 'leaf_outputs' must list distinct outputs in [0, {n_outputs}) "
                "in increasing order"
            )

    def to_dict(self):
        out = {name: getattr(self, name).tolist() for name in _NODE_ARRAYS}
        out["leaf_values"] = self.leaf_values.tolist()
        if self.leaf_outputs is not None:
            out["leaf_outputs"] = self.leaf_outputs.tolist()
        if self.categories_left:
            out["categories_left"] = {str(node): ranks.tolist()
                                      for node, ranks in self.categories_left.items()}
        return out

    @classmethod
    def from_dict(cls, data, n_features, n_outputs):
        if not isinstance(data, dict):
            raise TreeFormatError(f"a tree must be a JSON object, got {type(data).__name__}")
        arrays = {name: _read_field(data, name, dtype) for name, dtype in _NODE_ARRAYS.items()}
        leaf_values = _read_field(data, "leaf_values", np.float64, ndim=2)
        leaf_outputs = (_read_field(data, "leaf_outputs", np.int32, ndim=2)
                        if data.get("leaf_outputs") is not None else None)
        categories_left = data.get("categories_left") or {}
        if not isinstance(categories_left, dict) or not all(
                isinstance(node, str) and node.isdigit() and node == str(int(node))
                and isinstance(ranks, list)
                and all(isinstance(r, int) and not isinstance(r, bool) for r in ranks)
                for node, ranks in categories_left.items()):
            raise TreeFormatError("field 'categories_left' must map node indices to lists "
                                  "of integer ranks")
        categories_left = {int(node): _read_field(categories_left, node, np.int64)
                           for node in categories_left}
        tree = cls(leaf_values, leaf_outputs, categories_left, **arrays)
        tree.validate(n_features, n_outputs)
        return tree


def _read_field(data, name, dtype, ndim=1):
    """A JSON list as an array of dtype, refusing values the dtype cannot hold."""
    if name not in data:
        raise TreeFormatError(f"tree is missing the field {name!r}")
    try:
        values = np.asarray(data[name], dtype=np.float64)
    except (TypeError, ValueError, OverflowError):
        raise TreeFormatError(f"field {name!r} must be a list of numbers") from None
    if values.ndim != ndim and values.size:
        raise TreeFormatError(f"field {name!r} must be a {ndim}-D list of numbers")
    if np.dtype(dtype).kind in "iu" and values.size:
        info = np.iinfo(dtype)
        if not np.all(np.isfinite(values)) or np.any(values != np.round(values)) \
                or values.min() < info.min or values.max() > info.max:
            raise TreeFormatError(
                f"field {name!r} must hold integers in [{info.min}, {info.max}]"
            )
    return values.astype(dtype).reshape(values.shape if values.size else (0,) * ndim)
