"""The sparse-output path (GBDT-sparse, issue 6): Y a scipy CSR of 0/1 labels."""
import tracemalloc
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

import gbmo
from gbmo._core._sparse_output import find_best_sparse_output_splits
from gbmo.metrics import f1_at_threshold, ndcg_at_k, precision_at_k
from gbmo.sparse_output import (SparseOutputGrower, SparseSigmoid, SparseSquaredHinge,
                                top_k_of_sparse_scores)

BASE_PARAMS = dict(split="sparse", top_k=3, max_leaves=8, min_samples_leaf=5,
                   min_child_weight=0.0, learning_rate=0.3, verbosity=0, n_threads=1)


def make_multilabel(n=300, p=6, n_labels=12, missing_fraction=0.0, seed=0,
                    mostly_zero=False):
    """mostly_zero: X of sparse counts (most rows in bin 0), whose splits the
    kernel scans from the top bins down."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    if mostly_zero:
        X = np.where(rng.random((n, p)) < 0.25, rng.integers(1, 4, size=(n, p)), 0.0)
    logits = X @ rng.normal(size=(p, n_labels)) - 1.5
    Y = (rng.random((n, n_labels)) < 1 / (1 + np.exp(-logits))).astype(float)
    if missing_fraction:
        X[rng.random(X.shape) < missing_fraction] = np.nan
    return X, Y


def dense_squared_hinge(base):
    """The sparse path's squared hinge as a dense custom objective: raw scores
    of the dense model start at 0, the sparse ones at base."""
    def objective(y, raw):
        f = raw + base
        sign = np.where(y > 0, 1.0, -1.0)
        margin = 1.0 - sign * f
        return -2.0 * sign * np.maximum(margin, 0.0), np.where(margin > 0, 2.0, 0.0)
    return objective


def dense_restricted_sigmoid(base, threshold):
    def objective(y, raw):
        f = raw + base
        p = 1.0 / (1.0 + np.exp(-f))
        active = (y > 0) | (f > threshold)
        return np.where(active, p - y, 0.0), np.where(active, p * (1 - p), 0.0)
    return objective


def assert_same_trees(sparse_booster, dense_booster):
    assert sparse_booster.num_trees == dense_booster.num_trees
    for tree, dense in zip(sparse_booster.trees, dense_booster.trees):
        np.testing.assert_array_equal(tree.node_feature, dense.node_feature)
        np.testing.assert_array_equal(tree.node_bin, dense.node_bin)
        np.testing.assert_array_equal(tree.node_missing_left, dense.node_missing_left)
        np.testing.assert_array_equal(tree.node_left, dense.node_left)
        np.testing.assert_array_equal(tree.leaf_outputs, dense.leaf_outputs)
        np.testing.assert_allclose(tree.leaf_values, dense.leaf_values, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(tree.node_gain, dense.node_gain, rtol=1e-9)


@pytest.mark.parametrize("missing_fraction, lambda_l2, min_samples_leaf, mostly_zero, l1", [
    (0.0, 1.0, 5, False, 0.0), (0.1, 0.5, 3, False, 0.0), (0.2, 2.0, 10, False, 0.0),
    (0.0, 1.0, 5, True, 0.0), (0.1, 1.0, 3, True, 0.0), (0.0, 1.0, 5, False, 3.0),
    (0.1, 1.0, 3, True, 1.0)])
def test_squared_hinge_grows_the_trees_of_dense_gbdt_mo_with_the_sparse_split(
        missing_fraction, lambda_l2, min_samples_leaf, mostly_zero, l1):
    X, Y = make_multilabel(missing_fraction=missing_fraction, mostly_zero=mostly_zero)
    params = dict(BASE_PARAMS, lambda_l2=lambda_l2, min_samples_leaf=min_samples_leaf,
                  lambda_l1=l1)
    sparse_booster = gbmo.train(dict(params, objective="squared_hinge"),
                                gbmo.Dataset(X, sp.csr_matrix(Y)), 6)
    dense_booster = gbmo.train(dict(params, objective=dense_squared_hinge(-1.0)),
                               gbmo.Dataset(X, Y), 6)
    assert sparse_booster.trees[0].n_leaves > 2  # the comparison covers real splits
    assert_same_trees(sparse_booster, dense_booster)
    np.testing.assert_allclose(sparse_booster.predict(X, raw_score=True),
                               dense_booster.predict(X, raw_score=True) - 1.0, atol=1e-12)


@pytest.mark.parametrize("missing_fraction, mostly_zero, seed, draws", [
    (0.0, False, 0, dict(extra_trees=True)), (0.1, False, 1, dict(extra_trees=True)),
    (0.0, True, 2, dict(extra_trees=True)), (0.1, True, 3, dict(extra_trees=True)),
    (0.1, False, 4, dict(colsample_bynode=0.5)),
    (0.0, True, 5, dict(colsample_bynode=0.4, extra_trees=True))])
def test_per_node_draws_grow_the_trees_of_dense_gbdt_mo_with_the_same_seed(
        missing_fraction, mostly_zero, seed, draws):
    """The same seed draws the same thresholds (extra_trees) and features
    (colsample_bynode) at the same nodes in both paths."""
    X, Y = make_multilabel(missing_fraction=missing_fraction, mostly_zero=mostly_zero)
    params = dict(BASE_PARAMS, seed=seed, min_samples_leaf=3, **draws)
    sparse_booster = gbmo.train(dict(params, objective="squared_hinge"),
                                gbmo.Dataset(X, sp.csr_matrix(Y)), 6)
    dense_booster = gbmo.train(dict(params, objective=dense_squared_hinge(-1.0)),
                               gbmo.Dataset(X, Y), 6)
    assert sparse_booster.trees[0].n_leaves > 2
    assert_same_trees(sparse_booster, dense_booster)
    plain = gbmo.train(dict(BASE_PARAMS, objective="squared_hinge", seed=seed,
                            min_samples_leaf=3), gbmo.Dataset(X, sp.csr_matrix(Y)), 6)
    assert any(not (np.array_equal(a.node_bin, b.node_bin)
                    and np.array_equal(a.node_feature, b.node_feature))
               for a, b in zip(sparse_booster.trees, plain.trees))


def test_sample_weights_grow_the_trees_of_the_dense_objective_with_the_same_weights():
    """Weights multiply each row's gradient entries as the dense path
    multiplies a custom objective's; rows of weight 0 count only in
    min_samples_leaf."""
    X, Y = make_multilabel(missing_fraction=0.1, seed=15)
    weight = np.random.default_rng(15).choice([0.0, 0.5, 1.0, 3.0], size=len(X))
    params = dict(BASE_PARAMS, min_samples_leaf=3)
    sparse_booster = gbmo.train(dict(params, objective="squared_hinge"),
                                gbmo.Dataset(X, sp.csr_matrix(Y), weight=weight), 6)
    dense_booster = gbmo.train(dict(params, objective=dense_squared_hinge(-1.0)),
                               gbmo.Dataset(X, Y, weight=weight), 6)
    assert sparse_booster.trees[0].n_leaves > 2
    assert_same_trees(sparse_booster, dense_booster)
    unweighted = gbmo.train(dict(params, objective="squared_hinge"),
                            gbmo.Dataset(X, sp.csr_matrix(Y)), 6)
    assert not np.allclose(unweighted.trees[0].leaf_values, sparse_booster.trees[0].leaf_values)


def test_weighted_sigmoid_starts_each_label_from_its_weighted_rate():
    X, Y = make_multilabel(seed=16)
    weight = np.random.default_rng(16).uniform(0.0, 4.0, size=len(X))
    density = (weight @ Y) / weight.sum()
    base = SparseSigmoid(0.0).base_score(sp.csr_matrix(Y), weight)
    assert base.shape == (Y.shape[1],) and len(set(base)) > 1
    np.testing.assert_allclose(base, np.minimum(np.log(density / (1 - density)), 0.0))
    assert base != pytest.approx(SparseSigmoid(0.0).base_score(sp.csr_matrix(Y)))
    sparse_booster = gbmo.train(dict(BASE_PARAMS, objective="sigmoid", sparse_threshold=0.0),
                                gbmo.Dataset(X, sp.csr_matrix(Y), weight=weight), 5)
    dense_booster = gbmo.train(dict(BASE_PARAMS, objective=dense_restricted_sigmoid(base, 0.0)),
                               gbmo.Dataset(X, Y, weight=weight), 5)
    np.testing.assert_allclose(sparse_booster.init_score, base)
    assert_same_trees(sparse_booster, dense_booster)


@pytest.mark.parametrize("renew", [True, False])
def test_goss_grows_the_trees_of_dense_gbdt_mo_with_the_same_seed(renew):
    """The same rows drawn (a row's size sums |g h| over its entries), the
    same amplified gradients and, with goss_renew_leaves, the same values set
    again from every row."""
    X, Y = make_multilabel(n=400, n_labels=12, seed=23)
    params = dict(BASE_PARAMS, data_sample_strategy="goss", top_rate=0.3, other_rate=0.2,
                  goss_renew_leaves=renew, learning_rate=0.5, seed=23, min_samples_leaf=3)
    sparse_booster = gbmo.train(dict(params, objective="squared_hinge"),
                                gbmo.Dataset(X, sp.csr_matrix(Y)), 6)
    dense_booster = gbmo.train(dict(params, objective=dense_squared_hinge(-1.0)),
                               gbmo.Dataset(X, Y), 6)
    assert_same_trees(sparse_booster, dense_booster)
    np.testing.assert_allclose(sparse_booster.predict(X, raw_score=True),
                               dense_booster.predict(X, raw_score=True) - 1.0, atol=1e-12)
    plain = gbmo.train(dict(BASE_PARAMS, objective="squared_hinge", learning_rate=0.5,
                            seed=23, min_samples_leaf=3), gbmo.Dataset(X, sp.csr_matrix(Y)), 6)
    # the first 1 / learning_rate rounds use every row; the sample changes the rest
    for tree, plain_tree in zip(sparse_booster.trees[:2], plain.trees[:2]):
        np.testing.assert_array_equal(tree.node_feature, plain_tree.node_feature)
        np.testing.assert_array_equal(tree.leaf_values, plain_tree.leaf_values)
    assert not np.allclose(sparse_booster.trees[4].leaf_values, plain.trees[4].leaf_values)


@pytest.mark.parametrize("extra", [{}, dict(subsample=0.7, subsample_freq=1, max_drop=1,
                                               skip_drop=0.3)])
def test_dart_grows_the_trees_of_dense_gbdt_mo_with_the_same_seed(extra):
    """The same rounds dropped, the new tree fitted without them and shrunk by
    learning_rate / (k + 1), the dropped trees scaled by k / (k + 1); a
    validation set's scores follow (its last precision is the final model's)."""
    X, Y = make_multilabel(n=400, n_labels=12, seed=26)
    params = dict(BASE_PARAMS, boosting="dart", drop_rate=0.5, seed=26, **extra)
    train = gbmo.Dataset(X[:300], sp.csr_matrix(Y[:300]))
    valid = train.create_valid(X[300:], sp.csr_matrix(Y[300:]))
    sparse_booster = gbmo.train(dict(params, objective="squared_hinge", metric="precision@3"),
                                train, 8, valid_sets=[valid, train])
    dense_booster = gbmo.train(dict(params, objective=dense_squared_hinge(-1.0)),
                               gbmo.Dataset(X[:300], Y[:300]), 8)
    assert_same_trees(sparse_booster, dense_booster)
    plain = gbmo.train(dict(BASE_PARAMS, seed=26, **extra), train, 8)
    assert not np.allclose(plain.trees[-1].leaf_values, sparse_booster.trees[-1].leaf_values)
    for name, rows in (("valid_0", slice(300, None)), ("training", slice(None, 300))):
        labels, _ = sparse_booster.predict_topk(X[rows], 3)
        assert sparse_booster.evals_result[name]["precision@3"][-1] == pytest.approx(
            precision_at_k(sp.csr_matrix(Y[rows]), labels))


def test_restricted_sigmoid_grows_the_trees_of_the_dense_restricted_objective():
    X, Y = make_multilabel(seed=3)
    threshold = -1.0
    base = SparseSigmoid(threshold).base_score(sp.csr_matrix(Y))
    sparse_booster = gbmo.train(dict(BASE_PARAMS, objective="sigmoid",
                                     sparse_threshold=threshold),
                                gbmo.Dataset(X, sp.csr_matrix(Y)), 5)
    dense_booster = gbmo.train(dict(BASE_PARAMS, objective=dense_restricted_sigmoid(
        base, threshold)), gbmo.Dataset(X, Y), 5)
    assert_same_trees(sparse_booster, dense_booster)


def test_results_do_not_depend_on_the_thread_count():
    X, Y = make_multilabel(missing_fraction=0.1, seed=5)
    boosters = [gbmo.train(dict(BASE_PARAMS, n_threads=threads),
                           gbmo.Dataset(X, sp.csr_matrix(Y)), 4) for threads in (1, 2)]
    assert_same_trees(*boosters)


def test_squared_hinge_gradients_leave_out_absent_labels_scored_below_the_margin():
    Y = sp.csr_matrix(np.array([[1, 0, 0], [0, 0, 1]], dtype=float))
    # row 0: label 1 scored -0.5 (above the margin -1: active), label 2 at -1.5;
    # row 1: label 2 present and scored 1.2 (beyond its margin +1: inactive).
    D = sp.csr_matrix(np.array([[0.0, 0.5, -0.5], [0.0, 0.0, 2.2]]))
    base = SparseSquaredHinge().base_score(Y)
    np.testing.assert_array_equal(base, [-1.0, -1.0, -1.0])
    indptr, labels, grad, hess = SparseSquaredHinge().gradients(Y, D, base)
    np.testing.assert_array_equal(indptr, [0, 2, 2])
    np.testing.assert_array_equal(labels, [0, 1])
    # label 0 of row 0: y = +1, f = -1: grad -2 * 2; label 1: y = -1, f = -0.5: grad 2 * 0.5
    np.testing.assert_allclose(grad, [-4.0, 1.0])
    np.testing.assert_allclose(hess, [2.0, 2.0])


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_gradients_cover_the_union_of_the_labels_and_the_scored_entries(seed):
    """Against dense arrays: every (row, label) present in Y or scored in D,
    in row-major order, with f = the label's base + D and y from Y (sigmoid
    keeps all)."""
    Y = sp.random(40, 9, density=0.2, format="csr", random_state=seed)
    Y.data[:] = 1.0
    D = sp.random(40, 9, density=0.4, format="csr", random_state=seed + 10)
    D.data -= 0.5
    loss = SparseSigmoid(threshold=-50.0)  # every scored entry stays active
    base = np.linspace(-2.5, -1.5, 9)
    indptr, labels, grad, hess = loss.gradients(Y, D, base)
    union = (Y.toarray() != 0) | (D.toarray() != 0)
    rows, expected_labels = np.nonzero(union)
    np.testing.assert_array_equal(indptr, np.r_[0, np.cumsum(union.sum(axis=1))])
    np.testing.assert_array_equal(labels, expected_labels)
    f = base[expected_labels] + D.toarray()[rows, expected_labels]
    p = 1.0 / (1.0 + np.exp(-f))
    np.testing.assert_allclose(grad, p - Y.toarray()[rows, expected_labels], rtol=1e-6)
    np.testing.assert_allclose(hess, p * (1.0 - p), rtol=1e-6)


def slow_best_splits(X_binned, rows, n_bins, missing_bin, dense_grad, dense_hess, top_k,
                     lambda_l2, min_samples_leaf, lambda_l1=0.0, drawn=None):
    """The unrestricted sparse split of every feature by brute force on dense
    (n, L) gradients: every threshold, missing right then missing left; gradient
    sums soft-thresholded by lambda_l1. drawn (extra_trees): each feature's one
    threshold, min(drawn, n_bins - 2), tried even when its bin is empty."""
    def top(values):
        return np.sort(values)[::-1][:top_k].sum()

    def improvement(mask):
        G, H = dense_grad[rows][mask].sum(0), dense_hess[rows][mask].sum(0)
        G = np.sign(G) * np.maximum(np.abs(G) - lambda_l1, 0.0)
        return G * G / (H + lambda_l2)

    everything = np.ones(len(rows), dtype=bool)
    parent_score = top(improvement(everything))
    results = []
    for f in range(X_binned.shape[0]):
        column = X_binned[f, rows]
        missing = column == missing_bin
        best = (-1.0, -1, 0)
        sides = [(n_bins[f], False), (n_bins[f] - 1, True)] if missing.any() else [
            (n_bins[f] - 1, False)]
        for n_thresholds, missing_left in sides:
            for t in range(n_thresholds):
                left = (column <= t) & ~missing | (missing & missing_left)
                if drawn is not None:
                    if t != min(drawn[f], max(n_bins[f] - 2, 0)):
                        continue
                elif t > 0 and not (column == t).any():
                    continue
                if left.sum() < min_samples_leaf or (~left).sum() < min_samples_leaf:
                    continue
                gain = 0.5 * (top(improvement(left)) + top(improvement(~left)) - parent_score)
                if gain > best[0] + 1e-12:
                    best = (gain, t, missing_left)
        results.append(best)
    return results


@pytest.mark.parametrize("l1, extra_trees_seed", [(0.0, None), (0.8, None), (0.0, 1),
                                                  (0.0, 2), (0.8, 3)])
def test_split_kernel_matches_a_brute_force_reference(l1, extra_trees_seed):
    rng = np.random.default_rng(7)
    n, p, n_labels, missing_bin = 80, 4, 9, 5
    X_binned = rng.integers(0, missing_bin + 1, size=(p, n)).astype(np.uint8)
    X_binned[1][X_binned[1] == missing_bin] = 0  # a feature without missing values
    # Mostly bin 0 (scanned from the top bins down), with and without missing values.
    X_binned[2][rng.random(n) < 0.7] = 0
    X_binned[3][rng.random(n) < 0.7] = 0
    X_binned[3][X_binned[3] == missing_bin] = 1
    n_bins = np.full(p, missing_bin, dtype=np.int32)
    dense_grad = np.where(rng.random((n, n_labels)) < 0.3,
                          rng.normal(size=(n, n_labels)), 0.0).astype(np.float32)
    dense_hess = np.where(dense_grad != 0, rng.uniform(0.5, 2, size=(n, n_labels)),
                          0.0).astype(np.float32)
    rows = np.sort(rng.choice(n, size=60, replace=False)).astype(np.uint32)
    csr = sp.csr_matrix(dense_grad)
    hess_entries = dense_hess[dense_grad != 0]  # same row-major order as csr.data
    gradients = (csr.indptr.astype(np.int64), csr.indices.astype(np.int32),
                 csr.data.astype(np.float32), hess_entries.astype(np.float32))

    class Mapper:
        n_bins_non_missing_ = n_bins

    Mapper.missing_bin = missing_bin
    params = dict(top_k=3, lambda_l2=1.0, lambda_l1=l1, max_depth=-1, min_samples_leaf=4,
                  min_child_weight=0.0, n_threads=2, min_gain=0.0, interaction_constraints=None)
    grower = SparseOutputGrower(X_binned, Mapper, np.arange(p, dtype=np.int32), gradients,
                                n_labels, params)
    node = grower._node(rows, 0)
    gain = np.empty(p)
    best_bin = np.empty(p, dtype=np.int32)
    missing_left = np.empty(p, dtype=np.uint8)
    # extra_trees: thresholds anywhere, an empty bin's and the last bins' too
    drawn = (None if extra_trees_seed is None else
             np.random.default_rng(extra_trees_seed).integers(0, missing_bin, p).astype(np.int32))
    find_best_sparse_output_splits(
        X_binned, rows, np.arange(p, dtype=np.int32), n_bins, missing_bin, *gradients,
        n_labels, node.labels, node.grad_sums, node.hess_sums, node.sorted_labels,
        node.sorted_imp, node.score, 3, 1.0, 4.0, 0.0, gain, best_bin, missing_left, 2,
        lambda_l1=l1, random_bins=drawn)
    expected = slow_best_splits(X_binned, rows, n_bins, missing_bin, dense_grad.astype(float),
                                dense_hess.astype(float), 3, 1.0, 4, l1, drawn)
    for f, (expected_gain, expected_bin, expected_missing_left) in enumerate(expected):
        np.testing.assert_allclose(gain[f], expected_gain, rtol=1e-6)
        assert best_bin[f] == expected_bin
        if f not in (1, 3):  # without missing values the side is set by the child sizes
            assert missing_left[f] == expected_missing_left


def test_drawn_thresholds_keep_the_dense_search_s_missing_side_on_exact_ties():
    """Missing rows without gradient entries make both missing sides' gains
    equal; with sums that round (values over 18 orders of magnitude) the
    kernel must still keep missing right as _split's search does, which it
    cannot when the two sides add up different rows."""
    from gbmo._core._split import find_best_sparse_splits

    n, p, n_labels, missing_bin, top_k = 60, 3, 6, 4, 2
    differ = 0
    for seed in range(60):
        rng = np.random.default_rng(seed)
        X_binned = rng.integers(0, missing_bin, size=(p, n)).astype(np.uint8)
        missing = rng.random(n) < 0.3
        X_binned[:, missing] = missing_bin
        on = (rng.random((n, n_labels)) < 0.6) & ~missing[:, None]
        dense_grad = np.zeros((n, n_labels), dtype=np.float32)
        dense_hess = np.zeros((n, n_labels), dtype=np.float32)
        dense_grad[on] = rng.normal(size=on.sum()) * 10.0 ** rng.uniform(-14, 4, on.sum())
        dense_hess[on] = rng.uniform(0.5, 2, on.sum())
        rows_of, labels_of = np.nonzero(on)
        gradients = (np.r_[0, np.cumsum(on.sum(axis=1))].astype(np.int64),
                     labels_of.astype(np.int32), dense_grad[rows_of, labels_of],
                     dense_hess[rows_of, labels_of])
        n_bins = np.full(p, missing_bin, dtype=np.int32)

        class Mapper:
            n_bins_non_missing_ = n_bins

        Mapper.missing_bin = missing_bin
        grower = SparseOutputGrower(X_binned, Mapper, np.arange(p, dtype=np.int32), gradients,
                                    n_labels, dict(top_k=top_k, lambda_l2=1.0, lambda_l1=0.0,
                                                   max_depth=0, interaction_constraints=None))
        rows = np.arange(n, dtype=np.uint32)
        node = grower._node(rows, 0)
        drawn = rng.integers(0, missing_bin - 1, p).astype(np.int32)
        sparse_out = np.empty(p), np.empty(p, np.int32), np.empty(p, np.uint8)
        find_best_sparse_output_splits(
            X_binned, rows, np.arange(p, dtype=np.int32), n_bins, missing_bin, *gradients,
            n_labels, node.labels, node.grad_sums, node.hess_sums, node.sorted_labels,
            node.sorted_imp, node.score, top_k, 1.0, 1.0, 0.0, *sparse_out, 1,
            random_bins=drawn)
        hist = np.zeros((p, missing_bin + 1, 2 * n_labels + 1))
        for f in range(p):
            for b in range(missing_bin + 1):
                chosen = X_binned[f] == b
                hist[f, b] = np.r_[dense_grad[chosen].astype(float).sum(0),
                                   dense_hess[chosen].astype(float).sum(0), chosen.sum()]
        parent = np.r_[dense_grad.astype(float).sum(0), dense_hess.astype(float).sum(0), n]
        dense_out = np.empty(p), np.empty(p, np.int32), np.empty(p, np.uint8)
        find_best_sparse_splits(hist, np.arange(p, dtype=np.int32), n_bins, parent, n_labels,
                                n_labels, 0.0, 1.0, 1.0, 0.0, top_k, False, *dense_out, 1,
                                random_bins=drawn)
        differ += int(np.sum((sparse_out[1] != dense_out[1]) | (sparse_out[2] != dense_out[2])))
    assert differ == 0


def mixed_sparse_features(n, seed, density=1.0):
    """CSR X whose columns cover the sparse binned layout's cases: mostly 0
    and >= 0 (zero bin 0), mostly 0 with negatives (a zero bin above 0), 0
    for about half the rows, NaN among the zeros, and columns dense enough
    to be stored densely. density scales the first four columns' non-zeros."""
    rng = np.random.default_rng(seed)
    X = np.zeros((n, 6))
    X[:, 0] = np.where(rng.random(n) < 0.2 * density, rng.integers(1, 9, n), 0.0)
    X[:, 1] = np.where(rng.random(n) < 0.25 * density, rng.normal(size=n), 0.0)
    X[:, 2] = np.where(rng.random(n) < 0.55 * density, rng.uniform(0, 1, n), 0.0)
    X[:, 3] = np.where(rng.random(n) < 0.15 * density, rng.exponential(size=n), 0.0)
    X[rng.random(n) < 0.1 * density, 3] = np.nan
    X[:, 4] = rng.normal(size=n)
    X[:, 5] = np.where(rng.random(n) < 0.9, rng.uniform(1, 2, n), 0.0)
    return sp.csr_matrix(X)


