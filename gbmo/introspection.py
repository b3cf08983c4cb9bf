"""Looking into a trained model, as LightGBM's Booster methods of the same
names: trees_to_dataframe() (every node of every tree as a row of a pandas
DataFrame, pandas optional, with the leaf vectors), the bounds of the raw
scores, and the histogram of a feature's split values."""
import numbers

import numpy as np

from .validation import check_feature_index

COLUMNS = ["tree_index", "node_index", "node_depth", "parent_index", "is_leaf", "left_child",
           "right_child", "split_feature", "split_index", "threshold", "categories_left",
           "missing_direction", "split_gain", "count", "leaf_index", "value"]

_NULLABLE_INTEGERS = ("left_child", "right_child", "split_index", "leaf_index")


def depths_and_parents(tree):
    """(depth, parent index, -1 at the root) of every node of tree."""
    depth = np.zeros(tree.n_nodes, dtype=np.int64)
    parent = np.full(tree.n_nodes, -1, dtype=np.int64)
    # Children are numbered after their parents, so one forward pass suffices.
    for node in range(tree.n_nodes):
        for child in (tree.node_left[node], tree.node_right[node]):
            if child >= 0:
                depth[child], parent[child] = depth[node] + 1, node
    return depth, parent


def categories_left(booster, tree, node):
    """The categories a split on a categorical feature sends left (its set of
    ranks, or the ranks <= its threshold in symmetric trees): pandas labels
    for a category column, else the integer values; None for other
    features."""
    order, feature = booster.category_order, int(tree.node_feature[node])
    if order is None or feature not in order.features:
        return None
    position = order.features.index(feature)
    ranks = order.ranks[position]
    chosen = (np.isin(ranks, tree.categories_left[node]) if node in tree.categories_left
              else ranks <= tree.node_threshold[node])
    left = order.categories[position][chosen].astype(np.int64)
    labels = booster.pandas_categories.get(feature)
    return [labels[c] for c in left] if labels is not None else left.tolist()


def _tree_rows(tree_index, tree, booster, feature_names):
    depth, parent = depths_and_parents(tree)
    n_outputs = booster.n_outputs
    leaf_values = tree.dense_leaf_values(n_outputs)
    for node in range(tree.n_nodes):
        leaf = tree.node_left[node] < 0
        feature = int(tree.node_feature[node])
        categories = None if leaf else categories_left(booster, tree, node)
        yield (tree_index, node, int(depth[node]), int(parent[node]), bool(leaf),
               None if leaf else int(tree.node_left[node]),
               None if leaf else int(tree.node_right[node]),
               None if leaf else feature_names[feature], None if leaf else feature,
               None if leaf or categories is not None else float(tree.node_threshold[node]),
               categories,
               None if leaf else ("left" if tree.node_missing_left[node] else "right"),
               None if leaf else float(tree.node_gain[node]), int(tree.node_count[node]),
               int(tree.node_value[node]) if leaf else None,
               leaf_values[tree.node_value[node]].copy() if leaf else None)


def trees_to_dataframe(booster):
    """One row per node: its tree, index, depth and parent; for splits the
    feature (name and index), threshold (x <= threshold goes left; NaN for
    a categorical feature, whose `categories_left` lists the categories
    that go left), where missing values go and the gain; for leaves the leaf index and the leaf's
    value vector (a numpy array of n_outputs, zeros where a sparse leaf
    stores nothing); the training rows that reached it in `count`."""
    try:
        import pandas as pd
    except ImportError:
        raise ImportError("trees_to_dataframe needs pandas: pip install pandas") from None
    names = booster.feature_name()
    rows = [row for index, tree in enumerate(booster.trees)
            for row in _tree_rows(index, tree, booster, names)]
    frame = pd.DataFrame(rows, columns=COLUMNS)
    # Integer columns with gaps (leaves have no children) stay integers.
    return frame.astype({name: "Int64" for name in _NULLABLE_INTEGERS})


def raw_score_bound(booster, trees, pick):
    """The start score plus, for each of trees (the model's first ones), pick
    (np.min or np.max) of its leaves' values, per output, times its share
    (a random forest's mean): a tree adds 0 to the outputs a leaf holds none
    of, so those count as 0. A linear leaf gives its intercepts as well (its
    values are for rows missing a feature), and an output that a line moves
    has no bound (-inf or inf): the line follows its features' values."""
    bound = np.zeros_like(booster.init_score)
    for tree in trees:
        values = tree.dense_leaf_values(booster.n_outputs)
        if tree.linear_leaves is not None:
            values = np.vstack([values, tree.dense_leaf_values(booster.n_outputs,
                                                               tree.linear_leaves.intercepts)])
        bound += pick(values, axis=0)
        if tree.linear_leaves is not None:
            sloped = tree.linear_leaves.sloped_outputs(tree, booster.n_outputs)
            bound[sloped] = -np.inf if pick is np.min else np.inf
    bound = booster._tree_share(0, len(trees)) * bound + booster.init_score
    return float(bound[0]) if booster.one_dimensional_target else bound


def split_values(booster, trees, feature):
    """The thresholds of every split on feature (an index or a name) in
    trees, but those of splits that send every value one way and the missing
    values the other (threshold inf: no value of the feature); refused for a
    categorical feature, whose splits hold sets."""
    index = check_feature_index(feature, booster.feature_name(), "model")
    order = booster.category_order
    if order is not None and index in order.features:
        raise ValueError(f"feature {feature!r} is categorical: its splits send sets of "
                         "categories left, not the values below a threshold")
    parts = [tree.node_threshold[(tree.node_left >= 0) & (tree.node_feature == index)
                                 & np.isfinite(tree.node_threshold)]
             for tree in trees]
    return np.concatenate(parts) if parts else np.zeros(0)


def split_value_histogram(booster, trees, feature, bins=None, xgboost_style=False):
    """(counts, bin_edges) of np.histogram over the feature's split values in trees,
    with one bin per distinct value when bins is None. xgboost_style: the
    non-empty bins as rows (right edge, count), a pandas DataFrame with
    columns SplitValue and Count when pandas is installed, bins capped at the
    distinct values; as LightGBM's get_split_value_histogram."""
    values = split_values(booster, trees, feature)
    n_distinct = len(np.unique(values))
    if bins is None or isinstance(bins, numbers.Integral) and xgboost_style:
        bins = max(n_distinct if bins is None else min(n_distinct, bins), 1)
    counts, edges = np.histogram(values, bins=bins)
    if not xgboost_style:
        return counts, edges
    table = np.column_stack((edges[1:], counts))[counts > 0]
    try:
        import pandas as pd
    except ImportError:
        return table
    return pd.DataFrame(table, columns=["SplitValue", "Count"])
