"""Random forests of several outputs: gbmo's boosting="rf" (one forest of
vector-leaf trees) against scikit-learn's RandomForestRegressor (one forest
of multi-output trees, exact splits) and LightGBM's boosting="rf" (a forest
per output).

    python benchmarks/bench_forest.py [--rows 20000] [--features 20]
        [--outputs 1 5 20] [--trees 100] [--leaves 1023] [--threads 2]
        [--repeats 2]

The data: Gaussian X, Y = tanh(X W / 3) + a shared and a private noise per
output, a quarter of the rows for the test; with --rank r every output is
instead a mix of the same r signals tanh(X W_r / 3) (plus the noises), so
the outputs share their structure.
Every forest draws 63.2% of the rows per tree (scikit-learn's bootstrap
keeps that share of distinct rows; gbmo and LightGBM sample without
replacement) and half the features at each node, and keeps 5 rows a leaf;
gbmo and LightGBM grow up to --leaves leaves best-first with 255 bins and no
L2 penalty, scikit-learn grows to its leaf minimum. The libraries run in
this process one after the other, --repeats times, and each keeps its best
time. Reported: test RMSE (mean over outputs), seconds, and time over
gbmo's. gbmo_so (--libraries) is gbmo's forest of a tree per output.
"""
import argparse
import time

import numpy as np


def make_data(n_rows, n_features, n_outputs, seed=0, rank=None):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n_rows, n_features))
    shared = rng.standard_normal((n_rows, 1))
    if rank is None:
        signal = np.tanh(X @ rng.standard_normal((n_features, n_outputs)) / 3)
    else:  # every output a mix of the same few signals
        signal = (np.tanh(X @ rng.standard_normal((n_features, rank)) / 3)
                  @ rng.standard_normal((rank, n_outputs)) / np.sqrt(rank))
    Y = signal + 0.2 * shared + 0.2 * rng.standard_normal((n_rows, n_outputs))
    test = n_rows // 4
    return X[test:], Y[test:], X[:test], Y[:test]


def fit_gbmo(X, Y, args, tree_mode="multi_output"):
    import gbmo

    params = {"boosting": "rf", "subsample": 0.632, "colsample_bynode": 0.5,
              "max_leaves": args.leaves, "min_samples_leaf": 5, "lambda_l2": 0.0,
              "max_bins": 255, "n_threads": args.threads, "verbosity": -1,
              "tree_mode": tree_mode}
    model = gbmo.train(params, gbmo.Dataset(X, Y), args.trees)
    return lambda X_test: model.predict(X_test).reshape(len(X_test), -1)


def fit_sklearn(X, Y, args):
    from sklearn.ensemble import RandomForestRegressor

    model = RandomForestRegressor(args.trees, max_features=0.5, min_samples_leaf=5,
                                  n_jobs=args.threads, random_state=0)
    model.fit(X, Y if Y.shape[1] > 1 else Y[:, 0])
    return lambda X_test: model.predict(X_test).reshape(len(X_test), -1)


def fit_lightgbm(X, Y, args):
    import lightgbm

    params = {"boosting_type": "rf", "bagging_fraction": 0.632, "bagging_freq": 1,
              "feature_fraction_bynode": 0.5, "num_leaves": args.leaves,
              "min_data_in_leaf": 5, "lambda_l2": 0.0, "max_bin": 255,
              "num_threads": args.threads, "verbose": -1}
    models = [lightgbm.train(params, lightgbm.Dataset(X, Y[:, j]), args.trees)
              for j in range(Y.shape[1])]
    return lambda X_test: np.column_stack([m.predict(X_test) for m in models])


FITTERS = {"gbmo": fit_gbmo, "sklearn": fit_sklearn, "lightgbm": fit_lightgbm,
           "gbmo_so": lambda X, Y, args: fit_gbmo(X, Y, args, "single_output")}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=20000)
    parser.add_argument("--features", type=int, default=20)
    parser.add_argument("--outputs", type=int, nargs="+", default=[1, 5, 20])
    parser.add_argument("--trees", type=int, default=100)
    parser.add_argument("--leaves", type=int, default=1023)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--libraries", default="gbmo,sklearn,lightgbm")
    parser.add_argument("--rank", type=int, default=None,
                        help="outputs mix this many shared signals (default: each its own)")
    args = parser.parse_args()
    libraries = args.libraries.split(",")
    print(f"{args.rows} rows ({args.rows - args.rows // 4} to train) x {args.features} "
          f"features, {args.trees} trees, up to {args.leaves} leaves, {args.threads} threads, "
          f"best of {args.repeats}"
          + (f"; outputs mix {args.rank} signals" if args.rank else "; a signal per output"))
    print("| outputs | library | test RMSE | seconds | time / gbmo |")
    print("|---|---|---|---|---|")
    for n_outputs in args.outputs:
        X, Y, X_test, Y_test = make_data(args.rows, args.features, n_outputs, rank=args.rank)
        seconds = {name: np.inf for name in libraries}
        rmse = {}
        for _ in range(args.repeats):
            for name in libraries:
                start = time.perf_counter()
                predict = FITTERS[name](X, Y, args)
                seconds[name] = min(seconds[name], time.perf_counter() - start)
                rmse[name] = np.sqrt(((predict(X_test) - Y_test) ** 2).mean(axis=0)).mean()
        for name in libraries:
            ratio = seconds[name] / seconds["gbmo"] if "gbmo" in seconds else float("nan")
            print(f"| {n_outputs} | {name} | {rmse[name]:.4f} | {seconds[name]:.2f} | "
                  f"{ratio:.2f} |")


if __name__ == "__main__":
    main()
