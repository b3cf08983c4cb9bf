"""GBDT-sparse (Si et al. 2017): thousands of labels in a scipy CSR Y, with
memory that grows with the non-zeros, never with n x L.

- Raw scores are a base per label (at or below the loss's activity
  threshold) plus a CSR matrix D of per-row deltas: a label a row's leaves
  never touched scores its base.
- Losses keep gradients sparse (CSR-like: indptr, label, grad, hess), with
  exact second-order hessians, which are sparse too:
  * squared_hinge: y in {-1, +1}, loss max(0, 1 - y f)^2, grad -2 y (1 - y f),
    hess 2 where 1 - y f > 0, else both 0. The base is -1 (the margin), so an
    absent label scored at or below -1 contributes nothing and has no entry:
    no clipping of scores is needed beyond starting at the margin.
  * sigmoid: logistic loss restricted to the present labels and the absent
    ones scored above sparse_threshold (raw score); grad p - y, hess p (1 - p).
    A label's base is min(logit(its density), sparse_threshold), so absent,
    untouched labels are outside the restricted set, and a frequent label's
    first steps are Newton steps from near its own rate: from one shared
    base far below it, its hessian p (1 - p) was near 0 and its first step
    overshot into saturation, where no split gained any more.
- Trees: each leaf keeps top_k (label, value) pairs chosen by the largest
  G_q^2 / (H_q + lambda) (GBDT-MO's unrestricted sparse split, Algorithm 5,
  which is the L0-constrained leaf of Si et al.), stored as the sparse leaves
  of gbmo.tree.Tree, so predict, predict_leaf and dumps work unchanged.
- Split search: _core._sparse_output, per feature one pass over the node's
  rows sorted by bin, accumulating their sparse gradient rows.
"""
import heapq

import numpy as np

from ._core import G_H_DTYPE, ROW_DTYPE
from ._core._sparse_output import find_best_sparse_output_splits, predict_top_k
from .binning import SparseBinned
from .callback import EvalResult
from .losses import Loss, make_loss
from .metric_history import MetricHistory
from .metrics import SPARSE_OUTPUT_METRICS, f1_at_threshold, ndcg_at_k, precision_at_k
from .parallel import WORK_PER_ELEMENT, caller_threads, threads_for
from .dart import rounds_to_drop
from .goss import goss_sample_by_size, goss_warmup_rounds
from .grower import (InteractionConstraints, drawn_features, drawn_thresholds, leaf_values,
                     soft_threshold, tree_structure)
from .params import (balanced_bagging, bags, canonical_objective, check_output_bounds,
                     check_sampling, checked_value, constraints_at_positions, keys_naming,
                     max_leaves_of, metric_list,
                     objective_and_written_params, resolve_params)
from .thread_governor import thread_governor
from .tree import LeafArrays, Tree
from .validation import check_name_order, check_sparse_structure, is_scipy_sparse

SPARSE_OBJECTIVES = ("squared_hinge", "sigmoid")
# a label is predicted where its raw score is above this (F1, the estimators'
# labels): a probability above 0.5, or the squared hinge's margin above 0
POSITIVE_RAW_SCORE = 0.0
DEFAULT_SPARSE_THRESHOLD = -2.0


def is_sparse_labels(Y):
    return is_scipy_sparse(Y)


def _scipy_sparse():
    """scipy.sparse, imported on use: only a sparse Y, which loaded it, gets
    here, and `import gbmo` stays without it (see is_scipy_sparse)."""
    import scipy.sparse

    return scipy.sparse


def check_sparse_labels(Y, n_rows, name="Y"):
    """Y as canonical CSR (n_rows, L) of 0/1 labels, stored entries being the positives."""
    if Y.ndim != 2:
        raise ValueError(f"{name} must be 2-D (n_rows, n_labels), got shape {Y.shape}")
    if Y.shape[0] != n_rows:
        raise ValueError(f"{name} has {Y.shape[0]} rows but X has {n_rows}")
    if Y.shape[1] == 0:
        raise ValueError(f"{name} has no labels: shape {Y.shape}")
    if getattr(Y, "format", None) in ("csr", "csc"):  # a refit may hand a dense Y
        check_sparse_structure(Y, name)
    Y = _scipy_sparse().csr_matrix(Y, dtype=np.float64, copy=True)
    Y.sum_duplicates()
    Y.eliminate_zeros()
    if not np.all(Y.data == 1.0):
        bad = Y.data[Y.data != 1.0][0].item()
        raise ValueError(f"sparse {name} must hold 0/1 labels (stored entries 1), found {bad!r}")
    Y.sort_indices()
    return Y


