"""One tree per output (GBDT-SO) and sparse leaves."""
import json

import numpy as np
import pytest

import gbmo
from gbmo.tree import Tree

pytest.register_assert_rewrite("model_layout")
from model_layout import in_layout, listed  # noqa: E402

rng = np.random.default_rng(0)
X = rng.normal(size=(1500, 6))
X[::9, 3] = np.nan
Y = np.column_stack([np.sin(X[:, 0]) + X[:, 1], X[:, 2] ** 2, np.nan_to_num(X[:, 3]) - X[:, 4]])
Y += 0.1 * rng.normal(size=Y.shape)
PARAMS = {"verbosity": 0, "max_leaves": 15, "min_samples_leaf": 5}


def test_single_output_with_one_output_equals_multi_output():
    so = gbmo.train({**PARAMS, "tree_mode": "single_output"}, gbmo.Dataset(X, Y[:, 0]), 10)
    mo = gbmo.train(PARAMS, gbmo.Dataset(X, Y[:, 0]), 10)
    np.testing.assert_array_equal(so.predict(X), mo.predict(X))


def test_single_output_trees_equal_separate_models_per_column():
    so = gbmo.train({**PARAMS, "tree_mode": "single_output"}, gbmo.Dataset(X, Y), 8)
    assert so.num_trees == 8 * 3 and so.current_iteration() == 8
    for j in range(3):
        alone = gbmo.train(PARAMS, gbmo.Dataset(X, Y[:, j]), 8)
        for rounds in (3, 8):
            np.testing.assert_allclose(so.predict(X, num_iteration=rounds)[:, j],
                                       alone.predict(X, num_iteration=rounds),
                                       rtol=1e-12, atol=1e-12)


def test_single_output_softmax_learns_and_round_trips(tmp_path):
    labels = np.argmax(Y, axis=1)
    so = gbmo.train({**PARAMS, "objective": "softmax", "tree_mode": "single_output"},
                    gbmo.Dataset(X, labels), 20)
    assert np.mean(so.predict(X).argmax(axis=1) == labels) > 0.9
    so.save_model(tmp_path / "so.json")
    loaded = gbmo.Booster(model_file=tmp_path / "so.json")
    np.testing.assert_array_equal(loaded.predict(X), so.predict(X))
    np.testing.assert_array_equal(loaded.predict(X, num_iteration=5), so.predict(X, num_iteration=5))
    assert all(t.leaf_outputs.shape == (t.n_leaves, 1) for t in loaded.trees)


def test_single_output_validation_log_matches_prediction():
    train = gbmo.Dataset(X[:1000], Y[:1000])
    valid = train.create_valid(X[1000:], Y[1000:])
    so = gbmo.train({**PARAMS, "tree_mode": "single_output"}, train, 6, valid_sets=[valid])
    per_output = np.sqrt(np.mean((so.predict(X[1000:]) - Y[1000:]) ** 2, axis=0))
    np.testing.assert_allclose(so.evals_result["valid_0"]["rmse_per_output"][-1], per_output)


def _sparse_copy(tree, k, rng):
    """The same tree with each leaf keeping k random outputs."""
    d = tree.leaf_values.shape[1]
    outputs = np.sort(np.array([rng.choice(d, k, replace=False) for _ in range(tree.n_leaves)]), axis=1)
    arrays = {name: getattr(tree, name) for name in (
        "node_feature", "node_threshold", "node_bin", "node_missing_left", "node_left",
        "node_right", "node_value", "node_gain", "node_count")}
    return Tree(np.take_along_axis(tree.leaf_values, outputs, axis=1), outputs, **arrays)


def test_sparse_leaves_predict_like_their_dense_equivalent(tmp_path):
    booster = gbmo.train(PARAMS, gbmo.Dataset(X, Y), 6)
    local = np.random.default_rng(1)
    booster.trees = [_sparse_copy(t, 2, local) if i % 2 else t for i, t in enumerate(booster.trees)]
    expected = np.tile(booster.init_score, (len(X), 1))
    leaves = booster.predict_leaf(X)
    for t, tree in enumerate(booster.trees):
        expected += tree.dense_leaf_values(3)[leaves[:, t]]
    np.testing.assert_allclose(booster.predict(X, raw_score=True), expected, rtol=1e-12)
    booster.save_model(tmp_path / "sparse.json")
    loaded = gbmo.Booster(model_file=tmp_path / "sparse.json")
    np.testing.assert_array_equal(loaded.predict(X), booster.predict(X))


@pytest.mark.parametrize("outputs, message", [
    ([[0, 0]], "increasing"),
    ([[2, 1]], "increasing"),
    ([[0, 3]], r"\[0, 3\)"),
    ([[0]], "one shape"),
])
@pytest.mark.parametrize("layout", ["forest", "list of trees"])
def test_bad_leaf_outputs_are_rejected(outputs, message, layout):
    booster = gbmo.train({**PARAMS, "max_leaves": 2}, gbmo.Dataset(X, Y), 1)
    data = listed(booster)
    tree = data["trees"][0]
    tree["leaf_outputs"] = outputs * len(tree["leaf_values"])
    tree["leaf_values"] = [[0.1, 0.2]] * len(tree["leaf_values"])
    if layout == "forest" and message == "one shape":
        message = "field 'leaf_outputs' has 2 entries, where the trees' counts"
    with pytest.raises(gbmo.ModelFormatError, match=message):
        gbmo.Booster(model_str=json.dumps(in_layout(data, layout)))


