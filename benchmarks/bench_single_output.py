"""Seconds per tree of gbmo's single-output mode (GBDT-SO) against LightGBM
growing the same number of single-output trees, with gbmo's multi-output mode
beside them; all in this process, the best of --repeats runs each.

    python benchmarks/bench_single_output.py [--rows 20000] [--features 50]
        [--outputs 10] [--rounds 20] [--threads 1 2] [--repeats 3] [--leaves 31]
    python benchmarks/bench_single_output.py --dataset student --leaves 15 --rounds 100

The data: Gaussian X, Y = tanh(X W / 5) + noise (outputs correlated through
X), or with --dataset a regression set gbmo.datasets ships (its X and its
target columns). Both libraries get --leaves leaves, 255 bins, min 20 rows per leaf; LightGBM
trains one model per output on its own constructed Dataset (construction
not timed), gbmo one model whose rounds grow one tree per output (binning
not timed: a first short run bins the Dataset).
"""
import argparse
import time

import numpy as np


def make_data(n_rows, n_features, n_outputs, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n_rows, n_features))
    W = rng.standard_normal((n_features, n_outputs))
    return X, np.tanh(X @ W / 5) + 0.1 * rng.standard_normal((n_rows, n_outputs))


def shipped(name):
    """X and the (n, d) target of gbmo.datasets.load_<name>()."""
    from gbmo import datasets

    data = getattr(datasets, f"load_{name}")()
    return np.asarray(data.data, dtype=float), np.asarray(data.target, dtype=float)


def time_gbmo(X, Y, tree_mode, rounds, threads, leaves):
    import gbmo

    params = {"verbosity": 0, "n_threads": threads, "max_leaves": leaves, "max_bins": 255,
              "min_samples_leaf": 20, "tree_mode": tree_mode}
    data = gbmo.Dataset(X, Y)
    gbmo.train(params, data, 1)
    start = time.perf_counter()
    gbmo.train(params, data, rounds)
    return time.perf_counter() - start


def time_lightgbm(X, Y, rounds, threads, leaves):
    import lightgbm

    params = {"verbose": -1, "num_threads": threads, "num_leaves": leaves, "max_bin": 255,
              "min_data_in_leaf": 20, "force_col_wise": True}
    datasets = [lightgbm.Dataset(X, Y[:, j], params=params).construct()
                for j in range(Y.shape[1])]
    start = time.perf_counter()
    for data in datasets:
        lightgbm.train(params, data, rounds)
    return time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=20000)
    parser.add_argument("--features", type=int, default=50)
    parser.add_argument("--outputs", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--leaves", type=int, default=31)
    parser.add_argument("--dataset", help="a regression set of gbmo.datasets (e.g. student) "
                                          "in place of the synthetic data")
    args = parser.parse_args()
    if args.dataset:
        from gbmo import datasets

        if not hasattr(datasets, f"load_{args.dataset}"):
            parser.error(f"--dataset: gbmo.datasets has no load_{args.dataset}")
        X, Y = shipped(args.dataset)
        if Y.ndim != 2:
            parser.error(f"--dataset: {args.dataset}'s target is not (rows, outputs)")
    else:
        X, Y = make_data(args.rows, args.features, args.outputs)
    trees = args.rounds * Y.shape[1]
    print(f"{X.shape[0]} rows x {X.shape[1]} features, {Y.shape[1]} outputs, "
          f"{args.rounds} rounds ({trees} single-output trees of {args.leaves} leaves), "
          f"best of {args.repeats}")
    print("| threads | gbmo SO ms/tree | LightGBM ms/tree | SO / LightGBM | "
          "gbmo MO ms/round | MO round / LightGBM's d trees |")
    print("|---|---|---|---|---|---|")
    for threads in args.threads:
        timings = {"so": [], "mo": [], "lgb": []}
        for _ in range(args.repeats):  # interleaved, so drifts in load hit all three
            timings["so"].append(time_gbmo(X, Y, "single_output", args.rounds, threads,
                                           args.leaves))
            timings["lgb"].append(time_lightgbm(X, Y, args.rounds, threads, args.leaves))
            timings["mo"].append(time_gbmo(X, Y, "multi_output", args.rounds, threads,
                                           args.leaves))
        so, lgb, mo = (min(timings[k]) for k in ("so", "lgb", "mo"))
        print(f"| {threads} | {1e3 * so / trees:.2f} | {1e3 * lgb / trees:.2f} | "
              f"{so / lgb:.2f} | {1e3 * mo / args.rounds:.1f} | {mo / lgb:.2f} |")


if __name__ == "__main__":
    main()
