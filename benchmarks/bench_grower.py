"""The best-first loop in Cython against the Python loop, and LightGBM beside
them, on small and middling problems where the loop's overhead shows.

    python benchmarks/bench_grower.py [--threads 1 2] [--repeats 3] [--depthwise]

Each shape trains, interleaved in this process, gbmo with the loop in Cython
(_core/_grow.pyx), gbmo with the Python loop (grower.NATIVE_GROWTH = False),
and LightGBM (one model per output when there are several, as a LightGBM
user would; gbmo's tree_mode="single_output" where the shape says so).
31 leaves, 255 bins, min 20 rows per leaf, learning rate 0.1; binning and
Dataset construction included (as a user pays them). The best of --repeats;
prints seconds and the ratios python / native and native / LightGBM.
--depthwise grows level by level to depth 5 (LightGBM: max_depth 5, 31 leaves).
"""
import argparse
import time

import numpy as np

SHAPES = [  # rows, features, outputs, rounds, gbmo tree_mode
    (20_000, 7, 1, 200, "multi_output"),
    (100_000, 7, 1, 100, "multi_output"),
    (2_000, 20, 1, 300, "multi_output"),
    (20_000, 20, 5, 100, "multi_output"),
    (5_000, 50, 10, 50, "multi_output"),
    (20_000, 50, 10, 20, "single_output"),
]


def make_data(n_rows, n_features, n_outputs, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n_rows, n_features))
    W = rng.standard_normal((n_features, n_outputs))
    Y = np.tanh(X @ W / 3) + np.sin(X[:, :1]) + 0.1 * rng.standard_normal((n_rows, n_outputs))
    return X, Y


def time_gbmo(X, Y, rounds, threads, tree_mode, native, growth):
    import gbmo
    from gbmo import grower

    grower.NATIVE_GROWTH = native
    params = {"verbosity": 0, "n_threads": threads, "max_leaves": 31, "max_bins": 255,
              "min_samples_leaf": 20, "learning_rate": 0.1, "tree_mode": tree_mode,
              "growth": growth, "max_depth": 5 if growth == "depthwise" else -1}
    start = time.perf_counter()
    gbmo.train(params, gbmo.Dataset(X, Y), rounds)
    return time.perf_counter() - start


def time_lightgbm(X, Y, rounds, threads, growth):
    import lightgbm

    params = {"verbosity": -1, "num_threads": threads, "num_leaves": 31, "max_bin": 255,
              "min_data_in_leaf": 20, "learning_rate": 0.1,
              "max_depth": 5 if growth == "depthwise" else -1}
    start = time.perf_counter()
    for j in range(Y.shape[1]):
        lightgbm.train(params, lightgbm.Dataset(X, Y[:, j]), rounds)
    return time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--depthwise", action="store_true")
    args = parser.parse_args()
    growth = "depthwise" if args.depthwise else "bestfirst"
    print(f"{'rows':>7} {'feat':>4} {'out':>3} {'rounds':>6} {'mode':>13} {'thr':>3} "
          f"{'native s':>8} {'python s':>8} {'LightGBM s':>10} {'py / nat':>8} "
          f"{'nat / LGB':>9}")
    for n_rows, n_features, n_outputs, rounds, tree_mode in SHAPES:
        X, Y = make_data(n_rows, n_features, n_outputs)
        for threads in args.threads:
            best = {"native": np.inf, "python": np.inf, "lightgbm": np.inf}
            for _ in range(args.repeats):
                best["native"] = min(best["native"],
                                     time_gbmo(X, Y, rounds, threads, tree_mode, True, growth))
                best["python"] = min(best["python"],
                                     time_gbmo(X, Y, rounds, threads, tree_mode, False, growth))
                best["lightgbm"] = min(best["lightgbm"],
                                       time_lightgbm(X, Y, rounds, threads, growth))
            print(f"{n_rows:7d} {n_features:4d} {n_outputs:3d} {rounds:6d} {tree_mode:>13} "
                  f"{threads:3d} {best['native']:8.3f} {best['python']:8.3f} "
                  f"{best['lightgbm']:10.3f} {best['python'] / best['native']:8.2f} "
                  f"{best['native'] / best['lightgbm']:9.2f}", flush=True)


if __name__ == "__main__":
    main()
