"""A model's JSON in its two layouts of trees, shared by the tests that edit
model files. Plain functions, no tests (imported as split_reference is).

- `listed(booster)`: the model's JSON with a list of one object a tree
  (dump_model's, as files before format version 5 hold them);
- `as_forest(data)`: such JSON with the trees laid out by hand in a forest
  of columns, as save_model writes them since version 5: the reference of
  gbmo.tree.TreeFields.columns.
"""
import copy
import json

NODE_FIELDS = ("node_feature", "node_threshold", "node_bin", "node_missing_left", "node_left",
               "node_right", "node_value", "node_gain", "node_count")


def listed(booster):
    return json.loads(json.dumps(booster.dump_model()))


def as_forest(data):
    """A tree's missing field, or rows of different lengths, are laid out as
    they are, for the loader to refuse."""
    data = copy.deepcopy(data)
    trees = data.pop("trees")
    forest = {"tree_nodes": [len(tree["node_left"]) for tree in trees],
              "tree_leaves": [len(tree["leaf_values"]) for tree in trees],
              "leaf_widths": [len(tree["leaf_values"][0]) if tree["leaf_values"] else 0
                              for tree in trees]}
    for name in NODE_FIELDS:
        forest[name] = [entry for tree in trees for entry in tree.get(name, [])]
    forest["leaf_values"] = [value for tree in trees for row in tree["leaf_values"]
                             for value in row]
    forest["sparse_trees"] = [t for t, tree in enumerate(trees) if "leaf_outputs" in tree]
    forest["leaf_outputs"] = [output for tree in trees for row in tree.get("leaf_outputs", [])
                              for output in row]
    categories = {str(t): tree["categories_left"] for t, tree in enumerate(trees)
                  if tree.get("categories_left")}
    if categories:
        forest["categories_left"] = categories
    data["forest"] = forest
    data["version"] = 5
    return data


def in_layout(data, layout):
    """data (a list of trees) as it is, or as_forest's for layout "forest"."""
    return as_forest(data) if layout == "forest" else data