# -- losses ---------------------------------------------------------------
class SparseOutputLoss(Loss):
    """A loss of the sparse-output path: scores on the union of Y's and D's
    patterns in, sparse gradients out. A model it trained predicts with the
    registered loss predicted_by, of the same transform, which a saved model
    loads by name; the model keeps this one (Booster.sparse_loss, saved with
    get_params) to say what trained its trees."""

    predicted_by = None

    def get_params(self):
        return {}

    def on_dense_scores(self):
        return DenseScores(self)

    def base_score(self, Y, weight=None):
        """(L,) float64: each label's raw score where a row's leaves never
        touched it."""
        raise NotImplementedError

    def entry_gradients(self, f, positive):
        """(grad, hess, active) for scores f of entries whose label is present or not."""
        raise NotImplementedError

    def gradients(self, Y, D, base, weight=None):
        """CSR-like (indptr int64, label int32, grad, hess float32) over rows.
        Sample weights multiply a row's entries (in float64, then rounded), as
        they multiply the dense losses' gradients."""
        rows, labels, f, positive = _union_scores(Y, D, base)
        grad, hess, active = self.entry_gradients(f, positive)
        rows, labels, grad, hess = rows[active], labels[active], grad[active], hess[active]
        if weight is not None:
            grad, hess = grad * weight[rows], hess * weight[rows]
        indptr = np.zeros(Y.shape[0] + 1, dtype=np.int64)
        np.cumsum(np.bincount(rows, minlength=Y.shape[0]), out=indptr[1:])
        return indptr, labels.astype(np.int32), grad.astype(G_H_DTYPE), hess.astype(G_H_DTYPE)


class SparseSquaredHinge(SparseOutputLoss):
    name = "squared_hinge"
    predicted_by = "mse"  # the identity
    default_metric = "precision@1"

    def base_score(self, Y, weight=None):
        return np.full(Y.shape[1], -1.0)

    def entry_gradients(self, f, positive):
        y = np.where(positive, 1.0, -1.0)
        margin = 1.0 - y * f
        active = margin > 0
        return -2.0 * y * np.maximum(margin, 0.0), np.where(active, 2.0, 0.0), active

    def transform(self, raw):
        return raw


class SparseSigmoid(SparseOutputLoss):
    name = "sigmoid"
    predicted_by = "sigmoid"
    default_metric = "precision@1"

    def __init__(self, threshold=DEFAULT_SPARSE_THRESHOLD):
        super().__init__()
        if not np.isfinite(threshold):
            raise ValueError(f"sparse_threshold must be a finite raw score, got {threshold!r}")
        self.threshold = float(threshold)

    def get_params(self):
        return {"sparse_threshold": self.threshold}

    def base_score(self, Y, weight=None):
        """The logit of each label's (weighted) rate, capped at the threshold."""
        row_weight = np.ones(Y.shape[0]) if weight is None else np.asarray(weight, np.float64)
        rows = np.repeat(np.arange(Y.shape[0]), np.diff(Y.indptr))
        positives = np.bincount(Y.indices, weights=row_weight[rows], minlength=Y.shape[1])
        density = np.clip(positives / row_weight.sum(), 1e-12, 1 - 1e-12)
        return np.minimum(np.log(density / (1 - density)), self.threshold)

    def entry_gradients(self, f, positive):
        p = self.transform(f)
        active = positive | (f > self.threshold)
        return p - positive, p * (1.0 - p), active

    def transform(self, raw):
        # expit: 1 / (1 + exp(-raw)) overflows (with a warning) for raw below -709.
        from scipy.special import expit

        return expit(raw)


class DenseScores(Loss):
    """A sparse-output loss as a dense loss on (n, L) raw scores, for refit:
    each entry's gradients are the sparse path's, and 0 where that path
    keeps no entry (an absent label below its margin or sparse_threshold),
    so that the leaves refit sets are the ones that path would have set."""

    def __init__(self, sparse_loss):
        super().__init__()
        self.sparse_loss, self.name = sparse_loss, sparse_loss.name

    def prepare_target(self, label):
        """(n, L) bool, True at the positives of 0/1 labels (scipy sparse or dense)."""
        label = label if is_scipy_sparse(label) else np.asarray(label, dtype=np.float64)
        if label.ndim != 2:
            raise ValueError(f"objective {self.name!r} of a sparse Y takes label as (n_rows, "
                             f"n_labels) 0/1 labels, got shape {label.shape}")
        return check_sparse_labels(label, label.shape[0], "label").toarray() > 0

    def n_outputs(self, y):
        return y.shape[1]

    def gradients(self, y, raw, weight):
        grad, hess, active = self.sparse_loss.entry_gradients(raw, y)
        grad, hess = np.where(active, grad, 0.0), np.where(active, hess, 0.0)
        if weight is not None:  # in float64, then rounded, as the sparse path weighs
            grad, hess = grad * weight[:, None], hess * weight[:, None]
        return grad.astype(G_H_DTYPE), hess.astype(G_H_DTYPE)

    def transform(self, raw):
        return self.sparse_loss.transform(raw)


def make_sparse_loss(objective, threshold):
    if objective == "squared_hinge":
        return SparseSquaredHinge()
    if objective == "sigmoid":
        return SparseSigmoid(DEFAULT_SPARSE_THRESHOLD if threshold is None else threshold)
    raise ValueError(f"objective {objective!r} does not take a sparse Y; the sparse-output "
                     f"objectives are {', '.join(SPARSE_OBJECTIVES)}")