@pytest.mark.parametrize("subset, extra_trees_seed", [(False, None), (True, None), (True, 4)])
@pytest.mark.parametrize("max_bins", [16, 1000])  # 1,000: 16-bit bins, some above 255
def test_split_search_on_sparse_binned_x_equals_the_dense_layout(subset, extra_trees_seed,
                                                                 max_bins):
    """A SparseBinned X gives the kernel's exact results on its dense
    toarray(): its sparse columns are sorted from their entries alone."""
    from gbmo.binning import BinMapper, SparseBinned

    n, n_labels = 400, 7
    X = mixed_sparse_features(n, seed=20)
    mapper = BinMapper(max_bins=max_bins).fit(X)
    binned = mapper.transform(X, max_sparse_density=0.6)
    assert isinstance(binned, SparseBinned)
    assert binned.dtype == (np.uint8 if max_bins == 16 else np.uint16)
    assert binned.is_sparse.tolist() == [1, 1, 1, 1, 0, 0]
    assert binned.zero_bin[1] > 0  # negatives below the zero bin
    rng = np.random.default_rng(20)
    rows = (np.flatnonzero(rng.random(n) < 0.7) if subset else np.arange(n)).astype(np.uint32)
    on = rng.random((n, n_labels)) < 0.5
    labels_of = np.nonzero(on)[1]
    gradients = (np.r_[0, np.cumsum(on.sum(axis=1))].astype(np.int64), labels_of.astype(np.int32),
                 rng.normal(size=on.sum()).astype(np.float32),
                 rng.uniform(0.5, 2, on.sum()).astype(np.float32))
    grower = SparseOutputGrower(binned.toarray(), mapper, np.arange(6, dtype=np.int32),
                                gradients, n_labels, dict(top_k=3, lambda_l2=1.0, lambda_l1=0.0,
                                                          max_depth=0,
                                                          interaction_constraints=None))
    node = grower._node(rows, 0)
    drawn = (None if extra_trees_seed is None else np.random.default_rng(
        extra_trees_seed).integers(0, 15, 6).astype(np.int32))
    results = []
    for X_binned, sparse_binned in ((binned.toarray(), None), (binned.dense, binned)):
        out = np.empty(6), np.empty(6, np.int32), np.empty(6, np.uint8)
        find_best_sparse_output_splits(
            X_binned, rows, np.arange(6, dtype=np.int32), mapper.n_bins_non_missing_,
            mapper.missing_bin, *gradients, n_labels, node.labels, node.grad_sums,
            node.hess_sums, node.sorted_labels, node.sorted_imp, node.score, 3, 1.0, 5.0, 0.0,
            *out, 2, random_bins=drawn, sparse_binned=sparse_binned)
        results.append(out)
    assert (results[0][1] >= 0).sum() >= 5  # real splits compared
    for dense_result, sparse_result in zip(*results):
        np.testing.assert_array_equal(sparse_result, dense_result)


