"""Tree.validate and TreeFields: the rules a tree's arrays must keep, checked
over several trees at once."""
import copy

import numpy as np
import pytest

import gbmo
from gbmo.tree import TreeFields, TreeFormatError


@pytest.fixture(scope="module")
def grown():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(300, 3))
    booster = gbmo.train({"verbosity": 0, "max_leaves": 5}, gbmo.Dataset(X, X[:, :2]), 4)
    return booster.trees


def _with_cycle(tree):
    broken = copy.deepcopy(tree)
    internal = np.flatnonzero(broken.node_left >= 0)
    broken.node_right[internal[-1]] = internal[0]
    return broken


def test_a_grown_tree_validates_and_a_broken_one_names_its_field(grown):
    grown[0].validate(3, 2)
    with pytest.raises(TreeFormatError, match="field 'node_right' has a child index that is not "
                                              "after its parent"):
        _with_cycle(grown[0]).validate(3, 2)
    with pytest.raises(TreeFormatError, match=r"field 'node_feature' has an index outside \[0, 1\)"):
        grown[0].validate(1, 2)
    with pytest.raises(TreeFormatError, match=r"field 'leaf_values' has shape \(5, 2\), expected "
                                              r"\(n_leaves, 3\)"):
        grown[0].validate(3, 3)


@pytest.mark.parametrize("name", ["leaf_values", "leaf_outputs"])
def test_leaves_that_are_not_a_matrix_are_refused(grown, name):
    tree = copy.deepcopy(grown[1])
    tree.leaf_outputs = np.tile(np.arange(2, dtype=np.int32), (tree.n_leaves, 1))
    n_values = 2 * tree.n_leaves
    setattr(tree, name, getattr(tree, name).ravel())
    with pytest.raises(TreeFormatError, match=f"field '{name}' has shape \\({n_values},\\), "
                                              "expected \\(n_leaves, width\\)"):
        tree.validate(3, 2)


def test_several_trees_checked_at_once_name_the_first_broken_one(grown):
    fields = TreeFields.of_trees(grown)
    fields.validate(3, 2)
    assert len(fields.trees()) == len(grown)
    broken = [grown[0], _with_cycle(grown[1]), grown[2], _with_cycle(grown[3])]
    with pytest.raises(TreeFormatError, match="^tree 1: field 'node_right'"):
        TreeFields.of_trees(broken).validate(3, 2)


def test_trees_made_again_from_their_fields_are_the_same(grown):
    for tree, again in zip(grown, TreeFields.of_trees(grown).trees(), strict=True):
        assert vars(again).keys() == vars(tree).keys()  # Tree.of_views sets what __init__ does
        for name in ("node_left", "node_right", "node_feature", "node_threshold", "node_value",
                     "leaf_values"):
            np.testing.assert_array_equal(getattr(again, name), getattr(tree, name))
            assert getattr(again, name).dtype == getattr(tree, name).dtype


def test_a_forest_s_leaves_are_each_tree_s_leaves_laid_end_to_end():
    """LeafArrays.of_fields against each tree's own leaf_arrays, offsets
    shifted by hand, with dense and sparse trees of several widths mixed."""
    from gbmo.tree import LeafArrays

    rng = np.random.default_rng(7)
    X = rng.normal(size=(400, 4))
    Y = X[:, :3] + 0.1 * rng.normal(size=(400, 3))
    dense = gbmo.train({"verbosity": 0, "max_leaves": 5}, gbmo.Dataset(X, Y), 2).trees
    sparse = gbmo.train({"verbosity": 0, "max_leaves": 6, "split": "sparse", "top_k": 2},
                        gbmo.Dataset(X, Y), 2).trees
    one = gbmo.train({"verbosity": 0, "max_leaves": 3, "tree_mode": "single_output"},
                     gbmo.Dataset(X, Y), 1).trees
    trees = [dense[0], sparse[0], one[1], dense[1], sparse[1], one[2]]
    forest = LeafArrays.of_fields(TreeFields.of_trees(trees))
    values, outputs, value_start, output_start = [], [], [0], []
    for tree in trees:
        own = tree.leaf_arrays()
        output_start.extend(np.where(own.output_start >= 0,
                                     own.output_start + sum(map(len, outputs)), -1))
        value_start.extend(own.value_start[1:] + value_start[-1])
        values.append(own.values)
        outputs.append(own.outputs)
    np.testing.assert_array_equal(forest.value_start, value_start)
    np.testing.assert_array_equal(forest.output_start, output_start)
    np.testing.assert_array_equal(forest.values, np.concatenate(values))
    np.testing.assert_array_equal(forest.outputs, np.concatenate(outputs))
    assert forest.value_start.dtype == forest.output_start.dtype == np.int64
    assert forest.values.dtype == np.float64 and forest.outputs.dtype == np.int32
    empty = LeafArrays.of_fields(TreeFields.of_trees([]))
    assert empty.value_start.tolist() == [0] and empty.values.size == empty.outputs.size == 0
