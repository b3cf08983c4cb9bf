"""Feature contributions (predict(pred_contrib=True)) against Shapley values
computed by enumerating every subset of features."""
import itertools
import math

import numpy as np
import pytest
import scipy.sparse as sp

import gbmo
from gbmo._core._contrib import tree_shap
from gbmo.losses import make_loss
from gbmo.tree import Tree
from test_predict import chain_tree, forest_of, make_X


# -- the definition -------------------------------------------------------------
def conditional_value(tree, x, known, n_outputs):
    """E[tree(x) | the features in `known`]: a split on an unknown feature
    averages its children weighted by their node_count."""
    values = tree.dense_leaf_values(n_outputs)
    count = tree.node_count.astype(float)

    def below(node):
        if tree.node_left[node] < 0:
            return values[tree.node_value[node]]
        left, right = tree.node_left[node], tree.node_right[node]
        if tree.node_feature[node] in known:
            v = float(x[tree.node_feature[node]])
            go_left = (tree.node_missing_left[node] if np.isnan(v)
                       else v <= tree.node_threshold[node])
            return below(left if go_left else right)
        return (count[left] * below(left) + count[right] * below(right)) / count[node]

    return below(0)


def reference_contributions(trees, x, n_features, n_outputs, init_score):
    """(n_features + 1, n_outputs): Shapley values of v(S) = sum over trees of
    E[tree(x) | S], and v(empty set) + init_score last."""
    def v(known):
        return sum(conditional_value(t, x, known, n_outputs) for t in trees)

    out = np.zeros((n_features + 1, n_outputs))
    for i in range(n_features):
        others = [f for f in range(n_features) if f != i]
        for size in range(n_features):
            weight = (math.factorial(size) * math.factorial(n_features - size - 1)
                      / math.factorial(n_features))
            for subset in itertools.combinations(others, size):
                out[i] += weight * (v(set(subset) | {i}) - v(set(subset)))
    out[-1] = v(set()) + init_score
    return out


def booster_of(trees, n_features, n_outputs, init_score):
    booster = gbmo.Booster()
    booster._start({}, make_loss("mse"), n_features, n_outputs, init_score, None)
    booster.trees = list(trees)
    return booster


def with_counts(tree, rng, consistent):
    """tree with positive node_count: a parent's the sum of its children's, or
    (consistent=False) drawn at random, which the definition allows too."""
    count = rng.integers(1, 30, size=tree.n_nodes)
    if consistent:
        for node in range(tree.n_nodes - 1, -1, -1):  # children come after their parents
            if tree.node_left[node] >= 0:
                count[node] = count[tree.node_left[node]] + count[tree.node_right[node]]
    tree.node_count = count.astype(np.int64)
    return tree


def sparse_leaves(tree, rng, n_outputs, k):
    """The same tree with k of n_outputs values per leaf."""
    outputs = np.sort(np.argsort(rng.random((tree.n_leaves, n_outputs)), axis=1)[:, :k], axis=1)
    arrays = {name: getattr(tree, name) for name in (
        "node_feature", "node_threshold", "node_bin", "node_missing_left", "node_left",
        "node_right", "node_value", "node_gain", "node_count")}
    return Tree(rng.normal(size=(tree.n_leaves, k)), outputs, **arrays)


# -- the kernel on hand-built trees ----------------------------------------------
@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("leaves", ["dense", "sparse"])
@pytest.mark.parametrize("consistent", [True, False])
def test_contributions_equal_shapley_values_by_enumeration(seed, leaves, consistent):
    """Trees up to 6 deep on 5 features, so a path often meets a feature
    twice; NaN and infinities in X; both missing directions."""
    rng = np.random.default_rng(seed)
    n_features, d = 5, 3
    trees = [with_counts(t, rng, consistent) for t in forest_of(rng, 4, n_features, d,
                                                                 max_depth=6)]
    if leaves == "sparse":
        trees = [sparse_leaves(t, rng, d, 2) for t in trees]
    init_score = rng.normal(size=d)
    booster = booster_of(trees, n_features, d, init_score)
    X = make_X(rng, 12, n_features)
    got = booster.predict(X, pred_contrib=True)
    assert got.shape == (12, n_features + 1, d)
    for i in range(len(X)):
        np.testing.assert_allclose(got[i], reference_contributions(trees, X[i], n_features, d,
                                                                   init_score),
                                   rtol=1e-9, atol=1e-12)


def test_contributions_sum_to_the_raw_prediction_and_repeat_across_threads():
    rng = np.random.default_rng(5)
    trees = [with_counts(t, rng, True) for t in forest_of(rng, 20, 6, 4, max_depth=8)]
    booster = booster_of(trees, 6, 4, rng.normal(size=4))
    X = make_X(rng, 300, 6)
    one = booster.predict(X, pred_contrib=True, n_threads=1)
    np.testing.assert_allclose(one.sum(axis=1), booster.predict(X, raw_score=True),
                               rtol=1e-10, atol=1e-10)
    np.testing.assert_array_equal(booster.predict(X, pred_contrib=True, n_threads=3), one)