def test_split_search_on_sparse_binned_x_refuses_rows_out_of_order_and_a_wrong_layout():
    """Its sparse columns' rows are matched to the node's in increasing order,
    and X_binned must be the layout's dense features."""
    from gbmo.binning import BinMapper

    X = mixed_sparse_features(100, seed=24)
    mapper = BinMapper(max_bins=16).fit(X)
    binned = mapper.transform(X, max_sparse_density=0.6)
    gradients = (np.zeros(101, np.int64), np.zeros(0, np.int32), np.zeros(0, np.float32),
                 np.zeros(0, np.float32))
    out = np.empty(6), np.empty(6, np.int32), np.empty(6, np.uint8)
    empty = np.zeros(0, dtype=np.int32), np.zeros(0)

    def search(X_binned, rows):
        find_best_sparse_output_splits(
            X_binned, rows, np.arange(6, dtype=np.int32), mapper.n_bins_non_missing_,
            mapper.missing_bin, *gradients, 3, empty[0], empty[1], empty[1], empty[0], empty[1],
            0.0, 1, 1.0, 1.0, 0.0, *out, 1, sparse_binned=binned)

    with pytest.raises(ValueError, match="rows must increase"):
        search(binned.dense, np.array([3, 1, 2], dtype=np.uint32))
    with pytest.raises(ValueError, match="rows must increase"):
        search(binned.dense, np.array([1, 1, 2], dtype=np.uint32))
    with pytest.raises(ValueError, match="sparse_binned must describe"):
        search(binned.toarray(), np.arange(100, dtype=np.uint32))