def _union_scores(Y, D, base):
    """(row, label, score, positive) of every entry in Y's or D's pattern,
    ordered by row then label; score = the label's base + D's value (0 where
    absent)."""
    n_labels = Y.shape[1]
    y_keys = _entry_keys(Y)
    d_keys = _entry_keys(D)
    # Both key arrays are sorted (canonical CSR), so Y's keys missing from D
    # are inserted where they belong: np.union1d sorted (hashed) them all
    # again, 9% of a round on bibtex.
    place = np.searchsorted(d_keys, y_keys)
    in_d = place < d_keys.size
    in_d[in_d] = d_keys[place[in_d]] == y_keys[in_d]
    keys = np.insert(d_keys, place[~in_d], y_keys[~in_d])
    score = np.insert(base[D.indices] + D.data.astype(np.float64), place[~in_d],
                      base[Y.indices[~in_d]])
    positive = np.zeros(keys.shape, dtype=bool)
    positive[np.searchsorted(keys, y_keys)] = True
    return keys // n_labels, (keys % n_labels), score, positive


def _entry_keys(M):
    rows = np.repeat(np.arange(M.shape[0], dtype=np.int64), np.diff(M.indptr))
    return rows * M.shape[1] + M.indices


# -- growing one tree ---------------------------------------------------------
class _Node:
    __slots__ = ("rows", "depth", "labels", "grad_sums", "hess_sums", "sorted_labels",
                 "sorted_imp", "score", "gain", "feature", "bin", "missing_left", "left",
                 "right", "index", "id", "path")

    def __init__(self, rows, depth, node_id, path=frozenset()):
        # ids in the order the dense grower gives them (root, then each
        # split's left and right child), which the per-node draws follow;
        # path: the features split on above it (interaction constraints)
        self.rows, self.depth, self.id, self.path = rows, depth, node_id, path
        self.gain = -1.0
        self.left = self.right = None

    @property
    def count(self):
        return len(self.rows)