def test_a_leaf_path_reached_only_through_one_feature_gives_it_everything():
    """One split on x1 at 0 with leaves 1 and 3 and 3 rows each side: x1's
    contribution is the leaf minus the mean 2, every other feature's 0."""
    tree = Tree(np.array([[1.0], [3.0]]), node_feature=[1, 0, 0], node_threshold=[0.0, 0, 0],
                node_bin=[0, 0, 0], node_missing_left=[1, 0, 0], node_left=[1, -1, -1],
                node_right=[2, -1, -1], node_value=[-1, 0, 1], node_gain=np.zeros(3),
                node_count=[6, 3, 3])
    booster = booster_of([tree], 3, 1, np.array([0.5]))
    got = booster.predict(np.array([[9.0, -1.0, 9.0], [9.0, 1.0, 9.0], [9.0, np.nan, 9.0]]),
                          pred_contrib=True)
    np.testing.assert_array_equal(got[:, :, 0], [[0, -1, 0, 2.5], [0, 1, 0, 2.5], [0, -1, 0, 2.5]])


# -- trained models ---------------------------------------------------------------
def small_problem(rng, n=400):
    X = rng.normal(size=(n, 4))
    X[rng.random(X.shape) < 0.05] = np.nan
    signal = np.nan_to_num(X[:, 0]) + np.nan_to_num(X[:, 1] * X[:, 2])
    return X, signal


@pytest.mark.parametrize("params, target", [
    ({}, "two_outputs"),
    ({"tree_mode": "single_output"}, "two_outputs"),
    ({"split": "sparse", "top_k": 1}, "two_outputs"),
    ({"growth": "symmetric", "max_depth": 3}, "two_outputs"),
    ({"objective": "softmax"}, "classes"),
    ({"objective": "sigmoid"}, "one_dimensional"),
])
def test_trained_models_match_the_enumeration_and_sum_to_their_raw_scores(params, target):
    rng = np.random.default_rng(7)
    X, signal = small_problem(rng)
    y = {"two_outputs": np.column_stack([signal, -2 * signal + rng.normal(size=len(X))]),
         "classes": np.digitize(signal, [-0.5, 0.5]),
         "one_dimensional": (signal > 0).astype(float)}[target]
    booster = gbmo.train(dict(params, max_leaves=6, verbosity=0), gbmo.Dataset(X, y), 5)
    contributions = booster.predict(X[:8], pred_contrib=True)
    raw = booster.predict(X[:8], raw_score=True)
    np.testing.assert_allclose(contributions.sum(axis=1), raw, rtol=1e-10, atol=1e-10)
    if target == "one_dimensional":
        assert contributions.shape == (8, 5)
        contributions = contributions[:, :, None]
    for i in range(8):
        expected = reference_contributions(booster.trees, X[i], 4, booster.n_outputs,
                                           booster.init_score)
        np.testing.assert_allclose(contributions[i], expected, rtol=1e-9, atol=1e-12)


def test_an_unused_feature_contributes_nothing_and_num_iteration_is_honoured():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(300, 3))
    booster = gbmo.train({"verbosity": 0, "max_leaves": 4}, gbmo.Dataset(X, 2 * X[:, 1]), 10)
    contributions = booster.predict(X, pred_contrib=True)
    assert np.all(contributions[:, [0, 2]] == 0)
    np.testing.assert_allclose(booster.predict(X, pred_contrib=True, num_iteration=3).sum(axis=1),
                               booster.predict(X, raw_score=True, num_iteration=3), atol=1e-12)


def test_sparse_x_gives_the_contributions_of_its_dense_copy(monkeypatch):
    """Densified in blocks of rows: 200 rows x 6 features in blocks of 7 rows."""
    X = sp.random(200, 6, density=0.3, random_state=4, format="csr")
    y = np.column_stack([X[:, 0].toarray().ravel(), X[:, 3].toarray().ravel()])
    booster = gbmo.train({"verbosity": 0, "max_leaves": 4}, gbmo.Dataset(X, y), 5)
    expected = booster.predict(X.toarray(), pred_contrib=True)
    monkeypatch.setattr(gbmo.booster, "DENSIFIED_VALUES", 42)
    np.testing.assert_array_equal(booster.predict(X, pred_contrib=True), expected)


