"""Prediction time against LightGBM and XGBoost on models of the same shape.

    python benchmarks/bench_predict.py [--outputs 1] [--threads 1 2] [--rows 200000]

Each library trains --rounds rounds of 31-leaf trees grown best-first
(XGBoost: hist, lossguide, max_leaves 31) on 20,000 x 20 Gaussian rows, Y =
tanh(X W / 3) + noise; with several outputs LightGBM and XGBoost grow a model
per output (XGBoost: one_output_per_tree), as their users do, and gbmo one
tree a round for all. XGBoost is given gbmo's and LightGBM's learning rate
(0.1) and smallest leaf (20 rows: min_child_weight 20, a row's squared-error
hessian being 1): with its own defaults (0.3 and 1) its trees send rows to
leaves 3.6 levels deep on average instead of 6.5, and a walk costs its depth.
Then each predicts --rows new rows, best of 5, all in this process; prints
seconds, gbmo's time over each peer's, and the mean depth of the leaf a new
row reaches in gbmo's and XGBoost's trees (with one output).
"""
import argparse
import time

import numpy as np


def best_time(function, repeats=5):
    best = np.inf
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        best = min(best, time.perf_counter() - start)
    return best


def mean_row_depth(leaf_node, node_depth):
    """The mean over rows and trees of the depth of the leaf each row reaches:
    leaf_node (rows, trees) holds node ids, node_depth[t] each node's depth."""
    return np.mean([node_depth[t][leaf_node[:, t]] for t in range(leaf_node.shape[1])])


def node_depths(children):
    """Each node's depth, from (node, left, right) triples in parent-first order."""
    depth = {}
    for node, left, right in children:
        depth.setdefault(node, 0)
        if left >= 0:
            depth[left] = depth[right] = depth[node] + 1
    return np.array([depth[node] for node in range(len(depth))])


def gbmo_row_depth(model, X):
    leaf_of_value = [np.flatnonzero(np.asarray(tree.node_left) < 0)[
        np.argsort(np.asarray(tree.node_value)[np.asarray(tree.node_left) < 0])]
        for tree in model.trees]
    leaves = model.predict_leaf(X)
    nodes = np.stack([leaf_of_value[t][leaves[:, t]] for t in range(leaves.shape[1])], axis=1)
    return mean_row_depth(nodes, [node_depths(zip(range(len(tree.node_left)), tree.node_left,
                                                  tree.node_right)) for tree in model.trees])


def xgboost_row_depth(booster, X):
    import xgboost
    frame = booster.trees_to_dataframe()
    child = {"nan": -1}
    depths = [node_depths((node, int(child.get(str(yes), str(yes).split("-")[-1])),
                           int(child.get(str(no), str(no).split("-")[-1])))
                          for node, yes, no in zip(tree.Node, tree.Yes, tree.No))
              for _, tree in frame.groupby("Tree", sort=True)]
    leaves = booster.predict(xgboost.DMatrix(X), pred_leaf=True).astype(np.int64)
    return mean_row_depth(leaves, depths)


def main():
    import lightgbm
    import xgboost

    import gbmo

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--outputs", type=int, default=1)
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--rounds", type=int, default=200)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    n_features = 20
    X = rng.standard_normal((20_000, n_features))
    Y = np.tanh(X @ rng.standard_normal((n_features, args.outputs)) / 3)
    Y += 0.1 * rng.standard_normal(Y.shape)
    X_new = rng.standard_normal((args.rows, n_features))
    print(f"{args.rows} rows to predict, {args.outputs} output(s), {args.rounds} rounds of "
          "31 leaves")
    # trained once: only prediction is timed, on each thread count
    target = Y[:, 0] if args.outputs == 1 else Y
    model = gbmo.train({"verbosity": -1, "max_leaves": 31}, gbmo.Dataset(X, target), args.rounds)
    peers = [lightgbm.train({"verbose": -1, "num_leaves": 31}, lightgbm.Dataset(X, Y[:, j]),
                            args.rounds)
             for j in range(args.outputs)]
    booster = xgboost.train(
        {"tree_method": "hist", "grow_policy": "lossguide", "max_leaves": 31, "max_depth": 0,
         "multi_strategy": "one_output_per_tree",
         "eta": 0.1, "min_child_weight": 20}, xgboost.DMatrix(X, target), args.rounds)
    if args.outputs == 1:
        print(f"mean depth of a row's leaf: gbmo {gbmo_row_depth(model, X_new):.2f}, "
              f"XGBoost {xgboost_row_depth(booster, X_new):.2f}")
    print(f"{'threads':>7} {'gbmo s':>8} {'LightGBM s':>10} {'XGBoost s':>9} "
          f"{'gbmo / LightGBM':>15} {'gbmo / XGBoost':>14}")
    for threads in args.threads:
        booster.set_param({"nthread": threads})
        seconds = [
            best_time(lambda: model.predict(X_new, n_threads=threads)),
            best_time(lambda: [peer.predict(X_new, num_threads=threads) for peer in peers]),
            best_time(lambda: booster.inplace_predict(X_new)),
        ]
        print(f"{threads:>7} {seconds[0]:8.3f} {seconds[1]:10.3f} {seconds[2]:9.3f} "
              f"{seconds[0] / seconds[1]:15.2f} {seconds[0] / seconds[2]:14.2f}")


if __name__ == "__main__":
    main()
