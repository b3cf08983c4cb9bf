"""L1 regularisation (lambda_l1): every split finder against the brute-force
reference with soft-thresholded gradient sums, and trained models whose leaf
values are -T(G) / (H + lambda) of their rows."""
import numpy as np
import pytest
import scipy.sparse as sp

pytest.register_assert_rewrite("split_reference")
import split_reference  # noqa: E402
from split_reference import (  # noqa: E402
    HESS_WIDTHS, LAMBDA, brute_force_table, check_against_brute_force, hess_width_of, make_node,
    node_histogram)

import gbmo  # noqa: E402
from gbmo._core._split import find_best_splits, split_gain_table  # noqa: E402

QUIET = {"verbosity": 0}


@pytest.fixture(params=[0.5, 6.0])
def lambda_l1(request, monkeypatch):
    """The reference and the kernel calls of split_reference with this L1 penalty."""
    monkeypatch.setattr(split_reference, "LAMBDA_L1", request.param)
    return request.param


@pytest.mark.parametrize("k_kind", HESS_WIDTHS)
@pytest.mark.parametrize("d, top_k, restricted", [
    (1, None, False), (4, None, False), (4, 2, False), (4, 2, True)])
@pytest.mark.parametrize("seed", [0, 1])
def test_split_search_matches_brute_force(lambda_l1, k_kind, d, top_k, restricted, seed):
    rng = np.random.default_rng(seed * 7 + d)
    k = hess_width_of(k_kind, d)
    n_bins_per_feature = [5, 8, 2, 6]
    X_binned, grad, hess = make_node(rng, 160, n_bins_per_feature, {1, 3}, 8, d, k)
    features = np.arange(4, dtype=np.int32)
    for n_threads in (1, 2):
        gain, bin_, _, _ = check_against_brute_force(
            X_binned, grad, hess, 8, n_bins_per_feature, features, k, 1.0 if k else 0.6, 5, 0.0,
            top_k, restricted, n_threads)
        assert np.any(bin_ >= 0)


def test_the_penalty_changes_the_chosen_split():
    """A sanity check on the data of the test above: L1 picks other splits
    than L2 alone for some features, so that test would notice it ignored."""
    rng = np.random.default_rng(5)
    n_bins_per_feature = [5, 8, 2, 6]
    X_binned, grad, hess = make_node(rng, 160, n_bins_per_feature, {1, 3}, 8, 4, 4)
    hist, parent = node_histogram(X_binned, grad, hess, 8)
    chosen = []
    for l1 in (0.0, 6.0):
        gain, bin_, missing_left = (np.empty(4), np.empty(4, np.int32), np.empty(4, np.uint8))
        find_best_splits(hist, np.arange(4, dtype=np.int32), np.array(n_bins_per_feature,
                         np.int32), parent, 4, 4, 1.0, LAMBDA, 5, 0.0, gain, bin_, missing_left,
                         1, lambda_l1=l1)
        chosen.append((gain.copy(), bin_.copy()))
    assert np.all(chosen[1][0] < chosen[0][0])
    assert np.any(chosen[1][1] != chosen[0][1])


@pytest.mark.parametrize("k_kind", HESS_WIDTHS)
@pytest.mark.parametrize("d", [1, 3])
def test_split_gain_table_matches_brute_force(lambda_l1, k_kind, d):
    rng = np.random.default_rng(d)
    k = hess_width_of(k_kind, d)
    n_bins_per_feature = [6, 10, 3, 2]
    X_binned, grad, hess = make_node(rng, 150, n_bins_per_feature, {1, 2}, 10, d, k)
    hist, parent = node_histogram(X_binned, grad, hess, 10)
    features = np.arange(4, dtype=np.int32)
    expected = brute_force_table(X_binned, grad, hess, n_bins_per_feature, features, 10, k,
                                 1.0 if k else 0.7, 3, 0.0)
    gains = np.full((4, 10, 2), np.nan)
    split_gain_table(hist, features, np.array(n_bins_per_feature, np.int32), parent, d, k,
                     1.0 if k else 0.7, LAMBDA, 3, 0.0, gains, 2, lambda_l1=lambda_l1)
    np.testing.assert_array_equal(np.isfinite(gains), np.isfinite(expected))
    np.testing.assert_allclose(gains[np.isfinite(gains)], expected[np.isfinite(expected)],
                               rtol=1e-9, atol=1e-9)


def _regression(n=600, d=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 5))
    Y = np.column_stack([np.sin(X[:, 0]), X[:, 1] > 0, X[:, 0] * X[:, 2]])[:, :d] \
        + 0.3 * rng.normal(size=(n, d))
    return X, Y