class SparseOutputGrower:
    """Grows one tree best-first on sparse gradients (see the module doc);
    the same candidates, constraints and order as TreeGrower with
    split="sparse" and a per-output hessian."""

    def __init__(self, X_binned, bin_mapper, features, gradients, n_labels, params,
                 tree_seed=None):
        """tree_seed: the seed of this tree's per-node draws (extra_trees'
        thresholds, colsample_bynode's features); None without either."""
        self.X_binned, self.bin_mapper, self.features = X_binned, bin_mapper, features
        # a SparseBinned's dense features' rows and the layout, or dense X and None
        self.sparse_binned = X_binned if isinstance(X_binned, SparseBinned) else None
        self.constraints = InteractionConstraints(params["interaction_constraints"], features)
        self.tree_seed = tree_seed
        self.n_nodes = 0
        self.indptr, self.label, self.grad, self.hess = gradients
        self.n_labels = n_labels
        self.params = params
        self.top_k = min(params["top_k"], n_labels)
        self.lambda_l2 = params["lambda_l2"]
        self.lambda_l1 = params["lambda_l1"]
        self.max_depth = params["max_depth"] if params["max_depth"] > 0 else np.inf
        n_features = X_binned.shape[0]
        self.split_gain = np.empty(n_features, dtype=np.float64)
        self.split_bin = np.empty(n_features, dtype=np.int32)
        self.split_missing_left = np.empty(n_features, dtype=np.uint8)

    def _improvement(self, grad_sums, hess_sums):
        total = hess_sums + self.lambda_l2
        shrunk = soft_threshold(grad_sums, self.lambda_l1)
        out = np.zeros_like(grad_sums)
        np.divide(shrunk * shrunk, total, out=out, where=total != 0)
        return out

    def _node(self, rows, depth, path=frozenset()):
        """A node with the sums of its rows' sparse gradients: O(its entries)."""
        node = _Node(rows, depth, self.n_nodes, path)
        self.n_nodes += 1
        starts, stops = self.indptr[rows], self.indptr[rows.astype(np.int64) + 1]
        lengths = stops - starts
        offsets = np.repeat(starts - np.cumsum(lengths) + lengths, lengths)
        entries = offsets + np.arange(lengths.sum())
        # Sums over all L labels, then the touched ones: O(entries + L), which
        # np.unique's hashing of the entries cost more than on bibtex (L = 159)
        # and the kernel dwarfs at L = 20,000.
        entry_labels = self.label[entries]
        counts = np.bincount(entry_labels, minlength=self.n_labels)
        node.labels = np.flatnonzero(counts).astype(np.int32)
        node.grad_sums, node.hess_sums = (
            # float64 also without entries (bincount then gives int64).
            np.bincount(entry_labels, values[entries], minlength=self.n_labels)[node.labels]
            .astype(np.float64, copy=False) for values in (self.grad, self.hess))
        improvement = self._improvement(node.grad_sums, node.hess_sums)
        order = np.lexsort((node.labels, -improvement))  # ties: the smaller label first
        node.sorted_labels = np.ascontiguousarray(node.labels[order])
        node.sorted_imp = np.ascontiguousarray(improvement[order])
        node.score = float(node.sorted_imp[:self.top_k].sum())
        return node

    def _can_split(self, node):
        return (node.depth < self.max_depth and len(self.features) > 0
                and len(node.rows) >= 2 * self.params["min_samples_leaf"])

    def _find_split(self, node):
        params = self.params
        features = drawn_features(self.tree_seed, node.id, self.constraints.allowed(node.path),
                                  params["colsample_bynode"])
        sparse_binned = self.sparse_binned
        find_best_sparse_output_splits(
            self.X_binned if sparse_binned is None else sparse_binned.dense, node.rows,
            features, self.bin_mapper.n_bins_non_missing_,
            self.bin_mapper.missing_bin, self.indptr, self.label, self.grad, self.hess,
            self.n_labels, node.labels, node.grad_sums, node.hess_sums, node.sorted_labels,
            node.sorted_imp, node.score, self.top_k, self.lambda_l2,
            params["min_samples_leaf"], params["min_child_weight"], self.split_gain,
            self.split_bin, self.split_missing_left,
            threads_for(params["n_threads"],
                        len(node.rows) * len(features) * WORK_PER_ELEMENT),
            lambda_l1=self.lambda_l1,
            random_bins=None if not params["extra_trees"] else drawn_thresholds(
                self.tree_seed, node.id, self.bin_mapper.n_bins_non_missing_),
            sparse_binned=sparse_binned)
        gains = self.split_gain[features]
        best = int(np.argmax(gains))
        gain = gains[best]
        # As the dense grower: the gain averaged over the top_k outputs it involves.
        if gain <= 0 or gain / self.top_k <= params["min_gain"]:
            return
        node.gain = float(gain)
        node.feature = int(features[best])
        node.bin = int(self.split_bin[node.feature])
        node.missing_left = bool(self.split_missing_left[node.feature])

    def _split(self, node):
        column = (self.X_binned[node.feature, node.rows] if self.sparse_binned is None
                  else self.sparse_binned.bins_of_rows(node.feature, node.rows))
        missing = column == self.bin_mapper.missing_bin
        go_left = np.where(missing, node.missing_left, column <= node.bin)
        path = node.path | {node.feature}
        node.left = self._node(node.rows[go_left], node.depth + 1, path)
        node.right = self._node(node.rows[~go_left], node.depth + 1, path)
        return node.left, node.right

    def grow(self, rows):
        root = self._node(rows, 0)
        if self._can_split(root):
            self._find_split(root)
        candidates, order, n_leaves = [], 0, 1
        if root.gain > 0:
            heapq.heappush(candidates, (-root.gain, order, root))
        max_leaves = max_leaves_of(self.params)
        while candidates and n_leaves < max_leaves:
            node = heapq.heappop(candidates)[2]
            children = self._split(node)
            n_leaves += 1
            if n_leaves >= max_leaves:
                break
            for child in children:
                if self._can_split(child):
                    self._find_split(child)
                if child.gain > 0:
                    order += 1
                    heapq.heappush(candidates, (-child.gain, order, child))
        return self._to_tree(root)

    def _leaf(self, node):
        """The top_k labels (by improvement, ties to the smaller label; labels
        without entries have improvement 0 and value 0) in increasing order,
        and their values -G / (H + lambda)."""
        chosen = node.sorted_labels[:self.top_k][node.sorted_imp[:self.top_k] > 0]
        if len(chosen) < self.top_k:  # the zero-improvement labels with the smallest index
            smallest = np.arange(min(self.n_labels, self.top_k + len(chosen)))
            zero = np.setdiff1d(smallest, chosen)
            chosen = np.concatenate([chosen, zero[:self.top_k - len(chosen)]])
        chosen = np.sort(chosen).astype(np.int32)
        values = np.zeros(len(chosen))
        position = np.searchsorted(node.labels, chosen)
        has_sums = position < len(node.labels)
        has_sums[has_sums] = node.labels[position[has_sums]] == chosen[has_sums]
        values[has_sums] = leaf_values(node.grad_sums[position[has_sums]],
                                       node.hess_sums[position[has_sums]] + self.lambda_l2,
                                       self.lambda_l1)
        return chosen, values

    def _to_tree(self, root):
        """leaf_rows[l] are the training rows of the Tree's leaf l."""
        arrays, leaves, _ = tree_structure(root, self.bin_mapper)
        outputs, values = zip(*(self._leaf(node) for node in leaves))
        self.leaf_rows = [node.rows for node in leaves]
        return Tree(np.array(values), np.array(outputs), **arrays)


