"""trees_to_dataframe and dump_model: the trees as data, with leaf vectors."""
import numpy as np
import pytest

import gbmo

pd = pytest.importorskip("pandas")  # in the test extra: this never skips in CI

RNG = np.random.default_rng(51)
X = RNG.normal(size=(400, 4))
Y = np.c_[X[:, 0], X[:, 1] - X[:, 2], X[:, 3]]


def _walk(frame, tree_index, x):
    """Follows one row down a tree through the dataframe alone."""
    nodes = frame[frame.tree_index == tree_index].set_index("node_index")
    node = 0
    while not nodes.loc[node, "is_leaf"]:
        value = x[nodes.loc[node, "split_index"]]
        node = nodes.loc[node, "left_child" if value <= nodes.loc[node, "threshold"]
                         else "right_child"]
    return nodes.loc[node, "value"]


@pytest.mark.parametrize("params", [{}, {"split": "sparse", "top_k": 1}])
def test_dataframe_reproduces_the_predictions(params):
    booster = gbmo.train({"verbosity": 0, "max_leaves": 6, **params}, gbmo.Dataset(X, Y), 4)
    frame = booster.trees_to_dataframe()
    assert list(frame.columns[:4]) == ["tree_index", "node_index", "node_depth", "parent_index"]
    assert len(frame) == sum(tree.n_nodes for tree in booster.trees)
    for x in X[:20]:
        expected = booster.predict(x[None], raw_score=True)[0] - booster.init_score
        walked = sum(_walk(frame, t, x) for t in range(booster.num_trees))
        np.testing.assert_allclose(walked, expected, atol=1e-12)


def test_dataframe_structure_fields():
    data = gbmo.Dataset(pd.DataFrame(X, columns=["a", "b", "c", "d"]), Y)
    booster = gbmo.train({"verbosity": 0, "max_leaves": 5}, data, 2)
    frame = booster.trees_to_dataframe()
    internal, leaves = frame[~frame.is_leaf], frame[frame.is_leaf]
    assert set(internal.split_feature) <= {"a", "b", "c", "d"}
    assert set(internal.missing_direction) <= {"left", "right"}
    assert leaves.split_feature.isna().all() and internal.value.isna().all()
    assert all(len(v) == 3 for v in leaves.value)
    for _, tree_rows in frame.groupby("tree_index"):
        by_index = tree_rows.set_index("node_index")
        root = by_index.loc[0]
        assert root.node_depth == 0 and root.parent_index == -1 and root["count"] == 400
        for node, row in by_index[~by_index.is_leaf].iterrows():
            left, right = by_index.loc[row.left_child], by_index.loc[row.right_child]
            assert left.parent_index == right.parent_index == node
            assert left.node_depth == right.node_depth == row.node_depth + 1
            assert left["count"] + right["count"] == row["count"]
    assert sorted(leaves[leaves.tree_index == 0].leaf_index) == list(
        range(booster.trees[0].n_leaves))


def test_dump_model_holds_the_leaf_vectors():
    booster = gbmo.train({"verbosity": 0, "max_leaves": 4}, gbmo.Dataset(X, Y), 2)
    dumped = booster.dump_model()
    assert dumped["n_outputs"] == 3 and len(dumped["trees"]) == 2
    for tree, saved in zip(booster.trees, dumped["trees"]):
        np.testing.assert_array_equal(np.array(saved["leaf_values"]), tree.leaf_values)
        assert np.array(saved["leaf_values"]).shape == (tree.n_leaves, 3)