@pytest.mark.parametrize("params", [
    {},
    {"growth": "depthwise", "max_depth": 3},
    {"growth": "symmetric", "max_depth": 3},
    {"tree_mode": "single_output"},
    {"split": "sparse_restricted", "top_k": 2},
    {"split": "sparse", "top_k": 2},
    {"ensembler": "sketch_topk", "ensembler_params": {"k": 2}},
    {"monotone_constraints": [[1, 0, 0]] + [[0, 0, 0]] * 4},
], ids=["dense", "depthwise", "symmetric", "single_output", "sparse_restricted", "sparse",
        "ensembler", "monotone"])
def test_leaf_values_are_soft_thresholded_gradient_sums(params):
    """The first round's leaves (MSE: g = F0 - y, h = 1) hold
    -learning_rate * T(G) / (n + lambda) of their rows, per output a leaf keeps
    (to float32 gradients' precision)."""
    X, Y = _regression()
    l1, l2, rate = 25.0, 2.0, 0.5
    booster = gbmo.train({**QUIET, **params, "lambda_l1": l1, "lambda_l2": l2,
                          "learning_rate": rate, "max_leaves": 8, "min_samples_leaf": 10},
                         gbmo.Dataset(X, Y), 1)
    grad = booster.init_score - Y
    leaves = booster.predict_leaf(X)
    free = [1, 2] if "monotone_constraints" in params else [0, 1, 2]  # 0 is clipped instead
    zeroed = 0
    for t, tree in enumerate(booster.trees):
        for leaf in range(tree.n_leaves):
            rows = leaves[:, t] == leaf
            G = grad[rows].sum(axis=0)
            expected = -rate * np.sign(G) * np.maximum(np.abs(G) - l1, 0.0) / (rows.sum() + l2)
            if tree.leaf_outputs is None:
                kept, values = free, tree.leaf_values[leaf, free]
            else:
                kept, values = tree.leaf_outputs[leaf], tree.leaf_values[leaf]
            np.testing.assert_allclose(values, expected[kept], rtol=1e-5, atol=1e-9)
            zeroed += np.sum(expected[kept] == 0.0)
    assert zeroed > 0  # the penalty zeroed some leaf values outright


def test_a_penalty_above_every_gradient_sum_grows_no_split():
    X, Y = _regression()
    booster = gbmo.train({**QUIET, "lambda_l1": 1e9}, gbmo.Dataset(X, Y), 3)
    assert all(tree.n_leaves == 1 for tree in booster.trees)
    np.testing.assert_array_equal(booster.predict(X), np.tile(Y.mean(axis=0), (len(X), 1)))


def test_penalty_shrinks_the_model_and_learns():
    X, Y = _regression(n=2000)
    X_test, Y_test = _regression(n=1000, seed=1)
    errors = {}
    for l1 in (0.0, 20.0):
        booster = gbmo.train({**QUIET, "lambda_l1": l1}, gbmo.Dataset(X, Y), 50)
        errors[l1] = np.sqrt(np.mean((booster.predict(X_test) - Y_test) ** 2))
        total = sum(np.abs(tree.leaf_values).sum() for tree in booster.trees)
        errors[l1, "size"] = total
    assert errors[20.0, "size"] < errors[0.0, "size"]
    assert errors[20.0] < 0.6 * np.std(Y_test)  # still learns (noise sd 0.3)


def test_per_output_importance_sums_to_the_penalised_gains():
    X, Y = _regression()
    booster = gbmo.train({**QUIET, "lambda_l1": 10.0}, gbmo.Dataset(X, Y), 5)
    per_output = booster.feature_importance("gain", per_output=True)
    gains = np.zeros(X.shape[1])
    for tree in booster.trees:
        split = tree.node_left >= 0
        np.add.at(gains, tree.node_feature[split], tree.node_gain[split])
    np.testing.assert_allclose(per_output.sum(axis=1), gains, rtol=1e-9)


def test_sparse_x_grows_the_same_trees():
    X, Y = _regression()
    X[np.abs(X) < 0.7] = 0.0
    params = {**QUIET, "lambda_l1": 8.0}
    dense = gbmo.train(params, gbmo.Dataset(X, Y), 5)
    sparse = gbmo.train(params, gbmo.Dataset(sp.csr_matrix(X), Y), 5)
    np.testing.assert_array_equal(dense.predict(X), sparse.predict(X))


def test_alias_and_saving():
    X, Y = _regression()
    booster = gbmo.train({**QUIET, "reg_alpha": 5.0}, gbmo.Dataset(X, Y), 3)
    assert booster.params["lambda_l1"] == 5.0
    loaded = gbmo.Booster(model_str=booster.model_to_string())
    assert loaded.params["lambda_l1"] == 5.0
    np.testing.assert_array_equal(loaded.predict(X), booster.predict(X))


@pytest.mark.parametrize("value", [-1.0, np.nan, "a lot"])
def test_bad_penalty_is_refused_by_name(value):
    X, Y = _regression()
    with pytest.raises((ValueError, TypeError), match="lambda_l1"):
        gbmo.train({**QUIET, "lambda_l1": value}, gbmo.Dataset(X, Y), 1)