# -- raw scores -----------------------------------------------------------
def _add_leaf_deltas(D, tree, leaf_rows, scale=1.0):
    """D + each leaf's (label, value) pairs, times scale, on its rows; zero
    values add no entry."""
    rows, labels, values = [], [], []
    for leaf, leaf_row in enumerate(leaf_rows):
        keep = tree.leaf_values[leaf] != 0
        k = int(keep.sum())
        if k == 0 or len(leaf_row) == 0:
            continue
        rows.append(np.repeat(leaf_row.astype(np.int64), k))
        labels.append(np.tile(tree.leaf_outputs[leaf][keep], len(leaf_row)))
        values.append(np.tile(scale * tree.leaf_values[leaf][keep], len(leaf_row)))
    if not rows:
        return D
    entries = (np.concatenate(values), (np.concatenate(rows), np.concatenate(labels)))
    update = _scipy_sparse().csr_matrix(entries, shape=D.shape)
    D = (D + update).tocsr()
    D.sort_indices()
    return D


def _renewed_leaf_values(tree, leaf_of_row, gradients, n_labels, params):
    """The values of tree's leaves' labels set again from every training
    row's gradients (leaf_of_row[i] the leaf of row i), as GOSS renews dense
    leaves (engine._Trainer._renew_leaves): a (label, leaf) the rows have no
    entry for gets 0."""
    indptr, labels, grad, hess = gradients
    leaf_of_entry = np.repeat(leaf_of_row.astype(np.int64), np.diff(indptr))
    # (leaf, label) keys of the tree's values, in leaf then label order
    kept = (np.arange(tree.n_leaves, dtype=np.int64)[:, None] * n_labels
            + tree.leaf_outputs).ravel()
    key = leaf_of_entry * n_labels + labels
    place = np.minimum(np.searchsorted(kept, key), len(kept) - 1)
    match = kept[place] == key
    sums = [np.bincount(place[match], weights=values[match], minlength=len(kept))
            for values in (grad, hess)]
    return leaf_values(sums[0], sums[1] + params["lambda_l2"],
                       params["lambda_l1"]).reshape(tree.leaf_values.shape)


def _rows_by_leaf(leaf_of_row, n_leaves):
    order = np.argsort(leaf_of_row, kind="stable")
    bounds = np.searchsorted(leaf_of_row[order], np.arange(n_leaves + 1))
    return [order[bounds[l]:bounds[l + 1]].astype(ROW_DTYPE) for l in range(n_leaves)]


def top_k_of_sparse_scores(D, base, k, n_threads=1):
    """(labels, scores), each (n, k): the k best labels per row of base + D
    (labels D does not hold score their base; ties to the smaller label)."""
    n_rows = D.shape[0]
    labels = np.empty((n_rows, k), dtype=np.int32)
    scores = np.empty((n_rows, k), dtype=np.float64)
    # D as a forest of one tree whose leaf i holds row i's deltas.
    predict_top_k(np.arange(n_rows, dtype=np.int32).reshape(-1, 1), np.zeros(1, np.int64),
                  D.indptr.astype(np.int64), D.indices.astype(np.int32),
                  D.data.astype(np.float64), base, k,
                  labels, scores, threads_for(n_threads, D.nnz + n_rows * k))
    return labels, scores


def predict_topk(booster, X, k, raw_score=False, num_iteration=None, n_threads=None):
    """The k best labels per row and their scores, (n, k) each, sorted by
    decreasing score (ties to the smaller label), without an n x L array.
    Every tree must have sparse leaves (as the sparse-output path grows)."""
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) \
            or not 1 <= k <= booster.n_outputs:
        raise ValueError(f"k must be an integer in [1, {booster.n_outputs}] (the number of "
                         f"outputs), got {k!r}")
    leaves = np.ascontiguousarray(booster.predict_leaf(X, num_iteration, n_threads),
                                  dtype=np.int32)
    trees = booster.trees[:leaves.shape[1]]
    if any(tree.leaf_outputs is None for tree in trees):
        raise ValueError("predict_topk needs sparse leaves in every tree (split='sparse' "
                         "or the sparse-output path); use predict for dense leaves")
    labels = np.empty((leaves.shape[0], k), dtype=np.int32)
    scores = np.empty((leaves.shape[0], k), dtype=np.float64)
    if trees:
        packed = booster._forest(0, len(trees))
        forest, offsets = packed.leaves, packed.leaf_offsets.astype(np.int64)
        values, outputs = forest.values, forest.outputs
    else:
        forest = LeafArrays(np.zeros(1, np.int64), None, np.zeros(0), np.zeros(0, np.int32))
        offsets, values, outputs = np.zeros(0, np.int64), forest.values, forest.outputs
        leaves = np.zeros((leaves.shape[0], 0), dtype=np.int32)
    n_threads = booster._n_threads(n_threads)
    # a random forest's (boosting='rf') trees each weigh their share of the mean
    values = np.ascontiguousarray(values) * booster._tree_share(0, len(trees))
    predict_top_k(leaves, offsets, forest.value_start, np.ascontiguousarray(outputs),
                  values, booster.init_score, k, labels, scores,
                  threads_for(n_threads, leaves.size * WORK_PER_ELEMENT))
    if not raw_score:
        with caller_threads(n_threads):
            scores = booster.loss.transform(scores)
    return labels, scores