# -- errors ---------------------------------------------------------------------------
def test_a_node_without_training_rows_is_refused_before_any_work():
    rng = np.random.default_rng(0)
    tree = forest_of(rng, 1, 3, 2)[0]  # node_count all 0
    booster = booster_of([tree], 3, 2, np.zeros(2))
    with pytest.raises(ValueError, match="node_count .* positive"):
        booster.predict(make_X(rng, 5, 3), pred_contrib=True)
    # only the trees asked for count: a trained model's rounds before such a tree
    X = rng.normal(size=(60, 3))
    trained = gbmo.train({"verbosity": 0, "max_leaves": 4}, gbmo.Dataset(X, X[:, :2]), 3)
    expected = trained.predict(X, pred_contrib=True)
    trained.trees.append(tree)
    np.testing.assert_array_equal(trained.predict(X, pred_contrib=True, num_iteration=3),
                                  expected)
    with pytest.raises(ValueError, match="node_count .* positive"):
        trained.predict(X, pred_contrib=True)


def test_trees_deeper_than_the_walk_may_recurse_are_refused_by_name(monkeypatch):
    rng = np.random.default_rng(0)
    tree = with_counts(chain_tree(12, 2, rng), rng, True)
    booster = booster_of([tree], 2, 2, np.zeros(2))
    X = rng.normal(size=(4, 2))
    assert booster.predict(X, pred_contrib=True).shape == (4, 3, 2)
    monkeypatch.setattr(gbmo.booster, "MAX_CONTRIB_DEPTH", 12)
    with pytest.raises(ValueError, match="pred_contrib takes trees at most 12 levels deep.*13"):
        booster.predict(X, pred_contrib=True)


def test_the_kernel_refuses_an_output_of_the_wrong_shape():
    rng = np.random.default_rng(0)
    booster = booster_of([with_counts(forest_of(rng, 1, 3, 2)[0], rng, True)], 3, 2, np.zeros(2))
    forest = booster._forest(0, 1)
    arguments = (forest.tree_roots, int(forest.tree_depth.max()), forest.node_feature,
                 forest.node_threshold, forest.node_missing_left, forest.node_left,
                 forest.node_right, forest.node_value, forest.node_cover,
                 *forest.leaves.kernel_arguments())
    with pytest.raises(ValueError, match=r"out must be \(5, 4, d\)"):
        tree_shap(np.zeros((5, 3)), *arguments, np.zeros((5, 3, 2)), 1)


# -- estimators ---------------------------------------------------------------------
def test_estimators_give_the_contributions_of_their_booster():
    from gbmo.sklearn import GBMOClassifier, GBMORegressor

    rng = np.random.default_rng(2)
    X, signal = small_problem(rng, 200)
    regressor = GBMORegressor(n_estimators=4, max_leaves=4).fit(X, signal)
    contributions = regressor.predict(X, pred_contrib=True)
    assert contributions.shape == (200, 5)
    np.testing.assert_allclose(contributions.sum(axis=1), regressor.predict(X), atol=1e-10)
    classifier = GBMOClassifier(n_estimators=4, max_leaves=4).fit(X, np.digitize(signal, [0, 1]))
    contributions = classifier.predict(X, pred_contrib=True)
    assert contributions.shape == (200, 5, 3)
    np.testing.assert_array_equal(contributions,
                                  classifier.booster_.predict(X, pred_contrib=True))


def test_a_classifier_with_a_sparse_y_refuses_wide_outputs_by_name_and_gives_leaves():
    from gbmo.sklearn import GBMOClassifier

    rng = np.random.default_rng(2)
    X = rng.normal(size=(100, 3))
    labels = rng.random((100, 30)) < 0.1
    labels[:, :3] = X > 0
    Y = sp.csr_matrix(labels.astype(float))
    classifier = GBMOClassifier(n_estimators=2, max_leaves=4).fit(X, Y)
    for option in ("pred_contrib", "raw_score"):
        with pytest.raises(ValueError, match="raw scores and pred_contrib are not "
                                             "available for a sparse training y"):
            classifier.predict(X, **{option: True})
    leaves = classifier.predict(X, pred_leaf=True)
    assert leaves.shape == (100, 2) and leaves.max() == 3
    np.testing.assert_array_equal(leaves, classifier.booster_.predict_leaf(X))


def test_pred_leaf_is_predict_leaf_and_excludes_pred_contrib():
    rng = np.random.default_rng(11)
    X, signal = small_problem(rng, 100)
    booster = gbmo.train({"verbosity": 0, "max_leaves": 4}, gbmo.Dataset(X, signal), 3)
    np.testing.assert_array_equal(booster.predict(X, pred_leaf=True, num_iteration=2),
                                  booster.predict_leaf(X, num_iteration=2))
    with pytest.raises(ValueError, match="pred_contrib and pred_leaf"):
        booster.predict(X, pred_contrib=True, pred_leaf=True)
