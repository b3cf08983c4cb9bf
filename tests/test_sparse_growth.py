"""Sparse split finders end to end: trees whose leaves keep top_k outputs."""
import numpy as np
import pytest

import gbmo

rng = np.random.default_rng(0)
N, D = 2000, 6
X = rng.normal(size=(N, 8))
# Each output depends on its own feature, so a leaf helps few outputs at once.
Y = np.column_stack([np.sign(X[:, j]) * (j + 1) for j in range(D)]) + 0.1 * rng.normal(size=(N, D))
PARAMS = {"verbosity": 0, "max_leaves": 16, "min_samples_leaf": 5}


def _structure(booster):
    return [(t.node_feature.tolist(), t.node_bin.tolist(), t.node_left.tolist()) for t in booster.trees]


@pytest.mark.parametrize("split", ["sparse", "sparse_restricted"])
def test_top_k_equal_to_d_gives_the_dense_trees(split):
    dense = gbmo.train(PARAMS, gbmo.Dataset(X, Y), 5)
    sparse = gbmo.train({**PARAMS, "split": split, "top_k": D}, gbmo.Dataset(X, Y), 5)
    assert _structure(dense) == _structure(sparse)
    np.testing.assert_array_equal(dense.predict(X), sparse.predict(X))


@pytest.mark.parametrize("split", ["sparse", "sparse_restricted"])
def test_top_k_above_d_is_refused_before_binning(split):
    """It was taken as d (the dense split) silently; d itself stays allowed."""
    data = gbmo.Dataset(X, Y)
    with pytest.raises(ValueError, match=rf"parameter 'top_k' = {D + 1} is more than the {D} "
                                         rf"outputs of the target; allowed: 1 \.\. {D}"):
        gbmo.train({**PARAMS, "split": split, "top_k": D + 1}, data, 1)
    assert data.bin_mapper is None


@pytest.mark.parametrize("split", ["sparse", "sparse_restricted"])
def test_leaves_hold_exactly_top_k_outputs(split, tmp_path):
    booster = gbmo.train({**PARAMS, "split": split, "top_k": 2}, gbmo.Dataset(X, Y), 10)
    for tree in booster.trees:
        assert tree.leaf_outputs.shape == (tree.n_leaves, 2) == tree.leaf_values.shape
        if split == "sparse_restricted":
            # siblings that are both leaves share their parent's set
            for node in np.flatnonzero(tree.node_left >= 0):
                left, right = tree.node_left[node], tree.node_right[node]
                if tree.node_left[left] < 0 and tree.node_left[right] < 0:
                    np.testing.assert_array_equal(tree.leaf_outputs[tree.node_value[left]],
                                                  tree.leaf_outputs[tree.node_value[right]])
    booster.save_model(tmp_path / "m.json")
    np.testing.assert_array_equal(gbmo.Booster(model_file=tmp_path / "m.json").predict(X),
                                  booster.predict(X))


def test_unrestricted_leaf_keeps_its_largest_improvements():
    """Each unrestricted leaf's outputs are those where its own gradient sum
    matters most: on this data, the outputs whose feature the path split on."""
    booster = gbmo.train({**PARAMS, "split": "sparse", "top_k": 1, "max_leaves": 2,
                          "learning_rate": 1.0}, gbmo.Dataset(X, Y), 1)
    tree = booster.trees[0]
    feature = tree.node_feature[0]
    assert feature == D - 1  # the largest-scale output's feature
    np.testing.assert_array_equal(tree.leaf_outputs.ravel(), [feature, feature])


@pytest.mark.parametrize("split", ["sparse", "sparse_restricted"])
def test_sparse_models_learn(split):
    baseline = np.sqrt(np.mean((Y - Y.mean(axis=0)) ** 2))
    booster = gbmo.train({**PARAMS, "split": split, "top_k": 2, "learning_rate": 0.3},
                         gbmo.Dataset(X, Y), 60)
    rmse = np.sqrt(np.mean((booster.predict(X) - Y) ** 2))
    assert rmse < 0.2 * baseline


def test_sparse_softmax_probabilities_are_valid():
    labels = np.argmax(Y, axis=1)
    booster = gbmo.train({**PARAMS, "objective": "softmax", "split": "sparse_restricted",
                          "top_k": 2}, gbmo.Dataset(X, labels), 20)
    proba = booster.predict(X)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    assert np.mean(proba.argmax(axis=1) == labels) > 0.8


def test_sparse_split_needs_top_k():
    with pytest.raises(ValueError, match="'top_k' is required with split='sparse'"):
        gbmo.train({"split": "sparse"}, gbmo.Dataset(X, Y), 1)


def test_top_k_with_the_dense_split_is_refused_before_binning():
    """The dense split keeps every output, so a top_k beside it did nothing."""
    data = gbmo.Dataset(X, Y)
    with pytest.raises(ValueError, match=r"parameter 'top_k' = 2 takes effect only with "
                                         r"split='sparse' or 'sparse_restricted'; got "
                                         r"split='dense'"):
        gbmo.train({**PARAMS, "top_k": 2}, data, 1)
    assert data.bin_mapper is None


@pytest.mark.parametrize("split", ["sparse", "sparse_restricted"])
def test_a_sparse_split_of_single_output_trees_is_refused_before_binning(split):
    """A one-output tree's leaves hold one value: a sparse split of them was the
    dense one, whatever top_k said."""
    data = gbmo.Dataset(X, Y)
    with pytest.raises(ValueError, match=rf"split='{split}' keeps top_k outputs of a "
                                         r"multi-output leaf; tree_mode='single_output' .*"
                                         r"allowed: split='dense' \(the default\) with "
                                         r"single_output"):
        gbmo.train({**PARAMS, "split": split, "top_k": 1, "tree_mode": "single_output"},
                   data, 1)
    assert data.bin_mapper is None


def test_min_gain_is_compared_with_the_gain_per_selected_output():
    """The root split's gain averaged over k outputs passes a threshold that the
    same gain averaged over all d outputs would not."""
    probe = gbmo.train({**PARAMS, "split": "sparse", "top_k": 1, "max_leaves": 2}, gbmo.Dataset(X, Y), 1)
    root_gain = probe.trees[0].node_gain[0]
    threshold = root_gain / 2  # between gain / d and gain / 1
    kept = gbmo.train({**PARAMS, "split": "sparse", "top_k": 1, "max_leaves": 2,
                       "min_gain": threshold}, gbmo.Dataset(X, Y), 1)
    assert kept.trees[0].n_leaves == 2