def evaluate_sparse_output(metric, Y, D, base, threshold=POSITIVE_RAW_SCORE, n_threads=1,
                           weight=None):
    """A SPARSE_OUTPUT_METRICS value for raw scores base + D (base: (L,),
    each label's) against labels Y, rows weighted by weight (None: alike); F1
    counts raw scores above threshold as predicted positives."""
    if metric in ("micro_f1", "macro_f1"):
        predicted = D.copy()
        predicted.data = (base[predicted.indices] + predicted.data > threshold).astype(np.float64)
        hot = np.flatnonzero(base > threshold)
        if hot.size:
            predicted = predicted + _untouched_positives(D, hot)
        predicted.eliminate_zeros()
        return f1_at_threshold(Y, predicted, average=metric.split("_")[0], weight=weight)
    kind, k = metric.split("@")
    labels, _ = top_k_of_sparse_scores(D, base, min(int(k), D.shape[1]), n_threads)
    return (precision_at_k if kind == "precision" else ndcg_at_k)(Y, labels, weight)


def _untouched_positives(D, hot):
    """CSR ones where D holds no score for a row of a label in hot, those
    that start above F1's threshold (a sigmoid label of more than half the
    rows, under a sparse_threshold above 0): predicted positives too."""
    sparse = _scipy_sparse()
    touched = D[:, hot].tocsr()
    touched.data = np.ones_like(touched.data)
    untouched = (sparse.csr_matrix(np.ones((D.shape[0], hot.size))) - touched).tocsr()
    untouched.eliminate_zeros()
    return sparse.csr_matrix((untouched.data, hot[untouched.indices], untouched.indptr),
                             shape=D.shape)


# -- training loop ------------------------------------------------------------
def _pop_one(params, name, default):
    """The value of parameter name, given under it or an alias (refused
    twice), taken out of params."""
    keys = keys_naming(params, name)
    if len(keys) > 1:
        raise ValueError(f"parameter {name!r} is given twice (as {' and '.join(keys)}); "
                         "give it once")
    return params.pop(keys[0]) if keys else default


def split_sparse_params(params):
    """(gbmo parameters, objective, sparse_threshold, metrics): the
    sparse-only values are taken out before the shared validation."""
    params = dict(params or {})
    for name, neutral in (("scale_pos_weight", 1.0), ("is_unbalance", False),
                          ("unbalance", False), ("unbalanced_sets", False)):
        # before the shared validation, which knows no sparse objective
        if params.get(name, neutral) != neutral:
            raise ValueError(f"a sparse Y does not take {name} yet")
    # before the shared validation too, whose demands of a forest do not apply
    if any(params[key] in ("rf", "random_forest") for key in keys_naming(params, "boosting")):
        raise ValueError("a sparse Y does not take boosting='rf' yet")
    if any(checked_value(key, params[key])[1] for key in keys_naming(params, "linear_tree")):
        raise ValueError("a sparse Y does not take linear_tree: its leaves keep top_k labels "
                         "each (split='sparse'), where a leaf's lines need every output")
    given = _pop_one(params, "objective", "squared_hinge")
    if objective_and_written_params(given)[1]:
        raise ValueError(f"objective {given!r}: a sparse Y's objectives take no parameters "
                         "written in the name; give sparse_threshold as a parameter")
    objective = canonical_objective(given)
    threshold = params.pop("sparse_threshold", None)
    metric = metric_list(_pop_one(params, "metric", None))
    if callable(objective) or not isinstance(objective, str):
        raise ValueError(f"a sparse Y takes objective {' or '.join(SPARSE_OBJECTIVES)}, "
                         f"got {objective!r}")
    metrics = [] if metric is None else (metric if isinstance(metric, list) else [metric])
    for name in metrics:
        if name not in SPARSE_OUTPUT_METRICS:
            raise ValueError(f"unknown metric {name!r} for a sparse Y; known: "
                             f"{', '.join(SPARSE_OUTPUT_METRICS)}")
    # before the shared validation too, whose refusal of a top_k beside
    # split='dense' would not say that a sparse Y needs split='sparse'
    if params.setdefault("split", "sparse") != "sparse":
        raise ValueError("a sparse Y needs split='sparse' and top_k (labels per leaf), "
                         f"got split={params['split']!r}, top_k={params.get('top_k')!r}")
    if not keys_naming(params, "top_k"):
        # the shared validation would blame a split='sparse' the user never gave
        raise ValueError("a sparse Y trains the sparse-output path, whose leaves keep top_k "
                         "labels each: give top_k (an integer >= 1; GBMOClassifier's "
                         "default is 10)")
    return params, objective, threshold, metrics