def test_tree_mode_is_validated():
    with pytest.raises(ValueError, match="'tree_mode' = 'forest' is not allowed; allowed: multi_output, single_output"):
        gbmo.train({"tree_mode": "forest"}, gbmo.Dataset(X, Y), 1)


def _structure(booster):
    return [(t.node_feature.tolist(), t.node_bin.tolist(), t.node_left.tolist()) for t in booster.trees]


def test_depthwise_equals_bestfirst_when_every_node_may_split():
    """With max_leaves = 2^max_depth both grow the full tree; nodes are numbered
    breadth-first, so the arrays agree."""
    params = {**PARAMS, "max_depth": 3, "max_leaves": 8, "min_samples_leaf": 1}
    best_first = gbmo.train(params, gbmo.Dataset(X, Y), 4)
    depth_wise = gbmo.train({**params, "growth": "depthwise"}, gbmo.Dataset(X, Y), 4)
    assert max(t.n_leaves for t in depth_wise.trees) == 8
    assert _structure(best_first) == _structure(depth_wise)
    np.testing.assert_array_equal(best_first.predict(X), depth_wise.predict(X))


def test_depthwise_fills_levels_in_order():
    """With a leaf budget smaller than a full level, depth-wise never opens a
    deeper level before the current one is finished, unlike best-first."""
    params = {**PARAMS, "max_leaves": 6, "min_samples_leaf": 1}
    depth_wise = gbmo.train({**params, "growth": "depthwise"}, gbmo.Dataset(X, Y), 3)
    for tree in depth_wise.trees:
        depth = np.zeros(tree.n_nodes, dtype=int)
        for node in range(tree.n_nodes):
            if tree.node_left[node] >= 0:
                depth[tree.node_left[node]] = depth[tree.node_right[node]] = depth[node] + 1
        leaf_depths = depth[tree.node_left < 0]
        # 6 leaves level by level: the 4 of depth 2, two of them split into depth 3.
        assert sorted(leaf_depths.tolist()) == [2, 2, 3, 3, 3, 3]


def test_depthwise_under_max_depth_alone_grows_every_level_as_xgboost():
    """max_leaves left out: XGBoost's depth-wise trees (max_leaves 0, no cap)
    rather than the best-first default of 31 leaves, which stopped depth 6
    short of its last level."""
    params = {**{k: v for k, v in PARAMS.items() if k != "max_leaves"}, "growth": "depthwise",
              "max_depth": 6, "min_samples_leaf": 1}
    booster = gbmo.train(params, gbmo.Dataset(X, Y), 2)
    assert 31 < max(t.n_leaves for t in booster.trees) <= 64
    best_first = gbmo.train({**params, "growth": "bestfirst"}, gbmo.Dataset(X, Y), 2)
    assert max(t.n_leaves for t in best_first.trees) == 31
    # the cap follows max_depth round by round: a deeper reset grows more leaves
    deepening = gbmo.train({**params, "max_depth": 3}, gbmo.Dataset(X, Y), 3,
                           callbacks=[gbmo.reset_parameter(max_depth=[3, 6, 7])])
    first, _, last = (tree.n_leaves for tree in deepening.trees)
    assert first <= 8 and last > 64
    # and back to the default, which follows max_depth again
    capped = gbmo.train({**params, "max_leaves": 4}, gbmo.Dataset(X, Y), 2,
                        callbacks=[gbmo.reset_parameter(max_leaves=[4, None])])
    assert capped.trees[0].n_leaves == 4 < 31 < capped.trees[1].n_leaves


@pytest.mark.parametrize("random", [{}, {"extra_trees": True}, {"colsample_bynode": 0.5}])
def test_depthwise_with_bounded_cache_grows_the_same_trees(random):
    """Also with draws per node: a smaller cache searches children that a
    level's last batch never splits, which must not move any later draw
    (found by review: with a shared stream the second tree differed)."""
    params = {**PARAMS, "growth": "depthwise", "max_leaves": 31, **random}
    unbounded = gbmo.train(params, gbmo.Dataset(X, Y), 3)
    for cache in (1, 2):
        bounded = gbmo.train({**params, "hist_cache": cache}, gbmo.Dataset(X, Y), 3)
        assert _structure(unbounded) == _structure(bounded)


def test_neighbouring_nodes_draw_independently():
    """Found by review: a key summed with the counter made node k + 1's draws
    node k's shifted by one; subsets of 5 of 20 features then shared 4.6
    features on average between neighbours instead of 1.25."""
    from gbmo.grower import node_draws

    first, second = node_draws(7, 5, 0, 8), node_draws(7, 6, 0, 8)
    assert not np.isin(first, second).any()
    shared = [len(set(np.argsort(node_draws(7, k, 0, 20))[:5])
                  & set(np.argsort(node_draws(7, k + 1, 0, 20))[:5])) for k in range(2000)]
    assert abs(np.mean(shared) - 1.25) < 0.1
    thresholds = np.concatenate([node_draws(7, k, 1, 10) % 7 for k in range(3000)])
    assert np.all(np.abs(np.bincount(thresholds.astype(int)) / thresholds.size - 1 / 7) < 0.01)
