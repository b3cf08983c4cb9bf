"""Seconds per tree of gbmo's single-output mode (GBDT-SO) against LightGBM
growing the same number of single-output trees, with gbmo's multi-output mode
beside them; all in this process, the best of --repeats runs each.

    python benchmarks/bench_single_output.py [--rows 20000] [--features 50]
        [--outputs 10] [--rounds 20] [--threads 1 2] [--repeats 3]

The data: Gaussian X, Y = tanh(X W / 5) + noise (outputs correlated through
X). Both libraries get 31 leaves, 255 bins, min 20 rows per leaf; LightGBM
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


def time_gbmo(X, Y, tree_mode, rounds, threads):
    import gbmo

    params = {"verbosity": 0, "n_threads": threads, "max_leaves": 31, "max_bins": 255,
              "min_samples_leaf": 20, "tree_mode": tree_mode}
    data = gbmo.Dataset(X, Y)
    gbmo.train(params, data, 1)
    start = time.perf_counter()
    gbmo.train(params, data, rounds)
    return time.perf_counter() - start


def time_lightgbm(X, Y, rounds, threads):
    import lightgbm

    params = {"verbose": -1, "num_threads": threads, "num_leaves": 31, "max_bin": 255,
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
    args = parser.parse_args()
    X, Y = make_data(args.rows, args.features, args.outputs)
    trees = args.rounds * args.outputs
    print(f"{args.rows} rows x {args.features} features, {args.outputs} outputs, "
          f"{args.rounds} rounds ({trees} single-output trees), best of {args.repeats}")
    print("| threads | gbmo SO ms/tree | LightGBM ms/tree | SO / LightGBM | "
          "gbmo MO ms/round | MO round / LightGBM's d trees |")
    print("|---|---|---|---|---|---|")
    for threads in args.threads:
        timings = {"so": [], "mo": [], "lgb": []}
        for _ in range(args.repeats):  # interleaved, so drifts in load hit all three
            timings["so"].append(time_gbmo(X, Y, "single_output", args.rounds, threads))
            timings["lgb"].append(time_lightgbm(X, Y, args.rounds, threads))
            timings["mo"].append(time_gbmo(X, Y, "multi_output", args.rounds, threads))
        so, lgb, mo = (min(timings[k]) for k in ("so", "lgb", "mo"))
        print(f"| {threads} | {1e3 * so / trees:.2f} | {1e3 * lgb / trees:.2f} | "
              f"{so / lgb:.2f} | {1e3 * mo / args.rounds:.1f} | {mo / lgb:.2f} |")


if __name__ == "__main__":
    main()