class SparseOutputTrainer:
    """The sparse-output counterpart of engine._Trainer: one round per step."""

    def __init__(self, params, train_set, valid_sets, valid_names, fevals=()):
        from .booster import Booster
        from .engine import _active_features

        if fevals:
            raise ValueError("a sparse Y does not take feval yet")
        params, objective, threshold, metrics = split_sparse_params(params)
        self.loss = loss = make_sparse_loss(objective, threshold)
        # the booster's objective is the one its trees were grown with, not the
        # registered loss that predicts for it
        booster_params = {**resolve_params(params), "objective": loss.name}
        self.threads = thread_governor(booster_params)
        self.params = params = constraints_at_positions(
            {**booster_params, "n_threads": self.threads.current}, train_set.feature_names,
            train_set.n_features)
        if params["tree_mode"] != "multi_output" or params["ensembler"] is not None:
            raise ValueError("a sparse Y needs tree_mode='multi_output' and no ensembler")
        if params["growth"] != "bestfirst":
            raise ValueError(f"a sparse Y supports growth='bestfirst' only (for now), got "
                             f"growth={params['growth']!r}")
        if balanced_bagging(params):
            raise ValueError("pos_bagging_fraction and neg_bagging_fraction bag a binary "
                             "target's classes apart; a sparse Y's labels take subsample")
        if params["random_strength"] > 0:
            raise ValueError("a sparse Y does not take random_strength yet: its search "
                             "(sparse_output's kernels) has no split noise")
        if not params["boost_from_average"]:
            raise ValueError("a sparse Y does not take boost_from_average=False: its untouched "
                             "labels keep the start score, which must be the labels' own")
        InteractionConstraints.check_features(params["interaction_constraints"],
                                              train_set.n_features)
        if train_set.categorical_features(params["categorical_feature"]):
            raise ValueError("a sparse Y does not take categorical features yet")
        for dataset in [train_set, *valid_sets]:
            if dataset.init_score is not None:
                raise ValueError("a sparse Y does not take init_score: its raw scores are "
                                 "kept sparse, and a dense (n, L) start would not be")
            if not is_sparse_labels(dataset.Y):
                raise ValueError("a validation set of a sparse-Y model needs a sparse Y too")
        self.metrics = metrics or [loss.default_metric]
        self.train_set = train_set
        self.n_labels = n_labels = train_set.Y.shape[1]
        check_output_bounds(params, n_labels)
        train_set.bin_with(params)
        self.bin_mapper = train_set.bin_mapper
        self.base = loss.base_score(train_set.Y, train_set.weight)
        self.D = _scipy_sparse().csr_matrix(train_set.Y.shape, dtype=np.float64)
        self.eval_sets = []
        for name, valid in zip(valid_names, valid_sets):
            if valid is not train_set:
                check_name_order(valid.feature_names, train_set.feature_names,
                                 f"validation set {name!r}: X")
                valid = valid.validation_of(train_set).bin_with(params)
                if valid.Y.shape[1] != n_labels:
                    raise ValueError(f"a validation Y has {valid.Y.shape[1]} labels, "
                                     f"the training Y {n_labels}")
            self.eval_sets.append([name, valid, None])
        self.booster = booster = Booster()
        booster._start(booster_params, make_loss(loss.predicted_by), train_set.n_features,
                       n_labels, self.base, train_set.feature_names, sparse_loss=loss)
        booster.evals_result = {name: MetricHistory() for name, _, _ in self.eval_sets}
        self.features = _active_features(self.bin_mapper)
        self.rng = np.random.default_rng(params["seed"])
        self.row_sample = None  # bagging's rows, None for all

    def step(self, iteration):
        """Grows the round's tree on the thread governor's count (as
        engine._Trainer.step) and returns the evaluation results."""
        self.params["n_threads"] = self.threads.round_threads()
        results = self._round(iteration)
        self.threads.round_done()
        return results

    def _round(self, iteration):
        from .engine import _draw_features, _draw_rows, leaf_of_rows

        params = self.params
        n_rows = self.train_set.n_rows
        check_sampling(params)  # reset_parameter may have changed it
        # bagging and GOSS draw where and when engine._Trainer draws, as the
        # trees' seeds below
        if not bags(params):
            self.row_sample = None
        elif iteration % params["subsample_freq"] == 0:
            self.row_sample = _draw_rows(self.rng, n_rows, params["subsample"])
        dropped, n_dropped, dropped_D = (self._drop() if params["boosting"] == "dart"
                                         else ([], 0, None))
        gradients = exact = self.loss.gradients(self.train_set.Y, self.D, self.base,
                                                self.train_set.weight)
        goss = params["data_sample_strategy"] == "goss"
        if goss:
            gradients = self._goss(iteration, gradients)
        features = _draw_features(self.rng, self.features, params["colsample_bytree"])
        # drawn where and when the dense grower draws it, so that a seed draws alike
        tree_seed = (int(self.rng.integers(0, 2**63))
                     if params["extra_trees"] or params["colsample_bynode"] < 1.0 else None)
        grower = SparseOutputGrower(self.train_set.X_binned, self.bin_mapper,
                                    np.ascontiguousarray(features, dtype=np.int32), gradients,
                                    self.n_labels, params, tree_seed)
        if self.row_sample is None:
            tree = grower.grow(np.arange(n_rows, dtype=ROW_DTYPE))
            leaf_rows = grower.leaf_rows
        else:  # grown on the sample; every row's scores move by its leaf
            tree = grower.grow(self.row_sample)
            leaf_of_row = leaf_of_rows(self.train_set.X_binned, self.bin_mapper.missing_bin,
                                       tree, params["n_threads"])
            leaf_rows = _rows_by_leaf(leaf_of_row, tree.n_leaves)
            if goss and params["goss_renew_leaves"]:
                tree.leaf_values = _renewed_leaf_values(tree, leaf_of_row, exact, self.n_labels,
                                                         params)
        tree.leaf_values *= params["learning_rate"] / (1 + n_dropped)
        self.D = _add_leaf_deltas(self.D, tree, leaf_rows)
        self.booster._add_tree(tree)
        if n_dropped:
            self._normalize(dropped, n_dropped, dropped_D)
        return self._evaluate(tree)

    def _drop(self):
        """DART (engine._Trainer._drop's draws): (the trees of the rounds
        dropped this round, how many, their summed deltas on the training
        rows or None), those deltas taken out of D that the gradients are
        computed at."""
        params = self.params
        rounds = rounds_to_drop(self.rng, len(self.booster.trees), params["drop_rate"],
                                params["max_drop"], params["skip_drop"])
        dropped = [self.booster.trees[r] for r in rounds]
        if not dropped:
            return dropped, 0, None
        # one tree after the other, as the dense engine sums them
        dropped_D = _scipy_sparse().csr_matrix(self.D.shape, dtype=np.float64)
        for tree in dropped:
            dropped_D = self._with_tree(dropped_D, self.train_set, tree)
        self.D = self.D - dropped_D
        return dropped, len(rounds), dropped_D

    def _normalize(self, trees, k, dropped_D):
        """DART: the k dropped rounds' trees scaled by k / (k + 1) in every
        raw score, as engine._Trainer._normalize: the training rows' from
        their deltas dropped_D."""
        for eval_set in self.eval_sets:
            if eval_set[1] is not self.train_set:
                for tree in trees:
                    eval_set[2] = self._with_tree(eval_set[2], eval_set[1], tree, -1.0 / (k + 1))
        for tree in trees:
            tree.leaf_values *= k / (k + 1)
        self.D = self.D + dropped_D * (k / (k + 1))
        self.booster._forget_packing()  # packed before the scaling

    def _with_tree(self, D, dataset, tree, scale=1.0):
        """D (None: no deltas yet) + tree's values times scale on dataset's rows."""
        if D is None:
            D = _scipy_sparse().csr_matrix(dataset.Y.shape, dtype=np.float64)
        from .engine import leaf_of_rows

        leaf = leaf_of_rows(dataset.X_binned, self.bin_mapper.missing_bin, tree,
                            self.params["n_threads"])
        return _add_leaf_deltas(D, tree, _rows_by_leaf(leaf, tree.n_leaves), scale)

    def _goss(self, iteration, gradients):
        """The round's GOSS sample in row_sample (None, every row, while
        warming up) and the gradients with the drawn rows' entries amplified,
        as engine._Trainer._goss; a row's size sums |g h| over its entries."""
        params = self.params
        self.row_sample = None
        if iteration < goss_warmup_rounds(params["learning_rate"]):
            return gradients
        indptr, labels, grad, hess = gradients
        n_rows = len(indptr) - 1
        row_of_entry = np.repeat(np.arange(n_rows), np.diff(indptr))
        # in float64, as goss.goss_sample sums a dense row
        size = np.bincount(row_of_entry, weights=np.abs(grad * hess), minlength=n_rows)
        self.row_sample, other, factor = goss_sample_by_size(
            size, params["top_rate"], params["other_rate"], self.rng)
        row_factor = np.ones(n_rows, dtype=grad.dtype)
        row_factor[other] = factor
        entry_factor = row_factor[row_of_entry]
        return indptr, labels, grad * entry_factor, hess * entry_factor

    def _evaluate(self, tree):
        results = []
        for eval_set in self.eval_sets:
            name, dataset, D = eval_set
            if dataset is self.train_set:
                D = self.D
            else:
                D = eval_set[2] = self._with_tree(D, dataset, tree)
            history = self.booster.evals_result[name]
            for metric in self.metrics:
                value = evaluate_sparse_output(metric, dataset.Y, D, self.base,
                                               n_threads=self.params["n_threads"],
                                               weight=dataset.weight)
                history.setdefault(metric, []).append(value)
                results.append(EvalResult(name, metric, value, True))
        return results