@pytest.mark.parametrize("extra", [{}, dict(subsample=0.7, subsample_freq=1),
                                   dict(extra_trees=True, colsample_bynode=0.7)])
def test_sparse_x_grows_the_trees_of_its_dense_array(extra):
    # sparse enough that Dataset stores the first four columns sparsely
    X_all = mixed_sparse_features(400, seed=21, density=0.15)
    _, Y = make_multilabel(n=400, p=6, seed=21)
    # labels that follow the columns (a random Y would split little)
    Y[:, :6][X_all.toarray()[:, [0, 1, 2, 3, 5, 5]] > 0.5] = 1.0
    X, X_valid = X_all[:300], X_all[300:]
    params = dict(BASE_PARAMS, metric="precision@1", seed=3, **extra)
    boosters, trains = [], []
    for to_x in (lambda M: M, lambda M: M.toarray()):
        trains.append(gbmo.Dataset(to_x(X), sp.csr_matrix(Y[:300])))
        valid = trains[-1].create_valid(to_x(X_valid), sp.csr_matrix(Y[300:]))
        boosters.append(gbmo.train(params, trains[-1], 5, valid_sets=[valid]))
    assert trains[0].X_binned.is_sparse.tolist() == [1, 1, 1, 1, 0, 0]
    assert boosters[0].trees[0].n_leaves > 2
    assert any(np.isin(tree.node_feature[tree.node_left >= 0], [0, 1, 2, 3]).any()
               for tree in boosters[0].trees)  # splits on sparse columns compared
    assert_same_trees(*boosters)
    assert boosters[0].evals_result == boosters[1].evals_result
    np.testing.assert_array_equal(boosters[0].predict_topk(X_valid, 3)[0],
                                  boosters[1].predict_topk(X_valid.toarray(), 3)[0])


def test_drawn_thresholds_below_zero_are_refused():
    X_binned = np.zeros((2, 40), dtype=np.uint8)
    out = np.empty(2), np.empty(2, np.int32), np.empty(2, np.uint8)
    empty = np.zeros(0, dtype=np.int32), np.zeros(0)
    with pytest.raises(ValueError, match=r"random_bins\[1\] = -1"):
        find_best_sparse_output_splits(
            X_binned, np.arange(40, dtype=np.uint32), np.arange(2, dtype=np.int32),
            np.ones(2, dtype=np.int32), 1, np.zeros(41, dtype=np.int64), np.zeros(0, np.int32),
            np.zeros(0, np.float32), np.zeros(0, np.float32), 3, empty[0], empty[1], empty[1],
            empty[0], empty[1], 0.0, 1, 1.0, 1.0, 0.0, *out, 1,
            random_bins=np.array([0, -1], dtype=np.int32))


def dense_top_k(scores, k):
    """Top k per row by decreasing score, ties to the smaller label."""
    order = np.lexsort((np.broadcast_to(np.arange(scores.shape[1]), scores.shape), -scores),
                       axis=1)[:, :k]
    return order, np.take_along_axis(scores, order, axis=1)


@pytest.mark.parametrize("k", [1, 3, 12])
def test_predict_topk_equals_the_top_k_of_the_dense_prediction(k):
    X, Y = make_multilabel(missing_fraction=0.05, seed=11)
    booster = gbmo.train(dict(BASE_PARAMS, n_threads=2), gbmo.Dataset(X, sp.csr_matrix(Y)), 4)
    labels, scores = booster.predict_topk(X, k, raw_score=True)
    expected_labels, expected_scores = dense_top_k(booster.predict(X, raw_score=True), k)
    np.testing.assert_allclose(scores, expected_scores, atol=1e-12)
    np.testing.assert_array_equal(labels, expected_labels)


def test_predict_topk_ranks_untouched_labels_at_the_base_score():
    # One round with one label per leaf leaves most labels at the base score -1.
    X, Y = make_multilabel(seed=2)
    booster = gbmo.train(dict(BASE_PARAMS, top_k=1, max_leaves=2), gbmo.Dataset(
        X, sp.csr_matrix(Y)), 1)
    labels, scores = booster.predict_topk(X, 5, raw_score=True)
    expected_labels, expected_scores = dense_top_k(booster.predict(X, raw_score=True), 5)
    np.testing.assert_array_equal(labels, expected_labels)
    np.testing.assert_allclose(scores, expected_scores)
    assert np.any(scores == -1.0)


def test_a_sparse_y_takes_the_lightgbm_name_of_sigmoid():
    X, Y = make_multilabel(seed=6)
    aliased, named = (gbmo.train(dict(BASE_PARAMS, objective=objective),
                                 gbmo.Dataset(X, sp.csr_matrix(Y)), 3)
                      for objective in ("multilabel", "sigmoid"))
    np.testing.assert_array_equal(aliased.predict(X), named.predict(X))


@pytest.mark.parametrize("objective", ["squared_hinge", "sigmoid"])
def test_a_saved_model_predicts_the_same_top_k(objective):
    X, Y = make_multilabel(seed=6)
    booster = gbmo.train(dict(BASE_PARAMS, objective=objective),
                         gbmo.Dataset(X, sp.csr_matrix(Y)), 3)
    loaded = gbmo.Booster(model_str=booster.model_to_string())
    for got, expected in zip(loaded.predict_topk(X, 4), booster.predict_topk(X, 4)):
        np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("objective, params, predicted_by, sparse_output", [
    ("squared_hinge", {}, "mse", {}),
    ("sigmoid", {}, "sigmoid", {"sparse_threshold": -2.0}),
    ("sigmoid", {"objective": "multilabel", "sparse_threshold": -3.0}, "sigmoid",
     {"sparse_threshold": -3.0})])
def test_a_sparse_y_model_names_its_objective_in_memory_in_its_file_and_loaded(
        objective, params, predicted_by, sparse_output, tmp_path):
    """Its trees' objective, not the registered loss that predicts for it
    (mse, the identity, for the squared hinge), which params named: refit
    and init_model took the model for one of that loss."""
    import pickle

    X, Y = make_multilabel(seed=6)
    seen = []
    booster = gbmo.train({**BASE_PARAMS, "objective": objective, **params},
                         gbmo.Dataset(X, sp.csr_matrix(Y)), 3,
                         callbacks=[lambda env: seen.append(env.params["objective"])])
    assert seen == [objective] * 3
    saved = booster.dump_model()
    assert (saved["version"], saved["objective"], saved["params"]["objective"],
            saved["sparse_output"]) == (3, objective, objective, sparse_output)
    booster.save_model(tmp_path / "model.json")
    for model in (booster, gbmo.Booster(model_str=booster.model_to_string()),
                  gbmo.Booster(model_file=tmp_path / "model.json"),
                  pickle.loads(pickle.dumps(booster))):
        assert model.params["objective"] == model.dump_model()["objective"] == objective
        assert model.sparse_loss.name == objective
        assert model.sparse_loss.get_params() == sparse_output
        assert model.loss.name == predicted_by  # the transform predict uses, as before
        np.testing.assert_array_equal(model.predict(X), booster.predict(X))


