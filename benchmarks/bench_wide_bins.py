"""Training time and test error at max_bins above 255 (16-bit bins), against
gbmo at 255 (8-bit bins) and LightGBM at the same max_bin; all in this
process, runs interleaved, the best of --repeats each.

    python benchmarks/bench_wide_bins.py [--rows 50000] [--features 20]
        [--outputs 5] [--rounds 50] [--bins 255 256 1023 4095] [--threads 2]
        [--repeats 3] [--steps N]

The data: Gaussian X, Y = tanh(X W / 5) + sin(2 x_0) + noise, a test set of
20% more rows. gbmo grows one multi-output tree a round, LightGBM one model
per output (--outputs trees a round). 31 leaves, learning rate 0.1, at
least 20 rows a leaf. Time is training only: each library's Dataset is
binned before the clock starts (binning is timed apart, gbmo's and
LightGBM's). 256 bins against 255 is the cost of the wider bins alone:
the same bins but one, two bytes a value instead of one; with --steps 30
(X rounded to steps of 1/30: about 200 values a feature) 255 and 256 make
the very same bins and trees, and the times differ by the width alone.
"""
import argparse
import time

import numpy as np


def make_data(n_rows, n_features, n_outputs, steps=None, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n_rows, n_features))
    if steps:
        X = np.round(X * steps) / steps
    W = rng.standard_normal((n_features, n_outputs))
    Y = np.tanh(X @ W / 5) + np.sin(2 * X[:, :1])
    return X, Y + 0.1 * rng.standard_normal((n_rows, n_outputs))


def run_gbmo(X, Y, X_test, Y_test, bins, rounds, threads):
    """(binning seconds, training seconds, test RMSE)."""
    import gbmo

    params = {"verbosity": 0, "n_threads": threads, "max_leaves": 31, "max_bins": bins,
              "min_samples_leaf": 20, "learning_rate": 0.1}
    start = time.perf_counter()
    data = gbmo.Dataset(X, Y, params=params).construct()
    binned = time.perf_counter()
    booster = gbmo.train(params, data, rounds)
    trained = time.perf_counter()
    rmse = np.sqrt(np.mean((booster.predict(X_test) - Y_test) ** 2))
    return binned - start, trained - binned, rmse


def run_lightgbm(X, Y, X_test, Y_test, bins, rounds, threads):
    import lightgbm

    params = {"verbose": -1, "num_threads": threads, "num_leaves": 31, "max_bin": bins,
              "min_data_in_leaf": 20, "learning_rate": 0.1, "force_col_wise": True}
    start = time.perf_counter()
    datasets = [lightgbm.Dataset(X, Y[:, j], params=params).construct()
                for j in range(Y.shape[1])]
    binned = time.perf_counter()
    models = [lightgbm.train(params, data, rounds) for data in datasets]
    trained = time.perf_counter()
    predicted = np.stack([model.predict(X_test) for model in models], axis=1)
    return binned - start, trained - binned, np.sqrt(np.mean((predicted - Y_test) ** 2))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=50_000)
    parser.add_argument("--features", type=int, default=20)
    parser.add_argument("--outputs", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=50)
    parser.add_argument("--bins", type=int, nargs="+", default=[255, 256, 1023, 4095])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--steps", type=int, help="round X to multiples of 1 / steps")
    args = parser.parse_args()
    n_test = args.rows // 5
    X, Y = make_data(args.rows + n_test, args.features, args.outputs, args.steps)
    X, X_test, Y, Y_test = X[:args.rows], X[args.rows:], Y[:args.rows], Y[args.rows:]
    runners = {"gbmo": run_gbmo, "lightgbm": run_lightgbm}
    best = {}
    for _ in range(args.repeats):
        for bins in args.bins:
            for name, run in runners.items():
                binning, training, rmse = run(X, Y, X_test, Y_test, bins, args.rounds,
                                              args.threads)
                old = best.get((name, bins), (np.inf, np.inf, rmse))
                best[(name, bins)] = (min(old[0], binning), min(old[1], training), rmse)
    print(f"{args.rows} x {args.features}, {args.outputs} outputs, {args.rounds} rounds, "
          f"{args.threads} thread(s), best of {args.repeats}")
    print(f"{'max_bin':>8} {'gbmo s':>8} {'LightGBM s':>10} {'gbmo/LGBM':>9} "
          f"{'gbmo/gbmo@' + str(args.bins[0]):>13} {'gbmo bin s':>10} {'LGBM bin s':>10} "
          f"{'gbmo RMSE':>9} {'LGBM RMSE':>9}")
    base = best[("gbmo", args.bins[0])][1]
    for bins in args.bins:
        g_bin, g_train, g_rmse = best[("gbmo", bins)]
        l_bin, l_train, l_rmse = best[("lightgbm", bins)]
        print(f"{bins:>8} {g_train:>8.3f} {l_train:>10.3f} {g_train / l_train:>9.2f} "
              f"{g_train / base:>13.2f} {g_bin:>10.3f} {l_bin:>10.3f} {g_rmse:>9.4f} "
              f"{l_rmse:>9.4f}")


if __name__ == "__main__":
    main()