def test_a_sparse_y_model_saved_without_its_objective_loads_as_before():
    """A file of an earlier gbmo names the loss that predicts and has no
    sparse_output: it loads as a model of that loss, predicting the same."""
    import json

    X, Y = make_multilabel(seed=6)
    booster = gbmo.train(BASE_PARAMS, gbmo.Dataset(X, sp.csr_matrix(Y)), 3)
    earlier = json.loads(json.dumps(booster.dump_model()))
    del earlier["sparse_output"]
    earlier.update(version=1, objective="mse")
    earlier["params"]["objective"] = "mse"
    loaded = gbmo.Booster(model_str=json.dumps(earlier))
    assert loaded.sparse_loss is None and loaded.params["objective"] == "mse"
    np.testing.assert_array_equal(loaded.predict(X), booster.predict(X))
    dense = gbmo.train(dict(verbosity=-1, max_leaves=4), gbmo.Dataset(X, Y), 1)
    assert json.loads(dense.model_to_string())["sparse_output"] is None


@pytest.mark.parametrize("objective, sparse_output, message", [
    ("squared_hinge", [], "must be null or an object"),
    ("sigmoid", {"threshold": -2.0}, "at most 'sparse_threshold'"),
    ("sigmoid", {"sparse_threshold": "low"}, "sparse_output"),
    ("sigmoid", {"sparse_threshold": float("inf")}, "sparse_threshold must be a finite"),
    ("mse", {}, "objective 'mse' does not take a sparse Y")])
def test_a_bad_sparse_output_field_is_a_model_format_error(objective, sparse_output, message):
    import json

    X, Y = make_multilabel(n=60)
    saved = json.loads(gbmo.train(BASE_PARAMS, gbmo.Dataset(X, sp.csr_matrix(Y)),
                                  1).model_to_string())
    saved.update(objective=objective, sparse_output=sparse_output)
    with pytest.raises(gbmo.ModelFormatError, match=message):
        gbmo.Booster(model_str=json.dumps(saved))


def test_top_k_of_sparse_scores_matches_dense():
    rng = np.random.default_rng(4)
    D = sp.random(30, 15, density=0.2, random_state=5, format="csr")
    D.data = rng.normal(size=D.nnz)
    base = rng.normal(-1.0, 0.5, size=15)
    labels, scores = top_k_of_sparse_scores(D, base, 4, n_threads=2)
    expected_labels, expected_scores = dense_top_k(D.toarray() + base, 4)
    np.testing.assert_array_equal(labels, expected_labels)
    np.testing.assert_allclose(scores, expected_scores)


def test_training_memory_grows_with_the_labels_present_not_with_n_times_L():
    rng = np.random.default_rng(0)
    n, p, n_labels = 2000, 8, 50_000  # dense float64 Y alone: 800 MB
    X = rng.normal(size=(n, p))
    cluster = (X[:, 0] > 0).astype(int) * 2 + (X[:, 1] > 0)
    labels = (cluster[:, None] * 1000 + rng.integers(0, 40, size=(n, 3))) % n_labels
    Y = sp.csr_matrix((np.ones(labels.size), (np.repeat(np.arange(n), 3), labels.ravel())),
                      shape=(n, n_labels))
    Y.data[:] = 1.0
    data = gbmo.Dataset(X, Y)
    tracemalloc.start()
    booster = gbmo.train(dict(BASE_PARAMS, top_k=5, max_leaves=8, n_threads=2), data, 3,
                         valid_sets=[data], callbacks=[])
    top_labels, _ = booster.predict_topk(X, 5)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    # Dense Y alone would take 800 MB, an n x L bool mask 100 MB; measured 3 MiB.
    assert peak < 16 * 2**20, f"peak {peak / 2**20:.1f} MiB"
    assert precision_at_k(Y, top_labels[:, :1]) > 0.02  # it learned something (chance: 3/40000)


def test_early_stopping_on_precision_at_3():
    X, Y = make_multilabel(n=400, seed=8)
    train = gbmo.Dataset(X[:300], sp.csr_matrix(Y[:300]))
    valid = train.create_valid(X[300:], sp.csr_matrix(Y[300:]))
    booster = gbmo.train(dict(BASE_PARAMS, metric=["ndcg@3", "precision@3"]), train, 60,
                         valid_sets=[valid], callbacks=[gbmo.early_stopping(3, verbose=False)])
    history = booster.evals_result["valid_0"]["precision@3"]
    assert booster.best_iteration == int(np.argmax(history)) + 1
    assert len(history) < 60
    labels, _ = booster.predict_topk(X[300:], 3)
    assert precision_at_k(sp.csr_matrix(Y[300:]), labels) == pytest.approx(max(history))


def test_precision_and_ndcg_on_a_hand_computed_case():
    Y = sp.csr_matrix(np.array([[1, 0, 1, 0], [0, 1, 0, 0], [0, 0, 0, 0]], dtype=float))
    top = np.array([[2, 1, 0], [0, 3, 1], [0, 1, 2]])
    # hits: row 0 [1, 0, 1], row 1 [0, 0, 1], row 2 none
    assert precision_at_k(Y, top[:, :1]) == pytest.approx(1 / 3)
    assert precision_at_k(Y, top) == pytest.approx((2 / 3 + 1 / 3 + 0) / 3)
    row0 = (1 + 1 / np.log2(4)) / (1 + 1 / np.log2(3))
    row1 = (1 / np.log2(4)) / 1.0
    assert ndcg_at_k(Y, top) == pytest.approx((row0 + row1 + 0) / 3)


def test_f1_on_a_hand_computed_case():
    Y = sp.csr_matrix(np.array([[1, 0, 1], [0, 1, 0]], dtype=float))
    predicted = sp.csr_matrix(np.array([[1, 1, 0], [0, 1, 0]], dtype=float))
    # TP 2, FP 1, FN 1: micro 4 / 6; per label: 1, 2/3, 0 (label 2: 1 true, 0 predicted)
    assert f1_at_threshold(Y, predicted, "micro") == pytest.approx(4 / 6)
    assert f1_at_threshold(Y, predicted, "macro") == pytest.approx((1 + 2 / 3 + 0) / 3)
    with pytest.raises(ValueError, match="average"):
        f1_at_threshold(Y, predicted, "weighted")


@pytest.mark.parametrize("metric", [
    lambda Y, top, predicted, weight: precision_at_k(Y, top, weight),
    lambda Y, top, predicted, weight: ndcg_at_k(Y, top, weight),
    lambda Y, top, predicted, weight: f1_at_threshold(Y, predicted, "micro", weight),
    lambda Y, top, predicted, weight: f1_at_threshold(Y, predicted, "macro", weight)],
    ids=["precision", "ndcg", "micro_f1", "macro_f1"])
def test_weighted_label_metrics_equal_the_unweighted_ones_on_repeated_rows(metric):
    rng = np.random.default_rng(17)
    Y = sp.csr_matrix((rng.random((30, 8)) < 0.3).astype(float))
    predicted = sp.csr_matrix((rng.random((30, 8)) < 0.3).astype(float))
    top = np.argsort(rng.random((30, 8)), axis=1)[:, :3]
    weight = rng.integers(0, 4, size=30)
    repeated = np.repeat(np.arange(30), weight)
    weighted = metric(Y, top, predicted, weight.astype(float))
    assert weighted == pytest.approx(metric(Y[repeated], top[repeated], predicted[repeated],
                                            None))
    assert weighted != pytest.approx(metric(Y, top, predicted, None))


def test_a_weighted_validation_set_is_scored_with_its_weights():
    X, Y = make_multilabel(n=400, seed=18)
    weight = np.random.default_rng(18).uniform(0.0, 3.0, size=100)
    train = gbmo.Dataset(X[:300], sp.csr_matrix(Y[:300]))
    valid = train.create_valid(X[300:], sp.csr_matrix(Y[300:]), weight=weight)
    booster = gbmo.train(dict(BASE_PARAMS, metric=["precision@3", "micro_f1"]), train, 5,
                         valid_sets=[valid])
    history = booster.evals_result["valid_0"]
    labels, _ = booster.predict_topk(X[300:], 3)
    Y_valid = sp.csr_matrix(Y[300:])
    assert history["precision@3"][-1] == pytest.approx(precision_at_k(Y_valid, labels, weight))
    predicted = sp.csr_matrix(booster.predict(X[300:], raw_score=True) > 0.0)
    assert history["micro_f1"][-1] == pytest.approx(
        f1_at_threshold(Y_valid, predicted, "micro", weight))
    assert history["precision@3"][-1] != pytest.approx(precision_at_k(Y_valid, labels))


def test_f1_metrics_during_training_are_recorded():
    X, Y = make_multilabel(seed=9)
    data = gbmo.Dataset(X, sp.csr_matrix(Y))
    booster = gbmo.train(dict(BASE_PARAMS, metric=["micro_f1", "macro_f1"]), data, 3,
                         valid_sets=[data])
    history = booster.evals_result["training"]
    assert 0 < history["micro_f1"][-1] <= 1 and 0 < history["macro_f1"][-1] <= 1


@pytest.mark.parametrize("params, message", [
    (dict(objective="mse_custom"), "sparse Y"),
    (dict(objective="softmax"), "sparse-output objectives are squared_hinge, sigmoid"),
    # squared error is not the squared hinge, which it silently trained
    (dict(objective="mse"), "objective 'mse' does not take a sparse Y"),
    (dict(objective="regression"), "objective 'mse' does not take a sparse Y"),
    # CatBoost's written parameters were dropped silently
    (dict(objective="MultiLogloss:scale_pos_weight=3"), "take no parameters written in the name"),
    (dict(metric="precision@7"), "unknown metric 'precision@7'"),
    (dict(split="dense"), "split='sparse' and top_k"),
    (dict(growth="depthwise"), "growth='bestfirst'"),
    (dict(tree_mode="single_output"), "tree_mode='multi_output'"),
    (dict(objective="sigmoid", sparse_threshold=float("nan")), "sparse_threshold"),
    (dict(categorical_feature=[0]), "does not take categorical features"),
    (dict(interaction_constraints=[[0, 9]]), r"name features \[9\], but X has 6"),
    (dict(neg_bagging_fraction=0.5), "a sparse Y's labels take subsample"),
])
def test_bad_parameters_for_a_sparse_y_are_named(params, message):
    X, Y = make_multilabel(n=50)
    with pytest.raises(ValueError, match=message):
        gbmo.train(dict(BASE_PARAMS, **params), gbmo.Dataset(X, sp.csr_matrix(Y)), 1)


@pytest.mark.parametrize("sparse_x", [False, True])
def test_a_sparse_y_grows_the_same_trees_on_16_bit_bins(sparse_x):
    """On features of at most 60 values, max_bins = 1,000 makes the same bins
    as 255, 16-bit: the same trees and predictions, dense X or sparse (its
    features stored sparsely: 5% of the values not 0)."""
    X, Y = make_multilabel(n=600)
    X = np.round(X * 6) / 6
    if sparse_x:
        X = sp.csr_matrix(X * (np.random.default_rng(0).random(X.shape) < 0.05))
    datasets = [gbmo.Dataset(X, sp.csr_matrix(Y)) for _ in range(2)]
    boosters = [gbmo.train(dict(BASE_PARAMS, max_bins=bins), data, 4)
                for bins, data in zip((255, 1000), datasets)]
    assert datasets[1].X_binned.dtype == np.uint16
    if sparse_x:
        assert datasets[1].X_binned.is_sparse.all()
    assert boosters[0].dump_model()["trees"] == boosters[1].dump_model()["trees"]
    np.testing.assert_array_equal(boosters[0].predict(X), boosters[1].predict(X))


def test_a_sparse_y_s_validation_set_with_the_model_s_columns_in_another_order_is_refused():
    pd = pytest.importorskip("pandas")
    X, Y = make_multilabel(n=80)
    frame = pd.DataFrame(X, columns=[f"f{j}" for j in range(X.shape[1])])
    swapped = frame[list(frame.columns[::-1])]
    with pytest.raises(ValueError, match="validation set 'valid_0': X's columns are the "
                                         "model's features in another order"):
        gbmo.train(BASE_PARAMS, gbmo.Dataset(frame, sp.csr_matrix(Y)), 1,
                   valid_sets=[gbmo.Dataset(swapped, sp.csr_matrix(Y))])


def test_top_k_above_the_labels_is_refused_before_binning():
    """It was cut to the labels silently."""
    X, Y = make_multilabel(n=50, n_labels=4)
    data = gbmo.Dataset(X, sp.csr_matrix(Y))
    with pytest.raises(ValueError, match=r"parameter 'top_k' = 5 is more than the 4 outputs "
                                         r"of the target; allowed: 1 \.\. 4"):
        gbmo.train(dict(BASE_PARAMS, top_k=5), data, 1)
    assert data.bin_mapper is None


@pytest.mark.parametrize("objective", ["squared_hinge", "sigmoid"])
def test_a_y_without_any_label_trains_a_model_that_ranks_every_label_alike(objective):
    """Found by the fuzz: nodes without gradient entries summed to int64 and
    training raised. With no positive anywhere the loss has nothing to learn
    beyond the base score."""
    X, Y = make_multilabel(n=60)
    empty = sp.csr_matrix(Y.shape)
    booster = gbmo.train(dict(BASE_PARAMS, objective=objective), gbmo.Dataset(X, empty), 3)
    raw = booster.predict(X, raw_score=True)
    assert np.all(raw == raw[0, 0])
    _, scores = booster.predict_topk(X, 3, raw_score=True)
    assert np.all(scores == raw[0, 0])


@pytest.mark.parametrize("objective", ["squared_hinge", "sigmoid"])
def test_a_one_value_feature_with_missing_values_splits_on_missingness(objective):
    """Found by the long fuzz: with one bin and most rows in it, the search
    from the top bins reads bin 0's rows too (the missing-left candidate has
    no threshold above bin 0), which the partial counting sort had left
    unplaced: a segmentation fault."""
    rng = np.random.default_rng(5)
    missing = rng.random(120) < 0.3
    X = np.where(missing, np.nan, 1.0)[:, None]
    labels = np.where(missing, 0, 1 + rng.integers(0, 3, size=120))
    Y = sp.csr_matrix((np.ones(120), (np.arange(120), labels)), shape=(120, 6))
    booster = gbmo.train(dict(BASE_PARAMS, objective=objective, top_k=2, min_samples_leaf=5),
                         gbmo.Dataset(X, Y), 5)
    assert any(t.n_leaves == 2 for t in booster.trees)
    top, _ = booster.predict_topk(X, 1)
    np.testing.assert_array_equal(top[missing, 0], 0)
    assert np.all(top[~missing, 0] != 0)


def test_restricted_sigmoid_at_extreme_scores_warns_nothing():
    """Found by the long fuzz: 1 / (1 + exp(-f)) overflowed with a
    RuntimeWarning at f < -709; the limits are exact."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        grad, hess, active = SparseSigmoid().entry_gradients(
            np.array([-1000.0, 1000.0, -1000.0]), np.array([False, True, True]))
    np.testing.assert_array_equal(grad, [0.0, 0.0, -1.0])
    np.testing.assert_array_equal(hess, [0.0, 0.0, 0.0])
    np.testing.assert_array_equal(active, [False, True, True])


def test_bad_sparse_labels_are_rejected():
    X, Y = make_multilabel(n=50)
    with pytest.raises(ValueError, match=r"0/1 labels \(stored entries 1\), found 2\.0$"):
        gbmo.Dataset(X, sp.csr_matrix(Y * 2))
    with pytest.raises(ValueError, match="rows but X has 50"):
        gbmo.Dataset(X, sp.csr_matrix(Y[:40]))
    train = gbmo.Dataset(X, sp.csr_matrix(Y))
    with pytest.raises(ValueError, match="validation set .* needs a sparse Y"):
        gbmo.train(BASE_PARAMS, train, 1, valid_sets=[train.create_valid(X, Y)])
    with pytest.raises(ValueError, match="validation Y has 5 labels"):
        gbmo.train(BASE_PARAMS, train, 1, valid_sets=[
            train.create_valid(X, sp.csr_matrix(Y[:, :5]))])


def test_cv_with_a_sparse_y_equals_training_each_fold_alone():
    X, Y = make_multilabel(n=300, seed=25)
    folds = [(np.flatnonzero(np.arange(300) % 3 != k), np.flatnonzero(np.arange(300) % 3 == k))
             for k in range(3)]
    params = dict(BASE_PARAMS, metric=["precision@1", "ndcg@3"])
    data = gbmo.Dataset(X, sp.csr_matrix(Y))
    result = gbmo.cv(params, data, 6, folds=folds)
    assert set(result) == {"valid precision@1-mean", "valid precision@1-stdv",
                           "valid ndcg@3-mean", "valid ndcg@3-stdv"}
    curves = []
    whole = gbmo.Dataset(X, sp.csr_matrix(Y))  # whose bin edges the folds take
    for train_rows, valid_rows in folds:
        train = gbmo.Dataset(X[train_rows], sp.csr_matrix(Y[train_rows]), reference=whole)
        valid = train.create_valid(X[valid_rows], sp.csr_matrix(Y[valid_rows]))
        curves.append(gbmo.train(params, train, 6, valid_sets=[valid])
                      .evals_result["valid_0"]["ndcg@3"])
    np.testing.assert_allclose(result["valid ndcg@3-mean"], np.mean(curves, axis=0), rtol=1e-12)
    np.testing.assert_allclose(result["valid ndcg@3-stdv"], np.std(curves, axis=0), rtol=1e-9)
    assert len(gbmo.cv(params, data, 2, nfold=4)["valid precision@1-mean"]) == 2


def test_cv_with_a_sparse_y_takes_metrics_and_stops_early_on_the_fold_mean():
    X, Y = make_multilabel(n=300, seed=27)
    data = gbmo.Dataset(X, sp.csr_matrix(Y))
    result = gbmo.cv(dict(BASE_PARAMS, learning_rate=1.0), data, 200, nfold=3,
                     metrics=["ndcg@1"], callbacks=[gbmo.early_stopping(3, verbose=False)])
    assert set(result) == {"valid ndcg@1-mean", "valid ndcg@1-stdv"}
    full = gbmo.cv(dict(BASE_PARAMS, learning_rate=1.0), data, len(result["valid ndcg@1-mean"]) + 3,
                   nfold=3, metrics=["ndcg@1"])["valid ndcg@1-mean"]
    best = int(np.argmax(full)) + 1
    assert len(result["valid ndcg@1-mean"]) == best < 200
    assert result["valid ndcg@1-mean"] == full[:best]


def test_cv_with_a_sparse_y_refuses_feval_and_stratified_folds():
    X, Y = make_multilabel(n=60)
    data = gbmo.Dataset(X, sp.csr_matrix(Y))
    with pytest.raises(ValueError, match="a sparse Y does not take feval"):
        gbmo.cv(BASE_PARAMS, data, 2, feval=lambda prediction, dataset: ("m", 0.0, True))
    with pytest.raises(ValueError, match="stratified folds need 1-D class labels"):
        gbmo.cv(BASE_PARAMS, data, 2, stratified=True)


def test_predict_topk_rejects_bad_k_and_dense_leaves():
    X, Y = make_multilabel(n=60)
    booster = gbmo.train(BASE_PARAMS, gbmo.Dataset(X, sp.csr_matrix(Y)), 1)
    for k in (0, 13, 2.5):
        with pytest.raises(ValueError, match=r"k must be an integer in \[1, 12\]"):
            booster.predict_topk(X, k)
    dense = gbmo.train(dict(verbosity=0, max_leaves=4), gbmo.Dataset(X, Y), 1)
    with pytest.raises(ValueError, match="sparse leaves"):
        dense.predict_topk(X, 2)


def test_classifier_with_a_sparse_y_trains_the_sparse_output_path():
    from gbmo.sklearn import GBMOClassifier

    X, Y = make_multilabel(n=300, seed=11)
    Y_sparse = sp.csr_matrix(Y)
    classifier = GBMOClassifier(n_estimators=5, top_k=3, max_leaves=8, min_samples_leaf=5,
                                min_child_weight=0.0, learning_rate=0.3, n_threads=1,
                                random_state=0).fit(X, Y_sparse)
    booster = gbmo.train(dict(BASE_PARAMS, objective="sigmoid", seed=0),
                         gbmo.Dataset(X, Y_sparse), 5)
    np.testing.assert_array_equal(classifier.booster_.predict(X), booster.predict(X))
    assert classifier.n_classes_ == classifier.n_outputs_ == Y.shape[1]
    predicted = classifier.predict(X)
    assert sp.issparse(predicted) and predicted.shape == Y.shape
    np.testing.assert_array_equal(predicted.toarray(), booster.predict(X) > 0.5)
    labels, probabilities = classifier.predict_topk(X, 2)
    expected_labels, expected_probabilities = booster.predict_topk(X, 2)
    np.testing.assert_array_equal(labels, expected_labels)
    np.testing.assert_allclose(probabilities, expected_probabilities)
    assert classifier.score(X, Y_sparse) == pytest.approx(
        np.mean((predicted.toarray() == Y).all(axis=1)))


def test_classifier_takes_sparse_threshold_with_a_sparse_y():
    """The estimators' early check of the parameters, before y is read, let
    no sparse_threshold through; the sparse-output path takes it."""
    from gbmo.sklearn import GBMOClassifier

    X, Y = make_multilabel(n=300, seed=12)
    settings = dict(n_estimators=3, top_k=3, n_threads=1, random_state=0)
    classifier = GBMOClassifier(sparse_threshold=-3.0, **settings).fit(X, sp.csr_matrix(Y))
    booster = gbmo.train({"objective": "sigmoid", "sparse_threshold": -3.0, "top_k": 3,
                          "n_threads": 1, "seed": 0, "verbosity": -1},
                         gbmo.Dataset(X, sp.csr_matrix(Y)), 3)
    assert classifier.booster_.init_score.max() <= -3.0
    np.testing.assert_array_equal(classifier.booster_.predict(X), booster.predict(X))


def test_classifier_takes_the_squared_hinge_with_a_sparse_y_only():
    from gbmo.sklearn import GBMOClassifier

    X, Y = make_multilabel(n=300, seed=13)
    settings = dict(n_estimators=3, top_k=3, n_threads=1, random_state=0)
    classifier = GBMOClassifier(objective="squared_hinge", **settings).fit(X, sp.csr_matrix(Y))
    booster = gbmo.train({"objective": "squared_hinge", "top_k": 3, "n_threads": 1, "seed": 0,
                          "verbosity": -1}, gbmo.Dataset(X, sp.csr_matrix(Y)), 3)
    np.testing.assert_array_equal(classifier.booster_.predict(X), booster.predict(X))
    # labels where the margin is above 0, as the path's F1 counts them (0.5 before)
    classifier = GBMOClassifier(objective="squared_hinge", **{**settings, "n_estimators": 30,
                                                              "learning_rate": 0.3}).fit(
        X, sp.csr_matrix(Y))
    margins = classifier.booster_.predict(X)
    assert ((margins > 0) & (margins <= 0.5)).any()
    np.testing.assert_array_equal(classifier.predict(X).toarray(), margins > 0)
    np.testing.assert_array_equal(list(classifier.staged_predict(X))[-1].toarray(), margins > 0)
    with pytest.raises(ValueError, match="'squared_hinge' scores labels by margins, not "
                                         "probabilities"):
        classifier.predict_proba(X)
    with pytest.raises(ValueError, match="'squared_hinge' scores labels by margins"):
        next(classifier.staged_predict_proba(X))
    with pytest.raises(ValueError, match="unknown objective 'squared_hinge'"):
        GBMOClassifier(objective="squared_hinge", **settings).fit(X, Y)


@pytest.mark.parametrize("given, objective", [({}, "sigmoid"),
                                               ({"objective": "squared_hinge"}, "squared_hinge")])
def test_classifier_with_a_sparse_y_names_its_objective(given, objective):
    from gbmo.sklearn import GBMOClassifier

    X, Y = make_multilabel(n=100, seed=13)
    classifier = GBMOClassifier(n_estimators=1, top_k=3, n_threads=1, **given).fit(
        X, sp.csr_matrix(Y))
    assert classifier.objective_ == objective


def test_classifier_passes_sample_weights_with_a_sparse_y():
    from gbmo.sklearn import GBMOClassifier

    X, Y = make_multilabel(n=200, seed=19)
    weight = np.random.default_rng(19).uniform(0.0, 3.0, size=len(X))
    settings = dict(top_k=3, min_samples_leaf=5, min_child_weight=0.0, learning_rate=0.5,
                    n_threads=1)
    classifier = GBMOClassifier(n_estimators=3, **settings).fit(
        X, sp.csr_matrix(Y), sample_weight=weight)
    booster = gbmo.train(dict(objective="sigmoid", split="sparse", verbosity=-1, **settings),
                         gbmo.Dataset(X, sp.csr_matrix(Y), weight=weight), 3)
    np.testing.assert_allclose(classifier.booster_.predict(X, raw_score=True),
                               booster.predict(X, raw_score=True))
    unweighted = GBMOClassifier(n_estimators=3, **settings).fit(X, sp.csr_matrix(Y))
    assert not np.allclose(classifier.booster_.predict(X, raw_score=True),
                           unweighted.booster_.predict(X, raw_score=True))


def test_classifier_with_a_sparse_y_takes_its_metrics_by_name():
    from gbmo.sklearn import GBMOClassifier

    X, Y = make_multilabel(n=200, seed=28)
    Y_sparse, eval_set = sp.csr_matrix(Y), [(X[:60], sp.csr_matrix(Y[:60]))]
    settings = dict(n_estimators=3, top_k=3, min_samples_leaf=5, n_threads=1)
    chosen = GBMOClassifier(metric="precision@3", **settings).fit(X, Y_sparse, eval_set=eval_set)
    labels, _ = chosen.predict_topk(X[:60], 3)
    assert chosen.evals_result_["valid_0"]["precision@3"][-1] == pytest.approx(
        precision_at_k(sp.csr_matrix(Y[:60]), labels))
    added = GBMOClassifier(**settings).fit(X, Y_sparse, eval_set=eval_set, eval_metric="ndcg@3")
    assert list(added.evals_result_["valid_0"]) == ["ndcg@3", "precision@1"]  # eval_metric first
    with pytest.raises(ValueError, match="unknown metric 'rmse' for a sparse Y"):
        GBMOClassifier(**settings).fit(X, Y_sparse, eval_set=eval_set, eval_metric="rmse")
    with pytest.raises(ValueError, match="eval_metric functions are not taken with a sparse y"):
        GBMOClassifier(**settings).fit(X, Y_sparse, eval_set=eval_set,
                                       eval_metric=lambda y, p: ("m", 0.0, True))
    with pytest.raises(ValueError, match="'precision@3' ranks each row's outputs"):  # one label
        # without top_k, which a dense y refuses first (it is a sparse y's)
        GBMOClassifier(metric="precision@3", **{**settings, "top_k": None}).fit(X, Y[:, 0])


def test_classifier_predicts_a_sparse_y_in_row_blocks(monkeypatch):
    from gbmo import sklearn as gbmo_sklearn

    X, Y = make_multilabel(n=200, seed=12)
    classifier = gbmo_sklearn.GBMOClassifier(n_estimators=4, top_k=3, min_samples_leaf=5,
                                             min_child_weight=0.0, learning_rate=0.5,
                                             n_threads=1).fit(X, sp.csr_matrix(Y))
    whole = classifier.predict(X).toarray()
    assert whole.any()
    monkeypatch.setattr(gbmo_sklearn, "_PREDICT_BLOCK_VALUES", 7 * Y.shape[1])
    np.testing.assert_array_equal(classifier.predict(X).toarray(), whole)


def test_classifier_early_stopping_with_a_sparse_eval_set():
    from gbmo.sklearn import GBMOClassifier

    X, Y = make_multilabel(n=400, seed=13)
    classifier = GBMOClassifier(n_estimators=200, top_k=3, min_samples_leaf=5,
                                min_child_weight=0.0, learning_rate=0.5,
                                early_stopping_rounds=3, n_threads=1)
    classifier.fit(X[:300], sp.csr_matrix(Y[:300]),
                   eval_set=[(X[300:], sp.csr_matrix(Y[300:]))])
    history = classifier.evals_result_["valid_0"]["precision@1"]
    assert classifier.n_iter_ < 200
    assert classifier.best_iteration_ == int(np.argmax(history)) + 1


@pytest.mark.parametrize("change, message", [
    (dict(split="sparse_restricted", top_k=3), "parameter 'split'"),
    (dict(eval_dense=True), "eval_set y must be a scipy sparse"),
])
def test_classifier_with_a_sparse_y_names_what_it_does_not_take(change, message):
    from gbmo.sklearn import GBMOClassifier

    X, Y = make_multilabel(n=100, seed=14)
    params = {key: value for key, value in change.items() if key in ("split", "top_k")}
    classifier = GBMOClassifier(n_estimators=2, min_samples_leaf=5, **params)
    fit = dict(eval_set=[(X, Y)] if change.get("eval_dense") else None)
    with pytest.raises(ValueError, match=message):
        classifier.fit(X, sp.csr_matrix(Y), **fit)


def test_a_validation_set_made_without_the_training_set_is_scored_on_its_bins():
    X, Y = make_multilabel(n=400, seed=9)
    X_valid = X[300:] * 1.5 + 0.5  # its own bin edges would differ from the training set's
    train = gbmo.Dataset(X[:300], sp.csr_matrix(Y[:300]))
    booster = gbmo.train(dict(BASE_PARAMS, metric="precision@3", max_bins=16), train, 8,
                         valid_sets=[gbmo.Dataset(X_valid, sp.csr_matrix(Y[300:]))])
    labels, _ = booster.predict_topk(X_valid, 3)
    assert booster.evals_result["valid_0"]["precision@3"][-1] == pytest.approx(
        precision_at_k(sp.csr_matrix(Y[300:]), labels))


def test_a_sparse_y_refuses_boost_from_average_false():
    X, Y = make_multilabel(n=100, seed=10)
    with pytest.raises(ValueError, match="a sparse Y does not take boost_from_average=False"):
        gbmo.train(dict(BASE_PARAMS, boost_from_average=False),
                   gbmo.Dataset(X, sp.csr_matrix(Y)), 1)


def test_a_sparse_y_takes_a_subsample_without_bagging_frequency():
    X, Y = make_multilabel(n=100, seed=11)
    plain = gbmo.train(BASE_PARAMS, gbmo.Dataset(X, sp.csr_matrix(Y)), 2)
    unused = gbmo.train(dict(BASE_PARAMS, subsample=0.5, subsample_freq=0),
                        gbmo.Dataset(X, sp.csr_matrix(Y)), 2)
    np.testing.assert_array_equal(unused.predict(X), plain.predict(X))


@pytest.mark.parametrize("bagging", [dict(subsample=0.6, subsample_freq=1),
                                     dict(subsample=0.5, subsample_freq=2, extra_trees=True)])
def test_bagging_grows_the_trees_of_dense_gbdt_mo_with_the_same_seed(bagging):
    """The same rows drawn in both paths, trees grown on them, and every
    row's raw scores moved by its leaf (the rows out of the sample too)."""
    X, Y = make_multilabel(missing_fraction=0.1, seed=14)
    params = dict(BASE_PARAMS, seed=7, min_samples_leaf=3, **bagging)
    sparse_booster = gbmo.train(dict(params, objective="squared_hinge"),
                                gbmo.Dataset(X, sp.csr_matrix(Y)), 6)
    dense_booster = gbmo.train(dict(params, objective=dense_squared_hinge(-1.0)),
                               gbmo.Dataset(X, Y), 6)
    assert_same_trees(sparse_booster, dense_booster)
    plain = gbmo.train(dict(BASE_PARAMS, objective="squared_hinge", seed=7,
                            min_samples_leaf=3), gbmo.Dataset(X, sp.csr_matrix(Y)), 6)
    assert not np.array_equal(sparse_booster.trees[0].node_count, plain.trees[0].node_count)


def test_a_sparse_y_reads_objective_and_metric_under_their_aliases():
    X, Y = make_multilabel(n=150, seed=12)
    data = gbmo.Dataset(X, sp.csr_matrix(Y))
    named = gbmo.train(dict(BASE_PARAMS, objective="sigmoid", metric="precision@1"),
                       data, 2, valid_sets=[data])
    aliased = gbmo.train(dict(BASE_PARAMS, loss_function="Logloss", eval_metric="precision@1"),
                         data, 2, valid_sets=[data])
    assert aliased.loss.name == named.loss.name == "sigmoid"
    np.testing.assert_array_equal(aliased.predict(X), named.predict(X))
    assert aliased.evals_result == named.evals_result
    with pytest.raises(ValueError, match="parameter 'objective' is given twice"):
        gbmo.train(dict(BASE_PARAMS, objective="sigmoid", loss_function="Logloss"), data, 1)


def test_sigmoid_learns_frequent_labels_among_many_rare_ones():
    """Two labels of half the rows each among 200: from one start score for
    all labels (the logit of the overall density, -4.6) their first Newton
    steps overshot into saturation, where no split gained, and the model
    ranked them last; from each label's own rate it separates them."""
    rng = np.random.default_rng(27)
    n, n_labels = 2000, 200
    X = rng.normal(size=(n, 10))
    label = np.where(X[:, 0] > 0, 7, 0)
    Y = sp.csr_matrix((np.ones(n), (np.arange(n), label)), shape=(n, n_labels))
    booster = gbmo.train({"objective": "sigmoid", "top_k": 5, "verbosity": -1},
                         gbmo.Dataset(X, Y), 50)
    assert booster.init_score[[0, 7]] == pytest.approx([-2.0, -2.0])  # capped at the threshold
    assert booster.init_score[1] < -10  # never seen: the floor of the rate
    assert max(np.abs(tree.leaf_values).max() for tree in booster.trees) < 1.0  # no overshoot
    top, _ = booster.predict_topk(X, 1)
    assert (top[:, 0] == label).mean() > 0.99


def test_f1_counts_untouched_labels_that_start_above_zero():
    """Under sparse_threshold > 0 a label of more than half the rows starts
    above 0, so a row its trees never touched predicts it: F1 counts those,
    as scikit-learn's F1 of the dense raw scores does."""
    from sklearn.metrics import f1_score

    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3))
    Y = sp.csr_matrix(np.c_[rng.random(200) < 0.7, rng.random((200, 9)) < 0.05].astype(float))
    booster = gbmo.train({"objective": "sigmoid", "top_k": 2, "sparse_threshold": 0.5,
                          "metric": ["micro_f1", "macro_f1"], "verbosity": -1},
                         gbmo.Dataset(X, Y), 3, valid_sets=[gbmo.Dataset(X, Y)])
    assert booster.init_score[0] == 0.5  # capped at the threshold, above 0
    predicted = (booster.predict(X, raw_score=True) > 0).astype(int)
    record = booster.evals_result["valid_0"]
    assert record["micro_f1"][-1] == pytest.approx(f1_score(Y.toarray(), predicted,
                                                            average="micro"))
    assert record["macro_f1"][-1] == pytest.approx(
        f1_score(Y.toarray(), predicted, average="macro", zero_division=0))


def test_a_sparse_y_resolves_with_more_than_255_bins_what_255_cannot():
    """Labels that alternate every two of x's 1,200 values: 255 bins hold
    four or five values each and cannot tell them apart; 2,047 bins can
    (16-bit bins, so split positions above 255)."""
    rng = np.random.default_rng(5)
    x = rng.integers(0, 1200, size=20_000)
    first = (x // 2) % 2
    Y = sp.csr_matrix(np.c_[first, 1 - first, np.zeros((len(x), 2))])
    X = x[:, None] / 1200.0
    accuracy = {}
    for bins in (255, 2047):
        params = dict(BASE_PARAMS, max_bins=bins, max_leaves=1024, min_samples_leaf=1,
                      learning_rate=1.0)
        booster = gbmo.train(params, gbmo.Dataset(X, Y), 5)
        accuracy[bins] = np.mean((booster.predict(X)[:, 0] > 0.5) == first)
    assert accuracy[255] < 0.75
    assert accuracy[2047] > 0.99


def test_a_sparse_y_without_top_k_is_told_to_give_it():
    """It was told that top_k is required with split='sparse', which the
    user had not given (the sparse-output path sets it)."""
    X = np.random.default_rng(0).normal(size=(60, 3))
    Y = sp.csr_matrix((np.random.default_rng(1).random((60, 5)) > 0.7).astype(float))
    with pytest.raises(ValueError, match=r"a sparse Y trains the sparse-output path, whose "
                                         r"leaves keep top_k labels each: give top_k"):
        gbmo.train({"verbosity": -1}, gbmo.Dataset(X, Y), 2)
